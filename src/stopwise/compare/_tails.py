"""Tail probabilities of the mean paired difference about the threshold (paper eqs. 5-6).

``R_promote = P*(mean* <= delta)`` is the evidence against promotion and ``R_reject = P*(mean* > delta)``
the evidence against rejection. Methods behind one interface (:func:`tail_probabilities`):

``exact``
    The bootstrap distribution of the mean computed exactly: with differences on a lattice
    (``D * L`` integer: 0/1 outcomes give L = 1, averages of k attempts give multiples of 1/k) the sum
    of n draws with replacement is the n-fold convolution of the empirical pmf on ``2L + 1`` points,
    evaluated with one FFT. This is the B -> infinity limit of the paper's Monte-Carlo bootstrap,
    with no resampling noise. Off the lattice (or on one too fine for the support limit) the
    differences are put on the finest grid 1/G whose support fits (about 1 M points): rounded to
    the nearest grid point for the reported value, and rounded down and up to bracket the exact
    bootstrap value, which the method string states (``exact on a 1/G grid ...; R_promote in
    [lo, hi]``). No resampling, so the action never depends on a seed. With grouped units the
    Monte-Carlo bootstrap is used instead, and the method string says so.
``bootstrap``
    Monte-Carlo bootstrap with B resamples from a seeded generator (the paper uses B = 200);
    resamples whole analysis units when units group tasks.
``normal``
    Paired normal test: ``R_promote = Phi((delta - mean) / se)``, cluster-robust se with units.
``serfling``
    Serfling's finite-population bound for sampling n of N tasks without replacement (range 2).
``exact-wor``
    The exact one-look test for 0/±1 differences when the n observed tasks are a simple random
    sample without replacement of the N planned tasks (:mod:`stopwise.compare._wor_exact`): level a
    at every n, unlike the bootstrap with few discordant tasks. The tails are its p-values
    (``r_promote + r_reject`` need not be 1). Other differences (averages of k attempts) and
    samples too large to enumerate fall back to ``serfling`` (valid, conservative), and
    ``fallback`` says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from stopwise._params import check_random_state
from stopwise.compare._pairing import MAX_LATTICE, lattice_of
from stopwise.compare._wor_exact import exact_wor_pvalue
from stopwise.errors import ArgumentError
from stopwise.records import COMPUTED_TAIL_METHODS, ComputedTailMethod

__all__ = [
    "TailProbabilities",
    "exact_promote_lookup",
    "exact_tails_from_counts",
    "lattice_threshold",
    "normal_tails_from_moments",
    "serfling_tails_from_moments",
    "tail_probabilities",
]

TailMethodName = ComputedTailMethod
_EXACT_MAX_SUPPORT = 1 << 24
DIRECT_SUPPORT = 1 << 12
"""Lattice points up to which :meth:`TailProbabilities.distribution` convolves directly (above: the FFT transform)."""
_GRID_SUPPORT = 1 << 20
_BATCH_ELEMENTS = 1 << 23


def _next_fast_len(target: int) -> int:
    """The smallest 5-smooth number (2^a 3^b 5^c) at least ``target``: a fast length for a real FFT.

    The lengths :func:`scipy.fft.next_fast_len` gives with ``real=True``; computed here so that the
    exact tails need NumPy's FFT only (importing SciPy would cost the command line ~0.3 s).
    """
    if target <= 6:
        return max(int(target), 1)
    best = 1 << (int(target) - 1).bit_length()  # the next power of two always qualifies
    power5 = 1
    while power5 < best:
        power35 = power5
        while power35 < best:
            # the smallest power of two that lifts power35 to the target
            quotient = -(-target // power35)
            candidate = power35 << (quotient - 1).bit_length()
            best = min(best, candidate)
            power35 *= 3
        power5 *= 5
    return best


@dataclass(frozen=True)
class TailProbabilities:
    """Tail probabilities of the (resampled) mean paired difference about a threshold.

    A result object in the manner of :mod:`scipy.stats` results: the two tails, the method's
    provenance as fields, and what a follow-up question needs (``n``, ``lattice``, the
    lattice ``counts`` of the differences, from which :meth:`at` gives the exact tails at
    another threshold and :meth:`distribution` the exact bootstrap distribution of the mean).

    Attributes
    ----------
    r_promote : float
        P*(mean* <= delta): a promotion needs it at or below the cutoff a.
    r_reject : float
        P*(mean* > delta): a rejection needs it at or below the cutoff a.
    method : str
        The method that produced them, with its settings (e.g. ``"exact (lattice 1/1)"``).
    used : str
        The method actually used: ``exact``, ``exact-grid`` (exact on a fine grid off the
        lattice), ``bootstrap``, ``normal`` or ``serfling``.
    n : int
        Differences observed.
    lattice : int
        L with every difference a multiple of 1/L (0 when there is none up to ``MAX_LATTICE``).
    resamples : int or None
        B of a Monte-Carlo bootstrap (None for the other methods).
    fallback : str or None
        Why the requested method was not used as asked (None when it was).
    counts : numpy.ndarray or None
        Counts of the differences on the lattice, ``-L .. L`` (None off the lattice).
    """

    r_promote: float
    r_reject: float
    method: str
    used: str = ""
    n: int = 0
    lattice: int = 0
    resamples: int | None = None
    fallback: str | None = None
    counts: np.ndarray | None = None

    def at(self, threshold: float | ArrayLike) -> np.ndarray:
        """Exact R_promote at other thresholds (needs the lattice ``counts``).

        Examples
        --------
        >>> from stopwise import tail_probabilities
        >>> t = tail_probabilities([1, 0, 1, -1, 1], 0.0)
        >>> float(t.at(0.0)[0]) == t.r_promote
        True
        """
        if self.counts is None:
            raise ArgumentError(f"the {self.used or self.method} tails keep no lattice counts; exact tails need them")
        return np.atleast_1d(exact_tails_from_counts(self.counts[None, :], self.lattice, threshold)[0])

    def distribution(self) -> tuple[np.ndarray, np.ndarray]:
        """(support, pmf) of the exact bootstrap mean on the lattice 1/(n L) (needs ``counts``).

        Up to :data:`DIRECT_SUPPORT` lattice points by direct convolution (binary powering of the step's pmf); beyond,
        by the transform the exact tails use (the n-th power of the step's characteristic function, one inverse FFT),
        clipped to [0, 1]: the two agree to 1e-12 (absolute, ``tests/compare/test_tail_result.py``), and 500,000
        differences take about a second instead of hours (``benchmarks/decide_tails.py``).

        Examples
        --------
        >>> from stopwise import tail_probabilities
        >>> support, pmf = tail_probabilities([1, 0], 0.0).distribution()
        >>> support.tolist(), pmf.round(3).tolist()
        ([-1.0, -0.5, 0.0, 0.5, 1.0], [0.0, 0.0, 0.25, 0.5, 0.25])
        """
        if self.counts is None:
            raise ArgumentError(f"the {self.used or self.method} tails keep no lattice counts; the distribution needs them")
        points = 2 * self.n * self.lattice + 1
        if points > DIRECT_SUPPORT:  # the tails' own transform: O(S log S) where the direct powering is O(S^2)
            _, _, _, distribution = _distributions(np.asarray(self.counts, dtype=np.int64)[None, :], self.lattice)[0]
            grid = (np.arange(points) - self.n * self.lattice) / (self.n * self.lattice)
            return grid, np.clip(distribution[0, :points], 0.0, 1.0)
        step = self.counts / self.counts.sum()
        pmf = np.ones(1)
        power, k = step, self.n
        while k:  # binary powering of the convolution, n steps of one difference each
            if k & 1:
                pmf = np.convolve(pmf, power)
            power, k = np.convolve(power, power), k >> 1
        support = (np.arange(len(pmf)) - self.n * self.lattice) / (self.n * self.lattice)
        return support, np.clip(pmf, 0.0, 1.0)


def lattice_threshold(n: ArrayLike, lattice: int, threshold: float | ArrayLike) -> np.ndarray:
    """The lattice cut-off t = floor(n L delta): ``mean <= delta`` iff the lattice sum ``sum(D) * L <= t``.

    A tolerance of 1e-9 guards against ``n * delta`` landing just below an integer in floating point.

    Examples
    --------
    >>> from stopwise.compare import lattice_threshold
    >>> lattice_threshold([100, 20], 1, 0.29).tolist(), lattice_threshold(30, 5, 0.1).tolist()
    ([29, 5], 15)
    """
    scaled = np.asarray(n, dtype=np.float64) * lattice * np.asarray(threshold, dtype=np.float64)
    return np.floor(scaled + 1e-9 * np.maximum(1.0, np.abs(scaled))).astype(np.int64)


def _characteristic(pmf: np.ndarray, lattice: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Real and imaginary parts of the DFT (length ``size``, non-negative frequencies) of pmf rows."""
    width = 2 * lattice + 1
    if width <= 64:
        angle = (2.0 * np.pi / size) * np.outer(np.arange(width), np.arange(size // 2 + 1))
        return pmf @ np.cos(angle), -(pmf @ np.sin(angle))
    spectrum = np.fft.rfft(pmf, n=size, axis=1)
    return spectrum.real, spectrum.imag


def exact_tails_from_counts(counts: ArrayLike, lattice: int, threshold: float | ArrayLike) -> np.ndarray:
    """Exact bootstrap R_promote for many samples given by their lattice counts.

    Parameters
    ----------
    counts : array_like of int, shape (K, 2L + 1)
        Row k counts the observed differences equal to ``(j - L) / L`` in column j.
    lattice : int
        L, the lattice denominator.
    threshold : float or array_like of float
        delta, or several thresholds at once (they share the convolution).

    Returns
    -------
    numpy.ndarray, shape (K,) or (K, T)
        ``P*(mean* <= delta)`` for each row (and threshold): the probability that the sum of n
        draws with replacement from the row's empirical distribution is at most ``n L delta``
        (lattice units). ``R_reject = 1 - R_promote``. Rows with n = 0 give NaN.

    Notes
    -----
    The n-fold convolution is evaluated in the frequency domain: the DFT of the empirical pmf is
    raised to the n-th power in polar form, transformed back with one real inverse FFT per
    sample size, and summed up to the cut by a matrix product. Values are exact up to
    floating-point rounding (absolute error below 1e-12, checked against enumeration in the tests).

    Examples
    --------
    Differences (1, 1, 0): the bootstrap mean is <= 0 only when no 1 is drawn, (1/3)^3.

    >>> from stopwise.compare import exact_tails_from_counts
    >>> round(float(exact_tails_from_counts([[0, 1, 2]], 1, 0.0)[0]) * 27, 12)
    1.0
    """
    table = np.atleast_2d(np.asarray(counts, dtype=np.int64))
    width = 2 * lattice + 1
    if table.shape[1] != width:
        raise ArgumentError(f"counts must have 2L + 1 = {width} columns; got {table.shape[1]}")
    thresholds = np.atleast_1d(np.asarray(threshold, dtype=float))
    result = np.full((len(table), len(thresholds)), np.nan)
    for rows, sample, support, distribution in _distributions(table, lattice):
        cut = np.clip(lattice_threshold(sample, lattice, thresholds) + sample * lattice, -1, support - 1)
        below = (np.arange(support)[:, None] <= cut[None, :]).astype(float)
        result[rows] = np.clip(distribution[:, :support] @ below, 0.0, 1.0)
    return result[:, 0] if np.ndim(threshold) == 0 else result


_Distributions = list[tuple[np.ndarray, int, int, np.ndarray]]
_last: tuple[tuple[int, tuple[int, ...], bytes], _Distributions] | None = None
_CACHE_ELEMENTS = 1 << 23
"""Largest set of n-fold distributions kept for the next call (float64 values: 64 MiB)."""


def _distributions(table: np.ndarray, lattice: int) -> _Distributions:
    """(rows, n, support, n-fold lattice-sum distributions) of each batch of rows sharing a sample size.

    They do not depend on the threshold, so the last table's are kept: an interval inverted over
    the threshold (dozens of calls on the same counts) computes them once, with the same values.
    """
    global _last
    key = (lattice, table.shape, table.tobytes())
    last = _last
    if last is not None and last[0] == key:
        return last[1]
    n = table.sum(axis=1)
    found: _Distributions = []
    sizes = np.sort(n[n > 0])  # the distinct sample sizes (np.unique would import numpy.ma: start-up time)
    for size_n in sizes[np.r_[True, sizes[1:] != sizes[:-1]]]:
        # one transform length per sample size, so a row's value never depends on the other rows
        sample = int(size_n)
        support = 2 * sample * lattice + 1
        if support > _EXACT_MAX_SUPPORT:
            raise ArgumentError(f"exact bootstrap support {support} exceeds {_EXACT_MAX_SUPPORT}; use the Monte-Carlo bootstrap")
        size = _next_fast_len(support)
        members = np.flatnonzero(n == size_n)
        batch = max(1, min(256, _BATCH_ELEMENTS // size))
        for start in range(0, len(members), batch):
            rows = members[start : start + batch]
            real, imag = _characteristic(table[rows] / float(sample), lattice, size)
            with np.errstate(divide="ignore"):
                magnitude = np.exp((0.5 * sample) * np.log(real * real + imag * imag))
            phase = sample * np.arctan2(imag, real)
            distribution = np.fft.irfft(magnitude * np.cos(phase) + 1j * (magnitude * np.sin(phase)), n=size, axis=1)
            found.append((rows, sample, support, distribution))
    if sum(d.size for *_, d in found) <= _CACHE_ELEMENTS:
        _last = (key, found)
    return found


def _lattice_counts(differences: np.ndarray, lattice: int) -> np.ndarray:
    units = np.rint(differences * lattice).astype(np.int64) + lattice
    return np.bincount(units, minlength=2 * lattice + 1)[None, :]


def _grid_table(values: np.ndarray) -> tuple[np.ndarray, int]:
    """The counts of the differences on the finest grid 1/G that fits: rounded to nearest, down and up (3 rows), and G."""
    grid = max(1, (_GRID_SUPPORT - 1) // (2 * len(values)))
    scaled = values * grid
    width = 2 * grid + 1
    table = np.stack(
        [
            np.bincount(np.clip(f(scaled + s), -grid, grid).astype(np.int64) + grid, minlength=width)
            for f, s in ((np.rint, 0.0), (np.floor, 1e-9), (np.ceil, -1e-9))
        ]
    )
    return table, grid


def exact_promote_lookup(differences: np.ndarray) -> Callable[[float], float]:
    """R_promote of the ``exact`` method at any threshold, read from one cumulative sum of the bootstrap distribution.

    The n-fold distribution of the lattice sum is the one :func:`tail_probabilities` computes (on the lattice, or
    the nearest-rounded grid off it; the same cached transform), summed once; a threshold then costs one index
    instead of a pass over the ~2 n L lattice points. The values agree with :func:`exact_tails_from_counts` to
    rounding (summation order): about 1e-15, pinned at 1e-12 in ``tests/compare/test_tails.py``.
    ``differences`` are validated ones without grouped units (the exact method's own path).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._tails import exact_promote_lookup
    >>> d = np.array([1] * 12 + [0] * 30 + [-1] * 3)
    >>> abs(exact_promote_lookup(d)(0.0) - tail_probabilities(d, 0.0).r_promote) < 1e-12
    True
    """
    values = np.asarray(differences, dtype=float)
    n = len(values)
    lattice = lattice_of(values, max_denominator=MAX_LATTICE)
    if lattice and 2 * n * lattice + 1 <= _EXACT_MAX_SUPPORT:
        table = _lattice_counts(values, lattice)
    else:
        table, lattice = _grid_table(values)
    _, sample, support, distribution = _distributions(table, lattice)[0]  # row 0: the lattice, or the nearest rounding
    cumulative = np.cumsum(distribution[0, :support])

    def r_promote(threshold: float) -> float:
        cut = int(lattice_threshold(sample, lattice, threshold)) + sample * lattice
        return 0.0 if cut < 0 else float(np.clip(cumulative[min(cut, support - 1)], 0.0, 1.0))

    return r_promote


def _grid_tails(values: np.ndarray, threshold: float) -> TailProbabilities:
    """Exact bootstrap tails of differences put on the finest grid 1/G that fits, bracketed.

    Rounding every difference down (up) can only raise (lower) P*(mean* <= delta), so the exact
    tails of the rounded-down and rounded-up samples bracket the exact bootstrap value of the
    real differences; the value reported is that of the nearest-rounded sample.
    """
    n = len(values)
    table, grid = _grid_table(values)
    nearest, down, up = exact_tails_from_counts(table, grid, threshold)
    low, high = float(min(up, nearest)), float(max(down, nearest))
    method = f"exact on a 1/{grid} grid (differences rounded to it; R_promote in [{low:.6f}, {high:.6f}])"
    return TailProbabilities(
        float(nearest), 1.0 - float(nearest), method, "exact-grid", n, 0, None, f"off the lattice; on a 1/{grid} grid"
    )


def _bootstrap_r_promote(
    differences: np.ndarray,
    threshold: float,
    units: np.ndarray | None,
    n_resamples: int,
    rng: np.random.Generator,
    lattice: int,
) -> float:
    """Monte-Carlo P*(mean* <= delta), resampling tasks or whole units."""
    if units is None:
        sums = differences
        sizes = np.ones(len(differences))
    else:
        codes, inverse = np.unique(units, return_inverse=True)
        sums = np.bincount(inverse, weights=differences, minlength=len(codes))
        sizes = np.bincount(inverse, minlength=len(codes)).astype(float)
    m = len(sums)
    hits = 0
    batch = max(1, _BATCH_ELEMENTS // max(m, 1))
    for start in range(0, n_resamples, batch):
        b = min(batch, n_resamples - start)
        index = rng.integers(0, m, size=(b, m))
        total = sums[index].sum(axis=1)
        count = sizes[index].sum(axis=1)
        if lattice and units is None:
            below = np.rint(total * lattice) <= lattice_threshold(m, lattice, threshold)
        else:
            below = total <= threshold * count + 1e-12 * count
        hits += int(below.sum())
    return hits / n_resamples


def normal_tails_from_moments(
    total: ArrayLike, squares: ArrayLike, n: ArrayLike, thresholds: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Paired normal tails of many samples from their sums, sums of squares and sizes.

    ``R_promote = Phi((delta - mean) / se)`` with ``se = sd / sqrt(n)`` (sample sd, ddof 1) and
    ``R_reject = 1 - R_promote``; a zero se decides by the mean alone; fewer than two values give
    no evidence (both tails 1).

    Returns
    -------
    tuple of numpy.ndarray
        R_promote and R_reject, shape ``broadcast(total, squares, n).shape + (T,)``.

    Examples
    --------
    >>> from stopwise.compare import normal_tails_from_moments
    >>> r_promote, r_reject = normal_tails_from_moments(6.0, 6.0, 10, [0.0])
    >>> round(float(r_promote[0]), 4), round(float(r_reject[0]), 4)
    (0.0001, 0.9999)
    """
    total_arr, squares_arr, n_arr = np.broadcast_arrays(
        np.asarray(total, dtype=float), np.asarray(squares, dtype=float), np.asarray(n, dtype=float)
    )
    from scipy.special import ndtr  # here: only the normal method needs SciPy (the exact tails do not)

    deltas = np.asarray(thresholds, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = total_arr / n_arr
        variance = np.maximum(squares_arr - total_arr * mean, 0.0) / (n_arr - 1)
        se = np.sqrt(variance / n_arr)[..., None]
        r_promote = ndtr((deltas - mean[..., None]) / se)
    below = mean[..., None] <= deltas
    r_promote = np.where(se == 0, np.where(below, 1.0, 0.0), r_promote)
    few = (n_arr < 2)[..., None]
    return np.where(few, 1.0, r_promote), np.where(few, 1.0, 1.0 - r_promote)


def serfling_tails_from_moments(
    total: ArrayLike, n: ArrayLike, population_size: int, thresholds: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Serfling-bound tails of many samples of n of N tasks (drawn without replacement, range 2).

    The tail on the observed side is ``exp(-2 n (mean - delta)^2 / ((1 - (n - 1) / N) 4))``; the
    other tail is 1.

    Examples
    --------
    >>> from stopwise.compare import serfling_tails_from_moments
    >>> r_promote, r_reject = serfling_tails_from_moments(20.0, 100, 400, [0.0])
    >>> round(float(r_promote[0]), 4), float(r_reject[0])
    (0.0701, 1.0)
    """
    total_arr, n_arr = np.broadcast_arrays(np.asarray(total, dtype=float), np.asarray(n, dtype=float))
    deltas = np.asarray(thresholds, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (total_arr / n_arr)[..., None]
        finite = np.maximum(1.0 - (n_arr - 1) / population_size, 1.0 / population_size)[..., None]
        bound = np.exp(-2.0 * n_arr[..., None] * (mean - deltas) ** 2 / (finite * 4.0))
    above = mean > deltas
    # the mean over the N tasks lies within the logical bounds of the observed ones: a threshold outside them is settled
    # (exact at n = N, where the bound alone would leave a tail of exp(-n (mean - delta)^2 N / 2); issue 35)
    unseen = (population_size - n_arr)[..., None]
    known_above = (total_arr[..., None] - unseen) / population_size > deltas
    known_below = (total_arr[..., None] + unseen) / population_size <= deltas
    r_promote = np.where(known_above, 0.0, np.where(above, bound, 1.0))
    r_reject = np.where(known_below, 0.0, np.where(above, 1.0, bound))
    return r_promote, r_reject


def _normal_tails(differences: np.ndarray, threshold: float, units: np.ndarray | None) -> tuple[float, float]:
    """Paired normal test; with units, a cluster-robust standard error over the units."""
    if units is None:
        promote_tail, reject_tail = normal_tails_from_moments(differences.sum(), (differences**2).sum(), len(differences), [threshold])
        return float(promote_tail[0]), float(reject_tail[0])
    n = len(differences)
    mean = differences.mean()
    codes, inverse = np.unique(units, return_inverse=True)
    m = len(codes)
    if m < 2:
        return 1.0, 1.0
    sums = np.bincount(inverse, weights=differences, minlength=m)
    sizes = np.bincount(inverse, minlength=m)
    se = np.sqrt(m / (m - 1) * np.sum((sums - mean * sizes) ** 2)) / n
    if se == 0:
        return (1.0, 0.0) if mean <= threshold else (0.0, 1.0)
    from scipy.special import ndtr  # here: only the normal method needs SciPy

    r_promote = float(ndtr((threshold - mean) / se))
    return r_promote, 1.0 - r_promote


def _tail_iv(
    differences: ArrayLike,
    threshold: float,
    method: str,
    n_resamples: int,
    units: ArrayLike | None,
    population_size: int | None,
) -> tuple[np.ndarray, np.ndarray | None]:
    values = np.asarray(differences, dtype=float)
    if values.ndim != 1 or len(values) == 0:
        raise ArgumentError("`differences` must be a non-empty 1-d array")
    if not np.isfinite(values).all() or (np.abs(values) > 1 + 1e-12).any():
        raise ArgumentError("`differences` must be finite numbers in [-1, 1]")
    if not -1.0 <= threshold < 1.0:
        raise ArgumentError(f"`threshold` must be in [-1, 1); got {threshold!r}")
    if method not in COMPUTED_TAIL_METHODS:
        raise ArgumentError(f"`method` must be one of {', '.join(COMPUTED_TAIL_METHODS)}; got {method!r}")
    if int(n_resamples) != n_resamples or n_resamples < 1:
        raise ArgumentError(f"`n_resamples` must be a positive integer; got {n_resamples!r}")
    unit_array = None
    if units is not None:
        unit_array = np.asarray(units)
        if unit_array.shape != values.shape:
            raise ArgumentError("`units` must have one entry per difference")
        if np.unique(unit_array).size == len(values):  # one task per unit: nothing is grouped
            unit_array = None
    if method in ("serfling", "exact-wor"):
        if population_size is None or population_size < len(values):
            raise ArgumentError(f"`population_size` must be given and at least the number of differences for {method}")
        if unit_array is not None:
            raise ArgumentError(f"the {method} tails assume tasks sampled one by one; they cannot account for grouped units")
    return values, unit_array


def tail_probabilities(
    differences: ArrayLike,
    threshold: float = 0.0,
    *,
    method: TailMethodName = "exact",
    n_resamples: int = 200,
    rng: np.random.Generator | int | None = None,
    units: ArrayLike | None = None,
    population_size: int | None = None,
) -> TailProbabilities:
    """R_promote = P*(mean* <= delta) and R_reject = P*(mean* > delta) of observed paired differences.

    Parameters
    ----------
    differences : array_like of float
        The observed paired differences D_i in [-1, 1].
    threshold : float, optional
        delta, the required improvement.
    method : {"exact", "bootstrap", "normal", "serfling", "exact-wor"}, optional
        See the module docstring. ``exact`` works on a fine grid off the lattice (bracketing the
        exact value) and falls back to ``bootstrap`` with grouped units; ``method`` says which.
    n_resamples : int, optional
        B for the Monte-Carlo bootstrap.
    rng : numpy.random.Generator or int, optional
        Generator (or seed) of the Monte-Carlo bootstrap.
    units : array_like, optional
        Analysis unit of each difference; units holding several tasks are resampled whole.
    population_size : int, optional
        N, the number of shared tasks (needed by ``serfling`` and ``exact-wor``).

    Returns
    -------
    TailProbabilities

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise import tail_probabilities
    >>> d = np.array([1] * 12 + [0] * 30 + [-1] * 3)
    >>> exact = tail_probabilities(d, 0.0)
    >>> exact.method, round(exact.r_promote, 4)
    ('exact (lattice 1/1)', 0.0092)
    >>> mc = tail_probabilities(d, 0.0, method="bootstrap", n_resamples=20000, rng=0)
    >>> abs(mc.r_promote - exact.r_promote) < 0.003
    True
    """
    values, unit_array = _tail_iv(differences, threshold, method, n_resamples, units, population_size)

    def generator() -> np.random.Generator:  # made when a Monte-Carlo path needs it (numpy.random loads then)
        return check_random_state("tail_probabilities", rng, name="rng", error=ArgumentError)

    lattice = lattice_of(values, max_denominator=MAX_LATTICE)
    n = len(values)
    if method == "exact":
        support = 2 * len(values) * lattice + 1
        if lattice and unit_array is None and support <= _EXACT_MAX_SUPPORT:
            counts = _lattice_counts(values, lattice)
            r_promote = float(exact_tails_from_counts(counts, lattice, threshold)[0])
            return TailProbabilities(
                r_promote, 1.0 - r_promote, f"exact (lattice 1/{lattice})", "exact", n, lattice, counts=counts[0]
            )
        if unit_array is None:
            return _grid_tails(values, threshold)
        r_promote = _bootstrap_r_promote(values, threshold, unit_array, n_resamples, generator(), lattice)
        return TailProbabilities(
            r_promote, 1.0 - r_promote, f"bootstrap (B={n_resamples}; exact unavailable: grouped units)",
            "bootstrap", n, lattice, n_resamples, "grouped units: exact unavailable",
        )
    if method == "bootstrap":
        r_promote = _bootstrap_r_promote(values, threshold, unit_array, n_resamples, generator(), lattice)
        how = f"bootstrap (B={n_resamples}" + (", unit resampling)" if unit_array is not None else ")")
        return TailProbabilities(r_promote, 1.0 - r_promote, how, "bootstrap", n, lattice, n_resamples)
    if method == "normal":
        r_promote, r_reject = _normal_tails(values, threshold, unit_array)
        how = "paired normal" + (" (cluster-robust se)" if unit_array is not None else "")
        return TailProbabilities(r_promote, r_reject, how, "normal", n, lattice)
    assert population_size is not None
    fallback = None
    if method == "exact-wor":
        if lattice == 1 and bool((np.abs(values) <= 1).all()):
            wins, losses = int((values > 0).sum()), int((values < 0).sum())
            try:
                r_promote, r_reject = exact_wor_pvalue(wins, losses, n, population_size, threshold)
            except ArgumentError as exc:  # the enumeration is too large
                fallback = f"exact-wor enumeration too large ({exc}); Serfling bound used"
            else:
                how = f"exact-wor (n={n} of N={population_size}; {wins} wins, {losses} losses)"
                return TailProbabilities(r_promote, r_reject, how, "exact-wor", n, lattice)
        else:
            fallback = (
                "differences not all 0 or ±1 (e.g. averages of several attempts): exact-wor is exact only for 0/1 "
                "outcomes; the Serfling bound (valid without replacement, conservative) was used"
            )
    promote_tail, reject_tail = serfling_tails_from_moments(values.sum(), len(values), population_size, [threshold])
    r_promote, r_reject = float(promote_tail[0]), float(reject_tail[0])
    how = f"serfling (n={n} of N={population_size})" + ("; exact-wor unavailable" if fallback else "")
    return TailProbabilities(r_promote, r_reject, how, "serfling", n, lattice, fallback=fallback)
