r"""Task-group coverage (ParEvalLayer section III-D, eq. 4) and its tolerant variants (issue 33).

A coverage rule asks for ``r_g(k)`` observed tasks of every group g (``n_g`` of the N planned tasks)
once k tasks are observed, before a final action:

* ``proportional`` (the paper's eq. 4): ``r_g(k) = max{1, min{n_g, floor(k n_g / N)}}``, the exact quota
  of a proportional allocation;
* ``tolerant`` (the default with the betting boundary): the quota less ``s`` hypergeometric standard
  deviations, ``r_g(k) = max{1, min{n_g, floor(k p_g - s sigma_g(k))}}`` with ``p_g = n_g / N`` and
  ``sigma_g(k) = sqrt(k p_g (1 - p_g) (N - k) / (N - 1))``, the SD of the group's count in a uniformly
  random k-subset. A random prefix meets the quota itself only about half the time per group (1-2 %
  of prefixes of 12 groups meet every quota), so the top-up the proportional rule asks for after a
  crossing grows like ``sqrt(k) G``; ``s = 2`` keeps the rule's purpose (every group represented,
  about in proportion) and asks only for the tasks a random prefix lacks beyond sampling noise.
  ``s = 0`` is the proportional rule; at k = N the SD is 0 and every task is required;
* ``every-group``: ``r_g(k) = 1``, every group seen at least once;
* ``none``: nothing enforced (the proportional counts are recorded).

Every rule's ``r_g(k)`` is nondecreasing in k (for ``tolerant``: where ``k p_g - s sigma_g(k) > 0`` its
derivative exceeds ``p_g / 2``), which the top-up design's fewest-tasks argument needs
(:mod:`stopwise.compare._topup`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from stopwise.errors import ArgumentError
from stopwise.records import COVERAGE_RULES, CoverageRule, CoverageState, GroupCoverage

__all__ = [
    "COVERAGE_SLACK",
    "budget_task_count",
    "coverage_enforced",
    "coverage_from_sizes",
    "coverage_state",
    "feasible_prefixes",
    "required_counts",
    "requirement_reach",
]

COVERAGE_SLACK = 2.0
"""s: the ``tolerant`` rule's slack, in hypergeometric standard deviations of each group's count."""


def budget_task_count(n_shared: int, budget: float) -> int:
    """k_b = ceil(b N): the tasks a budget fraction b of N shared tasks allows.

    Examples
    --------
    >>> from stopwise.compare import budget_task_count
    >>> budget_task_count(100, 0.2), budget_task_count(300, 0.05), budget_task_count(74, 0.25)
    (20, 15, 19)
    """
    if not 0.0 < budget <= 1.0:
        raise ArgumentError(f"budget must be a fraction in (0, 1]; got {budget!r}")
    return min(n_shared, math.ceil(budget * n_shared - 1e-9))


def required_counts(
    group_sizes: ArrayLike, k: ArrayLike, *, rule: CoverageRule = "proportional", slack: float = COVERAGE_SLACK
) -> np.ndarray:
    """r_g(k) of a coverage rule for every group g: by default the paper's eq. 4, ``max{1, min{n_g, floor(k n_g / N)}}``.

    Parameters
    ----------
    group_sizes : array_like of int, shape (G,)
        n_g, the shared tasks of each group present in the overlap (every n_g >= 1).
    k : int or array_like of int
        Observed (or allowed) task counts; any shape.
    rule : {"proportional", "tolerant", "every-group", "none"}, optional
        The coverage rule (the module docstring); ``none`` gives the proportional counts (recorded, not enforced).
    slack : float, optional
        s >= 0, the ``tolerant`` rule's slack in hypergeometric standard deviations (ignored by the others).

    Returns
    -------
    numpy.ndarray
        Shape ``k.shape + (G,)``: the required count of each group at each k.

    Examples
    --------
    >>> from stopwise.compare import required_counts
    >>> required_counts([50, 30, 20], 20).tolist()
    [10, 6, 4]
    >>> required_counts([50, 30, 20], [1, 100]).tolist()
    [[1, 1, 1], [50, 30, 20]]
    >>> required_counts([50, 30, 20], 20, rule="tolerant").tolist(), required_counts([50, 30, 20], 20, rule="every-group").tolist()
    ([5, 2, 1], [1, 1, 1])
    """
    sizes = np.asarray(group_sizes, dtype=np.int64)
    if sizes.ndim != 1 or (sizes < 1).any():
        raise ArgumentError("group_sizes must be a 1-d array of counts >= 1")
    if rule not in COVERAGE_RULES:
        raise ArgumentError(f"`rule` must be one of {', '.join(COVERAGE_RULES)}; got {rule!r}")
    if not (isinstance(slack, int | float) and math.isfinite(slack) and slack >= 0):
        raise ArgumentError(f"`slack` must be a finite number >= 0; got {slack!r}")
    counts = np.asarray(k, dtype=np.int64)[..., None]
    total = int(sizes.sum())
    if rule == "every-group":
        return np.broadcast_to(np.minimum(sizes, 1), counts.shape[:-1] + sizes.shape).copy()
    if rule != "tolerant" or slack == 0:
        return np.maximum(1, np.minimum(sizes, (counts * sizes) // total))
    share = sizes / total
    spread = np.sqrt(np.clip(counts * share * (1.0 - share) * (total - counts) / max(total - 1, 1), 0.0, None))
    quota = np.floor(counts * share - slack * spread + 1e-9).astype(np.int64)
    return np.maximum(1, np.minimum(sizes, quota))


def coverage_enforced(rule: CoverageRule) -> bool:
    """Whether a final action waits for the rule (every rule but ``none``).

    Examples
    --------
    >>> from stopwise.compare import coverage_enforced
    >>> coverage_enforced("tolerant"), coverage_enforced("none")
    (True, False)
    """
    return rule != "none"


def requirement_reach(group_sizes: ArrayLike) -> np.ndarray:
    """The first k at which each group's requirement reaches j, for j = 1..n_g, group after group: O(N), no (N, G) table.

    ``r_g(k) >= j`` exactly when ``k >= ceil(j N / n_g)`` for 2 <= j <= n_g (and always for j = 1), since
    ``r_g(k) = max(1, min(n_g, floor(k n_g / N)))`` (:func:`required_counts`). Entry ``offset_g + j - 1`` holds it,
    with ``offset_g`` the sizes of the groups before g.

    Examples
    --------
    >>> from stopwise.compare._coverage import requirement_reach
    >>> requirement_reach([3, 1]).tolist()
    [1, 3, 4, 1]
    """
    sizes = np.asarray(group_sizes, dtype=np.int64)
    if sizes.ndim != 1 or (sizes < 1).any():
        raise ArgumentError("group_sizes must be a 1-d array of counts >= 1")
    total = int(sizes.sum())
    size = np.repeat(sizes, sizes)
    j = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes) + 1
    return np.where(j == 1, 1, (j * total + size - 1) // size)


def feasible_prefixes(group_sizes: ArrayLike) -> np.ndarray:
    """Whether the rule can be met after k tasks, ``sum_g r_g(k) <= k``, for k = 1..N (O(N) memory).

    Examples
    --------
    >>> from stopwise.compare._coverage import feasible_prefixes
    >>> feasible_prefixes([2, 2]).tolist()
    [False, True, True, True]
    """
    reach = requirement_reach(group_sizes)
    total = len(reach)
    required_total = np.cumsum(np.bincount(reach, minlength=total + 1))[1:]
    return np.asarray(required_total <= np.arange(1, total + 1), dtype=bool)


def coverage_state(
    universe_groups: np.ndarray,
    observed_groups: np.ndarray,
    *,
    rule: CoverageRule = "proportional",
    slack: float = COVERAGE_SLACK,
) -> CoverageState:
    """Coverage of an observed task set against the shared task set.

    The required counts use k = the number of observed tasks; the requirement is impossible
    when sum r_g > k, and then no final action may be issued under an enforced rule.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import coverage_state
    >>> universe = np.array(["a"] * 50 + ["b"] * 30 + ["c"] * 20)
    >>> state = coverage_state(universe, np.array(["a"] * 10 + ["b"] * 6 + ["c"] * 3 + ["a"]))
    >>> state.satisfied, state.missing_groups, [g.required for g in state.groups]
    (False, ['c'], [10, 6, 4])
    """
    labels, sizes = np.unique(np.asarray(universe_groups, dtype=str), return_counts=True)
    return coverage_from_sizes(labels, sizes, observed_groups, rule=rule, slack=slack)


def coverage_from_sizes(
    labels: ArrayLike,
    sizes: ArrayLike,
    observed_groups: np.ndarray,
    *,
    rule: CoverageRule = "proportional",
    slack: float = COVERAGE_SLACK,
    at: int | None = None,
) -> CoverageState:
    """Coverage of an observed task set against planned groups given by their sizes n_g.

    Planned groups with no observed task are included (their seen count is 0); this is how a
    task universe from counts (``--n-tasks``, ``--group-size``) is judged.

    Parameters
    ----------
    labels : array_like of str
        The planned group labels, sorted and unique.
    sizes : array_like of int
        n_g of each label.
    observed_groups : numpy.ndarray of str
        The group of each observed task; every one must be among ``labels``.
    rule : {"proportional", "tolerant", "every-group", "none"}, optional
        The policy's coverage rule (recorded; the state is computed either way, ``none`` with the proportional counts).
    slack : float, optional
        The ``tolerant`` rule's s (recorded with it).
    at : int, optional
        The task count k whose requirement is judged (default: the observed count). The top-up design judges the
        set its action waits on: pi's first tau tasks and their top-up, required at their number.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._coverage import coverage_from_sizes
    >>> state = coverage_from_sizes(["a", "b", "c"], [300, 150, 60], np.array(["a"] * 60))
    >>> state.satisfied, state.missing_groups, [g.required for g in state.groups]
    (False, ['b', 'c'], [35, 17, 7])
    >>> state = coverage_from_sizes(["a", "b", "c"], [300, 150, 60], np.array(["a"] * 60), rule="tolerant")
    >>> state.rule, state.slack, [g.required for g in state.groups]
    ('tolerant', 2.0, [28, 11, 2])
    """
    labels = np.asarray(labels, dtype=str)
    sizes = np.asarray(sizes, dtype=np.int64)
    observed = np.asarray(observed_groups, dtype=str)
    k = len(observed) if at is None else int(at)
    recorded = float(slack) if rule == "tolerant" else None
    if len(labels) == 0:
        return CoverageState(rule=rule, slack=recorded, satisfied=False, possible=False, groups=[], missing_groups=[])
    codes = np.searchsorted(labels, observed)
    if len(observed) and ((codes >= len(labels)).any() or (labels[np.minimum(codes, len(labels) - 1)] != observed).any()):
        raise ArgumentError("every observed group must be one of the planned labels")
    seen = np.bincount(codes, minlength=len(labels)).astype(np.int64)
    required = required_counts(sizes, k, rule=rule, slack=slack)
    possible = bool(required.sum() <= k)
    missing = [str(label) for label, r, s in zip(labels, required, seen, strict=True) if s < r]
    return CoverageState(
        rule=rule,
        slack=recorded,
        satisfied=possible and not missing,
        possible=possible,
        groups=[  # built from checked labels and whole numbers: constructed without validating them again (~25 us each)
            GroupCoverage.model_construct(group=str(label), size=int(n), required=int(r), seen=int(s))
            for label, n, r, s in zip(labels.tolist(), sizes.tolist(), required.tolist(), seen.tolist(), strict=True)
        ],
        missing_groups=missing,
    )
