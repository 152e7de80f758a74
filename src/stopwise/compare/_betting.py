r"""An anytime-valid paired boundary: betting confidence sequences for sampling without replacement.

A benchmark is a finite population of N planned tasks. The paired outcome of task i is
``D_i = Y_A,i - Y_B,i`` in [-1, 1] (attempts averaged), and the question is whether the
finite-population mean ``mu = (1/N) sum_i D_i`` exceeds the threshold delta. Tasks are revealed in a
pre-registered random order; the boundary may be consulted after every task (any number of looks, at
any data-dependent time) and still errs with probability at most alpha per action.

Two one-sided tests at m0 = delta
---------------------------------
* promote tests H0+: mu <= delta with a capital process that bets lambda_t >= 0 on large D;
* reject tests H0-: mu >= delta with lambda_t <= 0.

Each test's capital K_t is a nonnegative supermartingale under its null, so by Ville's inequality
``P(exists t: K_t >= 1/alpha) <= alpha``; the anytime-valid p-value is
``p_t = min(1, 1 / max_{s <= t} K_s)`` and the action is taken at the first look with ``p_t <= alpha``.
The two nulls are different hypotheses, so neither test spends part of the other's alpha: a wrong
promote needs H0+ true, a wrong reject needs H0- true.

Pooled process (uniform order over all N tasks)
-----------------------------------------------
Waudby-Smith & Ramdas (2020), "Confidence sequences for sampling without replacement", NeurIPS 2020,
section 3: under uniform sampling without replacement and mu = m0, the conditional mean of the t-th
draw is the mean of the tasks not yet seen,

    m_t^wor = (N m0 - sum_{i<t} D_i) / (N - t + 1),

so ``K_t = prod_{i<=t} (1 + lambda_i (D_i - m_i^wor))`` with predictable lambda_i is a nonnegative
martingale at mu = m0 (and a supermartingale for every mu on the null side when lambda >= 0, resp.
<= 0, since m_t^wor is increasing in m0). Nonnegativity needs ``lambda_i in [0, 1/(1 + m_i^wor))``
for promote and ``(-1/(1 - m_i^wor), 0]`` for reject; bets are truncated at ``c`` times these limits.

Betting strategy. Any predictable bet keeps the guarantee; the choice only moves power. Two
classical bets, on the [-1, 1] scale and at the without-replacement null mean:

* aGRAPA, the approximate growth-rate adaptive bet of Waudby-Smith & Ramdas (2023), "Estimating
  means of bounded random variables by betting", JRSS-B 86(1), section 5.3:
  ``lambda_t = (mu_hat_{t-1} - m_t^wor) / (sigma2_hat_{t-1} + (mu_hat_{t-1} - m_t^wor)^2)``, which for
  win/tie/loss outcomes is exactly the plug-in Kelly bet; it bets only in the direction the data
  point to (promote when positive, reject when negative);
* the predictable plug-in of WSR (2020, eq. 9; one-sided):
  ``|lambda_t| = sqrt(2 log(1/alpha) / (sigma2_hat_{t-1} t log(1 + t)))``, large early and decaying.

with ``mu_hat_{t-1} = (0 + sum_{i<t} D_i) / t`` and
``sigma2_hat_{t-1} = (sigma2_0 + sum_{i<t} (D_i - mu_hat_{t-1})^2) / t`` (one pseudo-observation at the
centre of [-1, 1], sigma2_0 = :data:`PRIOR_VARIANCE`). Strategies (each side separately):

* ``max`` bets the larger of the aGRAPA and plug-in bets, truncated at c = :data:`TRUNCATION` times
  the nonnegativity limit (the plug-in's early aggressiveness resolves strong pairs in the first
  looks, aGRAPA's Kelly sizing carries moderate pairs);
* ``horizon`` replaces the plug-in's time scale ``t log(1 + t)`` by ``H = h N`` up to the look H (the
  fixed-n plug-in of WSR 2023, ``sqrt(2 log(1/alpha) / (sigma2_hat n))``, tuned to n = H; h =
  :data:`HORIZON`) and by ``t log(1 + t) / log(1 + H)`` after it (continuous at H), with c =
  :data:`HORIZON_TRUNCATION`: larger bets in the first h N looks;
* ``mixture`` averages the capitals of ``max`` and ``horizon`` (:data:`MIXTURE`) with equal weights.
  An average of test supermartingales is a test supermartingale, so the mixture is tested at the full
  alpha (no alpha is split between the components, and no maximum is taken over processes); it
  resolves nearly as early as ``horizon`` and nearly as late as ``max`` (the diversified-Kelly bet of
  WSR 2023 averages constant-bet capital processes in the same way);
* ``auto`` (the default) is ``mixture`` for the pooled process and ``max`` for the stratified one.

The default was chosen on records other than swebench_verified (swebench_lite and
swebench_verified_bashonly, 100 orders; see docs/live_looks.md) among single bets, truncations,
variance priors, grids of constant bets, online Newton step and mixtures: it keeps most of the
horizon bet's gain by 10 % and 20 % of the tasks without its loss at later looks. No bet can resolve more runs by b N
tasks than the most powerful single-look level-alpha test at b N (a boundary valid at every look is
in particular valid at that look): benchmarks/live_replay.py prints that ceiling (a randomized sign
test) beside the replay.

Logical bounds. After t tasks, mu is known to lie in ``[(S_t - (N - t)) / N, (S_t + (N - t)) / N]``.
When the lower end exceeds m0, H0+ is impossible and promote is settled (K = inf, p = 0); when the
upper end is below m0, H0- is impossible and reject is settled. At t = N this is the exact answer.

Stratified process (coverage-aware or stratified orders)
--------------------------------------------------------
Under a coverage-aware order the group of the next task is chosen predictably and, within each
group g (size N_g, weight w_g = N_g / N, unknown mean m_g), tasks come uniformly without replacement.
The pooled process is then not a supermartingale when group means differ (the next task's mean is
its group's remaining mean, not the pool's). Per group, with j the within-group draw index and
``m_{g,j}^wor = (N_g m_g - S_{g,<j}) / (N_g - j + 1)``, the empirical-Bernstein factor

    exp(lambda (D - m_{g,j}^wor) - psi(2 lambda) (D - mu_hat)^2 / 4),   psi(u) = -log(1 - u) - u,

with predictable lambda in [0, 1/2) and predictable centre mu_hat in [-1, 1], has conditional mean
<= 1 at the true m_g (Fan et al. 2015's inequality ``exp(u y - psi(u) y^2) <= 1 + u y`` for y >= -1,
as in the predictable-plug-in empirical-Bernstein process of WSR 2023, Theorem 2, applied to the
without-replacement mean of WSR 2020). The product over groups of these factors is a nonnegative
supermartingale at the true group means, for any predictable choice of groups. Its logarithm is

    log K_t(m) = A_t - sum_g C_{g,t} m_g,   C_{g,t} = sum_{draws of g} lambda N_g / (N_g - j + 1) >= 0,

*linear* in the nuisance vector m (the bet lambda is computed from pooled data and delta only, never
from m). The composite null of promote is ``{sum_g w_g m_g <= delta, m_g in [lo_g,t, hi_g,t]}``
where [lo, hi] are each group's logical bounds at time t (the true m always lies in them), so
``inf_m log K_t(m) = A_t - max{sum_g C_g m_g}`` over that polytope: a fractional knapsack, solved
exactly by filling groups in decreasing C_g / w_g from their lower bounds. The infimum is at most
the capital at the true m, so Ville's inequality still applies; when no m satisfies the null
(``sum_g w_g lo_g > delta``) promote is logically settled. Reject is the mirror image. (With the
betting factor ``log(1 + lambda (D - m))`` the log-capital is concave in m and its infimum sits at
a vertex of the polytope — all but one group at a logical extreme — which is why the stratified
process uses the empirical-Bernstein form.) The bet is the same strategy's expression on pooled
quantities and the pooled m_t^wor (never on m), truncated at ``c / 2``; mu_hat is the group's running mean with the pooled mean as a
one-observation prior. A mixture averages the components' infima, which is at most the infimum of the
average capital (each component attains its infimum on its own). Its default bet is ``max``: the
mixture and other bets tried did not resolve more (the empirical-Bernstein factor penalises larger
bets quadratically, and the knapsack infimum grows with the imbalance of the coefficients C_g / w_g).

Use the stratified process whenever the order is not uniform over all N tasks (pass ``groups`` and
``group_sizes``); it is valid for any predictable group schedule, including the uniform one. With one group a
group schedule is no schedule: the pooled process is computed (the same test, and the stronger one).

``decide`` no longer runs it (issue 33): on the shared records it resolved far fewer runs by 20 % of the tasks
than the pooled process with the top-up design (SWE-bench Verified 44.6 % against 69.2 %; docs/live_looks.md
says why: the infimum over the group means of the composite null, which any stratified test of the
risk-limiting-audit literature shares). It stays a library function for replays of coverage-aware orders.

With the coverage rule, the default live design does not need it: the top-up design
(:mod:`stopwise.compare._topup`, policy ``[betting] design = "top-up"``) runs a uniformly random
permutation pi, tests with the pooled process on pi's prefix and, after a crossing, runs the fewest
tasks that meet coverage before acting; the action depends only on the pooled crossing, so the pooled
guarantee carries over. The stratified process serves ``design = "stratified"`` (coverage-aware orders).

Computation. The bets, A_t and the coefficients' increments are vectorised over rows and looks like
the pooled process; the per-group running sums and the knapsack maxima come from
:mod:`stopwise.compare._strata`: sorted at every look for a few rows, and for a batch (from
:data:`stopwise.compare._strata.LOOP_ROWS` capital paths on) by a loop over the looks that keeps the
fill order and updates only the drawn group: about 0.5 us per row and look with ``max`` and 12 groups,
2.7 times less than sorting (rows, looks, G) arrays in their best batch size (benchmarks/stratified_betting.py).
:func:`betting_paths` computes at most :data:`STRATIFIED_ROWS` (pooled: :data:`POOLED_ROWS`) rows at a time.

Confidence sequence. The bounds ``lower`` and ``upper`` of :class:`BettingBoundary` are the
running intersection of the one-sided level-alpha sets ``{m : max_{s<=t} K_s^+(m) < 1/alpha}``
(lower) and ``{m : max_{s<=t} K_s^-(m) < 1/alpha}`` (upper), evaluated on a grid of m and rounded
outward, then intersected with the logical bounds: a coarse grid brackets each end, a fine one inside the
bracket. Since issue 31 each end is a search (:func:`_confidence_bounds`) that computes the sequence's own terms
once for all means, skips the means its test settles logically, rejects most others at a few screening looks
(:data:`SCREEN_LOOKS`; the same numbers as at every look) and computes whole paths only until its first kept mean;
the test at delta rides along with the coarse means. The ends are those of the whole grid (tests/compare pin them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from stopwise._vocabulary import STRATEGIES
from stopwise.compare._strata import (
    SETTLED_TOL,
    budgets,
    by_look,
    group_prefix,
    null_maxima,
    sequence_groups,
    side_maxima,
)
from stopwise.errors import ArgumentError, ComparisonError

__all__ = ["BettingBoundary", "BettingPaths", "betting_boundary", "betting_paths"]

TRUNCATION = 0.6
"""c: bets are at most c times the largest bet that keeps the capital nonnegative (``max``, ``agrapa``,
``plug-in``)."""
HORIZON = 0.1
"""h: the ``horizon`` bet's plug-in is tuned to the look after h N tasks."""
HORIZON_TRUNCATION = 0.7
"""c of the ``horizon`` bet."""
MIXTURE = ("max", "horizon")
"""The components of the ``mixture`` strategy, averaged with equal weights."""
_TOL = SETTLED_TOL
COARSE_STEP = 0.1
"""First-stage grid step of the confidence bounds (refined to ``resolution`` inside the bracket)."""
_STRATEGY_LABELS = {
    "mixture": "mixture of max(aGRAPA, plug-in) and max(aGRAPA, horizon plug-in)",
    "max": "max(aGRAPA, plug-in)",
    "horizon": "max(aGRAPA, horizon plug-in)",
    "agrapa": "aGRAPA",
    "plug-in": "plug-in",
}
def resolve_strategy(strategy: str, stratified: bool) -> str:
    """The strategy ``auto`` stands for: ``mixture`` (pooled process) or ``max`` (stratified process).

    Examples
    --------
    >>> from stopwise.compare._betting import resolve_strategy
    >>> resolve_strategy("auto", False), resolve_strategy("auto", True), resolve_strategy("agrapa", True)
    ('mixture', 'max', 'agrapa')
    """
    if strategy not in STRATEGIES:
        raise ArgumentError(f"`strategy` must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
    if strategy != "auto":
        return strategy
    return "max" if stratified else "mixture"


_DEFAULT_TRUNCATION = {"max": TRUNCATION, "agrapa": TRUNCATION, "plug-in": TRUNCATION, "horizon": HORIZON_TRUNCATION}
PRIOR_VARIANCE = 1.0
"""sigma2_0: the variance pseudo-observation of the aGRAPA and plug-in variance estimates."""


@dataclass(frozen=True)
class BettingPaths:
    """Log-capital paths of the two one-sided tests for a batch of sequences.

    Attributes
    ----------
    log_promote, log_reject : numpy.ndarray, shape (B, T)
        log K_t of the promote test (H0: mu <= delta) and of the reject test (H0: mu >= delta)
        after each look t = 1..T; ``+inf`` once the null is logically impossible.
    stratified : bool
        Whether the stratified (per-group) process was used.
    strategy : str
        The betting strategy used (``auto`` resolved).
    """

    log_promote: np.ndarray
    log_reject: np.ndarray
    stratified: bool
    strategy: str = "auto"

    def crossed(self, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """Boolean (B, T) arrays: the running maximum capital has reached 1/alpha (promote, reject)."""
        level = np.log(1.0 / alpha)
        return (
            np.maximum.accumulate(self.log_promote, axis=1) >= level,
            np.maximum.accumulate(self.log_reject, axis=1) >= level,
        )


def _agrapa(gap: np.ndarray, variance: np.ndarray) -> np.ndarray:
    return gap / (variance + gap * gap)


def _pooled_moments(x: np.ndarray, m0: np.ndarray, population_size: int) -> tuple[np.ndarray, ...]:
    """Predictable pooled quantities at each look t: S_t, t, m_t^wor, mu_hat_{t-1}, sigma2_hat_{t-1}."""
    total, t, s_prev, mu, variance = _sequence_moments(x)
    return total, t, _wor_mean(m0, s_prev, t, population_size), mu, variance


def _sequence_moments(x: np.ndarray) -> tuple[np.ndarray, ...]:
    """What the pooled quantities take of the sequence alone: S_t, t, S_{t-1}, mu_hat_{t-1}, sigma2_hat_{t-1}."""
    t = np.arange(1, x.shape[1] + 1, dtype=float)
    total = np.cumsum(x, axis=1)
    s_prev = total - x
    square = x * x
    q_prev = np.cumsum(square, axis=1)
    q_prev -= square
    mu = s_prev / t
    # sum_{i<t} (D_i - mu)^2 = Q - 2 mu S + (t - 1) mu^2 = Q - mu S (t + 1) / t
    variance = (PRIOR_VARIANCE + q_prev - mu * s_prev * ((t + 1.0) / t)) / t
    np.maximum(variance, 1e-12, out=variance)
    return total, t, s_prev, mu, variance


def _wor_mean(m0: np.ndarray, s_prev: np.ndarray, t: np.ndarray, population_size: int) -> np.ndarray:
    """m_t^wor: the mean of the tasks not yet seen when the population's mean is m0."""
    return (population_size * m0 - s_prev) / (population_size - t + 1.0)


def _plug_in_time(t: np.ndarray, strategy: str, population_size: int) -> np.ndarray:
    """The plug-in bet's time scale: t log(1 + t), or for ``horizon`` H up to H = h N and continuous after."""
    if strategy != "horizon":
        return t * np.log1p(t)
    horizon = max(1.0, HORIZON * population_size)
    return np.where(t <= horizon, horizon, t * np.log1p(t) / np.log1p(horizon))


def _bet_parts(gap: np.ndarray, variance: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What every strategy's bets are made of.

    The aGRAPA bet's promote and reject parts (>= 0) and ``sqrt(2 log(1/alpha) / sigma2_hat)``, the
    plug-in bet before its time scale.
    """
    raw = _agrapa(gap, variance)
    root = np.sqrt((2.0 * np.log(1.0 / alpha)) / variance)
    return np.maximum(raw, 0.0), np.maximum(-raw, 0.0), root


def _component_bets(
    parts: tuple[np.ndarray, np.ndarray, np.ndarray], t: np.ndarray, strategy: str, population_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Untruncated bet magnitudes (>= 0, new arrays) of the promote and reject tests of one (non-mixture) strategy."""
    kelly_up, kelly_down, root = parts
    if strategy == "agrapa":
        return kelly_up.copy(), kelly_down.copy()
    plug = root * (1.0 / np.sqrt(_plug_in_time(t, strategy, population_size)))
    if strategy == "plug-in":
        return plug, plug.copy()
    return np.maximum(kelly_up, plug), np.maximum(kelly_down, plug, out=plug)


def _settled(total: np.ndarray, t: np.ndarray, m0: np.ndarray, population_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Logical bounds: promote (H0+ impossible) and reject (H0- impossible) after each look."""
    target = population_size * m0
    unseen = population_size - t
    tol = _TOL * population_size
    return total - unseen > target + tol, total + unseen < target - tol


def _components(strategy: str, truncation: float | None) -> list[tuple[str, float]]:
    """(strategy, c) of each capital process averaged by ``strategy``."""
    names = MIXTURE if strategy == "mixture" else (strategy,)
    return [(name, _DEFAULT_TRUNCATION[name] if truncation is None else truncation) for name in names]


def _average(logs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Log of the equal-weight average of the components' capitals (promote, reject); reuses the first arrays.

    ``log(e^a + e^b) = max(a, b) + log(1 + e^-|a - b|)`` with numpy's vectorised exp and log (faster than
    ``np.logaddexp``); +inf (a settled test) and nan (overwritten by the logical bounds) propagate.
    """
    log_p, log_r = logs[0]
    if len(logs) == 1:
        return log_p, log_r
    with np.errstate(invalid="ignore", over="ignore"):
        for total, more in [(log_p, p) for p, _ in logs[1:]] + [(log_r, r) for _, r in logs[1:]]:
            gap = np.subtract(total, more)
            if np.isinf(total).any():
                gap[np.isinf(total) & (total == more)] = 0.0  # both settled: inf - inf
            np.abs(gap, out=gap)
            np.negative(gap, out=gap)
            np.exp(gap, out=gap)
            gap += 1.0
            np.log(gap, out=gap)
            np.maximum(total, more, out=total)
            total += gap
    shift = np.log(len(logs))
    log_p -= shift
    log_r -= shift
    return log_p, log_r


def _shaped(parts: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bet parts with the plug-in root broadcast to the rows' shape (a sequence shared by many thresholds)."""
    kelly_up, kelly_down, root = parts
    return kelly_up, kelly_down, np.broadcast_to(root, kelly_up.shape)


def _pooled(
    x: np.ndarray, m0: np.ndarray, n_pop: int, strategy: str, alpha: float, truncation: float | None
) -> tuple[np.ndarray, np.ndarray]:
    total, t, m_wor, mu, variance = _pooled_moments(x, m0, n_pop)
    logs = []
    with np.errstate(divide="ignore", invalid="ignore"):
        parts = _shaped(_bet_parts(mu - m_wor, variance, alpha))
        # where m_wor leaves (-1, 1) the null is already logically settled (overwritten below)
        limit_up, limit_down = 1.0 / (1.0 + m_wor), 1.0 / (1.0 - m_wor)
        centred = x - m_wor
        for name, c in _components(strategy, truncation):
            up, down = _component_bets(parts, t, name, n_pop)
            np.minimum(up, c * limit_up, out=up)
            np.minimum(down, c * limit_down, out=down)
            # log(1 + b) rather than log1p: vectorised and faster; the bets' terms are far from 1e-16
            up *= centred
            up += 1.0
            down *= centred
            np.subtract(1.0, down, out=down)
            np.log(up, out=up)
            np.log(down, out=down)
            logs.append((np.cumsum(up, axis=1, out=up), np.cumsum(down, axis=1, out=down)))
    log_p, log_r = _average(logs)
    settled_p, settled_r = _settled(total, t, m0, n_pop)
    log_p[settled_p] = np.inf
    log_r[settled_r] = np.inf
    return log_p, log_r


def _psi(u: np.ndarray) -> np.ndarray:
    return -np.log1p(-u) - u


POOLED_ROWS = 128
"""Rows of one pooled computation: :func:`betting_paths` splits larger batches (the arrays stay in cache)."""
STRATIFIED_ROWS = 512
"""Rows of one stratified computation: :func:`betting_paths` splits larger batches (peak memory about
``rows x T x 280`` bytes, 390 with ``mixture``; from :data:`stopwise.compare._strata.LOOP_ROWS` capital
paths on, the rows share the per-look loop's overhead)."""


def _row_chunks(compute: Callable[[slice], tuple[np.ndarray, np.ndarray]], n_rows: int, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """``compute`` on consecutive row slices of at most ``chunk`` rows, concatenated (rows are independent)."""
    parts = [compute(slice(lo, lo + chunk)) for lo in range(0, max(n_rows, 1), chunk)]
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([p for p, _ in parts]), np.concatenate([r for _, r in parts])


def _stratified(
    x: np.ndarray,
    m0: np.ndarray,
    codes: np.ndarray,
    sizes: np.ndarray,
    strategy: str,
    alpha: float,
    truncation: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Log-capital paths of the stratified process.

    Per-look bets on pooled quantities, per-group terms from :mod:`stopwise.compare._strata` (vectorised
    over the looks for a few rows, a loop over the looks otherwise). When ``x`` and ``codes`` are one sequence
    broadcast to every row (``numpy.broadcast_to``; the rows differ in ``m0`` only) the vectorised terms of the
    sequence are computed once.
    """
    n_rows = max(x.shape[0], m0.shape[0])
    components = _components(strategy, truncation)
    loop = by_look(2 * len(components), n_rows)
    if not loop and x.shape[0] > 1 and x.strides[0] == 0 and codes.strides[0] == 0:
        x, codes = x[:1], codes[:1]  # one sequence shared by every row (a broadcast view): its own terms once
    linear, increments = _strata_terms(x, m0, codes, sizes, components, alpha, loop=loop)
    signs = np.tile([1.0, -1.0], len(components))
    maxima = null_maxima(increments, signs, x, codes, sizes, m0, loop=loop)
    # each component's infimum over the null; the average of the infima is at most the infimum of the average
    logs = [(linear[k] - maxima[k], linear[k + 1] - maxima[k + 1]) for k in range(0, len(linear), 2)]
    return _average(logs)


def _strata_terms(
    x: np.ndarray,
    m0: np.ndarray,
    codes: np.ndarray,
    sizes: np.ndarray,
    components: list[tuple[str, float]],
    alpha: float,
    *,
    loop: bool,
    sequence: tuple[np.ndarray, ...] | None = None,
) -> tuple[list[np.ndarray], np.ndarray]:
    """The stratified process before its knapsack, per test side and component (promote, reject, ...), shapes (B, T).

    The linear term A_t of ``log K_t(m) = A_t - sum_g C_{g,t} m_g`` and what each look adds to its group's C;
    ``sequence`` is :func:`_strata_sequence` of ``x`` when computed already.
    """
    n_rows = max(x.shape[0], m0.shape[0])
    n_pop = int(sizes.sum())
    t, s_prev, mu, variance, spread, slope, shifted = _strata_sequence(x, codes, sizes, loop=loop) if sequence is None else sequence
    parts = _shaped(_bet_parts(mu - _wor_mean(m0, s_prev, t, n_pop), variance, alpha))
    linear = []
    increments = np.empty((2 * len(components), n_rows, x.shape[1]))
    for k, (name, c) in enumerate(components):
        up, down = _component_bets(parts, t, name, n_pop)
        for side, sign, bet in ((2 * k, 1.0, np.minimum(up, c / 2.0)), (2 * k + 1, -1.0, np.minimum(down, c / 2.0))):
            # log K_t(m) = A_t - sum_g C_{g,t} m_g: A's steps, and what each look adds to its group's C
            linear.append(np.cumsum(sign * bet * shifted - _psi(2.0 * bet) * spread, axis=1))
            np.multiply(bet, slope, out=increments[side])
    return linear, increments


def _strata_sequence(x: np.ndarray, codes: np.ndarray, sizes: np.ndarray, *, loop: bool) -> tuple[np.ndarray, ...]:
    """What the stratified process takes of the sequence alone (the same for every null mean).

    t, S_{t-1}, mu_hat, sigma2_hat, and per look the spread about the group's centre, the slope N_g / (N_g - j + 1)
    and the shifted difference of the linear term.
    """
    _, t, s_prev, mu, variance = _sequence_moments(x)
    own_total, j = group_prefix(x, codes, len(sizes), loop=loop)
    n_g = sizes[codes].astype(float)
    left = n_g - j + 1.0
    centre = (own_total + mu) / j
    spread = (x - centre) ** 2 / 4.0
    slope = n_g / left
    shifted = x + own_total / left
    return t, s_prev, mu, variance, spread, slope, shifted


def _check_values(values: np.ndarray, population_size: int) -> None:
    if not np.isfinite(values).all():
        raise ComparisonError("paired differences must be finite numbers")
    if (np.abs(values) > 1.0 + 1e-12).any():
        worst = float(values.flat[np.argmax(np.abs(values))])
        raise ComparisonError(f"paired differences must lie in [-1, 1]; found {worst:g}")
    if values.shape[-1] > population_size:
        raise ComparisonError(
            f"{values.shape[-1]} differences observed but the planned task universe has only {population_size} tasks"
        )


def betting_paths(
    values: ArrayLike,
    thresholds: float | ArrayLike,
    *,
    population_size: int,
    group_codes: ArrayLike | None = None,
    group_sizes: ArrayLike | None = None,
    strategy: str = "auto",
    alpha: float = 0.05,
    truncation: float | None = None,
) -> BettingPaths:
    """Log-capital paths of the promote and reject tests for a batch of task sequences.

    The batched form of :func:`betting_boundary` (which calls it): the replay passes one row per
    (pair, order) and reads the first look at which each test crosses 1/alpha.

    Parameters
    ----------
    values : array_like, shape (B, T)
        Paired differences in [-1, 1]; row b is the observed prefix of sequence b in look order.
    thresholds : float or array_like, shape (B,)
        m0 = delta of each row.
    population_size : int
        N, the planned tasks (T <= N).
    group_codes : array_like of int, shape (B, T) or (T,), optional
        Group index (0..G-1) of each observed task; with ``group_sizes``, selects the stratified
        process (the guarantee under coverage-aware and other predictable group schedules).
    group_sizes : array_like of int, shape (G,), optional
        N_g of each group; must sum to N.
    strategy : {"auto", "mixture", "max", "horizon", "agrapa", "plug-in"}, optional
        Betting strategy (see the module docstring); ``auto`` is ``mixture`` for the pooled process and
        ``max`` for the stratified one.
    alpha : float, optional
        Level; used only by the plug-in bet sizes.
    truncation : float, optional
        c in (0, 1) of every component; default: each strategy's own (:data:`TRUNCATION`,
        :data:`HORIZON_TRUNCATION` for ``horizon``).

    Returns
    -------
    BettingPaths

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import betting_paths
    >>> paths = betting_paths(np.ones((1, 30)), 0.0, population_size=100)
    >>> promote, reject = paths.crossed(0.05)
    >>> int(np.argmax(promote[0])) + 1, bool(reject.any())
    (6, False)
    """
    x = np.atleast_2d(np.asarray(values, dtype=float))
    if x.ndim != 2:
        raise ArgumentError("`values` must be a (B, T) array")
    n_pop = int(population_size)
    if n_pop != population_size or n_pop < 1:
        raise ArgumentError(f"`population_size` must be a positive integer; got {population_size!r}")
    _check_values(x, n_pop)
    if group_codes is not None and group_sizes is not None and np.size(group_sizes) == 1:
        group_codes = group_sizes = None  # one group: a group schedule is no schedule, and the pooled process is the test
    used = resolve_strategy(strategy, group_codes is not None)
    if truncation is not None and not 0.0 < truncation < 1.0:
        raise ArgumentError(f"`truncation` must be in (0, 1); got {truncation!r}")
    if not 0.0 < alpha < 1.0:
        raise ArgumentError(f"`alpha` must be in (0, 1); got {alpha!r}")
    m0_flat = np.asarray(thresholds, dtype=float).reshape(-1, 1)
    if m0_flat.shape[0] not in (1, x.shape[0]):
        raise ArgumentError(f"`thresholds` must be a number or one per row ({x.shape[0]}); got {m0_flat.shape[0]}")
    m0 = np.broadcast_to(m0_flat, (x.shape[0], 1))
    if x.shape[1] == 0:
        empty = np.zeros((x.shape[0], 0))
        return BettingPaths(empty, empty.copy(), group_codes is not None, used)
    if group_codes is None:
        log_p, log_r = _row_chunks(lambda rows: _pooled(x[rows], m0[rows], n_pop, used, alpha, truncation), x.shape[0], POOLED_ROWS)
        return BettingPaths(log_p, log_r, False, used)
    if group_sizes is None:
        raise ArgumentError("`group_sizes` is required with `group_codes`")
    sizes = np.asarray(group_sizes, dtype=np.int64)
    codes = np.broadcast_to(np.asarray(group_codes, dtype=np.int64), x.shape)
    _check_groups(codes, sizes, n_pop)
    log_p, log_r = _row_chunks(
        lambda rows: _stratified(x[rows], m0[rows], codes[rows], sizes, used, alpha, truncation), x.shape[0], STRATIFIED_ROWS
    )
    return BettingPaths(log_p, log_r, True, used)


def _check_groups(codes: np.ndarray, sizes: np.ndarray, n_pop: int) -> None:
    """Refuse group sizes that are not positive or do not sum to N, codes out of range, or a group seen too often."""
    if sizes.ndim != 1 or (sizes < 1).any() or int(sizes.sum()) != n_pop:
        raise ComparisonError(f"group sizes {sizes.tolist()} must be positive and sum to the population size {n_pop}")
    if (codes < 0).any() or (codes >= len(sizes)).any():
        raise ComparisonError(f"group codes must lie in 0..{len(sizes) - 1}")
    seen = np.stack([(codes == g).sum(axis=1) for g in range(len(sizes))], axis=1)
    if (seen > sizes).any():
        g = int(np.argwhere(seen > sizes)[0, 1])
        raise ComparisonError(f"group {g} has {int(seen[:, g].max())} observed tasks but only {int(sizes[g])} planned")


@dataclass(frozen=True)
class BettingBoundary:
    """The anytime-valid paired boundary after the observed prefix of the planned order.

    Attributes
    ----------
    p_promote : float
        Anytime-valid p-value of H0: mu <= delta, ``min(1, 1 / max_{s<=n} K_s^+)``; 0 when the
        observed tasks alone prove mu > delta.
    p_reject : float
        Anytime-valid p-value of H0: mu >= delta; 0 when mu < delta is certain.
    promote, reject : bool
        ``p_promote <= alpha`` and ``p_reject <= alpha``.
    n : int
        Observed tasks (looks so far).
    population_size : int
        N, the planned tasks.
    threshold : float
        delta.
    alpha : float
        The level of the bounds and of ``promote`` / ``reject``.
    lower, upper : float
        Anytime-valid one-sided level-alpha confidence bounds for mu (running intersection, on a
        grid of step ``resolution`` rounded outward, intersected with the logical bounds).
    logical_lower, logical_upper : float
        The range mu can still take given the observed tasks: ``(S_n -/+ (N - n)) / N``.
    log_capital_promote, log_capital_reject : numpy.ndarray, shape (n,)
        log K_t of each test after each look.
    method : str
        ``betting-wor`` with the strategy and ``pooled`` or ``stratified, G groups``.
    """

    p_promote: float
    p_reject: float
    promote: bool
    reject: bool
    n: int
    population_size: int
    threshold: float
    alpha: float
    lower: float
    upper: float
    logical_lower: float
    logical_upper: float
    log_capital_promote: np.ndarray
    log_capital_reject: np.ndarray
    method: str


def _group_codes(groups: ArrayLike, group_sizes: object, n: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    labels_obs = np.asarray(groups).astype(str)
    if labels_obs.shape != (n,):
        raise ComparisonError(f"`groups` must give one group per observed difference ({n}); got shape {labels_obs.shape}")
    if group_sizes is None:
        raise ComparisonError("`group_sizes` (planned tasks per group) is required with `groups`")
    if not isinstance(group_sizes, Mapping):
        raise ComparisonError("`group_sizes` must map each group label to its planned task count")
    keyed = {str(k): int(v) for k, v in group_sizes.items()}
    names = sorted(keyed)
    sizes = np.array([keyed[k] for k in names], dtype=np.int64)
    unknown = sorted(set(labels_obs) - set(names))
    if unknown:
        raise ComparisonError(f"observed group(s) {unknown[:3]} are not in the planned groups {names[:5]}")
    codes = np.searchsorted(np.array(names), labels_obs)
    return codes, sizes, names


def betting_boundary(
    differences: ArrayLike,
    threshold: float,
    *,
    population_size: int,
    alpha: float,
    groups: ArrayLike | None = None,
    group_sizes: Mapping[str, int] | None = None,
    strategy: str = "auto",
    resolution: float = 0.01,
    confidence_bounds: bool = True,
) -> BettingBoundary:
    """The anytime-valid betting boundary for the finite-population mean paired difference.

    Valid at every look: the probability that promote is ever declared while mu <= delta (or
    reject while mu >= delta) is at most alpha, however many times the boundary is consulted.

    Parameters
    ----------
    differences : array_like of float
        The observed prefix of the pre-registered order, in planned order: D_i in [-1, 1].
    threshold : float
        delta, in [-1, 1).
    population_size : int
        N, the planned tasks (never the observed count).
    alpha : float
        Error level of each action, in (0, 1).
    groups : array_like of str, optional
        Group of each observed difference; with ``group_sizes`` selects the stratified process,
        required when the order is coverage-aware or stratified.
    group_sizes : dict of str to int, optional
        Planned tasks per group (summing to N).
    strategy : {"auto", "mixture", "max", "horizon", "agrapa", "plug-in"}, optional
        Betting strategy (default ``auto``: ``mixture``, the average of the ``max`` and ``horizon``
        capitals, for the pooled process; ``max`` for the stratified one).
    resolution : float, optional
        Grid step of the confidence bounds.
    confidence_bounds : bool, optional
        Compute ``lower`` and ``upper`` (about 40 more capital paths); when False they are the logical
        bounds and only the two p-values' paths are computed.

    Returns
    -------
    BettingBoundary

    Examples
    --------
    Forty wins and ten ties in the first 50 of 300 planned tasks:

    >>> import numpy as np
    >>> from stopwise.compare import betting_boundary
    >>> b = betting_boundary(np.r_[np.ones(40), np.zeros(10)], 0.0, population_size=300, alpha=0.05)
    >>> b.promote, b.reject, b.p_promote < 1e-6, round(b.lower, 2) > 0
    (True, False, True, True)
    >>> b.method
    'betting-wor (mixture of max(aGRAPA, plug-in) and max(aGRAPA, horizon plug-in), pooled)'

    Ties only: nothing is settled.

    >>> betting_boundary(np.zeros(50), 0.0, population_size=300, alpha=0.05).p_promote
    1.0
    """
    seq = _sequence_iv(differences, threshold, population_size, alpha, groups, group_sizes, strategy, resolution)
    x, n_pop, n = seq.x, seq.n_pop, len(seq.x)
    if n == 0:
        empty = np.zeros(0)
        return BettingBoundary(1.0, 1.0, False, False, 0, n_pop, float(threshold), float(alpha), -1.0, 1.0, -1.0, 1.0, empty, empty, seq.method)
    if confidence_bounds:  # the test at delta in the confidence sequence's first pass
        log_p, log_r, (lower, upper) = _confidence_bounds(seq, float(alpha), strategy, resolution, float(threshold))
    else:
        log_p, log_r = _threshold_paths(x, np.array([float(threshold)]), n_pop, seq.codes, seq.sizes, strategy, float(alpha))
        lower, upper = seq.logical_lower, seq.logical_upper
    p_promote = float(min(1.0, np.exp(-np.max(log_p[0]))))
    p_reject = float(min(1.0, np.exp(-np.max(log_r[0]))))
    return BettingBoundary(
        p_promote, p_reject, p_promote <= alpha, p_reject <= alpha, n, n_pop, float(threshold), float(alpha),
        lower, upper, seq.logical_lower, seq.logical_upper, log_p[0].copy(), log_r[0].copy(), seq.method,
    )  # fmt: skip


@dataclass(frozen=True)
class _Sequence:
    """The validated arguments of :func:`betting_boundary`: the sequence, N, the group codes and what the record says."""

    x: np.ndarray
    n_pop: int
    codes: np.ndarray | None
    sizes: np.ndarray | None
    method: str
    logical_lower: float
    logical_upper: float


def _sequence_iv(
    differences: ArrayLike,
    threshold: float,
    population_size: int,
    alpha: float,
    groups: ArrayLike | None,
    group_sizes: Mapping[str, int] | None,
    strategy: str,
    resolution: float,
) -> _Sequence:
    """Validate and normalise the arguments of :func:`betting_boundary`."""
    x = np.asarray(differences, dtype=float).ravel()
    n_pop = int(population_size)
    if n_pop != population_size or n_pop < 1:
        raise ComparisonError(f"population_size must be a positive integer; got {population_size!r}")
    if not -1.0 <= threshold < 1.0:
        raise ComparisonError(f"threshold must be in [-1, 1); got {threshold!r}")
    if not 0.0 < alpha < 1.0:
        raise ComparisonError(f"alpha must be in (0, 1); got {alpha!r}")
    if not 0.0 < resolution <= 0.5:
        raise ArgumentError(f"`resolution` must be in (0, 0.5]; got {resolution!r}")
    _check_values(x, n_pop)
    n = len(x)
    codes: np.ndarray | None = None
    sizes: np.ndarray | None = None
    if groups is not None:
        codes, sizes, names = _group_codes(groups, group_sizes, n)
        if len(names) == 1:  # one group: the pooled process (betting_paths drops a one-group schedule too)
            codes = sizes = groups = None
        else:
            _check_groups(codes[None, :], sizes, n_pop)
    label = "pooled" if groups is None else f"stratified, {len(names)} groups"
    method = f"betting-wor ({_STRATEGY_LABELS.get(resolve_strategy(strategy, groups is not None), strategy)}, {label})"
    total = float(x.sum())
    return _Sequence(x, n_pop, codes, sizes, method, (total - (n_pop - n)) / n_pop, (total + (n_pop - n)) / n_pop)


def _threshold_paths(
    x: np.ndarray, m0: np.ndarray, n_pop: int, codes: np.ndarray | None, sizes: np.ndarray | None, strategy: str, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Log-capital paths (promote, reject) of one sequence ``x`` tested at each null mean of ``m0``, shape (len(m0), T).

    The rows of :func:`betting_paths` for the same sequence, with the sequence's own terms computed once (the
    stratified process's vectorised per-group terms, whose rows do not depend on the other rows of the batch).
    """
    used = resolve_strategy(strategy, codes is not None)
    thresholds = np.asarray(m0, dtype=float).reshape(-1, 1)
    rows = (len(thresholds), len(x))
    if codes is None:
        return _pooled(x[None, :], thresholds, n_pop, used, alpha, None)
    assert sizes is not None
    return _stratified(np.broadcast_to(x, rows), thresholds, np.broadcast_to(codes, rows), sizes, used, alpha, None)


@dataclass(frozen=True)
class _Means:
    """One sequence tested at many null means (the rows): the terms every mean's capital needs, computed once.

    The pooled process's paths are computed whole (they cost little); the stratified process keeps its linear terms
    and coefficient increments, and computes a knapsack (:func:`stopwise.compare._strata.side_maxima`) only for the
    rows and looks :meth:`log_capital` is asked for, to the numbers :func:`_threshold_paths` gives.
    """

    sizes: np.ndarray | None
    components: int
    linear: list[np.ndarray]
    """Stratified: A_t per test side and component (promote, reject, ...), (B, T); pooled: the two log-capital paths."""
    increments: np.ndarray | None = None
    budgets: np.ndarray | None = None
    groups: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def log_capital(self, rows: np.ndarray, side: int, looks: np.ndarray | None = None) -> np.ndarray:
        """The log-capital of test ``side`` (0 promote, 1 reject) for the means ``rows``, at every look or at ``looks``."""
        if self.increments is None or self.budgets is None or self.groups is None or self.sizes is None:
            path = self.linear[side][rows]
            return path if looks is None else path[:, looks]
        logs = []
        for index in range(side, 2 * self.components, 2):
            budget = self.budgets[index][rows]
            maxima = side_maxima(self.increments[index][rows], budget, 1.0 if side == 0 else -1.0, self.groups, self.sizes, looks)
            maxima[(budget if looks is None else budget[:, looks]) < -SETTLED_TOL] = -np.inf
            linear = self.linear[index][rows]
            logs.append((linear if looks is None else linear[:, looks]) - maxima)
        return logs[0] if len(logs) == 1 else _average([(log, log.copy()) for log in logs])[0]


def _means(seq: _Sequence, means: np.ndarray, strategy: str, alpha: float, shared: dict[str, Any]) -> _Means:
    """The terms of ``seq`` tested at each of ``means`` (:class:`_Means`); ``shared`` keeps the sequence's own ones."""
    x, m0 = seq.x[None, :], np.asarray(means, dtype=float).reshape(-1, 1)
    used = resolve_strategy(strategy, seq.codes is not None)
    if seq.codes is None or seq.sizes is None:
        return _Means(None, 1, list(_pooled(x, m0, seq.n_pop, used, alpha, None)))
    components = _components(used, None)
    codes = seq.codes[None, :]
    if not shared:
        shared.update(sequence=_strata_sequence(x, codes, seq.sizes, loop=False), groups=sequence_groups(x, codes, len(seq.sizes)))
    linear, increments = _strata_terms(x, m0, codes, seq.sizes, components, alpha, loop=False, sequence=shared["sequence"])
    signs = np.tile([1.0, -1.0], len(components))
    return _Means(seq.sizes, len(components), linear, increments, budgets(signs, x, m0, seq.n_pop), shared["groups"])


SCREEN_LOOKS = 16
"""Looks at which a mean's capital is computed first, evenly spread with the last one: a mean it crosses 1/alpha at any
of them is rejected without the knapsack at every look (most means of a search are; tests/compare pin the ends)."""
_BATCH = 2
"""Means whose whole paths a search computes at once, past the screened ones."""


def _first_kept(table: _Means, rows: np.ndarray, side: int, level: float, n_looks: int, *, nan_kept: bool) -> int | None:
    """The position in ``rows`` (the order of the search) of the first mean the test keeps at every look; None if none.

    A mean whose capital crosses ``level`` at one of the screening looks is rejected (the whole path would say so: the
    numbers at those looks are the same); the others are computed whole, a few at a time, until one is kept. ``nan_kept``
    says how an undefined capital counts (as the coarse and the fine grid of the bounds counted it before issue 31).
    """
    if len(rows) == 0:
        return None
    step = max(1, -(-n_looks // SCREEN_LOOKS))
    looks = np.arange(n_looks - 1, -1, -step)[::-1]  # every step-th look, ending at the last
    with np.errstate(invalid="ignore"):
        rejected = np.max(table.log_capital(rows, side, looks), axis=1) >= level
    pending = np.flatnonzero(~rejected)
    for start in range(0, len(pending), _BATCH):
        batch = pending[start : start + _BATCH]
        peak = np.max(table.log_capital(rows[batch], side), axis=1)
        kept = ~(peak >= level) if nan_kept else peak < level
        if kept.any():
            return int(batch[int(np.argmax(kept))])
    return None


_KNOWN = 1e-6
"""A grid mean farther than this beyond the logical bounds of the last look is settled there (its test rejects it):
not computed (the tests settle at ``SETTLED_TOL``, far inside it)."""


def _confidence_bounds(
    seq: _Sequence, alpha: float, strategy: str, resolution: float, threshold: float | None
) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
    """The confidence sequence's ends at the last look, and the paths of the test at ``threshold`` (if given).

    A coarse grid (:data:`COARSE_STEP`) brackets each end, a fine one (``resolution``) inside the bracket: ``lower``
    is the fine point below the least mean the promote test has not rejected at any look, ``upper`` the mirror image;
    both intersected with the logical bounds (the running intersection of the module docstring, as before issue 31).
    Each search (:func:`_first_kept`) walks its grid in its direction and stops at the first kept mean: a coarse mean
    beyond the logical bounds is settled for the test on that side, most others are rejected at a screening look, and
    only a few whole paths are computed. The test at ``threshold`` rides along with the coarse means: ``(log_p, log_r)``
    of shape (1, T) (empty without).
    """
    x, level = seq.x, np.log(1.0 / alpha)
    steps = max(1, round(COARSE_STEP / resolution))
    coarse = np.round(np.arange(-1.0 + steps * resolution, 1.0 - resolution / 2, steps * resolution), 12)
    open_p, open_r = coarse >= seq.logical_lower - _KNOWN, coarse <= seq.logical_upper + _KNOWN  # the others are settled
    extra = np.array([] if threshold is None else [threshold])
    chosen = np.flatnonzero(open_p | open_r)
    shared: dict[str, Any] = {}  # the sequence's own terms, for both grids
    table = _means(seq, np.concatenate([extra, coarse[chosen]]), strategy, alpha, shared)
    where = np.full(len(coarse), -1)
    where[chosen] = np.arange(len(chosen)) + len(extra)  # each coarse mean's row
    promote = where[open_p]  # upwards from the logical lower bound
    reject = where[open_r][::-1]  # downwards from the logical upper bound
    found_p = _first_kept(table, promote, 0, level, len(x), nan_kept=False)
    found_r = _first_kept(table, reject, 1, level, len(x), nan_kept=False)
    k_low = len(coarse) if found_p is None else int(np.flatnonzero(open_p)[found_p])
    k_high = 0 if found_r is None else int(np.flatnonzero(open_r)[::-1][found_r]) + 1
    edges = np.concatenate([[-1.0], coarse, [1.0]])
    low_from, high_from = edges[k_low], edges[k_high]
    fine = np.round(np.arange(1, steps) * resolution, 12)
    low_means, high_means = low_from + fine, high_from + fine
    same = low_from == high_from
    second = _means(seq, low_means if same else np.concatenate([low_means, high_means]), strategy, alpha, shared)
    rows = np.arange(len(fine))
    # lower: the point below the first fine mean the promote test keeps (the bracket's top, edges[k_low + 1], is kept)
    first = _first_kept(second, rows, 0, level, len(x), nan_kept=True)
    lower = float(low_from if first == 0 else low_means[(len(fine) if first is None else first) - 1])
    # upper: the point above the last fine mean the reject test keeps (the bracket's bottom, edges[k_high], is kept)
    last = _first_kept(second, (rows if same else rows + len(fine))[::-1], 1, level, len(x), nan_kept=True)
    above = 0 if last is None else len(fine) - last
    upper = float(high_means[above] if above < len(fine) else edges[k_high + 1])
    tested = np.arange(len(extra))
    paths = (table.log_capital(tested, 0), table.log_capital(tested, 1))
    return paths[0], paths[1], (max(lower, seq.logical_lower), min(upper, seq.logical_upper))
