"""One system of a family race in its own OS process, on a shared ledger (issue 32 item 2).

The test starts one of these per system on one ledger: each builds the race the documented way
(:func:`stopwise.inspect.family_early_stopping`), keeps its own system's manager and runs a real Inspect
evaluation of that system's mock (:mod:`tests.support.family_race`). Nothing is shared between the processes
but the ledger.

    python family_worker.py LEDGER_URL SYSTEM LOG_DIR BARRIER_DIR

The workers wait for each other at BARRIER_DIR (a file per system) before their evaluations start. The last
line of stdout is a JSON summary: the log's location and the manager's metadata.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # tests.support and tests.conftest, as pytest sees them


def main(argv: list[str]) -> int:
    import anyio
    from inspect_ai import eval
    from inspect_ai.solver import Generate, TaskState, solver
    from tests.conftest import load_example
    from tests.support import family_race

    from stopwise.inspect import family_early_stopping

    url, system, log_dir, barrier = argv
    example = load_example("inspect_live.py")
    policy, dataset, universe = family_race.planned(example, Path(barrier))
    managers = family_early_stopping(url, "race", systems=list(family_race.ACCURACY), policy=policy, universe=universe,
                                     refresh=0.0)

    @solver
    def think() -> Any:  # a few milliseconds per sample, as a model call would take
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            await anyio.sleep(0.01)
            return state

        return solve

    task = family_race.system_task(dataset, system, family_race.models(example)[system], managers[system], [think()])
    (Path(barrier) / system).touch()
    deadline = time.monotonic() + 120
    while not all((Path(barrier) / s).exists() for s in family_race.ACCURACY):
        if time.monotonic() > deadline:
            print("another worker never started", file=sys.stderr)
            return 3
        time.sleep(0.02)
    (log,) = eval(task, max_samples=4, display="none", log_dir=log_dir)
    summary = log.results.early_stopping if log.results is not None else None
    print(json.dumps({"status": log.status, "location": log.location,
                      "metadata": None if summary is None else summary.metadata}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
