"""Task orders: permutations, coverage-aware prefixes, Neyman shares, cost-first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stopwise import read_outcomes
from stopwise.compare import (
    budget_task_count,
    cost_first_orders,
    coverage_aware_orders,
    neyman_orders,
    required_counts,
    uniform_orders,
)
from stopwise.replay import DEFAULT_BUDGETS


def _group_counts(groups: np.ndarray, orders: np.ndarray, k: int) -> np.ndarray:
    labels, codes = np.unique(groups, return_inverse=True)
    return np.stack([(codes[orders[:, :k]] == g).sum(axis=1) for g in range(len(labels))], axis=1)


def _assert_permutations(orders: np.ndarray, n: int) -> None:
    assert (np.sort(orders, axis=1) == np.arange(n)).all()


@pytest.mark.data
def test_coverage_aware_orders_meet_the_rule_at_every_grid_budget(shared_data: Path) -> None:
    for name in ("swebench_lite", "swebench_verified", "terminal_bench_2"):
        rows = read_outcomes(shared_data / "records" / name / "outcomes.csv").to_frame()
        groups = rows.drop_duplicates("task").sort_values("task")["group"].to_numpy(dtype=str)
        orders = coverage_aware_orders(groups, 200, rng=1)
        _assert_permutations(orders, len(groups))
        sizes = np.unique(groups, return_counts=True)[1]
        checked = 0
        for budget in DEFAULT_BUDGETS:
            k = budget_task_count(len(groups), float(budget))
            required = required_counts(sizes, k)
            if required.sum() > k:
                continue  # impossible at this budget: the rule cannot be met by any order
            assert (_group_counts(groups, orders, k) >= required).all(), (name, budget)
            checked += 1
        assert checked >= 17, name  # only the smallest budgets can be impossible


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 25), min_size=1, max_size=8), st.integers(0, 2**31))
def test_coverage_aware_orders_meet_the_rule_at_every_prefix(sizes: list[int], seed: int) -> None:
    groups = np.repeat([f"g{i}" for i in range(len(sizes))], sizes)
    orders = coverage_aware_orders(groups, 5, rng=seed)
    _assert_permutations(orders, len(groups))
    for k in range(1, len(groups) + 1):
        required = required_counts(sizes, k)
        if required.sum() <= k:
            assert (_group_counts(groups, orders, k) >= required).all()


def test_uniform_orders_are_uniform() -> None:
    orders = uniform_orders(4, 24_000, rng=0)
    first = np.bincount(orders[:, 0], minlength=4) / 24_000
    np.testing.assert_allclose(first, 0.25, atol=0.01)  # 4 sd of a binomial share is about 0.011


def test_neyman_orders_follow_the_weights() -> None:
    groups = np.array(["a"] * 60 + ["b"] * 60)
    orders = neyman_orders(groups, {"a": 2.0, "b": 1.0}, 50, rng=0)
    _assert_permutations(orders, 120)
    share_a = (groups[orders[:, :30]] == "a").mean()
    assert share_a == pytest.approx(2 / 3, abs=0.04)
    zero = neyman_orders(groups, {"a": 1.0, "b": 0.0}, 5, rng=0)
    assert (groups[zero[:, :60]] == "a").all()


def test_cost_first_orders() -> None:
    costs = np.array([5.0, 1.0, 3.0, 1.0, 2.0])
    orders = cost_first_orders(costs, 200, rng=0)
    assert (np.diff(costs[orders], axis=1) >= 0).all()
    assert set(orders[:, 0]) == {1, 3}  # the tie is broken at random


def test_orders_are_seeded() -> None:
    groups = np.array(list("aabbbcccc"))
    assert (coverage_aware_orders(groups, 3, rng=7) == coverage_aware_orders(groups, 3, rng=7)).all()
    assert not (coverage_aware_orders(groups, 3, rng=7) == coverage_aware_orders(groups, 3, rng=8)).all()


def test_task_order_is_fixed_by_the_policy() -> None:
    import pandas as pd

    from stopwise import Policy, PolicyError
    from stopwise.compare import task_order

    tasks = pd.DataFrame({"task": [f"t{i:02d}" for i in range(30)], "group": ["a"] * 15 + ["b"] * 10 + ["c"] * 5})
    order = task_order(tasks, Policy.paper())  # the paper's coverage-aware order (Policy() draws a uniform one)
    assert order["position"].tolist() == list(range(1, 31)) and sorted(order["task"]) == sorted(tasks["task"])
    shuffled = task_order(tasks.sample(frac=1.0, random_state=3), Policy.paper())
    pd.testing.assert_frame_equal(order, shuffled)
    for k in range(1, 31):  # the covered flag restates the rule for every prefix
        required = required_counts([15, 10, 5], k)
        seen = [(order["group"].head(k) == g).sum() for g in "abc"]
        assert order["covered"].iloc[k - 1] == (required.sum() <= k and all(s >= r for s, r in zip(seen, required, strict=True)))
    assert order["covered"].iloc[3:].all()  # coverage-aware: met from the first count where it is possible
    other = task_order(tasks, Policy(order={"kind": "coverage-aware", "seed": 1}))
    assert other["task"].tolist() != order["task"].tolist()
    with pytest.raises(PolicyError, match="replay-only"):
        task_order(tasks, Policy(order={"kind": "neyman"}))


def test_task_order_of_tasks_without_groups_is_quiet_and_blank() -> None:
    """Empty group cells (NaN in a float column, or the column all empty) give blank groups, without a pandas warning."""
    import warnings

    import pandas as pd

    from stopwise import Policy
    from stopwise.compare import task_order

    policy = Policy(coverage={"rule": "none"}, order={"kind": "uniform", "seed": 3})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        empty = task_order(pd.DataFrame({"task": ["a", "b", "c"], "group": [np.nan] * 3}), policy)
        mixed = task_order(pd.DataFrame({"task": ["a", "b", "c", "a"], "group": ["x", np.nan, "y", ""]}), policy)
    assert sorted(empty["task"]) == ["a", "b", "c"] and (empty["group"] == "").all()
    assert dict(zip(mixed["task"], mixed["group"], strict=True)) == {"a": "x", "b": "", "c": "y"}
