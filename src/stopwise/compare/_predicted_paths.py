"""The prediction-powered boundary over many orders at once: one (orders x tasks) matrix per side.

A replay of the prediction-powered decision (:mod:`stopwise.replay`) consults the boundary of
:func:`stopwise.compare.powered_boundary` after every task of K seeded orders, each with its own audit draw.
Order by order that is K calls, each bisecting the audited bound (:mod:`stopwise.compare._audit_bound`) on its
own. :func:`powered_paths` computes every order's log-capital paths together: the centre's bounds of the past
true sums (:func:`stopwise.compare._predicted._centre_sums`) and the capital processes
(:func:`stopwise.compare._predicted._powered_paths`) run along the last axis of (rows, T) arrays, the same
arithmetic as one order's, so row k equals ``powered_boundary`` on order k, look by look. The centre's sums are
computed for every row at once (about ten arrays of the input's size; the audited bound is solved once per
distinct pair of audited wrong weight and cap over all the orders, :func:`stopwise.compare._audit_bound.audited_wrong_bound`),
the capital paths ``batch`` rows at a time (about ``batch x T x 400`` bytes).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from stopwise.compare._betting import BettingPaths, _row_chunks, resolve_strategy
from stopwise.compare._predicted import AuditTallies, _centre_sums, _check_ranges, _powered_paths
from stopwise.errors import ArgumentError, ComparisonError

__all__ = ["POWERED_ROWS", "powered_paths"]

POWERED_ROWS = 64
"""Rows (orders) of one computation: :func:`powered_paths` splits larger batches."""


def _powered_paths_iv(
    values: ArrayLike, low: ArrayLike, high: ArrayLike, population_size: int, alpha: float, scale: float, audit: AuditTallies | None, batch: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, tuple[np.ndarray, ...] | None]:
    x, lo, hi = (np.atleast_2d(np.asarray(v, dtype=float)) for v in (values, low, high))
    if x.ndim != 2 or lo.shape != x.shape or hi.shape != x.shape:
        raise ArgumentError(f"`values`, `low` and `high` must be (B, T) arrays of one shape; got {x.shape}, {lo.shape}, {hi.shape}")
    n_pop = int(population_size)
    if n_pop != population_size or n_pop < 1:
        raise ArgumentError(f"`population_size` must be a positive integer; got {population_size!r}")
    if x.shape[1] > n_pop:
        raise ComparisonError(f"{x.shape[1]} prediction-powered differences per row but the planned task universe has only {n_pop} tasks")
    if not 0.0 < alpha < 1.0:
        raise ArgumentError(f"`alpha` must be in (0, 1); got {alpha!r}")
    if not np.isfinite(scale) or scale < 1.0:
        raise ArgumentError(f"`scale` must be C = max(1, 2/rho - 1) >= 1 (powered_scale); got {scale!r}")
    if isinstance(batch, bool) or int(batch) != batch or batch < 1:
        raise ArgumentError(f"`batch` must be a positive integer; got {batch!r}")
    _check_ranges(x, lo, hi, scale)
    if audit is None:
        return x, lo, hi, n_pop, None
    if not isinstance(audit, AuditTallies):
        raise ArgumentError(f"`audit` must be an AuditTallies; got {type(audit).__name__}")
    tallies = tuple(np.atleast_2d(np.asarray(v, dtype=float)) for v in (audit.point, audit.wrong_low, audit.wrong_high))
    if any(v.shape != x.shape for v in tallies):
        raise ArgumentError(f"`audit`'s point, wrong_low and wrong_high must have the shape of `values` {x.shape}; got {[v.shape for v in tallies]}")
    return x, lo, hi, n_pop, tallies


def powered_paths(
    values: ArrayLike,
    low: ArrayLike,
    high: ArrayLike,
    threshold: float,
    *,
    population_size: int,
    alpha: float,
    scale: float,
    strategy: str = "auto",
    centre: str = "worst-case",
    audit: AuditTallies | None = None,
    audit_fraction: float | None = None,
    batch: int = POWERED_ROWS,
) -> BettingPaths:
    """Log-capital paths of the prediction-powered boundary for a batch of orders (one row per order).

    The batched form of :func:`stopwise.compare.powered_boundary`: row b of each path is that function's
    ``log_capital_promote`` / ``log_capital_reject`` on row b of the inputs (the same arithmetic, so the same
    numbers and the same first crossing), with the shift of the audited-bound centre, so a test has crossed
    where its running maximum reaches log(1/a) (:meth:`BettingPaths.crossed`).

    Parameters
    ----------
    values : array_like, shape (B, T)
        X_i of each order's observed prefix in look order, |X_i| <= ``scale``.
    low, high : array_like, shape (B, T)
        l_i <= D_i <= h_i, the bounds of each task's true difference given its rows, in [-1, 1].
    threshold : float
        delta.
    population_size : int
        N, the planned tasks (T <= N).
    alpha : float
        Level of each action.
    scale : float
        C, fixed by rho before the data (:func:`stopwise.compare.powered_scale`).
    strategy : str, optional
        The pooled betting strategy (default ``auto``: ``mixture``).
    centre : {"worst-case", "audited-bound"}, optional
        How the past predicted rows enter the centre (as for ``powered_boundary``).
    audit : AuditTallies, optional
        (B, T) P_i and audited wrong weights per order (``audited-bound`` only).
    audit_fraction : float, optional
        rho (``audited-bound`` only).
    batch : int, optional
        Rows computed at a time (bounds memory; the result does not depend on it).

    Returns
    -------
    BettingPaths
        ``log_promote`` and ``log_reject`` of shape (B, T) (pooled, the strategy resolved).

    Examples
    --------
    Two orders of forty wins and ten ties, no predicted row: the same paths as the boundary of each order.

    >>> import numpy as np
    >>> from stopwise.compare import powered_boundary, powered_paths
    >>> d = np.stack([np.r_[np.ones(40), np.zeros(10)], np.r_[np.zeros(10), np.ones(40)]])
    >>> paths = powered_paths(d, d, d, 0.0, population_size=300, alpha=0.05, scale=1.0)
    >>> one = powered_boundary(d[1], d[1], d[1], 0.0, population_size=300, alpha=0.05, scale=1.0)
    >>> bool(np.array_equal(paths.log_promote[1], one.log_capital_promote))
    True
    >>> promote, reject = paths.crossed(0.05)
    >>> promote.any(axis=1).tolist(), reject.any(axis=1).tolist()
    ([True, True], [False, False])
    """
    x, lo, hi, n_pop, tallies = _powered_paths_iv(values, low, high, population_size, alpha, scale, audit, batch)
    used = resolve_strategy(strategy, False)
    if x.shape[1] == 0:
        return BettingPaths(np.zeros(x.shape), np.zeros(x.shape), False, used)
    m0 = np.array([float(threshold)])
    # every row's centre at once: the audited bound is then solved once per distinct (W_a, cap) of all the orders
    sums = _centre_sums(lo, hi, float(alpha), centre, None if tallies is None else AuditTallies(*tallies), audit_fraction)
    shift = np.log(sums.test_alpha / float(alpha))

    def rows(part: slice) -> tuple[np.ndarray, np.ndarray]:
        log_p, log_r = _powered_paths(x[part], sums.low_sum[part], sums.high_sum[part], m0, n_pop, float(scale), used, sums.test_alpha)
        return log_p + shift, log_r + shift

    log_p, log_r = _row_chunks(rows, x.shape[0], int(batch))
    return BettingPaths(log_p, log_r, False, used)
