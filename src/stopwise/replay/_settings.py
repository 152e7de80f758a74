"""What a replay ran with: the settings of a grid replay and of a live-look replay, as typed records.

Each is a frozen dataclass whose :meth:`to_dict` is the JSON object written to ``settings.json``
(``live_settings.json``) and printed by ``stopwise replay --json``; :meth:`from_dict` reads such an
object back (the report reads a replay folder's ``settings.json``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from stopwise.errors import FileFormatError

__all__ = ["LiveReplaySettings", "ReplaySettings"]

PolicyEntries = dict[str, dict[str, Any]]
"""Policy name -> ``{"sha256": <sha256 of its canonical JSON>, "policy": <its canonical JSON, parsed>}``."""

_S = TypeVar("_S", bound="_Settings")


@dataclass(frozen=True, kw_only=True)
class _Settings:
    """The shared behaviour: JSON form and reading back."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``settings.json`` (tuples as lists; fields that do not apply, None, left out)."""
        out: dict[str, Any] = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if value is None and item.metadata.get("optional"):
                continue
            out[item.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls: type[_S], data: Mapping[str, Any], *, source: str = "settings") -> _S:
        """Read the object :meth:`to_dict` wrote; ``source`` names it in the error for a missing field."""
        names = {item.name: item for item in dataclasses.fields(cls)}
        required = [
            name for name, item in names.items()
            if item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
        ]
        missing = [name for name in required if name not in data]
        if missing:
            raise FileFormatError(f"{source}: field(s) {', '.join(missing)} missing; is it a stopwise replay's settings?")
        values = {name: tuple(value) if isinstance(value, list) and name in cls._TUPLES else value for name, value in data.items() if name in names}
        return cls(**values)

    _TUPLES: ClassVar[frozenset[str]] = frozenset()
    """Fields held as tuples (JSON lists)."""


@dataclass(frozen=True, kw_only=True)
class ReplaySettings(_Settings):
    """Everything needed to rerun a completed-record replay (:func:`stopwise.replay.replay_grid`)."""

    stopwise_version: str
    """The stopwise version that ran the replay."""
    policies: PolicyEntries
    """Policy name -> its sha256 and canonical JSON (parsed), for every policy replayed."""
    thresholds: tuple[float, ...]
    """The thresholds delta, as fractions."""
    budgets: tuple[float, ...]
    """The budget grid, as fractions of the budget measure's total."""
    n_orders: int
    """Task orders K per directed pair."""
    measure: str
    """The budget measure (``tasks``, ``cost`` or ``elapsed``): the override, or the base policy's."""
    scope: str
    """The budget scope: the override, or the base policy's."""
    min_coverage: float
    """Source filter: a system is kept with usable outcomes on at least this share of the tasks."""
    min_shared: int
    """Source filter: a pair is kept with at least this many shared tasks."""
    excluded_systems: dict[str, dict[str, str]] = field(default_factory=dict)
    """Source -> system -> why it was left out."""
    excluded_rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Source -> the outcome rows left out, as ``{"reason", "rows", "tasks"}`` objects."""
    notes: dict[str, list[str]] = field(default_factory=dict)
    """Source -> notes of its preparation."""
    excluded_pairs: dict[str, dict[str, str]] = field(default_factory=dict)
    """Source -> ``"tested vs baseline"`` -> why the directed pair was left out."""

    _TUPLES: ClassVar[frozenset[str]] = frozenset({"thresholds", "budgets"})


@dataclass(frozen=True, kw_only=True)
class LiveReplaySettings(_Settings):
    """Everything needed to rerun a live-look replay (:func:`stopwise.replay.replay_looks`, :func:`~stopwise.replay.replay_source_looks`).

    A replay of one source (:func:`~stopwise.replay.replay_source_looks`) records its ``policy`` and
    ``policy_sha256``; one of several sources and policies (:func:`~stopwise.replay.replay_looks`)
    records ``policies``, ``sources``, ``min_coverage`` and ``min_shared`` instead. The fields that do not
    apply are None and left out of :meth:`to_dict`.
    """

    stopwise_version: str
    """The stopwise version that ran the replay."""
    thresholds: tuple[float, ...]
    """The thresholds delta, as fractions."""
    n_orders: int
    """Task orders K per directed pair."""
    looks: int | str
    """Where the rules look: a number of evenly spaced looks, or ``every`` (after every task)."""
    fixed_looks: int | str
    """Where the fixed-budget rule is re-declared (``every 5% of tasks`` by default)."""
    rules: tuple[str, ...]
    """The rules replayed (:data:`stopwise.replay.LIVE_RULES`)."""
    strategy: str
    """The betting strategy as asked (``auto`` included)."""
    truth: str
    """What a decision is checked against."""
    policy: dict[str, Any] | None = field(default=None, metadata={"optional": True})
    """One source's replay: the policy's canonical JSON, parsed."""
    policy_sha256: str | None = field(default=None, metadata={"optional": True})
    """One source's replay: the sha256 of the policy's canonical JSON."""
    policies: PolicyEntries | None = field(default=None, metadata={"optional": True})
    """Several sources' replay: policy name -> its sha256 and canonical JSON (parsed)."""
    sources: tuple[str, ...] | None = field(default=None, metadata={"optional": True})
    """Several sources' replay: the source names, in order."""
    min_coverage: float | None = field(default=None, metadata={"optional": True})
    """Several sources' replay: the source filter on a system's coverage."""
    min_shared: int | None = field(default=None, metadata={"optional": True})
    """Several sources' replay: the source filter on a pair's shared tasks."""

    _TUPLES: ClassVar[frozenset[str]] = frozenset({"thresholds", "rules", "sources"})
