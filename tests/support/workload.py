"""A seeded load generator for the ledger: synthetic outcome events and a writer process.

Used by the concurrency and durability tests (``tests/ledger``) and the throughput benchmark
(``benchmarks/ledger_throughput.py``); it lives with the tests, not in the wheel; the writer is a module-level function so that worker processes
started with the ``spawn`` method can import it.

Event ``k`` of a workload is task ``k // 2`` of the planned universe, of the tested system when ``k``
is even and of the baseline when odd; its outcome is a seeded Bernoulli draw (0.6 for the tested
system, 0.4 for the baseline). Worker ``w`` of ``W`` owns the events ``k = w, w + W, w + 2W, ...``.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

__all__ = ["planned_tasks", "racing_writer", "register_workload", "worker_events", "writer"]


def planned_tasks(n_events: int) -> list[str]:
    """Task ids of a workload of ``n_events`` events (two systems per task)."""
    return [f"task-{i:06d}" for i in range((n_events + 1) // 2)]


def register_workload(url: str, n_events: int, *, evaluation: str = "load") -> None:
    """Register ``evaluation`` for a workload of ``n_events`` (the default policy, its tasks in 4 groups, A vs B)."""
    from stopwise.ledger import open_ledger
    from stopwise.records import Policy, TaskUniverse

    tasks = planned_tasks(n_events)
    universe = TaskUniverse(tasks, [f"g{i % 4}" for i in range(len(tasks))])
    with open_ledger(url) as ledger:
        ledger.register(evaluation, policy=Policy(), universe=universe, tested="A", baseline="B")


def worker_events(
    worker: int, n_workers: int, n_events: int, *, tested: str = "A", baseline: str = "B", seed: int = 0
) -> list[dict[str, Any]]:
    """The outcome events owned by one worker, in the order it sends them.

    Examples
    --------
    >>> from tests.support.workload import worker_events
    >>> [(e["system"], e["task"]) for e in worker_events(1, 2, 6)]
    [('B', 'task-000000'), ('B', 'task-000001'), ('B', 'task-000002')]
    """
    rng = np.random.default_rng(seed)
    draws = rng.random(n_events)
    k = np.arange(worker, n_events, n_workers)
    tasks = planned_tasks(n_events)
    return [
        {
            "system": tested if i % 2 == 0 else baseline,
            "task": tasks[i // 2],
            "outcome": float(draws[i] < (0.6 if i % 2 == 0 else 0.4)),
            "group": f"g{(i // 2) % 4}",
            "source": "workload",
        }
        for i in k.tolist()
    ]


def writer(
    url: str,
    evaluation: str,
    events: list[dict[str, Any]],
    *,
    batch: int = 1,
    ack_path: str | None = None,
    ready: Any = None,
    go: Any = None,
    results: Any = None,
    decide_every: int = 0,
    threads: int = 1,
) -> None:
    """Append ``events`` to a ledger in transactions of ``batch`` events, acknowledging each after its commit.

    Parameters
    ----------
    url, evaluation : str
        The ledger and a registered evaluation.
    events : list of mapping
        The events to send, in order.
    batch : int, optional
        Events per append call (1: one event per call, unbatched from the caller's view; more: one
        commit for the batch, each event acknowledged after it).
    ack_path : str, optional
        After each commit, one line ``system<TAB>task<TAB>attempt`` per acknowledged event is
        appended here and flushed to the operating system (it survives the writer being killed).
    ready, go : multiprocessing.Event, optional
        Set ``ready`` once the ledger is open, then wait for ``go`` (so that start-up is not timed).
    results : multiprocessing.Queue, optional
        Receives ``(pid, start, end, acknowledged, accepted, decide_seconds)``.
    decide_every : int, optional
        Also take a decision after every ``decide_every`` transactions (0: never; none while a system has no outcome).
    threads : int, optional
        Appender threads sharing the process's one ledger (``events`` dealt round-robin): concurrent
        appenders of one process, whose commits share the WAL flushes (group commit).
    """
    import threading

    from stopwise.errors import ComparisonError
    from stopwise.ledger import open_ledger

    ledger = open_ledger(url)
    ledger.registration(evaluation)
    if ready is not None:
        ready.set()
    if go is not None:
        go.wait()
    acks = open(ack_path, "a", encoding="utf-8") if ack_path is not None else None
    lock = threading.Lock()
    counts = {"acknowledged": 0, "accepted": 0}
    decide_seconds: list[float] = []
    failures: list[BaseException] = []

    def append(mine: list[dict[str, Any]]) -> None:
        try:
            append_all(mine)
        except BaseException as exc:  # re-raised in the writer's own thread after the join
            failures.append(exc)

    def append_all(mine: list[dict[str, Any]]) -> None:
        for n, first in enumerate(range(0, len(mine), batch), start=1):
            result = ledger.append(evaluation, mine[first : first + batch])
            with lock:
                counts["acknowledged"] += result.acknowledged
                counts["accepted"] += result.accepted
                if acks is not None:
                    acks.write("".join(f"{s}\t{t}\t{a}\n" for s, t, a in [*result.accepted_keys, *result.duplicate_keys]))
                    acks.flush()
            if decide_every and n % decide_every == 0:
                t0 = time.monotonic()
                try:
                    ledger.decide(evaluation)
                except ComparisonError:
                    continue  # the other system has no outcome yet (each writer may send one system's events)
                decide_seconds.append(time.monotonic() - t0)

    start = time.monotonic()
    try:
        if threads == 1:
            append_all(events)
        else:
            appenders = [threading.Thread(target=append, args=(events[t::threads],)) for t in range(threads)]
            for appender in appenders:
                appender.start()
            for appender in appenders:
                appender.join()
        if failures:
            raise failures[0]
        end = time.monotonic()
    finally:
        if acks is not None:
            acks.close()
        ledger.close()
    if results is not None:
        results.put((os.getpid(), start, end, counts["acknowledged"], counts["accepted"], decide_seconds))


def racing_writer(url: str, events: list[dict[str, Any]], n_events: int, go: Any, results: Any, *, decide_every: int = 10) -> None:
    """Create (or open) the ledger at ``go``, register the workload, append one event per call, decide, notify.

    Every call is timed; the first failure is reported, not raised: ``results`` receives
    ``(pid, None, calls)`` when all succeeded, else ``(pid, "<error>", seconds the failing call took)``.
    Two of these started together race on a ledger that does not exist yet (as two Inspect workers do).
    """
    from stopwise.errors import ComparisonError
    from stopwise.ledger import open_ledger

    go.wait()
    calls = 0
    started = time.monotonic()
    try:
        register_workload(url, n_events)
        with open_ledger(url) as ledger:
            for n, event in enumerate(events, start=1):
                started = time.monotonic()
                ledger.append("load", [event])
                if n % decide_every == 0:
                    started = time.monotonic()
                    try:
                        ledger.decide("load")
                    except ComparisonError:
                        pass  # the other system has no outcome yet: nothing to decide, no database error
                    started = time.monotonic()
                    ledger.notify("load", system=event["system"], state="started")
                calls += 1
    except Exception as exc:
        results.put((os.getpid(), f"{type(exc).__name__}: {exc}", time.monotonic() - started))
        return
    results.put((os.getpid(), None, calls))
