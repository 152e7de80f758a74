"""A completed benchmark record arranged for replay: systems x tasks matrices and the directed pairs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from stopwise.compare import lattice_of, outcome_cells
from stopwise.errors import ComparisonError
from stopwise.records import Exclusion, OutcomeColumns
from stopwise.replay._checks import check_replay_args

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
    excluded_pairs : dict
        Directed pairs (tested, baseline) left out, with the reason: tasks of both systems'
        runs without usable outcomes (the record is not complete for the pair, so its task
        universe cannot be replayed), or too few shared tasks.
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
    excluded_pairs: dict[tuple[str, str], str] = field(default_factory=dict)

    def pair_label(self, pair: ReplayPair) -> tuple[str, str]:
        """(tested, baseline) system names of a pair."""
        return str(self.systems[pair.tested]), str(self.systems[pair.baseline])


def prepare_source(
    rows: pd.DataFrame | OutcomeColumns,
    name: str,
    *,
    statuses: tuple[str, ...] = ("final",),
    group_column: str = "group",
    min_coverage: float = 0.95,
    min_shared: int = 1,
) -> ReplaySource:
    """Arrange a completed record for replay.

    The (system, task) cells come from the pairing core that :func:`stopwise.decide` uses
    (:func:`stopwise.compare.outcome_cells`): attempts averaged, cost and elapsed time summed, one
    group-conflict check, and each directed pair's task set T formed the same way (tasks with rows
    of both systems, any status). A pair whose T holds tasks without usable outcomes (pending
    rows) is left out and listed in ``excluded_pairs``: the replay hides and reveals outcomes of a
    complete record and cannot invent the missing ones, nor shrink N to the tasks that have them.
    Systems with usable outcomes on fewer than ``min_coverage`` of the record's tasks are left
    out (the paper keeps near-complete leaderboard entries, >= 95 % of the split), as are
    directed pairs sharing fewer than ``min_shared`` tasks.

    Parameters
    ----------
    rows : pandas.DataFrame or OutcomeColumns
        Validated outcome rows (:func:`stopwise.read_outcomes`).
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
    check_replay_args("prepare_source", min_coverage=min_coverage, min_shared=min_shared)
    cells = outcome_cells(rows, statuses=statuses, group_column=group_column, status_reason=lambda s: f"status {s}", source=name)
    excluded_rows = list(cells.excluded)
    if not cells.usable.any():
        raise ComparisonError(f"{name}: no outcome rows with status {', '.join(statuses)}")
    tasks, groups = cells.tasks, cells.groups
    with_rows = cells.usable.any(axis=1)  # systems with at least one usable outcome
    all_systems = cells.systems[with_rows]
    coverage = cells.usable[with_rows].mean(axis=1)
    keep = coverage >= min_coverage - 1e-12
    excluded_systems = {
        str(s): f"usable outcomes on {c:.1%} of {len(tasks)} tasks (< {min_coverage:.0%})"
        for s, c, k in zip(all_systems, coverage, keep, strict=True)
        if not k
    }
    kept = np.flatnonzero(with_rows)[keep]
    systems = cells.systems[kept]
    outcomes = cells.outcome[kept]
    cost = cells.cost[kept]
    elapsed = cells.elapsed[kept]
    planned = cells.planned[kept]

    present = np.isfinite(outcomes)
    pairs: list[ReplayPair] = []
    excluded_pairs: dict[tuple[str, str], str] = {}
    lattice_cache: dict[bytes, int] = {}
    for a in range(len(systems)):
        for b in range(len(systems)):
            if a == b:
                continue
            # the pair's task set T, as decide() forms it: tasks with rows of both systems, any status
            universe = np.flatnonzero(planned[a] & planned[b])
            shared = np.flatnonzero(present[a] & present[b])
            if len(shared) < len(universe):
                excluded_pairs[(str(systems[a]), str(systems[b]))] = (
                    f"{len(universe) - len(shared)} of the pair's {len(universe)} shared tasks have no usable outcome "
                    "for both systems; a completed-record replay needs every task of the universe"
                )
                continue
            if len(shared) < min_shared:
                if len(shared):
                    excluded_pairs[(str(systems[a]), str(systems[b]))] = f"{len(shared)} shared tasks (< {min_shared})"
                continue
            differences = outcomes[a, shared] - outcomes[b, shared]
            key = np.unique(np.round(differences, 12)).tobytes()
            if key not in lattice_cache:
                lattice_cache[key] = lattice_of(differences)
            pairs.append(ReplayPair(a, b, shared, differences, lattice_cache[key]))
    usable = rows.to_frame() if isinstance(rows, OutcomeColumns) else rows
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
        excluded_pairs=excluded_pairs,
    )
