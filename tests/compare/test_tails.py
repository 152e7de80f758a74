"""Tail probabilities: the exact bootstrap against enumeration and Monte Carlo; normal and Serfling."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from stopwise import pair_outcomes, read_outcomes, tail_probabilities
from stopwise.compare import exact_tails_from_counts, lattice_of


def _enumerated_r_promote(differences: list[float], threshold: float) -> float:
    """P*(mean* <= delta) by listing all n^n equally likely resamples (the definition)."""
    n = len(differences)
    values = np.array(differences)
    means = np.array([values[list(index)].mean() for index in itertools.product(range(n), repeat=n)])
    return float(np.mean(means <= threshold + 1e-12))


@pytest.mark.parametrize(
    ("differences", "threshold"),
    [
        ([1, 0, -1, 1, 0], 0.0),
        ([1, 1, 0, 0, 0, -1], 0.0),
        ([1, 1, 0, 0, 0, -1], 0.2),
        ([0, 0, 0, 1], 0.1),
        ([-1, -1, 0, 1, 1, 1], -0.05),
        ([0.5, -0.5, 0.0, 1.0, 0.5], 0.1),  # averages of 2 attempts: lattice 1/2
        ([1 / 3, -2 / 3, 0.0, 1.0, 1 / 3, -1 / 3], 0.0),  # averages of 3 attempts: lattice 1/3
        ([0.2, -0.4, 0.6, 0.0, 0.8], 0.25),  # 5 runs averaged (terminal-bench 2 style)
    ],
)
def test_exact_equals_enumeration(differences: list[float], threshold: float) -> None:
    exact = tail_probabilities(differences, threshold, method="exact")
    assert exact.method.startswith("exact")
    expected = _enumerated_r_promote(differences, threshold)
    assert exact.r_promote == pytest.approx(expected, abs=1e-12)
    assert exact.r_reject == pytest.approx(1 - expected, abs=1e-12)


def test_exact_from_counts_matches_multinomial_formula() -> None:
    # ternary differences: P(S <= t) = sum over (a, b, c) of the multinomial pmf, listed directly
    counts = np.array([[3, 10, 7], [0, 5, 0], [9, 2, 9], [4, 30, 6]])
    for row, r in zip(counts, exact_tails_from_counts(counts, 1, 0.05), strict=True):
        n = int(row.sum())
        p = row / n
        total = 0.0
        t = int(np.floor(n * 0.05 + 1e-9))
        for a in range(n + 1):  # draws of -1
            for c in range(n + 1 - a):  # draws of +1
                if c - a <= t:
                    total += stats.multinomial.pmf([a, n - a - c, c], n, p)
        assert r == pytest.approx(total, abs=1e-12)


@pytest.mark.data
def test_exact_agrees_with_large_monte_carlo_on_swebench_pairs(shared_data: Path) -> None:
    rows = read_outcomes(shared_data / "records" / "swebench_verified" / "outcomes.csv").to_frame()
    systems = sorted(rows["system"].unique())
    rng = np.random.default_rng(7)
    checked = 0
    for a, b in [(systems[i], systems[j]) for i, j in rng.choice(len(systems), size=(6, 2), replace=False)]:
        paired = pair_outcomes(rows, a, b)
        prefix = paired.differences[rng.permutation(paired.n_observed)[:80]]
        for threshold in (0.0, 0.05):
            exact = tail_probabilities(prefix, threshold, method="exact")
            mc = tail_probabilities(prefix, threshold, method="bootstrap", n_resamples=40_000, rng=rng)
            se = np.sqrt(exact.r_promote * (1 - exact.r_promote) / 40_000)
            assert abs(mc.r_promote - exact.r_promote) <= 4 * se + 1e-12, (a, b, threshold)
            checked += 1
    assert checked == 12


def test_monte_carlo_is_seeded() -> None:
    d = np.array([1, 0, 0, -1, 1, 1, 0, 0, 1])
    first = tail_probabilities(d, method="bootstrap", rng=3)
    again = tail_probabilities(d, method="bootstrap", rng=3)
    assert first == again
    assert first.method == "bootstrap (B=200)"
    assert first.r_promote * 200 == int(first.r_promote * 200)


def test_normal_matches_scipy_one_sample_z() -> None:
    d = np.array([1, 0, 1, 1, -1, 0, 1, 0, 0, 1, 1, 0])
    result = tail_probabilities(d, 0.1, method="normal")
    z = (d.mean() - 0.1) / (d.std(ddof=1) / np.sqrt(len(d)))
    assert result.r_promote == pytest.approx(stats.norm.sf(z), rel=1e-12)
    assert result.r_reject == pytest.approx(stats.norm.cdf(z), rel=1e-12)


def test_serfling_bound_by_hand() -> None:
    d = np.array([1] * 30 + [0] * 60 + [-1] * 10)
    result = tail_probabilities(d, 0.0, method="serfling", population_size=400)
    epsilon = 0.2
    bound = np.exp(-2 * 100 * epsilon**2 / ((1 - 99 / 400) * 4))
    assert result.r_promote == pytest.approx(bound, rel=1e-12)
    assert result.r_reject == 1.0
    with pytest.raises(ValueError, match="population_size"):
        tail_probabilities(d, method="serfling")


def test_off_lattice_uses_a_fine_grid_and_says_so() -> None:
    d = np.array([np.sqrt(2) / 3, -0.5, np.pi / 7, 0.31, -np.e / 9])
    assert lattice_of(d) == 0
    result = tail_probabilities(d, method="exact", rng=0)
    assert result.method.startswith("exact on a 1/") and "R_promote in [" in result.method
    # an independent value: enumerate all 5^5 resamples of the five differences
    means = np.array(np.meshgrid(*[d] * 5)).reshape(5, -1).mean(axis=0)
    assert result.r_promote == pytest.approx(float((means <= 0.0).mean()), abs=1e-9)


def test_units_are_resampled_whole() -> None:
    d = np.array([1.0, 1.0, 1.0, 1.0, -1.0, 0.0])
    grouped = tail_probabilities(d, method="exact", units=["u1", "u1", "u1", "u1", "u2", "u3"], n_resamples=20_000, rng=0)
    assert "grouped units" in grouped.method
    # three units with sums (4, -1, 0) and sizes (4, 1, 1): mean* <= 0 unless u1 is drawn, and
    # also when u1 once with u2 twice? (4 - 2) / 6 > 0, so only draws without u1: (2/3)^3
    assert grouped.r_promote == pytest.approx((2 / 3) ** 3, abs=0.01)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"differences": []},
        {"differences": [2.0]},
        {"differences": [0.5], "threshold": 1.0},
        {"differences": [0.5], "method": "magic"},
        {"differences": [0.5], "method": "bootstrap", "n_resamples": 0},
        {"differences": [0.5, 0.5], "units": ["a"]},
    ],
)
def test_bad_arguments(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        tail_probabilities(**kwargs)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-1, 0, 1]), min_size=1, max_size=60), st.sampled_from([0.0, 0.05, 0.1]))
def test_an_extra_win_never_raises_r_promote(differences: list[int], threshold: float) -> None:
    base = tail_probabilities(differences, threshold).r_promote
    better = [1 if d == 0 else d for d in differences]
    assert tail_probabilities(better, threshold).r_promote <= base + 1e-12


@pytest.mark.parametrize(("n_minus", "n_zero", "n_plus", "threshold"), [(60, 380, 60, 0.0), (41, 400, 59, 0.05), (3, 1990, 7, 0.0), (900, 1200, 900, 0.1)])
def test_exact_matches_an_independent_formula_at_large_n(n_minus: int, n_zero: int, n_plus: int, threshold: float) -> None:
    """Condition on the number m of nonzero draws: m ~ Bin(n, q) and the +1 draws among them ~ Bin(m, pi)."""
    n = n_minus + n_zero + n_plus
    q, pi = (n_minus + n_plus) / n, n_plus / (n_minus + n_plus)
    t = int(np.floor(n * threshold + 1e-9))
    m = np.arange(n + 1)
    expected = float(np.sum(stats.binom.pmf(m, n, q) * stats.binom.cdf(np.floor((m + t) / 2), m, pi)))
    got = exact_tails_from_counts([[n_minus, n_zero, n_plus]], 1, threshold)[0]
    assert got == pytest.approx(expected, abs=1e-11)


@pytest.mark.parametrize("case", ["lattice", "averages", "grid"])
def test_the_cumulative_lookup_gives_the_exact_tails(case: str) -> None:
    """The one-look interval's bisection reads R_promote from one cumulative distribution: it agrees with
    ``exact_tails_from_counts`` (through ``tail_probabilities``) to 1e-12 at every threshold, off the lattice too."""
    from stopwise.compare._tails import exact_promote_lookup

    rng = np.random.default_rng(7)
    d = {
        "lattice": rng.choice([-1.0, 0.0, 1.0], 300),
        "averages": rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], 200),
        "grid": rng.uniform(-1, 1, 150),
    }[case]
    lookup = exact_promote_lookup(d)
    for threshold in np.r_[np.linspace(-1.0, 0.999, 57), d.mean(), -0.99999]:
        assert lookup(float(threshold)) == pytest.approx(tail_probabilities(d, float(threshold)).r_promote, abs=1e-12)
