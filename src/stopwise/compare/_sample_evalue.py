r"""One-look e-values for a mean over a task distribution: a mixture of constant bets, free of the task order.

On a complete record every gap between two systems is known exactly *for those runs on those tasks*; a leaderboard
reader asks about the benchmark's task distribution instead. Taking the N tasks as an i.i.d. sample of it, and
each run as a draw of the system's run-to-run randomness, the paired differences ``D_i = Y_A,i - Y_B,i`` (attempts
averaged) are i.i.d. in [-1, 1] with mean ``mu = E[Y_A - Y_B]``: the expected score difference of new runs on
new tasks drawn like these. To test ``H0+: mu <= m`` at one look,

    E+(m) = (1/G) sum_g prod_i (1 + lambda_g (D_i - m)),   lambda_g = u_g / (1 + m),   u_g in (0, 1),

is an e-value: each factor is positive (``D_i >= -1``), has mean ``1 + lambda_g (mu - m) <= 1`` under H0+, and the
factors are independent, so each product has mean at most 1, and so has their average (Waudby-Smith & Ramdas
2023, JRSS-B 86, the "diversified" mixture of constant bets). ``E-(m) = (1/G) sum_g prod_i (1 + lambda_g (m - D_i))``
with ``lambda_g = u_g / (1 - m)`` tests ``H0-: mu >= m``. A product of constant bets does not depend on the order of
the tasks: no seed, one answer per record. The bets ``u_g`` (:data:`MIXTURE_BETS`) are fixed before any outcome:
12 points from 0.01 to 0.9, so the mixture loses at most log 12 of log-evidence against the best single bet in
hindsight. On 0/±1 differences the best constant bet is the likelihood ratio of the sign (McNemar) test, so the
mixture is close to a Bayes factor of that test.

Confidence bounds: ``E+(m)`` falls as m grows and ``E-(m)`` rises, so ``low = sup{m : E+(m) >= 1/a'}`` and
``high = inf{m : E-(m) >= 1/a'}`` come by bisection (:func:`mixture_bounds`).

Differences on a lattice (0/1 outcomes, averages of a few attempts) are reduced to counts of their distinct values
first, so a family of a thousand pairs costs milliseconds.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from stopwise.errors import ArgumentError

__all__ = ["MIXTURE_BETS", "mixture_bounds", "mixture_log_evalues"]

MIXTURE_BETS = np.geomspace(0.01, 0.9, 12)
"""u_g: the constant bets of the mixture, as shares of the largest bet that keeps every factor nonnegative."""
MAX_DISTINCT = 256
"""Differences with at most this many distinct values are counted per value (else summed task by task)."""
BISECTION_STEPS = 32
"""Bisection steps of the bounds over [-1, 1] (a bracket of 2^-31)."""
_EDGE = 1e-9


class _Counts:
    """The differences of R rows as counts of their distinct values (or the raw matrix when there are too many)."""

    def __init__(self, differences: np.ndarray) -> None:
        values, codes = np.unique(np.round(differences, 12), return_inverse=True)
        rows, n = differences.shape
        self.n = n
        if len(values) <= MAX_DISTINCT:
            flat = np.arange(rows)[:, None] * len(values) + codes.reshape(rows, n)
            self.values = values
            self.counts = np.bincount(flat.ravel(), minlength=rows * len(values)).reshape(rows, len(values)).astype(float)
            self.raw = None
        else:
            self.values = self.counts = None  # type: ignore[assignment]
            self.raw = differences

    def log_evalue(self, m: np.ndarray, promote: bool) -> np.ndarray:
        """Log E+(m) (``promote``) or log E-(m) of every row, ``m`` one threshold per row."""
        m = np.clip(m, -1.0 + _EDGE, 1.0 - _EDGE)
        scale = 1.0 / (1.0 + m) if promote else 1.0 / (1.0 - m)
        sign = 1.0 if promote else -1.0
        if self.raw is None:
            x = sign * (self.values[None, :] - m[:, None]) * scale[:, None]  # (R, V), >= -1
            per_bet = np.einsum("rv,rvg->rg", self.counts, np.log1p(x[:, :, None] * MIXTURE_BETS))
        else:
            per_bet = np.empty((len(m), len(MIXTURE_BETS)))
            for lo in range(0, len(m), 64):  # bounded memory: 64 x n x G at a time
                part = slice(lo, lo + 64)
                x = sign * (self.raw[part] - m[part, None]) * scale[part, None]
                per_bet[part] = np.log1p(x[:, :, None] * MIXTURE_BETS).sum(axis=1)
        top = per_bet.max(axis=1)
        return top + np.log(np.exp(per_bet - top[:, None]).mean(axis=1))


def _differences_iv(differences: ArrayLike) -> np.ndarray:
    values = np.atleast_2d(np.asarray(differences, dtype=float))
    if values.ndim != 2 or values.shape[1] == 0:
        raise ArgumentError("`differences` must be a non-empty (R, n) array")
    if not np.isfinite(values).all() or (np.abs(values) > 1.0 + 1e-12).any():
        raise ArgumentError("paired differences must be finite numbers in [-1, 1]")
    return values


def mixture_log_evalues(differences: ArrayLike, thresholds: float | ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Log E+(m) and log E-(m) of every row: the one-look e-values against ``mean <= m`` and ``mean >= m``.

    Parameters
    ----------
    differences : array_like, shape (R, n)
        Paired differences in [-1, 1], one row per pair (the order of the columns does not matter).
    thresholds : float or array_like, shape (R,)
        m of each row.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray), shape (R,) each

    Examples
    --------
    Sixty wins and twenty losses in 200 tasks: strong evidence against ``mean <= 0``, none against ``mean >= 0``.

    >>> import numpy as np
    >>> from stopwise.compare._sample_evalue import mixture_log_evalues
    >>> d = np.r_[np.ones(60), -np.ones(20), np.zeros(120)]
    >>> up, down = mixture_log_evalues(d[None, :], 0.0)
    >>> round(float(np.exp(up[0]))), bool(down[0] < 0)
    (3665, True)
    """
    values = _differences_iv(differences)
    m = np.broadcast_to(np.asarray(thresholds, dtype=float), (values.shape[0],)).copy()
    counts = _Counts(values)
    return counts.log_evalue(m, True), counts.log_evalue(m, False)


def mixture_bounds(differences: ArrayLike, alpha: float | ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The one-sided level ``1 - alpha`` bounds (low, high) of each row's mean, inverting the mixture e-values.

    Parameters
    ----------
    differences : array_like, shape (R, n)
        Paired differences in [-1, 1].
    alpha : float or array_like, shape (R,)
        a' of each end of each row (the two ends together: ``1 - 2 a'``).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._sample_evalue import mixture_bounds
    >>> d = np.r_[np.ones(60), -np.ones(20), np.zeros(120)]
    >>> low, high = mixture_bounds(d[None, :], 0.05)
    >>> bool(low[0] < 0.2 < high[0]), bool(low[0] > 0)
    (True, True)
    """
    values = _differences_iv(differences)
    level = np.log(1.0 / np.broadcast_to(np.asarray(alpha, dtype=float), (values.shape[0],)))
    counts = _Counts(values)
    ends = []
    for promote in (True, False):
        inside, outside = np.full(values.shape[0], -1.0 if promote else 1.0), np.full(values.shape[0], 1.0 if promote else -1.0)
        for _ in range(BISECTION_STEPS):  # `inside` is rejected (E >= 1/a'), `outside` is not
            middle = 0.5 * (inside + outside)
            rejected = counts.log_evalue(middle, promote) >= level
            inside, outside = np.where(rejected, middle, inside), np.where(rejected, outside, middle)
        ends.append(inside)
    return ends[0], ends[1]
