"""What every adapter shares: options, the record collector and the result type.

An adapter turns one harness file (or a run directory) into *records*: one per run of one system
on one task. The collector validates each value as it is read and keeps every broken rule as a
:class:`~stopwise.errors.Problem`; nothing is written or returned until the whole input is clean.
A run whose outcome cannot be read (a harness error, an empty patch) becomes a row, a ``pending``
row or a counted :class:`SkippedRecord`, as the caller chooses; it is never a silent 0.

Flags travel in the ``flags`` column (a policy's ``[flags]`` section excludes or counts rows by
them); ``source`` names where a row came from, ``"<format>:<file>"``. The collected records become
:class:`~stopwise.records.OutcomeColumns` through the contract's one validator
(:func:`stopwise.outcome_columns`), with no frame on the way.
"""

from __future__ import annotations

import math
import os
import re
import string
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from stopwise._canonical import canonical_json
from stopwise._params import Constraint, OneOf, Predicate, check_params
from stopwise._text import printable
from stopwise._vocabulary import INGEST_FORMATS
from stopwise.errors import FileFormatError, InputError, Problem, Shown, ValidationError, shown
from stopwise.records import FLAG_SEPARATOR, OutcomeColumns, Step, Trajectory, outcome_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "INGEST_FORMATS",
    "IngestResult",
    "SkippedRecord",
]


UnknownPolicy = Literal["pending", "fail", "drop"]
_UNKNOWN_POLICIES: tuple[UnknownPolicy, ...] = get_args(UnknownPolicy)
ElapsedKind = Literal["total", "agent"]
_ELAPSED_KINDS: tuple[ElapsedKind, ...] = get_args(ElapsedKind)
TaskIds = Literal["canonical", "raw"]
_TASK_IDS: tuple[TaskIds, ...] = get_args(TaskIds)
Progress = Callable[[int, int, str], None]
"""A progress callback, called as ``progress(done, total, description)``."""


def _text_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and bool(value.strip()))


def _instance_ids(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str | bytes):
        return False
    ids = [str(i).strip() for i in value]
    return bool(ids) and all(ids)


INGEST_CONSTRAINTS: dict[str, Constraint] = {
    "format": OneOf(("auto", *INGEST_FORMATS)),
    "system": Predicate(_text_or_none, "non-empty text (a name or a template such as '{model}') or None"),
    "scorer": Predicate(_text_or_none, "non-empty text or None"),
    "errors": OneOf(_UNKNOWN_POLICIES),
    "empty_patch": OneOf(_UNKNOWN_POLICIES),
    "elapsed": OneOf(_ELAPSED_KINDS),
    "task_ids": OneOf(_TASK_IDS),
    "instances": Predicate(_instance_ids, "a collection of instance ids (at least one, none blank, not one string) or None"),
    "trajectories": OneOf((False, True)),
}
"""The ingest functions' parameter rules, declared once (:mod:`stopwise._params`)."""

COVERED = "covered by "
"""How the reason of a file left out because a summary read instead covers it begins (in ``ignored_files``)."""

@dataclass(frozen=True)
class SkippedRecord:
    """A run found in a harness file that did not become an outcome row, and why."""

    file: str
    """The file the run was read from."""
    record: str
    """The run's identity in that file (task id, trial name, sample and epoch)."""
    reason: str
    """Why it is not a row (e.g. ``"harness error (errors='drop')"``)."""
    kind: str = ""
    """The cause shared by runs skipped alike (``"skipped by the early-stopping manager: budget"``), which
    the summary counts; the reason itself when empty. A part after ": " is counted under the part before it."""

    @property
    def cause(self) -> str:
        """:attr:`kind`, or :attr:`reason` when no kind is given."""
        return self.kind or self.reason


@dataclass(frozen=True)
class IngestResult:
    """What an ingest produced: outcome rows, trajectories, and everything it left out.

    Examples
    --------
    >>> from stopwise.ingest import read_swebench
    >>> import json, pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "m.run1.json").write_text(json.dumps(
    ...     {"resolved_ids": ["a__b-1"], "unresolved_ids": ["a__b-2"], "error_ids": ["a__b-3"]}))
    >>> result = read_swebench(d / "m.run1.json")
    >>> result.n_rows, result.flag_counts(), result.columns["flags"].tolist()
    (3, {'error': 1}, ['', '', 'error'])
    """

    columns: OutcomeColumns
    """Validated outcome rows (every column of the outcome contract), sorted by system, task, attempt."""
    trajectories: list[Trajectory] = field(default_factory=list)
    """One trajectory per row whose log holds the steps (only when trajectories were asked for)."""
    skipped: list[SkippedRecord] = field(default_factory=list)
    """Runs read but not turned into rows, each with its reason."""
    files: tuple[str, ...] = ()
    """The harness files read, in reading order."""
    formats: dict[str, str] = field(default_factory=dict)
    """The format each file was read as."""
    ignored_files: dict[str, str] = field(default_factory=dict)
    """Files met while walking a directory that are not harness logs, or that a summary read instead
    covers (reason ``"covered by ..."``), with the reason."""
    notes: list[str] = field(default_factory=list)
    """What the adapters chose on the way (e.g. which Inspect scorer gave the outcome)."""

    @cached_property
    def rows(self) -> pd.DataFrame:
        """The outcome rows as a pandas frame (:meth:`OutcomeColumns.to_frame` of :attr:`columns`)."""
        return self.columns.to_frame()

    @property
    def n_rows(self) -> int:
        """Number of outcome rows."""
        return len(self.columns)

    def flag_counts(self) -> dict[str, int]:
        """Rows per flag (a row may carry several flags), sorted by flag."""
        counts: dict[str, int] = {}
        codes, labels = self.columns.codes("flags")
        for label, n in zip(labels.tolist(), np.bincount(codes, minlength=len(labels)).tolist(), strict=True):
            for flag in label.split(FLAG_SEPARATOR) if label else ():
                counts[flag] = counts.get(flag, 0) + n
        return dict(sorted(counts.items()))

    def status_counts(self) -> dict[str, int]:
        """Rows per status (final, pending), sorted by status."""
        codes, labels = self.columns.codes("status")
        return {str(k): int(v) for k, v in zip(labels.tolist(), np.bincount(codes, minlength=len(labels)).tolist(), strict=True)}

    def summary(self) -> str:
        """A few lines for a person: rows, systems, tasks, statuses, flags, skipped and ignored inputs."""
        rows = self.columns
        lines = [
            f"{len(rows)} outcome rows from {len(self.files)} file{'s' if len(self.files) != 1 else ''}"
            f" ({', '.join(sorted(set(self.formats.values()))) or 'none'}):"
            f" {len(rows.codes('system')[1])} systems, {len(rows.codes('task')[1])} tasks",
            "status: " + ", ".join(f"{k} {v}" for k, v in self.status_counts().items()),
        ]
        flags = self.flag_counts()
        if flags:
            lines.append("flagged: " + ", ".join(f"{k} {v}" for k, v in flags.items()))
        if self.trajectories:
            lines.append(f"{len(self.trajectories)} trajectories")
        if self.skipped:
            lines.append(f"{len(self.skipped)} runs not turned into rows: " + _counted_causes([i.cause for i in self.skipped]))
        covered = sum(1 for reason in self.ignored_files.values() if reason.startswith(COVERED))
        if len(self.ignored_files) > covered:
            lines.append(f"{len(self.ignored_files) - covered} files ignored (not harness logs)")
        if covered:
            lines.append(f"{covered} files not read: a summary read instead covers them")
        return "\n".join(lines)


def _counted_causes(causes: list[str]) -> str:
    """Causes counted, those of one head (the part before ": ") under it once.

    Examples
    --------
    >>> _counted_causes(["not submitted", "skipped by m: budget", "skipped by m: budget", "skipped by m: promote"])
    '1 not submitted; 3 skipped by m: 2 budget, 1 promote'
    """
    counts: dict[str, dict[str, int]] = {}
    for cause in causes:
        head, _, tail = cause.partition(": ")
        within = counts.setdefault(head, {})
        within[tail] = within.get(tail, 0) + 1
    parts = []
    for head, within in sorted(counts.items()):
        if set(within) == {""}:
            parts.append(f"{within['']} {head}")
        else:
            parts.append(f"{sum(within.values())} {head}: " + ", ".join(f"{n} {tail or 'other'}" for tail, n in sorted(within.items())))
    return "; ".join(parts)


@dataclass(frozen=True)
class Options:
    """Validated options shared by every adapter."""

    system: str | None = None
    scorer: str | None = None
    errors: UnknownPolicy = "pending"
    empty_patch: UnknownPolicy = "fail"
    elapsed: ElapsedKind = "total"
    instances: tuple[str, ...] | None = None
    trajectories: bool = False
    task_ids: TaskIds = "canonical"

    def pick_elapsed(self, total: float | None, agent: float | None) -> float | None:
        """The elapsed time the ``elapsed`` option asks for, falling back to the other when it is missing."""
        first, second = (total, agent) if self.elapsed == "total" else (agent, total)
        return first if first is not None else second


def options_iv(
    owner: str = "ingest",
    *,
    system: str | None,
    scorer: str | None,
    errors: str,
    empty_patch: str,
    elapsed: str,
    instances: Iterable[str] | None,
    trajectories: bool,
    task_ids: str = "canonical",
    format: str = "auto",
) -> Options:
    """Validate and normalise the adapter options (the ``_iv`` step of every public reader).

    Each argument is checked against :data:`INGEST_CONSTRAINTS`; a bad one is an
    :class:`~stopwise.errors.InputError` naming ``owner``, the parameter, the rule and the value.
    """
    ids: Any = instances
    if instances is not None and not isinstance(instances, str | bytes):
        try:
            ids = tuple(str(i).strip() for i in instances)
        except TypeError:
            ids = instances
    params = {
        "format": format,
        "system": system,
        "scorer": scorer,
        "errors": errors,
        "empty_patch": empty_patch,
        "elapsed": elapsed,
        "task_ids": task_ids,
        "instances": ids,
        "trajectories": trajectories,
    }
    check_params(owner, params, INGEST_CONSTRAINTS)
    return Options(
        system=system.strip() if system else None,
        scorer=scorer.strip() if scorer else None,
        errors=_UNKNOWN_POLICIES[_UNKNOWN_POLICIES.index(errors)],
        empty_patch=_UNKNOWN_POLICIES[_UNKNOWN_POLICIES.index(empty_patch)],
        elapsed=_ELAPSED_KINDS[_ELAPSED_KINDS.index(elapsed)],
        instances=ids if isinstance(ids, tuple) else None,
        trajectories=trajectories,
        task_ids=_TASK_IDS[_TASK_IDS.index(task_ids)],
    )


_NO_META: Mapping[str, Any] = MappingProxyType({})
"""The ``meta`` of every record that has none (one shared, read-only mapping instead of a dict per row)."""


@dataclass(slots=True)
class Record:
    """One run on its way to becoming an outcome row (internal; slots: a million ids are a million records)."""

    system: str
    task: str
    outcome: float | None
    status: str
    group: str
    attempt: int | None
    order: tuple[Any, ...]
    cost_usd: float | None
    elapsed_s: float | None
    fmt: str
    file: str
    flags: tuple[str, ...]
    steps: list[Step] | None = None
    task_text: str = ""
    meta: Mapping[str, Any] = field(default_factory=lambda: _NO_META)
    run: str | None = None
    """The harness run the record came from (a SWE-bench run id, a Harbor job, a Terminal-Bench run):
    records of one (system, task) from different runs are different attempts, numbered by run."""

    @property
    def source(self) -> str:
        """Where the row came from, ``"<format>:<file>"`` (its flags are in ``flags``; control characters escaped)."""
        return f"{self.fmt}:{printable(self.file)}"


_REASONS = {"error": "harness error", "empty_patch": "empty patch", "unscored": "no score"}


class Collector:
    """Collects records, skipped runs and problems for one format (internal)."""

    def __init__(self, fmt: str, options: Options) -> None:
        self.fmt = fmt
        self.options = options
        self.records: list[Record] = []
        self.skipped: list[SkippedRecord] = []
        self.problems: list[Problem] = []
        self.files: list[str] = []
        self.notes: list[str] = []

    def problem(self, file: str, row: int | None, field_name: str | None, rule: str, value: Any = None) -> None:
        self.problems.append(Problem(file, row, field_name, rule, _short(value)))

    def add(
        self,
        *,
        file: str,
        system: str,
        task: str,
        outcome: float | None,
        unknown: str | None = None,
        flags: Sequence[str] = (),
        group: str = "",
        attempt: int | None = None,
        order: tuple[Any, ...] = (),
        cost_usd: float | None = None,
        elapsed_s: float | None = None,
        record: str | None = None,
        steps: list[Step] | None = None,
        task_text: str = "",
        meta: Mapping[str, Any] | None = None,
        run: str | None = None,
        status: str = "final",
    ) -> None:
        """Add one run. ``unknown`` names why its outcome is unknown (``error``, ``empty_patch``, ``unscored``).

        ``status`` is the row's status when its outcome is known (``"predicted"`` for a run halted early).
        """
        system, task = printable(system), printable(task)  # names are data: control characters escaped, as every reader's
        all_flags = list(dict.fromkeys(flags))
        if unknown is not None:
            policy = self.options.empty_patch if unknown == "empty_patch" else self.options.errors
            if unknown not in all_flags:
                all_flags.insert(0, unknown)
            if policy == "drop":
                name = "empty_patch" if unknown == "empty_patch" else "errors"
                self.skipped.append(
                    SkippedRecord(file, record or task, f"{_REASONS.get(unknown, unknown)} ({name}='drop')")
                )
                return
            if policy == "fail":
                outcome = 0.0
            else:
                outcome, status = None, "pending"
        self.records.append(
            Record(
                system=system,
                task=task,
                outcome=outcome,
                status=status,
                group=group,
                attempt=attempt,
                order=order,
                cost_usd=cost_usd,
                elapsed_s=elapsed_s,
                fmt=self.fmt,
                file=file,
                flags=tuple(all_flags),
                steps=steps if self.options.trajectories else None,
                task_text=task_text,
                meta=dict(meta) if meta else _NO_META,
                run=run,
            )
        )

    def skip(self, file: str, record: str, reason: str, kind: str = "") -> None:
        self.skipped.append(SkippedRecord(file, record, reason, kind))


def _short(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    text = repr(value)
    return value if len(text) <= 80 else text[:77] + "..."


# ---------------------------------------------------------------- values


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty dict."""
    return value if isinstance(value, dict) else {}


def number(value: Any) -> float | None:
    """A finite float from a JSON number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    out = float(value)
    return out if math.isfinite(out) else None


def nonneg(value: Any) -> float | None:
    """A finite float >= 0, else None."""
    out = number(value)
    return out if out is not None and out >= 0 else None


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 time stamp (``Z`` allowed), else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        return None


def seconds_between(start: Any, end: Any) -> float | None:
    """Seconds from ``start`` to ``end`` (ISO strings), or None when either is missing or they disagree."""
    a, b = parse_time(start), parse_time(end)
    if a is None or b is None or (a.tzinfo is None) != (b.tzinfo is None):
        return None
    delta = (b - a).total_seconds()
    return delta if delta >= 0 else None


_SWE_ID = re.compile(r"^(?P<owner>[^_/\s][^/\s]*?)__(?P<repo>[^/\s]+)-\d+$")


def repository_of(instance_id: str) -> str:
    """The repository of a SWE-bench instance id, ``""`` when the id has no ``owner__repo-N`` shape.

    Examples
    --------
    >>> from stopwise.ingest._common import repository_of
    >>> repository_of("django__django-11099"), repository_of("scikit-learn__scikit-learn-10297")
    ('django/django', 'scikit-learn/scikit-learn')
    >>> repository_of("hello-world")
    ''
    """
    match = _SWE_ID.match(instance_id)
    return sys.intern(f"{match['owner']}/{match['repo']}") if match else ""  # one text per repository, not per row


def path_fields(path: Path) -> dict[str, Any]:
    """The template fields every format offers: ``file`` (the file name without suffix) and ``dir`` (its folder)."""
    name = path.name
    for suffix in (".json", ".eval"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    return {"file": name, "dir": path.resolve().parent.name}


class Kwargs:
    """The ``{kwargs.NAME}`` template field: one keyword argument the harness passed to the agent.

    A missing NAME is an error naming the file and the keyword arguments the run has.
    """

    def __init__(self, file: str, values: Mapping[str, Any] | None) -> None:
        self._file = file
        self._values = {str(k): v for k, v in (values or {}).items()}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._values:
            have = ", ".join(sorted(self._values)) or "none"
            raise InputError(f"{self._file}: the run has no agent keyword argument {name!r} to name the system (kwargs: {have})")
        value = self._values[name]
        if isinstance(value, dict | list):
            return canonical_json(value, allow_nan=True)
        return "" if value is None else value

    def __format__(self, spec: str) -> str:
        return format(canonical_json(self._values, allow_nan=True) if self._values else "", spec)


def _field_label(name: str, value: Any) -> str:
    if isinstance(value, Kwargs):
        return "{" + name + ".NAME}"
    if isinstance(value, dict):
        return "{" + name + "[KEY]}"
    return "{" + name + "}"


MAX_SYSTEM_CHARS = 1000
"""The longest system name a ``system`` template may render (characters)."""

_TEMPLATE_FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z][A-Za-z0-9_]*)|\[([^\[\]{}]+)\])?$")
_TEMPLATE_FORMS = "{name}, {kwargs.NAME} or {name[KEY]}"


def _template_fields(template: str, offered: str) -> list[tuple[str, tuple[str, str | None, str | None] | None]]:
    """(literal text, (field, attribute, key) or None) of each part of a ``system`` template.

    Only plain fields, one attribute of ``kwargs`` and one key of a mapping field are template
    syntax here: format specs (``{model:>99}``), conversions (``{model!r}``), positional fields and
    chains (``{model.__class__.__mro__}``) are refused, so a template cannot allocate or reach
    into Python objects.
    """
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise InputError(f"`system` is not a valid template ({exc}); got {shown(template)}") from None
    parts: list[tuple[str, tuple[str, str | None, str | None] | None]] = []
    for literal, name, spec, conversion in parsed:
        if name is None:
            parts.append((literal, None))
            continue
        whole = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        if spec or conversion:
            raise InputError(
                f"`system` template field {shown(whole)}: format specs (':...') and conversions ('!r') are not "
                f"allowed; use a plain {_TEMPLATE_FORMS} ({offered})"
            )
        match = _TEMPLATE_FIELD.match(name)
        if match is None:
            raise InputError(
                f"`system` template field {shown(whole)}: only {_TEMPLATE_FORMS} may be used "
                f"(no positional fields, chained or private attributes, nested keys; {offered})"
            )
        parts.append((literal, (match.group(1), match.group(2), match.group(3))))
    return parts


def _offered(fields: Mapping[str, Any]) -> str:
    return "this format offers " + ", ".join(_field_label(k, v) for k, v in sorted(fields.items()))


def _template_value(file: str, fields: Mapping[str, Any], name: str, attribute: str | None, key: str | None) -> Any:
    if name not in fields:
        raise InputError(f"{file}: `system` template names an unknown field {{{name}}}; {_offered(fields)}")
    value = fields[name]
    if attribute is not None:
        if not isinstance(value, Kwargs):
            raise InputError(f"{file}: `system` template field {{{name}.{attribute}}}: attribute access is allowed only as {{kwargs.NAME}}")
        value = getattr(value, attribute)
    elif key is not None:
        if not isinstance(value, Mapping):
            raise InputError(f"{file}: `system` template field {{{name}[{key}]}}: {{{name}}} is not a mapping; use {{{name}}}")
        try:
            value = value[key]  # a field's own mapping may explain a missing key itself
        except KeyError:
            have = ", ".join(sorted(map(str, value))[:20]) or "none"
            raise InputError(f"{file}: `system` template field {{{name}[{key}]}}: {name} has no key {shown(key)} (keys: {have})") from None
    return "" if value is None else value


def system_name(template: str | None, fields: Mapping[str, Any], default: str, file: str) -> str:
    """The system name: ``default`` unless a name or a ``{field}`` template was given.

    A template uses plain fields only (:func:`_template_fields`); the rendered name must be at most
    :data:`MAX_SYSTEM_CHARS` characters.
    """
    if template is None:
        return default
    pieces: list[str] = []
    length = 0
    for literal, field_ref in _template_fields(template, _offered(fields)):
        text = literal if field_ref is None else literal + format(_template_value(file, fields, *field_ref), "")
        length += len(text)
        if length > MAX_SYSTEM_CHARS:
            raise InputError(
                f"{file}: the `system` template {shown(template, 80)} renders a name longer than "
                f"{MAX_SYSTEM_CHARS:,} characters; use shorter fields"
            )
        pieces.append(text)
    return "".join(pieces).strip()


# ---------------------------------------------------------------- finishing


def finish(
    collectors: Sequence[Collector],
    *,
    formats: Mapping[str, str],
    ignored_files: Mapping[str, str] | None = None,
    want_trajectories: bool,
) -> IngestResult:
    """Check every collector's problems, number attempts, validate rows and build the result."""
    problems = [p for c in collectors for p in c.problems]
    if problems:
        raise ValidationError(problems)
    records = [r for c in collectors for r in c.records]
    skipped = [s for c in collectors for s in c.skipped]
    files = tuple(dict.fromkeys(f for c in collectors for f in c.files))
    if not records:
        what = f"{len(skipped)} runs were read but none became a row" if skipped else "no runs were found"
        notes = [n for c in collectors for n in c.notes]
        why = f" ({'; '.join(notes)})" if notes else ""
        raise ValidationError([Problem(", ".join(files) or "<input>", None, None, f"must hold at least one run; {what}{why}")])
    _number_attempts(records)
    _check_duplicates(records)
    records.sort(key=lambda r: (r.system, r.task, r.attempt or 0))
    sources: dict[tuple[str, str], str] = {}  # one text per file and list per set of flags, not one per row
    flag_lists: dict[tuple[str, ...], list[str]] = {}
    rows = outcome_columns(
        (
            {
                "system": r.system,
                "task": r.task,
                "outcome": r.outcome,
                "group": r.group,
                "attempt": r.attempt or 0,
                "cost_usd": r.cost_usd,
                "elapsed_s": r.elapsed_s,
                "status": r.status,
                "source": sources.get((r.fmt, r.file)) or sources.setdefault((r.fmt, r.file), r.source),
                "flags": flag_lists.get(r.flags) or flag_lists.setdefault(r.flags, list(r.flags)),
            }
            for r in records
        ),
        source="<ingested rows>",
    )
    trajectories: list[Trajectory] = []
    if want_trajectories:
        for r in records:
            if r.steps is None:
                continue
            meta = {"source": r.source, "flags": list(r.flags), **r.meta}
            trajectories.append(
                Trajectory(
                    agent=r.system,
                    task=r.task,
                    attempt=r.attempt or 0,
                    outcome=None if r.status == "predicted" else r.outcome,  # a halted run has no verified label
                    task_text=r.task_text,
                    steps=r.steps,
                    cost_usd=r.cost_usd,
                    meta=meta,
                )
            )
    return IngestResult(
        columns=rows,
        trajectories=trajectories,
        skipped=sorted(skipped, key=lambda s: (s.file, s.record)),
        files=files,
        formats=dict(formats),
        ignored_files=dict(sorted((ignored_files or {}).items())),
        notes=[n for c in collectors for n in c.notes],
    )


def _number_attempts(records: list[Record]) -> None:
    """Give records without a native attempt number their rank within (system, task) by ``order``."""
    by_cell: dict[tuple[str, str], list[Record]] = {}
    taken_by_cell: dict[tuple[str, str], set[int]] = {}
    for r in records:
        if r.attempt is None:
            by_cell.setdefault((r.system, r.task), []).append(r)
        else:
            taken_by_cell.setdefault((r.system, r.task), set()).add(r.attempt)
    for key, cell in by_cell.items():
        taken = taken_by_cell.get(key, set())
        cell.sort(key=lambda r: (r.order, r.file))
        number_ = 0
        for r in cell:
            while number_ in taken:
                number_ += 1
            r.attempt = number_
            number_ += 1


def _check_duplicates(records: list[Record]) -> None:
    seen: dict[tuple[str, str, int], Record] = {}
    problems: list[Problem] = []
    in_run: dict[tuple[str, str, str], Record] = {}
    for r in records:
        if r.run is not None:
            first_in_run = in_run.setdefault((r.system, r.task, r.run), r)
            if first_in_run is not r:
                where = r.file if first_in_run.file == r.file else f"{first_in_run.file} and {r.file}"
                problems.append(
                    Problem(
                        r.file,
                        None,
                        "system, task, run",
                        f"must be read once per run but is read twice in run {r.run} "
                        f"(from {where}); give the runs different system names (`system`) or ingest them separately",
                        Shown(f"({r.system}, {r.task})"),
                    )
                )
                continue
        key = (r.system, r.task, r.attempt or 0)
        first = seen.get(key)
        if first is None:
            seen[key] = r
            continue
        where = first.file if first.file == r.file else f"{first.file} and {r.file}"
        problems.append(
            Problem(
                r.file,
                None,
                "system, task, attempt",
                f"must be unique but is read twice "
                f"(from {where}); give the runs different system names (`system`) or ingest them separately",
                Shown(f"({key[0]}, {key[1]}, {key[2]})"),
            )
        )
    if problems:
        raise ValidationError(problems)


def walk(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Expand directories into their candidate files (``*.json``, ``*.eval``), sorted; keep files as given."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise FileFormatError(f"{path}: no such file or directory")
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in (".json", ".eval"))
            if not found:
                raise FileFormatError(f"{path}: the directory holds no .json or .eval files")
            out.extend(found)
        else:
            out.append(path)
    return list(dict.fromkeys(out))
