"""The replay runner: fixed tool-call traces replayed over HTTP, one procedure per condition.

Every request goes through :class:`Runner`, which records the service's answers in the trial's
open-effects record through the lifecycle API. The service runs on a logical clock: a delayed
write lands only when its namespace's clock passes its due time, and that clock moves only when
the runner lets time pass (a settling query with ``wait_ms``). Every step that must come before a
write's delay has elapsed therefore does, whatever the load on the machine; the service's clock
still checks it (``lag_ms``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from stopwise.errors import ServiceError
from stopwise.finality._check import ScoredRun
from stopwise.finality._effects import EffectRoute, EndpointStatus, OpenEffectsRecord, Probe, Sweep
from stopwise.finality._replay_record import Spec

if TYPE_CHECKING:  # the HTTP stack is imported when a replay runs, not with the package
    import httpx

__all__ = ["ToolCall"]

_STATUS: dict[str, EndpointStatus] = {"pending": "pending", "applied": "terminal", "cancelled": "cancelled"}
_SETTLE_WAIT_MS = 10_000


@dataclass(frozen=True)
class ToolCall:
    """One call of a fixed trace: set ``item`` to ``value``; the service applies it after ``delay_ms``."""

    tool: Literal["set_item"]
    item: str
    value: str
    delay_ms: int


@dataclass
class Clock:
    """UTC timestamps that never run backwards (wall time at start + monotonic offset)."""

    wall: datetime = field(default_factory=lambda: datetime.now(UTC))
    mono: float = field(default_factory=time.monotonic)

    def now(self) -> datetime:
        return self.wall + timedelta(seconds=time.monotonic() - self.mono)


@dataclass
class Trial:
    spec: Spec
    condition: str
    record: OpenEffectsRecord
    runs: dict[str, ScoredRun] = field(default_factory=dict)
    a_endpoint: Literal["pending", "applied", "cancelled"] = "pending"
    exposed: bool | None = None
    cancelled: bool | None = None
    lag_ms: float | None = None
    snapshot: ScoredRun | None = None
    attempt: int = 0

    @property
    def tag(self) -> str:
        """Namespace prefix of this attempt of this trial."""
        return f"{self.condition}.{self.spec.trial}" + (f".retry{self.attempt}" if self.attempt else "")

    @property
    def late(self) -> bool:
        """The steps that had to precede A's write landing came after its delay had elapsed."""
        return self.lag_ms is not None and self.spec.delay_ms > 0 and self.lag_ms >= self.spec.delay_ms


class Runner:
    def __init__(self, client: httpx.AsyncClient, clock: Clock) -> None:
        self.client = client
        self.clock = clock
        self.requests = 0

    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        import httpx

        self.requests += 1
        try:
            return await self.client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise ServiceError(f"the replay service did not answer {method} {url}: {exc!r}") from exc

    async def call(self, t: Trial | None, method: str, url: str, **kwargs: Any) -> tuple[dict[str, Any], datetime]:
        response = await self._send(method, url, **kwargs)
        if response.status_code >= 400:
            raise ServiceError(
                f"the replay service refused {method} {url}: {response.status_code} {response.text[:300]}"
            )
        data: dict[str, Any] = response.json()
        return data, self.clock.now()

    # one tool call of a fixed trace, and the entry it opens
    async def replay_call(self, t: Trial, call: ToolCall, ns: str, run: str, routes: Sequence[str]) -> dict[str, Any]:
        url = f"/ns/{ns}/items/{call.item}"
        data, at = await self.call(t, "PUT", url, json={"value": call.value, "run": run, "delay_ms": call.delay_ms})
        op = data["op"]
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
        t: Trial,
        ns: str,
        runs: Sequence[str],
        *,
        run_filter: str | None = None,
        wait: bool = False,
        attempt: Literal["assess", "observe"] = "assess",
    ) -> tuple[dict[str, Any], datetime]:
        """Query the namespace and record the answer.

        With ``wait``, ask the service to answer once nothing in the namespace is pending: it lets
        the namespace's logical clock run until the pending writes are due (up to ``_SETTLE_WAIT_MS``).
        """
        params: dict[str, Any] = {}
        if run_filter is not None:
            params["run"] = run_filter
        if wait:
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
        self, t: Trial, ns: str, runs: Sequence[str], view: dict[str, Any], at: datetime
    ) -> tuple[dict[str, Any], datetime]:
        """The namespace once nothing in it is pending: ``view`` itself if it showed nothing pending."""
        if not view["pending"]:
            return view, at
        return await self.sweep(t, ns, runs, wait=True, attempt="observe")

    async def verify_fresh(self, t: Trial, ns: str, handles: Sequence[str], who: str) -> None:
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


def _scored(t: Trial, role: str, run: str, outcome: float, at: datetime) -> ScoredRun:
    return ScoredRun(
        run=run,
        system=role,
        task=t.spec.trial,
        outcome=outcome,
        scored_at=at,
        environment=f"{t.condition}.{t.spec.trial}",
        group=f"delay-{t.spec.delay_ms}ms",
    )


def _traces(spec: Spec) -> tuple[ToolCall, ToolCall]:
    item = f"item-{spec.identifier}"
    a = ToolCall("set_item", item, f"{spec.trial}:A", spec.delay_ms)
    b = ToolCall("set_item", item, f"{spec.trial}:B", 0)
    return a, b


async def _settled_run(
    r: Runner, t: Trial, role: str, trace: ToolCall, ns: str, run: str, routes: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Replay one run's call, assess its endpoint, and score it once nothing in ``ns`` is pending.

    Returns the write, the endpoint view and the settled view (the same when nothing was pending).
    """
    written = await r.replay_call(t, trace, ns, run, routes=routes)
    endpoint, at = await r.sweep(t, ns, [run])
    view, at = await r.settle(t, ns, [run], endpoint, at)
    t.runs[role] = _scored(t, role, run, _score(view, trace.item, run), at)
    return written, endpoint, view


async def _separated_pair(r: Runner, t: Trial, mode: Literal["reconcile", "cancel", "namespaced"]) -> None:
    """A in its own namespace, then B in a verified-fresh one (snapshot/terminal, cancel, namespaced)."""
    trace_a, trace_b = _traces(t.spec)
    run_a, run_b = f"{t.spec.trial}.A", f"{t.spec.trial}.B"
    ns_a, ns_b = f"{t.tag}.A", f"{t.tag}.B"
    written = await r.replay_call(t, trace_a, ns_a, run_a, routes=[run_b])
    accepted = written["op"]["accepted_ms"]
    view, _ = await r.sweep(t, ns_a, [run_a], run_filter=run_a)  # endpoint assessment of A
    served = view["clock_ms"]
    t.a_endpoint = view["ops"][0]["status"]
    if mode == "reconcile":
        snap, snap_at = await r.call(t, "GET", f"/ns/{ns_a}/items/{trace_a.item}")
        served = snap["clock_ms"]
        t.snapshot = _scored(t, "A", run_a, 1.0 if snap["run"] == run_a else 0.0, snap_at)
    if mode == "cancel":
        for op_id in view["pending"]:
            answer, at = await r.call(t, "POST", f"/ops/{op_id}/cancel")
            served = answer["clock_ms"]
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
    written_b, _, view_b = await _settled_run(r, t, "B", trace_b, ns_b, run_b, routes=[run_a])
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


async def _shared_pair(r: Runner, t: Trial) -> None:
    """A then B on one namespace; B starts at A's endpoint (shared, grouped)."""
    trace_a, trace_b = _traces(t.spec)
    run_a, run_b = f"{t.spec.trial}.A", f"{t.spec.trial}.B"
    ns = t.tag
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


async def _reset_pair(r: Runner, t: Trial) -> None:
    """A; wait until A has settled; reset and verify the namespace; then B."""
    trace_a, trace_b = _traces(t.spec)
    run_a, run_b = f"{t.spec.trial}.A", f"{t.spec.trial}.B"
    ns = t.tag
    written, endpoint, _ = await _settled_run(r, t, "A", trace_a, ns, run_a, routes=[run_b])
    t.a_endpoint = endpoint["ops"][0]["status"]
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
    _, _, view = await _settled_run(r, t, "B", trace_b, ns, run_b, routes=[])  # A is already scored: nothing of B reaches it
    t.exposed = _written_by(view, trace_b.item) == run_a


async def _b_first_pair(r: Runner, t: Trial) -> None:
    """B then A on one namespace: B is scored before A starts."""
    trace_a, trace_b = _traces(t.spec)
    run_a, run_b = f"{t.spec.trial}.A", f"{t.spec.trial}.B"
    ns = t.tag
    _, _, view = await _settled_run(r, t, "B", trace_b, ns, run_b, routes=[run_a])  # B's value persists into A's start state
    t.exposed = _written_by(view, trace_b.item) == run_a
    _, endpoint, _ = await _settled_run(r, t, "A", trace_a, ns, run_a, routes=[])  # B is already scored
    t.a_endpoint = next(op["status"] for op in endpoint["ops"] if op["run"] == run_a)


async def run_trial(r: Runner, sweep: str, spec: Spec, active: asyncio.Semaphore, attempts: int) -> Trial:
    """One trial; rerun (in fresh namespaces) when the machine was too slow to honour the schedule."""
    async with active:
        for attempt in range(attempts):
            t = Trial(
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
