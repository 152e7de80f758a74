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
    record = stopwise.decide(rows, "A", "B", complete=True)
    assert record.tail is not None
    assert (record.tail.method, record.tail.lattice, record.tail.fallback) == ("exact", 1, False)
    assert record.tail_method == "exact (lattice 1/1)"
