"""The controlled replay (Casheekar, section 4 and appendix B), against a real local service.

Fixed tool-call traces are replayed without a model. Each trial pairs run **A**, which sets item
``k`` with a write the service applies after ``d`` ms, and run **B**, which sets the same item at
once; a run scores 1 when the item holds the value it set. Trials cover identifiers ``k`` = 1-5,
delays ``d`` = 0, 25, 100, 250 ms and 10 repetitions (200 trials); runs go A then B (B then A in
one condition). Every count below is read from real HTTP answers of the service.

Conditions (each one completion argument from ``stopwise/finality/examples``):

==========  ===================================================================  ======================
condition   procedure                                                            paper
==========  ===================================================================  ======================
snapshot    A scored by reading the item at its endpoint (per-run namespaces)    50/200 successes
terminal    the same runs scored once the namespace has nothing pending          200/200; 150 differ
cancel      A's pending writes cancelled at the endpoint, cancellation verified  150 assigned failure
shared      A and B share a namespace; B starts at A's endpoint                  B exposed 150/200
namespaced  B in its own namespace, verified fresh                               B exposed 0/200
reset       wait for A to settle, reset the namespace, verify it empty, then B   B exposed 0/200
b-before-a  shared namespace, B runs (and is scored) before A                    B exposed 0/200
grouped     as shared; connected runs analysed as one unit                       150 exposed; 200 units
==========  ===================================================================  ======================

B is *exposed* when the item B is scored on holds A's write. Trials run concurrently on one event
loop (the service shares it, so one clock orders everything); the steps that must come before a
write's delay has elapsed (from A's write to the endpoint read, the cancellation, or B's write) run
one trial at a time with no other request in flight, and the service's clock checks that they did.
A trial whose steps still came late (the machine stalled) is rerun in fresh namespaces and counted
(``rerun_trials``; ``late_trials`` counts trials that stayed late).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, NamedTuple

import httpx
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from stopwise._version import __version__
from stopwise.errors import FileFormatError, InputError, ServiceError
from stopwise.finality._check import LABEL_STATUSES, RunCheck, ScoredRun, check_runs
from stopwise.finality._effects import EffectRoute, EndpointStatus, OpenEffectsRecord, Probe, Sweep
from stopwise.finality._examples import example_argument
from stopwise.finality._rows import finality_rows
from stopwise.finality._service import LocalService
from stopwise.records import write_outcomes

__all__ = [
    "REPLAY_CONDITIONS",
    "ConditionResult",
    "ConditionSummary",
    "ControlledReplay",
    "ReplayCount",
    "ReplaySchedule",
    "ToolCall",
    "TrialObservation",
    "arun_controlled_replay",
    "run_controlled_replay",
]

Condition = Literal["snapshot", "terminal", "cancel", "shared", "namespaced", "reset", "b-before-a", "grouped"]
REPLAY_CONDITIONS: tuple[Condition, ...] = (
    "snapshot",
    "terminal",
    "cancel",
    "shared",
    "namespaced",
    "reset",
    "b-before-a",
    "grouped",
)
"""The replay's conditions, in table order."""

_TITLES: dict[Condition, str] = {
    "snapshot": "snapshot scoring",
    "terminal": "terminal reconciliation",
    "cancel": "verified cancellation",
    "shared": "shared state",
    "namespaced": "per-run namespaces",
    "reset": "verified reset",
    "b-before-a": "B before A",
    "grouped": "grouped analysis",
}
_ARGUMENTS: dict[Condition, str] = {
    "snapshot": "async-no-reconciliation",
    "terminal": "terminal-reconciliation",
    "cancel": "verified-cancellation",
    "shared": "shared-state",
    "namespaced": "namespaced-runs",
    "reset": "verified-reset",
    "b-before-a": "b-before-a",
    "grouped": "grouped-analysis",
}
_STATUS: dict[str, EndpointStatus] = {"pending": "pending", "applied": "terminal", "cancelled": "cancelled"}
_SETTLE_WAIT_MS = 10_000


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


@dataclass(frozen=True)
class ToolCall:
    """One call of a fixed trace: set ``item`` to ``value``; the service applies it after ``delay_ms``."""

    tool: Literal["set_item"]
    item: str
    value: str
    delay_ms: int


class _Spec(NamedTuple):
    trial: str
    identifier: int
    delay_ms: int
    repetition: int


class ReplaySchedule(_Model):
    """The frozen schedule: identifiers x delays x repetitions, one trial each.

    Examples
    --------
    >>> from stopwise.finality import ReplaySchedule
    >>> s = ReplaySchedule()
    >>> s.n_trials, tuple(s.trials()[0])
    (200, ('k1-d0-r0', 1, 0, 0))
    """

    identifiers: tuple[int, ...] = (1, 2, 3, 4, 5)
    """Item identifiers k (the paper: 1-5)."""
    delays_ms: tuple[int, ...] = (0, 25, 100, 250)
    """Delays of run A's write in milliseconds (the paper: 0, 25, 100, 250)."""
    repetitions: int = Field(default=10, ge=1, le=100)
    """Repetitions of every (identifier, delay) (the paper: 10)."""

    @field_validator("identifiers")
    @classmethod
    def _identifiers(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or len(set(value)) != len(value) or min(value) < 1 or len(value) > 100:
            raise ValueError("must be 1 to 100 distinct integers >= 1")
        return value

    @field_validator("delays_ms")
    @classmethod
    def _delays(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or len(set(value)) != len(value) or min(value) < 0 or max(value) > 5000:
            raise ValueError("must be distinct integers from 0 to 5000 (milliseconds)")
        positive = [d for d in value if d > 0]
        if positive and min(positive) < 15:
            raise ValueError("nonzero delays must be at least 15 ms, so the endpoint can come before the write lands")
        return value

    @property
    def n_trials(self) -> int:
        """Trials per condition."""
        return len(self.identifiers) * len(self.delays_ms) * self.repetitions

    def trials(self) -> list[_Spec]:
        """Every trial as ``(trial id, identifier, delay_ms, repetition)``, in schedule order."""
        return [
            _Spec(f"k{k}-d{d}-r{r}", k, d, r)
            for r in range(self.repetitions)
            for d in self.delays_ms
            for k in self.identifiers
        ]


class ReplayCount(_Model):
    """One line of the replay table: a measured count beside the count the design implies."""

    condition: str
    """The condition, in words."""
    measure: str
    """What was counted."""
    count: int
    """The measured count (from the service's answers)."""
    of: int
    """Out of how many."""
    expected: int
    """The count the schedule's design implies (the paper's count for the default schedule)."""
    paper: str | None
    """The paper's figure ("50/200"), shown only for the default schedule."""

    @property
    def matches(self) -> bool:
        """Whether the measured count equals the expected one."""
        return self.count == self.expected


class TrialObservation(_Model):
    """What one trial of one condition observed."""

    trial: str
    """Trial id ``k<identifier>-d<delay>-r<repetition>``."""
    identifier: int
    """Item identifier k."""
    delay_ms: int
    """Delay of run A's write."""
    repetition: int
    """Repetition number."""
    a_endpoint: Literal["pending", "applied", "cancelled"]
    """A's write as the service reported it at A's endpoint assessment."""
    scores: dict[str, float]
    """Score of each run ("A", "B") under the condition's scoring basis."""
    exposed: bool | None
    """Whether the item B was scored on held A's write (None where B is isolated by design)."""
    cancelled: bool | None
    """Cancel condition: whether A's write was cancelled, verified by a later query."""
    lag_ms: float | None
    """Service-clock time from A's write being accepted to the last step that had to precede its delay."""
    late: bool
    """The lag reached a nonzero delay: the schedule was not honoured (a machine too slow or too busy)."""
    attempts: int
    """Attempts made: a trial whose timing broke the schedule is rerun in fresh namespaces (up to a limit)."""


class ConditionSummary(_Model):
    """Counts of one condition, and what the completion checker made of its runs."""

    condition: Condition
    """Condition key."""
    title: str
    """Condition in words."""
    argument: str
    """Name of the completion argument the runs were checked against."""
    trials: int
    """Trials run."""
    successes: dict[str, int]
    """Runs scoring 1, per run role ("A", "B")."""
    exposed: int | None
    """Trials whose run B was scored on A's write (None where not measured)."""
    labels: dict[str, int]
    """Checked runs per label status (final, unresolved, bounded)."""
    rows: int
    """Outcome rows (one per run)."""
    units: int
    """Analysis units the checker formed from those rows."""
    late_trials: int
    """Trials whose timing did not honour the schedule (after their reruns)."""
    rerun_trials: int
    """Trials rerun because an attempt's timing did not honour the schedule."""


class ConditionResult(_Model):
    """Everything one condition produced: observations, runs, record, checks."""

    summary: ConditionSummary
    """The counts."""
    trials: list[TrialObservation]
    """One observation per trial, in schedule order."""
    runs: list[ScoredRun]
    """The scored runs, A and B of every trial."""
    record: OpenEffectsRecord
    """The open-effects record of every trial, built through the lifecycle API from the service's answers."""
    checks: list[RunCheck]
    """The completion checker's verdict on every run."""

    def outcome_rows(self) -> pd.DataFrame:
        """Outcome rows of the checked runs (:func:`finality_rows`): systems "A" and "B", one task per trial."""
        return finality_rows(self.checks)


class ControlledReplay(_Model):
    """The replay record: the schedule, the table, and each condition's evidence."""

    version: Literal[1] = 1
    """Version of this record's schema."""
    schedule: ReplaySchedule
    """The schedule replayed."""
    counts: list[ReplayCount]
    """The replay table."""
    conditions: list[ConditionResult]
    """Per condition: summary, observations, runs, open-effects record, checks."""
    requests: int
    """HTTP requests made to the service."""
    late_trials: int
    """Trials (all conditions) whose timing did not honour the schedule even after reruns; 0 on a healthy machine."""
    rerun_trials: int
    """Trials (all conditions) rerun because a first attempt's timing did not honour the schedule."""
    elapsed_s: float
    """Wall-clock time of the whole replay, service start to stop."""
    stopwise_version: str
    """The library version that ran the replay."""

    @property
    def matches(self) -> bool:
        """Whether every measured count equals its expected count."""
        return all(c.matches for c in self.counts)

    def condition(self, name: str) -> ConditionResult:
        """The result of one condition.

        Raises
        ------
        InputError
            ``name`` was not replayed.
        """
        for result in self.conditions:
            if result.summary.condition == name:
                return result
        raise InputError(
            f"condition must be one of {', '.join(c.summary.condition for c in self.conditions)}; got {name!r}"
        )

    def summary(self) -> dict[str, Any]:
        """The record without per-trial evidence: schedule, table, condition summaries, timing."""
        return {
            "version": self.version,
            "schedule": self.schedule.model_dump(mode="json"),
            "counts": [c.model_dump(mode="json") | {"matches": c.matches} for c in self.counts],
            "conditions": [c.summary.model_dump(mode="json") for c in self.conditions],
            "matches": self.matches,
            "requests": self.requests,
            "late_trials": self.late_trials,
            "rerun_trials": self.rerun_trials,
            "elapsed_s": self.elapsed_s,
            "stopwise_version": self.stopwise_version,
        }

    def write(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write the record and its evidence to ``directory`` (created if needed).

        Files: ``replay.json`` (:meth:`summary`), and per condition ``<condition>.effects.json``
        (the open-effects record), ``<condition>.checks.jsonl`` (one completion check per run) and
        ``<condition>.outcomes.csv`` (outcome rows for :func:`stopwise.compare.decide`).

        Returns
        -------
        list of pathlib.Path
            The files written.
        """
        folder = Path(directory)
        if folder.exists() and not folder.is_dir():
            raise FileFormatError(f"{folder}: exists and is not a directory")
        folder.mkdir(parents=True, exist_ok=True)
        written = [folder / "replay.json"]
        written[0].write_text(json.dumps(self.summary(), indent=2) + "\n", encoding="utf-8")
        for result in self.conditions:
            name = result.summary.condition
            effects = folder / f"{name}.effects.json"
            effects.write_text(result.record.to_json() + "\n", encoding="utf-8")
            checks = folder / f"{name}.checks.jsonl"
            checks.write_text("".join(c.model_dump_json() + "\n" for c in result.checks), encoding="utf-8")
            rows = write_outcomes(result.outcome_rows(), folder / f"{name}.outcomes.csv")
            written += [effects, checks, rows]
        return written

    def to_text(self) -> str:
        """The replay table as plain text."""
        header = ("condition", "measure", "measured", "expected", "paper")
        lines = [
            (c.condition, c.measure, f"{c.count}/{c.of}", f"{c.expected}/{c.of}", c.paper or "-") for c in self.counts
        ]
        widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]
        out = [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [header, *lines]
        ]
        out.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(out)


# -- the runner ---------------------------------------------------------------------------------


@dataclass
class _Clock:
    """UTC timestamps that never run backwards (wall time at start + monotonic offset)."""

    wall: datetime = field(default_factory=lambda: datetime.now(UTC))
    mono: float = field(default_factory=time.monotonic)

    def now(self) -> datetime:
        return self.wall + timedelta(seconds=time.monotonic() - self.mono)


@dataclass
class _Trial:
    spec: _Spec
    condition: str
    record: OpenEffectsRecord
    runs: dict[str, ScoredRun] = field(default_factory=dict)
    a_endpoint: str = "pending"
    exposed: bool | None = None
    cancelled: bool | None = None
    lag_ms: float | None = None
    snapshot: ScoredRun | None = None
    attempt: int = 0
    exclusive: bool = False
    due_ms: dict[str, float] = field(default_factory=dict)  # namespace -> latest due time (service clock)
    served: tuple[float, float] = (0.0, 0.0)  # (service ms, local monotonic s) of the latest answer

    @property
    def tag(self) -> str:
        """Namespace prefix of this attempt of this trial."""
        return f"{self.condition}.{self.spec.trial}" + (f".retry{self.attempt}" if self.attempt else "")

    @property
    def late(self) -> bool:
        """The steps that had to precede A's write landing came after its delay had elapsed."""
        return self.lag_ms is not None and self.spec.delay_ms > 0 and self.lag_ms >= self.spec.delay_ms


class _Gate:
    """Steps that race a write's delay run alone: no other request is in flight meanwhile.

    ``exclusive()`` waits until in-flight requests finish and holds new ones back (writers first);
    ``shared()`` wraps every other request.
    """

    def __init__(self) -> None:
        self._cond = asyncio.Condition()
        self._readers = 0
        self._writer = False
        self._waiting = 0

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        async with self._cond:
            self._waiting += 1
            try:
                await self._cond.wait_for(lambda: not self._writer and self._readers == 0)
            finally:
                self._waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            async with self._cond:
                self._writer = False
                self._cond.notify_all()

    @asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        async with self._cond:
            await self._cond.wait_for(lambda: not self._writer and self._waiting == 0)
            self._readers += 1
        try:
            yield
        finally:
            async with self._cond:
                self._readers -= 1
                if self._readers == 0:
                    self._cond.notify_all()


class _Runner:
    def __init__(self, client: httpx.AsyncClient, clock: _Clock) -> None:
        self.client = client
        self.gate = _Gate()
        self.clock = clock
        self.requests = 0

    @asynccontextmanager
    async def critical(self, t: _Trial) -> AsyncIterator[None]:
        """Run the enclosed steps of trial ``t`` alone (they must precede a write's delay)."""
        async with self.gate.exclusive():
            t.exclusive = True
            try:
                yield
            finally:
                t.exclusive = False

    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        self.requests += 1
        try:
            return await self.client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise ServiceError(f"the replay service did not answer {method} {url}: {exc!r}") from exc

    async def call(self, t: _Trial | None, method: str, url: str, **kwargs: Any) -> tuple[dict[str, Any], datetime]:
        if t is not None and t.exclusive:
            response = await self._send(method, url, **kwargs)
        else:
            async with self.gate.shared():
                response = await self._send(method, url, **kwargs)
        if response.status_code >= 400:
            raise ServiceError(
                f"the replay service refused {method} {url}: {response.status_code} {response.text[:300]}"
            )
        data: dict[str, Any] = response.json()
        if t is not None:
            t.served = (float(data["served_ms"]), time.monotonic())
        return data, self.clock.now()

    async def until_due(self, t: _Trial, ns: str) -> None:
        """Sleep until the latest known due time of the namespace's writes (the service's clock)."""
        due = t.due_ms.get(ns)
        if due is None:
            return
        served_ms, at = t.served
        remaining = due - (served_ms + (time.monotonic() - at) * 1000.0)
        if remaining > 0:
            await asyncio.sleep(remaining / 1000.0 + 0.002)

    # one tool call of a fixed trace, and the entry it opens
    async def replay_call(self, t: _Trial, call: ToolCall, ns: str, run: str, routes: Sequence[str]) -> dict[str, Any]:
        url = f"/ns/{ns}/items/{call.item}"
        data, at = await self.call(t, "PUT", url, json={"value": call.value, "run": run, "delay_ms": call.delay_ms})
        op = data["op"]
        t.due_ms[ns] = max(t.due_ms.get(ns, 0.0), float(op["accepted_ms"]) + call.delay_ms)
        t.record = t.record.open(
            op["id"],
            kind="operation",
            run=run,
            at=at,
            description=f"{call.tool}({call.item!r}, {call.value!r}) applied after {call.delay_ms} ms",
            later_states=["applied", "cancelled"] if op["status"] == "pending" else [],
            routes=[EffectRoute(to=other, via=f"service namespace {ns}") for other in routes],
        )
        # The tool's own acknowledgement is wrapper-level evidence: kept, but it proves nothing.
        t.record = t.record.update(
            op["id"],
            Probe(
                at=at,
                attempt="observe",
                query=f"PUT {url}",
                answer=f"accepted: {op['status']}",
                status=_STATUS[op["status"]],
                source="wrapper",
            ),
        )
        return data

    async def sweep(
        self,
        t: _Trial,
        ns: str,
        runs: Sequence[str],
        *,
        run_filter: str | None = None,
        wait: bool = False,
        attempt: Literal["assess", "observe"] = "assess",
    ) -> tuple[dict[str, Any], datetime]:
        """Query the namespace and record the answer.

        With ``wait``, first sleep until the writes the trial knows of are due, then ask the service
        to answer once nothing in the namespace is pending (it waits up to ``_SETTLE_WAIT_MS``).
        """
        params: dict[str, Any] = {}
        if run_filter is not None:
            params["run"] = run_filter
        if wait:
            await self.until_due(t, ns)
            params["wait_ms"] = _SETTLE_WAIT_MS
        query = f"GET /ns/{ns}" + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")
        view, at = await self.call(t, "GET", f"/ns/{ns}", params=params)
        if wait and view["pending"]:
            raise ServiceError(
                f"operations {view['pending']} of namespace {ns} did not settle within {_SETTLE_WAIT_MS} ms"
            )
        for op in view["ops"]:
            status: EndpointStatus | None = _STATUS[op["status"]]
            if t.record.entry(op["id"]).status == "removed":
                status = None  # the operation was applied and its effect since removed: nothing new
            t.record = t.record.update(
                op["id"], Probe(at=at, attempt=attempt, query=query, answer=op["status"], status=status)
            )
        answer = f"{len(view['ops'])} operation(s), pending: {', '.join(view['pending']) or 'none'}"
        for run in runs:
            t.record = t.record.add_sweep(
                Sweep(run=run, at=at, query=query, answer=answer, open_handles=view["pending"])
            )
        return view, at

    async def settle(
        self, t: _Trial, ns: str, runs: Sequence[str], view: dict[str, Any], at: datetime
    ) -> tuple[dict[str, Any], datetime]:
        """The namespace once nothing in it is pending: ``view`` itself if it showed nothing pending."""
        if not view["pending"]:
            return view, at
        return await self.sweep(t, ns, runs, wait=True, attempt="observe")

    async def verify_fresh(self, t: _Trial, ns: str, handles: Sequence[str], who: str) -> None:
        """Query a namespace that must be empty with nothing pending; block the routes of ``handles``."""
        view, at = await self.call(t, "GET", f"/ns/{ns}")
        if view["items"] or view["pending"]:
            raise ServiceError(f"namespace {ns} is not fresh for run {who}: {view['items']} {view['pending']}")
        for handle in handles:
            t.record = t.record.update(
                handle,
                Probe(
                    at=at,
                    attempt="isolate",
                    query=f"GET /ns/{ns}",
                    answer=f"no item and nothing pending in run {who}'s namespace",
                    blocks_routes=True,
                ),
            )


def _score(view: dict[str, Any], item: str, run: str) -> float:
    found = view["items"].get(item)
    return 1.0 if found is not None and found["run"] == run else 0.0


def _written_by(view: dict[str, Any], item: str) -> str | None:
    found = view["items"].get(item)
    return None if found is None else str(found["run"])


def _scored(t: _Trial, role: str, run: str, outcome: float, at: datetime) -> ScoredRun:
    return ScoredRun(
        run=run,
        system=role,
        task=t.spec.trial,
        outcome=outcome,
        scored_at=at,
        environment=f"{t.condition}.{t.spec.trial}",
        group=f"delay-{t.spec.delay_ms}ms",
    )


def _traces(spec: _Spec) -> tuple[ToolCall, ToolCall]:
    item = f"item-{spec.identifier}"
    a = ToolCall("set_item", item, f"{spec.trial}:A", spec.delay_ms)
    b = ToolCall("set_item", item, f"{spec.trial}:B", 0)
    return a, b


async def _separated_pair(r: _Runner, t: _Trial, mode: Literal["reconcile", "cancel", "namespaced"]) -> None:
    """A in its own namespace, then B in a verified-fresh one (snapshot/terminal, cancel, namespaced)."""
    trace_a, trace_b = _traces(t.spec)
    run_a, run_b = f"{t.spec.trial}.A", f"{t.spec.trial}.B"
    ns_a, ns_b = f"{t.tag}.A", f"{t.tag}.B"
    async with r.critical(t):
        written = await r.replay_call(t, trace_a, ns_a, run_a, routes=[run_b])
        accepted = written["op"]["accepted_ms"]
        view, _ = await r.sweep(t, ns_a, [run_a], run_filter=run_a)  # endpoint assessment of A
        served = view["served_ms"]
        t.a_endpoint = view["ops"][0]["status"]
        if mode == "reconcile":
            snap, snap_at = await r.call(t, "GET", f"/ns/{ns_a}/items/{trace_a.item}")
            served = snap["served_ms"]
            t.snapshot = _scored(t, "A", run_a, 1.0 if snap["run"] == run_a else 0.0, snap_at)
        if mode == "cancel":
            for op_id in view["pending"]:
                answer, at = await r.call(t, "POST", f"/ops/{op_id}/cancel")
                served = answer["served_ms"]
                if answer["cancelled"]:
                    t.due_ms.pop(ns_a, None)  # nothing left to wait for in A's namespace
                t.record = t.record.update(
                    op_id,
                    Probe(
                        at=at,
                        attempt="cancel",
                        query=f"POST /ops/{op_id}/cancel",
                        answer=f"cancelled: {answer['cancelled']}",
                        status=_STATUS[answer["op"]["status"]],
                    ),
                )
        t.lag_ms = served - accepted
    if mode == "cancel":
        op_id = written["op"]["id"]
        answer, at = await r.call(t, "GET", f"/ops/{op_id}")  # verify the cancellation by a later query
        t.record = t.record.update(
            op_id,
            Probe(
                at=at,
                attempt="observe",
                query=f"GET /ops/{op_id}",
                answer=answer["op"]["status"],
                status=_STATUS[answer["op"]["status"]],
            ),
        )
        t.cancelled = answer["op"]["status"] == "cancelled"
    # run B, in a namespace verified fresh before it starts
    await r.verify_fresh(t, ns_b, [written["op"]["id"]], who=run_b)
    written_b = await r.replay_call(t, trace_b, ns_b, run_b, routes=[run_a])
    view_b, at_b = await r.sweep(t, ns_b, [run_b])  # endpoint assessment of B
    view_b, at_b = await r.settle(t, ns_b, [run_b], view_b, at_b)
    t.runs["B"] = _scored(t, "B", run_b, _score(view_b, trace_b.item, run_b), at_b)
    # A's terminal score: once nothing in its namespace is pending
    view_a, at_a = await r.sweep(t, ns_a, [run_a], wait=True, attempt="observe")
    t.runs["A"] = _scored(t, "A", run_a, _score(view_a, trace_a.item, run_a), at_a)
    if not any(op["run"] == run_b for op in view_a["ops"]):
        t.record = t.record.update(
            written_b["op"]["id"],
            Probe(
                at=at_a,
                attempt="isolate",
                query=f"GET /ns/{ns_a}",
                answer=f"no operation of run {run_b}",
                blocks_routes=True,
            ),
        )
    t.exposed = _written_by(view_b, trace_b.item) == run_a if mode == "namespaced" else None


async def _shared_pair(r: _Runner, t: _Trial) -> None:
    """A then B on one namespace; B starts at A's endpoint (shared, grouped)."""
    trace_a, trace_b = _traces(t.spec)
    run_a, run_b = f"{t.spec.trial}.A", f"{t.spec.trial}.B"
    ns = t.tag
    async with r.critical(t):
        written = await r.replay_call(t, trace_a, ns, run_a, routes=[run_b])
        view, _ = await r.sweep(t, ns, [run_a], run_filter=run_a)  # endpoint assessment of A
        t.a_endpoint = view["ops"][0]["status"]
        written_b = await r.replay_call(t, trace_b, ns, run_b, routes=[run_a])
        t.lag_ms = written_b["op"]["accepted_ms"] - written["op"]["accepted_ms"]
    await r.sweep(t, ns, [run_b])  # B's endpoint assessment sees the whole namespace, A's write included
    view, at = await r.sweep(t, ns, [run_a, run_b], wait=True, attempt="observe")
    t.runs["A"] = _scored(t, "A", run_a, _score(view, trace_a.item, run_a), at)
    t.runs["B"] = _scored(t, "B", run_b, _score(view, trace_b.item, run_b), at)
    t.exposed = _written_by(view, trace_b.item) == run_a


async def _reset_pair(r: _Runner, t: _Trial) -> None:
    """A; wait until A has settled; reset and verify the namespace; then B."""
    trace_a, trace_b = _traces(t.spec)
    run_a, run_b = f"{t.spec.trial}.A", f"{t.spec.trial}.B"
    ns = t.tag
    written = await r.replay_call(t, trace_a, ns, run_a, routes=[run_b])
    view, at = await r.sweep(t, ns, [run_a])
    t.a_endpoint = view["ops"][0]["status"]
    view, at = await r.settle(t, ns, [run_a], view, at)
    t.runs["A"] = _scored(t, "A", run_a, _score(view, trace_a.item, run_a), at)
    op_id = written["op"]["id"]
    cleared, at = await r.call(t, "DELETE", f"/ns/{ns}")
    if cleared["pending"]:
        raise ServiceError(f"namespace {ns} still has pending operations at its reset: {cleared['pending']}")
    t.record = t.record.update(
        op_id,
        Probe(
            at=at, attempt="remove", query=f"DELETE /ns/{ns}", answer=f"removed {cleared['removed']}", status="removed"
        ),
    )
    await r.verify_fresh(t, ns, [op_id], who=run_b)
    await r.replay_call(t, trace_b, ns, run_b, routes=[])  # A is already scored: nothing of B reaches it
    view, at = await r.sweep(t, ns, [run_b])
    view, at = await r.settle(t, ns, [run_b], view, at)
    t.runs["B"] = _scored(t, "B", run_b, _score(view, trace_b.item, run_b), at)
    t.exposed = _written_by(view, trace_b.item) == run_a


async def _b_first_pair(r: _Runner, t: _Trial) -> None:
    """B then A on one namespace: B is scored before A starts."""
    trace_a, trace_b = _traces(t.spec)
    run_a, run_b = f"{t.spec.trial}.A", f"{t.spec.trial}.B"
    ns = t.tag
    await r.replay_call(t, trace_b, ns, run_b, routes=[run_a])  # B's value persists into A's start state
    view, at = await r.sweep(t, ns, [run_b])
    view, at = await r.settle(t, ns, [run_b], view, at)
    t.runs["B"] = _scored(t, "B", run_b, _score(view, trace_b.item, run_b), at)
    t.exposed = _written_by(view, trace_b.item) == run_a
    await r.replay_call(t, trace_a, ns, run_a, routes=[])  # B is already scored
    view, at = await r.sweep(t, ns, [run_a])
    t.a_endpoint = next(op["status"] for op in view["ops"] if op["run"] == run_a)
    view, at = await r.settle(t, ns, [run_a], view, at)
    t.runs["A"] = _scored(t, "A", run_a, _score(view, trace_a.item, run_a), at)


_SWEEPS: dict[str, tuple[Condition, ...]] = {
    "reconcile": ("snapshot", "terminal"),
    "cancel": ("cancel",),
    "shared": ("shared",),
    "namespaced": ("namespaced",),
    "reset": ("reset",),
    "b-before-a": ("b-before-a",),
    "grouped": ("grouped",),
}


async def _run_trial(r: _Runner, sweep: str, spec: _Spec, active: asyncio.Semaphore, attempts: int) -> _Trial:
    """One trial; rerun (in fresh namespaces) when the machine was too slow to honour the schedule."""
    async with active:
        for attempt in range(attempts):
            t = _Trial(
                spec=spec,
                condition=sweep,
                record=OpenEffectsRecord(evaluation=f"replay:{sweep}:{spec.trial}"),
                attempt=attempt,
            )
            if sweep in ("reconcile", "cancel", "namespaced"):
                await _separated_pair(r, t, sweep)  # type: ignore[arg-type]
            elif sweep in ("shared", "grouped"):
                await _shared_pair(r, t)
            elif sweep == "reset":
                await _reset_pair(r, t)
            else:
                await _b_first_pair(r, t)
            if not t.late:
                break
        return t


def _condition_result(condition: Condition, trials: list[_Trial]) -> ConditionResult:
    observations: list[TrialObservation] = []
    runs: list[ScoredRun] = []
    for t in trials:
        scored = dict(t.runs)
        if condition == "snapshot" and t.snapshot is not None:
            scored["A"] = t.snapshot
        order = ("B", "A") if condition == "b-before-a" else ("A", "B")
        runs.extend(scored[role] for role in order)
        observations.append(
            TrialObservation(
                trial=t.spec.trial,
                identifier=t.spec.identifier,
                delay_ms=t.spec.delay_ms,
                repetition=t.spec.repetition,
                a_endpoint=t.a_endpoint,  # type: ignore[arg-type]
                scores={role: scored[role].outcome for role in ("A", "B")},
                exposed=t.exposed,
                cancelled=t.cancelled,
                lag_ms=t.lag_ms,
                late=t.late,
                attempts=t.attempt + 1,
            )
        )
    record = OpenEffectsRecord.combine((t.record for t in trials), evaluation=f"replay:{condition}")
    argument = example_argument(_ARGUMENTS[condition])
    checks = check_runs(argument, runs, record=record)
    labels: dict[str, int] = {status: sum(c.label == status for c in checks) for status in LABEL_STATUSES}
    units = len({c.unit_id or c.run for c in checks})
    exposed = [o.exposed for o in observations]
    summary = ConditionSummary(
        condition=condition,
        title=_TITLES[condition],
        argument=argument.name,
        trials=len(observations),
        successes={role: int(sum(o.scores[role] for o in observations)) for role in ("A", "B")},
        exposed=None if any(e is None for e in exposed) else sum(bool(e) for e in exposed),
        labels=labels,
        rows=len(checks),
        units=units,
        late_trials=sum(o.late for o in observations),
        rerun_trials=sum(o.attempts > 1 for o in observations),
    )
    return ConditionResult(summary=summary, trials=observations, runs=runs, record=record, checks=checks)


def _counts(schedule: ReplaySchedule, results: dict[str, ConditionResult]) -> list[ReplayCount]:
    n = schedule.n_trials
    zero = sum(1 for s in schedule.trials() if s.delay_ms == 0)
    delayed = n - zero
    paper = schedule == ReplaySchedule()
    counts: list[ReplayCount] = []

    def add(condition: str, measure: str, count: int, of: int, expected: int, figure: str) -> None:
        counts.append(
            ReplayCount(
                condition=condition,
                measure=measure,
                count=count,
                of=of,
                expected=expected,
                paper=figure if paper else None,
            )
        )

    if "snapshot" in results and "terminal" in results:
        snap = results["snapshot"].trials
        term = results["terminal"].trials
        add("snapshot scoring", "run A successes", int(sum(o.scores["A"] for o in snap)), n, zero, "50/200")
        add("terminal reconciliation", "run A successes", int(sum(o.scores["A"] for o in term)), n, n, "200/200")
        differ = [s.scores["A"] != t.scores["A"] for s, t in zip(snap, term, strict=True)]
        at_delay = sum(d for d, o in zip(differ, snap, strict=True) if o.delay_ms > 0)
        add("snapshot vs terminal", "labels that differ, nonzero delay", at_delay, n, delayed, "150/200")
        add("snapshot vs terminal", "labels that differ, zero delay", sum(differ) - at_delay, n, 0, "0/200")
    if "cancel" in results:
        obs = results["cancel"].trials
        failed = sum(1 for o in obs if o.a_endpoint == "pending" and o.cancelled and o.scores["A"] == 0)
        add("verified cancellation", "pending writes cancelled, scored failure", failed, n, delayed, "150/200")
        add("verified cancellation", "run A successes", int(sum(o.scores["A"] for o in obs)), n, zero, "50/200")
    for key, figure in (
        ("shared", "150/200"),
        ("namespaced", "0/200"),
        ("reset", "0/200"),
        ("b-before-a", "0/200"),
        ("grouped", "150/200"),
    ):
        if key in results:
            summary = results[key].summary
            expected = delayed if key in ("shared", "grouped") else 0
            add(summary.title, "run B exposed to A's delayed write", summary.exposed or 0, n, expected, figure)
    if "grouped" in results:
        summary = results["grouped"].summary
        add("grouped analysis", "analysis units from the run rows", summary.units, summary.rows, n, "200/400")
    return counts


def _first(errors: BaseExceptionGroup[Exception]) -> Exception:
    first = errors.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first


def _arun_controlled_replay_iv(
    schedule: ReplaySchedule | None, conditions: Sequence[str] | None, max_active: int, attempts: int, timeout_s: float
) -> tuple[ReplaySchedule, list[Condition]]:
    if schedule is None:
        schedule = ReplaySchedule()
    elif not isinstance(schedule, ReplaySchedule):
        raise InputError(f"schedule must be a ReplaySchedule; got {type(schedule).__name__}")
    if conditions is None:
        chosen: list[str] = list(REPLAY_CONDITIONS)
    else:
        chosen = [str(c) for c in conditions] if not isinstance(conditions, str) else [conditions]
        unknown = [c for c in chosen if c not in REPLAY_CONDITIONS]
        if unknown or not chosen:
            raise InputError(f"conditions must be among {', '.join(REPLAY_CONDITIONS)}; got {list(conditions)!r}")
    if not isinstance(max_active, int) or isinstance(max_active, bool) or not 1 <= max_active <= 1000:
        raise InputError(f"max_active must be an integer from 1 to 1000; got {max_active!r}")
    if not isinstance(attempts, int) or isinstance(attempts, bool) or not 1 <= attempts <= 10:
        raise InputError(f"attempts must be an integer from 1 to 10; got {attempts!r}")
    if not isinstance(timeout_s, int | float) or isinstance(timeout_s, bool) or not 1 <= timeout_s <= 3600:
        raise InputError(f"timeout_s must be a number of seconds from 1 to 3600; got {timeout_s!r}")
    return schedule, [c for c in REPLAY_CONDITIONS if c in chosen]


async def arun_controlled_replay(
    schedule: ReplaySchedule | None = None,
    *,
    conditions: Sequence[str] | None = None,
    max_active: int = 32,
    attempts: int = 3,
    timeout_s: float = 300.0,
) -> ControlledReplay:
    """Run the controlled replay on the running event loop; see :func:`run_controlled_replay`.

    Use this from async code (a notebook, an async harness); the service runs on the same loop.

    Examples
    --------
    >>> import asyncio
    >>> from stopwise.finality import ReplaySchedule, arun_controlled_replay
    >>> schedule = ReplaySchedule(identifiers=(2,), delays_ms=(0, 20), repetitions=1)
    >>> result = asyncio.run(arun_controlled_replay(schedule, conditions=["reset"]))
    >>> result.condition("reset").summary.exposed, result.late_trials
    (0, 0)
    """
    schedule, chosen = _arun_controlled_replay_iv(schedule, conditions, max_active, attempts, timeout_s)
    sweeps = [s for s, conds in _SWEEPS.items() if any(c in chosen for c in conds)]
    started = time.monotonic()
    clock = _Clock()
    async with LocalService() as service:
        connections = min(max_active, 16)
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        async with httpx.AsyncClient(
            base_url=service.url, timeout=httpx.Timeout(30.0), limits=limits, trust_env=False
        ) as client:
            runner = _Runner(client, clock)
            await runner.call(None, "GET", "/health")  # warm the route table before timing matters
            active = asyncio.Semaphore(max_active)
            specs = schedule.trials()
            try:
                async with asyncio.timeout(timeout_s), asyncio.TaskGroup() as group:
                    tasks = [
                        group.create_task(_run_trial(runner, sweep, spec, active, attempts))
                        for sweep in sweeps
                        for spec in specs
                    ]
            except TimeoutError:
                raise ServiceError(f"the replay did not finish within {timeout_s:g} s") from None
            except ExceptionGroup as errors:  # the first failure, as itself (siblings were cancelled)
                raise _first(errors) from None
            done = [task.result() for task in tasks]
            left = service.store.pending()
            if left:
                raise ServiceError(f"operations {left[:5]} were still pending when the replay ended")
    by_sweep: dict[str, list[_Trial]] = {s: [] for s in sweeps}
    for t in done:
        by_sweep[t.condition].append(t)
    results: dict[str, ConditionResult] = {}
    for sweep in sweeps:
        for condition in _SWEEPS[sweep]:
            if condition in chosen:
                results[condition] = _condition_result(condition, by_sweep[sweep])
    ordered = [results[c] for c in chosen]
    return ControlledReplay(
        schedule=schedule,
        counts=_counts(schedule, results),
        conditions=ordered,
        requests=runner.requests,
        late_trials=sum(r.summary.late_trials for r in ordered),
        rerun_trials=sum(r.summary.rerun_trials for r in ordered),
        elapsed_s=round(time.monotonic() - started, 3),
        stopwise_version=__version__,
    )


def run_controlled_replay(
    schedule: ReplaySchedule | None = None,
    *,
    conditions: Sequence[str] | None = None,
    max_active: int = 32,
    attempts: int = 3,
    timeout_s: float = 300.0,
) -> ControlledReplay:
    """Run the paper's controlled replay against a real HTTP service on 127.0.0.1.

    A fresh service is started on an ephemeral loopback port, every trial of every condition is
    replayed against it through real HTTP requests, and the service is stopped and its port
    closed before this returns, also when something fails.

    Parameters
    ----------
    schedule : ReplaySchedule, optional
        Identifiers, delays and repetitions (default: the paper's 5 x 4 x 10 = 200 trials).
    conditions : sequence of str, optional
        Which of :data:`REPLAY_CONDITIONS` to run (default: all).
    max_active : int, optional
        Trials in flight at once; the steps that race a write's delay run one trial at a time,
        with no other request in flight.
    attempts : int, optional
        Attempts per trial: a trial whose steps came after its write's delay had elapsed (the
        machine stalled) is rerun in fresh namespaces, and counted in ``rerun_trials``.
    timeout_s : float, optional
        Give up (and stop the service) after this many seconds.

    Returns
    -------
    ControlledReplay
        The table (``counts``), and per condition the observations, scored runs, open-effects
        record and completion checks.

    Raises
    ------
    InputError
        An argument is invalid.
    ServiceError
        The service failed to start, answer or stop, or the replay timed out.

    Examples
    --------
    >>> from stopwise.finality import ReplaySchedule, run_controlled_replay
    >>> result = run_controlled_replay(ReplaySchedule(identifiers=(1,), delays_ms=(0, 25), repetitions=1),
    ...                     conditions=["snapshot", "terminal", "shared"])
    >>> [(c.measure, c.count, c.of) for c in result.counts][:2]
    [('run A successes', 1, 2), ('run A successes', 2, 2)]
    >>> result.condition("shared").summary.exposed
    1
    """
    return asyncio.run(
        arun_controlled_replay(
            schedule, conditions=conditions, max_active=max_active, attempts=attempts, timeout_s=timeout_s
        )
    )
