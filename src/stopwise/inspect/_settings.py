"""The Inspect extension's settings: ``[tool.stopwise]``, ``STOPWISE_*`` variables, ``--metadata`` and ``-T``.

Installing ``stopwise[inspect]`` registers stopwise with Inspect (``[project.entry-points.inspect_ai]``);
nothing runs differently until stopwise is *enabled* by one of four sources. Each later source overrides
the fields the earlier ones set (lowest precedence first):

1. the ``[tool.stopwise]`` table of the nearest ``pyproject.toml`` (the working directory, then its parents);
   a relative ``policy`` or ``halting`` path there is relative to that file's folder;
2. environment variables ``STOPWISE_<FIELD>`` (``STOPWISE_LEDGER``, ``STOPWISE_TESTED``, ...);
3. the eval's metadata, ``--metadata stopwise_<field>=...`` (read when a task starts);
4. the task arguments of ``stopwise/compare``, ``-T <field>=...``.

stopwise is enabled when a ``ledger`` is set and ``enabled`` is not false (``STOPWISE_ENABLED=0`` or
``--metadata stopwise_enabled=false`` turns a configured project off for one run).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stopwise.errors import InputError

__all__ = ["FIELDS", "ExtensionSettings", "find_pyproject", "settings_from"]

FIELDS: tuple[str, ...] = (
    "enabled", "ledger", "evaluation", "tested", "baseline", "policy", "group", "scorer", "pace", "refresh", "halting",
)
"""The settings' fields, as named in ``[tool.stopwise]``, ``-T``, ``STOPWISE_<FIELD>`` and ``stopwise_<field>``."""

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class ExtensionSettings:
    """The merged settings of the Inspect extension, and where each field came from.

    Examples
    --------
    >>> from stopwise.inspect._settings import settings_from
    >>> s = settings_from({"ledger": "sqlite:///l.db", "tested": "mockllm/a"}, {"STOPWISE_TESTED": "mockllm/b"})
    >>> s.enabled, s.tested, s.sources["tested"]
    (True, 'mockllm/b', 'environment STOPWISE_TESTED')
    """

    ledger: str | None = None
    """The ledger's database URL or SQLite path; None: stopwise is not enabled."""
    evaluation: str | None = None
    """The evaluation id in the ledger (None: the wrapped task's name)."""
    tested: str | None = None
    """The tested system's model name as Inspect names it (``str(model)``, e.g. ``"openai/gpt-4o"``)."""
    baseline: str | None = None
    """The baseline system's model name."""
    policy: str | None = None
    """The policy file (None: ``Policy()``, the exact-wor one-look test on a uniform order)."""
    group: str | None = None
    """The sample metadata key of the coverage group."""
    scorer: str | None = None
    """``NAME`` or ``NAME:KEY`` of the scorer whose value is the outcome."""
    pace: int | None = 2
    """As :attr:`stopwise.inspect.PairedSpec.pace` (``"none"``: no pacing)."""
    refresh: float = 1.0
    """As :attr:`stopwise.inspect.PairedSpec.refresh`."""
    halting: str | None = None
    """The directory of a saved early-outcome model (``stopwise early train``): halt samples whose outcome it
    predicts (:class:`~stopwise.inspect.LiveHalting`); None: no halting."""
    switch: bool | None = None
    """The ``enabled`` field as given (None: not given)."""
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Field -> the source that set it (``pyproject.toml [tool.stopwise]``, ``environment STOPWISE_X``, ...)."""

    @property
    def enabled(self) -> bool:
        """Whether stopwise acts: a ledger is set and ``enabled`` is not false."""
        return self.ledger is not None and self.switch is not False

    def merged(self, values: Mapping[str, Any], source: str) -> ExtensionSettings:
        """These settings with ``values`` (field -> raw value) from ``source`` on top."""
        changes: dict[str, Any] = {}
        sources = dict(self.sources)
        for name, raw in values.items():
            value = _field_iv(name, raw, source)
            changes["switch" if name == "enabled" else name] = value
            sources[name] = source if not source.startswith("environment") else f"environment STOPWISE_{name.upper()}"
        return dataclasses.replace(self, **changes, sources=sources)

    def public(self) -> dict[str, Any]:
        """The settings as the log records them (every field but the ledger's credentials)."""
        from stopwise.ledger import ledger_url

        out = {name: getattr(self, "switch" if name == "enabled" else name) for name in FIELDS}
        if self.ledger is not None:
            out["ledger"] = ledger_url(self.ledger)
        return out


def _field_iv(name: str, raw: Any, source: str) -> Any:
    """The value of field ``name`` given as ``raw`` (text from the environment, typed from TOML/YAML)."""
    where = f"{source}: `{name}`"
    if name == "enabled":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
            return raw.strip().lower() in _TRUE
        raise InputError(f"{where} must be true or false; got {raw!r}")
    if name == "pace":
        if raw is None or (isinstance(raw, str) and raw.strip().lower() == "none"):
            return None
        try:
            value = int(raw)
        except (TypeError, ValueError):
            value = 0
        if isinstance(raw, bool) or isinstance(raw, float) or value < 1:
            raise InputError(f"{where} must be a number of samples >= 1 or 'none'; got {raw!r}")
        return value
    if name == "refresh":
        try:
            seconds = float(raw)
        except (TypeError, ValueError):
            seconds = -1.0
        if isinstance(raw, bool) or not 0 <= seconds < float("inf"):
            raise InputError(f"{where} must be a number of seconds >= 0; got {raw!r}")
        return seconds
    if name not in FIELDS:
        raise InputError(f"{where}: unknown setting; stopwise's Inspect settings are {', '.join(FIELDS)}")
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, str | int | float | os.PathLike) or not str(raw).strip():
        raise InputError(f"{where} must be non-empty text; got {raw!r}")
    return str(raw).strip()


def find_pyproject(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` from ``start`` (default: the working directory) up to the root, or None."""
    folder = Path(start if start is not None else Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            return path
    return None


def _pyproject_table(path: Path) -> dict[str, Any]:
    """The ``[tool.stopwise]`` table of ``path`` ({} when there is none), a relative policy made absolute."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: cannot be read as TOML ({exc}); fix it or remove its [tool.stopwise] table") from exc
    table = document.get("tool", {}).get("stopwise", {})
    if not isinstance(table, dict):
        raise InputError(f"{path}: [tool.stopwise] must be a table; got {type(table).__name__}")
    table = {key: value for key, value in table.items() if key in FIELDS or not isinstance(value, dict)}
    for name in ("policy", "halting"):
        value = table.get(name)
        if isinstance(value, str) and value and not Path(value).is_absolute():
            table[name] = str(path.parent / value)
    return table


def settings_from(
    pyproject: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    task_args: Mapping[str, Any] | None = None,
) -> ExtensionSettings:
    """The settings of the four sources, each overriding the earlier ones (see the module docstring).

    Parameters
    ----------
    pyproject : mapping or path, optional
        The ``[tool.stopwise]`` table, or a ``pyproject.toml`` to read it from (None: no table).
    environ : mapping, optional
        The environment (its ``STOPWISE_<FIELD>`` variables are read); None: none.
    metadata : mapping, optional
        The eval's metadata (its ``stopwise_<field>`` keys are read).
    task_args : mapping, optional
        ``-T`` arguments of ``stopwise/compare`` (fields; None values are not given).

    Raises
    ------
    InputError
        A value of the wrong kind, or an unknown field in ``[tool.stopwise]`` or ``-T``, naming the source.
    """
    settings = ExtensionSettings()
    if pyproject is not None:
        where = "pyproject.toml [tool.stopwise]"
        if not isinstance(pyproject, Mapping):
            where = f"{pyproject} [tool.stopwise]"
            pyproject = _pyproject_table(Path(pyproject))
        settings = settings.merged(pyproject, where)
    if environ is not None:
        given = {name: environ[f"STOPWISE_{name.upper()}"] for name in FIELDS if f"STOPWISE_{name.upper()}" in environ}
        settings = settings.merged(given, "environment")
    if metadata:
        given = {name: metadata[f"stopwise_{name}"] for name in FIELDS if f"stopwise_{name}" in metadata}
        settings = settings.merged(given, "--metadata")
    if task_args:
        settings = settings.merged({k: v for k, v in task_args.items() if v is not None}, "-T")
    return settings
