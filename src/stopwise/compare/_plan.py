"""The pre-registered task order of a live evaluation, drawn from the policy before any outcome exists.

It belongs to the decision layer: ``stopwise order`` writes it and ``stopwise decide --tasks`` reads it
back as the task universe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from stopwise.compare._coverage import required_counts
from stopwise.compare._orders import cost_first_orders, coverage_aware_orders, uniform_orders
from stopwise.compare._pairing import task_groups
from stopwise.errors import ComparisonError, PolicyError
from stopwise.records import Policy, TaskUniverse

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["order_universe", "task_order"]


def task_order(tasks: pd.DataFrame, policy: Policy | None = None, *, cost_system: str | None = None) -> pd.DataFrame:
    """The order in which a live evaluation should run its tasks, fixed by the policy in advance.

    The same task set, order kind and ``policy.order.seed`` always give the same order (tasks are
    sorted by name before the seeded draw, so the input's row order does not matter).

    Parameters
    ----------
    tasks : pandas.DataFrame
        A ``task`` column and, for the coverage rule, the policy's group column; outcome rows
        (one per system, task and attempt) are accepted and reduced to their distinct tasks.
    policy : Policy, optional
        Its ``order.kind`` and ``order.seed`` choose the order (default: the primary policy,
        coverage-aware). ``neyman`` needs completed outcomes and is a replay-only order.
    cost_system : str, optional
        For ``cost-first``: the system whose ``cost_usd`` ranks the tasks (cheapest first).

    Returns
    -------
    pandas.DataFrame
        ``position`` (1-based), ``task``, ``group`` and ``covered``: whether the first
        ``position`` tasks meet the coverage rule (``False`` where it is impossible at that count).

    Examples
    --------
    >>> import pandas as pd
    >>> from stopwise.compare import task_order
    >>> tasks = pd.DataFrame({"task": [f"t{i}" for i in range(10)], "group": ["a"] * 6 + ["b"] * 4})
    >>> order = task_order(tasks)
    >>> order["group"].head(4).tolist(), order["covered"].head(4).tolist()
    (['a', 'b', 'a', 'a'], [False, True, True, True])
    """
    import pandas as pd

    policy = policy if policy is not None else Policy()
    column = policy.coverage.group_column
    if "task" not in tasks.columns:
        raise ComparisonError(f"the task list needs a 'task' column; found {', '.join(map(str, tasks.columns))}")
    frame = tasks.copy()
    frame["task"] = frame["task"].astype(str).str.strip()
    if (frame["task"] == "").any() or frame["task"].isna().any():
        raise ComparisonError("every row of the task list needs a non-empty task")
    frame["group"] = frame[column].fillna("").astype(str).str.strip() if column in frame.columns else ""
    labels = task_groups(frame["task"], frame["group"], source="the task list")
    unique = pd.DataFrame({"task": sorted(frame["task"].unique())})
    unique["group"] = unique["task"].map(labels).fillna("")
    kind, seed = policy.order.kind, policy.order.seed
    if kind == "uniform":
        order = uniform_orders(len(unique), 1, rng=seed)[0]
    elif kind == "coverage-aware":
        order = coverage_aware_orders(unique["group"].to_numpy(dtype=str), 1, rng=seed)[0]
    elif kind == "cost-first":
        if cost_system is None or "cost_usd" not in frame.columns or "system" not in frame.columns:
            raise PolicyError("a cost-first order needs outcome rows with system and cost_usd columns and the system to rank by")
        own = frame[frame["system"].astype(str) == cost_system]
        costs = pd.to_numeric(own["cost_usd"], errors="coerce").groupby(own["task"]).sum(min_count=1)
        costs = costs.reindex(unique["task"])
        if costs.isna().any():
            missing = costs[costs.isna()].index[:3].tolist()
            raise ComparisonError(f"cost-first order: {cost_system!r} has no cost_usd for {int(costs.isna().sum())} task(s), e.g. {missing}")
        order = cost_first_orders(costs.to_numpy(dtype=float), 1, rng=seed)[0]
    else:
        raise PolicyError(f"order kind {kind!r} needs completed outcomes (group variances); it is a replay-only order")
    result = unique.iloc[order].reset_index(drop=True)
    _, codes = np.unique(result["group"].to_numpy(dtype=str), return_inverse=True)
    seen = np.cumsum(np.eye(codes.max() + 1, dtype=np.int64)[codes], axis=0)
    k = np.arange(1, len(result) + 1)
    required = required_counts(np.bincount(codes), k)
    covered = (required.sum(axis=1) <= k) & (seen >= required).all(axis=1)
    return pd.DataFrame({"position": k, "task": result["task"], "group": result["group"], "covered": covered})


def order_universe(order: pd.DataFrame) -> TaskUniverse:
    """The task universe a :func:`task_order` table plans (tasks in position order, with groups).

    Examples
    --------
    >>> import pandas as pd
    >>> from stopwise.compare import order_universe, task_order
    >>> tasks = pd.DataFrame({"task": [f"t{i}" for i in range(10)], "group": ["a"] * 6 + ["b"] * 4})
    >>> order_universe(task_order(tasks)).group_sizes
    {'a': 6, 'b': 4}
    """
    ranked = order.sort_values("position", kind="stable")
    return TaskUniverse(ranked["task"].astype(str).tolist(), ranked["group"].astype(str).tolist())
