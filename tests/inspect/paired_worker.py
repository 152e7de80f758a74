"""One system of a paired comparison in its own OS process, on a shared ledger (issue 20).

The tests start two of these, one per system, on one ledger (SQLite file or PostgreSQL database):
each builds the paired managers the documented way, keeps the one of its system and runs a real
Inspect evaluation of the docs example's mock system. Nothing is shared between the two processes
but the ledger.

    python paired_worker.py LEDGER_URL ROLE LOG_DIR BARRIER_DIR N [N_MINE DELAY]

The two processes wait for each other at BARRIER_DIR (a file per role) before their evaluations
start, so that their samples interleave (as two workers started together would). The last line of
stdout is a JSON summary of the run. ``N_MINE`` (default N) is the size of this worker's dataset (a
worker given other sample ids than its partner's fails at start), ``DELAY`` seconds it waits after the
barrier (default 0).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("inspect_live_example", REPO / "docs" / "examples" / "inspect_live.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    import anyio
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, TaskState, generate, solver

    import stopwise
    from stopwise.inspect import paired_early_stopping, planned_order

    url, role, log_dir, barrier, n = argv[:5]
    mine, delay = (int(argv[5]), float(argv[6])) if len(argv) > 6 else (int(n), 0.0)
    example = _example()
    policy_file = Path(barrier) / "policy.toml"
    if not policy_file.exists():
        policy_file.write_text(example.POLICY_TOML)
    policy = stopwise.load_policy(policy_file)
    dataset, universe = planned_order(example.questions(mine), policy, group="group")
    managers = paired_early_stopping(
        url, "ev", tested="tested", baseline="baseline", policy=policy, universe=universe, refresh=0.0
    )
    manager = managers[0] if role == "tested" else managers[1]

    @solver
    def think() -> Any:  # a few milliseconds per sample, as a model call would take
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            await anyio.sleep(0.01)
            return state

        return solve

    task = Task(
        dataset=dataset,
        solver=[think(), generate()],
        scorer=match(),
        model=example.mock_system(role, 0.90 if role == "tested" else 0.55),
        early_stopping=manager,
        name=role,
    )
    (Path(barrier) / role).touch()
    deadline = time.monotonic() + 120
    while not all((Path(barrier) / r).exists() for r in ("tested", "baseline")):
        if time.monotonic() > deadline:
            print("the other worker never started", file=sys.stderr)
            return 3
        time.sleep(0.02)
    time.sleep(delay)
    (log,) = eval(task, max_samples=4, display="none", log_dir=log_dir)
    summary = log.results.early_stopping if log.results is not None else None
    print(
        json.dumps(
            {
                "status": log.status,
                "error": None if log.error is None else log.error.message,
                "ran": sorted(str(s.id) for s in log.samples or []),
                "skipped": [] if summary is None else sorted(str(s.id) for s in summary.early_stops),
                "reasons": [] if summary is None else sorted({s.reason.split(":")[0] for s in summary.early_stops}),
                "metadata": None if summary is None else summary.metadata,
                "looks": manager.comparison.looks,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
