"""Small inputs of ``stopwise report`` pages, shared by the browser tests and ``benchmarks/report_weight.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from stopwise.records import Step, Trajectory, write_trajectories

__all__ = ["looked_ledger", "synthetic_runs"]


def synthetic_runs(path: Path, seed: int = 0) -> Path:
    """4 agents x 10 tasks of synthetic runs: failures show tool errors, successes edit and pass tests."""
    rng = np.random.default_rng(seed)
    runs = []
    for agent in range(4):
        for task in range(10):
            ok = bool(rng.random() < 0.5)
            steps = []
            for k in range(int(rng.integers(8, 16))):
                if ok and rng.random() < 0.5:
                    steps.append(Step(action="python -m pytest -q", tool="bash", observation=f"{k} passed in 0.1s"))
                elif not ok and rng.random() < 0.5:
                    steps.append(Step(action=f"read_file(src/m{task}.py)", tool="read_file", observation="[isError] permission denied"))
                else:
                    steps.append(Step(action=f"search_code(task {task} item {k % 4})", tool="search_code", observation=f"found {k} matches"))
            runs.append(Trajectory(agent=f"agent-{agent}", task=f"task-{task}", attempt=0, outcome=int(ok), task_text=f"Repair module {task}.", steps=steps))
    return write_trajectories(runs, path)


def looked_ledger(path: Path, boundary: str | None = None) -> list[str]:
    """A SQLite ledger at ``path``: evaluation ``nightly`` (system-08 vs system-01, 120 tasks), a look after every
    40 tasks and one more after the last; the actions of the four looks. ``boundary``: the policy's
    ``decision.boundary`` (default: the default policy's; ``betting-wor`` gives an interval at every look)."""
    from stopwise.ledger import open_ledger
    from stopwise.records import Policy, TaskUniverse, synthetic_benchmark

    rows = synthetic_benchmark(120, 8, rng=0)
    rows = rows[rows["system"].isin(["system-01", "system-08"])]
    tasks = sorted(rows["task"].unique())
    groups = rows.drop_duplicates("task").set_index("task").loc[tasks, "group"].tolist()
    with open_ledger(path) as ledger:
        policy = Policy() if boundary is None else Policy.model_validate({"decision": {"boundary": boundary}})
        ledger.register("nightly", policy=policy, universe=TaskUniverse(tasks, groups), tested="system-08", baseline="system-01")
        for k in (40, 80, 120):
            ledger.append("nightly", rows[rows["task"].isin(tasks[k - 40 : k])])
            ledger.decide("nightly")
        ledger.decide("nightly")  # a look after the decision
        return [link.record.action for link in ledger.decisions("nightly")]
