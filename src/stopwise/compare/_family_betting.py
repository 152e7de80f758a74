"""The betting e-processes of a family: every evidence row's capital paths on the shared planned order, at once.

A family's systems run the same planned order, so every pair's betting capital (:func:`stopwise.compare.betting_paths`,
the process :func:`stopwise.decide` uses) is adapted to one filtration, the one the family's controls need. Each row
(A, B, m0) is judged on its own longest observed prefix of the planned order (both systems observed on every task
before it), as a single pair is; after that prefix its capital keeps its last value (a stopped e-process is still
an e-process), so a system that stops running freezes its pairs while the others go on.

:func:`family_bounds` gives each row's anytime-valid confidence sequence at its own level a' in one batch: the
running intersection over looks of the thresholds neither capital rejects at 1/a', on the grid of
:func:`stopwise.compare.betting_boundary` (step 0.1, refined to 0.01 inside the bracket, rounded outward),
intersected with the logical bounds of the prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stopwise.compare import betting_paths

__all__ = ["FamilyPaths", "family_bounds", "family_paths", "prefix_differences", "prefix_lengths"]

RESOLUTION = 0.01
"""Grid step of the confidence bounds (as :func:`stopwise.compare.betting_boundary`'s default)."""
COARSE_STEP = 0.1
"""First-stage grid step, refined to :data:`RESOLUTION` inside the bracket (as :func:`stopwise.compare.betting_boundary`)."""


def prefix_lengths(observed: np.ndarray, rows: np.ndarray, cap: int) -> np.ndarray:
    """Length of each row's longest prefix of the planned order observed for both of its systems, at most ``cap``.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._family_betting import prefix_lengths
    >>> seen = np.array([[1, 1, 1, 0], [1, 1, 0, 1], [1, 1, 1, 1]], bool)
    >>> prefix_lengths(seen, np.array([[0, 1], [0, 2], [1, 2]]), 4).tolist()
    [2, 3, 2]
    """
    both = observed[rows[:, 0], :cap] & observed[rows[:, 1], :cap]
    gaps = ~both
    return np.where(gaps.any(axis=1), np.argmax(gaps, axis=1), both.shape[1]).astype(np.int64)


def prefix_differences(outcomes: np.ndarray, rows: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """(R, T) each row's differences ``Y_A - Y_B`` on the looks, 0 after its prefix."""
    within = np.arange(outcomes.shape[1])[None, :] < lengths[:, None]
    return np.where(within, outcomes[rows[:, 0]] - outcomes[rows[:, 1]], 0.0)


@dataclass(frozen=True)
class FamilyPaths:
    """The rows' capital paths on the shared looks 1..T (each row frozen after its own prefix)."""

    log_promote: np.ndarray
    """(R, T) log capital of each row's promote test."""
    log_reject: np.ndarray
    """(R, T) log capital of each row's reject test."""
    lengths: np.ndarray
    """(R,) each row's observed prefix (its looks)."""
    differences: np.ndarray
    """(R, T) the rows' differences on the looks (0 after a row's prefix)."""


def _frozen(log: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each row's path with its value after its last look repeated (0, a capital of 1, before any look)."""
    looks = log.shape[1]
    at = np.minimum(np.arange(looks)[None, :], np.maximum(lengths, 1)[:, None] - 1)
    held = np.take_along_axis(log, at, axis=1)
    return np.where(lengths[:, None] > 0, held, 0.0)


def family_paths(
    outcomes: np.ndarray,
    rows: np.ndarray,
    thresholds: np.ndarray,
    lengths: np.ndarray,
    *,
    population_size: int,
    group_codes: np.ndarray | None = None,
    group_sizes: np.ndarray | None = None,
    alpha: float = 0.05,
) -> FamilyPaths:
    """The capital paths of every evidence row.

    Parameters
    ----------
    outcomes : numpy.ndarray, shape (S, T)
        Each system's outcome on the first T tasks of the planned order (NaN where not observed).
    rows : numpy.ndarray of int, shape (R, 2)
        (A, B) of each row: differences ``Y_A - Y_B``.
    thresholds : numpy.ndarray, shape (R,)
        m0 of each row.
    lengths : numpy.ndarray of int, shape (R,)
        Each row's observed prefix (:func:`prefix_lengths`), at most T.
    population_size : int
        N, the planned tasks.
    group_codes, group_sizes : numpy.ndarray, optional
        The planned order's group codes (T,) and the group sizes: the stratified process (any order random within
        groups); None: the pooled process (a uniformly random order).
    alpha : float
        The policy's level: it sizes the plug-in bets (the processes of :func:`stopwise.decide`).
    """
    looks = outcomes.shape[1]
    differences = prefix_differences(outcomes, rows, lengths)
    if looks == 0 or len(rows) == 0:
        empty = np.zeros((len(rows), looks))
        return FamilyPaths(empty, empty.copy(), lengths, differences)
    paths = betting_paths(
        differences, thresholds, population_size=population_size, group_codes=group_codes, group_sizes=group_sizes, alpha=alpha
    )
    return FamilyPaths(_frozen(paths.log_promote, lengths), _frozen(paths.log_reject, lengths), lengths, differences)


def _running_max(
    differences: np.ndarray, lengths: np.ndarray, thresholds: np.ndarray, kwargs: dict[str, object]
) -> tuple[np.ndarray, np.ndarray]:
    """Max over each row's looks of log K+ and log K- at each row's thresholds (rows x thresholds)."""
    rows, points = thresholds.shape
    repeated = np.repeat(differences, points, axis=0)
    paths = betting_paths(repeated, thresholds.ravel(), **kwargs)  # type: ignore[arg-type]
    held = np.repeat(lengths, points)
    within = np.arange(differences.shape[1])[None, :] < held[:, None]
    top_p = np.where(within, paths.log_promote, -np.inf).max(axis=1, initial=-np.inf)
    top_r = np.where(within, paths.log_reject, -np.inf).max(axis=1, initial=-np.inf)
    return top_p.reshape(rows, points), top_r.reshape(rows, points)


def family_bounds(
    differences: np.ndarray,
    lengths: np.ndarray,
    alpha: np.ndarray,
    *,
    population_size: int,
    group_codes: np.ndarray | None = None,
    group_sizes: np.ndarray | None = None,
    bet_alpha: float = 0.05,
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's anytime-valid lower and upper confidence bounds for the mean difference over the N planned tasks.

    Parameters
    ----------
    differences : numpy.ndarray, shape (R, T)
        The rows' differences on the looks, 0 after each row's prefix (:func:`prefix_differences`).
    lengths : numpy.ndarray of int, shape (R,)
        Each row's observed prefix.
    alpha : numpy.ndarray, shape (R,)
        a' of each row's ends.
    population_size, group_codes, group_sizes, bet_alpha
        As :func:`family_paths` (``bet_alpha`` is its ``alpha``).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        low and high of each row.
    """
    x, n_pop = differences, population_size
    total = x.sum(axis=1)
    logical_low, logical_high = (total - (n_pop - lengths)) / n_pop, (total + (n_pop - lengths)) / n_pop
    if x.shape[1] == 0 or len(x) == 0:
        return logical_low, logical_high
    kwargs: dict[str, object] = {"population_size": n_pop, "group_codes": group_codes, "group_sizes": group_sizes, "alpha": bet_alpha}
    level = np.log(1.0 / alpha)[:, None]
    steps = round(COARSE_STEP / RESOLUTION)
    coarse = np.round(np.arange(-1.0 + steps * RESOLUTION, 1.0 - RESOLUTION / 2, steps * RESOLUTION), 12)
    top_p, top_r = _running_max(x, lengths, np.broadcast_to(coarse, (len(x), len(coarse))), kwargs)
    kept_p, kept_r = top_p < level, top_r < level
    edges = np.r_[-1.0, coarse, 1.0]
    k_low = np.where(kept_p.any(axis=1), np.argmax(kept_p, axis=1), len(coarse))
    k_high = np.where(kept_r.any(axis=1), len(coarse) - np.argmax(kept_r[:, ::-1], axis=1), 0)
    fine = np.round(np.arange(1, steps) * RESOLUTION, 12)
    low_from, high_from = edges[k_low], edges[k_high]
    grid = np.concatenate([low_from[:, None] + fine, high_from[:, None] + fine], axis=1)
    fine_p, fine_r = _running_max(x, lengths, grid, kwargs)
    rows = np.arange(len(x))
    ones = np.ones((len(x), 1), dtype=bool)
    rejected_low = np.concatenate([ones, fine_p[:, : len(fine)] >= level, ~ones], axis=1)
    low_points = np.concatenate([low_from[:, None], low_from[:, None] + fine, edges[k_low + 1][:, None]], axis=1)
    lower = low_points[rows, np.argmin(rejected_low, axis=1) - 1]
    rejected_high = np.concatenate([~ones, fine_r[:, len(fine) :] >= level, ones], axis=1)
    high_points = np.concatenate([high_from[:, None], high_from[:, None] + fine, edges[k_high + 1][:, None]], axis=1)
    last_kept = rejected_high.shape[1] - 1 - np.argmax(~rejected_high[:, ::-1], axis=1)
    upper = high_points[rows, last_kept + 1]
    return np.maximum(lower, logical_low), np.minimum(upper, logical_high)
