"""Pairing: the one core that turns outcome rows into cells, the task set T and paired differences.

:func:`outcome_cells` (duplicates, statuses, attempts averaging, cost and time sums, the one
group-conflict check) is shared by :func:`pair_outcomes` (and so :func:`stopwise.decide`) and the
replay's :func:`stopwise.replay.prepare_source`; all of it is vectorised with ``bincount`` over factorised
(system, task) codes of :class:`stopwise.OutcomeColumns` (a pandas frame is taken as its columns), so the
decision path never needs pandas.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from stopwise._vocabulary import ExclusionCode, exclusion_reason
from stopwise.errors import ComparisonError
from stopwise.records import (
    STATUSES,
    TEXT_COLUMNS,
    Exclusion,
    FlagCount,
    OutcomeColumns,
    TaskUniverse,
    factorize,
    flag_mask,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MAX_LATTICE",
    "OutcomeCells",
    "PairedOutcomes",
    "lattice_of",
    "outcome_cells",
    "pair_outcomes",
    "task_groups",
]

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
        The task set T and its groups: the planned tasks of the universe; for a universe from
        counts the tasks with rows (names of the others are unknown) and the planned group of
        each of the N slots; without a universe every task with rows of both systems.
    lattice : int
        L such that every D_i * L is an integer (1 for 0/1 outcomes); 0 when there is none up to
        :data:`MAX_LATTICE`.
    excluded : tuple of Exclusion
        Rows of the two systems left out, by reason.
    universe_size : int
        N, the size of T.
    universe_labels, universe_sizes : numpy.ndarray
        The groups of T (sorted, including planned groups without rows) and their sizes n_g.
    positions : numpy.ndarray of int
        0-based planned position of each observed task (-1 when the universe has no order).
    universe : TaskUniverse or None
        The universe given, or None when T was inferred from the rows.
    notes : tuple of str
        What the pairing could not do as asked (e.g. a universe without groups), for warnings.
    flagged : tuple of FlagCount
        Rows used on the observed tasks that carry a counted flag (``count_flags``), by flag.
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
    universe_size: int
    universe_labels: np.ndarray
    universe_sizes: np.ndarray
    positions: np.ndarray
    universe: TaskUniverse | None = None
    notes: tuple[str, ...] = ()
    flagged: tuple[FlagCount, ...] = ()

    @property
    def n_observed(self) -> int:
        """|S_b|, the number of observed paired tasks."""
        return len(self.tasks)

    @property
    def n_shared(self) -> int:
        """N, the size of the task set T (the universe's N when one is given)."""
        return self.universe_size

    @property
    def delta_hat(self) -> float | None:
        """The observed mean paired difference (paper eq. 3); None when nothing is observed."""
        return float(self.differences.mean()) if len(self.differences) else None

    def group_sizes(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (group labels, n_g) over the task set T, labels sorted."""
        return self.universe_labels, self.universe_sizes


def lattice_of(values: np.ndarray, *, max_denominator: int = MAX_LATTICE) -> int:
    """Smallest L <= ``max_denominator`` with every ``values * L`` an integer, else 0.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import lattice_of
    >>> lattice_of(np.array([1.0, 0.0, -1.0])), lattice_of(np.array([0.2, -0.5])), lattice_of(np.array([0.123456789]))
    (1, 10, 0)
    """
    values = np.asarray(values, dtype=float)
    if bool((values == np.round(values)).all()):
        return 1  # integer differences (0/1 outcomes): the common case, without a Fraction per value
    unique = np.unique(np.round(values, 12))
    lattice = 1
    for value in unique:
        fraction = Fraction(float(value)).limit_denominator(max_denominator)
        if abs(float(fraction) - value) > _LATTICE_TOLERANCE:
            return 0
        lattice = math.lcm(lattice, fraction.denominator)
        if lattice > max_denominator:
            return 0
    return lattice


def task_groups(
    tasks: ArrayLike,
    labels: ArrayLike,
    *,
    what: str = "group",
    source: str | None = None,
) -> pd.Series:
    """One label per task from rows that may repeat a task; blanks yield to others, conflicts are an error.

    This is the one group-conflict check of the package: pairing, replay and the task order use it.

    Parameters
    ----------
    tasks, labels : array_like of str
        One task id and one label per row ("" for no label).
    what : str, optional
        What the label is, for the message (``group``, ``unit``).
    source : str, optional
        Where the rows came from, for the message.

    Returns
    -------
    pandas.Series
        The label of every task with a non-blank label, indexed by task, sorted.

    Raises
    ------
    ComparisonError
        A task has rows with different non-blank labels (the task and the labels are named).

    Examples
    --------
    >>> from stopwise.compare._pairing import task_groups
    >>> task_groups(["t1", "t1", "t2", "t3"], ["a", "", "b", ""]).to_dict()
    {'t1': 'a', 't2': 'b'}
    """
    import pandas as pd

    task_codes, task_names = factorize(np.asarray(tasks, dtype=object).astype(str).astype(object))
    label_codes, label_names = factorize(np.asarray(labels, dtype=object).astype(str).astype(object))
    task_of, label_of = _task_labels(task_codes, task_names, label_codes, label_names, what=what, source=source)
    return pd.Series(label_of, index=pd.Index(task_names[task_of].astype(str)), name=what, dtype=object).astype(str)


def _task_labels(
    task_codes: np.ndarray,
    task_names: np.ndarray,
    label_codes: np.ndarray,
    label_names: np.ndarray,
    *,
    what: str,
    source: str | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(task codes with a non-blank label, their label): the array core of :func:`task_groups`."""
    blank = np.flatnonzero(label_names == "")
    keep = label_codes >= 0
    if len(blank):
        keep &= label_codes != blank[0]
    n_tasks, width = len(task_names), len(label_names)
    lo = np.full(n_tasks, width, dtype=np.int64)
    hi = np.full(n_tasks, -1, dtype=np.int64)
    np.minimum.at(lo, task_codes[keep], label_codes[keep])
    np.maximum.at(hi, task_codes[keep], label_codes[keep])
    clash = np.flatnonzero(hi > lo)
    if len(clash):
        task = int(clash[0])
        found = ", ".join(
            sorted(repr(str(label_names[c])) for c in np.unique(label_codes[keep & (task_codes == task)]))
        )
        where = f"{source}: " if source else ""
        raise ComparisonError(
            f"{where}task {str(task_names[task])!r} has rows with different {what} values ({found}); a task must belong to one {what}"
        )
    task_of = np.flatnonzero(hi >= 0)
    return task_of, np.asarray(label_names[lo[task_of]], dtype=object)


def _rows_of_systems(rows: OutcomeColumns, systems: Sequence[str]) -> np.ndarray:
    """Mask of the rows of the given systems (compared as codes, not as text)."""
    codes, labels = rows.codes("system")
    wanted = set(systems)
    chosen = [code for code, label in enumerate(labels.tolist()) if label in wanted]
    if len(chosen) <= 4:
        mask = np.zeros(len(codes), dtype=bool)
        for code in chosen:
            mask |= codes == code
        return mask
    return np.isin(codes, chosen)


def _rows_on_tasks(rows: OutcomeColumns, tasks: np.ndarray) -> np.ndarray:
    """Mask of the rows whose task is among ``tasks``.

    Matched once per distinct task, as text: ``np.isin`` on the object-array column compares row by row,
    hundreds of times slower.
    """
    codes, labels = rows.codes("task")
    return np.isin(labels.astype(str), tasks)[codes]


def _flag_rows(rows: OutcomeColumns, flag: str) -> np.ndarray:
    """Rows whose flags hold ``flag``, tested once per distinct flags value."""
    codes, labels = rows.codes("flags")
    return flag_mask(labels, flag)[codes]


def as_columns(rows: pd.DataFrame | OutcomeColumns, *, source: str | None = None) -> OutcomeColumns:
    """Outcome rows as :class:`stopwise.OutcomeColumns` (a frame is checked, and validated unless canonical)."""
    if isinstance(rows, OutcomeColumns):
        return rows
    return OutcomeColumns.from_frame(rows, source=source or "<DataFrame>")


@dataclass(frozen=True)
class OutcomeCells:
    """Outcome rows reduced to one cell per (system, task): the shared core of pairing and replay.

    Attributes
    ----------
    systems : numpy.ndarray of str
        Systems, sorted.
    tasks : numpy.ndarray of str
        Every task with a row of any of the systems (any status), sorted.
    groups : numpy.ndarray of str
        Coverage group of each task ("" when its rows give none).
    planned : numpy.ndarray of bool, shape (S, T)
        The system has a row (any status) on the task: the task belongs to the system's run.
    outcome : numpy.ndarray of float, shape (S, T)
        Mean of the usable attempts (allowed status); NaN when there is none.
    attempts : numpy.ndarray of int, shape (S, T)
        Usable attempts averaged.
    cost, elapsed : numpy.ndarray of float, shape (S, T)
        Summed over the usable attempts; NaN when one of them lacks the value or there is none.
    excluded : tuple of Exclusion
        Rows left out (identical duplicates, statuses the policy does not use), by reason.
    flagged : dict of str to numpy.ndarray, shape (S, T)
        Usable attempts of each cell carrying each counted flag.
    """

    systems: np.ndarray
    tasks: np.ndarray
    groups: np.ndarray
    planned: np.ndarray
    outcome: np.ndarray
    attempts: np.ndarray
    cost: np.ndarray
    elapsed: np.ndarray
    excluded: tuple[Exclusion, ...]
    flagged: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)

    @property
    def usable(self) -> np.ndarray:
        """Cells with at least one usable attempt."""
        return self.attempts > 0


def _exclusion(mask: np.ndarray, task_codes: np.ndarray, reason: str) -> Exclusion | None:
    """The exclusion of the masked rows (None when there is none); ``reason`` from :func:`exclusion_reason`."""
    if not mask.any():
        return None
    return Exclusion(reason=reason, rows=int(mask.sum()), tasks=int(np.count_nonzero(np.bincount(task_codes[mask]))))


def outcome_cells(
    rows: pd.DataFrame | OutcomeColumns,
    *,
    systems: Sequence[str] | None = None,
    statuses: tuple[str, ...] = ("final",),
    group_column: str = "group",
    status_reason: Callable[[str], str] | None = None,
    source: str | None = None,
    exclude_flags: Sequence[str] = (),
    count_flags: Sequence[str] = (),
) -> OutcomeCells:
    """Reduce validated outcome rows to (system, task) cells, vectorised (no per-group Python code).

    Identical duplicates of a (system, task, attempt) are left out first, then rows whose status
    the policy does not use, then rows carrying a flag of ``exclude_flags``; all are counted. Usable attempts are averaged; cost and elapsed
    time are summed (NaN when an attempt lacks them). Groups are checked for conflicts over every
    row of the systems (any status) with :func:`task_groups`.

    Parameters
    ----------
    rows : OutcomeColumns or pandas.DataFrame
        Validated outcome rows (:func:`stopwise.read_outcomes`, :func:`stopwise.outcome_columns`, or a frame).
    systems : sequence of str, optional
        Keep only these systems' rows (default every system).
    statuses : tuple of str, optional
        Statuses a decision may use.
    group_column : str, optional
        Text column holding each task's coverage group.
    status_reason : callable, optional
        The exclusion reason for a left-out status (default the ``status`` text of
        :data:`stopwise.records.EXCLUSION_REASONS`, ``"status X (policy uses ...)"``); a reason
        starting ``status `` keeps the code ``status``.
    source : str, optional
        Where the rows came from, for messages.
    exclude_flags, count_flags : sequence of str, optional
        Flags whose rows are left out (reason ``flag F (policy excludes it)``), and flags whose
        usable rows are counted per cell (:attr:`OutcomeCells.flagged`).

    Returns
    -------
    OutcomeCells

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare import outcome_cells
    >>> rows = stopwise.outcome_columns([
    ...     {"system": "A", "task": "t1", "outcome": 1, "attempt": 0},
    ...     {"system": "A", "task": "t1", "outcome": 0, "attempt": 1},
    ...     {"system": "B", "task": "t2", "outcome": None, "status": "pending"}])
    >>> cells = outcome_cells(rows)
    >>> cells.outcome.tolist(), cells.planned.tolist(), [e.reason for e in cells.excluded]
    ([[0.5, nan], [nan, nan]], [[True, False], [False, True]], ['status pending (policy uses final)'])
    """
    if group_column not in TEXT_COLUMNS:
        where = f"{source}: " if source else ""
        raise ComparisonError(
            f"{where}group column {group_column!r} is not a text outcome column; text columns are {', '.join(TEXT_COLUMNS)}"
        )
    unknown = [s for s in statuses if s not in STATUSES]
    if unknown:
        raise ComparisonError(f"statuses must be among {', '.join(STATUSES)}; got {unknown}")
    sub = as_columns(rows, source=source)
    if systems is not None:
        chosen = _rows_of_systems(sub, systems)
        if not chosen.all():
            sub = sub.take(chosen)
    system_codes, system_labels = sub.codes("system")
    task_codes, task_labels = sub.codes("task")
    n_systems, n_tasks = len(system_labels), len(task_labels)
    cell = system_codes * n_tasks + task_codes
    planned = np.zeros(n_systems * n_tasks, dtype=bool)
    planned[cell] = True

    task_of, label_of = _task_labels(task_codes, task_labels, *sub.codes(group_column), what="group", source=source)
    groups = np.full(n_tasks, "", dtype=object)
    groups[task_of] = label_of

    excluded: list[Exclusion] = []
    attempt = sub.attempt
    span = int(attempt.max()) + 1 if len(attempt) else 1
    if span <= (np.iinfo(np.int64).max // max(n_systems * n_tasks, 1)):
        _, first = np.unique(cell * span + attempt, return_index=True)
    else:  # attempts too large to fold into one integer key
        _, first = np.unique(np.stack([cell, attempt]), axis=1, return_index=True)
    keep = np.zeros(len(cell), dtype=bool)
    keep[first] = True
    found = _exclusion(~keep, task_codes, exclusion_reason("duplicate"))
    if found:
        excluded.append(found)
    describe = status_reason or (lambda s: exclusion_reason("status", status=s, statuses=", ".join(statuses)))
    status_codes, status_labels = sub.codes("status")
    for name in STATUSES:
        if name not in statuses and name in status_labels:
            mask = keep & (status_codes == int(np.flatnonzero(status_labels == name)[0]))
            found = _exclusion(mask, task_codes, describe(name))
            if found:
                excluded.append(found)
            keep &= ~mask
    for flag in sorted(set(exclude_flags)):
        mask = keep & _flag_rows(sub, flag)
        found = _exclusion(mask, task_codes, exclusion_reason("flag", flag=flag))
        if found:
            excluded.append(found)
        keep &= ~mask

    used = cell[keep]
    size = n_systems * n_tasks
    attempts = np.bincount(used, minlength=size)
    outcome_sum = np.bincount(used, sub.outcome[keep], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        outcome = np.where(attempts > 0, outcome_sum / np.maximum(attempts, 1), np.nan)

    def summed(values: np.ndarray) -> np.ndarray:
        values = values[keep]
        missing = np.bincount(used, ~np.isfinite(values), minlength=size)
        total = np.bincount(used, np.where(np.isfinite(values), values, 0.0), minlength=size)
        return np.where((attempts > 0) & (missing == 0), total, np.nan)

    shape = (n_systems, n_tasks)
    flagged = {
        flag: np.bincount(used, _flag_rows(sub, flag)[keep], minlength=size).astype(np.int64).reshape(shape)
        for flag in sorted(set(count_flags))
    }
    return OutcomeCells(
        systems=np.asarray(system_labels, dtype=str),
        tasks=np.asarray(task_labels, dtype=str),
        groups=groups.astype(str),
        planned=planned.reshape(shape),
        outcome=outcome.reshape(shape),
        attempts=attempts.reshape(shape),
        cost=summed(sub.cost_usd).reshape(shape),
        elapsed=summed(sub.elapsed_s).reshape(shape),
        excluded=tuple(excluded),
        flagged=flagged,
    )


def _refuse_blank_outcomes(tasks: np.ndarray, *systems: tuple[str, np.ndarray], statuses: tuple[str, ...] = ()) -> None:
    """A used row without an outcome (a non-final status the policy uses, left blank) is an error naming it."""
    for system, outcomes in systems:
        blank = np.flatnonzero(np.isnan(outcomes))
        if len(blank):
            raise ComparisonError(
                f"system {system!r}, task {str(tasks[blank[0]])!r}: `outcome` is blank on a row whose status the policy uses "
                f"(statuses = {list(statuses)}; {len(blank)} such task(s)); a row a decision uses needs an outcome in [0, 1]: "
                "give the rows their outcomes or leave that status out of the policy's statuses"
            )


def _units_of(rows: OutcomeColumns, systems: tuple[str, str], tasks: np.ndarray) -> np.ndarray:
    """Connected components of tasks linked by shared ``unit`` labels; labelled by their first task."""
    unit_codes, unit_labels = rows.codes("unit")
    linked_mask = unit_codes != int(np.flatnonzero(unit_labels == "")[0]) if "" in unit_labels else np.ones(len(rows), dtype=bool)
    if not linked_mask.any() or len(tasks) == 0:
        return tasks.copy()
    linked_mask &= _rows_of_systems(rows, systems)
    task_names = rows.task[linked_mask].astype(str)
    at = np.minimum(np.searchsorted(tasks, task_names), len(tasks) - 1)
    inside = tasks[at] == task_names
    if not inside.any():
        return tasks.copy()
    pairs = np.unique(np.stack([at[inside], unit_codes[linked_mask][inside]]), axis=1)
    t, units = pairs[0], np.unique(pairs[1], return_inverse=True)[1].reshape(-1)
    n_tasks = len(tasks)
    n_units = int(units.max()) + 1
    from scipy.sparse import coo_matrix  # here: only records with linked units need SciPy's graph code
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(t)), (t, n_tasks + units)), shape=(n_tasks + n_units, n_tasks + n_units))
    _, component = connected_components(graph, directed=False)
    component = component[:n_tasks]
    first = np.full(int(component.max()) + 1, n_tasks, dtype=np.int64)
    np.minimum.at(first, component, np.arange(n_tasks))
    return np.asarray(tasks[first[component]], dtype=str)


def close_names(name: str, known: Sequence[str], *, n: int = 3) -> list[str]:
    """The names of ``known`` closest to a misspelt ``name`` (:func:`difflib.get_close_matches`), best first.

    Examples
    --------
    >>> close_names("gpt-4o-mni", ["claude", "gpt-4o-mini", "gpt-4o"])
    ['gpt-4o-mini', 'gpt-4o']
    """
    import difflib

    return difflib.get_close_matches(name, list(known), n=n, cutoff=0.6)


def _check_systems(rows: OutcomeColumns, tested: str, baseline: str) -> None:
    """Tested and baseline differ and both have rows; a missing one is named with the closest systems first ("did you mean")."""
    if tested == baseline:
        raise ComparisonError(f"tested and baseline must be different systems; both are {tested!r}")
    present = set(rows.codes("system")[1].tolist())
    for role, system in (("tested", tested), ("baseline", baseline)):
        if system not in present:
            close = close_names(system, sorted(present))
            ordered = close + [p for p in sorted(present) if p not in close]
            listing = ", ".join(ordered[:20]) + (" ..." if len(present) > 20 else "")
            hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
            raise ComparisonError(
                f"{role} system {system!r} is absent from the outcome rows; {hint}systems present: {listing}"
            )


@dataclass(frozen=True)
class _TaskSet:
    """The task set T of a pair as :func:`pair_outcomes` forms it, over the cells' tasks."""

    inside: np.ndarray
    """Cells' tasks that belong to T."""
    row_groups: np.ndarray
    """Group of each cells' task (the planned one inside a universe with groups)."""
    positions: np.ndarray
    """Place of each cells' task in the planned order (-1 outside it or when the order is unknown)."""
    tasks: np.ndarray
    """The tasks of T (those with rows for a universe from counts)."""
    groups: np.ndarray
    """The group of each task of T (of each of the N slots for a universe from counts)."""
    labels: np.ndarray
    """The groups of T, sorted, planned groups without rows included."""
    sizes: np.ndarray
    """n_g of each group."""
    size: int
    """N."""
    outside: ExclusionCode | None = None
    """The exclusion code of the cells' tasks outside T (None: none are left out)."""
    notes: tuple[str, ...] = ()
    """Warnings about the universe (one group judged where the rows give several)."""


def _inferred_task_set(cells: OutcomeCells, a: int, b: int) -> _TaskSet:
    """No universe: T is every task with rows of both systems (any status)."""
    inside = cells.planned[a] & cells.planned[b]
    labels, sizes = np.unique(cells.groups[inside], return_counts=True)
    return _TaskSet(
        inside=inside,
        row_groups=cells.groups,
        positions=np.full(len(cells.tasks), -1, dtype=np.int64),
        tasks=cells.tasks[inside],
        groups=cells.groups[inside],
        labels=labels,
        sizes=sizes,
        size=int(inside.sum()),
        outside="not-shared",
    )


def _planned_task_set(cells: OutcomeCells, universe: TaskUniverse) -> _TaskSet:
    """A universe with task names: T is its planned tasks; a row's group must agree with the planned one."""
    positions = universe.positions(cells.tasks)
    inside = positions >= 0
    planned_groups = universe.groups
    assert planned_groups is not None and universe.tasks is not None
    row_groups = cells.groups
    notes: tuple[str, ...] = ()
    if universe.has_groups:
        here = planned_groups[np.where(inside, positions, 0)]
        clash = inside & (row_groups != "") & (row_groups != here)
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            raise ComparisonError(
                f"task {str(cells.tasks[i])!r} has group {str(row_groups[i])!r} in the rows but {str(here[i])!r} in the planned "
                f"task universe ({int(clash.sum())} task(s) disagree); fix the rows or the tasks file"
            )
        row_groups = np.where(inside, here, row_groups)
    else:
        if (row_groups[inside] != "").any():
            notes = ("the task universe gives no groups; coverage is judged over one group (give a group column in the tasks file)",)
        row_groups = np.where(inside, "", row_groups)
    return _TaskSet(
        inside=inside,
        row_groups=row_groups,
        positions=positions,
        tasks=universe.tasks,
        groups=planned_groups if universe.has_groups else np.full(universe.n_tasks, "", dtype=str),
        labels=np.array(list(universe.group_sizes), dtype=str),
        sizes=np.array(list(universe.group_sizes.values()), dtype=np.int64),
        size=universe.n_tasks,
        outside="outside-universe",
        notes=notes,
    )


def _counted_task_set(cells: OutcomeCells, a: int, b: int, universe: TaskUniverse) -> _TaskSet:
    """A universe from counts: task names unknown, so every task with rows is planned; the rows must fit the counts."""
    inside = cells.planned[a] | cells.planned[b]
    planned_sizes = universe.group_sizes
    row_groups = cells.groups
    notes: tuple[str, ...] = ()
    if inside.sum() > universe.n_tasks:
        raise ComparisonError(
            f"the rows name {int(inside.sum())} tasks but the task universe plans {universe.n_tasks}; "
            "give the right --n-tasks or the planned tasks file"
        )
    if universe.has_groups:
        _check_counted_groups(cells.tasks[inside], row_groups[inside], planned_sizes)
    else:
        if (row_groups[inside] != "").any():
            notes = ("the task universe gives no group sizes; coverage is judged over one group (pass --group-size)",)
        row_groups = np.where(inside, "", row_groups)
    labels = np.array(list(planned_sizes), dtype=str)
    sizes = np.array(list(planned_sizes.values()), dtype=np.int64)
    return _TaskSet(
        inside=inside,
        row_groups=row_groups,
        positions=np.full(len(cells.tasks), -1, dtype=np.int64),
        tasks=cells.tasks[inside],
        groups=np.repeat(labels, sizes),
        labels=labels,
        sizes=sizes,
        size=universe.n_tasks,
        notes=notes,
    )


def _check_counted_groups(tasks: np.ndarray, groups: np.ndarray, planned_sizes: Mapping[str, int]) -> None:
    """Every task with rows names a planned group, and no group has more tasks than planned."""
    blank = groups == ""
    if blank.any():
        raise ComparisonError(
            f"task {str(tasks[np.flatnonzero(blank)[0]])!r} has no group in the rows, but the task universe plans "
            f"groups ({', '.join(map(repr, list(planned_sizes)[:10]))}); give the group column"
        )
    seen_labels, seen_counts = np.unique(groups, return_counts=True)
    for label, count in zip(seen_labels, seen_counts, strict=True):
        if str(label) not in planned_sizes:
            close = close_names(str(label), sorted(planned_sizes))
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise ComparisonError(
                f"group {str(label)!r} of the rows is not a planned group ({', '.join(map(repr, list(planned_sizes)[:10]))}){hint}"
            )
        if count > planned_sizes[str(label)]:
            raise ComparisonError(
                f"the rows name {int(count)} tasks of group {str(label)!r} but the task universe plans {planned_sizes[str(label)]}"
            )


def pair_outcomes(
    rows: pd.DataFrame | OutcomeColumns,
    tested: str,
    baseline: str,
    *,
    statuses: tuple[str, ...] = ("final",),
    group_column: str = "group",
    universe: TaskUniverse | None = None,
    exclude_flags: Sequence[str] = (),
    count_flags: Sequence[str] = (),
) -> PairedOutcomes:
    """Pair two systems' outcomes on their usable task overlap, within the task universe.

    Attempts of one (system, task) are averaged before pairing (:func:`outcome_cells`). With a
    ``universe``, the task set T is the planned tasks (N = ``universe.n_tasks``, groups and their
    sizes from the plan, groups with no rows included); rows on tasks outside it are excluded and
    counted (reason ``task outside the planned task universe``), and a row's group must agree
    with the planned one. Without a universe, T is inferred: every task with rows of both systems
    (any status) -- :func:`stopwise.decide` does not take a final action on an inferred universe
    unless told the record is complete. The observed set holds the tasks of T with usable
    (allowed-status) outcomes for both systems. Rows left out are counted by reason.

    Parameters
    ----------
    rows : OutcomeColumns or pandas.DataFrame
        Validated outcome rows (see :func:`stopwise.read_outcomes`, :func:`stopwise.outcome_columns`).
    tested, baseline : str
        The tested system A and the baseline B.
    statuses : tuple of str, optional
        Statuses a decision may use (default only ``final``).
    group_column : str, optional
        Column holding each task's coverage group.
    universe : TaskUniverse, optional
        The planned tasks (see :class:`stopwise.TaskUniverse`).
    exclude_flags, count_flags : sequence of str, optional
        Flags whose rows are excluded, and flags counted on the observed tasks (``[flags]`` of
        the policy; see :func:`outcome_cells`).

    Returns
    -------
    PairedOutcomes

    Raises
    ------
    ComparisonError
        A system is absent, A equals B, a task has conflicting groups, the column is missing, or
        the rows do not fit the universe (more tasks or other groups than planned).

    Examples
    --------
    >>> import stopwise
    >>> rows = stopwise.outcome_columns([
    ...     {"system": "A", "task": "t1", "outcome": 1}, {"system": "B", "task": "t1", "outcome": 0},
    ...     {"system": "A", "task": "t2", "outcome": 1}, {"system": "B", "task": "t2", "outcome": 1},
    ...     {"system": "A", "task": "t3", "outcome": 0}])
    >>> p = stopwise.pair_outcomes(rows, "A", "B")
    >>> p.differences.tolist(), p.n_shared, [(e.reason, e.rows) for e in p.excluded]
    ([1.0, 0.0], 2, [('task not shared by both systems', 1)])
    >>> p = stopwise.pair_outcomes(rows, "A", "B", universe=stopwise.TaskUniverse(["t3", "t1", "t2", "t4"]))
    >>> p.n_shared, p.positions.tolist(), [(e.reason, e.rows) for e in p.excluded]
    (4, [1, 2], [('partner system has no usable outcome on the task yet', 1)])
    """
    rows = as_columns(rows)
    _check_systems(rows, tested, baseline)
    cells = outcome_cells(
        rows,
        systems=(tested, baseline),
        statuses=statuses,
        group_column=group_column,
        exclude_flags=exclude_flags,
        count_flags=count_flags,
    )
    a, b = int(np.searchsorted(cells.systems, tested)), int(np.searchsorted(cells.systems, baseline))
    attempts_a, attempts_b = cells.attempts[a], cells.attempts[b]
    any_rows = attempts_a + attempts_b
    excluded = list(cells.excluded)

    def exclude(mask: np.ndarray, code: ExclusionCode) -> None:
        counted = mask & (any_rows > 0)
        if counted.any():
            excluded.append(Exclusion.from_code(code, rows=int(any_rows[counted].sum()), tasks=int(counted.sum())))

    if universe is None:
        task_set = _inferred_task_set(cells, a, b)
    elif universe.ordered:
        task_set = _planned_task_set(cells, universe)
    else:
        task_set = _counted_task_set(cells, a, b, universe)
    inside, row_groups, positions = task_set.inside, task_set.row_groups, task_set.positions
    if task_set.outside is not None:
        exclude(~inside, task_set.outside)
    observed_mask = inside & (attempts_a > 0) & (attempts_b > 0)
    exclude(inside & ~observed_mask, "no-partner")
    observed = cells.tasks[observed_mask]
    y_tested = cells.outcome[a, observed_mask]
    y_baseline = cells.outcome[b, observed_mask]
    _refuse_blank_outcomes(observed, (tested, y_tested), (baseline, y_baseline), statuses=statuses)
    differences = y_tested - y_baseline
    return PairedOutcomes(
        tested=tested,
        baseline=baseline,
        tasks=observed,
        groups=row_groups[observed_mask].astype(str),
        units=_units_of(rows, (tested, baseline), observed),
        tested_outcomes=y_tested,
        baseline_outcomes=y_baseline,
        differences=differences,
        tested_attempts=attempts_a[observed_mask].astype(np.int64),
        baseline_attempts=attempts_b[observed_mask].astype(np.int64),
        tested_cost=cells.cost[a, observed_mask],
        baseline_cost=cells.cost[b, observed_mask],
        tested_elapsed=cells.elapsed[a, observed_mask],
        baseline_elapsed=cells.elapsed[b, observed_mask],
        universe_tasks=np.asarray(task_set.tasks, dtype=str),
        universe_groups=np.asarray(task_set.groups, dtype=str),
        lattice=lattice_of(differences) if len(differences) else 1,
        excluded=tuple(excluded),
        universe_size=int(task_set.size),
        universe_labels=task_set.labels,
        universe_sizes=np.asarray(task_set.sizes, dtype=np.int64),
        positions=positions[observed_mask],
        universe=universe,
        notes=task_set.notes,
        flagged=tuple(
            FlagCount(flag=flag, rows=int(on[[a, b]][:, observed_mask].sum()), tasks=int(on[[a, b]][:, observed_mask].any(axis=0).sum()))
            for flag, on in cells.flagged.items()
            if on[[a, b]][:, observed_mask].any()
        ),
    )
