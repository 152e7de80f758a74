r"""The top-up design: the pooled betting process on a random permutation, coverage met by topping up.

The coverage rule wants ``r_g(k) = max{1, min{n_g, floor(k n_g / N)}}`` observed tasks of every group g
when k tasks are observed (paper eq. 4) before a final action. The stratified process of
:mod:`stopwise.compare._betting` meets it by running a coverage-aware order and pays for the
predictable group schedule with a conservative per-group boundary. The top-up design keeps the pooled
process instead:

1. Before any outcome, ``stopwise order`` draws a uniformly random permutation pi of the N planned
   tasks (seeded; :func:`stopwise.compare.task_order`).
2. Tasks are run in pi's order. After each, the pooled betting process (Waudby-Smith & Ramdas 2020,
   without replacement) is evaluated on pi's observed prefix; the promote (reject) test crosses at the
   first prefix length tau at which its capital reaches 1/a.
3. When a test has crossed and the observed tasks do not meet the coverage rule, the evaluation runs
   the *top-up*: the fewest further tasks that bring the observed set to coverage, each group's
   earliest pi-tasks not yet run. Then the action of the first test to cross is issued. The record
   keeps tau, the p-value at tau and the top-up tasks.

Why it is valid. A wrong promote needs the promote test to have crossed while mu <= delta. The promote
capital is a function of pi's prefix alone, and pi is a uniformly random permutation drawn before any
outcome and independent of them, so that prefix is a uniform sample without replacement of the N tasks
and the capital is a nonnegative supermartingale under H0+ in the prefix's filtration; Ville's
inequality bounds the probability that it EVER reaches 1/a by a. Everything the design adds happens
after the crossing and never changes which test crossed first: the top-up tasks are chosen from the
group labels, the crossing time and pi (not from outcomes beyond tau), and they do not enter the
capital. The event "promote is issued" is contained in "the promote capital crossed", so its
probability under H0+ is at most a; reject likewise. Coverage is a condition for issuing the action,
judged on all observed tasks (prefix and top-up), so it holds at every final action. A run that
crosses at the budget limit without coverage abstains.

The fewest top-up tasks. With n tasks observed and ``c_g`` of them in group g, adding m tasks meets the
rule at k = n + m iff the deficit ``d(k) = sum_g max(0, r_g(k) - c_g)`` is at most m (the other added
tasks go anywhere). d is nondecreasing in k, so the least m with ``d(n + m) <= m`` is the least fixed point
of ``m -> d(n + m)`` above 0, reached by iterating from m = 0; there ``d(n + m) = m``: the top-up is
exactly each group's deficit.

Computation. :func:`top_up_tasks` serves ``decide`` (one observed set); :func:`top_up_ends` serves the
live-look replay: for every order and prefix length tau, the task count at which the top-up after tau
ends, from (K, N, G) prefix counts and the fixed-point iteration vectorised over all (order, tau).
"""

from __future__ import annotations

import numpy as np

from stopwise.compare._coverage import required_counts

__all__ = ["top_up_ends", "top_up_tasks"]


def top_up_tasks(codes: np.ndarray, observed: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Planned positions of the fewest tasks that bring the observed set to coverage.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (N,)
        Group code (0..G-1) of each planned task, in the planned order pi.
    observed : numpy.ndarray of bool, shape (N,)
        Which planned tasks are observed.
    sizes : numpy.ndarray of int, shape (G,)
        n_g.

    Returns
    -------
    numpy.ndarray of int
        0-based planned positions, in planned order: each deficient group's earliest unobserved tasks.

    Examples
    --------
    Groups a (6 tasks) and b (4); the first three of pi are all a: the rule at k = 4 wants 2 of a and 1
    of b, so one task of b (its earliest, position 5) tops up.

    >>> import numpy as np
    >>> from stopwise.compare._topup import top_up_tasks
    >>> codes = np.array([0, 0, 0, 0, 1, 0, 1, 1, 0, 1])
    >>> top_up_tasks(codes, np.arange(10) < 3, np.array([6, 4])).tolist()
    [4]
    """
    n_groups = len(sizes)
    seen = np.bincount(codes[observed], minlength=n_groups)
    n = int(observed.sum())
    total = int(sizes.sum())
    m = 0
    while True:
        k = min(n + m, total)
        deficit = np.maximum(required_counts(sizes, k) - seen, 0)
        if int(deficit.sum()) <= m or k >= total:
            break
        m = int(deficit.sum())
    picked: list[np.ndarray] = []
    for g in np.flatnonzero(deficit):
        free = np.flatnonzero((codes == g) & ~observed)
        picked.append(free[: int(deficit[g])])
    return np.sort(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.int64)


def top_up_ends(codes: np.ndarray, sizes: np.ndarray, *, chunk: int = 64) -> np.ndarray:
    """Observed task count at which the top-up after each prefix ends, for every order and prefix length.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (K, N)
        Group code of each task in each order (the orders are the random permutations pi).
    sizes : numpy.ndarray of int, shape (G,)
        n_g.
    chunk : int, optional
        Orders per vectorised step (bounds memory at about ``chunk x N x G x 24`` bytes).

    Returns
    -------
    numpy.ndarray of int, shape (K, N)
        ``ends[r, t - 1]``: tau = t plus the fewest top-up tasks after pi_r's prefix of length t (t itself
        when that prefix meets the rule).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._topup import top_up_ends
    >>> top_up_ends(np.array([[0, 0, 0, 0, 1, 0, 1, 1, 0, 1]]), np.array([6, 4])).tolist()
    [[2, 3, 4, 6, 6, 7, 7, 8, 9, 10]]
    """
    n_orders, n_tasks = codes.shape
    n_groups = len(sizes)
    required = required_counts(sizes, np.arange(1, n_tasks + 1))  # (N, G): r_g(k) at k = index + 1
    tau = np.arange(1, n_tasks + 1)
    ends = np.empty((n_orders, n_tasks), dtype=np.int64)
    for lo in range(0, n_orders, chunk):
        block = codes[lo : lo + chunk]
        counts = np.zeros((block.shape[0], n_tasks, n_groups), dtype=np.int64)
        np.put_along_axis(counts, block[..., None], 1, axis=-1)
        np.cumsum(counts, axis=1, out=counts)
        k = np.broadcast_to(tau, block.shape).copy()
        while True:
            deficit = np.maximum(required[k - 1] - counts, 0).sum(axis=-1)
            step = np.minimum(tau + deficit, n_tasks)
            if np.array_equal(step, k):
                break
            k = step
        ends[lo : lo + chunk] = k
    return ends
