"""The one-look mixture e-values of a task distribution's mean (``stopwise.compare._sample_evalue``).

Checked against the formula written out here (average over the bets of the products), for order invariance, for
validity by simulation under the null (i.i.d. draws with mean exactly m: P(E >= 1/a) <= a + 2 SE over 4,000
draws, SE = sqrt(a (1 - a) / 4000) = 0.34 %) and for the bounds' coverage.
"""

from __future__ import annotations

import math

import numpy as np

from stopwise.compare._sample_evalue import MIXTURE_BETS, mixture_bounds, mixture_log_evalues


def _formula(d: np.ndarray, m: float) -> tuple[float, float]:
    up = np.mean([np.prod(1 + (u / (1 + m)) * (d - m)) for u in MIXTURE_BETS])
    down = np.mean([np.prod(1 + (u / (1 - m)) * (m - d)) for u in MIXTURE_BETS])
    return math.log(up), math.log(down)


def test_log_evalues_are_the_formula_on_lattice_and_continuous_differences() -> None:
    rng = np.random.default_rng(0)
    lattice = rng.choice([-1.0, 0.0, 1.0], size=(5, 60), p=[0.2, 0.5, 0.3])
    continuous = np.clip(rng.normal(0.05, 0.4, size=(5, 300)), -1, 1)  # > 256 distinct values: summed task by task
    for d in (lattice, continuous):
        thresholds = np.array([-0.2, 0.0, 0.05, 0.1, 0.3])
        up, down = mixture_log_evalues(d, thresholds)
        for r in range(5):
            assert np.allclose((up[r], down[r]), _formula(d[r], thresholds[r]), rtol=1e-10, atol=1e-10)


def test_the_order_of_the_tasks_does_not_matter() -> None:
    rng = np.random.default_rng(1)
    d = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=(3, 80))
    shuffled = d[:, rng.permutation(80)]
    assert np.allclose(mixture_log_evalues(d, 0.0), mixture_log_evalues(shuffled, 0.0), rtol=0, atol=1e-12)


def test_under_the_null_the_evalue_passes_one_over_a_at_most_a_plus_two_se() -> None:
    rng = np.random.default_rng(2)
    draws = 4000
    for probabilities, m in (([0.25, 0.5, 0.25], 0.0), ([0.1, 0.6, 0.3], 0.2), ([0.5, 0.0, 0.5], 0.0)):
        d = rng.choice([-1.0, 0.0, 1.0], size=(draws, 150), p=probabilities)
        up, down = mixture_log_evalues(d, m)
        bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / draws)
        assert (up >= math.log(20)).mean() <= bound and (down >= math.log(20)).mean() <= bound


def test_bounds_are_the_inverted_tests_and_cover_the_mean() -> None:
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, 0.0, 1.0], size=(2000, 120), p=[0.2, 0.5, 0.3])  # mean 0.1
    low, high = mixture_bounds(d, 0.05)
    assert (low <= d.mean(axis=1)).all() and (d.mean(axis=1) <= high).all()
    up, _ = mixture_log_evalues(d, low)
    assert (up >= math.log(20) - 1e-9).all()  # the lower end is rejected ...
    up_above, _ = mixture_log_evalues(d, low + 2e-9)
    assert (up_above < math.log(20) + 1e-6).all()  # ... and just above it is not (bisection bracket 2^-31)
    missed = ((low >= 0.1) | (high <= 0.1)).mean()
    assert missed <= 2 * 0.05 + 2 * math.sqrt(0.1 * 0.9 / 2000)
