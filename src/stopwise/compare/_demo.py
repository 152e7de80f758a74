"""The demo comparison: one seeded synthetic benchmark, one task order, a decision at six budgets.

What ``stopwise demo`` shows (the command only prints): the two strongest systems of
:func:`stopwise.records.synthetic_benchmark` compared with :func:`stopwise.decide`, each budget treated as
the limit, observing the first tasks of one seeded uniformly random order of the planned tasks, under the default
policy (``Policy()``: the ``exact-wor`` one-look test, whose sample that order is; issue 35) with the ``tolerant``
coverage rule, the rule a uniform order meets up to sampling noise (the default ``proportional`` quota asks every prefix
for its exact share of each group, which only a coverage-aware order gives).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from stopwise.compare._coverage import budget_task_count
from stopwise.compare._decide import decide
from stopwise.compare._orders import uniform_orders
from stopwise.records import DecisionRecord, Policy, TaskUniverse, synthetic_benchmark

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEMO_BUDGETS", "DemoComparison", "demo_comparison"]

DEMO_BUDGETS = (0.05, 0.10, 0.25, 0.50, 0.75, 1.00)
"""The budgets of the demo's six decisions (fractions of the planned tasks)."""


@dataclass(frozen=True)
class DemoComparison:
    """The demo's synthetic record and its decisions."""

    rows: pd.DataFrame
    """The synthetic outcome rows (every system)."""
    tested: str
    """System A: the last system by name."""
    baseline: str
    """System B: the one before it."""
    universe: TaskUniverse
    """The planned tasks in the seeded uniform order, with their groups."""
    decisions: tuple[tuple[float, DecisionRecord], ...]
    """(budget, decision record) at each of :data:`DEMO_BUDGETS`."""


def demo_comparison(seed: int = 0, n_tasks: int = 400, n_systems: int = 8) -> DemoComparison:
    """The comparison ``stopwise demo`` shows, computed.

    Parameters
    ----------
    seed : int, optional
        Seed of the synthetic record and of the task order.
    n_tasks, n_systems : int, optional
        Size of the synthetic benchmark (:func:`stopwise.records.synthetic_benchmark` checks them).

    Returns
    -------
    DemoComparison

    Examples
    --------
    >>> from stopwise.compare import demo_comparison
    >>> demo = demo_comparison(seed=0, n_tasks=60, n_systems=3)
    >>> demo.tested, demo.baseline, [budget for budget, _ in demo.decisions]
    ('system-03', 'system-02', [0.05, 0.1, 0.25, 0.5, 0.75, 1.0])
    """
    rows = synthetic_benchmark(n_tasks, n_systems, rng=seed)
    names = sorted(rows["system"].unique())
    tested, baseline = names[-1], names[-2]
    tasks = rows.drop_duplicates("task").sort_values("task")
    order = uniform_orders(len(tasks), 1, rng=seed)[0]
    planned, groups = tasks["task"].to_numpy(dtype=str)[order], tasks["group"].to_numpy(dtype=str)[order]
    universe = TaskUniverse(planned.tolist(), groups.tolist())
    pair = rows[rows["system"].isin([tested, baseline])]
    decisions = []
    for budget in DEMO_BUDGETS:
        k = budget_task_count(len(planned), budget)
        view = pair[pair["task"].isin(planned[:k])]
        policy = Policy.model_validate({"budget": {"limit": budget}, "coverage": {"rule": "tolerant"}})
        decisions.append((budget, decide(view, tested, baseline, policy, universe=universe)))
    return DemoComparison(rows=rows, tested=tested, baseline=baseline, universe=universe, decisions=tuple(decisions))
