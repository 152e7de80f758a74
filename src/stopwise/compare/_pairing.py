"""Pairing: the shared usable overlap of two systems and their paired task differences."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from stopwise.errors import ComparisonError
from stopwise.records import STATUSES, Exclusion

__all__ = ["MAX_LATTICE", "PairedOutcomes", "lattice_of", "pair_outcomes"]

MAX_LATTICE = 10_000
"""Largest common denominator L for which differences count as lattice-valued (D * L integer)."""
_LATTICE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class PairedOutcomes:
    """The paired outcomes of an ordered comparison (tested A against baseline B).

    Attributes
    ----------
    tested, baseline : str
        The tested system A and the baseline B.
    tasks : numpy.ndarray
        Observed tasks: shared by both systems with usable outcomes for both, sorted.
    groups : numpy.ndarray
        Coverage group of each observed task.
    units : numpy.ndarray
        Analysis unit (resampling cluster) of each observed task; a task is its own unit
        unless outcome rows connect it to others through the ``unit`` column.
    tested_outcomes, baseline_outcomes : numpy.ndarray
        Y_A and Y_B per observed task (usable attempts averaged).
    differences : numpy.ndarray
        D_i = Y_A - Y_B (paper eq. 1).
    tested_attempts, baseline_attempts : numpy.ndarray
        Usable attempts averaged per observed task.
    tested_cost, baseline_cost, tested_elapsed, baseline_elapsed : numpy.ndarray
        Summed over the usable attempts of each observed task; NaN where a row lacks the value.
    universe_tasks, universe_groups : numpy.ndarray
        All tasks shared by both systems (any status) and their groups: the task set T of size N.
    lattice : int
        L such that every D_i * L is an integer (1 for 0/1 outcomes); 0 when there is none up to
        :data:`MAX_LATTICE`.
    excluded : tuple of Exclusion
        Rows of the two systems left out, by reason.
    """

    tested: str
    baseline: str
    tasks: np.ndarray
    groups: np.ndarray
    units: np.ndarray
    tested_outcomes: np.ndarray
    baseline_outcomes: np.ndarray
    differences: np.ndarray
    tested_attempts: np.ndarray
    baseline_attempts: np.ndarray
    tested_cost: np.ndarray
    baseline_cost: np.ndarray
    tested_elapsed: np.ndarray
    baseline_elapsed: np.ndarray
    universe_tasks: np.ndarray
    universe_groups: np.ndarray
    lattice: int
    excluded: tuple[Exclusion, ...]

    @property
    def n_observed(self) -> int:
        """|S_b|, the number of observed paired tasks."""
        return len(self.tasks)

    @property
    def n_shared(self) -> int:
        """N, the number of tasks shared by both systems."""
        return len(self.universe_tasks)

    @property
    def delta_hat(self) -> float | None:
        """The observed mean paired difference (paper eq. 3); None when nothing is observed."""
        return float(self.differences.mean()) if len(self.differences) else None

    def group_sizes(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (group labels, n_g) over the shared task set, labels sorted."""
        labels, sizes = np.unique(self.universe_groups, return_counts=True)
        return labels, sizes


def lattice_of(values: np.ndarray, *, max_denominator: int = MAX_LATTICE) -> int:
    """Smallest L <= ``max_denominator`` with every ``values * L`` an integer, else 0.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import lattice_of
    >>> lattice_of(np.array([1.0, 0.0, -1.0])), lattice_of(np.array([0.2, -0.5])), lattice_of(np.array([0.123456789]))
    (1, 10, 0)
    """
    unique = np.unique(np.round(np.asarray(values, dtype=float), 12))
    lattice = 1
    for value in unique:
        fraction = Fraction(float(value)).limit_denominator(max_denominator)
        if abs(float(fraction) - value) > _LATTICE_TOLERANCE:
            return 0
        lattice = math.lcm(lattice, fraction.denominator)
        if lattice > max_denominator:
            return 0
    return lattice


def _task_labels(sub: pd.DataFrame, column: str, what: str) -> pd.Series:
    """One label per task from its rows; blank labels yield to others; conflicts are an error."""
    labels = sub.loc[sub[column] != "", ["task", column]].drop_duplicates()
    conflicts = labels[labels.duplicated("task", keep=False)]
    if len(conflicts):
        task = conflicts["task"].iloc[0]
        found = ", ".join(sorted(conflicts.loc[conflicts["task"] == task, column]))
        raise ComparisonError(
            f"task {task!r} has rows with different {what} values ({found}); a task must belong to one {what}"
        )
    return labels.set_index("task")[column]


def _units_of(sub: pd.DataFrame, tasks: np.ndarray) -> np.ndarray:
    """Connected components of tasks linked by shared ``unit`` labels; labelled by their first task."""
    linked = sub.loc[(sub["unit"] != "") & sub["task"].isin(tasks), ["task", "unit"]].drop_duplicates()
    if linked.empty:
        return tasks.copy()
    task_index = pd.Index(tasks)
    unit_codes, _ = pd.factorize(linked["unit"])
    t = task_index.get_indexer(linked["task"])
    n_tasks = len(tasks)
    n_units = int(unit_codes.max()) + 1
    graph = coo_matrix(
        (np.ones(len(t)), (t, n_tasks + unit_codes)), shape=(n_tasks + n_units, n_tasks + n_units)
    )
    _, component = connected_components(graph, directed=False)
    component = component[:n_tasks]
    first_task = pd.Series(tasks).groupby(component).transform("first").to_numpy()
    return first_task.astype(str)


def pair_outcomes(
    rows: pd.DataFrame,
    tested: str,
    baseline: str,
    *,
    statuses: tuple[str, ...] = ("final",),
    group_column: str = "group",
) -> PairedOutcomes:
    """Pair two systems' outcomes on their shared usable task overlap.

    Attempts of one (system, task) are averaged before pairing. The shared task set T holds
    every task with rows of both systems (any status); the observed set holds the tasks of T
    with usable (allowed-status) outcomes for both. Rows left out are counted by reason.

    Parameters
    ----------
    rows : pandas.DataFrame
        Validated outcome rows (see :func:`stopwise.read_outcomes`).
    tested, baseline : str
        The tested system A and the baseline B.
    statuses : tuple of str, optional
        Statuses a decision may use (default only ``final``).
    group_column : str, optional
        Column holding each task's coverage group.

    Returns
    -------
    PairedOutcomes

    Raises
    ------
    ComparisonError
        A system is absent, A equals B, a task has conflicting groups, or the column is missing.

    Examples
    --------
    >>> import stopwise
    >>> rows = stopwise.outcome_frame([
    ...     {"system": "A", "task": "t1", "outcome": 1}, {"system": "B", "task": "t1", "outcome": 0},
    ...     {"system": "A", "task": "t2", "outcome": 1}, {"system": "B", "task": "t2", "outcome": 1},
    ...     {"system": "A", "task": "t3", "outcome": 0}])
    >>> p = stopwise.pair_outcomes(rows, "A", "B")
    >>> p.differences.tolist(), p.n_shared, [(e.reason, e.rows) for e in p.excluded]
    ([1.0, 0.0], 2, [('task not shared by both systems', 1)])
    """
    if tested == baseline:
        raise ComparisonError(f"tested and baseline must be different systems; both are {tested!r}")
    if group_column not in rows.columns:
        raise ComparisonError(
            f"group column {group_column!r} is not an outcome column; columns are {', '.join(map(str, rows.columns))}"
        )
    unknown = [s for s in statuses if s not in STATUSES]
    if unknown:
        raise ComparisonError(f"statuses must be among {', '.join(STATUSES)}; got {unknown}")
    present = set(rows["system"].unique())
    for role, system in (("tested", tested), ("baseline", baseline)):
        if system not in present:
            listing = ", ".join(sorted(present)[:20]) + (" ..." if len(present) > 20 else "")
            raise ComparisonError(f"{role} system {system!r} is absent from the outcome rows; systems present: {listing}")

    excluded: list[Exclusion] = []

    def exclude(mask: pd.Series | np.ndarray, frame: pd.DataFrame, reason: str) -> pd.DataFrame:
        mask = np.asarray(mask, dtype=bool)
        if mask.any():
            excluded.append(Exclusion(reason=reason, rows=int(mask.sum()), tasks=int(frame.loc[mask, "task"].nunique())))
        return frame.loc[~mask]

    sub = rows.loc[rows["system"].isin([tested, baseline])]
    sub = exclude(sub.duplicated(["system", "task", "attempt"], keep="first"), sub, "identical duplicate of another row")

    groups_by_task = _task_labels(sub, group_column, "group")
    tested_tasks = set(sub.loc[sub["system"] == tested, "task"])
    baseline_tasks = set(sub.loc[sub["system"] == baseline, "task"])
    shared = np.array(sorted(tested_tasks & baseline_tasks), dtype=object).astype(str)
    sub = exclude(~sub["task"].isin(shared), sub, "task not shared by both systems")
    universe_groups = groups_by_task.reindex(shared).fillna("").to_numpy(dtype=str)

    for status in STATUSES:
        if status not in statuses:
            sub = exclude(sub["status"] == status, sub, f"status {status} (policy uses {', '.join(statuses)})")

    usable = sub.groupby(["task", "system"], sort=True).agg(
        outcome=("outcome", "mean"),
        attempts=("outcome", "size"),
        cost=("cost_usd", lambda s: s.sum(min_count=len(s))),
        elapsed=("elapsed_s", lambda s: s.sum(min_count=len(s))),
    )
    wide = usable.unstack("system")
    if wide.empty or tested not in wide["outcome"].columns or baseline not in wide["outcome"].columns:
        observed = np.array([], dtype=str)
    else:
        both = wide["outcome"][[tested, baseline]].notna().all(axis=1)
        observed = wide.index[both].to_numpy(dtype=str)
    sub = exclude(~sub["task"].isin(observed), sub, "partner system has no usable outcome on the task yet")

    def column(field: str, system: str) -> np.ndarray:
        if len(observed) == 0:
            return np.array([], dtype=float)
        return wide[field][system].reindex(observed).to_numpy(dtype=float)

    y_tested = column("outcome", tested)
    y_baseline = column("outcome", baseline)
    differences = y_tested - y_baseline
    return PairedOutcomes(
        tested=tested,
        baseline=baseline,
        tasks=observed,
        groups=groups_by_task.reindex(observed).fillna("").to_numpy(dtype=str),
        units=_units_of(sub, observed),
        tested_outcomes=y_tested,
        baseline_outcomes=y_baseline,
        differences=differences,
        tested_attempts=column("attempts", tested).astype(np.int64),
        baseline_attempts=column("attempts", baseline).astype(np.int64),
        tested_cost=column("cost", tested),
        baseline_cost=column("cost", baseline),
        tested_elapsed=column("elapsed", tested),
        baseline_elapsed=column("elapsed", baseline),
        universe_tasks=shared,
        universe_groups=universe_groups,
        lattice=lattice_of(differences) if len(differences) else 1,
        excluded=tuple(excluded),
    )
