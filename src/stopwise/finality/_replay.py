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

B is *exposed* when the item B is scored on holds A's write. The service runs on a logical clock
(one per namespace): a delayed write lands only once the runner lets its namespace's time pass
(when it settles the namespace), never because the machine was slow, so the steps that must come
before a write's delay has elapsed (from A's write to the endpoint read, the cancellation, or B's
write) always do, and the counts are the same whatever the load. Trials run concurrently on one
event loop, every step over real HTTP. The service's clock still checks the schedule: a trial
whose steps came late would be rerun in fresh namespaces and counted (``rerun_trials``;
``late_trials`` counts trials that stayed late); neither can happen on the logical clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from stopwise._extras import require_extra
from stopwise._version import __version__
from stopwise.errors import InputError, ServiceError
from stopwise.finality._check import LABEL_STATUSES, ScoredRun, check_runs
from stopwise.finality._effects import OpenEffectsRecord
from stopwise.finality._examples import example_argument
from stopwise.finality._replay_record import (
    ARGUMENTS,
    REPLAY_CONDITIONS,
    TITLES,
    Condition,
    ConditionResult,
    ConditionSummary,
    DelayedWriteReplay,
    ReplayCount,
    ReplaySchedule,
    TrialObservation,
)
from stopwise.finality._replay_runner import Clock, Runner, Trial, run_trial

__all__ = ["arun_controlled_replay", "run_controlled_replay"]

_SWEEPS: dict[str, tuple[Condition, ...]] = {
    "reconcile": ("snapshot", "terminal"),
    "cancel": ("cancel",),
    "shared": ("shared",),
    "namespaced": ("namespaced",),
    "reset": ("reset",),
    "b-before-a": ("b-before-a",),
    "grouped": ("grouped",),
}


def _condition_result(condition: Condition, trials: list[Trial]) -> ConditionResult:
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
                a_endpoint=t.a_endpoint,
                scores={role: scored[role].outcome for role in ("A", "B")},
                exposed=t.exposed,
                cancelled=t.cancelled,
                lag_ms=t.lag_ms,
                late=t.late,
                attempts=t.attempt + 1,
            )
        )
    record = OpenEffectsRecord.combine((t.record for t in trials), evaluation=f"replay:{condition}")
    argument = example_argument(ARGUMENTS[condition])
    checks = check_runs(argument, runs, record=record)
    labels: dict[str, int] = {status: sum(c.label == status for c in checks) for status in LABEL_STATUSES}
    units = len({c.unit_id or c.run for c in checks})
    exposed = [o.exposed for o in observations]
    summary = ConditionSummary(
        condition=condition,
        title=TITLES[condition],
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

    if "snapshot" in results:
        snap = results["snapshot"].trials
        add("snapshot scoring", "run A successes", int(sum(o.scores["A"] for o in snap)), n, zero, "50/200")
    if "terminal" in results:
        term = results["terminal"].trials
        add("terminal reconciliation", "run A successes", int(sum(o.scores["A"] for o in term)), n, n, "200/200")
    if "snapshot" in results and "terminal" in results:
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
    max_active: int = 4,
    attempts: int = 3,
    timeout_s: float = 300.0,
    progress: Callable[[int, int], None] | None = None,
) -> DelayedWriteReplay:
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
    require_extra("service", "the controlled replay (stopwise finality replay)")
    if progress is not None and not callable(progress):
        raise InputError(f"progress must be a callable or None; got {type(progress).__name__}")
    sweeps = [s for s, conds in _SWEEPS.items() if any(c in chosen for c in conds)]
    started = time.monotonic()
    clock = Clock()
    import httpx

    from stopwise.finality._service import LocalService, ServiceStore

    async with LocalService(store=ServiceStore(clock="logical")) as service:
        connections = max_active  # one connection per trial in flight: no request queues in the pool
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        async with httpx.AsyncClient(
            base_url=service.url, timeout=httpx.Timeout(30.0), limits=limits, trust_env=False
        ) as client:
            runner = Runner(client, clock)
            await runner.call(None, "GET", "/health")
            active = asyncio.Semaphore(max_active)
            specs = schedule.trials()
            finished, total = 0, len(sweeps) * len(specs)

            def tick(_: asyncio.Task[Trial]) -> None:
                nonlocal finished
                finished += 1
                if progress is not None:
                    progress(finished, total)

            try:
                async with asyncio.timeout(timeout_s), asyncio.TaskGroup() as group:
                    tasks = [
                        group.create_task(run_trial(runner, sweep, spec, active, attempts))
                        for sweep in sweeps
                        for spec in specs
                    ]
                    for task in tasks:
                        task.add_done_callback(tick)
            except TimeoutError:
                raise ServiceError(f"the replay did not finish within {timeout_s:g} s") from None
            except ExceptionGroup as errors:  # the first failure, as itself (siblings were cancelled)
                raise _first(errors) from None
            done = [task.result() for task in tasks]
            left = service.store.pending()
            if left:
                raise ServiceError(f"operations {left[:5]} were still pending when the replay ended")
    by_sweep: dict[str, list[Trial]] = {s: [] for s in sweeps}
    for t in done:
        by_sweep[t.condition].append(t)
    results: dict[str, ConditionResult] = {}
    for sweep in sweeps:
        for condition in _SWEEPS[sweep]:
            if condition in chosen:
                results[condition] = _condition_result(condition, by_sweep[sweep])
    ordered = [results[c] for c in chosen]
    return DelayedWriteReplay(
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
    max_active: int = 4,
    attempts: int = 3,
    timeout_s: float = 300.0,
    progress: Callable[[int, int], None] | None = None,
) -> DelayedWriteReplay:
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
        Trials in flight at once (the counts do not depend on it: the service's logical clock
        orders every write).
    attempts : int, optional
        Attempts per trial: a trial whose steps came after its write's delay had elapsed on the
        service's clock would be rerun in fresh namespaces, and counted in ``rerun_trials``.
    timeout_s : float, optional
        Give up (and stop the service) after this many seconds.
    progress : callable, optional
        Called as ``progress(done, total)`` with the trials finished (of all conditions' trials) as
        each trial ends (``stopwise finality replay`` prints it).

    Returns
    -------
    DelayedWriteReplay
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
            schedule, conditions=conditions, max_active=max_active, attempts=attempts, timeout_s=timeout_s, progress=progress
        )
    )
