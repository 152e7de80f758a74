"""The exact tails on NumPy's FFT alone: SciPy's fast lengths, a wide lattice and units, without importing SciPy."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import fft

from stopwise.compare import exact_tails_from_counts, tail_probabilities
from stopwise.compare._tails import _next_fast_len


def test_fast_lengths_are_scipys() -> None:
    """The transform lengths are those of scipy.fft.next_fast_len(real=True) (5-smooth), so results stay the same."""
    small = range(1, 20_001)
    large = [2**20 + 1, 3**12 + 1, 5**9 - 1, 9_999_991, 2**24, 2**24 + 1]
    for n in [*small, *large]:
        assert _next_fast_len(n) == fft.next_fast_len(n, real=True), n


def _convolved_r_promote(row: np.ndarray, lattice: int, threshold: float) -> float:
    """P(sum of n draws <= n L delta) by n direct convolutions of the pmf (no FFT): an independent reference."""
    n = int(row.sum())
    pmf = np.ones(1)
    for _ in range(n):
        pmf = np.convolve(pmf, row / n)
    cut = int(np.floor(n * lattice * threshold + 1e-9)) + n * lattice  # index of the lattice sum n L delta
    return float(pmf[: cut + 1].sum())


@pytest.mark.parametrize("lattice", [40, 100])  # 2L + 1 > 64 columns: the rfft path, not the small-width DFT
def test_wide_lattice_equals_direct_convolution(lattice: int) -> None:
    rng = np.random.default_rng(lattice)
    counts = np.zeros((3, 2 * lattice + 1), dtype=np.int64)
    for row, n in zip(counts, (7, 25, 25), strict=True):
        np.add.at(row, rng.integers(0, 2 * lattice + 1, n), 1)
    thresholds = [-0.1, 0.0, 0.05, 0.3]
    got = exact_tails_from_counts(counts, lattice, thresholds)
    expected = np.array([[_convolved_r_promote(row, lattice, t) for t in thresholds] for row in counts])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_one_task_per_unit_is_not_grouped_and_repeated_units_are() -> None:
    d = np.array([1, 0, 1, -1, 1, 0, 1, 1])
    alone = tail_probabilities(d, 0.0, units=[f"task-{i}" for i in range(len(d))])
    assert alone.used == "exact" and alone.r_promote == tail_probabilities(d, 0.0).r_promote
    grouped = tail_probabilities(d, 0.0, units=["a", "a", "b", "b", "c", "c", "d", "d"], rng=0)
    assert grouped.used == "bootstrap" and "grouped units" in grouped.method


def test_exact_tails_do_not_import_scipy() -> None:
    """Nor numpy.random (no generator is made for exact tails): start-up time."""
    code = (
        "import sys\nfrom stopwise.compare import tail_probabilities\n"
        "t = tail_probabilities([1, 0, 1, -1, 0.5, 0.25, 1 / 3], 0.0)\n"
        "t = tail_probabilities([0.3, -0.7, 0.1], 0.0)\n"  # off the lattice: the grid
        "loaded = [m for m in ('scipy', 'numpy.random') if m in sys.modules]\n"
        "print(loaded)\nsys.exit(9 if loaded else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], env=os.environ.copy(), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
