"""The state of a look: the validated inputs of :func:`stopwise.decide`, the pairing, the budget and the judged tasks.

:func:`stopwise.decide` builds, in order, :class:`DecideInputs` (every argument validated), the paired outcomes
(:func:`paired_outcomes`, cut at the budget limit by :func:`limit_look`), and then one frozen :class:`DecideState`
per sequence the boundary judges (:func:`look_state`: the budget where the look stands and the judged tasks).
A boundary's rule (:mod:`stopwise.compare._boundaries`) reads the state and nothing else.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from stopwise.compare._boundaries import BoundaryRule, boundary_module
from stopwise.compare._coverage import coverage_enforced, coverage_from_sizes
from stopwise.compare._pairing import PairedOutcomes, pair_outcomes
from stopwise.compare._predicted import PoweredPairs
from stopwise.compare._tails import lattice_threshold
from stopwise.errors import ComparisonError
from stopwise.records import Boundary, CoverageState, Exclusion, OutcomeColumns, Policy, TaskUniverse

__all__ = [
    "Budget",
    "DecideInputs",
    "DecideState",
    "Observed",
    "PastLimit",
    "budget_state",
    "exceeds_threshold",
    "limit_look",
    "look_state",
    "measure_budget",
    "observed",
    "paired_outcomes",
    "prefix",
]


def exceeds_threshold(differences: np.ndarray, lattice: int, threshold: float) -> bool:
    """Whether the mean difference exceeds delta, compared exactly on the lattice when there is one."""
    n = len(differences)
    if lattice:
        total = int(np.rint(differences * lattice).sum())
        return bool(total > lattice_threshold(n, lattice, threshold))
    return bool(differences.mean() > threshold)


def measure_budget(paired: PairedOutcomes, policy: Policy) -> float:
    """Budget used by the observed tasks in the policy's measure.

    ``task_fraction`` is n_observed / N (N of the task set T), ``task_count`` n_observed; cost and
    time sum the observed tasks' ``cost_usd`` / ``elapsed_s`` (the tested system's, or both with
    ``scope = "pair"``).

    Raises
    ------
    ComparisonError
        Cost or time is missing on an observed task.
    """
    measure, scope = policy.budget.measure, policy.budget.scope
    if measure == "task_fraction":
        return paired.n_observed / paired.n_shared if paired.n_shared else 0.0
    if measure == "task_count":
        return float(paired.n_observed)
    field = "cost" if measure == "cost_usd" else "elapsed"
    parts = [(paired.tested, getattr(paired, f"tested_{field}"))]
    if scope == "pair":
        parts.append((paired.baseline, getattr(paired, f"baseline_{field}")))
    total = 0.0
    for system, values in parts:
        missing = ~np.isfinite(values)
        if missing.any():
            examples = ", ".join(map(str, paired.tasks[missing][:3]))
            raise ComparisonError(
                f"budget measure {measure} needs {measure} on every observed row of {system!r}; "
                f"{int(missing.sum())} observed task(s) lack it (e.g. {examples}). "
                "Fill the column or pass the budget used explicitly (--budget-used)."
            )
        total += float(values.sum())
    return total


def prefix(paired: PairedOutcomes) -> np.ndarray:
    """Indices of the observed tasks forming the longest observed prefix of the planned order, in order."""
    order = np.argsort(paired.positions, kind="stable")
    ranked = paired.positions[order]
    gaps = np.flatnonzero(ranked != np.arange(len(ranked)))
    return order[: int(gaps[0]) if len(gaps) else len(ranked)]


@dataclasses.dataclass(frozen=True)
class DecideInputs:
    """The arguments of :func:`stopwise.decide`, validated and normalised (``stopwise.compare._decide._decide_iv``)."""

    rows: OutcomeColumns
    """Validated outcome rows; only the two systems' when the rows hold others."""
    tested: str
    """System A."""
    baseline: str
    """System B."""
    policy: Policy
    """The policy (the default one when none was given)."""
    universe: TaskUniverse | None
    """The planned tasks (an ordered one for the betting boundary)."""
    budget_used: float | None
    """The budget used given by the caller, finite, >= 0 and at most the limit; None: measure it."""
    complete: bool
    """The caller declared the record complete and gave no universe."""
    rng: np.random.Generator
    """Generator of the Monte-Carlo bootstrap (from ``policy.seed`` when none was given)."""
    powered: PoweredPairs | None = None
    """The prediction-powered pairing (``[decision] predicted = "prediction-powered"``;
    :func:`stopwise.compare._powered.powered_inputs`)."""

    @property
    def boundary(self) -> Boundary:
        """The policy's boundary."""
        return self.policy.decision.boundary

    @property
    def anytime(self) -> bool:
        """The boundary is valid at every look (it judges the observed prefix of the planned order)."""
        return boundary_module(self.boundary).ANYTIME

    @property
    def known(self) -> bool:
        """N is known: a universe is given or the record is declared complete."""
        return self.universe is not None or self.complete

    @functools.cached_property
    def rule(self) -> BoundaryRule:
        """The boundary's rule on this universe (built on first use: the betting boundary checks the order then)."""
        return boundary_module(self.boundary).rule(self.policy, self.universe)

    def replace(self, **changes: object) -> DecideInputs:
        """A copy with ``changes`` that keeps the rule once built (the planned order's draw, judged once per call)."""
        copy = dataclasses.replace(self, **changes)  # type: ignore[arg-type]
        if "rule" in self.__dict__ and "policy" not in changes:
            copy.__dict__["rule"] = self.__dict__["rule"]
        return copy


def paired_outcomes(inputs: DecideInputs, statuses: tuple[str, ...] | None = None) -> PairedOutcomes:
    """The two systems' paired outcomes within the universe; refused when they share no task."""
    policy = inputs.policy
    if inputs.powered is not None and statuses is None:
        return inputs.powered.paired
    paired = pair_outcomes(
        inputs.rows,
        inputs.tested,
        inputs.baseline,
        statuses=policy.statuses if statuses is None else statuses,
        group_column=policy.coverage.group_column,
        universe=inputs.universe,
        exclude_flags=policy.flags.exclude,
        count_flags=policy.flags.count,
    )
    if paired.n_shared == 0:
        raise ComparisonError(f"systems {inputs.tested!r} and {inputs.baseline!r} share no tasks; nothing to compare")
    return paired


@dataclasses.dataclass(frozen=True)
class PastLimit:
    """A look whose rows reached past the budget limit, taken at the limit instead (``past_limit = "at-limit"``)."""

    used: float
    """Budget used by all the observed tasks (past the limit)."""
    kept: int | None
    """Observed tasks kept: the first ones in the planned order up to the limit (None: all, the boundary being
    valid at every look)."""
    rows: int
    """Rows excluded as beyond the limit."""
    tasks: int
    """Distinct tasks of those rows."""


def _task_budget(paired: PairedOutcomes, policy: Policy) -> np.ndarray:
    """What each observed task adds to the budget used, in the policy's measure (:func:`measure_budget` summed)."""
    measure = policy.budget.measure
    if measure == "task_fraction":
        return np.full(paired.n_observed, 1.0 / paired.n_shared)
    if measure == "task_count":
        return np.ones(paired.n_observed)
    field = "cost" if measure == "cost_usd" else "elapsed"
    spent = np.asarray(getattr(paired, f"tested_{field}"), dtype=float)
    if policy.budget.scope == "pair":
        spent = spent + np.asarray(getattr(paired, f"baseline_{field}"), dtype=float)
    return spent


def limit_look(inputs: DecideInputs, paired: PairedOutcomes) -> tuple[PairedOutcomes, PastLimit | None]:
    """The look the policy planned: rows past the budget limit are refused or cut at the limit.

    The budget used by the observed tasks is measured (never when the caller gives it: a given value
    is at most the limit). A boundary valid at every look keeps every row and only warns
    (``past-limit``) unless the policy refuses. The look is past the limit when the observed tasks without the last one
    (in the planned order; without an order, the most expensive one) already reach the limit: the
    first look at or over the limit is the planned one. Past the limit, ``past_limit = "refuse"``
    refuses the look; ``"at-limit"``
    keeps the shortest run of observed tasks, in the planned order, whose budget reaches the limit
    -- the look at the limit a live run would have taken -- and excludes the rows on later tasks
    (exclusion ``beyond-limit``). That needs the planned order; without one the look is refused.
    """
    policy = inputs.policy
    limit, measure = policy.budget.limit, policy.budget.measure
    if inputs.budget_used is not None or (measure == "task_fraction" and not inputs.known):
        return paired, None
    used = measure_budget(paired, policy)
    if used <= limit * (1 + 1e-12) or paired.n_observed == 0:
        return paired, None
    spent = _task_budget(paired, policy)
    ordered = inputs.universe is not None and inputs.universe.ordered
    order = np.argsort(paired.positions, kind="stable") if ordered else np.argsort(-spent, kind="stable")
    # past the limit: the look without its last task (in the planned order; without one, whichever task
    # that was) had already reached the limit. The first look at or over the limit is the planned one.
    if used - float(spent[order[-1]]) < limit * (1 - 1e-12):
        return paired, None
    where = (
        f"the observed tasks use {used:g} ({measure}), past the policy's budget limit {limit:g}: a look past the limit "
        "is a second, unplanned look"
    )
    if policy.decision.past_limit == "refuse":
        raise ComparisonError(
            where + '; the policy refuses it (past_limit = "refuse"). Decide on the rows up to the limit, or write a new '
            "policy with a larger limit before looking further"
        )
    if inputs.anytime:  # valid at every look: the look stands, and the record says it is past the planned budget
        return paired, PastLimit(used=used, kept=None, rows=0, tasks=0)
    universe = inputs.universe
    if universe is None or not universe.ordered:
        raise ComparisonError(
            where + '; deciding at the limit (past_limit = "at-limit") needs the planned order to know which tasks came '
            "first: pass the `stopwise order` output or a tasks file (universe=read_task_universe(...), --tasks FILE)"
        )
    reached = np.cumsum(spent[order]) >= limit * (1 - 1e-12)
    kept = int(np.argmax(reached)) + 1
    last = int(paired.positions[order[kept - 1]])
    row_positions = universe.positions(inputs.rows.task)
    beyond = row_positions > last
    again = paired_outcomes(inputs.replace(rows=inputs.rows.take(~beyond)))
    exclusion = Exclusion.from_code("beyond-limit", rows=int(beyond.sum()), tasks=int(np.unique(row_positions[beyond]).size))
    again = dataclasses.replace(again, excluded=(*again.excluded, exclusion))
    return again, PastLimit(used=used, kept=kept, rows=exclusion.rows, tasks=exclusion.tasks)


@dataclasses.dataclass(frozen=True)
class Budget:
    """Where the look stands against the budget."""

    used: float
    """Budget used, in the policy's measure (given or measured)."""
    at_limit: bool
    """The budget is exhausted, or every one of the N known tasks is observed."""
    limit_unknown: bool
    """A task fraction without a universe: N, and so the limit, cannot be established."""


def budget_state(inputs: DecideInputs, paired: PairedOutcomes) -> Budget:
    """Budget used (the caller's, else measured from the rows) and whether the limit is reached."""
    limit = inputs.policy.budget.limit
    if inputs.budget_used is not None:  # an explicit value is never overridden
        return Budget(used=inputs.budget_used, at_limit=inputs.budget_used >= limit * (1 - 1e-12), limit_unknown=False)
    limit_unknown = inputs.policy.budget.measure == "task_fraction" and not inputs.known
    used = measure_budget(paired, inputs.policy)
    all_seen = inputs.known and paired.n_observed == paired.n_shared
    return Budget(used=used, at_limit=not limit_unknown and (used >= limit * (1 - 1e-12) or all_seen), limit_unknown=limit_unknown)


@dataclasses.dataclass(frozen=True)
class Observed:
    """The observed tasks a boundary judges: all of them, or the observed prefix of the planned order."""

    index: np.ndarray
    """Indices of the judged tasks in the pairing (in planned order for a boundary valid at every look)."""
    differences: np.ndarray
    """D_i of the judged tasks."""
    groups: np.ndarray
    """Their coverage groups."""
    waiting: int
    """Observed tasks beyond the longest observed prefix of the planned order (anytime boundaries only)."""
    coverage: CoverageState
    """Coverage of the judged tasks (of every observed task when the rule says so: the top-up design)."""
    covered: bool
    """At least one task is judged and coverage holds (or is not enforced)."""
    exceeds: bool
    """The mean difference exceeds the threshold (False when nothing is judged)."""

    @property
    def n(self) -> int:
        """How many tasks are judged."""
        return len(self.differences)


def observed(inputs: DecideInputs, paired: PairedOutcomes) -> Observed:
    """The judged tasks, their coverage and side of the threshold."""
    policy = inputs.policy
    used_index = prefix(paired) if inputs.anytime else np.arange(paired.n_observed)
    differences, groups = paired.differences[used_index], paired.groups[used_index]
    n = len(differences)
    judged = paired.groups if inputs.anytime and inputs.rule.coverage_on_observed else groups
    coverage = coverage_from_sizes(
        paired.universe_labels, paired.universe_sizes, judged, rule=policy.coverage.rule, slack=policy.coverage.slack
    )
    return Observed(
        index=used_index,
        differences=differences,
        groups=groups,
        waiting=paired.n_observed - n,
        coverage=coverage,
        covered=n > 0 and (coverage.satisfied or not coverage_enforced(policy.coverage.rule)),
        exceeds=exceeds_threshold(differences, paired.lattice, policy.threshold) if n > 0 else False,
    )


@dataclasses.dataclass(frozen=True)
class DecideState:
    """One look's state, all a boundary's rule reads: the inputs, the paired outcomes, the budget, the judged tasks."""

    inputs: DecideInputs
    """The validated arguments of :func:`stopwise.decide`."""
    paired: PairedOutcomes
    """The paired outcomes of the look (cut at the limit, filled or reduced for missing tasks)."""
    budget: Budget
    """Where the look stands against the budget."""
    observed: Observed
    """The judged tasks."""
    memo: dict[str, object] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """The rule's own scratch space for what it derives from this state once (the betting boundary keeps the confidence
    bounds its look computed in the same pass as its p-values, for the interval); nothing of the inputs."""

    @property
    def policy(self) -> Policy:
        """The policy."""
        return self.inputs.policy

    @property
    def rule(self) -> BoundaryRule:
        """The boundary's rule."""
        return self.inputs.rule


def look_state(inputs: DecideInputs, paired: PairedOutcomes, budget: Budget | None = None) -> DecideState:
    """The state of the look on ``paired``: its budget (``budget`` when given: the missing fills share one) and judged tasks."""
    return DecideState(inputs, paired, budget_state(inputs, paired) if budget is None else budget, observed(inputs, paired))
