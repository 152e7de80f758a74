"""The coverage rule r_g(b) = max{1, min{n_g, floor(k_b n_g / N)}} (paper eq. 4)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from stopwise.compare import budget_task_count, coverage_state, required_counts


def test_papers_example() -> None:
    k = budget_task_count(100, 0.20)
    assert k == 20
    assert required_counts([50, 30, 20], k).tolist() == [10, 6, 4]


def test_impossible_budget() -> None:
    # 12 groups, 15 tasks allowed: each group needs at least one -> sum 12 + floor quotas > k
    sizes = [120, 40, 30, 20, 20, 20, 15, 10, 10, 5, 5, 5]
    k = budget_task_count(sum(sizes), 0.05)
    assert k == 15
    required = required_counts(sizes, k)
    assert required.tolist() == [6, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    assert required.sum() > k
    universe = np.repeat([f"g{i:02d}" for i in range(12)], sizes)
    state = coverage_state(universe, universe[:: len(universe) // k][:k])
    assert not state.possible and not state.satisfied


def test_state_lists_missing_groups_and_counts() -> None:
    universe = np.array(["a"] * 50 + ["b"] * 30 + ["c"] * 20)
    observed = np.array(["a"] * 12 + ["b"] * 7 + ["c"] * 1)
    state = coverage_state(universe, observed)
    assert state.possible and not state.satisfied
    assert state.missing_groups == ["c"]
    assert [(g.group, g.size, g.required, g.seen) for g in state.groups] == [
        ("a", 50, 10, 12),
        ("b", 30, 6, 7),
        ("c", 20, 4, 1),
    ]


@given(st.lists(st.integers(1, 60), min_size=1, max_size=12), st.floats(0.01, 1.0))
def test_required_counts_properties(sizes: list[int], budget: float) -> None:
    n = sum(sizes)
    k = budget_task_count(n, budget)
    required = required_counts(sizes, k)
    # independent restatement of eq. 4, one group at a time
    for size, r in zip(sizes, required, strict=True):
        assert r == max(1, min(size, (k * size) // n))
    assert (required >= 1).all() and (required <= np.array(sizes)).all()
    if k == n:
        assert required.tolist() == sizes
