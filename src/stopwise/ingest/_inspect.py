"""Inspect AI logs, read directly (``inspect_ai`` is not imported).

Two containers hold the same ``EvalLog`` document:

* ``.eval``: a zip archive with ``header.json`` (eval spec, status, results, stats),
  ``samples/<id>_epoch_<n>.json`` (one ``EvalSample`` each) and journal files. Recent Inspect
  versions compress the members with Zstandard (zip method 93); Python reads that natively from
  3.14 on, earlier versions need the ``zstandard`` package. An in-progress log has no
  ``header.json`` yet; its eval spec is read from ``_journal/start.json``.
* ``.json``: one JSON object with ``version``, ``eval``, ``status``, ``results``, ``stats`` and
  a ``samples`` list.

One row per sample and epoch: task = sample id, attempt = epoch - 1, outcome = the chosen scorer's
value (``C`` 1, ``I`` 0, ``P`` 0.5, ``N`` 0, booleans 1/0, numbers kept), cost = the sum of
``model_usage[*].total_cost`` when recorded, elapsed = ``total_time`` (or ``working_time``).

System names. The default is the log's ``model``; two logs of one model (two solvers, two task
variants, two ``mockllm/model`` runs) would then read as one system. :func:`system_template` turns
``--system-from`` choices into a ``system`` template over a log's fields: ``model``, ``file`` (the
log's file name without suffix), ``dir`` (its folder's name), ``task``, ``task-arg:NAME``,
``tag`` (the log's only tag), ``tag:PREFIX`` (the tag that starts with PREFIX, PREFIX removed),
``solver`` and ``metadata:KEY``; several choices are joined with ``/``. A field a log lacks is an
error naming the file and what the log has. Control characters (terminal escape sequences) in a
name are written as hex escapes (ESC as backslash-x-1-b), so a log cannot drive the terminal through its ``model`` field.

Eval sets. A folder written by ``inspect_ai.eval_set`` holds ``eval-set.json``, ``logs.json`` and
one log per task and model, plus the logs of attempts that a retry replaced. Of the logs that share
a ``task_id`` in such a folder, only the newest is read (by ``created``); the others are listed as
ignored, with the log that replaced them.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from stopwise._limits import json_loads
from stopwise.errors import FileFormatError, InputError
from stopwise.ingest._common import Collector, Progress, nonneg, steps_from_messages, system_name, text_of
from stopwise.ingest._zip import zip_member
from stopwise.ingest._zip import zstd_member as zstd_member
from stopwise.records import Step

_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "correct": 1.0, "no": 0.0, "false": 0.0, "incorrect": 0.0}


SYSTEM_SOURCES = ("model", "file", "dir", "task", "task-arg:NAME", "tag", "tag:PREFIX", "solver", "metadata:KEY")
"""What ``--system-from`` may name (NAME, PREFIX and KEY are yours)."""

_SIMPLE = {"model": "{model}", "file": "{file}", "dir": "{dir}", "task": "{task}", "tag": "{tag}", "solver": "{solver}"}
_KEYED = {"task-arg": "task_args", "tag": "tag_prefix", "metadata": "metadata"}
_KEY = re.compile(r"[A-Za-z0-9_.=@+\-]+")


def system_template(sources: str | Sequence[str]) -> str:
    """The ``system`` template for ``--system-from`` choices (several are joined with ``/``).

    Parameters
    ----------
    sources : str or sequence of str
        Each one of :data:`SYSTEM_SOURCES`; a single string may list several separated by commas.

    Returns
    -------
    str
        A template over an Inspect log's fields, for the ``system`` option.

    Raises
    ------
    InputError
        An unknown choice, or a NAME / PREFIX / KEY with characters outside ``A-Z a-z 0-9 _ . = @ + -``.

    Examples
    --------
    >>> from stopwise.ingest import system_template
    >>> system_template("file")
    '{file}'
    >>> system_template(["model", "task-arg:variant"])
    '{model}/{task_args[variant]}'
    >>> system_template("tag:system=")
    '{tag_prefix[system=]}'
    """
    items = [sources] if isinstance(sources, str) else list(sources)
    parts = [p.strip() for item in items for p in (item.split(",") if isinstance(item, str) else [item])]
    if not parts or any(not isinstance(p, str) or not p for p in parts):
        raise InputError(f"`system_from` must name at least one of {', '.join(SYSTEM_SOURCES)}; got {sources!r}")
    out = []
    for part in parts:
        if part in _SIMPLE:
            out.append(_SIMPLE[part])
            continue
        kind, sep, key = part.partition(":")
        if sep and kind in _KEYED:
            if not _KEY.fullmatch(key):
                raise InputError(
                    f"`system_from` {part!r}: the {kind} key must be non-empty and use only A-Z a-z 0-9 _ . = @ + -"
                )
            out.append("{" + _KEYED[kind] + "[" + key + "]}")
            continue
        raise InputError(f"`system_from` must be one of {', '.join(SYSTEM_SOURCES)}; got {part!r}")
    return "/".join(out)


def printable(name: str) -> str:
    r"""``name`` with control and format characters written as escapes (``\x1b`` for ESC).

    Examples
    --------
    >>> printable("mockllm/\x1b[31mred\x1b[0m")
    'mockllm/\\x1b[31mred\\x1b[0m'
    >>> printable("gpt-4o")
    'gpt-4o'
    """
    if name.isprintable():
        return name
    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")
        else c
        for c in name
    )


class _Keyed(dict[str, Any]):
    """A log's mapping field (task args, metadata) whose missing key is an error naming the file."""

    def __init__(self, file: str, field: str, values: Mapping[str, Any], hint: str = "") -> None:
        super().__init__({str(k): v for k, v in values.items()})
        self.file, self.field, self.hint = file, field, hint

    def __getitem__(self, key: str) -> Any:
        value = super().__getitem__(key)
        if isinstance(value, dict | list) or value is None:
            raise InputError(
                f"{self.file}: {self.field}[{key!r}] must be a scalar to name a system; got {json.dumps(value)[:80]}"
            )
        return value

    def __missing__(self, key: str) -> Any:
        have = ", ".join(sorted(self)) or "none"
        raise InputError(f"{self.file}: the log has no {self.field}[{key!r}] to name the system ({self.field}: {have}){self.hint}")


class _TagPrefix(dict[str, Any]):
    def __init__(self, file: str, tags: list[str]) -> None:
        super().__init__()
        self.file, self.tags = file, tags

    def __missing__(self, prefix: str) -> str:
        found = [t[len(prefix) :] for t in self.tags if t.startswith(prefix) and len(t) > len(prefix)]
        if len(found) != 1:
            raise InputError(
                f"{self.file}: must have exactly one tag starting with {prefix!r} to name the system; "
                f"it has {len(found)} (tags: {', '.join(self.tags) or 'none'})"
            )
        return found[0]


class _OneTag:
    def __init__(self, file: str, tags: list[str]) -> None:
        self.file, self.tags = file, tags

    def __format__(self, spec: str) -> str:
        if len(self.tags) != 1:
            raise InputError(
                f"{self.file}: must have exactly one tag to name the system by tag; it has {len(self.tags)} "
                f"({', '.join(self.tags) or 'none'}); use --system-from tag:PREFIX to pick one"
            )
        return format(self.tags[0], spec)


def _name_fields(path: Path, eval_spec: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a ``system`` template may use for one log."""
    file = str(path)
    tags = [str(t) for t in eval_spec.get("tags") or [] if isinstance(t, str | int | float)]
    task_args = eval_spec.get("task_args") if isinstance(eval_spec.get("task_args"), dict) else {}
    metadata = eval_spec.get("metadata") if isinstance(eval_spec.get("metadata"), dict) else {}
    solver = eval_spec.get("solver")
    task_name = eval_spec.get("task")
    return {
        "model": eval_spec.get("model"),
        "task": task_name,
        "task_display_name": eval_spec.get("task_display_name") or task_name,
        "run_id": eval_spec.get("run_id"),
        "eval_id": eval_spec.get("eval_id"),
        "file": path.stem,
        "dir": path.resolve().parent.name,
        "solver": solver if isinstance(solver, str) and solver else _Missing(file, "solver"),
        "task_args": _Keyed(file, "task_args", task_args or {}),
        "metadata": _Keyed(file, "metadata", metadata or {}),
        "tag": _OneTag(file, tags),
        "tags": ",".join(tags),
        "tag_prefix": _TagPrefix(file, tags),
    }


class _OutputModel:
    """The ``{output_model}`` field: the one model the samples' ``output.model`` names.

    Custom model APIs logged as ``mockllm/model`` say there which model produced the samples.
    """

    def __init__(self, file: str, samples: Sequence[Any]) -> None:
        self.file = file
        self.models = sorted(
            {
                str(model)
                for s in samples
                if isinstance(s, dict)
                for model in [(s.get("output") or {}).get("model") if isinstance(s.get("output"), dict) else None]
                if isinstance(model, str) and model
            }
        )

    def __format__(self, spec: str) -> str:
        if len(self.models) != 1:
            raise InputError(
                f"{self.file}: must have one model in its samples' output.model to name the system by it; "
                f"its samples name {len(self.models)} models in output.model ({', '.join(self.models) or 'none'})"
            )
        return format(self.models[0], spec)


class _Missing:
    def __init__(self, file: str, field: str) -> None:
        self.file, self.field = file, field

    def __format__(self, spec: str) -> str:
        raise InputError(f"{self.file}: the log names no {self.field} (the eval used the task's default solver)")


def _eval_set_root(path: Path) -> Path | None:
    folder = path.resolve().parent
    return folder if (folder / "eval-set.json").is_file() else None


def _header(path: Path, kind: str, doc: Any) -> Mapping[str, Any]:
    """The eval spec of a log without reading its samples."""
    if kind != "eval":
        return doc.get("eval") or {} if isinstance(doc, dict) else {}
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            for name in ("header.json", "_journal/start.json"):
                if name in names:
                    head = member_json(archive, path, name)
                    return head.get("eval") or {} if isinstance(head, dict) else {}
    except (zipfile.BadZipFile, OSError):
        return {}
    return {}


def select_eval_set_logs(
    items: Sequence[tuple[Path, str, Any]], ignored: dict[str, str]
) -> tuple[list[tuple[Path, str, Any]], list[str]]:
    """Keep the newest log of each task in an ``eval_set`` folder; list the replaced ones in ``ignored``.

    Returns the logs to read (in the given order) and notes on each eval-set folder.
    """
    groups: dict[tuple[Path, str], list[tuple[str, Path]]] = {}
    for path, kind, doc in items:
        root = _eval_set_root(path)
        if root is None:
            continue
        spec = _header(path, kind, doc)
        task_id = spec.get("task_id") or spec.get("eval_id")
        if not task_id:
            continue
        key = (root, f"{task_id}|{spec.get('model')}")
        groups.setdefault(key, []).append((str(spec.get("created") or ""), path))
    replaced: set[Path] = set()
    for logs in groups.values():
        logs.sort(key=lambda item: (item[0], str(item[1])))
        newest = logs[-1][1]
        for _, older in logs[:-1]:
            replaced.add(older)
            ignored[str(older)] = f"replaced in its eval set by a later attempt ({newest.name})"
    notes = []
    for root in sorted({root for root, _ in groups}):
        for name in ("eval-set.json", "logs.json"):
            ignored.pop(str(root / name), None)
        kept = sum(1 for (r, _), logs in groups.items() if r == root)
        dropped = sum(len(logs) - 1 for (r, _), logs in groups.items() if r == root)
        notes.append(
            f"{root}: an eval set; read the newest log of each of its {kept} tasks"
            + (f" ({dropped} replaced attempts left out)" if dropped else "")
        )
    return [item for item in items if item[0] not in replaced], notes


def read_logs(
    collector: Collector, items: Iterable[tuple[Path, str, Any]], ignored: dict[str, str], *, progress: Progress | None = None,
) -> None:
    """Read Inspect logs (``(path, kind, parsed document)``), eval-set folders resolved; ``progress`` counts the ``.eval`` archives."""
    chosen, notes = select_eval_set_logs(list(items), ignored)
    archives, done = sum(kind == "eval" for _, kind, _ in chosen), 0
    for path, kind, doc in chosen:
        if progress is not None and kind == "eval":
            progress(done, archives, "Inspect .eval logs read")
            done += 1
        read_log(collector, path, load_eval(path) if kind == "eval" else doc)
    collector.notes.extend(notes)


def is_json_log(doc: Any) -> bool:
    """True for an Inspect ``.json`` log document."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("eval"), dict)
        and "model" in doc["eval"]
        and "task" in doc["eval"]
        and ("version" in doc or "samples" in doc)
    )


def _member(archive: zipfile.ZipFile, path: Path, name: str) -> bytes:
    return zip_member(archive, path, name)  # bounded for every method, refuses encrypted members (ingest/_zip.py)


def member_json(archive: zipfile.ZipFile, path: Path, name: str) -> Any:
    try:
        return json_loads(_member(archive, path, name), f"{path}: member {name}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"{path}: member {name} is not valid JSON ({exc})") from exc


def load_eval(path: Path) -> dict[str, Any]:
    """Read a ``.eval`` archive into the shape of a ``.json`` log (header fields plus ``samples``)."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise FileFormatError(f"{path}: not a readable .eval log (a zip archive): {exc}") from exc
    with archive:
        names = archive.namelist()
        if "header.json" in names:
            doc = member_json(archive, path, "header.json")
        elif "_journal/start.json" in names:
            doc = member_json(archive, path, "_journal/start.json")
            doc.setdefault("status", "started")
        else:
            raise FileFormatError(f"{path}: not an Inspect .eval log (no header.json or _journal/start.json)")
        if not isinstance(doc, dict):
            raise FileFormatError(f"{path}: header.json must be a JSON object")
        sample_names = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
        doc["samples"] = [member_json(archive, path, n) for n in sample_names]
    return doc


def score_outcome(value: Any) -> tuple[float | None, str | None]:
    """(outcome, problem) for one Inspect score value; (None, None) means unscored.

    The one mapping from an Inspect ``Score.value`` to an outcome in [0, 1], shared by the log
    reader and the live early-stopping manager (:mod:`stopwise.inspect`): ``C`` 1, ``I`` 0,
    ``P`` 0.5, ``N`` 0, ``yes``/``true``/``correct`` 1, ``no``/``false``/``incorrect`` 0,
    booleans 1/0, numbers (or numeric text) in [0, 1] kept, NaN or ``None`` unscored. Anything
    else (a number outside [0, 1], other text, a list or dict) is a problem, never a silent 0.

    Examples
    --------
    >>> from stopwise.ingest._inspect import score_outcome
    >>> score_outcome("C"), score_outcome(0.25), score_outcome(None)
    ((1.0, None), (0.25, None), (None, None))
    >>> score_outcome(3)[1]
    'must map to a number in [0, 1] (the outcome contract); rescale the scorer'
    """
    if value is None:
        return None, None
    if isinstance(value, bool):
        return (1.0 if value else 0.0), None
    if isinstance(value, int | float):
        out = float(value)
        if math.isnan(out):
            return None, None
        if not math.isfinite(out) or not 0.0 <= out <= 1.0:
            return None, "must map to a number in [0, 1] (the outcome contract); rescale the scorer"
        return out, None
    if isinstance(value, str):
        text = value.strip()
        if text in _LETTERS:
            return _LETTERS[text], None
        if text.lower() in _WORDS:
            return _WORDS[text.lower()], None
        try:
            return score_outcome(float(text))
        except ValueError:
            return None, "must be C, I, P, N, a boolean or a number in [0, 1]"
    return None, "must be a scalar (C, I, P, N, a boolean or a number); pick a key of a dict score with scorer='NAME:KEY'"


def _resolve(value: Any, attachments: Mapping[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("attachment://"):
        return attachments.get(value[len("attachment://") :], value)
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _tool_calls(message: Mapping[str, Any]) -> list[tuple[str, Any]]:
    calls = message.get("tool_calls") or []
    return [(str(c.get("function", "")), c.get("arguments")) for c in calls if isinstance(c, dict)]


def message_steps(messages: Sequence[Mapping[str, Any]]) -> list[Step]:
    """Trajectory steps of an Inspect sample's messages (as dicts); live halting reads messages with it too."""
    return steps_from_messages(messages, tool_calls=_tool_calls)


def _task_text(sample: Mapping[str, Any]) -> str:
    value = sample.get("input")
    if isinstance(value, list):
        users = [m for m in value if isinstance(m, dict) and m.get("role") == "user"]
        return text_of(users[0].get("content")) if users else ""
    return text_of(value)


def read_log(collector: Collector, path: Path, doc: dict[str, Any]) -> None:
    """Add the samples of one Inspect log (already loaded) to ``collector``.

    A log without samples (cancelled before any sample finished, or written with
    ``log_samples=False``) gives no rows and a note; the other logs of a folder are still read.
    """
    file = str(path)
    collector.files.append(file)
    eval_spec = doc.get("eval")
    if not isinstance(eval_spec, dict):
        collector.problem(file, None, "eval", "must be the eval spec object of an Inspect log", eval_spec)
        return
    samples = doc.get("samples")
    if samples is not None and not isinstance(samples, list):
        collector.problem(file, None, "samples", "must be a list of samples", type(samples).__name__)
        return
    if not samples:
        collector.notes.append(
            f"{file}: no samples (log status {doc.get('status') or 'unknown'}); no rows from this log"
            + ("" if doc.get("status") in ("cancelled", "error", "started") else
               " (was it written with log_samples=False, or were all its samples skipped by an early-stopping manager?)")
        )
        return
    system = _log_system(collector, path, eval_spec, samples)
    if not system:
        return
    chosen = _choose_scorer(collector, file, eval_spec, samples)
    if chosen is None:
        return
    scorer, key, available = chosen
    for row, sample in enumerate(samples, start=1):
        _read_sample(collector, file, row, sample, system=system, scorer=scorer, key=key, task_name=eval_spec.get("task"))
    _read_early_stops(collector, file, early_stopping_of(doc))
    collector.notes.append(
        f"{file}: outcome from scorer '{scorer or '(none)'}'"
        + (f" (of {', '.join(available)})" if len(available) > 1 else "")
        + (f"; log status {doc.get('status')}" if doc.get("status") not in (None, "success") else "")
    )


def early_stopping_of(doc: Any) -> Any:
    """``results.early_stopping`` of a log document or ``.eval`` header (None when it has none).

    Examples
    --------
    >>> early_stopping_of({"results": {"early_stopping": {"manager": "m"}}}), early_stopping_of({"results": None})
    ({'manager': 'm'}, None)
    """
    results = doc.get("results") if isinstance(doc, dict) else None
    return results.get("early_stopping") if isinstance(results, dict) else None


def _read_early_stops(collector: Collector, file: str, early: Any) -> None:
    """Count the samples an early-stopping manager skipped (``results.early_stopping.early_stops``) as skipped runs.

    A skipped sample never ran, so it is no row; it is reported with the manager's reason (e.g.
    ``stopwise promote: ...``). Inspect writes the early-stopping summary only when a sample of the
    task was scored, so a log whose every sample was skipped has none.
    """
    if not isinstance(early, dict) or not isinstance(stops := early.get("early_stops"), list):
        return
    manager = str(early.get("manager") or "an early-stopping manager")
    for stop in stops:
        if not isinstance(stop, dict):
            continue
        reason = str(stop.get("reason") or "no reason given")
        reason = reason if len(reason) <= 160 else reason[:157] + "..."
        collector.skip(file, f"sample {stop.get('id')} epoch {stop.get('epoch')}", f"not run: skipped by {manager}: {reason}")


def _log_system(collector: Collector, path: Path, eval_spec: Mapping[str, Any], samples: Sequence[Any]) -> str:
    """The system name of one log (its model, or the ``system`` template); "" after a problem."""
    file = str(path)
    model = eval_spec.get("model")
    default = str(model) if isinstance(model, str) and model else ""
    fields = {**_name_fields(path, eval_spec), "output_model": _OutputModel(file, samples)}
    system = printable(system_name(collector.options.system, fields, default, file))
    if not system:
        collector.problem(file, None, "eval.model", "must name the model (or pass `system`)", model)
    return system


def _choose_scorer(
    collector: Collector, file: str, eval_spec: Mapping[str, Any], samples: Sequence[Any]
) -> tuple[str, str | None, list[str]] | None:
    """(scorer, dict key, scorers available) for one log; None after a problem."""
    available = sorted({name for s in samples if isinstance(s, dict) for name in (s.get("scores") or {})})
    spec_order = [s.get("name") for s in eval_spec.get("scorers") or [] if isinstance(s, dict)]
    requested = collector.options.scorer
    key: str | None = None
    if requested is not None:
        scorer, _, key_text = requested.partition(":")
        key = key_text or None
        if available and scorer not in available:
            collector.problem(
                file, None, "scores", f"must include the requested scorer; this log has {', '.join(available)}", requested
            )
            return None
    else:
        ordered = [str(n) for n in spec_order if n in available] + [n for n in available if n not in spec_order]
        scorer = ordered[0] if ordered else ""
    return scorer, key, available


def _sample_flags(sample: Mapping[str, Any]) -> list[str]:
    flags: list[str] = []
    if sample.get("error"):
        flags.append("error")
    limit = sample.get("limit")
    if isinstance(limit, dict) and limit.get("type"):
        flags.append(f"limit:{limit['type']}")
    elif isinstance(limit, str) and limit:
        flags.append(f"limit:{limit}")
    return flags


def _sample_outcome(
    collector: Collector, file: str, row: int, sample: Mapping[str, Any], scorer: str, key: str | None, record: str
) -> tuple[float | None, str | None] | None:
    """(outcome, why unknown) of one sample; None after a problem."""
    error = sample.get("error")
    score = (sample.get("scores") or {}).get(scorer) if scorer else None
    if not (isinstance(score, dict) and "value" in score):
        return None, "error" if error else "unscored"
    value = score["value"]
    if isinstance(value, dict):
        if key is None or key not in value:
            keys = ", ".join(sorted(map(str, value)))
            rule = f"is a dict; pick one of its keys with scorer='{scorer}:KEY' (keys: {keys})"
            collector.problem(file, row, f"scores.{scorer}.value", rule, record)
            return None
        value = value[key]
    outcome, problem = score_outcome(value)
    if problem is not None:
        collector.problem(file, row, f"scores.{scorer}.value", problem, value)
        return None
    return outcome, (("error" if error else "unscored") if outcome is None else None)


def score_predicted(score: Any) -> bool:
    """Whether an Inspect score is a predicted outcome: ``metadata["predicted"] is True``.

    :class:`stopwise.inspect.LiveHalting` scores a halted sample so; its row has ``status = "predicted"``.
    """
    metadata = score.get("metadata") if isinstance(score, Mapping) else getattr(score, "metadata", None)
    return isinstance(metadata, Mapping) and metadata.get("predicted") is True


def score_audit_flags(score: Any) -> list[str]:
    """The flags of an audited sample's score: ``audited`` and, if the monitor would have halted it, ``would-halt:f``.

    :class:`stopwise.inspect.LiveHalting` marks an audited sample's score ``metadata["audited"] = True`` and
    ``metadata["would_halt"] = f`` (the prediction it would have stored); [] for any other score.

    Examples
    --------
    >>> from stopwise.ingest._inspect import score_audit_flags
    >>> score_audit_flags({"metadata": {"audited": True, "would_halt": 0}}), score_audit_flags({"value": "C"})
    (['audited', 'would-halt:0'], [])
    """
    metadata = score.get("metadata") if isinstance(score, Mapping) else getattr(score, "metadata", None)
    if not isinstance(metadata, Mapping) or metadata.get("audited") is not True:
        return []
    would = metadata.get("would_halt")
    return ["audited", f"would-halt:{int(would)}"] if would in (0, 1) and not isinstance(would, bool) else ["audited"]


def _sample_cost(sample: Mapping[str, Any]) -> float | None:
    usages = sample.get("model_usage") or {}
    if not isinstance(usages, dict):
        return None
    present = [c for c in (nonneg(u.get("total_cost")) for u in usages.values() if isinstance(u, dict)) if c is not None]
    return sum(present) if present else None


def _read_sample(
    collector: Collector,
    file: str,
    row: int,
    sample: Any,
    *,
    system: str,
    scorer: str,
    key: str | None,
    task_name: Any,
) -> None:
    """Add one sample (one epoch of one task) of a log."""
    if not isinstance(sample, dict):
        collector.problem(file, row, None, "a sample must be a JSON object", type(sample).__name__)
        return
    sample_id, epoch = sample.get("id"), sample.get("epoch")
    if isinstance(sample_id, bool) or not isinstance(sample_id, str | int) or str(sample_id).strip() == "":
        collector.problem(file, row, "id", "must be a sample id (text or integer)", sample_id)
        return
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        collector.problem(file, row, "epoch", "must be an integer >= 1", epoch)
        return
    task = str(sample_id)
    record = f"sample {task} epoch {epoch}"
    scored = _sample_outcome(collector, file, row, sample, scorer, key, record)
    if scored is None:
        return
    outcome, unknown = scored
    score = (sample.get("scores") or {}).get(scorer)
    predicted = unknown is None and score_predicted(score)
    score_flags = ["predicted"] if predicted else score_audit_flags(score) if unknown is None else []
    steps = None
    if collector.options.trajectories:
        attachments = sample.get("attachments") or {}
        messages = [_resolve(m, attachments) for m in sample.get("messages") or [] if isinstance(m, dict)]
        steps = message_steps(messages)
    meta: dict[str, Any] = {"scorer": scorer, "epoch": epoch, "inspect_task": task_name}
    error, limit = sample.get("error"), sample.get("limit")
    if isinstance(error, dict) and error.get("message"):
        meta["error"] = str(error["message"])[:500]
    if isinstance(limit, dict):
        meta["limit"] = limit
    collector.add(
        file=file,
        system=system,
        task=task,
        outcome=outcome,
        unknown=unknown,
        flags=[*_sample_flags(sample), *score_flags],
        status="predicted" if predicted else "final",
        attempt=epoch - 1,
        cost_usd=_sample_cost(sample),
        elapsed_s=collector.options.pick_elapsed(nonneg(sample.get("total_time")), nonneg(sample.get("working_time"))),
        record=record,
        steps=steps,
        task_text=_task_text(sample) if collector.options.trajectories else "",
        meta=meta,
    )
