r"""Missing outcomes under the betting boundary: wait for a retry, count them at their worst case, or exclude them.

A system's planned task is *missing* when it has a row flagged ``error`` or ``unscored`` (an errored or unscored
run, as ``stopwise ingest`` and the Inspect manager write them: :data:`stopwise._vocabulary.MISSING_FLAGS`)
and no usable outcome. The ``betting-wor`` boundary reads the longest observed prefix of the planned order, so one
persistent error at planned position 3 stops it at 2 for the rest of the run. The policy's ``[decision] missing``
says what the boundary does with a missing task once both systems have reported on it (an outcome or a missing
run); a task one system has not run yet is not missing, it is still to come:

* ``wait`` -- the prefix stops there until a retry brings the outcome (the behaviour before the setting);
* ``worst-case`` (the default) -- the task enters the judged sequence at its worst case for each test: the promote
  test reads the lowest difference the pair can take given the observed side, the reject test the highest;
* ``exclude`` -- the task leaves the planned universe (N shrinks, the order of the others is kept), the exclusion
  counted in the record.

Worst-case values. Outcomes lie in [0, 1]. With Y_A missing and Y_B = y observed, D = Y_A - y lies in
``[-y, 1 - y]``; with Y_B missing and Y_A = y observed, D lies in ``[y - 1, y]``; with both missing, in [-1, 1].
The low end l_i is the promote test's value, the high end u_i the reject test's.

Why worst-case keeps the boundary valid (whatever caused the errors)
--------------------------------------------------------------------
Let d_1, ..., d_N be the differences the N planned tasks would show if every run succeeded, mu their mean, and
pi the planned order: a uniformly random permutation drawn independently of what makes runs fail (the set M of
missing tasks and the outcomes observed on them may depend on the tasks in any way, adversarially correlated
with d; they may not depend on pi). Fill the population: ``d-_i = d_i`` for i not in M and ``d-_i = l_i`` for i in
M. The missing outcome lies in [0, 1], so ``l_i <= d_i`` for every i, and the filled mean ``mu- <= mu``. Under
the promote test's null H0+: mu <= delta, then ``mu- <= delta``: the filled population satisfies H0+ too.
Conditionally on (M, the observed outcomes), d- is a fixed population and the sequence the promote test reads,
``d-_pi(1), d-_pi(2), ...``, is a uniform without-replacement draw from it: exactly the setting of the betting
boundary (:mod:`stopwise.compare._betting`), so its capital is a nonnegative supermartingale under H0+ and by
Ville's inequality ``P(exists t: K_t >= 1/a | M, observed) <= a``; averaging over (M, observed) keeps the bound.
The reject test is the mirror image with ``u_i >= d_i`` and H0-: mu >= delta. The same holds for the stratified
process (within every group ``d- <= d``, so the group means of d- satisfy the composite null whenever those of d
do) and the top-up design (its action rests on the pooled crossing). Looks may be taken at any data-dependent
time, as before. So a promotion under ``worst-case`` is a promotion on a population no better than the truth, and
a missing difference bounded in [-1, 1] never makes the boundary anti-conservative; the price is power (each
missing task counts as a loss for promote and a win for reject), so a few percent of errors delay the decision a
little and many errors may prevent it.

Two conditions are part of the guarantee. The planned order must not influence which runs fail (true of
persistent errors, of errors caused by the task or the system, and of random errors independent of the order;
not of, e.g., a provider outage hitting whichever tasks ran at that moment while the order was chosen knowing
it). And a value a look has read must not change: in a stopwise ledger an errored run's row cannot be replaced
(a later row with the same system, task and attempt is a conflict, refused), so a missing task stays missing;
a retry recorded under a new attempt that brings the outcome changes a value earlier looks read at its worst
case, and the anytime guarantee then holds per version only -- use ``wait`` when failed runs will be retried.

Why ``exclude`` needs errors independent of the outcomes. Given M, pi restricted to the other tasks is a uniform
permutation of them, so the boundary is valid for the mean over T \ M; that is the mean over T only when the
errors are independent of the outcomes (missing completely at random). Errors that hit hard tasks of one system
bias it, which is why it is not the default.

:func:`find_missing` finds the missing tasks, :func:`fill_missing` writes the worst-case sequences,
:func:`exclude_missing` removes them from the universe, and :func:`combine_looks` takes each test's action from
its own sequence; :func:`stopwise.decide` calls them between the budget cut and the boundary (:mod:`stopwise.compare._missing_look`).
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from stopwise._vocabulary import MISSING_FLAGS, MissingTreatment
from stopwise.compare._boundaries import Look
from stopwise.compare._pairing import PairedOutcomes, lattice_of, outcome_cells
from stopwise.records import DecisionWarning, MissingState, OutcomeColumns, Policy, TaskUniverse, flag_mask

__all__ = ["MissingTasks", "combine_looks", "exclude_missing", "fill_missing", "find_missing", "missing_warning"]

_SHOWN = 20
"""Missing tasks a warning names before ``...``."""

@dataclasses.dataclass(frozen=True)
class MissingTasks:
    """The planned tasks with a missing outcome for one or both systems, in planned order."""

    treatment: MissingTreatment
    """The policy's ``[decision] missing``."""
    tasks: np.ndarray
    """Task ids."""
    positions: np.ndarray
    """Their 0-based planned positions."""
    groups: np.ndarray
    """Their planned groups ("" without groups)."""
    tested: np.ndarray
    """The tested system's outcome is missing (bool)."""
    baseline: np.ndarray
    """The baseline's outcome is missing (bool)."""
    ready: np.ndarray
    """Both systems have reported (an outcome or a missing run): the boundary may fill or skip the task (bool)."""
    tested_outcomes: np.ndarray
    """Y_A where observed (NaN where missing or not run yet)."""
    baseline_outcomes: np.ndarray
    """Y_B where observed (NaN where missing or not run yet)."""

    @property
    def low(self) -> np.ndarray:
        """The lowest difference each pair can take given its observed side (the promote test's value)."""
        return np.where(self.tested, 0.0, self.tested_outcomes) - np.where(self.baseline, 1.0, self.baseline_outcomes)

    @property
    def high(self) -> np.ndarray:
        """The highest difference each pair can take given its observed side (the reject test's value)."""
        return np.where(self.tested, 1.0, self.tested_outcomes) - np.where(self.baseline, 0.0, self.baseline_outcomes)

    def state(self, judged: int = 0) -> MissingState:
        """The record's :class:`stopwise.records.MissingState`; ``judged`` of them read by the boundary."""
        return MissingState(
            treatment=self.treatment,
            tasks=[str(t) for t in self.tasks],
            tested=int(self.tested.sum()),
            baseline=int(self.baseline.sum()),
            judged=int(judged),
        )


def find_missing(rows: OutcomeColumns, paired: PairedOutcomes, policy: Policy, universe: TaskUniverse) -> MissingTasks | None:
    """The planned tasks whose outcome is missing for a system; None when there is none.

    A system's task is missing when one of its rows carries a flag of
    :data:`stopwise._vocabulary.MISSING_FLAGS` and it has no usable outcome (no row of a status the policy
    uses, outside the flags it excludes). Rows without those flags cost one pass over the distinct flag values.

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare import pair_outcomes
    >>> universe = stopwise.TaskUniverse(["t1", "t2", "t3"])
    >>> rows = stopwise.outcome_columns(
    ...     [{"system": s, "task": t, "outcome": 1} for s in "AB" for t in ("t1", "t3")]
    ...     + [{"system": "A", "task": "t2", "outcome": None, "status": "pending", "flags": "error"},
    ...        {"system": "B", "task": "t2", "outcome": 1}])
    >>> found = find_missing(rows, pair_outcomes(rows, "A", "B", universe=universe), stopwise.Policy(), universe)
    >>> found.tasks.tolist(), found.tested.tolist(), found.low.tolist(), found.high.tolist()
    (['t2'], [True], [-1.0], [0.0])
    """
    flag_codes, flag_labels = rows.codes("flags")
    marked_labels = np.zeros(len(flag_labels), dtype=bool)
    for flag in MISSING_FLAGS:
        marked_labels |= flag_mask(flag_labels, flag)
    if not marked_labels.any():
        return None
    marked = marked_labels[flag_codes]
    tested, baseline = paired.tested, paired.baseline
    systems = rows.system.astype(str)
    cells = outcome_cells(
        rows,
        systems=(tested, baseline),
        statuses=policy.statuses,
        group_column=policy.coverage.group_column,
        exclude_flags=policy.flags.exclude,
    )
    a, b = int(np.searchsorted(cells.systems, tested)), int(np.searchsorted(cells.systems, baseline))
    task_names = rows.task.astype(str)
    usable = cells.usable
    missing_a = np.isin(cells.tasks, task_names[marked & (systems == tested)]) & ~usable[a]
    missing_b = np.isin(cells.tasks, task_names[marked & (systems == baseline)]) & ~usable[b]
    positions = universe.positions(cells.tasks)
    chosen = np.flatnonzero((missing_a | missing_b) & (positions >= 0))
    if len(chosen) == 0:
        return None
    chosen = chosen[np.argsort(positions[chosen], kind="stable")]
    planned_groups = universe.groups if universe.has_groups else None
    ready = (missing_a | usable[a]) & (missing_b | usable[b])
    return MissingTasks(
        treatment=policy.decision.missing,
        tasks=cells.tasks[chosen],
        positions=positions[chosen].astype(np.int64),
        groups=np.full(len(chosen), "", dtype=object).astype(str) if planned_groups is None else planned_groups[positions[chosen]].astype(str),
        tested=missing_a[chosen],
        baseline=missing_b[chosen],
        ready=ready[chosen],
        tested_outcomes=np.where(usable[a, chosen], cells.outcome[a, chosen], np.nan),
        baseline_outcomes=np.where(usable[b, chosen], cells.outcome[b, chosen], np.nan),
    )


def fill_missing(paired: PairedOutcomes, missing: MissingTasks, side: Literal["low", "high"]) -> PairedOutcomes:
    """The paired outcomes with every ready missing task added at its worst case for one test.

    ``side = "low"`` (the promote test) adds each at the lowest difference its pair can take, ``"high"`` (the
    reject test) at the highest. The added tasks have no attempts and cost and time 0 on both sides (a budget in tasks
    counts them as run; a cost or time budget counts nothing for them, the observed side's run included).

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare import pair_outcomes
    >>> universe = stopwise.TaskUniverse(["t1", "t2"])
    >>> rows = stopwise.outcome_columns([{"system": "A", "task": "t1", "outcome": 1}, {"system": "B", "task": "t1", "outcome": 0},
    ...     {"system": "A", "task": "t2", "outcome": 1}, {"system": "B", "task": "t2", "status": "pending", "flags": "unscored"}])
    >>> paired = pair_outcomes(rows, "A", "B", universe=universe)
    >>> found = find_missing(rows, paired, stopwise.Policy(), universe)
    >>> fill_missing(paired, found, "low").differences.tolist(), fill_missing(paired, found, "high").differences.tolist()
    ([1.0, 0.0], [1.0, 1.0])
    """
    keep = missing.ready
    if not keep.any():
        return paired
    low = side == "low"
    y_a = np.where(missing.tested, 0.0 if low else 1.0, missing.tested_outcomes)[keep]
    y_b = np.where(missing.baseline, 1.0 if low else 0.0, missing.baseline_outcomes)[keep]
    differences = np.r_[paired.differences, y_a - y_b]
    zeros, none = np.zeros(len(y_a)), np.zeros(len(y_a), dtype=np.int64)
    return dataclasses.replace(
        paired,
        tasks=np.r_[paired.tasks, missing.tasks[keep].astype(paired.tasks.dtype if paired.tasks.size else str)],
        groups=np.r_[paired.groups, missing.groups[keep]].astype(str),
        units=np.r_[paired.units, missing.tasks[keep]].astype(str),
        tested_outcomes=np.r_[paired.tested_outcomes, y_a],
        baseline_outcomes=np.r_[paired.baseline_outcomes, y_b],
        differences=differences,
        tested_attempts=np.r_[paired.tested_attempts, none],
        baseline_attempts=np.r_[paired.baseline_attempts, none],
        tested_cost=np.r_[paired.tested_cost, zeros],
        baseline_cost=np.r_[paired.baseline_cost, zeros],
        tested_elapsed=np.r_[paired.tested_elapsed, zeros],
        baseline_elapsed=np.r_[paired.baseline_elapsed, zeros],
        lattice=lattice_of(differences),
        positions=np.r_[paired.positions, missing.positions[keep]].astype(np.int64),
    )


def exclude_missing(paired: PairedOutcomes, universe: TaskUniverse, missing: MissingTasks) -> tuple[PairedOutcomes, TaskUniverse]:
    """The paired outcomes and the planned universe without the ready missing tasks (the others keep their order).

    Positions are re-ranked in the smaller universe, N and the group sizes shrink (a group left empty is dropped),
    and the universe keeps the order's stamp (the order of the remaining tasks is the same draw restricted to them).
    The caller judges the order's provenance on the full universe.

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare import pair_outcomes
    >>> universe = stopwise.TaskUniverse(["t1", "t2", "t3"])
    >>> rows = stopwise.outcome_columns([{"system": s, "task": t, "outcome": 1} for s in "AB" for t in ("t1", "t3")]
    ...     + [{"system": s, "task": "t2", "status": "pending", "flags": "error"} for s in "AB"])
    >>> paired = pair_outcomes(rows, "A", "B", universe=universe)
    >>> smaller, reduced = exclude_missing(paired, universe, find_missing(rows, paired, stopwise.Policy(), universe))
    >>> smaller.n_shared, smaller.positions.tolist(), reduced.tasks.tolist()
    (2, [0, 1], ['t1', 't3'])
    """
    assert universe.tasks is not None and universe.groups is not None
    gone = np.sort(missing.positions[missing.ready])
    if len(gone) == 0:
        return paired, universe
    stays = np.ones(universe.n_tasks, dtype=bool)
    stays[gone] = False
    tasks, groups = universe.tasks[stays], universe.groups[stays]
    reduced = TaskUniverse(tasks.tolist(), groups.tolist() if universe.has_groups else None, source=f"planned universe without {len(gone)} missing task(s)")
    labels = np.array(list(reduced.group_sizes), dtype=str)
    sizes = np.array(list(reduced.group_sizes.values()), dtype=np.int64)
    return (
        dataclasses.replace(
            paired,
            positions=(paired.positions - np.searchsorted(gone, paired.positions)).astype(np.int64),
            universe_tasks=np.asarray(tasks, dtype=str),
            universe_groups=np.asarray(groups if universe.has_groups else np.full(len(tasks), ""), dtype=str),
            universe_size=len(tasks),
            universe_labels=labels,
            universe_sizes=sizes,
            universe=reduced,
        ),
        reduced,
    )


def combine_looks(low: Look, high: Look, *, alpha: float, at_limit: bool) -> Look:
    """One look from the promote test on the low fill and the reject test on the high fill.

    ``low`` and ``high`` are the boundary's looks (with ``action``, ``r_promote``, ``r_reject``, ``reason``
    and ``top_up_left``) on the two worst-case sequences. A promote is taken from ``low`` only, a reject from
    ``high`` only (each from the sequence that is valid for its test); when both act, the smaller p-value wins, as
    the boundary breaks a tie. The record carries ``low``'s p_promote and ``high``'s p_reject.
    """
    r_promote, r_reject = low.r_promote, high.r_reject
    promote, reject = low.action == "promote", high.action == "reject"
    if promote and reject:
        promote = (r_promote or 0.0) <= (r_reject or 0.0)
        reject = not promote
    if promote or reject:
        base = low if promote else high
    # neither acts: a crossing waiting for its top-up tasks keeps its own reason, if it is on its valid side
    elif low.top_up_left is not None and r_promote is not None and r_promote <= alpha:
        base = low
    elif high.top_up_left is not None and r_reject is not None and r_reject <= alpha:
        base = high
    else:
        return dataclasses.replace(
            low, action="abstain" if at_limit else "continue", r_promote=r_promote, r_reject=r_reject, reason=None,
            top_up_left=None, top_up=None, coverage=None,
        )  # nothing waits: no top-up tasks, nor their coverage (a crossing of a sequence on its invalid side is no crossing)
    return dataclasses.replace(base, r_promote=r_promote, r_reject=r_reject)


def missing_warning(missing: MissingTasks, judged: int, tested: str, baseline: str) -> DecisionWarning:
    """The record's ``missing`` warning: which tasks miss whose outcome, and what the boundary did with them."""
    names = missing.tasks.tolist()
    shown = ", ".join(map(str, names[:_SHOWN])) + (f", ... ({len(names)} in all)" if len(names) > _SHOWN else "")
    who = f"{int(missing.tested.sum())} of {tested!r}, {int(missing.baseline.sum())} of {baseline!r}"
    waiting = int((~missing.ready).sum())
    later = f"; {waiting} of them wait for the other system's run" if waiting else ""
    what = {
        "worst-case": f"{judged} counted at their worst case for each test (missing = worst-case)",
        "exclude": f"{judged} left out of the planned universe (missing = exclude; valid only when errors are independent of the outcomes)",
        "wait": "the observed prefix waits at the first of them for a retry (missing = wait)",
    }[missing.treatment]
    return DecisionWarning(
        "missing", f"{len(names)} planned task(s) have a missing outcome (errored or unscored; {who}): {shown}; {what}{later}"
    )
