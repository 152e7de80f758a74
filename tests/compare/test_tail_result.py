"""The tail result object (n, lattice, counts, distribution) and tail provenance in the record."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import stopwise
from stopwise import tail_probabilities


def test_distribution_matches_enumeration_of_every_resample() -> None:
    d = np.array([1.0, 0.0, -1.0, 1.0])
    means = np.array([np.mean(s) for s in itertools.product(d, repeat=len(d))])  # 4^4 resamples, brute force
    support, pmf = tail_probabilities(d, 0.0).distribution()
    expected = np.array([np.mean(np.isclose(means, v)) for v in support])
    np.testing.assert_allclose(pmf, expected, atol=1e-12)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)


def test_result_keeps_n_lattice_and_gives_tails_at_other_thresholds() -> None:
    d = np.array([0.5, 0.0, 1.0, -0.5, 0.5])
    t = tail_probabilities(d, 0.0)
    assert (t.used, t.n, t.lattice, t.resamples, t.fallback) == ("exact", 5, 2, None, None)
    support, pmf = t.distribution()
    for delta in (-0.2, 0.0, 0.3):
        assert float(t.at(delta)[0]) == pytest.approx(pmf[support <= delta + 1e-12].sum(), abs=1e-9)
        assert float(t.at(delta)[0]) == pytest.approx(tail_probabilities(d, delta).r_promote, abs=1e-12)


def test_bootstrap_and_grid_provenance() -> None:
    mc = tail_probabilities([1, 0, 1], 0.0, method="bootstrap", n_resamples=50, rng=0)
    assert (mc.used, mc.resamples, mc.fallback) == ("bootstrap", 50, None)
    with pytest.raises(ValueError, match="no lattice counts"):
        mc.at(0.0)
    grid = tail_probabilities([1 / np.pi, 0.0, -0.1], 0.0)
    assert grid.used == "exact-grid" and grid.fallback is not None and grid.lattice == 0


def test_record_carries_tail_provenance_as_fields() -> None:
    rows = stopwise.outcome_columns(
        [{"system": s, "task": f"t{i}", "outcome": int(s == "A" or i % 2)} for s in "AB" for i in range(6)]
    ).to_frame()
    record = stopwise.decide(rows, "A", "B", stopwise.Policy.paper(), complete=True)  # the paper's bootstrap tail
    assert record.tail is not None
    assert (record.tail.method, record.tail.lattice, record.tail.fallback) == ("exact", 1, False)
    assert record.tail_method == "exact (lattice 1/1)"


@pytest.mark.parametrize("d", [[1.0, 0.0, -1.0, 1.0, 1.0, 0.0, -1.0], [0.5, 0.0, 1.0, -0.5, 0.5, 1.0], [1.0] * 9 + [-1.0] * 4 + [0.0] * 30])
def test_the_transform_path_of_the_distribution_agrees_with_direct_convolution(monkeypatch: pytest.MonkeyPatch, d: list[float]) -> None:
    """Above DIRECT_SUPPORT lattice points the distribution is the exact tails' transform; on small inputs forced
    through it, it agrees with the direct convolution to 1e-12 (absolute), on the same support."""
    from stopwise.compare import _tails

    t = tail_probabilities(np.array(d), 0.0)
    direct_support, direct = t.distribution()
    monkeypatch.setattr(_tails, "DIRECT_SUPPORT", 0)
    support, pmf = t.distribution()
    np.testing.assert_array_equal(support, direct_support)
    np.testing.assert_allclose(pmf, direct, rtol=0, atol=1e-12)
    assert (pmf >= 0).all() and pmf.sum() == pytest.approx(1.0, abs=1e-12)


def test_the_distribution_of_half_a_million_differences_has_the_bootstrap_moments() -> None:
    """500,000 differences (beyond the direct convolution): the bootstrap mean has mean d-bar and variance s^2 / n
    (s^2 the plug-in variance), and its tails are those ``at`` gives."""
    rng = np.random.default_rng(5)
    d = rng.choice([-1.0, 0.0, 1.0], size=500_000, p=[0.2, 0.5, 0.3])
    t = tail_probabilities(d, 0.0)
    support, pmf = t.distribution()
    assert len(support) == 2 * len(d) + 1 and pmf.sum() == pytest.approx(1.0, abs=1e-9)
    mean = float(pmf @ support)
    assert mean == pytest.approx(d.mean(), abs=1e-9)
    # the moments within 20 sd of the mean (beyond, the true mass is below 1e-80 and the transform's rounding, ~1e-16
    # a point over 10^6 points, would dominate the second moment)
    near = np.abs(support - d.mean()) < 20 * d.std() / np.sqrt(len(d))
    assert float(pmf[near] @ (support[near] - mean) ** 2) == pytest.approx(d.var() / len(d), rel=1e-6)
    assert pmf[~near].max() < 1e-12
    for delta in (0.09, 0.1, 0.11):
        assert float(t.at(delta)[0]) == pytest.approx(pmf[support <= delta + 1e-12].sum(), abs=1e-9)
