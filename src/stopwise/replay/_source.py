"""A completed benchmark record arranged for replay: systems x tasks matrices and the directed pairs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from stopwise.compare import lattice_of
from stopwise.errors import ComparisonError
from stopwise.records import STATUSES, Exclusion

__all__ = ["ReplayPair", "ReplaySource", "prepare_source"]


@dataclass(frozen=True)
class ReplayPair:
    """One directed comparison of a replay: tested A against baseline B on their shared overlap.

    Attributes
    ----------
    tested, baseline : int
        Row indices of A and B in the source's system arrays.
    tasks : numpy.ndarray of int
        Column indices of the shared tasks (the pair's task set T, size N).
    differences : numpy.ndarray of float
        D_i = Y_A - Y_B on the shared tasks, in ``tasks`` order.
    lattice : int
        L with every ``D_i * L`` an integer; 0 when there is none up to the exact limit.
    """

    tested: int
    baseline: int
    tasks: np.ndarray
    differences: np.ndarray
    lattice: int

    @property
    def n_shared(self) -> int:
        """N, the size of the shared task set."""
        return len(self.tasks)


@dataclass(frozen=True)
class ReplaySource:
    """A completed record ready for replay.

    Attributes
    ----------
    name : str
        Source name used in tables (e.g. ``swebench_verified``).
    systems : numpy.ndarray of str
        Systems kept by the coverage filter, sorted.
    tasks : numpy.ndarray of str
        All tasks of the record, sorted.
    groups : numpy.ndarray of str
        Coverage group of each task.
    outcomes, cost, elapsed : numpy.ndarray, shape (S, T)
        Per (system, task): attempts averaged (outcome) or summed (cost, elapsed); NaN when absent.
    pairs : list of ReplayPair
        Every directed pair of kept systems sharing at least ``min_shared`` tasks.
    excluded_systems : dict
        Systems left out, with the reason.
    excluded_rows : list of Exclusion
        Outcome rows left out (statuses the policy does not use), by reason.
    notes : list of str
        What the replay does differently from a decision on the same rows (e.g. units ignored).
    """

    name: str
    systems: np.ndarray
    tasks: np.ndarray
    groups: np.ndarray
    outcomes: np.ndarray
    cost: np.ndarray
    elapsed: np.ndarray
    pairs: list[ReplayPair]
    excluded_systems: dict[str, str] = field(default_factory=dict)
    excluded_rows: list[Exclusion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def pair_label(self, pair: ReplayPair) -> tuple[str, str]:
        """(tested, baseline) system names of a pair."""
        return str(self.systems[pair.tested]), str(self.systems[pair.baseline])


def prepare_source(
    rows: pd.DataFrame,
    name: str,
    *,
    statuses: tuple[str, ...] = ("final",),
    group_column: str = "group",
    min_coverage: float = 0.95,
    min_shared: int = 1,
) -> ReplaySource:
    """Arrange a completed record for replay.

    Attempts of a (system, task) are averaged before pairing; cost and elapsed time are summed.
    Systems with usable outcomes on fewer than ``min_coverage`` of the record's tasks are left
    out (the paper keeps near-complete leaderboard entries, >= 95 % of the split), as are
    directed pairs sharing fewer than ``min_shared`` tasks.

    Parameters
    ----------
    rows : pandas.DataFrame
        Validated outcome rows.
    name : str
        Source name for tables.
    statuses : tuple of str, optional
        Statuses a decision may use; other rows are excluded and counted.
    group_column : str, optional
        Column holding each task's coverage group.
    min_coverage : float, optional
        Smallest share of the record's tasks a kept system must cover, in [0, 1].
    min_shared : int, optional
        Smallest shared task count of a kept directed pair.

    Returns
    -------
    ReplaySource

    Examples
    --------
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.replay import prepare_source
    >>> source = prepare_source(synthetic_benchmark(60, 3, rng=0), "synthetic")
    >>> len(source.pairs), source.pairs[0].n_shared, source.pairs[0].lattice
    (6, 60, 1)
    """
    if not 0.0 <= min_coverage <= 1.0:
        raise ValueError(f"`min_coverage` must be in [0, 1]; got {min_coverage!r}")
    if int(min_shared) != min_shared or min_shared < 1:
        raise ValueError(f"`min_shared` must be a positive integer; got {min_shared!r}")
    if group_column not in rows.columns:
        raise ComparisonError(f"group column {group_column!r} is not an outcome column")
    excluded_rows: list[Exclusion] = []
    usable = rows
    for status in STATUSES:
        if status not in statuses:
            mask = usable["status"] == status
            if mask.any():
                excluded_rows.append(
                    Exclusion(reason=f"status {status}", rows=int(mask.sum()), tasks=int(usable.loc[mask, "task"].nunique()))
                )
                usable = usable.loc[~mask]
    duplicate = usable.duplicated(["system", "task", "attempt"], keep="first")
    if duplicate.any():
        excluded_rows.append(
            Exclusion(
                reason="identical duplicate of another row",
                rows=int(duplicate.sum()),
                tasks=int(usable.loc[duplicate, "task"].nunique()),
            )
        )
        usable = usable.loc[~duplicate]
    if usable.empty:
        raise ComparisonError(f"{name}: no outcome rows with status {', '.join(statuses)}")

    tasks = np.array(sorted(rows["task"].unique()), dtype=str)
    labels = rows.loc[rows[group_column] != "", ["task", group_column]].drop_duplicates()
    conflict = labels[labels.duplicated("task", keep=False)]
    if len(conflict):
        task = conflict["task"].iloc[0]
        raise ComparisonError(f"{name}: task {task!r} has rows with different groups; a task must belong to one group")
    groups = labels.set_index("task")[group_column].reindex(tasks).fillna("").to_numpy(dtype=str)

    cell = usable.groupby(["system", "task"], sort=True).agg(
        outcome=("outcome", "mean"),
        cost=("cost_usd", lambda s: s.sum(min_count=len(s))),
        elapsed=("elapsed_s", lambda s: s.sum(min_count=len(s))),
    )
    all_systems = np.array(sorted(usable["system"].unique()), dtype=str)

    def matrix(column: str) -> np.ndarray:
        wide = cell[column].unstack("task").reindex(index=all_systems, columns=tasks)
        return wide.to_numpy(dtype=float)

    outcomes = matrix("outcome")
    coverage = np.isfinite(outcomes).mean(axis=1)
    keep = coverage >= min_coverage - 1e-12
    excluded_systems = {
        str(s): f"usable outcomes on {c:.1%} of {len(tasks)} tasks (< {min_coverage:.0%})"
        for s, c, k in zip(all_systems, coverage, keep, strict=True)
        if not k
    }
    systems = all_systems[keep]
    outcomes = outcomes[keep]
    cost = matrix("cost")[keep]
    elapsed = matrix("elapsed")[keep]

    present = np.isfinite(outcomes)
    pairs: list[ReplayPair] = []
    lattice_cache: dict[bytes, int] = {}
    for a in range(len(systems)):
        for b in range(len(systems)):
            if a == b:
                continue
            shared = np.flatnonzero(present[a] & present[b])
            if len(shared) < min_shared:
                continue
            differences = outcomes[a, shared] - outcomes[b, shared]
            key = np.unique(np.round(differences, 12)).tobytes()
            if key not in lattice_cache:
                lattice_cache[key] = lattice_of(differences)
            pairs.append(ReplayPair(a, b, shared, differences, lattice_cache[key]))
    notes = []
    grouped = usable.loc[usable["unit"] != "", ["task", "unit"]].drop_duplicates()
    if grouped["unit"].duplicated().any():
        notes.append(
            f"{int(grouped['unit'].duplicated(keep=False).sum())} tasks share analysis units with other tasks; the replay "
            "resamples tasks one by one, while decide() resamples whole units"
        )
    return ReplaySource(
        name=name,
        systems=systems,
        tasks=tasks,
        groups=groups,
        outcomes=outcomes,
        cost=cost,
        elapsed=elapsed,
        pairs=pairs,
        excluded_systems=excluded_systems,
        excluded_rows=excluded_rows,
        notes=notes,
    )
