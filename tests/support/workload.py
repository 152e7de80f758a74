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

__all__ = ["planned_tasks", "worker_events", "writer"]


def planned_tasks(n_events: int) -> list[str]:
    """Task ids of a workload of ``n_events`` events (two systems per task)."""
    return [f"task-{i:06d}" for i in range((n_events + 1) // 2)]


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
) -> None:
    """Append ``events`` to a ledger in transactions of ``batch`` events, acknowledging each after its commit.

    Parameters
    ----------
    url, evaluation : str
        The ledger and a registered evaluation.
    events : list of mapping
        The events to send, in order.
    batch : int, optional
        Events per transaction (1: one commit per event; more: group commit, the acknowledgement
        still follows the commit of each event).
    ack_path : str, optional
        After each commit, one line ``system<TAB>task<TAB>attempt`` per acknowledged event is
        appended here and flushed to the operating system (it survives the writer being killed).
    ready, go : multiprocessing.Event, optional
        Set ``ready`` once the ledger is open, then wait for ``go`` (so that start-up is not timed).
    results : multiprocessing.Queue, optional
        Receives ``(pid, start, end, acknowledged, accepted, decide_seconds)``.
    decide_every : int, optional
        Also take a decision after every ``decide_every`` transactions (0: never).
    """
    from stopwise.ledger import open_ledger

    ledger = open_ledger(url)
    ledger.registration(evaluation)
    if ready is not None:
        ready.set()
    if go is not None:
        go.wait()
    acks = open(ack_path, "a", encoding="utf-8") if ack_path is not None else None
    acknowledged = accepted = 0
    decide_seconds: list[float] = []
    start = time.monotonic()
    try:
        for n, first in enumerate(range(0, len(events), batch), start=1):
            result = ledger.append(evaluation, events[first : first + batch])
            acknowledged += result.acknowledged
            accepted += result.accepted
            if acks is not None:
                acks.write("".join(f"{s}\t{t}\t{a}\n" for s, t, a in [*result.accepted_keys, *result.duplicate_keys]))
                acks.flush()
            if decide_every and n % decide_every == 0:
                t0 = time.monotonic()
                ledger.decide(evaluation)
                decide_seconds.append(time.monotonic() - t0)
        end = time.monotonic()
    finally:
        if acks is not None:
            acks.close()
        ledger.close()
    if results is not None:
        results.put((os.getpid(), start, end, acknowledged, accepted, decide_seconds))
