"""Task orders: the order in which a live run (or a replay) reveals the planned tasks.

The order of a live evaluation is part of the decision layer (it is fixed by the policy before any
outcome exists); the replay draws its orders with the same functions.

Every function returns an integer array of shape ``(K, N)``: row r is a permutation of the task
indices ``0..N-1`` (positions in the caller's task array), drawn from one seeded generator.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from stopwise._params import check_random_state
from stopwise.compare._coverage import feasible_prefixes, requirement_reach
from stopwise.errors import ArgumentError

__all__ = [
    "cost_first_orders",
    "coverage_aware_orders",
    "coverage_deadlines",
    "neyman_from_draws",
    "neyman_orders",
    "stratified_draws",
    "uniform_orders",
]


def _orders_iv(groups: ArrayLike, n_orders: int) -> tuple[np.ndarray, np.ndarray]:
    labels = np.asarray(groups)
    if labels.ndim != 1 or len(labels) == 0:
        raise ArgumentError("`groups` must be a non-empty 1-d array (one group label per task)")
    if int(n_orders) != n_orders or n_orders < 1:
        raise ArgumentError(f"`n_orders` must be a positive integer; got {n_orders!r}")
    _, codes = np.unique(labels, return_inverse=True)
    return labels, codes


def uniform_orders(n_tasks: int, n_orders: int, *, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """K independent uniformly random permutations of N tasks.

    Examples
    --------
    >>> from stopwise.compare import uniform_orders
    >>> uniform_orders(5, 2, rng=0).shape
    (2, 5)
    """
    if int(n_tasks) != n_tasks or n_tasks < 1:
        raise ArgumentError(f"`n_tasks` must be a positive integer; got {n_tasks!r}")
    if int(n_orders) != n_orders or n_orders < 1:
        raise ArgumentError(f"`n_orders` must be a positive integer; got {n_orders!r}")
    generator = check_random_state("uniform_orders", rng, name="rng", error=ArgumentError)
    return np.argsort(generator.random((n_orders, n_tasks)), axis=1, kind="stable")


def _within_group_rank(codes: np.ndarray, u: np.ndarray) -> np.ndarray:
    """1-based rank of each task within its group under random keys u (one row per order)."""
    n = codes.shape[0]
    by_group = np.argsort(codes[None, :] + u, axis=1, kind="stable")
    starts = np.searchsorted(np.sort(codes), np.arange(codes.max() + 1))
    sorted_codes = np.sort(codes)
    rank_sorted = np.arange(n)[None, :] - starts[sorted_codes][None, :] + 1
    rank = np.empty_like(by_group)
    np.put_along_axis(rank, by_group, np.broadcast_to(rank_sorted, by_group.shape), axis=1)
    return rank


def coverage_deadlines(group_sizes: ArrayLike) -> np.ndarray:
    """Deadline of the j-th task of each group under the coverage rule.

    ``deadlines[g, j - 1]`` is the smallest prefix length k at which the rule can be met
    (sum of r(k) <= k) and requires at least j tasks of group g; ``N + 1`` when never required.

    Examples
    --------
    >>> from stopwise.compare import coverage_deadlines
    >>> coverage_deadlines([2, 2]).tolist()
    [[2, 4], [2, 4]]
    """
    sizes = np.asarray(group_sizes, dtype=np.int64)
    n = int(sizes.sum())
    deadlines = np.full((len(sizes), int(sizes.max())), n + 1, dtype=np.int64)
    deadlines[np.repeat(np.arange(len(sizes)), sizes), np.arange(n) - np.repeat(np.cumsum(sizes) - sizes, sizes)] = _due(sizes)
    return deadlines


def _due(sizes: np.ndarray) -> np.ndarray:
    """The deadline of the j-th task of each group, flattened group after group (j = 1..n_g): O(N) memory.

    The j-th task of g is due at the first feasible k (:func:`stopwise.compare._coverage.feasible_prefixes`)
    at which ``r_g(k) >= j`` (:func:`stopwise.compare._coverage.requirement_reach`); N + 1 when none is.
    """
    n = int(sizes.sum())
    feasible = feasible_prefixes(sizes)
    next_feasible = np.minimum.accumulate(np.where(feasible, np.arange(1, n + 1), n + 1)[::-1])[::-1]
    return np.r_[next_feasible, n + 1][requirement_reach(sizes) - 1]


def coverage_aware_orders(
    groups: ArrayLike, n_orders: int, *, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Random orders whose every prefix meets the coverage rule whenever that is possible.

    Within each group the tasks are shuffled; the j-th task of group g is due by the first
    prefix length at which the rule requires j tasks of g (:func:`coverage_deadlines`). Sorting all
    tasks by deadline (random tie-break) is earliest-deadline-first scheduling, which meets every
    deadline because at most ``sum r(k) <= k`` tasks are due by any feasible k.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import coverage_aware_orders
    >>> from stopwise.compare._coverage import required_counts
    >>> groups = np.array(["a"] * 50 + ["b"] * 30 + ["c"] * 20)
    >>> order = coverage_aware_orders(groups, 1, rng=0)[0]
    >>> seen = [(groups[order[:20]] == g).sum() for g in "abc"]
    >>> [int(s) for s in seen], required_counts([50, 30, 20], 20).tolist()
    ([10, 6, 4], [10, 6, 4])
    """
    labels, codes = _orders_iv(groups, n_orders)
    generator = check_random_state("coverage_aware_orders", rng, name="rng", error=ArgumentError)
    sizes = np.bincount(codes)
    offsets = np.cumsum(sizes) - sizes
    u = generator.random((n_orders, len(labels)))
    rank = _within_group_rank(codes, u)
    due = _due(sizes)[offsets[codes][None, :] + rank - 1]
    tie = generator.random((n_orders, len(labels)))
    return np.lexsort((tie, due), axis=1)


def neyman_orders(
    groups: ArrayLike,
    weights: ArrayLike,
    n_orders: int,
    *,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Random stratified orders whose group shares follow Neyman allocation.

    The j-th task of group g (in a random within-group order) gets the key ``(j - u) / w_g`` with u
    uniform on [0, 1); sorting by key reveals group g at rate w_g. Neyman allocation takes
    ``w_g`` proportional to ``n_g * sigma_g`` (sigma_g: the standard deviation of the paired
    differences of group g in the completed record). Groups with zero weight come last.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import neyman_orders
    >>> groups = np.array(["a"] * 10 + ["b"] * 10)
    >>> order = neyman_orders(groups, {"a": 3.0, "b": 1.0}, 1, rng=0)[0]
    >>> int((groups[order[:8]] == "a").sum())
    6
    """
    labels, codes = _orders_iv(groups, n_orders)
    unique = np.unique(labels)
    if isinstance(weights, dict):
        missing = [g for g in unique if g not in weights]
        if missing:
            raise ArgumentError(f"`weights` lacks group(s) {missing}")
        w = np.array([float(weights[g]) for g in unique])
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != unique.shape:
            raise ArgumentError("`weights` must give one weight per group (in sorted label order)")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ArgumentError("`weights` must be finite and >= 0")
    u, rank = stratified_draws(codes, n_orders, rng=rng)
    return neyman_from_draws(codes, u, rank, w)


def stratified_draws(
    codes: np.ndarray, n_orders: int, *, rng: np.random.Generator | int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Random keys u in [0, 1) and the 1-based within-group ranks they induce, shape (K, N) each."""
    u = check_random_state("stratified_draws", rng, name="rng", error=ArgumentError).random((n_orders, len(codes)))
    return u, _within_group_rank(codes, u)


def neyman_from_draws(codes: np.ndarray, u: np.ndarray, rank: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Orders revealing group g at rate weights[g], from shared draws (see :func:`neyman_orders`)."""
    w = weights[codes]
    positive = w > 0
    key = np.where(positive[None, :], (rank - u) / np.where(positive, w, 1.0)[None, :], 1e12 + rank + u)
    return np.argsort(key, axis=1, kind="stable")


def cost_first_orders(
    costs: ArrayLike, n_orders: int, *, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Cheapest tasks first (by the tested system's cost), ties broken at random.

    Examples
    --------
    >>> from stopwise.compare import cost_first_orders
    >>> cost_first_orders([3.0, 1.0, 2.0], 1, rng=0).tolist()
    [[1, 2, 0]]
    """
    values = np.asarray(costs, dtype=float)
    if values.ndim != 1 or len(values) == 0 or not np.isfinite(values).all():
        raise ArgumentError("`costs` must be a non-empty 1-d array of finite numbers (one per task)")
    if int(n_orders) != n_orders or n_orders < 1:
        raise ArgumentError(f"`n_orders` must be a positive integer; got {n_orders!r}")
    tie = check_random_state("cost_first_orders", rng, name="rng", error=ArgumentError).random((n_orders, len(values)))
    return np.lexsort((tie, np.broadcast_to(values, tie.shape)), axis=1)
