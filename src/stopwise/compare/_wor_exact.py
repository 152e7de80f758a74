r"""An exact one-look test for 0/±1 paired differences sampled without replacement (``exact-wor``).

The paper's fixed-budget rule reads its tails off the bootstrap of the observed differences. At
one look with few discordant tasks (wins and losses) that is far from level a: the bootstrap puts
a tail of exactly 0 on any one-signed sample, so a pair with 10 wins, 0 losses and 490 ties among
N = 500 planned tasks is *rejected* (declared no better than delta = 0) whenever the n = 50
observed tasks hold no win, which happens with probability 34.5 %.

The test here is exact for the model the one look is taken under:

* the N planned tasks carry fixed differences D_1 .. D_N in {-1, 0, +1} (0/1 outcomes, one
  attempt a system): W wins, L losses, N - W - L ties; the true mean is Delta = (W - L) / N;
* the n observed tasks are a simple random sample without replacement of the N planned tasks
  (the first n of a uniformly random order, n fixed before the run: the budget limit).

The observed sample is then summed up by its wins and losses (w, l), multivariate hypergeometric
given (W, L). The promotion null is ``Delta <= delta``, i.e. ``W - L <= c = floor(N delta)``;
the rejection null is ``Delta > delta``, i.e. ``W - L >= c + 1``. Both are composite (the number
of discordant tasks W + L is a nuisance), and the test removes the nuisance by maximising over it
(an exact unconditional test in the manner of Suissa & Shuster's for McNemar's problem, with the
finite population in place of the binomial):

1. cells (w, l) are ordered by a statistic T(w, l): the McNemar-type
   ``z = (w - l - n delta) / sqrt(max(w + l, 1))``, made monotone (non-decreasing in w,
   non-increasing in l) by taking its maximum over the cells it dominates;
2. ``p_promote(w, l) = max over null populations on the boundary W - L = c of
   P(T(w', l') >= T(w, l))``, every probability an exact hypergeometric sum over all cells.

Why it is exact (``P(p_promote <= a) <= a`` for EVERY population with ``Delta <= delta``): on the
boundary, p_promote is at least the population's own tail probability of T, whose distribution
function makes it super-uniform. Off the boundary (W - L < c), raise single tasks one step (a
loss to a tie or a tie to a win) until W - L = c; on the same sampled positions the raised sample
has at least the wins and at most the losses, so T, monotone, is at least as large and the
p-value at most as large: rejection is no more likely than on the boundary. The rejection side is
the same test with wins and losses swapped (boundary W - L = c + 1).

It is NOT exact, and is not used as such, for:

* averages of k attempts (differences on the lattice 1/k, k > 1): the population then has 2k + 1
  kinds of task, the null has 2k - 1 nuisance dimensions, and the maximum over them is not
  enumerated. :func:`stopwise.tail_probabilities` falls back to the Serfling bound (valid under
  sampling without replacement for any differences in [-1, 1], conservative) and says so;
* a sample that is not a simple random sample of the planned tasks: a coverage-aware, Neyman or
  cost-first order picks tasks by group or cost; grouped analysis units (tasks sampled in blocks);
* several looks: the test is for ONE look at a sample size fixed in advance. Looking again after
  an abstain needs the ``betting-wor`` boundary.

Cost: a maximum over ``(N - |c|) / 2 + 1`` populations, each summed over the samples of non-negligible
probability. One sample's p-values (what ``decide`` needs) take 0.1 s for n = 150 of N = 500 and
about 2 s for n = 1,000 of N = 2,294; a table of every sample's p-values for one (n, N, delta) (what
the replay needs) 0.25 s (n = 50), 0.5 s (n = 150) and 1.1 s (n = 300) for N = 500, both sides, and
is cached, so a replay grid computes each table once for all its pairs and orders
(``benchmarks/one_look_level.py`` prints these times).
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import ArrayLike

from stopwise.errors import ArgumentError

__all__ = ["EXACT_WOR_MAX_WORK", "exact_wor_pvalue", "exact_wor_pvalues", "exact_wor_tails_from_counts"]

EXACT_WOR_MAX_WORK = 2_000_000_000
"""Most (null populations x sample cells) one table may enumerate; beyond it the test is refused
(``exact_wor_pvalues`` raises, ``tail_probabilities`` falls back to the Serfling bound)."""



@functools.lru_cache(maxsize=8)
def _statistic(n: int, shift: float) -> np.ndarray:
    """The monotone statistic T of every cell (w, l), shape (n + 1, n + 1); -inf where w + l > n.

    ``z = (w - l - n shift) / sqrt(max(w + l, 1))`` replaced by its maximum over the cells it
    dominates (fewer or as many wins, as many or more losses), so T is non-decreasing in w and
    non-increasing in l; rounded to 10 decimals so that equal values tie exactly.
    """
    w = np.arange(n + 1)[:, None]
    l = np.arange(n + 1)[None, :]  # noqa: E741 -- the losses, as in the papers
    valid = (w + l) <= n
    z = np.where(valid, (w - l - n * shift) / np.sqrt(np.maximum(w + l, 1)), -np.inf)
    z = np.maximum.accumulate(z, axis=0)  # non-decreasing in the wins
    z = np.maximum.accumulate(z[:, ::-1], axis=1)[:, ::-1]  # non-increasing in the losses
    z = np.where(valid, np.round(z, 10), -np.inf)
    z.setflags(write=False)
    return z


def _check_work(n: int, population_size: int, boundary: int) -> np.ndarray:
    """The null populations' loss counts L (W - L = ``boundary``); refused when they and the sample cells are too many."""
    losses = np.arange(max(0, -boundary), (population_size - boundary) // 2 + 1)
    work = len(losses) * (n + 1) * (n + 2) // 2
    if work > EXACT_WOR_MAX_WORK:
        raise ArgumentError(
            f"the exact-wor test for n = {n} of N = {population_size} sums over {work:,} (population, sample) pairs, "
            f"more than {EXACT_WOR_MAX_WORK:,}"
        )
    return losses


def _worst_tails(n: int, population_size: int, shift: float, boundary: int, queries: np.ndarray) -> np.ndarray:
    """The maximum over the null populations W - L = ``boundary`` of P(T >= q), for each q of ``queries``.

    For each population the cells' probabilities are computed on the box of w and l values whose
    marginal hypergeometric probability exceeds 1e-18 (the mass left out is below
    2 (n + 1) 1e-18 < 1e-15), sorted by T and summed from the top.
    """
    big_n = population_size
    losses = _check_work(n, big_n, boundary)
    statistic = _statistic(n, shift)
    log_factorial = _log_gamma(big_n + 2)  # log_factorial[m + 1] = log m!
    draws = np.arange(n + 1)

    def log_choose(total: int) -> np.ndarray:
        """The log of C(total, k) for k = 0 .. n, -inf where k > total."""
        k = np.minimum(draws, total)
        value = log_factorial[total + 1] - log_factorial[k + 1] - log_factorial[total - k + 1]
        return np.where(draws <= total, value, -np.inf)

    log_total = float(log_choose(big_n)[n])
    floor = np.log(1e-18)
    worst = np.zeros(len(queries))
    descending = -queries
    for loss_count in losses:
        win_count = int(loss_count + boundary)
        tie_count = big_n - win_count - int(loss_count)
        log_w, log_l, log_t = log_choose(win_count), log_choose(int(loss_count)), log_choose(tie_count)
        # marginal log pmf of the wins (losses) seen: C(W, w) C(N - W, n - w) / C(N, n)
        keep_w = np.flatnonzero(log_w + log_choose(big_n - win_count)[::-1] - log_total > floor)
        keep_l = np.flatnonzero(log_l + log_choose(big_n - int(loss_count))[::-1] - log_total > floor)
        w_grid, l_grid = keep_w[:, None] + 0 * keep_l[None, :], keep_l[None, :] + 0 * keep_w[:, None]
        rest = n - w_grid - l_grid
        ok = (rest >= 0) & (rest <= tie_count)
        w_ok, l_ok = w_grid[ok], l_grid[ok]
        probability = np.exp(log_w[w_ok] + log_l[l_ok] + log_t[rest[ok]] - log_total)
        values = statistic[w_ok, l_ok]
        if len(queries) <= 4:  # one look: a masked sum per query
            tails = np.array([probability[values >= q].sum() for q in queries])
        else:  # a table: sorted once, every query a search
            order = np.argsort(-values, kind="stable")
            tops = np.r_[0.0, np.cumsum(probability[order])]
            # cells with T >= q: those whose -T <= -q
            tails = tops[np.searchsorted(-values[order], descending, side="right")]
        np.maximum(worst, tails, out=worst)
    return np.clip(worst, 0.0, 1.0)


@functools.lru_cache(maxsize=512)  # a replay asks for budgets x thresholds x 2 sides, pair after pair
def _promote_table(n: int, population_size: int, shift: float, boundary: int) -> np.ndarray:
    """p_promote of every cell (w, l), shape (n + 1, n + 1) (NaN where w + l > n)."""
    statistic = _statistic(n, shift)
    valid = np.isfinite(statistic)
    values, inverse = np.unique(statistic[valid], return_inverse=True)
    result = np.full((n + 1, n + 1), np.nan)
    result[valid] = _worst_tails(n, population_size, shift, boundary, values)[inverse.ravel()]
    result.setflags(write=False)
    return result


def exact_wor_pvalue(wins: int, losses: int, n: int, population_size: int, threshold: float) -> tuple[float, float]:
    """The exact-wor p_promote and p_reject of one sample (w wins, l losses among n of N tasks).

    One look's values without the whole table (what :func:`stopwise.decide` needs).

    Examples
    --------
    >>> from stopwise.compare._wor_exact import exact_wor_pvalue
    >>> [round(p, 4) for p in exact_wor_pvalue(10, 0, 50, 500, 0.0)]
    [0.0004, 1.0]
    """
    _check(n, population_size, threshold)
    if wins < 0 or losses < 0 or wins + losses > n:
        raise ArgumentError("wins and losses must be counts with wins + losses <= n")
    return _one_side(wins, losses, n, population_size, threshold, "promote"), _one_side(wins, losses, n, population_size, threshold, "reject")


@functools.lru_cache(maxsize=8)
def _log_gamma(count: int) -> np.ndarray:
    """The log-gamma function at x = 0 .. count - 1 (``inf`` at 0), read-only.

    :func:`math.lgamma` keeps the default decision free of SciPy (issue 35: ``exact-wor`` is the default one-look test).
    """
    import math

    values = np.fromiter((math.lgamma(x) if x > 0 else math.inf for x in range(count)), dtype=float, count=count)
    values.setflags(write=False)
    return values


def _one_side(wins: int, losses: int, n: int, population_size: int, threshold: float, side: str) -> float:
    """The exact-wor p_promote (``side`` "promote") or p_reject of one sample; arguments as checked by :func:`exact_wor_pvalue`.

    At n = N the sample is the population: each p-value is 0 on the side the known mean lies and 1 on the other, what
    the enumeration gives (tests/compare/test_exact_wor.py), without its O(N^2) table (issue 35: exact-wor is the
    default, and complete records of 10^5 tasks are decided). Otherwise the work is refused before the table is built.
    """
    c, shift = _boundary(int(population_size), float(threshold)), float(threshold)
    if n == population_size:
        in_null = wins - losses <= c  # the promotion null W - L <= c; the rejection null is its complement
        return float(in_null) if side == "promote" else float(not in_null)
    _check_work(int(n), int(population_size), c if side == "promote" else -(c + 1))
    if side == "promote":
        return float(_worst_tails(int(n), int(population_size), shift, c, np.array([_statistic(int(n), shift)[wins, losses]]))[0])
    # the rejection side is the promotion side with wins and losses swapped (see the module docstring)
    return float(_worst_tails(int(n), int(population_size), -shift, -(c + 1), np.array([_statistic(int(n), -shift)[losses, wins]]))[0])


_SMALL_TABLE = 200_000_000
"""Populations x cells up to which the batched look-up computes (and caches) a whole table: every
n of N = 500 (a replay grid asks for the same (n, delta) pair after pair); beyond it, the values asked for only."""
_MEMO: dict[tuple[int, int, float, int], tuple[np.ndarray, np.ndarray]] = {}
_MEMO_ENTRIES = 256


def _memo_tails(n: int, population_size: int, shift: float, boundary: int, values: np.ndarray) -> np.ndarray:
    """:func:`_worst_tails` of sorted distinct ``values``, remembered per (n, N, delta, side) across calls.

    A replay asks once per pair for the same budget and threshold; only the values of the statistic
    no earlier call asked for are computed.
    """
    key = (n, population_size, shift, boundary)
    known, tails = _MEMO.get(key, (np.zeros(0), np.zeros(0)))
    at = np.minimum(np.searchsorted(known, values), max(len(known) - 1, 0))
    missing = values[(len(known) == 0) | (known[at] != values)] if len(known) else values
    if len(missing):
        if len(_MEMO) >= _MEMO_ENTRIES and key not in _MEMO:
            _MEMO.clear()
        merged = np.concatenate([known, missing])
        order = np.argsort(merged, kind="stable")
        known = merged[order]
        tails = np.concatenate([tails, _worst_tails(n, population_size, shift, boundary, missing)])[order]
        _MEMO[key] = (known, tails)
    return tails[np.searchsorted(known, values)]


def _check(n: int, population_size: int, threshold: float) -> None:
    if int(population_size) != population_size or population_size < 1:
        raise ArgumentError(f"`population_size` must be a positive integer; got {population_size!r}")
    if int(n) != n or not 1 <= n <= population_size:
        raise ArgumentError(f"`n` must be an integer from 1 to N = {population_size}; got {n!r}")
    if not -1.0 <= threshold < 1.0:
        raise ArgumentError(f"`threshold` must be in [-1, 1); got {threshold!r}")


def _boundary(population_size: int, threshold: float) -> int:
    """The boundary c = floor(N delta): the promotion null is W - L <= c (1e-9 guards n * delta near an integer)."""
    scaled = population_size * threshold
    return int(np.floor(scaled + 1e-9 * max(1.0, abs(scaled))))


def exact_wor_pvalues(n: int, population_size: int, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Tables of the exact p_promote and p_reject of every sample (w wins, l losses) of n of N tasks.

    Parameters
    ----------
    n : int
        Observed tasks (the one look's sample size, fixed in advance).
    population_size : int
        N, the planned tasks.
    threshold : float
        delta.

    Returns
    -------
    tuple of numpy.ndarray
        ``p_promote[w, l]`` and ``p_reject[w, l]``, shape (n + 1, n + 1), NaN where w + l > n
        (read-only, cached).

    Examples
    --------
    Ten wins and no loss among 50 of 500 tasks: the paper's bootstrap tail is exactly 0; the exact
    test's p-value is small but honest; no win seen is no evidence of "no better" at all.

    >>> from stopwise.compare._wor_exact import exact_wor_pvalues
    >>> p_promote, p_reject = exact_wor_pvalues(50, 500, 0.0)
    >>> round(float(p_promote[10, 0]), 4), round(float(p_reject[0, 0]), 3)
    (0.0004, 0.9)
    """
    _check(n, population_size, threshold)
    c = _boundary(int(population_size), float(threshold))
    promote = _promote_table(int(n), int(population_size), float(threshold), c)
    reject = _promote_table(int(n), int(population_size), -float(threshold), -(c + 1)).T
    return promote, reject


def exact_wor_tails_from_counts(
    wins: ArrayLike, losses: ArrayLike, n: ArrayLike, population_size: int, thresholds: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Exact-wor p_promote and p_reject of many samples from their win and loss counts (batched).

    For each distinct (n, delta) the maximum over the null populations is taken once, for the
    distinct values of the statistic among the given samples only (a replay grid's samples at one
    budget share a few hundred of them, against (n + 1)(n + 2) / 2 cells of a whole table); the
    samples then look their p-values up. Equal to :func:`exact_wor_pvalues` read at each sample.

    Returns
    -------
    tuple of numpy.ndarray
        Shape ``broadcast(wins, losses, n).shape + (T,)``; NaN where n = 0.

    Examples
    --------
    >>> from stopwise.compare import exact_wor_tails_from_counts
    >>> p_promote, p_reject = exact_wor_tails_from_counts([10, 0], [0, 10], 50, 500, [0.0])
    >>> p_promote[:, 0].round(4).tolist(), p_reject[:, 0].round(4).tolist()
    ([0.0004, 1.0], [1.0, 0.0004])
    """
    w, l, sizes = np.broadcast_arrays(  # noqa: E741
        np.asarray(wins, dtype=np.int64), np.asarray(losses, dtype=np.int64), np.asarray(n, dtype=np.int64)
    )
    deltas = np.atleast_1d(np.asarray(thresholds, dtype=float))
    if ((w < 0) | (l < 0) | (w + l > sizes)).any():
        raise ArgumentError("wins and losses must be counts with wins + losses <= n")
    if (sizes > population_size).any():
        raise ArgumentError(f"`n` must be at most N = {population_size}")
    promote = np.full((*w.shape, len(deltas)), np.nan)
    reject = np.full((*w.shape, len(deltas)), np.nan)
    big_n = int(population_size)
    for size in np.unique(sizes[sizes > 0]):
        at = sizes == size
        size = int(size)
        for j, delta in enumerate(deltas):
            c, shift = _boundary(big_n, float(delta)), float(delta)
            if (big_n // 2 + 1) * (size + 1) * (size + 2) // 2 <= _SMALL_TABLE:  # a whole table is cheap: cached
                table_p, table_r = exact_wor_pvalues(size, big_n, shift)
                promote[at, j], reject[at, j] = table_p[w[at], l[at]], table_r[w[at], l[at]]
                continue
            # the rejection side is the promotion side with wins and losses swapped (see the module docstring)
            for out, centre, boundary, first, second in (
                (promote, shift, c, w[at], l[at]),
                (reject, -shift, -(c + 1), l[at], w[at]),
            ):
                values, inverse = np.unique(_statistic(size, centre)[first, second], return_inverse=True)
                out[at, j] = _memo_tails(size, big_n, centre, boundary, values)[inverse.ravel()]
    return promote, reject
