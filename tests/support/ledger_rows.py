"""Outcome rows of the ledger tests: 40 planned tasks in two groups, systems A (90 % solved) and B (30 %)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stopwise.records import TaskUniverse

TASKS = [f"t{i:03d}" for i in range(40)]
GROUPS = ["easy" if i % 2 else "hard" for i in range(40)]


def universe() -> TaskUniverse:
    return TaskUniverse(TASKS, GROUPS)


def rows_for(tasks: list[str], *, seed: int = 0) -> pd.DataFrame:
    """Outcome rows of A and B on ``tasks``: A solves 90 %, B 30 % (seeded), costs on some rows."""
    rng = np.random.default_rng(seed)
    index = [TASKS.index(t) for t in tasks]
    a = (rng.random(len(TASKS)) < 0.9).astype(float)[index]
    b = (rng.random(len(TASKS)) < 0.3).astype(float)[index]
    groups = [GROUPS[i] for i in index]
    return pd.DataFrame(
        {
            "system": ["A"] * len(tasks) + ["B"] * len(tasks),
            "task": tasks + tasks,
            "outcome": np.concatenate([a, b]),
            "group": groups + groups,
            "cost_usd": [0.25 if i % 2 == 0 else np.nan for i in index] * 2,
            "source": "test",
        }
    )
