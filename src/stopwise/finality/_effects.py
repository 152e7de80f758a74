"""The open-effects record (Casheekar, "When Is an Agent Evaluation Over?", section 6 and appendix C).

An entry is opened for every operation or resource that may remain active, change later, or be
visible to another run. At the endpoint the evaluator *queries the system* about each handle
(:meth:`OpenEffectsRecord.assess`) and, ideally, sweeps the run's scope for open work it did not
list (:class:`Sweep`); after every attempt to observe, cancel, remove or isolate an effect it
records the system's answer (:meth:`OpenEffectsRecord.update`). Only answers from the system move
an entry's status; wrapper and agent reports are kept as evidence but prove nothing on their own.

Pending or unknown entries stay open. An entry's ``treatment`` says how the analysis handles
whatever remains open (unresolved, bounded, modeled, grouped) without changing its system status.
The record makes evidence inspectable; it does not by itself establish finality or separation, and
an empty record proves nothing (:func:`stopwise.finality.check_runs` draws the conclusions).

Records are immutable: every lifecycle call returns a new record, so the version that stood when
a score was read can be kept beside the later one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import pydantic
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from stopwise._files import read_text
from stopwise._limits import json_loads
from stopwise._pydantic import problems_from_pydantic
from stopwise.errors import Problem
from stopwise.finality._bound import Bound, bound_problem
from stopwise.finality._errors import EffectsRecordError

__all__ = [
    "CLOSED_STATUSES",
    "ENDPOINT_STATUSES",
    "OPEN_STATUSES",
    "Attempt",
    "EffectEntry",
    "EffectKind",
    "EffectRoute",
    "EndpointStatus",
    "EvidenceSource",
    "OpenEffectsRecord",
    "Probe",
    "Sweep",
    "Treatment",
    "load_effects_record",
    "parse_effects_record",
]

EndpointStatus = Literal["pending", "terminal", "cancelled", "removed", "unknown"]
ENDPOINT_STATUSES: tuple[EndpointStatus, ...] = ("pending", "terminal", "cancelled", "removed", "unknown")
"""Every system status of an effect: still running, settled, cancelled, removed, or not known."""
OPEN_STATUSES: tuple[EndpointStatus, ...] = ("pending", "unknown")
"""Statuses that keep an entry open: its effect may still change."""
CLOSED_STATUSES: tuple[EndpointStatus, ...] = ("terminal", "cancelled", "removed")
"""Statuses of an effect that can no longer change."""

EffectKind = Literal["operation", "process", "file", "credential", "account", "service_state", "message", "other"]
Treatment = Literal["unresolved", "bounded", "modeled", "grouped"]
Attempt = Literal["assess", "observe", "cancel", "remove", "isolate"]
EvidenceSource = Literal["system", "wrapper", "agent"]

_NEXT: dict[str, frozenset[str]] = {
    "unknown": frozenset(ENDPOINT_STATUSES),
    "pending": frozenset(ENDPOINT_STATUSES),
    "terminal": frozenset({"terminal", "removed"}),
    "cancelled": frozenset({"cancelled", "removed"}),
    "removed": frozenset({"removed"}),
}
_RECORD = "<record>"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class Probe(_Model):
    """One answer to one query about one effect: the evidence an entry's status rests on.

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> from stopwise.finality import Probe
    >>> p = Probe(at=datetime(2026, 1, 1, tzinfo=UTC), attempt="assess", query="GET /ops/7",
    ...           answer="pending, due in 100 ms", status="pending")
    >>> p.source, p.blocks_routes
    ('system', False)
    """

    at: AwareDatetime
    """When the answer was received (time-zone aware)."""
    attempt: Attempt
    """What the evaluator tried: ``assess`` at the endpoint, ``observe`` later, or an attempt to
    ``cancel``, ``remove`` or ``isolate`` the effect."""
    query: str = Field(min_length=1)
    """How the system was asked, e.g. ``GET /ops/7`` or ``ps --ppid 4242``."""
    answer: str = ""
    """What the system answered, briefly."""
    status: EndpointStatus | None = None
    """The effect's status the answer establishes; ``None`` when the query does not tell it
    (e.g. a check that another run's namespace is fresh)."""
    source: EvidenceSource = "system"
    """Who answered: the ``system`` itself, a function ``wrapper``, or the ``agent``'s own report.
    Only system answers move an entry's status or block its routes."""
    blocks_routes: bool = False
    """The answer shows that no route from this effect reaches another run (a verified fresh
    namespace, a verified reset); a system answer with this flag blocks every route of the entry."""


class Sweep(_Model):
    """A system query for the open work of one run: what could still change its outcome.

    A sweep is what lets a record speak for effects nobody listed; a record whose runs were never
    swept cannot show that nothing else is open.
    """

    run: str = Field(min_length=1)
    """The run whose scope was swept."""
    at: AwareDatetime
    """When the answer was received."""
    query: str = Field(min_length=1)
    """How the system was asked, e.g. ``GET /ns/run-7?pending=1``."""
    answer: str = ""
    """What the system answered, briefly."""
    open_handles: list[str] = Field(default_factory=list)
    """Handles the system reported still open in the run's scope; each must be an entry of the record."""
    source: EvidenceSource = "system"
    """Who answered (only ``system`` sweeps count as evidence)."""


class EffectRoute(_Model):
    """A way an effect could reach another run."""

    to: str = Field(min_length=1)
    """The run the effect could reach."""
    via: str = Field(min_length=1)
    """The channel: shared service state, a file, a credential, a message queue, ..."""
    blocked: bool = False
    """``True`` once a system probe with ``blocks_routes`` has shown the route cannot carry the effect."""


class EffectEntry(_Model):
    """One operation or resource that may remain active, change later or be visible to another run."""

    handle: str = Field(min_length=1)
    """The identifier the system can be queried with (operation id, process id, path, account)."""
    kind: EffectKind
    """What the effect is: an ``operation``, a ``process``, a ``file``, a ``credential``, an
    ``account``, ``service_state``, a ``message`` or ``other``."""
    run: str = Field(min_length=1)
    """The run that created it."""
    opened_at: AwareDatetime
    """When the entry was opened."""
    description: str = ""
    """What the effect does, in words."""
    status: EndpointStatus = "unknown"
    """The latest status a system probe established; ``unknown`` until one has."""
    later_states: list[str] = Field(default_factory=list)
    """States the effect could still reach, e.g. ``["applied", "failed"]``."""
    affects_outcome: bool = True
    """Whether a later state could change the creating run's scored outcome."""
    routes: list[EffectRoute] = Field(default_factory=list)
    """Routes by which the effect could reach other runs."""
    treatment: Treatment | None = None
    """How the analysis treats what remains open: ``unresolved``, ``bounded`` (with ``bound``),
    ``modeled`` or ``grouped`` (the runs its routes reach form one unit); ``None`` when nothing is decided."""
    bound: Bound | None = None
    """With ``treatment = "bounded"``: every value the creating run's score can still take, ``[low, high]``."""
    evidence: list[Probe] = Field(default_factory=list)
    """Every probe about this effect, oldest first."""

    def status_at(self, at: datetime | None = None) -> EndpointStatus:
        """The status the latest system probe at or before ``at`` established (``unknown`` if none).

        With ``at=None`` this is the current :attr:`status`.

        Examples
        --------
        >>> from datetime import datetime, timedelta, UTC
        >>> from stopwise.finality import EffectEntry, Probe
        >>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
        >>> e = EffectEntry(handle="op-1", kind="operation", run="A", opened_at=t0, status="terminal",
        ...     evidence=[Probe(at=t0, attempt="assess", query="GET /ops/op-1", status="pending"),
        ...               Probe(at=t0 + timedelta(seconds=1), attempt="observe", query="GET /ops/op-1",
        ...                     status="terminal")])
        >>> e.status_at(t0), e.status_at(t0 + timedelta(seconds=2))
        ('pending', 'terminal')
        """
        if at is None:
            return self.status
        status: EndpointStatus = "unknown"
        for probe in self.evidence:
            if probe.at > at:
                break
            if probe.source == "system" and probe.status is not None:
                status = probe.status
        return status

    def is_open(self, at: datetime | None = None) -> bool:
        """Whether the effect may still change: pending or unknown at ``at`` (default: now)."""
        return self.status_at(at) in OPEN_STATUSES

    def has_system_probe(self, at: datetime | None = None) -> bool:
        """Whether any system probe of this effect was answered at or before ``at``."""
        return any(p.source == "system" and (at is None or p.at <= at) for p in self.evidence)

    def open_routes(self) -> list[EffectRoute]:
        """Routes no system probe has blocked."""
        return [r for r in self.routes if not r.blocked]


def _now() -> datetime:
    return datetime.now(UTC)


def _entry_problems(entry: EffectEntry, where: str, source: str) -> list[Problem]:
    problems: list[Problem] = []

    def add(field: str, rule: str, value: object) -> None:
        problems.append(Problem(source, None, f"{where}.{field}", rule, value))

    times = [p.at for p in entry.evidence]
    if any(b < a for a, b in pairwise(times)):
        add("evidence", "must list probes oldest first", [t.isoformat() for t in times])
    if times and times[0] < entry.opened_at:
        add("evidence[0].at", "must not precede the entry's opened_at", times[0].isoformat())
    status: str = "unknown"
    for i, probe in enumerate(entry.evidence):
        if probe.source != "system" or probe.status is None:
            continue
        if probe.status not in _NEXT[status]:
            add(
                f"evidence[{i}].status",
                f"cannot follow status {status!r} (a settled effect does not reopen)",
                probe.status,
            )
        status = probe.status
    if entry.status != status:
        rule = (
            "must be 'unknown' until a system probe establishes a status"
            if status == "unknown"
            else f"must equal the status of the latest system probe ({status!r})"
        )
        add("status", rule, entry.status)
    if entry.treatment == "bounded" and entry.bound is None:
        add("bound", "is required when treatment is 'bounded'", None)
    if entry.bound is not None:
        if entry.treatment != "bounded":
            add("bound", "is allowed only when treatment is 'bounded'", list(entry.bound))
        broken = bound_problem(entry.bound)
        if broken is not None:
            add("bound", broken, list(entry.bound))
        if not entry.affects_outcome:
            add("bound", "bounds the creating run's score, so affects_outcome must be true", list(entry.bound))
    if entry.treatment == "grouped" and not entry.routes:
        add("treatment", "'grouped' needs at least one route to group runs by", entry.treatment)
    blocking = any(p.source == "system" and p.blocks_routes for p in entry.evidence)
    for j, route in enumerate(entry.routes):
        if route.to == entry.run:
            add(f"routes[{j}].to", "must name another run than the one that created the effect", route.to)
        if route.blocked and not blocking:
            add(f"routes[{j}].blocked", "can be true only after a system probe with blocks_routes", True)
    return problems


def _record_problems(record: OpenEffectsRecord, source: str) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(record.entries):
        if entry.handle in seen:
            problems.append(
                Problem(
                    source,
                    None,
                    f"entries[{i}].handle",
                    f"must be unique (also entries[{seen[entry.handle]}])",
                    entry.handle,
                )
            )
        seen.setdefault(entry.handle, i)
        problems.extend(_entry_problems(entry, f"entries[{i}]", source))
    for i, sweep in enumerate(record.sweeps):
        for j, handle in enumerate(sweep.open_handles):
            if handle not in seen:
                problems.append(
                    Problem(
                        source,
                        None,
                        f"sweeps[{i}].open_handles[{j}]",
                        "must be the handle of an entry (the system reports open work the record does not list; "
                        "open an entry for it)",
                        handle,
                    )
                )
    return problems


class OpenEffectsRecord(_Model):
    """What may still be active, change later, or reach another run, with the system's evidence.

    Examples
    --------
    The lifecycle: open an entry when the operation is requested, assess it at the endpoint by
    querying the system, update it after each later attempt.

    >>> from datetime import datetime, timedelta, UTC
    >>> from stopwise.finality import OpenEffectsRecord, Probe
    >>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
    >>> rec = OpenEffectsRecord(evaluation="demo").open("op-7", kind="operation", run="A", at=t0,
    ...                                                  later_states=["applied", "cancelled"])
    >>> rec = rec.update("op-7", Probe(at=t0, attempt="assess", query="GET /ops/op-7", status="pending"))
    >>> [e.handle for e in rec.open_entries()]
    ['op-7']
    >>> rec = rec.update("op-7", Probe(at=t0 + timedelta(milliseconds=30), attempt="cancel",
    ...                                query="POST /ops/op-7/cancel", status="cancelled"))
    >>> rec.entry("op-7").status, rec.open_entries()
    ('cancelled', [])
    """

    version: Literal[1] = 1
    """Version of this record's schema."""
    evaluation: str = ""
    """The evaluation (or replay condition) the record belongs to."""
    entries: list[EffectEntry] = Field(default_factory=list)
    """One entry per operation or resource that may outlive its run's endpoint."""
    sweeps: list[Sweep] = Field(default_factory=list)
    """System queries for each run's open work, oldest first."""

    @model_validator(mode="after")
    def _check_rules(self, info: pydantic.ValidationInfo) -> OpenEffectsRecord:
        source = (info.context or {}).get("source", _RECORD) if info is not None else _RECORD
        problems = _record_problems(self, source)
        if problems:
            raise EffectsRecordError(problems)
        return self

    # -- queries -----------------------------------------------------------------------------

    @property
    def runs(self) -> list[str]:
        """Runs named by the entries and sweeps, in order of first mention."""
        seen: dict[str, None] = {}
        for entry in self.entries:
            seen.setdefault(entry.run, None)
        for sweep in self.sweeps:
            seen.setdefault(sweep.run, None)
        return list(seen)

    def entry(self, handle: str) -> EffectEntry:
        """The entry with this handle.

        Raises
        ------
        EffectsRecordError
            No entry has this handle.
        """
        for entry in self.entries:
            if entry.handle == handle:
                return entry
        raise EffectsRecordError([Problem(_RECORD, None, "handle", "must name an entry of the record", handle)])

    def entries_of(self, run: str) -> list[EffectEntry]:
        """Entries created by ``run``."""
        return [e for e in self.entries if e.run == run]

    def open_entries(self, run: str | None = None, *, at: datetime | None = None) -> list[EffectEntry]:
        """Entries still pending or unknown at ``at`` (default: now), optionally of one run."""
        return [e for e in self.entries if (run is None or e.run == run) and e.is_open(at)]

    def sweeps_of(self, run: str, *, at: datetime | None = None) -> list[Sweep]:
        """System sweeps of ``run`` answered at or before ``at``."""
        return [s for s in self.sweeps if s.run == run and s.source == "system" and (at is None or s.at <= at)]

    def has_system_evidence(self, run: str, *, at: datetime | None = None) -> bool:
        """Whether any system probe or sweep speaks about ``run`` at or before ``at``.

        A record without such evidence cannot support a final label for the run.
        """
        return bool(self.sweeps_of(run, at=at)) or any(e.has_system_probe(at) for e in self.entries_of(run))

    # -- lifecycle ---------------------------------------------------------------------------

    def _replace(self, index: int, entry: EffectEntry) -> OpenEffectsRecord:
        entries = list(self.entries)
        entries[index] = entry
        return self.model_copy(update={"entries": entries})

    def _index(self, handle: str) -> int:
        for i, entry in enumerate(self.entries):
            if entry.handle == handle:
                return i
        raise EffectsRecordError(
            [Problem(_RECORD, None, "handle", "must name an entry of the record (open it first)", handle)]
        )

    def open(
        self,
        handle: str,
        *,
        kind: EffectKind,
        run: str,
        at: datetime | None = None,
        description: str = "",
        later_states: Sequence[str] = (),
        affects_outcome: bool = True,
        routes: Iterable[EffectRoute] = (),
    ) -> OpenEffectsRecord:
        """Open an entry for an operation or resource that may outlive the run's endpoint.

        The entry starts ``unknown``: only a system probe can say more.

        Parameters
        ----------
        handle : str
            The identifier the system can be queried with; unique in the record.
        kind : str
            One of the :data:`EffectKind` values.
        run : str
            The run that created the effect.
        at : datetime, optional
            When it was opened (default: now, UTC).
        description, later_states, affects_outcome, routes
            See :class:`EffectEntry`. Routes start unblocked.

        Raises
        ------
        EffectsRecordError
            The handle is already in the record, or a field breaks its rule.
        """
        if any(e.handle == handle for e in self.entries):
            raise EffectsRecordError([Problem(_RECORD, None, "handle", "must be unique in the record", handle)])
        route_list = list(routes)
        blocked = [r.to for r in route_list if r.blocked]
        if blocked:
            raise EffectsRecordError(
                [Problem(_RECORD, None, "routes", "must start unblocked (block a route with a system probe)", blocked)]
            )
        try:
            entry = EffectEntry(
                handle=handle,
                kind=kind,
                run=run,
                opened_at=at if at is not None else _now(),
                description=description,
                later_states=list(later_states),
                affects_outcome=affects_outcome,
                routes=route_list,
            )
        except pydantic.ValidationError as exc:
            raise EffectsRecordError(problems_from_pydantic(exc, _RECORD)) from None
        problems = _entry_problems(entry, "entry", _RECORD)
        if problems:
            raise EffectsRecordError(problems)
        return self.model_copy(update={"entries": [*self.entries, entry]})

    def update(self, handle: str, probe: Probe) -> OpenEffectsRecord:
        """Record the system's answer after an attempt to assess, observe, cancel, remove or isolate.

        A system answer with a status moves the entry's status; one with ``blocks_routes`` blocks
        its routes. Answers from wrappers or the agent are kept as evidence only.

        Raises
        ------
        EffectsRecordError
            The handle is unknown, the probe is older than the entry's last evidence, or the
            status would reopen a settled effect.
        """
        index = self._index(handle)
        entry = self.entries[index]
        last = entry.evidence[-1].at if entry.evidence else entry.opened_at
        if probe.at < last:
            raise EffectsRecordError(
                [
                    Problem(
                        _RECORD,
                        None,
                        "at",
                        f"must not precede the entry's last evidence ({last.isoformat()})",
                        probe.at.isoformat(),
                    )
                ]
            )
        update: dict[str, Any] = {"evidence": [*entry.evidence, probe]}
        if probe.source == "system":
            if probe.status is not None:
                if probe.status not in _NEXT[entry.status]:
                    raise EffectsRecordError(
                        [
                            Problem(
                                _RECORD,
                                None,
                                "status",
                                f"cannot move entry {handle!r} from {entry.status!r} (a settled effect does not reopen)",
                                probe.status,
                            )
                        ]
                    )
                update["status"] = probe.status
            if probe.blocks_routes:
                update["routes"] = [r.model_copy(update={"blocked": True}) for r in entry.routes]
        return self._replace(index, entry.model_copy(update=update))

    def assess(
        self,
        run: str,
        probe: Callable[[EffectEntry], Probe],
        *,
        sweep: Callable[[str], Sweep] | None = None,
    ) -> OpenEffectsRecord:
        """Endpoint assessment: query the system about every entry of ``run`` (and sweep its scope).

        Parameters
        ----------
        run : str
            The run whose endpoint was reached.
        probe : callable
            ``probe(entry) -> Probe``: asks the system about one entry (``attempt="assess"``).
        sweep : callable, optional
            ``sweep(run) -> Sweep``: asks the system for all open work in the run's scope, so
            that effects nobody listed are found.

        Examples
        --------
        >>> from datetime import datetime, UTC
        >>> from stopwise.finality import OpenEffectsRecord, Probe, Sweep
        >>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
        >>> rec = OpenEffectsRecord().open("op-1", kind="operation", run="A", at=t0)
        >>> ask = lambda e: Probe(at=t0, attempt="assess", query=f"GET /ops/{e.handle}", status="terminal")
        >>> look = lambda run: Sweep(run=run, at=t0, query="GET /ns/A?pending=1", answer="none")
        >>> rec = rec.assess("A", ask, sweep=look)
        >>> rec.entry("op-1").status, rec.has_system_evidence("A")
        ('terminal', True)
        """
        record = self
        for entry in self.entries_of(run):
            record = record.update(entry.handle, probe(entry))
        if sweep is not None:
            record = record.add_sweep(sweep(run))
        return record

    def add_sweep(self, sweep: Sweep) -> OpenEffectsRecord:
        """Record a system query for a run's open work.

        Raises
        ------
        EffectsRecordError
            The sweep reports an open handle the record does not list.
        """
        handles = {e.handle for e in self.entries}
        missing = [h for h in sweep.open_handles if h not in handles]
        if missing:
            raise EffectsRecordError(
                [
                    Problem(
                        _RECORD,
                        None,
                        "open_handles",
                        "must be handles of entries (the system reports open work the record does not list; "
                        "open an entry for it first)",
                        missing,
                    )
                ]
            )
        return self.model_copy(update={"sweeps": [*self.sweeps, sweep]})

    def treat(self, handle: str, treatment: Treatment, *, bound: Bound | None = None) -> OpenEffectsRecord:
        """Say how the analysis treats what remains open of an entry (its status is unchanged).

        Raises
        ------
        EffectsRecordError
            ``bound`` is missing for ``bounded`` or given for another treatment, or is not a
            sub-interval of [0, 1]; ``grouped`` on an entry without routes.
        """
        index = self._index(handle)
        try:
            entry = EffectEntry.model_validate(
                {**self.entries[index].model_dump(), "treatment": treatment, "bound": bound}
            )
        except pydantic.ValidationError as exc:
            raise EffectsRecordError(problems_from_pydantic(exc, _RECORD)) from None
        problems = _entry_problems(entry, f"entries[{index}]", _RECORD)
        if problems:
            raise EffectsRecordError(problems)
        return self._replace(index, entry)

    @classmethod
    def combine(cls, records: Iterable[OpenEffectsRecord], *, evaluation: str = "") -> OpenEffectsRecord:
        """One record holding the entries and sweeps of several (e.g. one per trial).

        Raises
        ------
        EffectsRecordError
            Two records use the same handle.
        """
        entries: list[EffectEntry] = []
        sweeps: list[Sweep] = []
        for record in records:
            entries.extend(record.entries)
            sweeps.extend(record.sweeps)
        return cls(evaluation=evaluation, entries=entries, sweeps=sweeps)

    def to_json(self, *, indent: int | None = 2) -> str:
        """The record as JSON (the format :func:`load_effects_record` reads)."""
        return self.model_dump_json(indent=indent)


def parse_effects_record(text: str, *, source: str = _RECORD) -> OpenEffectsRecord:
    """Parse and check an open-effects record from JSON text.

    Parameters
    ----------
    text : str
        The record as JSON.
    source : str, optional
        The name used in error messages (usually the file path).

    Returns
    -------
    OpenEffectsRecord

    Raises
    ------
    EffectsRecordError
        The text is not JSON, or the record breaks the schema or a rule; every problem names
        the source, the field (``entries[2].status``), the rule and the value.

    Examples
    --------
    >>> from stopwise.finality import parse_effects_record
    >>> text = '''{"version": 1, "entries": [{"handle": "op-1", "kind": "operation", "run": "A",
    ...   "opened_at": "2026-01-01T00:00:00Z", "status": "terminal"}]}'''
    >>> parse_effects_record(text, source="rec.json")
    Traceback (most recent call last):
    ...
    stopwise.errors.EffectsRecordError: 1 problem in the open-effects record:
      rec.json, field 'entries[0].status': must be 'unknown' until a system probe establishes a status; got 'terminal'
    """
    try:
        data = json_loads(text, source)
    except json.JSONDecodeError as exc:
        raise EffectsRecordError(
            [Problem(source, None, None, f"must be JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})")]
        ) from None
    if not isinstance(data, dict):
        raise EffectsRecordError([Problem(source, None, None, "must be a JSON object", type(data).__name__)])
    try:
        return OpenEffectsRecord.model_validate(data, context={"source": source})
    except pydantic.ValidationError as exc:
        raise EffectsRecordError(problems_from_pydantic(exc, source)) from None


def load_effects_record(path: str | os.PathLike[str]) -> OpenEffectsRecord:
    """Read an open-effects record (JSON); see :func:`parse_effects_record`.

    Parameters
    ----------
    path : path-like
        A JSON file as written by :meth:`OpenEffectsRecord.to_json`.

    Returns
    -------
    OpenEffectsRecord

    Raises
    ------
    FileFormatError
        The file is missing or unreadable.
    EffectsRecordError
        The record breaks the schema or a rule.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from datetime import datetime, UTC
    >>> from stopwise.finality import OpenEffectsRecord, load_effects_record
    >>> rec = OpenEffectsRecord().open("pid-4242", kind="process", run="A", at=datetime(2026, 1, 1, tzinfo=UTC))
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "record.json"
    >>> _ = path.write_text(rec.to_json())
    >>> load_effects_record(path) == rec
    True
    """
    file = Path(path)
    text = read_text(file, "open-effects record")
    return parse_effects_record(text, source=str(file))
