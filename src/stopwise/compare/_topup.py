r"""The top-up design: the pooled betting process on a random permutation, coverage met by topping up.

The coverage rule wants ``r_g(k)`` observed tasks of every group g when k tasks are observed before a final
action: ``max{1, min{n_g, floor(k n_g / N)}}`` under the paper's proportional rule (eq. 4), that quota less two
hypergeometric standard deviations under the ``tolerant`` rule, the default with the betting boundary
(:mod:`stopwise.compare._coverage`); every rule's r_g is nondecreasing in k, which is all the argument below needs. The stratified process of
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

Running the planned order instead. The action is issued once, for some L from tau to the observed prefix, pi's
first L tasks and their top-up are observed. An evaluation that runs pi in order and skips nothing meets that at
``min over L >= tau of max(L, the last top-up task of L + 1)`` (:func:`in_order_ends`): later than the top-up
design whenever a top-up task lies far down pi. Under the proportional rule that cost most of the early stop
(6.6 % of SWE-bench Verified runs resolved by 20 % of the tasks instead of 66 %), which is why ``stopwise next``
and :func:`stopwise.compare.next_tasks` name the top-up tasks first (docs/live_looks.md).

Computation. :func:`top_up_tasks` serves ``decide`` (one observed set) and :func:`top_up_check` the look
that waits for a crossing's top-up; :func:`top_up_ends` serves the live-look replay: for every order and
prefix length tau, the task count at which the top-up after tau ends, from (K, N, G) prefix counts and the
fixed-point iteration vectorised over all (order, tau); :func:`in_order_ends` the same for an evaluation
that runs pi in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from stopwise.compare._coverage import COVERAGE_SLACK, required_counts
from stopwise.records import CoverageRule

__all__ = ["TopUpCheck", "in_order_ends", "top_up_check", "top_up_ends", "top_up_tasks"]


def top_up_tasks(
    codes: np.ndarray,
    observed: np.ndarray,
    sizes: np.ndarray,
    *,
    rule: CoverageRule = "proportional",
    slack: float = COVERAGE_SLACK,
) -> np.ndarray:
    """Planned positions of the fewest tasks that bring the observed set to coverage.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (N,)
        Group code (0..G-1) of each planned task, in the planned order pi.
    observed : numpy.ndarray of bool, shape (N,)
        Which planned tasks are observed.
    sizes : numpy.ndarray of int, shape (G,)
        n_g.
    rule, slack : optional
        The coverage rule and the ``tolerant`` rule's slack (:func:`stopwise.compare.required_counts`).

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
    >>> top_up_tasks(codes, np.arange(10) < 3, np.array([6, 4]), rule="tolerant").tolist()
    [4]
    """
    n_groups = len(sizes)
    seen = np.bincount(codes[observed], minlength=n_groups)
    n = int(observed.sum())
    total = int(sizes.sum())
    m = 0
    while True:
        k = min(n + m, total)
        deficit = np.maximum(required_counts(sizes, k, rule=rule, slack=slack) - seen, 0)
        if int(deficit.sum()) <= m or k >= total:
            break
        m = int(deficit.sum())
    picked: list[np.ndarray] = []
    for g in np.flatnonzero(deficit):
        free = np.flatnonzero((codes == g) & ~observed)
        picked.append(free[: int(deficit[g])])
    return np.sort(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class TopUpCheck:
    """Where a crossed top-up design stands: acting on some prefix L and its top-up, or waiting for the crossing's."""

    ready: bool
    """For some L from tau to the observed prefix, pi's first L tasks and their top-up are all observed."""
    length: int
    """That L when ready (the least one); tau while waiting."""
    extra: np.ndarray
    """The top-up positions of ``length`` (0-based planned positions, in planned order)."""
    missing: np.ndarray
    """Those not observed yet: the tasks the action waits for (empty when ready)."""

    @property
    def basis(self) -> np.ndarray:
        """The planned positions the action rests on: pi's first ``length`` tasks and their top-up."""
        return np.r_[np.arange(self.length), self.extra].astype(np.int64)


def top_up_check(
    codes: np.ndarray,
    observed: np.ndarray,
    sizes: np.ndarray,
    tau: int,
    prefix: int,
    *,
    rule: CoverageRule = "proportional",
    slack: float = COVERAGE_SLACK,
) -> TopUpCheck:
    """Whether a boundary crossed at look tau may act, given the observed tasks; otherwise its top-up still to run.

    The action is issued when, for some L from tau to the observed prefix, pi's first L tasks and their fewest
    top-up are all observed (monotone in the rows: more rows never undo it). Otherwise the evaluation waits for
    the top-up of the crossing look tau: a set fixed at the crossing that only shrinks as its tasks arrive, so an
    evaluation that runs only those tasks never skips one a later look would name. Running them is also the
    fastest way to the action: no L > tau is met before tau's whole top-up is observed, as long as only tau's
    top-up tasks have run beyond the prefix (the top-up of tau is the least number of tasks that meets the rule
    from pi's first tau, and L's set contains that prefix).

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (N,)
        Group code of each planned task, in the planned order pi.
    observed : numpy.ndarray of bool, shape (N,)
        Which planned tasks are observed.
    sizes : numpy.ndarray of int, shape (G,)
        n_g.
    tau : int
        The crossing look (1-based prefix length).
    prefix : int
        The longest observed prefix of pi (>= tau).
    rule, slack : optional
        The coverage rule (:func:`stopwise.compare.required_counts`).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._topup import top_up_check
    >>> codes = np.array([0, 0, 0, 0, 1, 0, 1, 1, 0, 1])
    >>> waiting = top_up_check(codes, np.arange(10) < 3, np.array([6, 4]), 3, 3)
    >>> waiting.ready, waiting.missing.tolist()
    (False, [4])
    >>> top_up_check(codes, (np.arange(10) < 3) | (np.arange(10) == 4), np.array([6, 4]), 3, 3).basis.tolist()
    [0, 1, 2, 4]
    """
    planned = np.arange(len(codes))
    for length in range(tau, prefix + 1):
        extra = top_up_tasks(codes, planned < length, sizes, rule=rule, slack=slack)
        if observed[extra].all():
            return TopUpCheck(True, length, extra, extra[:0])
    extra = top_up_tasks(codes, planned < tau, sizes, rule=rule, slack=slack)
    return TopUpCheck(False, tau, extra, extra[~observed[extra]])


def top_up_ends(
    codes: np.ndarray, sizes: np.ndarray, *, rule: CoverageRule = "proportional", slack: float = COVERAGE_SLACK, chunk: int = 64
) -> np.ndarray:
    """Observed task count at which the top-up after each prefix ends, for every order and prefix length.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (K, N)
        Group code of each task in each order (the orders are the random permutations pi).
    sizes : numpy.ndarray of int, shape (G,)
        n_g.
    rule, slack : optional
        The coverage rule (:func:`stopwise.compare.required_counts`).
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
    ends = np.empty(codes.shape, dtype=np.int64)
    for lo, _, k, _ in _fixed_points(codes, sizes, rule, slack, chunk):
        ends[lo : lo + len(k)] = k
    return ends


def in_order_ends(
    codes: np.ndarray, sizes: np.ndarray, *, rule: CoverageRule = "proportional", slack: float = COVERAGE_SLACK, chunk: int = 64
) -> np.ndarray:
    """Observed task count at which an evaluation that runs pi in order may act after a crossing at each look.

    The action after a crossing at tau is issued at the first look at which, for some L from tau to the observed
    prefix, pi's first L tasks and their top-up are observed (:func:`top_up_check`). Running pi in order, that is
    ``min over L >= tau of max(L, p(L) + 1)`` with p(L) the last planned position of L's top-up (L itself when it
    needs none).

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (K, N)
        Group code of each task in each order pi.
    sizes : numpy.ndarray of int, shape (G,)
        n_g.
    rule, slack, chunk : optional
        As for :func:`top_up_ends`.

    Returns
    -------
    numpy.ndarray of int, shape (K, N)
        ``ends[r, t - 1]``: the task count at which a crossing at look t acts when pi_r is run in order (>= the
        top-up design's :func:`top_up_ends`).

    Examples
    --------
    Every prefix of 1 to 3 tasks needs the first task of group 1, at planned position 4 (0-based): run in order, a
    crossing at look 1, 2 or 3 acts after 5 tasks; the top-up design's (:func:`top_up_ends`) after 2, 3 and 4.

    >>> import numpy as np
    >>> from stopwise.compare._topup import in_order_ends
    >>> in_order_ends(np.array([[0, 0, 0, 0, 1, 0, 1, 1, 0, 1]]), np.array([6, 4])).tolist()
    [[5, 5, 5, 7, 7, 7, 7, 8, 9, 10]]
    """
    n_groups = len(sizes)
    ends = np.empty(codes.shape, dtype=np.int64)
    depth = int(np.max(sizes))
    for lo, counts, k, required in _fixed_points(codes, sizes, rule, slack, chunk):
        block = codes[lo : lo + len(k)]
        deficit = np.maximum(required[k - 1] - counts, 0)  # (B, N, G): each group's top-up after prefix L
        # occurrence[b, g, j]: the planned position of the (j + 1)-th task of group g in order b
        occurrence = np.full((len(block), n_groups, depth), codes.shape[1], dtype=np.int64)
        within = counts - 1  # the rank of each task within its group, at its own position
        rows, positions = np.nonzero(np.ones(block.shape, dtype=bool))
        occurrence[rows, block.ravel(), np.take_along_axis(within, block[..., None], axis=-1).ravel()] = positions
        wanted = np.minimum(counts + deficit - 1, depth - 1)
        last = np.take_along_axis(occurrence[:, None, :, :], wanted[..., None], axis=-1)[..., 0]  # (B, N, G)
        last = np.where(deficit > 0, last, -1).max(axis=-1)
        length = np.arange(1, codes.shape[1] + 1)
        each = np.maximum(length, last + 1)
        ends[lo : lo + len(k)] = np.minimum.accumulate(each[:, ::-1], axis=1)[:, ::-1]
    return ends


def _fixed_points(
    codes: np.ndarray, sizes: np.ndarray, rule: CoverageRule, slack: float, chunk: int
) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """Per chunk of orders: its first row, the (B, N, G) prefix counts, the (B, N) top-up ends and the (N, G) r_g(k)."""
    n_orders, n_tasks = codes.shape
    n_groups = len(sizes)
    required = required_counts(sizes, np.arange(1, n_tasks + 1), rule=rule, slack=slack)  # (N, G): r_g(k) at k = index + 1
    tau = np.arange(1, n_tasks + 1)
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
        yield lo, counts, k, required
