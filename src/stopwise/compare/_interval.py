"""An interval for the mean paired difference that matches a record's boundary (issue 24).

Both boundaries act on two one-sided tests at the tail cutoff a: promote tests ``mean <= delta``,
reject tests ``mean >= delta`` (betting-wor) or ``mean > delta`` (the fixed-budget tails). Inverting
each test over the threshold gives a one-sided level ``1 - a`` bound; together they make an interval of
level ``1 - 2a`` (0.90 at a = 0.05), and a final action matches it: promote at delta when delta lies
below ``low``, reject when delta lies at or above ``high``.

* ``betting-wor``: the anytime-valid confidence sequence of the betting test (the bounds of
  :func:`stopwise.compare.betting_boundary`: the running intersection over looks of the thresholds
  neither capital process has rejected, on a 0.01 grid rounded outward, intersected with the logical
  bounds). Valid at every look at once.
* fixed-budget (at the budget limit only): the tail function of the policy's ``tail_method`` inverted over delta by bisection, so
  ``low = sup{delta : R_promote(delta) <= a}`` and ``high = inf{delta : R_reject(delta) <= a}``. For
  ``exact`` and ``bootstrap`` these are the a and 1 - a percentiles of the (exact or seeded Monte-Carlo)
  bootstrap distribution of the mean; for ``normal`` the mean -/+ z se; for ``serfling`` and
  ``exact-wor`` the inverted finite-population tests; then intersected with the logical bounds
  ``(S -/+ (N - n)) / N`` of the planned tasks' mean (exact when every task is observed). Valid at the one
  planned look only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

import numpy as np

from stopwise._vocabulary import ComputedTailMethod
from stopwise.compare._betting import betting_boundary
from stopwise.compare._estimand import TASK_DISTRIBUTION_METHODS
from stopwise.compare._tails import exact_promote_lookup, tail_probabilities
from stopwise.compare._wor_exact import _one_side
from stopwise.errors import ArgumentError
from stopwise.records import DifferenceInterval

__all__ = ["betting_interval", "one_look_interval", "sequence_interval"]

BISECTION_STEPS = 30
"""Bisection steps of the one-look interval over [-1, 1] (a width of 2^-29, far below any reported digit)."""


def betting_interval(
    differences: np.ndarray,
    *,
    population_size: int,
    alpha: float,
    groups: np.ndarray | None = None,
    group_sizes: dict[str, int] | None = None,
) -> DifferenceInterval:
    """The anytime-valid confidence sequence of the betting-wor test at the current look.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._interval import betting_interval
    >>> d = np.random.default_rng(1).permutation(np.r_[np.ones(30), np.zeros(60), -np.ones(10)])
    >>> ci = betting_interval(d, population_size=500, alpha=0.05)
    >>> ci.kind, ci.level, round(ci.low, 2), round(ci.high, 2)
    ('anytime-valid', 0.9, 0.12, 0.37)
    """
    result = betting_boundary(differences, 0.0, population_size=population_size, alpha=alpha, groups=groups, group_sizes=group_sizes)
    return sequence_interval(result.lower, result.upper, result.method, alpha)


def sequence_interval(lower: float, upper: float, method: str, alpha: float) -> DifferenceInterval:
    """The interval of the betting test's confidence bounds (``BettingBoundary.lower`` / ``upper`` and its ``method``)."""
    return anytime_interval(
        lower, upper, alpha, f"confidence sequence of the {method} test (each end one-sided 1 - a over every look; 0.01 grid, rounded outward)"
    )


def anytime_interval(low: float, high: float, alpha: float, method: str) -> DifferenceInterval:
    """The anytime-valid interval of a confidence sequence's two one-sided ends, clipped to [-1, 1].

    Ends that cross (every mean rejected by one side at some look: the order contradicts random sampling, chance
    <= 2a) are shown as the span between them, and ``method`` says so.
    """
    low, high = float(np.clip(low, -1.0, 1.0)), float(np.clip(high, -1.0, 1.0))
    if low > high:
        low, high = high, low
        method += "; empty at this look (every mean rejected at some look), shown as the span between its two one-sided bounds"
    return DifferenceInterval(low=low, high=high, level=round(1.0 - 2.0 * alpha, 12), kind="anytime-valid", method=method)


def _edge(tail: Callable[[float], float], alpha: float, *, rising: bool) -> float:
    """The threshold where ``tail`` crosses ``alpha`` on [-1, 1) (``rising``: R_promote, else R_reject)."""
    top = 1.0 - 1e-9
    lo, hi = -1.0, top
    if rising:  # low = sup{d : R_promote(d) <= a}; R_promote rises with d
        if tail(lo) > alpha:
            return -1.0
        if tail(hi) <= alpha:
            return 1.0
    else:  # high = inf{d : R_reject(d) <= a}; R_reject falls with d
        if tail(lo) <= alpha:
            return -1.0
        if tail(hi) > alpha:
            return 1.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        inside = tail(mid) <= alpha if rising else tail(mid) > alpha
        lo, hi = (mid, hi) if inside else (lo, mid)
    return 0.5 * (lo + hi)


def _last_true(holds: Callable[[int], bool], first: int, last: int, guess: int) -> int:
    """The largest c in [first, last] where ``holds`` (True, then False, as c grows) holds; ``first - 1`` if none.

    Gallops out from ``guess`` to a bracket, then bisects: a few evaluations when the guess is close.
    """
    c = min(max(guess, first), last)
    step = 1
    if holds(c):
        lo = c
        while True:
            nxt = min(lo + step, last)
            if nxt == lo:
                return lo
            if not holds(nxt):
                hi = nxt
                break
            lo, step = nxt, step * 2
    else:
        hi = c
        while True:
            nxt = max(hi - step, first)
            if nxt == hi:
                return first - 1
            if holds(nxt):
                lo = nxt
                break
            hi, step = nxt, step * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)
    return lo


def _wor_edges(d: np.ndarray, population_size: int, alpha: float) -> tuple[float, float]:
    """The exact-wor ends, searched over the integer c = floor(N delta) its null depends on.

    Promote at c rejects ``total <= c`` (mu <= c / N), so ``low`` is one past the largest rejected c, over N;
    reject at c rejects ``total >= c + 1``, so ``high`` is the smallest rejected c, over N. The search gallops
    out from the normal guess (about a dozen evaluations instead of 60 on the real line).

    At small N the p-value is not monotone in c (the statistic's centre moves with c): the crossing found can lie
    inside the span of the c the tests do not reject (16 of the 66 samples of n = 10 of N = 30 at a = 0.025). The
    ends' miss probabilities are still at most a on every population of N = 30 (an exact check in
    tests/compare/test_interval.py) and of N = 60 with n = 20 (worst 0.024997 at a = 0.025, computed once);
    scanning every c instead costs 10x at N = 500.
    """
    big_n, n = population_size, len(d)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    cache: dict[tuple[int, int], float] = {}

    def rejected(c: int, side: int) -> bool:
        if (c, side) not in cache:
            cache[c, side] = _one_side(wins, losses, n, big_n, (c + 0.5) / big_n, ("promote", "reject")[side])  # the side asked for only
        return cache[c, side] <= alpha

    fpc = math.sqrt(max(0.0, (big_n - n) / max(big_n - 1, 1)))
    spread = NormalDist().inv_cdf(1.0 - alpha) * float(d.std()) / math.sqrt(n) * fpc
    mean = float(d.mean())
    first, last = -big_n, big_n - 1
    low_c = _last_true(lambda c: rejected(c, 0), first, last, round((mean - spread) * big_n)) + 1
    high_c = _last_true(lambda c: not rejected(c, 1), first, last, round((mean + spread) * big_n)) + 1
    return low_c / big_n, high_c / big_n


GUARD = 1e-9
"""A tail read from the cumulative distribution this close to a is recomputed by :func:`tail_probabilities`: the
bisection's every comparison with a is then the one the direct computation makes (the two agree to ~1e-15)."""


def _exact_tails(
    d: np.ndarray, alpha: float, promote: Callable[[float], float], reject: Callable[[float], float]
) -> tuple[Callable[[float], float], Callable[[float], float]]:
    """R_promote and R_reject of the exact method read from one cumulative distribution, the direct ones near ``alpha``."""
    lookup = exact_promote_lookup(d)

    def fast_promote(threshold: float) -> float:
        value = lookup(threshold)
        return promote(threshold) if abs(value - alpha) < GUARD else value

    def fast_reject(threshold: float) -> float:
        value = 1.0 - lookup(threshold)
        return reject(threshold) if abs(value - alpha) < GUARD else value

    return fast_promote, fast_reject


def one_look_interval(
    differences: np.ndarray,
    *,
    method: ComputedTailMethod,
    alpha: float,
    population_size: int,
    n_resamples: int = 200,
    seed: int = 0,
    units: np.ndarray | None = None,
) -> DifferenceInterval:
    """The one-look interval of the fixed-budget rule: its tail method inverted over the threshold.

    Each evaluation of a Monte-Carlo bootstrap redraws from ``seed``, so the tails are monotone in the
    threshold and the ends are the bootstrap percentiles of those resamples. The exact tails are read from one
    cumulative distribution at every step of the bisection (:func:`stopwise.compare._tails.exact_promote_lookup`;
    a tail within :data:`GUARD` of a is recomputed directly, so the ends are those of the direct computation):
    10^6 rows take one transform and 60 lookups instead of 60 passes over ~10^6 lattice points.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._interval import one_look_interval
    >>> d = np.r_[np.ones(30), np.zeros(60), -np.ones(10)]
    >>> ci = one_look_interval(d, method="normal", alpha=0.025, population_size=500)
    >>> ci.kind, ci.level, round(ci.low, 3), round(ci.high, 3)
    ('one-look', 0.95, 0.082, 0.318)
    """
    d = np.asarray(differences, dtype=float)
    if len(d) == 0:
        raise ArgumentError("an interval needs at least one observed difference")

    def tails(threshold: float) -> tuple[float, float]:
        t = tail_probabilities(
            d, threshold, method=method, n_resamples=n_resamples, rng=np.random.default_rng(seed), units=units, population_size=population_size
        )
        return t.r_promote, t.r_reject

    used = tail_probabilities(d, 0.0, method=method, n_resamples=n_resamples, rng=np.random.default_rng(seed), units=units, population_size=population_size)
    if method == "exact-wor" and used.used == "exact-wor" and np.isin(d, (-1.0, 0.0, 1.0)).all() and len(d) < population_size:
        # (exact-wor refused for its size falls back to the Serfling bound: the interval then inverts that, below)
        low, high = _wor_edges(d, population_size, alpha)  # exactly c / N: rounding 31 / 60 to 8 places would move it inward
    else:
        promote, reject = (lambda x: tails(x)[0]), (lambda x: tails(x)[1])
        if used.used in ("exact", "exact-grid"):  # one cumulative distribution serves every threshold of the bisection
            promote, reject = _exact_tails(d, alpha, promote, reject)
        low = _edge(promote, alpha, rising=True)
        high = _edge(reject, alpha, rising=False)
        # the ends are steps of the tail function (lattice points for exact tails): snap off the bisection's last 2^-29
        low, high = round(low, 8), round(high, 8)
    low, high = min(low, high), max(low, high)
    about = "the task distribution's mean (tasks as a sample)"
    if method not in TASK_DISTRIBUTION_METHODS:
        # the mean over the N planned tasks can only lie within the logical bounds of the observed ones (exact at n = N);
        # the bootstrap and normal tails are about the task distribution, whose mean these bounds do not hold (issue 35)
        n, total = len(d), float(d.sum())
        logical_low, logical_high = (total - (population_size - n)) / population_size, (total + (population_size - n)) / population_size
        low, high = min(max(low, logical_low), logical_high), max(min(high, logical_high), logical_low)
        about = "within the logical bounds of the planned tasks' mean"
    return DifferenceInterval(
        low=float(np.clip(low, -1.0, 1.0)),
        high=float(np.clip(high, -1.0, 1.0)),
        level=round(1.0 - 2.0 * alpha, 12),
        kind="one-look",
        method=f"{used.method} tails inverted over the threshold (each end one-sided 1 - a, at the planned look only), {about}",
    )
