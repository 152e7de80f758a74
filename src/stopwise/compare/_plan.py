"""The pre-registered task order of a live evaluation, drawn from the policy before any outcome exists.

It belongs to the decision layer: ``stopwise order`` writes it and ``stopwise decide --tasks`` reads it
back as the task universe.

With ``boundary = "betting-wor"``, the coverage rule and the ``top-up`` design (the default; policy
``[betting] design``), the order drawn is a uniformly random permutation pi of the planned tasks whatever
``[order] kind`` says: the pooled betting process is valid on pi's prefix, and coverage is met by topping
up once the boundary is crossed (:mod:`stopwise.compare._topup`). Every order is stamped with the kind
actually drawn, its seed and a digest (:class:`stopwise.records.OrderStamp`: columns ``order_kind``,
``order_seed``, ``order_sha256``), which ``decide`` checks (:func:`order_check`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from stopwise._vocabulary import CoverageRule
from stopwise.compare._coverage import (
    COVERAGE_SLACK,
    coverage_enforced,
    feasible_prefixes,
    required_counts,
    requirement_reach,
)
from stopwise.compare._orders import cost_first_orders, coverage_aware_orders, uniform_orders
from stopwise.compare._pairing import task_groups
from stopwise.errors import ComparisonError, PolicyError
from stopwise.records import STAMP_COLUMNS, OrderStamp, Policy, TaskUniverse, order_digest

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "STRATIFIED_RETIRED",
    "covered_prefixes",
    "drawn_kind",
    "order_check",
    "order_universe",
    "retired_order",
    "task_order",
    "top_up_design",
]

RANDOM_KINDS = ("uniform", "coverage-aware")
"""Order kinds that are seeded random permutations (uniform, or uniform within groups)."""


def top_up_design(policy: Policy) -> bool:
    """The betting boundary runs the top-up design: ``betting-wor``, the coverage rule and ``[betting] design = "top-up"``.

    Examples
    --------
    >>> from stopwise import Policy
    >>> from stopwise.compare._plan import top_up_design
    >>> top_up_design(Policy()), top_up_design(Policy(decision={"boundary": "betting-wor"}))
    (False, True)
    """
    return (
        policy.decision.boundary == "betting-wor"
        and coverage_enforced(policy.coverage.rule)
        and policy.betting.design == "top-up"
    )


def drawn_kind(policy: Policy) -> str:
    """The order kind ``stopwise order`` draws for a policy: ``uniform`` under the top-up design, else ``[order] kind``.

    Examples
    --------
    >>> from stopwise import Policy
    >>> from stopwise.compare._plan import drawn_kind
    >>> drawn_kind(Policy.paper()), drawn_kind(Policy.paper(decision={"boundary": "betting-wor"}))
    ('coverage-aware', 'uniform')
    >>> drawn_kind(Policy.paper(decision={"boundary": "betting-wor"}, coverage={"rule": "none"}))
    'coverage-aware'
    """
    return "uniform" if top_up_design(policy) else policy.order.kind


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
        Its ``order.kind`` and ``order.seed`` choose the order (default: ``Policy()``, uniform;
        :meth:`~stopwise.records.Policy.paper` draws coverage-aware orders); under the betting boundary's top-up design the order is uniform
        (:func:`drawn_kind`). ``neyman`` needs completed outcomes and is a replay-only order.
    cost_system : str, optional
        For ``cost-first``: the system whose ``cost_usd`` ranks the tasks (cheapest first).

    Returns
    -------
    pandas.DataFrame
        ``position`` (1-based), ``task``, ``group`` and ``covered``: whether the first
        ``position`` tasks meet the policy's coverage rule (``False`` where it is impossible at that count);
        then the provenance ``order_kind``, ``order_seed`` and ``order_sha256`` (the same on every row).

    Examples
    --------
    >>> import pandas as pd
    >>> from stopwise import Policy
    >>> from stopwise.compare import task_order
    >>> tasks = pd.DataFrame({"task": [f"t{i}" for i in range(10)], "group": ["a"] * 6 + ["b"] * 4})
    >>> order = task_order(tasks, Policy.paper())  # the paper's coverage-aware order
    >>> order["group"].head(4).tolist(), order["covered"].head(4).tolist()
    (['a', 'b', 'a', 'a'], [False, True, True, True])
    """
    import pandas as pd

    policy = policy if policy is not None else Policy()
    if policy.decision.boundary == "betting-wor" and policy.betting.design == "stratified" and coverage_enforced(policy.coverage.rule):
        raise PolicyError(f'[betting] design = "stratified": {STRATIFIED_RETIRED}; use design = "top-up" (the default)')
    column = policy.coverage.group_column
    if "task" not in tasks.columns:
        raise ComparisonError(f"the task list needs a 'task' column; found {', '.join(map(str, tasks.columns))}")
    frame = tasks.copy()
    frame["task"] = frame["task"].astype(str).str.strip()
    if (frame["task"] == "").any() or frame["task"].isna().any():
        raise ComparisonError("every row of the task list needs a non-empty task")
    if column in frame.columns:  # an empty group stays empty (fillna("") on an all-empty float column warns in pandas 3)
        frame["group"] = frame[column].astype(str).where(frame[column].notna(), "").str.strip()
    else:
        frame["group"] = ""
    labels = task_groups(frame["task"], frame["group"], source="the task list")
    unique = pd.DataFrame({"task": sorted(frame["task"].unique())})
    unique["group"] = labels.reindex(unique["task"], fill_value="").to_numpy(dtype=object)
    kind, seed = drawn_kind(policy), policy.order.seed
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
    _, codes = np.unique(result["group"].to_numpy(dtype=object), return_inverse=True)
    k = np.arange(1, len(result) + 1)
    covered = covered_prefixes(codes.reshape(-1), rule=policy.coverage.rule, slack=policy.coverage.slack)
    table = pd.DataFrame({"position": k, "task": result["task"], "group": result["group"], "covered": covered})
    digest = order_digest(kind, seed, TaskUniverse(table["task"].tolist(), table["group"].tolist()).sha256())
    table["order_kind"], table["order_seed"], table["order_sha256"] = kind, int(seed), digest
    return table


def covered_prefixes(codes: np.ndarray, *, rule: CoverageRule = "proportional", slack: float = COVERAGE_SLACK) -> np.ndarray:
    """Whether each prefix of a planned order meets a coverage rule, in O(N) memory (no (N, G) table).

    ``codes[i]`` is the group (0..G-1) of the task at position i + 1. Prefix k is covered when
    ``sum_g r_g(k) <= k`` and every group has at least ``r_g(k)`` tasks among the first k, with
    ``r_g(k) = max(1, min(n_g, floor(k n_g / N)))`` (:func:`stopwise.compare.required_counts`; the other rules are
    checked in blocks of prefixes, :func:`_covered_in_blocks`). Group g's
    requirement reaches r at ``k = ceil(r N / n_g)`` (r >= 2), so it fails exactly on the prefixes from
    there to one before the position of its r-th task; these N intervals are summed in a difference array
    (no (N, G) table, whatever the number of groups).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._plan import covered_prefixes
    >>> covered_prefixes(np.array([0, 1, 0, 0, 1, 0])).tolist()
    [False, True, True, True, True, True]
    >>> covered_prefixes(np.array([0, 0, 1])).tolist()
    [False, False, True]
    >>> covered_prefixes(np.array([0, 0, 1]), rule="every-group").tolist()
    [False, False, True]
    """
    codes = np.asarray(codes, dtype=np.int64)
    n = len(codes)
    sizes = np.bincount(codes)
    if rule not in ("proportional", "none"):  # the proportional counts are what ``none`` records
        return _covered_in_blocks(codes, sizes, rule, slack)
    position = np.argsort(codes, kind="stable")  # 0-based positions, group after group, in order: the j-th of g
    reach = requirement_reach(sizes)  # r_g(k) >= j from k = reach on ...
    until = np.r_[reach[1:] - 1, n]
    until[np.cumsum(sizes) - 1] = n  # ... and r_g(k) = j until the next entry's reach (the last one to N)
    fail_end = np.minimum(until, position)  # the j-th task of g sits at position + 1: failing while k < it
    failing = fail_end >= reach
    change = np.bincount(reach[failing], minlength=n + 2) - np.bincount(fail_end[failing] + 1, minlength=n + 2)
    return np.asarray(feasible_prefixes(sizes) & (np.cumsum(change)[1 : n + 1] == 0), dtype=bool)


def _covered_in_blocks(codes: np.ndarray, sizes: np.ndarray, rule: CoverageRule, slack: float) -> np.ndarray:
    """:func:`covered_prefixes` for any rule: the prefixes in blocks of about 2^20 counts (memory bounded by the block)."""
    n, n_groups = len(codes), len(sizes)
    covered = np.empty(n, dtype=bool)
    counts = np.zeros(n_groups, dtype=np.int64)
    block = max(1, 2**20 // max(n_groups, 1))
    for start in range(0, n, block):
        part = codes[start : start + block]
        onehot = np.zeros((len(part), n_groups), dtype=np.int64)
        onehot[np.arange(len(part)), part] = 1
        seen = counts + np.cumsum(onehot, axis=0)
        k = np.arange(start + 1, start + len(part) + 1)
        required = required_counts(sizes, k, rule=rule, slack=slack)
        covered[start : start + len(part)] = (required.sum(axis=1) <= k) & (seen >= required).all(axis=1)
        counts = seen[-1]
    return covered


STRATIFIED_RETIRED = (
    "the stratified process is retired (issue 33: on SWE-bench Verified it resolved 44.6 % of runs by 20 % of the tasks "
    "against 69.2 % for the top-up design with the tolerant coverage rule; docs/live_looks.md)"
)


def retired_order(policy: Policy, universe: TaskUniverse, problem: str | None, kind: str | None) -> str | None:
    """Why the betting boundary refuses this planned order (None when it decides on it).

    The pooled process, the only betting process ``decide`` runs (issue 33), needs a uniformly random permutation:
    ``stopwise order``'s (stamped or the policy's own seeded draw, ``kind`` ``uniform``) or any random order of one
    group. Refused: ``[betting] design = "stratified"`` under a coverage rule; a verified coverage-aware order of
    several groups; an order that fails the provenance check (``problem``) unless the universe was built in Python
    without a stamp (then decided with a warning). ``[betting] order_check = "warn"`` refuses too: the stratified
    process it fell back to is retired.

    Examples
    --------
    >>> from stopwise import Policy, TaskUniverse
    >>> from stopwise.compare._plan import retired_order
    >>> betting = Policy(decision={"boundary": "betting-wor"})
    >>> universe = TaskUniverse(["t1", "t2", "t3"], ["a", "b", "b"])
    >>> retired_order(betting, universe, None, "uniform") is None
    True
    >>> retired_order(betting, universe, None, "coverage-aware")[:55]
    'the planned order is a coverage-aware order of 2 groups'
    """
    if policy.betting.design == "stratified" and coverage_enforced(policy.coverage.rule):
        return f'[betting] design = "stratified": {STRATIFIED_RETIRED}; use design = "top-up" (the default) and a uniform order from `stopwise order`'
    if problem is not None:
        if universe.stamp is None and not universe.from_file:
            return None  # built in Python: decided with the pooled process and an order-provenance warning
        warn = (
            '; [betting] order_check = "warn" no longer decides on such an order: the stratified process it fell back to is retired (issue 33)'
            if policy.betting.order_check == "warn" else ""
        )
        return (
            f"{problem}: the betting-wor boundary's guarantee needs a uniformly random permutation of the planned tasks "
            f"written by `stopwise order`; write the order with it{warn}"
        )
    groups = len(universe.group_sizes)
    if kind == "coverage-aware" and groups > 1:
        return (
            f"the planned order is a coverage-aware order of {groups} groups: {STRATIFIED_RETIRED}; write a uniform order "
            '(`stopwise order` with [betting] design = "top-up", the default: coverage is met by the top-up)'
        )
    return None


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
    stamp = None
    if all(c in ranked.columns for c in STAMP_COLUMNS) and len(ranked):
        first = ranked.iloc[0]
        stamp = OrderStamp(str(first["order_kind"]), int(first["order_seed"]), str(first["order_sha256"]))
    return TaskUniverse(ranked["task"].astype(str).tolist(), ranked["group"].astype(str).tolist(), stamp=stamp)


def order_check(universe: TaskUniverse, kinds: tuple[str, ...]) -> str | None:
    """Why the planned order is not a seeded random permutation of one of ``kinds``; None when it is.

    The universe must carry a stamp (:attr:`stopwise.TaskUniverse.stamp`) of one of ``kinds`` whose
    digest matches, and the stamped kind and seed must redraw exactly this order from its task set
    (:func:`task_order` sorts the tasks before the seeded draw): an edited, reordered or hand-written
    order fails.

    Examples
    --------
    >>> import pandas as pd
    >>> from stopwise import Policy, TaskUniverse
    >>> from stopwise.compare._plan import order_check, order_universe, task_order
    >>> tasks = pd.DataFrame({"task": [f"t{i}" for i in range(10)], "group": ["a"] * 6 + ["b"] * 4})
    >>> universe = order_universe(task_order(tasks, Policy(order={"kind": "uniform", "seed": 4})))
    >>> order_check(universe, ("uniform",)) is None
    True
    >>> order_check(universe, ("coverage-aware",))
    "the planned order is a 'uniform' order; this design needs coverage-aware"
    >>> order_check(TaskUniverse(universe.tasks.tolist()[::-1], universe.groups.tolist()[::-1]), ("uniform",))
    'the planned order carries no provenance stamp (not written by `stopwise order`)'
    """
    stamp = universe.stamp
    if stamp is None:
        return "the planned order carries no provenance stamp (not written by `stopwise order`)"
    if stamp.kind not in kinds:
        return f"the planned order is a {stamp.kind!r} order; this design needs {' or '.join(kinds)}"
    if not stamp.matches(universe):
        return "the planned order does not match its stamped digest (edited after `stopwise order` wrote it)"
    key = (universe.sha256(), stamp)
    if key not in _REDRAWN:
        if len(_REDRAWN) >= _REDRAWN_MAX:
            _REDRAWN.pop(next(iter(_REDRAWN)))
        _REDRAWN[key] = _redraw_problem(universe, stamp)
    return _REDRAWN[key]


_REDRAWN: dict[tuple[str, OrderStamp], str | None] = {}
"""The redraw check's answer per (universe sha256, stamp): a live evaluation decides on the same universe
at every look, and the seeded redraw (a pandas sort and a draw over every task) cost more than the look."""
_REDRAWN_MAX = 64


def _redraw_problem(universe: TaskUniverse, stamp: OrderStamp) -> str | None:
    """Whether the stamped kind and seed redraw exactly this order from its task set (None when they do)."""
    import pandas as pd

    assert universe.tasks is not None and universe.groups is not None
    frame = pd.DataFrame({"task": universe.tasks, "group": universe.groups})
    policy = Policy.model_validate({"order": {"kind": stamp.kind, "seed": stamp.seed}})
    redrawn = task_order(frame, policy)["task"].tolist()
    if redrawn != universe.tasks.tolist():
        return f"the planned order is not the {stamp.kind!r} draw of seed {stamp.seed} of its tasks"
    return None
