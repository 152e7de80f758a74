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
outward, then intersected with the logical bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from stopwise._vocabulary import STRATEGIES
from stopwise.compare._strata import SETTLED_TOL, by_look, group_prefix, null_maxima
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
    t = np.arange(1, x.shape[1] + 1, dtype=float)
    total = np.cumsum(x, axis=1)
    s_prev = total - x
    square = x * x
    q_prev = np.cumsum(square, axis=1)
    q_prev -= square
    m_wor = (population_size * m0 - s_prev) / (population_size - t + 1.0)
    mu = s_prev / t
    # sum_{i<t} (D_i - mu)^2 = Q - 2 mu S + (t - 1) mu^2 = Q - mu S (t + 1) / t
    variance = (PRIOR_VARIANCE + q_prev - mu * s_prev * ((t + 1.0) / t)) / t
    np.maximum(variance, 1e-12, out=variance)
    return total, t, m_wor, mu, variance


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


def _pooled(
    x: np.ndarray, m0: np.ndarray, n_pop: int, strategy: str, alpha: float, truncation: float | None
) -> tuple[np.ndarray, np.ndarray]:
    total, t, m_wor, mu, variance = _pooled_moments(x, m0, n_pop)
    logs = []
    with np.errstate(divide="ignore", invalid="ignore"):
        parts = _bet_parts(mu - m_wor, variance, alpha)
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
    over the looks for a few rows, a loop over the looks otherwise).
    """
    n_rows = x.shape[0]
    n_pop = int(sizes.sum())
    components = _components(strategy, truncation)
    loop = by_look(2 * len(components), n_rows)
    _, t, m_wor, mu, variance = _pooled_moments(x, m0, n_pop)
    own_total, j = group_prefix(x, codes, len(sizes), loop=loop)
    n_g = sizes[codes].astype(float)
    left = n_g - j + 1.0
    centre = (own_total + mu) / j
    spread = (x - centre) ** 2 / 4.0
    slope = n_g / left
    shifted = x + own_total / left
    parts = _bet_parts(mu - m_wor, variance, alpha)
    linear = []
    increments = np.empty((2 * len(components), *x.shape))
    for k, (name, c) in enumerate(components):
        up, down = _component_bets(parts, t, name, n_pop)
        for side, sign, bet in ((2 * k, 1.0, np.minimum(up, c / 2.0)), (2 * k + 1, -1.0, np.minimum(down, c / 2.0))):
            # log K_t(m) = A_t - sum_g C_{g,t} m_g: A's steps, and what each look adds to its group's C
            linear.append(np.cumsum(sign * bet * shifted - _psi(2.0 * bet) * spread, axis=1))
            np.multiply(bet, slope, out=increments[side])
    signs = np.tile([1.0, -1.0], len(components))
    maxima = null_maxima(increments, signs, x, codes, sizes, m0, loop=loop)
    # each component's infimum over the null; the average of the infima is at most the infimum of the average
    logs = [(linear[k] - maxima[k], linear[k + 1] - maxima[k + 1]) for k in range(0, len(linear), 2)]
    return _average(logs)


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
    if sizes.ndim != 1 or (sizes < 1).any() or int(sizes.sum()) != n_pop:
        raise ComparisonError(f"group sizes {sizes.tolist()} must be positive and sum to the population size {n_pop}")
    if (codes < 0).any() or (codes >= len(sizes)).any():
        raise ComparisonError(f"group codes must lie in 0..{len(sizes) - 1}")
    seen = np.stack([(codes == g).sum(axis=1) for g in range(len(sizes))], axis=1)
    if (seen > sizes).any():
        g = int(np.argwhere(seen > sizes)[0, 1])
        raise ComparisonError(f"group {g} has {int(seen[:, g].max())} observed tasks but only {int(sizes[g])} planned")
    log_p, log_r = _row_chunks(
        lambda rows: _stratified(x[rows], m0[rows], codes[rows], sizes, used, alpha, truncation), x.shape[0], STRATIFIED_ROWS
    )
    return BettingPaths(log_p, log_r, True, used)


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
    label = "pooled" if groups is None else f"stratified, {len(names)} groups"
    method = f"betting-wor ({_STRATEGY_LABELS.get(resolve_strategy(strategy, groups is not None), strategy)}, {label})"
    total = float(x.sum())
    logical_lower = (total - (n_pop - n)) / n_pop
    logical_upper = (total + (n_pop - n)) / n_pop
    if n == 0:
        empty = np.zeros(0)
        return BettingBoundary(1.0, 1.0, False, False, 0, n_pop, float(threshold), float(alpha), -1.0, 1.0, -1.0, 1.0, empty, empty, method)
    def run(m0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        paths = betting_paths(
            np.broadcast_to(x, (len(m0), n)), m0, population_size=n_pop, group_codes=codes, group_sizes=sizes, strategy=strategy, alpha=alpha
        )
        return paths.log_promote, paths.log_reject

    level = np.log(1.0 / alpha)
    if not confidence_bounds:
        log_p, log_r = run(np.array([float(threshold)]))
        p_promote = float(min(1.0, np.exp(-np.max(log_p[0]))))
        p_reject = float(min(1.0, np.exp(-np.max(log_r[0]))))
        return BettingBoundary(
            p_promote, p_reject, p_promote <= alpha, p_reject <= alpha, n, n_pop, float(threshold), float(alpha),
            logical_lower, logical_upper, logical_lower, logical_upper, log_p[0].copy(), log_r[0].copy(), method,
        )  # fmt: skip
    steps = max(1, round(COARSE_STEP / resolution))
    coarse = np.round(np.arange(-1.0 + steps * resolution, 1.0 - resolution / 2, steps * resolution), 12)
    log_p, log_r = run(np.r_[float(threshold), coarse])
    p_promote = float(min(1.0, np.exp(-np.max(log_p[0]))))
    p_reject = float(min(1.0, np.exp(-np.max(log_r[0]))))
    # stage 1: bracket each bound between two coarse points; stage 2: the fine grid inside each bracket
    kept_p = np.max(log_p[1:], axis=1) < level
    kept_r = np.max(log_r[1:], axis=1) < level
    edges = np.r_[-1.0, coarse, 1.0]
    k_low = int(np.argmax(kept_p)) if kept_p.any() else len(coarse)
    k_high = int(np.flatnonzero(kept_r)[-1]) + 1 if kept_r.any() else 0
    low_from, high_from = edges[k_low], edges[k_high]
    fine = np.round(np.arange(1, steps) * resolution, 12)
    fine_p, fine_r = run(np.r_[low_from + fine, high_from + fine])
    rejected_low = np.r_[True, np.max(fine_p[: len(fine)], axis=1) >= level, False]
    low_points = np.r_[low_from, low_from + fine, edges[k_low + 1]]
    lower = float(low_points[int(np.argmin(rejected_low)) - 1])
    rejected_high = np.r_[False, np.max(fine_r[len(fine) :], axis=1) >= level, True]
    high_points = np.r_[high_from, high_from + fine, edges[k_high + 1]]
    upper = float(high_points[int(np.flatnonzero(~rejected_high)[-1]) + 1])
    lower = max(lower, logical_lower)
    upper = min(upper, logical_upper)
    return BettingBoundary(
        p_promote=p_promote,
        p_reject=p_reject,
        promote=p_promote <= alpha,
        reject=p_reject <= alpha,
        n=n,
        population_size=n_pop,
        threshold=float(threshold),
        alpha=float(alpha),
        lower=lower,
        upper=upper,
        logical_lower=logical_lower,
        logical_upper=logical_upper,
        log_capital_promote=log_p[0].copy(),
        log_capital_reject=log_r[0].copy(),
        method=method,
    )
