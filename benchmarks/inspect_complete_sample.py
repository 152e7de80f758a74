"""Event-loop time per ``complete_sample`` of the Inspect manager (issue 20, item 6), in one run.

Inspect runs every sample of an evaluation on one event loop (anyio). Whatever a manager call does
synchronously holds that loop and stalls every sample in flight. The manager's calls run their
ledger work (append, read of the pairing state, the look) in a worker thread
(``anyio.to_thread.run_sync``); before issue 20 they ran on the loop. This script measures both
paths on the same workload, side by side:

* ``on the loop`` (the synchronous path, as before): the coroutine calls
  ``PairedComparison.complete`` directly;
* ``off the loop`` (today): ``SystemEarlyStopping.complete_sample``.

Each call's event-loop time is the time spent executing the coroutine's own steps on the loop
(every resumption is timed by a wrapping awaitable; time awaiting the worker thread is not loop
time). The wall time per call is printed beside it. Workload: a SQLite ledger file (WAL,
synchronous=FULL) with the betting-wor boundary over 200 planned tasks; the two systems complete
the tasks in planned order, alternately, so every baseline sample completes a pair and triggers a
look (the two systems give the same outcomes: the boundary is not crossed, the looks go on to the
end, each over more pairs than the one before).
Target: median event-loop time per ``complete_sample`` < 5 ms (it was about 31 ms on the loop).

Run from the repository root: ``PYTHONPATH=src python -m benchmarks.inspect_complete_sample [--tasks 200] [--quick]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Generator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import anyio
import numpy as np


class LoopTimed:
    """Await a coroutine, adding the time each of its steps runs on the event loop to ``held``."""

    def __init__(self, coro: Awaitable[Any]) -> None:
        self.coro = coro
        self.held = 0.0

    def __await__(self) -> Generator[Any, Any, Any]:
        steps = self.coro.__await__()
        value: Any = None
        error: BaseException | None = None
        while True:
            start = time.perf_counter()
            try:
                request = steps.throw(error) if error is not None else steps.send(value)
            except StopIteration as done:
                self.held += time.perf_counter() - start
                return done.value
            self.held += time.perf_counter() - start
            try:
                value, error = (yield request), None
            except BaseException as exc:  # handed back to the coroutine, as await does
                value, error = None, exc


def _setup(folder: Path, n: int) -> tuple[Any, Any, list[Any]]:
    from inspect_ai.dataset import Sample

    import stopwise
    from stopwise.inspect import paired_early_stopping

    ids = [f"q{i:03d}" for i in range(n)]
    policy = stopwise.Policy.paper(decision={"boundary": "betting-wor"})
    tested, baseline = paired_early_stopping(
        f"sqlite:///{folder / 'ledger.db'}", "bench", tested="tested", baseline="baseline", policy=policy,
        universe=stopwise.TaskUniverse(ids), pace=None,
    )
    samples = [Sample(input="q", target="1", id=i) for i in ids]
    for manager in (tested, baseline):
        role = manager.role
        spec = SimpleNamespace(task=role, eval_id=f"bench-{role}", model="mockllm/model", run_id="bench", scorers=[])
        manager.comparison.start(role, cast(Any, spec), samples, 1)  # the fields start reads, not a whole EvalSpec
    return tested, baseline, ids


def _scores(right: bool) -> dict[str, Any]:
    from inspect_ai.scorer import SampleScore, Score

    return {"match": SampleScore(score=Score(value="C" if right else "I"))}


async def _run(folder: Path, n: int, offload: bool) -> tuple[list[float], list[float], int]:
    tested, baseline, ids = _setup(folder, n)
    rng = np.random.default_rng(20)
    same = rng.random(n) < 0.7  # no difference: the boundary is not crossed, every pair is looked at
    right = {"tested": same, "baseline": same}
    held: list[float] = []
    wall: list[float] = []
    for i, task in enumerate(ids):
        for manager in (tested, baseline):
            scores = _scores(bool(right[manager.role][i]))
            call: Callable[[], Awaitable[None]]
            if offload:
                def call(m: Any = manager, t: str = task, s: dict[str, Any] = scores) -> Awaitable[None]:
                    return m.complete_sample(t, 1, s)
            else:
                async def call(m: Any = manager, t: str = task, s: dict[str, Any] = scores) -> None:
                    m.comparison.complete(m.role, t, 1, s)  # the synchronous path: on the loop
            timed = LoopTimed(call())
            start = time.perf_counter()
            await timed
            wall.append(time.perf_counter() - start)
            held.append(timed.held)
    return held, wall, tested.comparison.looks


def _ms(values: list[float], q: float) -> float:
    return float(np.quantile(np.asarray(values), q) * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200, help="planned tasks (two complete_sample calls each)")
    parser.add_argument("--quick", action="store_true", help="20 planned tasks: seconds, a check that the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.tasks = 20
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, offload in (("on the loop (synchronous, before)", False), ("off the loop (to_thread, now)", True)):
            folder = Path(tmp) / ("thread" if offload else "sync")
            folder.mkdir()
            results[label] = anyio.run(_run, folder, args.tasks, offload)
    print(f"complete_sample: {2 * args.tasks} calls per path, SQLite ledger, betting-wor over {args.tasks} planned tasks")
    print(f"{'path':<36} {'loop median':>12} {'loop p90':>10} {'wall median':>12} {'wall p90':>10} {'looks':>6}")
    for label, (held, wall, looks) in results.items():
        print(f"{label:<36} {_ms(held, 0.5):>9.3f} ms {_ms(held, 0.9):>7.3f} ms {_ms(wall, 0.5):>9.3f} ms "
              f"{_ms(wall, 0.9):>7.3f} ms {looks:>6}")
    (sync_held, _, _), (thread_held, _, _) = results.values()
    ratio = statistics.median(sync_held) / statistics.median(thread_held)
    print(f"event-loop time per call, median: {ratio:.0f}x less off the loop "
          f"(target: median < 5 ms on the loop: {'met' if _ms(thread_held, 0.5) < 5 else 'NOT met'})")


if __name__ == "__main__":
    main()
