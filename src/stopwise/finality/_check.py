"""The completion checker: per run, is the label final, and is the run a separate trial?

Two questions, kept apart as the paper keeps them (outcome finality and cross-unit separation):

**Label status** (``final`` / ``unresolved`` / ``bounded``). With ``outcome.period = "endpoint"``
the claim is the state visible at the endpoint, so the label is final (and narrower than task
completion). Otherwise every outcome route must be settled: ``reconcile`` and ``cancel`` settle it;
``bound`` settles it only when every value in the bound gives the same label, else the run is
``bounded``; ``none`` leaves it ``unresolved``. With no outcome route listed, synchronous tools in a
closed simulator are final by construction; asynchronous tools or an open environment are
unresolved. An open-effects record adds evidence, read as it stood when the score was read
(``scored_at``): an entry of the run, or of another run with an open route to it, that was pending
or unknown then leaves the label unresolved; a system sweep of the run that found nothing open
settles routes the argument left unhandled. A record without system probes cannot support a final
label.

**Analysis unit** (``separate`` / ``grouped``). A carryover route is blocked by ``isolate`` (when
runs share no credentials) or by ``reset`` (only when every outcome route is reconciled or
cancelled, so nothing can land after the reset); ``group`` and ``none`` connect runs that share an
``environment``. An open route in the record connects the two runs it names. Connected runs form
one unit (a cluster for pairing and resampling).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

import pydantic
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from stopwise._pydantic import problems_from_pydantic
from stopwise.errors import Problem, ValidationError
from stopwise.finality._argument import CompletionArgument
from stopwise.finality._bound import bound_label
from stopwise.finality._effects import EffectEntry, OpenEffectsRecord

__all__ = [
    "LABEL_STATUSES",
    "UNIT_STATUSES",
    "ArgumentCheck",
    "LabelStatus",
    "RunCheck",
    "ScoredRun",
    "UnitStatus",
    "check_argument",
    "check_runs",
]

LabelStatus = Literal["final", "unresolved", "bounded"]
LABEL_STATUSES: tuple[LabelStatus, ...] = ("final", "unresolved", "bounded")
"""A label is final, unresolved (something open could still change it) or bounded (reported as a range)."""
UnitStatus = Literal["separate", "grouped"]
UNIT_STATUSES: tuple[UnitStatus, ...] = ("separate", "grouped")
"""A run is a separate trial, or grouped with the runs it is connected to."""

_Kind = Literal["ok", "open", "bounded"]
_ORDER: dict[str, int] = {"open": 0, "bounded": 1, "ok": 2}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ArgumentCheck(_Model):
    """What a completion argument establishes by itself, for any run it covers.

    Examples
    --------
    >>> from stopwise.finality import check_argument, example_argument
    >>> check = check_argument(example_argument("closed-simulator"))
    >>> check.label, check.unit
    ('final', 'separate')
    """

    argument: str
    """The argument's name."""
    label: LabelStatus
    """final, unresolved or bounded."""
    label_reasons: list[str]
    """Why, one reason per outcome route (or construction rule)."""
    unit: UnitStatus
    """separate, or grouped (runs sharing an environment are connected)."""
    unit_reasons: list[str]
    """Why, one reason per carryover route."""


class ScoredRun(_Model):
    """One run as the checker sees it: who, what, the recorded score, when and where."""

    run: str = Field(min_length=1)
    """Unique run id (the ``run`` of its open-effects entries)."""
    system: str = Field(min_length=1)
    """The system (agent) that ran."""
    task: str = Field(min_length=1)
    """The task it ran."""
    attempt: int = Field(default=0, ge=0)
    """Attempt number of this (system, task)."""
    outcome: float = Field(ge=0, le=1)
    """The score the protocol recorded, in [0, 1]."""
    scored_at: AwareDatetime | None = None
    """When the score was read; the record's evidence is read as it stood then (``None``: all of it)."""
    environment: str = ""
    """The environment instance whose state the run used (a service, a database, a machine); runs
    sharing one may be connected by carryover routes. ``""``: an environment of its own."""
    group: str = ""
    """Coverage stratum of the task (copied to the outcome row)."""


class RunCheck(_Model):
    """The checker's verdict on one run."""

    run: str
    """The run id."""
    system: str
    """The system."""
    task: str
    """The task."""
    attempt: int
    """The attempt number."""
    outcome: float
    """The recorded score (meaningful as a label only when ``label`` is final)."""
    group: str
    """Coverage stratum."""
    argument: str
    """Name of the completion argument checked against."""
    label: LabelStatus
    """final, unresolved or bounded."""
    label_reasons: list[str]
    """Why the label has this status."""
    unit: UnitStatus
    """separate, or grouped with connected runs."""
    unit_id: str
    """The analysis unit shared by every run of the group (``""`` for a separate run)."""
    unit_size: int
    """Runs in the unit (1 for a separate run)."""
    unit_reasons: list[str]
    """Why the run is separate or grouped."""


class _Finding:
    __slots__ = ("kind", "observable", "reason")

    def __init__(self, kind: _Kind, reason: str, *, observable: bool = False) -> None:
        self.kind = kind
        self.reason = reason
        self.observable = observable  # an unhandled route a clean system sweep can settle


def _fmt(x: float) -> str:
    return f"{x:g}"


def _label_findings(arg: CompletionArgument) -> list[_Finding]:
    out = arg.outcome
    if out.period == "endpoint":
        return [
            _Finding(
                "ok",
                f"the claim is the state visible at the endpoint ({out.scored}); later effects cannot change "
                "that claim, which is narrower than task completion",
            )
        ]
    findings: list[_Finding] = []
    by_construction = arg.protocol.tools == "synchronous" and arg.protocol.environment == "closed"
    routes = arg.routes_of("outcome")
    if not routes:
        if by_construction:
            findings.append(
                _Finding(
                    "ok",
                    "final by construction: synchronous tools in a closed simulator finish every call before it "
                    "returns, so nothing stays open at the endpoint",
                )
            )
        else:
            why = "asynchronous tools" if arg.protocol.tools == "asynchronous" else "an open environment"
            findings.append(
                _Finding(
                    "open",
                    f"{why} can leave operations running at the endpoint, and the argument lists no outcome "
                    "route saying how they are settled",
                    observable=True,
                )
            )
    period = f" (within {_fmt(out.window_s)} s)" if out.period == "window" and out.window_s else ""
    for route in routes:
        name = f"route '{route.name}'"
        if route.handling == "reconcile":
            findings.append(
                _Finding("ok", f"{name} is reconciled: the score is read after it settles{period} ({route.evidence})")
            )
        elif route.handling == "cancel":
            findings.append(
                _Finding(
                    "ok",
                    f"{name} is cancelled and the cancellation verified before scoring ({route.evidence}); a "
                    "cancelled operation counts as not done",
                )
            )
        elif route.handling == "bound" and route.bound is not None:
            low, high = route.bound
            label = bound_label(route.bound, out.pass_at)
            if label is not None:
                findings.append(
                    _Finding(
                        "ok",
                        f"{name} is bounded to [{_fmt(low)}, {_fmt(high)}], and every value in it gives a {label} "
                        f"(pass at >= {_fmt(out.pass_at)}) ({route.evidence})",
                    )
                )
            else:
                findings.append(
                    _Finding(
                        "bounded",
                        f"{name} is bounded to [{_fmt(low)}, {_fmt(high)}], which holds both passing and failing "
                        f"values (pass at >= {_fmt(out.pass_at)}); report the bound, not a label",
                    )
                )
        else:
            findings.append(
                _Finding(
                    "open",
                    f"{name} is not handled: the effect can still change the score after the endpoint",
                    observable=True,
                )
            )
    return findings


def _status_of(findings: Iterable[_Finding]) -> LabelStatus:
    kinds = {f.kind for f in findings}
    if "open" in kinds:
        return "unresolved"
    if "bounded" in kinds:
        return "bounded"
    return "final"


def _carryover(arg: CompletionArgument) -> tuple[bool, list[str]]:
    """Whether the argument leaves a route between runs open, and the reason for every route."""
    routes = arg.routes_of("carryover")
    if not routes:
        return False, ["each run gets a freshly provisioned environment, and the argument lists no route between runs"]
    outcome_routes = arg.routes_of("outcome")
    by_construction = arg.protocol.tools == "synchronous" and arg.protocol.environment == "closed"
    unsettled = [r.name for r in outcome_routes if r.handling not in ("reconcile", "cancel")]
    settled = not unsettled and (bool(outcome_routes) or by_construction)
    connects = False
    reasons: list[str] = []
    for route in routes:
        name = f"route '{route.name}'"
        if route.handling == "isolate":
            if arg.protocol.shared_credentials:
                connects = True
                reasons.append(
                    f"{name} is isolated, but runs share credentials, which reach across namespaces; the runs "
                    "stay connected"
                )
            else:
                reasons.append(f"{name} is blocked: runs are isolated ({route.evidence}) and share no credentials")
        elif route.handling == "reset":
            if settled:
                reasons.append(
                    f"{name} is blocked by a verified reset ({route.evidence}), made after every operation that "
                    "could land in the state has settled"
                )
            else:
                connects = True
                pending = (
                    ", ".join(f"'{n}'" for n in unsettled) if unsettled else "unlisted operations of asynchronous tools"
                )
                reasons.append(
                    f"{name} relies on a reset, but {pending} may still land after it, so the reset cannot "
                    "protect later runs"
                )
        elif route.handling == "group":
            connects = True
            reasons.append(f"{name} is handled by grouping: the runs it connects form one analysis unit")
        else:
            connects = True
            reasons.append(f"{name} is not handled: the runs it connects cannot count as separate trials")
    return connects, reasons


def check_argument(argument: CompletionArgument) -> ArgumentCheck:
    """What a completion argument establishes by itself: label status and analysis unit, with reasons.

    Parameters
    ----------
    argument : CompletionArgument
        A checked argument (:func:`parse_argument`, :func:`load_argument`).

    Returns
    -------
    ArgumentCheck

    Examples
    --------
    >>> from stopwise.finality import check_argument, example_argument
    >>> check = check_argument(example_argument("async-no-reconciliation"))
    >>> check.label
    'unresolved'
    >>> print(check.label_reasons[0])
    route 'delayed write' is not handled: the effect can still change the score after the endpoint
    """
    if not isinstance(argument, CompletionArgument):
        raise TypeError(f"argument must be a CompletionArgument; got {type(argument).__name__}")
    findings = sorted(_label_findings(argument), key=lambda f: _ORDER[f.kind])
    connects, reasons = _carryover(argument)
    if connects:
        reasons = [*reasons, "runs that share an environment are connected and form one analysis unit"]
    return ArgumentCheck(
        argument=argument.name,
        label=_status_of(findings),
        label_reasons=[f.reason for f in findings],
        unit="grouped" if connects else "separate",
        unit_reasons=reasons,
    )


def _check_runs_iv(runs: Iterable[ScoredRun | Mapping[str, Any]]) -> list[ScoredRun]:
    checked: list[ScoredRun] = []
    problems: list[Problem] = []
    for i, run in enumerate(runs, start=1):
        if isinstance(run, ScoredRun):
            checked.append(run)
            continue
        try:
            checked.append(ScoredRun.model_validate(run))
        except pydantic.ValidationError as exc:
            for p in problems_from_pydantic(exc, "<runs>"):
                problems.append(Problem(p.file, i, p.field, p.rule, p.value))
    if not checked and not problems:
        problems.append(Problem("<runs>", None, None, "must hold at least one run"))
    seen: dict[str, int] = {}
    for i, run in enumerate(checked, start=1):
        if run.run in seen:
            problems.append(Problem("<runs>", i, "run", f"must be unique (also row {seen[run.run]})", run.run))
        seen.setdefault(run.run, i)
    if problems:
        raise ValidationError(problems)
    return checked


def _when(at: datetime | None) -> str:
    return at.isoformat(timespec="milliseconds") if at is not None else "now"


def _record_findings(
    run: ScoredRun,
    record: OpenEffectsRecord,
    own: list[EffectEntry],
    incoming: list[tuple[EffectEntry, str]],
    pass_at: float,
) -> tuple[list[_Finding], bool, list[str]]:
    """Findings from the record, whether a clean system sweep exists, and notes."""
    t = run.scored_at
    findings: list[_Finding] = []
    notes: list[str] = []
    for entry in own:
        if not entry.affects_outcome or (t is not None and entry.opened_at > t):
            continue
        status = entry.status_at(t)
        if status not in ("pending", "unknown"):
            continue
        seen = "was never answered by a system probe" if not entry.has_system_probe(t) else f"was {status}"
        where = f"entry '{entry.handle}' ({entry.kind}) {seen} before the score was read ({_when(t)})"
        if entry.treatment == "bounded" and entry.bound is not None:
            low, high = entry.bound
            label = bound_label(entry.bound, pass_at)
            if not low <= run.outcome <= high:
                findings.append(
                    _Finding(
                        "open",
                        f"{where}; its bound [{_fmt(low)}, {_fmt(high)}] does not contain the recorded score "
                        f"{_fmt(run.outcome)}, so the score was not taken under the bounded outcome",
                    )
                )
            elif label is not None:
                findings.append(
                    _Finding(
                        "ok", f"{where}, but its bound [{_fmt(low)}, {_fmt(high)}] gives a {label} for every value"
                    )
                )
            else:
                findings.append(
                    _Finding(
                        "bounded",
                        f"{where}; its bound [{_fmt(low)}, {_fmt(high)}] holds both passing and failing values",
                    )
                )
        else:
            treated = f" (treated as {entry.treatment})" if entry.treatment else ""
            findings.append(_Finding("open", f"{where}{treated}"))
    for entry, via in incoming:
        if t is not None and entry.opened_at > t:
            continue  # created after the score was read: a route between runs, not an open effect of this label
        status = entry.status_at(t)
        if status in ("pending", "unknown"):
            findings.append(
                _Finding(
                    "open",
                    f"entry '{entry.handle}' of run {entry.run} was {status} before the score was read "
                    f"({_when(t)}) and has an open route to this run via {via}",
                )
            )
    sweeps = record.sweeps_of(run.run, at=t)
    clean = False
    if sweeps:
        last = sweeps[-1]
        still = []
        for handle in last.open_handles:
            entry = record.entry(handle)
            if entry.is_open(t) and entry.run != run.run and all(e.handle != handle for e, _ in incoming):
                still.append(handle)
        for handle in still:
            findings.append(
                _Finding(
                    "open",
                    f"the system sweep at {_when(last.at)} found '{handle}' open in this run's scope, and no later "
                    "probe before scoring showed it settled",
                )
            )
        clean = not any(f.kind == "open" for f in findings)
        if clean:
            notes.append(
                f"the system sweep at {_when(last.at)} ({last.query}) and the probes before scoring found nothing "
                "open that could change the score"
            )
    elif not record.has_system_evidence(run.run, at=t):
        notes.append(
            "the open-effects record holds no system probe or sweep of this run before scoring, so it cannot "
            "support a final label (an empty record proves nothing)"
        )
    else:
        notes.append("no system sweep of this run before scoring: effects the record does not list cannot be ruled out")
    return findings, clean, notes


class _Components:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def _some(names: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_runs(
    argument: CompletionArgument,
    runs: Iterable[ScoredRun | Mapping[str, Any]],
    *,
    record: OpenEffectsRecord | None = None,
) -> list[RunCheck]:
    """Check every run against a completion argument and, optionally, an open-effects record.

    Parameters
    ----------
    argument : CompletionArgument
        The protocol's completion argument.
    runs : iterable of ScoredRun or mappings
        The runs, in execution order, with their recorded scores (see :class:`ScoredRun`).
    record : OpenEffectsRecord, optional
        Evidence: entries and sweeps for these runs. Without it the verdicts rest on the
        argument alone.

    Returns
    -------
    list of RunCheck
        One verdict per run, in input order: label status and analysis unit, each with reasons.

    Raises
    ------
    ValidationError
        A run breaks its schema or run ids repeat (row, field, rule and value named).

    Examples
    --------
    Two runs on one shared, unhandled service: the argument leaves the delayed write unhandled,
    but the record shows run B's write settled before its score was read.

    >>> from datetime import datetime, timedelta, UTC
    >>> from stopwise.finality import OpenEffectsRecord, Probe, Sweep, check_runs, example_argument
    >>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
    >>> rec = (OpenEffectsRecord()
    ...     .open("op-a", kind="operation", run="A", at=t0)
    ...     .update("op-a", Probe(at=t0, attempt="assess", query="GET /ops/op-a", status="pending"))
    ...     .open("op-b", kind="operation", run="B", at=t0)
    ...     .update("op-b", Probe(at=t0, attempt="assess", query="GET /ops/op-b", status="terminal"))
    ...     .add_sweep(Sweep(run="B", at=t0, query="GET /ns/b?pending=1", answer="none")))
    >>> runs = [dict(run="A", system="A", task="t", outcome=0, scored_at=t0),
    ...         dict(run="B", system="B", task="t", outcome=1, scored_at=t0)]
    >>> [(c.run, c.label) for c in check_runs(example_argument("async-no-reconciliation"), runs, record=rec)]
    [('A', 'unresolved'), ('B', 'final')]
    """
    if not isinstance(argument, CompletionArgument):
        raise TypeError(f"argument must be a CompletionArgument; got {type(argument).__name__}")
    if record is not None and not isinstance(record, OpenEffectsRecord):
        raise TypeError(f"record must be an OpenEffectsRecord or None; got {type(record).__name__}")
    checked = _check_runs_iv(runs)
    labels = _run_labels(argument, checked, record)
    roots, unit_sizes, unit_reasons = _analysis_units(argument, checked, record)
    results: list[RunCheck] = []
    for i, run in enumerate(checked):
        size = unit_sizes[i]
        grouped = size > 1
        label, label_reasons = labels[i]
        results.append(
            RunCheck(
                run=run.run,
                system=run.system,
                task=run.task,
                attempt=run.attempt,
                outcome=run.outcome,
                group=run.group,
                argument=argument.name,
                label=label,
                label_reasons=label_reasons,
                unit="grouped" if grouped else "separate",
                unit_id=f"unit:{checked[roots[i]].run}" if grouped else "",
                unit_size=size,
                unit_reasons=unit_reasons[i],
            )
        )
    return results


def _run_labels(
    argument: CompletionArgument, checked: list[ScoredRun], record: OpenEffectsRecord | None
) -> list[tuple[LabelStatus, list[str]]]:
    """Each run's label status and its reasons (decisive first): the argument's findings, then the record's."""
    own: dict[str, list[EffectEntry]] = {}
    incoming: dict[str, list[tuple[EffectEntry, str]]] = {}
    if record is not None:
        for entry in record.entries:
            own.setdefault(entry.run, []).append(entry)
            for route in entry.open_routes():
                if route.to != entry.run:
                    incoming.setdefault(route.to, []).append((entry, route.via))

    doc_findings = _label_findings(argument)
    endpoint_claim = argument.outcome.period == "endpoint"
    labels: list[tuple[LabelStatus, list[str]]] = []
    for run in checked:
        findings = list(doc_findings)
        notes: list[str] = []
        if record is not None and not endpoint_claim:
            rec_findings, clean, notes = _record_findings(
                run, record, own.get(run.run, []), incoming.get(run.run, []), argument.outcome.pass_at
            )
            if clean:
                findings = [f for f in findings if not f.observable]
            findings += rec_findings
        findings.sort(key=lambda f: _ORDER[f.kind])  # the decisive reasons first
        labels.append((_status_of(findings), [f.reason for f in findings] + notes))
    return labels


def _analysis_units(
    argument: CompletionArgument, checked: list[ScoredRun], record: OpenEffectsRecord | None
) -> tuple[list[int], list[int], list[list[str]]]:
    """Each run's analysis unit (the index of the unit's first run), the unit's size, and the unit's reasons."""
    index = {r.run: i for i, r in enumerate(checked)}
    connects, doc_unit_reasons = _carryover(argument)
    components = _Components(len(checked))
    extra: dict[int, list[str]] = {}
    if connects:
        by_env: dict[str, list[int]] = {}
        for i, run in enumerate(checked):
            if run.environment:
                by_env.setdefault(run.environment, []).append(i)
        for env, members in by_env.items():
            for j in members[1:]:
                components.union(members[0], j)
            if len(members) > 1:
                for i in members:
                    others = [checked[j].run for j in members if j != i]
                    extra.setdefault(i, []).append(f"shares environment '{env}' with {_some(others)}")
    if record is not None:
        for entry in record.entries:
            if entry.run not in index:
                continue
            for route in entry.open_routes():
                if route.to not in index or route.to == entry.run:
                    continue
                a, b = index[entry.run], index[route.to]
                components.union(a, b)
                reason = (
                    f"entry '{entry.handle}' of run {entry.run} has an open route to run {route.to} via {route.via}"
                )
                extra.setdefault(a, []).append(reason)
                extra.setdefault(b, []).append(reason)

    roots = [components.find(i) for i in range(len(checked))]
    sizes: dict[int, int] = {}
    for root in roots:
        sizes[root] = sizes.get(root, 0) + 1
    reasons: list[list[str]] = []
    for i, run in enumerate(checked):
        grouped = sizes[roots[i]] > 1
        unit_reasons = list(doc_unit_reasons) + extra.get(i, [])
        if not grouped and connects and not run.environment:
            unit_reasons.append("no other run is known to share its environment")
        unit_reasons.append(
            f"grouped: one analysis unit of {sizes[roots[i]]} connected runs"
            if grouped
            else "separate: no open route reaches another run"
        )
        reasons.append(unit_reasons)
    return roots, [sizes[root] for root in roots], reasons
