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


def _tolerant_by_hand(size: int, n: int, k: int, slack: float) -> int:
    """The tolerant rule restated one group at a time: floor(k p - s sd) with the hypergeometric sd, clipped to [1, n_g]."""
    import math

    p = size / n
    sd = math.sqrt(k * p * (1 - p) * (n - k) / (n - 1)) if n > 1 else 0.0
    return max(1, min(size, math.floor(k * p - slack * sd + 1e-9)))


@given(st.lists(st.integers(1, 60), min_size=1, max_size=12), st.floats(0.01, 1.0), st.sampled_from([0.5, 1.0, 2.0, 3.0]))
def test_tolerant_counts_match_the_formula_and_never_exceed_the_proportional_ones(sizes: list[int], budget: float, slack: float) -> None:
    n = sum(sizes)
    k = budget_task_count(n, budget)
    tolerant = required_counts(sizes, k, rule="tolerant", slack=slack)
    assert tolerant.tolist() == [_tolerant_by_hand(size, n, k, slack) for size in sizes]
    assert (tolerant <= required_counts(sizes, k)).all() and (tolerant >= 1).all()
    if k == n:  # the sd is 0 at N: every task is required, as by the proportional rule
        assert tolerant.tolist() == sizes


@given(st.lists(st.integers(1, 80), min_size=1, max_size=12), st.sampled_from([0.0, 1.0, 2.0, 4.0]))
def test_every_rule_is_nondecreasing_in_k(sizes: list[int], slack: float) -> None:
    """The top-up design's fewest-tasks argument needs r_g(k) nondecreasing in k (module docstring of _coverage)."""
    k = np.arange(1, sum(sizes) + 1)
    for rule in ("proportional", "tolerant", "every-group", "none"):
        counts = required_counts(sizes, k, rule=rule, slack=slack)
        assert (np.diff(counts, axis=0) >= 0).all(), rule


def test_slack_zero_is_the_proportional_rule_and_every_group_asks_for_one_task() -> None:
    sizes, k = [50, 30, 20], np.arange(1, 101)
    assert np.array_equal(required_counts(sizes, k, rule="tolerant", slack=0.0), required_counts(sizes, k))
    assert (required_counts(sizes, k, rule="every-group") == 1).all()
    # the paper's example at k = 20: quotas 10 / 6 / 4; two SDs (2.01, 1.84, 1.61) below: 5 / 2 / 1
    assert required_counts(sizes, 20, rule="tolerant").tolist() == [5, 2, 1]


def test_a_coverage_state_records_the_rule_its_slack_and_the_count_it_judges() -> None:
    import json

    from stopwise.compare._coverage import coverage_from_sizes

    observed = np.array(["a"] * 5 + ["b"] * 2)
    tolerant = coverage_from_sizes(["a", "b", "c"], [50, 30, 20], observed, rule="tolerant")
    assert tolerant.rule == "tolerant" and tolerant.slack == 2.0 and tolerant.missing_groups == ["c"]
    assert [g.required for g in tolerant.groups] == required_counts([50, 30, 20], 7, rule="tolerant").tolist()
    # at=: the requirement of another count (the set a top-up look waits on), the seen counts of the observed tasks
    waited = coverage_from_sizes(["a", "b", "c"], [50, 30, 20], observed, rule="tolerant", at=20)
    assert [g.required for g in waited.groups] == [5, 2, 1] and waited.missing_groups == ["c"] and waited.possible
    proportional = coverage_from_sizes(["a", "b", "c"], [50, 30, 20], observed)
    assert proportional.slack is None and "slack" not in json.loads(proportional.model_dump_json())
    assert json.loads(tolerant.model_dump_json())["slack"] == 2.0


def test_bad_rules_are_refused() -> None:
    import pytest

    from stopwise.errors import ArgumentError

    with pytest.raises(ArgumentError, match="`rule`"):
        required_counts([3, 4], 2, rule="lenient")  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="`slack`"):
        required_counts([3, 4], 2, rule="tolerant", slack=-1.0)
