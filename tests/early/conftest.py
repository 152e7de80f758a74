"""Synthetic trajectories with a learnable signal, and a small fitted model shared by the early tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from stopwise.early import DualHeadClassifier, EarlyOutcomeModel
from stopwise.records import Step, Trajectory

SMALL = {
    "n_components": 4, "min_df": 2, "min_steps": 5,
    "classifier": DualHeadClassifier(min_child_samples=20, n_estimators=60, early_stopping_rounds=20),
}
"""Model settings small enough for tests (the paper's defaults need thousands of prefixes)."""


def make_runs(n_agents: int = 4, n_tasks: int = 12, seed: int = 0, min_len: int = 8, max_len: int = 20) -> list[Trajectory]:
    """Runs whose failures show tool errors and whose successes edit and pass tests, with noise."""
    rng = np.random.default_rng(seed)
    runs = []
    for a in range(n_agents):
        for t in range(n_tasks):
            ok = bool(rng.random() < 0.3 + 0.4 * (t % 3) / 2)
            T = int(rng.integers(min_len, max_len + 1))
            steps = []
            for k in range(T):
                r = rng.random()
                if ok and r < 0.3:
                    steps.append(Step(action=f"I will fix it.\nedit_file({{\"path\": \"src/m{t}.py\"}})", tool="edit_file", observation="file updated"))
                elif ok and r < 0.5:
                    steps.append(Step(action="python -m pytest -q", tool="bash", observation=f"{k} passed in 0.1s"))
                elif not ok and r < 0.45:
                    steps.append(Step(action=f"read_file({{\"path\": \"src/m{t}.py\"}})", tool="read_file", observation="[isError] permission denied"))
                else:
                    steps.append(Step(action=f"Looking around.\nsearch_code({{\"query\": \"task {t} item {k % 4}\"}})", tool="search_code", observation=f"found {k} matches in module {t}"))
            if rng.random() < 0.5:
                steps.append(Step(action="All done." if ok else "I could not finish.", observation=""))
            runs.append(
                Trajectory(
                    agent=f"agent-{a}",
                    task=f"task-{t}",
                    attempt=1,
                    outcome=int(ok),
                    task_text=f"Repair module {t} of the service so that the checks in group {t % 3} pass.",
                    steps=steps,
                    meta={"service": f"svc-{a % 2}", "model": f"m{a // 2}", "error_message": None if ok else "boom", "turn_count": T},
                )
            )
    return runs


@pytest.fixture(scope="session")
def runs() -> list[Trajectory]:
    """48 synthetic runs: 4 agents x 12 tasks."""
    return make_runs()


@pytest.fixture(scope="session")
def run_factory() -> Callable[..., list[Trajectory]]:
    """The generator itself, for tests that need other sizes or seeds."""
    return make_runs


@pytest.fixture(scope="session")
def small_params() -> dict[str, object]:
    """Small-model settings."""
    return dict(SMALL)


@pytest.fixture(scope="session")
def fitted(runs: list[Trajectory]) -> EarlyOutcomeModel:
    """A small model fitted on agents 0-2 of the synthetic runs."""
    return EarlyOutcomeModel(**SMALL).fit([r for r in runs if r.agent != "agent-3"])  # type: ignore[arg-type]
