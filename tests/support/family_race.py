"""The four mock systems of the family-race tests and one race run (shared by the in-process test and the worker).

``best`` answers right about 90 % of the time, ``tied-a`` and ``tied-b`` give the same answers (about 55 %: two
Model objects of one scripted answer key, tied on every task), ``worse`` about 15 %. The policy is the docs
example's (betting-wor on a seeded coverage-aware order) with the default family: every ordered pair at FWER 5 %.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

ACCURACY = {"best": 0.9, "tied-a": 0.55, "tied-b": 0.55, "worse": 0.15}
ANSWERS = {"best": "best", "tied-a": "tied", "tied-b": "tied", "worse": "worse"}
"""The answer key of each system's mock (tied-a and tied-b share one: the same answer on every question)."""
N_QUESTIONS = 120


def models(example: ModuleType) -> dict[str, Any]:
    """``{system: Model}``: four ``mockllm/model`` objects with scripted answers."""
    return {system: example.mock_system(ANSWERS[system], ACCURACY[system]) for system in ACCURACY}


def planned(example: ModuleType, folder: Path) -> tuple[Any, Any, Any]:
    """(policy, dataset in planned order, universe) of the race; the policy file is written to ``folder``."""
    import stopwise
    from stopwise.inspect import planned_order

    policy_file = folder / "policy.toml"
    if not policy_file.exists():
        policy_file.write_text(example.POLICY_TOML)
    policy = stopwise.load_policy(policy_file)
    dataset, universe = planned_order(example.questions(N_QUESTIONS), policy, group="group")
    return policy, dataset, universe


def system_task(dataset: Any, system: str, model: Any, manager: Any, solvers: list[Any] | None = None) -> Any:
    """One system's Task (its model and its manager; ``solvers`` run before the model's ``generate()``)."""
    from inspect_ai import Task
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    return Task(dataset=dataset, solver=[*(solvers or []), generate()], scorer=match(), model=model, early_stopping=manager, name=system)
