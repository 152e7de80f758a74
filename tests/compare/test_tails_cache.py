"""The n-fold distributions of the last counts are reused across thresholds, with bit-identical tails."""

from __future__ import annotations

import numpy as np
import pytest

from stopwise.compare import _tails, exact_tails_from_counts


def fresh(counts: np.ndarray, lattice: int, threshold: float) -> float:
    _tails._last = None  # computed from scratch
    return float(exact_tails_from_counts(counts, lattice, threshold)[0])


@pytest.mark.parametrize("lattice", [1, 3])
def test_repeated_calls_give_the_values_computed_afresh(lattice: int) -> None:
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 40, size=(1, 2 * lattice + 1))
    thresholds = rng.uniform(-0.5, 0.5, 25)
    expected = [fresh(counts, lattice, t) for t in thresholds]
    _tails._last = None
    reused = [float(exact_tails_from_counts(counts, lattice, t)[0]) for t in thresholds]
    assert reused == expected  # bit for bit: the cache only skips recomputing the same arrays
    assert _tails._last is not None and _tails._last[0][0] == lattice
    other = counts.copy()
    other[0, 0] += 1  # different counts are never served from the cache
    assert float(exact_tails_from_counts(other, lattice, 0.1)[0]) == fresh(other, lattice, 0.1)


def test_large_sets_are_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_tails, "_CACHE_ELEMENTS", 1000)
    _tails._last = None
    exact_tails_from_counts(np.array([[200, 0, 300]]), 1, 0.0)  # 1,001 lattice points, a longer transform
    assert _tails._last is None
    exact_tails_from_counts(np.array([[20, 0, 30]]), 1, 0.0)
    assert _tails._last is not None
