"""The decision routine of ParEvalLayer (Fig. 2) and the decision record it writes.

Two boundaries (the policy's ``[decision] boundary``):

* ``fixed-budget`` (the paper's primary rule): tail probabilities R_promote / R_reject of the
  observed tasks; a final action only at the budget limit fixed in advance (one look).
* ``betting-wor``: the anytime-valid betting boundary over the N planned tasks sampled without
  replacement (:func:`stopwise.compare.betting_boundary`), fed the longest observed prefix of the planned
  order; a final action at ANY look once its p-value is at most a and coverage holds.

The task universe (N, planned groups, planned order) is an input (:class:`stopwise.TaskUniverse`).
Without one, N and the groups are only inferred from the rows, and ``decide`` takes no final action
before the budget limit is established (see :func:`decide`).

Guards (warnings in the record): tails from fewer paired tasks than :data:`MIN_OBSERVED` names for
the method; every observed difference on one side of the threshold before the limit (one tail is
then exactly 0, which is meaningful only at the limit); rows outside the universe; universes without
groups; and (issue 21) a look past the budget limit taken at the limit, the paper's rule acting on
fewer than :data:`stopwise._vocabulary.RARE_DISCORDANCE` discordant tasks (with the exact
one-look p-value of the sample as the measured risk), the unweighted and group-weighted means on
different sides of the threshold under a group-driven order, and ``exact-wor``'s fallback or
non-random sample. Each is a :class:`stopwise.records.DecisionWarning` with a code; the record
keeps its message.

Looks are what the policy planned: rows reaching past the budget limit are cut at the limit in the
planned order (``[decision] past_limit = "at-limit"``, the rows beyond excluded with code
``beyond-limit``) or the look is refused (``"refuse"``, or no planned order): never a silent second
decision (:func:`_limit_look`).

Planned tasks whose outcome is missing for a system (errored or unscored runs) are treated as the policy's
``[decision] missing`` says under ``betting-wor`` (:mod:`stopwise.compare._missing`: counted at their worst case
for each test by default, waited for, or excluded); the record lists them.

:func:`decide` is a pipeline of small steps: :func:`_decide_iv` (every argument validated and
normalised), :func:`_paired`, :func:`_limit_look`, the missing tasks (:func:`_missing_decide`), :func:`_budget_state`, :func:`_observed` (the judged tasks),
one function per boundary (:func:`_fixed_budget_look`, :func:`_betting_wor_look`),
:func:`_decision_warnings`, :func:`_interval` (the interval matching the boundary), :func:`_forecast` (the remaining
tasks of a ``continue`` look) and :func:`_decision_record` (which adds the claim sentence). Inside it an action is the
:data:`stopwise.records.Action` word; the integer codes (:data:`PROMOTE` ...) serve the vectorised
:func:`routine_actions` and the replay, and are derived from :data:`stopwise.records.ACTIONS`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
from datetime import UTC, datetime
from numbers import Integral
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from stopwise._version import __version__
from stopwise._vocabulary import RARE_DISCORDANCE
from stopwise.compare._betting import BettingBoundary, betting_boundary
from stopwise.compare._coverage import coverage_enforced, coverage_from_sizes
from stopwise.compare._forecast import FORECAST_SIMULATIONS, TopUpPlan, limit_in_tasks, remaining_forecast
from stopwise.compare._interval import betting_interval, claim_sentence, one_look_interval
from stopwise.compare._missing import (
    MissingTasks,
    combine_looks,
    exclude_missing,
    fill_missing,
    find_missing,
    missing_warning,
)
from stopwise.compare._pairing import (
    PairedOutcomes,
    _check_systems,
    _rows_of_systems,
    _rows_on_tasks,
    as_columns,
    pair_outcomes,
)
from stopwise.compare._plan import RANDOM_KINDS, drawn_kind, order_check, retired_order, top_up_design
from stopwise.compare._predicted import (
    AuditTallies,
    PoweredPairs,
    audit_disagreements,
    powered_boundary,
    powered_interval,
    powered_pairs,
    predicted_state,
)
from stopwise.compare._tails import lattice_threshold, tail_probabilities
from stopwise.compare._topup import top_up_check
from stopwise.compare._wor_exact import exact_wor_pvalue
from stopwise.errors import ArgumentError, ComparisonError
from stopwise.records import (
    ACTION_CODE,
    ACTIONS,
    OUTCOME_COLUMNS,
    TEXT_COLUMNS,
    Action,
    Boundary,
    BudgetState,
    CoverageState,
    DecisionRecord,
    DecisionWarning,
    DifferenceInterval,
    Exclusion,
    MissingState,
    OutcomeColumns,
    Policy,
    PredictedState,
    RemainingForecast,
    TailProvenance,
    TaskUniverse,
    UniverseState,
    WarningCode,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ABSTAIN",
    "CONTINUE",
    "MIN_OBSERVED",
    "PROMOTE",
    "REJECT",
    "decide",
    "exceeds_threshold",
    "input_digest",
    "measure_budget",
    "routine_actions",
]

MIN_OBSERVED: dict[str, int] = {"exact": 20, "bootstrap": 20, "normal": 30, "serfling": 30, "exact-wor": 1}
"""Fewest paired tasks for which each tail method's tails are trusted; below it the record warns.

The bootstrap (exact or Monte Carlo) has at most 2^n distinct resample means and puts a tail of
exactly 0 on any one-signed sample, whatever n; the normal and Serfling tails rest on a central
limit approximation that the usual rule of thumb wants n >= 30 for. ``exact-wor`` is exact at every n.
What matters more than n for the bootstrap is the number of discordant tasks: see
:data:`stopwise._vocabulary.RARE_DISCORDANCE` (warning ``rare-discordance``)."""

PROMOTE, REJECT, CONTINUE, ABSTAIN = (ACTION_CODE[a] for a in ("promote", "reject", "continue", "abstain"))
"""Action codes (:data:`stopwise.records.ACTION_CODE`), equal to the ``stopwise decide`` exit codes."""


def exceeds_threshold(differences: np.ndarray, lattice: int, threshold: float) -> bool:
    """Whether the mean difference exceeds delta, compared exactly on the lattice when there is one."""
    n = len(differences)
    if lattice:
        total = int(np.rint(differences * lattice).sum())
        return bool(total > lattice_threshold(n, lattice, threshold))
    return bool(differences.mean() > threshold)


def routine_actions(
    coverage_ok: ArrayLike,
    at_limit: ArrayLike,
    exceeds: ArrayLike,
    r_promote: ArrayLike,
    r_reject: ArrayLike,
    *,
    tail_cutoff: float,
    forced: bool = False,
) -> np.ndarray:
    """The routine of Fig. 2, vectorised over decisions; returns action codes 0-3.

    1. Coverage fails: continue while budget remains, otherwise abstain.
    2. Budget remains: continue.
    3. At the limit: promote if the mean exceeds delta and R_promote <= a; reject if it does not
       and R_reject <= a; otherwise abstain. ``forced`` decides by the mean alone.

    Parameters
    ----------
    coverage_ok : array_like of bool
        Coverage holds (or is not enforced) and at least one task is observed.
    at_limit : array_like of bool
        The budget is exhausted (or nothing remains to observe).
    exceeds : array_like of bool
        The observed mean difference exceeds delta.
    r_promote, r_reject : array_like of float
        Tail probabilities (ignored when ``forced``).
    tail_cutoff : float
        a.
    forced : bool, optional
        Decide by the observed mean alone (no uncertainty check).

    Examples
    --------
    >>> from stopwise.compare import routine_actions
    >>> routine_actions([False, False, True, True, True, True], [False, True, False, True, True, True],
    ...                 [True] * 4 + [False] * 2, [0.01] * 4 + [0.9, 0.9], [0.99] * 4 + [0.01, 0.2],
    ...                 tail_cutoff=0.05).tolist()
    [2, 3, 2, 0, 1, 3]
    """
    covered = np.asarray(coverage_ok, dtype=bool)
    limit = np.asarray(at_limit, dtype=bool)
    above = np.asarray(exceeds, dtype=bool)
    if forced:
        final = np.where(above, PROMOTE, REJECT)
    else:
        promote = above & (np.asarray(r_promote, dtype=float) <= tail_cutoff)
        reject = ~above & (np.asarray(r_reject, dtype=float) <= tail_cutoff)
        final = np.where(promote, PROMOTE, np.where(reject, REJECT, ABSTAIN))
    return np.where(limit, np.where(covered, final, ABSTAIN), CONTINUE).astype(np.int8)


def _nan_as(values: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(values), -1.0, values)


def input_digest(rows: pd.DataFrame | OutcomeColumns, systems: tuple[str, ...]) -> str:
    """sha256 of the given systems' outcome rows in canonical form.

    Canonical form: the contract columns of the systems' rows, sorted by (system, task, attempt,
    status, outcome, then every other column); each column hashed in contract order as its name, then its values -- a text
    column as its sorted distinct values joined by U+001F followed by each row's index into them
    (int64), numbers as little-endian float64 / int64 bytes (every NaN the same bytes). Row order and the other systems' rows do not change it. (Before the task
    universe the digest hashed a CSV rendering; that took 18 s on 10^6 rows.)

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare import input_digest
    >>> rows = stopwise.outcome_columns([{"system": "A", "task": "t", "outcome": 1}, {"system": "B", "task": "t", "outcome": 0}])
    >>> input_digest(rows, ("A", "B")) == input_digest(rows.take(np.array([1, 0])), ("B", "A"))
    True
    """
    sub = as_columns(rows)
    chosen = _rows_of_systems(sub, systems)
    if not chosen.all():
        sub = sub.take(chosen)
    text = {column: sub.codes(column) for column in TEXT_COLUMNS}
    keys = [
        text["system"][0],
        text["task"][0],
        sub.attempt,
        text["status"][0],
        _nan_as(sub.outcome),
        text["group"][0],
        _nan_as(sub.cost_usd),
        _nan_as(sub.elapsed_s),
        text["source"][0],
        text["unit"][0],
        text["flags"][0],
    ]
    order = np.lexsort(keys[::-1])  # every column breaks ties, so row order never matters
    digest = hashlib.sha256()
    no_flags = len(text["flags"][1]) == 0 or (len(text["flags"][1]) == 1 and text["flags"][1][0] == "")
    for column in OUTCOME_COLUMNS:
        if column == "flags" and no_flags:
            continue  # rows without flags keep the digest they had before the column existed
        digest.update(column.encode() + b"\x1e")
        if column in text:
            column_codes, column_labels = text[column]
            digest.update("\x1f".join(column_labels.tolist()).encode("utf-8", "surrogatepass") + b"\x1e")
            digest.update(np.ascontiguousarray(column_codes[order], dtype="<i8").tobytes())
        elif column == "attempt":
            digest.update(np.ascontiguousarray(sub.attempt[order], dtype="<i8").tobytes())
        else:
            numbers = np.asarray(sub.column(column)[order], dtype="<f8").copy()
            numbers[np.isnan(numbers)] = np.nan
            digest.update(numbers.tobytes())
        digest.update(b"\x1d")
    return digest.hexdigest()


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


def _checked_rows(rows: pd.DataFrame | OutcomeColumns) -> OutcomeColumns:
    """Outcome rows passed from Python as columns, validated like a file (fast path for validated rows)."""
    if isinstance(rows, OutcomeColumns):
        return rows
    if type(rows).__name__ != "DataFrame":
        raise ComparisonError(
            "outcome rows must be stopwise.OutcomeColumns (see stopwise.read_outcomes and stopwise.outcome_columns) or a "
            f"pandas DataFrame; got {type(rows).__name__}"
        )
    return as_columns(rows, source="<DataFrame passed to decide>")


def _reason(
    action: Action,
    *,
    covered: bool,
    enforce: bool,
    n: int,
    forced: bool,
    missing: list[str],
    possible: bool,
    boundary: str,
    limit_unknown: bool,
) -> str:
    end = "; budget exhausted" if action == "abstain" else "; budget remains"
    if n == 0:
        return "no paired outcomes observed yet" + ("; budget exhausted" if action == "abstain" else "")
    if enforce and not covered:
        why = (
            "coverage requirement impossible at this count (sum of required counts exceeds observed tasks)"
            if not possible
            else "coverage missing for group(s) " + ", ".join(repr(g) for g in missing[:10])
        )
        return why + end
    if action == "continue" and limit_unknown:
        return (
            "no task universe given: N and the planned groups are unknown, so the tasks with rows cannot be taken as the "
            "whole benchmark and the budget limit cannot be established; pass the planned tasks (universe=, --tasks or "
            "--n-tasks) or declare a finished record complete (complete=True, --complete)"
        )
    if boundary == "betting-wor":
        if action == "promote":
            return "betting-wor boundary crossed: anytime-valid p_promote <= a (mean difference exceeds the threshold)"
        if action == "reject":
            return "betting-wor boundary crossed: anytime-valid p_reject <= a (mean difference below the threshold)"
        if action == "abstain":
            return "at the budget limit: the betting-wor boundary was not crossed (both p-values exceed a)"
        return "coverage holds; betting-wor boundary not crossed; budget remains"
    if action == "continue":
        return "coverage holds; budget remains (the fixed-budget rule acts only at the limit)"
    if forced:
        return "forced: observed mean " + ("exceeds" if action == "promote" else "does not exceed") + " the threshold"
    if action == "promote":
        return "fixed-budget rule at the budget limit: observed mean exceeds the threshold and R_promote <= a"
    if action == "reject":
        return "fixed-budget rule at the budget limit: observed mean does not exceed the threshold and R_reject <= a"
    return "fixed-budget rule at the budget limit: the tail on the observed side exceeds a"


def _universe_state(paired: PairedOutcomes, universe: TaskUniverse | None, complete: bool) -> UniverseState | None:
    outside = sum(e.rows for e in paired.excluded if e.code == "outside-universe")
    if universe is not None:
        return UniverseState(
            source="tasks" if universe.ordered else "counts",
            n_tasks=universe.n_tasks,
            sha256=universe.sha256(),
            ordered=universe.ordered,
            outside_rows=outside,
        )
    if complete:
        inferred = TaskUniverse(paired.universe_tasks.tolist(), paired.universe_groups.tolist())
        return UniverseState(
            source="complete-record", n_tasks=inferred.n_tasks, sha256=inferred.sha256(), ordered=False
        )
    return None


def _prefix(paired: PairedOutcomes) -> np.ndarray:
    """Indices of the observed tasks forming the longest observed prefix of the planned order, in order."""
    order = np.argsort(paired.positions, kind="stable")
    ranked = paired.positions[order]
    gaps = np.flatnonzero(ranked != np.arange(len(ranked)))
    return order[: int(gaps[0]) if len(gaps) else len(ranked)]


@dataclasses.dataclass(frozen=True)
class _DecideInputs:
    """The arguments of :func:`decide`, validated and normalised by :func:`_decide_iv`."""

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
    """The prediction-powered pairing (``[decision] predicted = "prediction-powered"``; :func:`_powered`)."""

    @property
    def boundary(self) -> Boundary:
        """The policy's boundary."""
        return self.policy.decision.boundary

    @property
    def betting(self) -> bool:
        """The boundary is ``betting-wor``."""
        return self.boundary == "betting-wor"

    @property
    def known(self) -> bool:
        """N is known: a universe is given or the record is declared complete."""
        return self.universe is not None or self.complete

    @property
    def forced(self) -> bool:
        """The fixed-budget rule decides by the observed mean alone (tail method ``none``)."""
        return self.policy.tail_method == "none" and not self.betting

    @functools.cached_property
    def betting_design(self) -> _BettingDesign:
        """How the betting boundary runs on this universe (refuses an unfit planned order; betting only)."""
        return _betting_design(self.policy, self.universe)


@dataclasses.dataclass(frozen=True)
class _BettingDesign:
    """The betting boundary's process on the planned order, and what the record must say about the order."""

    process: str
    """``top-up`` (pooled on a uniform pi, coverage by topping up), ``pooled`` or ``stratified``."""
    warning: str | None = None
    """An ``order-provenance`` warning (None when the order is verified)."""


def check_betting_order(policy: Policy, universe: TaskUniverse) -> None:
    """Refuse a planned order the betting-wor boundary of ``policy`` would refuse at every look.

    What :func:`decide` checks at each look (the order's provenance, ``[betting] order_check``), checked
    once up front: a ledger registers an evaluation with it, so an order that could never decide is refused
    before anything is locked. Nothing happens under the fixed-budget boundary or without a planned order.

    Raises
    ------
    ComparisonError
        The order is not a seeded random permutation written by ``stopwise order`` (or the policy's own
        seeded draw), and the policy refuses such orders.

    Examples
    --------
    >>> from stopwise.records import Policy, TaskUniverse
    >>> check_betting_order(Policy(), TaskUniverse(["t2", "t1"]))  # fixed-budget: nothing to check
    """
    if policy.decision.boundary == "betting-wor" and universe.ordered:
        _betting_design(policy, universe)


def _betting_design(policy: Policy, universe: TaskUniverse | None) -> _BettingDesign:
    """The process the planned order supports and the order check (``[betting]`` of the policy).

    The pooled process needs a uniformly random permutation of the planned tasks: it runs the top-up design when
    the policy asks for it (``betting-wor``, a coverage rule and ``design = "top-up"``) and alone otherwise. The
    kind is the stamp's (``stopwise order``), verified by redrawing it; an order without a stamp that is exactly
    the draw ``stopwise order`` makes for this policy (:func:`stopwise.compare._plan.drawn_kind`, ``[order] seed``)
    counts as verified. A coverage-aware order of one group is a uniform one. The stratified process (coverage-aware
    orders) is retired (issue 33: it resolved 44.6 % of SWE-bench Verified runs by 20 % of the tasks against the
    top-up design's 69.2 %), so any other order is refused, whatever ``order_check`` says
    (:func:`stopwise.compare._plan.retired_order`); only a universe built in Python without a stamp is decided,
    with the pooled process and an ``order-provenance`` warning that the guarantee assumes a uniform order.
    """
    assert universe is not None  # _decide_iv refuses the betting boundary without an ordered universe
    problem = order_check(universe, RANDOM_KINDS)
    kind = universe.stamp.kind if universe.stamp is not None else None
    if problem is not None and universe.stamp is None:
        for candidate in dict.fromkeys((drawn_kind(policy), policy.order.kind)):
            if candidate in RANDOM_KINDS and order_check(universe.with_stamp(candidate, policy.order.seed), RANDOM_KINDS) is None:
                problem, kind = None, candidate  # the policy's own seeded draw, unstamped
                break
    warning = None
    refusal = retired_order(policy, universe, problem, kind)
    if refusal is not None:
        raise ComparisonError(refusal)
    if problem is not None:  # a universe built in Python, without a stamp
        warning = f"{problem}; the betting-wor guarantee assumes a uniformly random permutation drawn before any outcome"
        kind = "uniform"
    if len(universe.group_sizes) <= 1:  # one group: coverage holds from the first task, nothing to top up
        return _BettingDesign("pooled", warning)
    return _BettingDesign("top-up" if top_up_design(policy) else "pooled", warning)


def _decide_iv(
    rows: pd.DataFrame | OutcomeColumns,
    tested: str,
    baseline: str,
    policy: Policy | None,
    universe: TaskUniverse | None,
    budget_used: float | None,
    complete: bool,
    rng: np.random.Generator | int | None,
) -> _DecideInputs:
    """Validate and normalise every argument of :func:`decide`.

    In the order of its signature, but ``universe`` with the policy (whose boundary it must fit)
    before the rows.
    """
    if policy is None:
        policy = Policy()
    if not isinstance(policy, Policy):
        raise ComparisonError(f"`policy` must be a stopwise.Policy (see stopwise.load_policy) or None; got {type(policy).__name__}")
    if universe is not None and not isinstance(universe, TaskUniverse):
        raise ComparisonError(
            f"`universe` must be a stopwise.TaskUniverse (see stopwise.read_task_universe) or None; got {type(universe).__name__}"
        )
    if policy.decision.boundary == "betting-wor" and (universe is None or not universe.ordered):
        given = "no task universe" if universe is None else "a task universe from counts only"
        raise ComparisonError(
            f"the betting-wor boundary needs the planned task order, but {given} was given: pass the `stopwise order` "
            "output or a tasks file (universe=read_task_universe(...), --tasks FILE)"
        )
    checked = _checked_rows(rows)
    for role, system in (("tested", tested), ("baseline", baseline)):
        if not isinstance(system, str):
            raise ComparisonError(f"`{role}` must be a system name (str); got {type(system).__name__}")
    _check_systems(checked, tested, baseline)
    system_codes, system_labels = checked.codes("system")
    if len(system_labels) > 2:  # only the two systems' rows are paired and digested
        wanted = np.flatnonzero((system_labels == tested) | (system_labels == baseline))
        checked = checked.take((system_codes == wanted[0]) | (system_codes == wanted[1]))
    return _DecideInputs(
        rows=checked,
        tested=tested,
        baseline=baseline,
        policy=policy,
        universe=universe,
        budget_used=_budget_used_iv(budget_used, policy),
        complete=bool(complete) and universe is None,
        rng=_rng_iv(rng, policy),
    )


def _budget_used_iv(budget_used: object, policy: Policy) -> float | None:
    """``budget_used`` as a float: a finite number >= 0, at most the policy's limit; None stays None."""
    if budget_used is None:
        return None
    if isinstance(budget_used, bool) or not isinstance(budget_used, int | float | np.integer | np.floating):
        raise ComparisonError(f"budget used must be a number; got {budget_used!r}")
    if not math.isfinite(budget_used) or budget_used < 0:
        raise ComparisonError(f"budget used must be a finite number >= 0; got {budget_used!r}")
    limit = policy.budget.limit
    if budget_used > limit * (1 + 1e-12):
        raise ComparisonError(
            f"budget used {budget_used:g} exceeds the policy's budget limit {limit:g} ({policy.budget.measure}); "
            "the limit ends the evaluation, so a larger value is a mistake (check the measure and the unit)"
        )
    return float(budget_used)


def _rng_iv(rng: object, policy: Policy) -> np.random.Generator:
    """``rng`` as a generator: a generator as given, a seed (an integer >= 0) or None (``policy.seed``) turned into one."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng(policy.seed)
    if isinstance(rng, bool) or not isinstance(rng, Integral) or int(rng) < 0:
        raise ComparisonError(f"`rng` must be a numpy.random.Generator, an integer seed >= 0 or None; got {rng!r}")
    return np.random.default_rng(int(rng))


def _powered(iv: _DecideInputs) -> _DecideInputs:
    """Under ``predicted = "prediction-powered"``: the inputs with the prediction-powered pairing (:mod:`._predicted`).

    The treatment rests on the pooled betting boundary (a uniform planned order); the one-look fixed-budget tails
    are refused (their finite-population corrections would use the noisy past sums as exact).
    """
    policy = iv.policy
    if policy.decision.predicted != "prediction-powered":
        return iv
    if not iv.betting:
        raise ComparisonError(
            '[decision] predicted = "prediction-powered" needs boundary = "betting-wor" (an anytime-valid boundary on a '
            "uniform planned order); the fixed-budget tails do not take the audit correction"
        )
    if iv.betting_design.process == "stratified":
        raise ComparisonError(
            '[decision] predicted = "prediction-powered" runs the pooled betting process on a uniform planned order (with '
            'the coverage rule: [betting] design = "top-up"); this order needs the stratified process, which does not take it'
        )
    statuses = tuple(dict.fromkeys((*policy.statuses, "predicted")))

    def pair(rows: OutcomeColumns) -> PairedOutcomes:
        return _paired(dataclasses.replace(iv, rows=rows), statuses)

    return dataclasses.replace(iv, powered=powered_pairs(iv.rows, iv.tested, policy.early.audit_fraction, pair))


def _paired(iv: _DecideInputs, statuses: tuple[str, ...] | None = None) -> PairedOutcomes:
    """The two systems' paired outcomes within the universe; refused when they share no task."""
    policy = iv.policy
    if iv.powered is not None and statuses is None:
        return iv.powered.paired
    paired = pair_outcomes(
        iv.rows,
        iv.tested,
        iv.baseline,
        statuses=policy.statuses if statuses is None else statuses,
        group_column=policy.coverage.group_column,
        universe=iv.universe,
        exclude_flags=policy.flags.exclude,
        count_flags=policy.flags.count,
    )
    if paired.n_shared == 0:
        raise ComparisonError(f"systems {iv.tested!r} and {iv.baseline!r} share no tasks; nothing to compare")
    return paired


@dataclasses.dataclass(frozen=True)
class _PastLimit:
    """A look whose rows reached past the budget limit, taken at the limit instead (``past_limit = "at-limit"``)."""

    used: float
    """Budget used by all the observed tasks (past the limit)."""
    kept: int | None
    """Observed tasks kept: the first ones in the planned order up to the limit (None: all, the betting
    boundary being valid at every look)."""
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


def _limit_look(iv: _DecideInputs, paired: PairedOutcomes) -> tuple[PairedOutcomes, _PastLimit | None]:
    """The look the policy planned: rows past the budget limit are refused or cut at the limit.

    The budget used by the observed tasks is measured (never when the caller gives it: a given value
    is at most the limit). The betting boundary, valid at every look, keeps every row and only warns
    (``past-limit``) unless the policy refuses. The look is past the limit when the observed tasks without the last one
    (in the planned order; without an order, the most expensive one) already reach the limit: the
    first look at or over the limit is the planned one. Past the limit, ``past_limit = "refuse"``
    refuses the look; ``"at-limit"``
    keeps the shortest run of observed tasks, in the planned order, whose budget reaches the limit
    -- the look at the limit a live run would have taken -- and excludes the rows on later tasks
    (exclusion ``beyond-limit``). That needs the planned order; without one the look is refused.
    """
    policy = iv.policy
    limit, measure = policy.budget.limit, policy.budget.measure
    if iv.budget_used is not None or (measure == "task_fraction" and not iv.known):
        return paired, None
    used = measure_budget(paired, policy)
    if used <= limit * (1 + 1e-12) or paired.n_observed == 0:
        return paired, None
    spent = _task_budget(paired, policy)
    ordered = iv.universe is not None and iv.universe.ordered
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
    if iv.betting:  # valid at every look: the look stands, and the record says it is past the planned budget
        return paired, _PastLimit(used=used, kept=None, rows=0, tasks=0)
    universe = iv.universe
    if universe is None or not universe.ordered:
        raise ComparisonError(
            where + '; deciding at the limit (past_limit = "at-limit") needs the planned order to know which tasks came '
            "first: pass the `stopwise order` output or a tasks file (universe=read_task_universe(...), --tasks FILE)"
        )
    reached = np.cumsum(spent[order]) >= limit * (1 - 1e-12)
    kept = int(np.argmax(reached)) + 1
    last = int(paired.positions[order[kept - 1]])
    row_positions = universe.positions(iv.rows.task)
    beyond = row_positions > last
    rows = iv.rows.take(~beyond)
    cut = dataclasses.replace(iv, rows=rows)
    again = _paired(cut)
    exclusion = Exclusion.from_code("beyond-limit", rows=int(beyond.sum()), tasks=int(np.unique(row_positions[beyond]).size))
    again = dataclasses.replace(again, excluded=(*again.excluded, exclusion))
    return again, _PastLimit(used=used, kept=kept, rows=exclusion.rows, tasks=exclusion.tasks)


@dataclasses.dataclass(frozen=True)
class _Budget:
    """Where the look stands against the budget."""

    used: float
    """Budget used, in the policy's measure (given or measured)."""
    at_limit: bool
    """The budget is exhausted, or every one of the N known tasks is observed."""
    limit_unknown: bool
    """A task fraction without a universe: N, and so the limit, cannot be established."""


def _budget_state(iv: _DecideInputs, paired: PairedOutcomes) -> _Budget:
    """Budget used (the caller's, else measured from the rows) and whether the limit is reached."""
    limit = iv.policy.budget.limit
    if iv.budget_used is not None:  # an explicit value is never overridden
        return _Budget(used=iv.budget_used, at_limit=iv.budget_used >= limit * (1 - 1e-12), limit_unknown=False)
    limit_unknown = iv.policy.budget.measure == "task_fraction" and not iv.known
    used = measure_budget(paired, iv.policy)
    all_seen = iv.known and paired.n_observed == paired.n_shared
    return _Budget(used=used, at_limit=not limit_unknown and (used >= limit * (1 - 1e-12) or all_seen), limit_unknown=limit_unknown)


@dataclasses.dataclass(frozen=True)
class _Observed:
    """The observed tasks a boundary judges: all of them, or the betting boundary's observed prefix."""

    differences: np.ndarray
    """D_i of the judged tasks."""
    groups: np.ndarray
    """Their coverage groups."""
    waiting: int
    """Observed tasks beyond the longest observed prefix of the planned order (betting only)."""
    coverage: CoverageState
    """Coverage of the judged tasks."""
    covered: bool
    """At least one task is judged and coverage holds (or is not enforced)."""
    exceeds: bool
    """The mean difference exceeds the threshold (False when nothing is judged)."""

    @property
    def n(self) -> int:
        """How many tasks are judged."""
        return len(self.differences)


def _observed(iv: _DecideInputs, paired: PairedOutcomes) -> _Observed:
    """The judged tasks, their coverage and side of the threshold."""
    policy = iv.policy
    used_index = _prefix(paired) if iv.betting else np.arange(paired.n_observed)
    differences, groups = paired.differences[used_index], paired.groups[used_index]
    n = len(differences)
    # the top-up design judges coverage on every observed task (pi's prefix and the top-up tasks)
    judged = paired.groups if iv.betting and iv.betting_design.process == "top-up" else groups
    coverage = coverage_from_sizes(paired.universe_labels, paired.universe_sizes, judged, rule=policy.coverage.rule, slack=policy.coverage.slack)
    return _Observed(
        differences=differences,
        groups=groups,
        waiting=paired.n_observed - n,
        coverage=coverage,
        covered=n > 0 and (coverage.satisfied or not coverage_enforced(policy.coverage.rule)),
        exceeds=exceeds_threshold(differences, paired.lattice, policy.threshold) if n > 0 else False,
    )


@dataclasses.dataclass(frozen=True)
class _Look:
    """What a boundary made of the judged tasks."""

    action: Action
    """The action taken."""
    method: str
    """The tail method in words (``DecisionRecord.tail_method``)."""
    r_promote: float | None = None
    """Evidence against promotion (None when not computed)."""
    r_reject: float | None = None
    """Evidence against rejection (None when not computed)."""
    tail: TailProvenance | None = None
    """How the tails were computed (None when they were not)."""
    reason: str | None = None
    """The record's reason when the boundary words it itself (the top-up design); None: :func:`_reason`."""
    coverage: CoverageState | None = None
    """The coverage of the tasks the action rests on when the boundary chooses them (the top-up design); None:
    the judged tasks'."""
    warnings: tuple[DecisionWarning, ...] = ()
    """Warnings of the boundary's own (listed after the guards)."""
    top_up_left: int | None = None
    """Top-up tasks still to run before a crossed boundary may act (the top-up design); None otherwise."""
    top_up: tuple[str, ...] | None = None
    """Those tasks, in planned order (the record's ``top_up``)."""


def _betting_wor_look(iv: _DecideInputs, paired: PairedOutcomes, budget: _Budget, seen: _Observed) -> _Look:
    """The betting-wor boundary: a final action at any look once a p-value is at most a and coverage holds."""
    policy, universe = iv.policy, iv.universe
    assert universe is not None  # _decide_iv refuses the betting boundary without an ordered universe
    design = iv.betting_design
    notes = () if design.warning is None else (DecisionWarning("order-provenance", design.warning),)
    if design.process == "top-up":
        return dataclasses.replace(_top_up_look(iv, paired, budget, seen), warnings=notes)
    r_promote = r_reject = None
    method, tail = "betting-wor", None
    if seen.covered:
        # A uniform planned order makes the observed prefix a simple random sample of the N tasks: the pooled
        # process is valid and stronger. Any other order (coverage-aware, ...) picks groups predictably, so the
        # per-group (stratified) process is the valid one.
        stratified = design.process == "stratified"
        result = _powered_boundary(iv, paired, seen, stratified) if iv.powered is not None else betting_boundary(
            seen.differences,
            policy.threshold,
            population_size=paired.n_shared,
            alpha=policy.tail_cutoff,
            groups=seen.groups if stratified else None,
            group_sizes=universe.group_sizes if stratified else None,
            confidence_bounds=False,  # the record keeps the p-values; the bounds cost ~90 ms stratified
        )
        r_promote, r_reject, method = float(result.p_promote), float(result.p_reject), result.method
        tail = TailProvenance(method="betting-wor", lattice=paired.lattice)
    a = policy.tail_cutoff
    promote = seen.covered and r_promote is not None and r_promote <= a and r_promote <= (r_reject or 1.0)
    reject = seen.covered and not promote and r_reject is not None and r_reject <= a
    action: Action = "promote" if promote else "reject" if reject else "abstain" if budget.at_limit else "continue"
    return _Look(action=action, method=method, r_promote=r_promote, r_reject=r_reject, tail=tail, warnings=notes)


def _powered_boundary(iv: _DecideInputs, paired: PairedOutcomes, seen: _Observed, stratified: bool) -> BettingBoundary:
    """The pooled betting boundary on the prediction-powered differences of the judged prefix (:mod:`._predicted`)."""
    powered = iv.powered
    assert powered is not None and not stratified  # _powered refuses the stratified process
    index = _prefix(paired)
    return powered_boundary(
        seen.differences, powered.low[index], powered.high[index], iv.policy.threshold,
        population_size=paired.n_shared, alpha=iv.policy.tail_cutoff, scale=powered.scale, **_centre(iv, index),
    )  # fmt: skip


def _centre(iv: _DecideInputs, index: np.ndarray) -> dict[str, Any]:
    """The prediction-powered boundary's centre options of the policy (``[decision] predicted_centre``) on the prefix."""
    powered, policy = iv.powered, iv.policy
    assert powered is not None and powered.audit is not None
    audit = powered.audit
    tallies = AuditTallies(point=audit.point[index], wrong_low=audit.wrong_low[index], wrong_high=audit.wrong_high[index])
    return {"centre": policy.decision.predicted_centre, "audit": tallies, "audit_fraction": policy.early.audit_fraction}


def _powered_interval(iv: _DecideInputs, paired: PairedOutcomes, seen: _Observed) -> DifferenceInterval:
    """The prediction-powered confidence sequence of the judged prefix (:func:`stopwise.compare._predicted.powered_interval`)."""
    powered = iv.powered
    assert powered is not None
    index = _prefix(paired)
    return powered_interval(
        seen.differences, powered.low[index], powered.high[index],
        population_size=paired.n_shared, alpha=iv.policy.tail_cutoff, scale=powered.scale, **_centre(iv, index),
    )  # fmt: skip


def _top_up_look(iv: _DecideInputs, paired: PairedOutcomes, budget: _Budget, seen: _Observed) -> _Look:
    """The top-up design (:mod:`stopwise.compare._topup`): the pooled process on pi's observed prefix.

    Once a test has crossed at look tau, the action is issued when, for some L from tau to the observed
    prefix, pi's first L tasks and their fewest top-up tasks are all observed (coverage holds on that set,
    which the record's coverage describes); otherwise the reason and ``top_up`` name the crossing look's
    top-up tasks still to run (L = tau: fixed at the crossing, so the list only shrinks).
    The reason keeps tau and the p-value at tau.
    """
    policy, universe = iv.policy, iv.universe
    assert universe is not None and universe.tasks is not None and universe.groups is not None
    a = policy.tail_cutoff
    if seen.n == 0:
        return _Look(action="abstain" if budget.at_limit else "continue", method="betting-wor")
    result = _powered_boundary(iv, paired, seen, False) if iv.powered is not None else betting_boundary(
        seen.differences, policy.threshold, population_size=paired.n_shared, alpha=a, confidence_bounds=False
    )
    method = result.method.replace(", pooled)", ", pooled on a uniform order, coverage by top-up)")
    tail = TailProvenance(method="betting-wor", lattice=paired.lattice)
    level = math.log(1.0 / a)
    crossed = [np.flatnonzero(np.maximum.accumulate(log) >= level) for log in (result.log_capital_promote, result.log_capital_reject)]
    at = [int(c[0]) + 1 if len(c) else None for c in crossed]
    look = _Look(action="continue", method=method, r_promote=float(result.p_promote), r_reject=float(result.p_reject), tail=tail)
    if at[0] is None and at[1] is None:
        if budget.at_limit:
            return dataclasses.replace(look, action="abstain", reason="at the budget limit: the betting-wor boundary was not crossed (both p-values exceed a)")
        return dataclasses.replace(look, reason=f"betting-wor boundary not crossed on the first {seen.n} tasks of the planned order; budget remains")
    side = 0 if at[1] is None or (at[0] is not None and at[0] <= at[1]) else 1
    word: Action = "promote" if side == 0 else "reject"
    tau = at[side]
    assert tau is not None
    log_capital = (result.log_capital_promote, result.log_capital_reject)[side]
    p_tau = float(min(1.0, math.exp(-float(np.max(log_capital[:tau])))))
    crossing = (
        f"betting-wor boundary crossed at look {tau} of the planned order: anytime-valid p_{word} = {p_tau:.3g} <= a "
        f"(mean difference {'exceeds' if side == 0 else 'below'} the threshold)"
    )
    # The action rests on pi's first L tasks plus their fewest top-up, for some L from tau to the observed prefix
    # (monotone in the rows); otherwise it waits for the crossing look's top-up (:func:`top_up_check`).
    codes = np.searchsorted(np.asarray(paired.universe_labels), universe.groups)
    observed = np.zeros(universe.n_tasks, dtype=bool)
    observed[paired.positions] = True
    rule, slack = policy.coverage.rule, policy.coverage.slack
    check = top_up_check(codes, observed, np.asarray(paired.universe_sizes, dtype=np.int64), tau, seen.n, rule=rule, slack=slack)
    basis = check.basis
    if check.ready:
        coverage = coverage_from_sizes(paired.universe_labels, paired.universe_sizes, universe.groups[basis], rule=rule, slack=slack)
        where = f"; coverage met on the first {check.length} tasks of the planned order" + (f" and {len(check.extra)} top-up task(s)" if len(check.extra) else "")
        return dataclasses.replace(look, action=word, reason=crossing + where, coverage=coverage)
    # the coverage of the set the action waits on (required at its size): its missing groups are the top-up's
    waited = coverage_from_sizes(
        paired.universe_labels, paired.universe_sizes, universe.groups[basis[observed[basis]]], rule=rule, slack=slack, at=len(basis)
    )
    look = dataclasses.replace(look, coverage=waited)
    missing = universe.tasks[check.missing]
    shown = ", ".join(missing[:20].tolist()) + (f", ... ({len(missing)} in all)" if len(missing) > 20 else "")
    if budget.at_limit:
        return dataclasses.replace(look, action="abstain", reason=crossing + f"; at the budget limit without coverage ({len(missing)} top-up task(s) short)")
    return dataclasses.replace(
        look,
        reason=crossing + f"; coverage not yet met: run the {len(missing)} top-up task(s) {shown}, then decide again",
        top_up_left=len(missing),
        top_up=tuple(str(task) for task in missing),
    )


def _fixed_budget_look(iv: _DecideInputs, paired: PairedOutcomes, budget: _Budget, seen: _Observed) -> _Look:
    """The fixed-budget rule (Fig. 2): tails of the observed tasks; a final action only at the budget limit."""
    policy = iv.policy
    look = _Look(action="continue", method="none (forced: observed mean only)" if iv.forced else policy.tail_method)
    if seen.covered and policy.tail_method != "none":
        tails = tail_probabilities(
            seen.differences,
            policy.threshold,
            method=policy.tail_method,
            n_resamples=policy.bootstrap_resamples,
            rng=iv.rng,
            units=None if np.array_equal(paired.units, paired.tasks) else paired.units,
            population_size=paired.n_shared,
        )
        tail = TailProvenance(
            method=tails.used, resamples=tails.resamples, lattice=tails.lattice, fallback=tails.fallback is not None, why=tails.fallback
        )
        look = _Look(action="continue", method=tails.method, r_promote=tails.r_promote, r_reject=tails.r_reject, tail=tail)
    code = routine_actions(
        seen.covered,
        budget.at_limit,
        seen.exceeds,
        look.r_promote if look.r_promote is not None else 1.0,
        look.r_reject if look.r_reject is not None else 1.0,
        tail_cutoff=policy.tail_cutoff,
        forced=iv.forced,
    )
    return dataclasses.replace(look, action=ACTIONS[int(code)])


def _stratified_mean(paired: PairedOutcomes, seen: _Observed) -> float | None:
    """The group-weighted mean sum_g (n_g / N) mean_g of the judged tasks; None unless every group is observed."""
    labels, sizes = paired.universe_labels, paired.universe_sizes
    if len(labels) < 2:
        return None
    index = np.searchsorted(labels, seen.groups)
    if not np.array_equal(labels[np.minimum(index, len(labels) - 1)], seen.groups):
        return None
    counts = np.bincount(index, minlength=len(labels))
    if (counts == 0).any():
        return None
    means = np.bincount(index, weights=seen.differences, minlength=len(labels)) / counts
    return float((means * sizes).sum() / sizes.sum())


def _one_look_warnings(iv: _DecideInputs, paired: PairedOutcomes, seen: _Observed, look: _Look) -> list[DecisionWarning]:
    """Warnings about the fixed-budget rule's final action (issue 21): rare discordance, weighting, exact-wor's model."""
    policy = iv.policy
    out: list[DecisionWarning] = []
    if iv.betting or iv.forced or look.action not in ("promote", "reject") or seen.n == 0:
        return out
    n, big_n, d = seen.n, paired.n_shared, seen.differences
    method = policy.tail_method
    grouped_order = policy.order.kind != "uniform" and len(paired.universe_labels) > 1
    discordant = int(np.count_nonzero(d))
    if method in ("exact", "bootstrap", "normal") and discordant < RARE_DISCORDANCE and n < big_n:
        wins, losses = int((d > 0).sum()), int((d < 0).sum())
        risk = "; no exact figure for differences other than 0/±1 (averages of several attempts)"
        if paired.lattice == 1:
            try:
                p_promote, p_reject = exact_wor_pvalue(wins, losses, n, big_n, policy.threshold)
            except ArgumentError:
                pass
            else:
                p = p_promote if look.action == "promote" else p_reject
                risk = (
                    f"; measured risk: the exact one-look p-value of this sample (sampling n = {n} of N = {big_n} without "
                    f"replacement) is {p:.3g} against a = {policy.tail_cutoff:g}"
                )
        out.append(
            DecisionWarning(
                "rare-discordance",
                f"the fixed-budget rule will {look.action} on {discordant} discordant task(s) ({wins} wins, {losses} losses) "
                f"of {n}: with fewer than {RARE_DISCORDANCE} its {method} tail is not level a{risk}; "
                'tail_method = "exact-wor" keeps the level',
            )
        )
    stratified = _stratified_mean(paired, seen) if grouped_order else None
    if stratified is not None and (stratified > policy.threshold) != seen.exceeds:
        out.append(
            DecisionWarning(
                "unweighted-estimate",
                f"the {policy.order.kind} order draws tasks by group, so the unweighted mean {float(d.mean()):.4g} the "
                "fixed-budget rule uses (as the paper does) over-represents small groups; the group-weighted (stratified) "
                f"mean {stratified:.4g} lies on the other side of the threshold {policy.threshold:g}",
            )
        )
    if method == "exact-wor" and look.tail is not None and look.tail.fallback:
        out.append(DecisionWarning("exact-wor-fallback", f"exact-wor not used: {look.tail.why}"))
    if method == "exact-wor" and grouped_order:
        out.append(
            DecisionWarning(
                "not-random-sample",
                f"the exact-wor test assumes the observed tasks are a simple random sample of the N = {big_n} planned "
                f"tasks; a {policy.order.kind} order draws them by group, so its level is not guaranteed (use a uniform "
                "order with it)",
            )
        )
    return out


def _decision_warnings(
    iv: _DecideInputs,
    paired: PairedOutcomes,
    budget: _Budget,
    seen: _Observed,
    look: _Look,
    past: _PastLimit | None = None,
) -> list[DecisionWarning]:
    """The guards of the look, in the order the record lists them (:data:`stopwise.records.WARNING_CODES`)."""
    warnings = [DecisionWarning("no-groups", note) for note in paired.notes]

    def warn(code: WarningCode, message: str) -> None:
        warnings.append(DecisionWarning(code, message))

    n, policy = seen.n, iv.policy
    if iv.budget_used is not None and iv.known and not budget.at_limit and paired.n_observed == paired.n_shared:
        warn(
            "budget-below-limit",
            f"every one of the N = {paired.n_shared} tasks is observed, but the budget used given ({budget.used:g}) is below the limit",
        )
    if not iv.known:
        warn(
            "no-universe",
            f"no task universe: N = {paired.n_shared} and the groups are inferred from the rows (tasks with rows of both "
            "systems); pass the planned tasks or --n-tasks",
        )
    for e in paired.excluded:
        if e.code == "outside-universe":
            warn("outside-universe", f"{e.rows} row(s) on {e.tasks} task(s) outside the planned task universe were excluded")
    if seen.waiting:
        top_up = iv.betting and iv.betting_design.process == "top-up"
        warn(
            "waiting",
            f"{seen.waiting} observed task(s) lie beyond the longest observed prefix of the planned order "
            + (f"({n} tasks): they count for coverage (top-up), not for the boundary" if top_up else f"({n} tasks) and wait for the tasks before them"),
        )
    minimum = MIN_OBSERVED.get(policy.tail_method, 0)
    if not iv.betting and look.tail is not None and n < minimum:
        warn(
            "few-observed",
            f"only {n} paired tasks observed: {policy.tail_method} tails are unreliable below {minimum} "
            "(stopwise.compare.MIN_OBSERVED)",
        )
    d = seen.differences
    if n > 0 and not budget.at_limit and (bool((d > policy.threshold).all()) or bool((d <= policy.threshold).all())):
        warn(
            "one-sided",
            f"all {n} observed differences are {'above' if seen.exceeds else 'at or below'} the threshold this early: one "
            "tail is exactly 0, which the fixed-budget rule may use only at the budget limit",
        )
    warnings.extend(look.warnings)
    if past is not None and past.kept is None:
        warn(
            "past-limit",
            f"the rows reach past the budget limit ({past.used:g} used, limit {policy.budget.limit:g}, "
            f"{policy.budget.measure}): the betting-wor boundary is valid at every look, so this look uses them, but it "
            "lies past the planned budget",
        )
    elif past is not None:
        limit = policy.budget.limit
        warn(
            "past-limit",
            f"the rows reach past the budget limit ({past.used:g} used, limit {limit:g}, {policy.budget.measure}): the look "
            f"was taken at the limit, on the first {past.kept} observed task(s) of the planned order; {past.rows} row(s) on "
            f"{past.tasks} task(s) beyond it were excluded (past_limit = \"at-limit\")",
        )
    warnings.extend(_one_look_warnings(iv, paired, seen, look))
    if iv.powered is not None:
        disagreement = audit_disagreements(iv.rows, policy.early.audit_fraction, policy.early.audit_seed)
        if disagreement is not None:
            warn("audit-draw", disagreement)
    return warnings


def _interval(
    iv: _DecideInputs, paired: PairedOutcomes, budget: _Budget, seen: _Observed, look: _Look
) -> DifferenceInterval | None:
    """The interval for the mean difference matching the boundary (:mod:`stopwise.compare._interval`).

    Under ``betting-wor`` the anytime-valid confidence sequence of the judged prefix, at every look (its 0.01 grid is
    rounded outward; the look's own test at delta tightens the end it rejected to delta, so a promote's interval never
    reaches below the threshold nor a reject's above it). Under the
    fixed-budget rule the one-look interval of the tail method, at the budget limit only (the planned look;
    an interval at an earlier look would be exactly the repeated-look reading the rule forbids); none with
    tail method ``none``.
    """
    policy = iv.policy
    if seen.n == 0:
        return None
    if iv.betting:
        universe = iv.universe
        assert universe is not None
        stratified = iv.betting_design.process == "stratified"
        interval = _powered_interval(iv, paired, seen) if iv.powered is not None else betting_interval(
            seen.differences,
            population_size=paired.n_shared,
            alpha=policy.tail_cutoff,
            groups=seen.groups if stratified else None,
            group_sizes=universe.group_sizes if stratified else None,
        )
        a, delta = policy.tail_cutoff, policy.threshold
        low, high = interval.low, interval.high
        if look.r_promote is not None and look.r_promote <= a:
            low = max(low, delta)
        if look.r_reject is not None and look.r_reject <= a:
            high = min(high, delta)
        return interval.model_copy(update={"low": low, "high": high}) if low <= high else interval
    if iv.forced or not budget.at_limit:
        return None
    return one_look_interval(
        seen.differences,
        method=policy.tail_method,  # type: ignore[arg-type]  # "none" is iv.forced
        alpha=policy.tail_cutoff,
        population_size=paired.n_shared,
        n_resamples=policy.bootstrap_resamples,
        seed=policy.seed,
        units=None if np.array_equal(paired.units, paired.tasks) else paired.units,
    )


def _forecast(iv: _DecideInputs, paired: PairedOutcomes, budget: _Budget, seen: _Observed, look: _Look) -> RemainingForecast | None:
    """The remaining tasks a ``continue`` look is likely to need (:mod:`stopwise.compare._forecast`), seeded by ``policy.seed``."""
    if look.action != "continue" or budget.limit_unknown or seen.n == 0 or iv.powered is not None:
        return None
    policy = iv.policy
    if look.top_up_left is not None:  # crossed: the action waits for these tasks alone, whatever they show
        n = float(look.top_up_left)
        return RemainingForecast(median=n, low=n, high=n, decided_share=1.0, n_simulations=0, seed=policy.seed)
    limit = limit_in_tasks(policy, paired.n_observed, paired.n_shared, budget.used)
    plan = None
    if iv.betting and iv.betting_design.process == "top-up" and iv.universe is not None and iv.universe.groups is not None:
        codes = np.searchsorted(np.asarray(paired.universe_labels), iv.universe.groups)  # the crossing's top-up is simulated too
        plan = TopUpPlan(codes, np.asarray(paired.universe_sizes, dtype=np.int64), policy.coverage.rule, policy.coverage.slack)
    return remaining_forecast(
        seen.differences, policy=policy, population_size=paired.n_shared, limit_tasks=limit, n_simulations=FORECAST_SIMULATIONS,
        seed=policy.seed, top_up=plan,
    )  # fmt: skip


def _decision_record(
    iv: _DecideInputs,
    paired: PairedOutcomes,
    budget: _Budget,
    seen: _Observed,
    look: _Look,
    warnings: list[DecisionWarning],
    interval: DifferenceInterval | None = None,
    forecast: RemainingForecast | None = None,
    missing: MissingState | None = None,
) -> DecisionRecord:
    """The decision record of the look with its claim sentence, stamped with the current UTC time."""
    policy = iv.policy
    record = DecisionRecord(
        tested=iv.tested,
        baseline=iv.baseline,
        action=look.action,
        reason=look.reason
        or _reason(
            look.action,
            covered=seen.covered,
            enforce=coverage_enforced(policy.coverage.rule),
            n=seen.n,
            forced=iv.forced,
            missing=seen.coverage.missing_groups,
            possible=seen.coverage.possible,
            boundary=iv.boundary,
            limit_unknown=budget.limit_unknown,
        ),
        threshold=policy.threshold,
        tail_cutoff=policy.tail_cutoff,
        n_shared=paired.n_shared,
        n_observed=paired.n_observed,
        delta_hat=float(seen.differences.mean()) if seen.n else None,
        r_promote=look.r_promote,
        r_reject=look.r_reject,
        tail_method=look.method,
        tail=look.tail,
        budget=BudgetState(measure=policy.budget.measure, used=budget.used, limit=policy.budget.limit, at_limit=budget.at_limit),
        coverage=look.coverage or seen.coverage,
        excluded=list(paired.excluded),
        flagged=list(paired.flagged),
        policy_sha256=policy.sha256(),
        input_sha256=input_digest(iv.rows, (iv.tested, iv.baseline)),
        stopwise_version=__version__,
        boundary=iv.boundary,
        universe=_universe_state(paired, iv.universe, iv.complete),
        waiting=seen.waiting,
        warnings=[w.message for w in warnings],
        decided_at=datetime.now(UTC),
        interval=interval,
        forecast=forecast,
        predicted=_predicted_state(iv, paired),
        missing=missing,
        top_up=None if look.top_up is None or look.action != "continue" else list(look.top_up),
    )
    return record.model_copy(update={"claim": claim_sentence(record)})


def _predicted_state(iv: _DecideInputs, paired: PairedOutcomes) -> PredictedState | None:
    """The record's count of predicted, audited and corrected rows and the treatment (None: no such row, ``exclude``)."""
    policy = iv.policy
    if iv.powered is not None:
        used = iv.powered.used
    else:
        used = int(((iv.rows.status == "predicted") & _rows_on_tasks(iv.rows, paired.tasks)).sum()) if "predicted" in policy.statuses else 0
    return predicted_state(iv.rows, policy.decision.predicted, policy.early.audit_fraction, used)


def _usable_policy(iv: _DecideInputs) -> Policy:
    """The policy whose statuses say which rows are outcomes: under ``prediction-powered``, predicted rows too."""
    policy = iv.policy
    if iv.powered is None or "predicted" in policy.statuses:
        return policy
    return policy.model_copy(update={"statuses": [*policy.statuses, "predicted"]})


def _unknown_sides(missing: MissingTasks) -> MissingTasks:
    """``missing`` with both sides of every task unknown: its worst case is -1 (promote test) and +1 (reject test).

    Under ``prediction-powered`` the observed side of a missing task may be a predicted row, whose true outcome is
    only known to lie in [0, 1]; filling both sides at their extremes is the worst case whatever that side is.
    """
    both = np.ones(len(missing.tasks), dtype=bool)
    return dataclasses.replace(missing, tested=both, baseline=both)


def _fill_powered(iv: _DecideInputs, filled: PairedOutcomes, missing: MissingTasks, side: Literal["low", "high"]) -> _DecideInputs:
    """Under ``prediction-powered``, the inputs whose prediction-powered pairing holds the ready missing tasks at their worst case.

    A filled task enters as a known difference, -1 for the promote test (``side = "low"``) and +1 for the reject
    test: X_i = l_i = h_i = P_i = that value, no audited wrong weight. The worst-case argument of
    :mod:`stopwise.compare._missing` fills the population with values no better (no worse) than the truth; on that
    fixed population the prediction-powered proof (:mod:`stopwise.compare._predicted`) holds as on any other, the
    filled tasks being tasks without predicted rows. That needs the errors independent of the planned order (as
    without predictions) and of the audit draw (whether a run errors must not depend on whether it was audited:
    an audited run is never halted, so errors that strike only long runs would bias the other runs' audit
    correction). ``filled`` is :func:`fill_missing`'s pairing on ``side`` (both sides unknown: :func:`_unknown_sides`);
    the arrays are appended in its order.
    """
    powered = iv.powered
    keep = missing.ready
    if powered is None or not keep.any():
        return iv
    value = np.full(int(keep.sum()), -1.0 if side == "low" else 1.0)
    none = np.zeros(len(value))
    audit = powered.audit
    tallies = None if audit is None else AuditTallies(
        point=np.r_[audit.point, value], wrong_low=np.r_[audit.wrong_low, none], wrong_high=np.r_[audit.wrong_high, none]
    )  # fmt: skip
    grown = dataclasses.replace(powered, paired=filled, low=np.r_[powered.low, value], high=np.r_[powered.high, value], audit=tallies)
    return dataclasses.replace(iv, powered=grown)


def _missing_decide(
    iv: _DecideInputs, paired: PairedOutcomes, past: _PastLimit | None, missing: MissingTasks, forecast: bool
) -> DecisionRecord:
    """The betting look under ``[decision] missing = "worst-case"`` or ``"exclude"`` (:mod:`stopwise.compare._missing`).

    ``worst-case``: the promote test judges the sequence with every ready missing task at its lowest difference, the
    reject test the one at its highest (:func:`stopwise.compare._missing.combine_looks`), and the interval takes its
    low end from the first, its high end from the second. ``exclude``: the boundary judges the planned universe without
    them (the order's provenance judged on the full one). The record keeps the real pairs (N, observed, exclusions).
    """
    if missing.treatment == "exclude":
        assert iv.universe is not None
        design = iv.betting_design  # the order's provenance, judged on the full planned order
        smaller, reduced = exclude_missing(paired, iv.universe, missing)
        treated = dataclasses.replace(iv, universe=reduced)
        treated.__dict__["betting_design"] = design  # cached_property: the reduced order is the same draw
        budget = _budget_state(treated, smaller)
        seen = _observed(treated, smaller)
        look = _betting_wor_look(treated, smaller, budget, seen)
        gone = np.sort(missing.positions[missing.ready])
        judged = int(np.count_nonzero(gone - np.arange(len(gone)) < seen.n))
        interval = _interval(treated, smaller, budget, seen, look)
        remaining = _forecast(treated, smaller, budget, seen, look) if forecast else None
        exclusion = Exclusion.from_code("missing", rows=0, tasks=len(gone))
        paired = dataclasses.replace(paired, excluded=(*paired.excluded, exclusion)) if len(gone) else paired
    else:
        filling = missing if iv.powered is None else _unknown_sides(missing)
        low, high = fill_missing(paired, filling, "low"), fill_missing(paired, filling, "high")
        iv_low, iv_high = _fill_powered(iv, low, missing, "low"), _fill_powered(iv, high, missing, "high")
        budget = _budget_state(iv, low)
        seen_low, seen_high = _observed(iv_low, low), _observed(iv_high, high)
        looks = (_betting_wor_look(iv_low, low, budget, seen_low), _betting_wor_look(iv_high, high, budget, seen_high))
        look = combine_looks(*looks, alpha=iv.policy.tail_cutoff, at_limit=budget.at_limit)
        seen = seen_high if look.action == "reject" else seen_low
        judged = int(np.count_nonzero(missing.positions[missing.ready] < seen.n))
        interval = _interval(iv_low, low, budget, seen_low, look)
        upper = _interval(iv_high, high, budget, seen_high, look)
        if interval is not None and upper is not None and interval.low <= upper.high:
            interval = interval.model_copy(update={"high": upper.high})
        remaining = _forecast(iv_low, low, budget, seen_low, look) if forecast else None
    warnings = _decision_warnings(iv, paired, budget, seen, look, past)
    warnings.append(missing_warning(missing, judged, iv.tested, iv.baseline))
    return _decision_record(iv, paired, budget, seen, look, warnings, interval, remaining, missing.state(judged))


def decide(
    rows: pd.DataFrame | OutcomeColumns,
    tested: str,
    baseline: str,
    policy: Policy | None = None,
    *,
    universe: TaskUniverse | None = None,
    budget_used: float | None = None,
    complete: bool = False,
    rng: np.random.Generator | int | None = None,
    forecast: bool = True,
) -> DecisionRecord:
    """Turn the outcomes seen so far into a decision record (ParEvalLayer Fig. 2).

    The task universe is an input, never inferred: with ``universe`` (the planned tasks, from
    :func:`stopwise.read_task_universe` or :meth:`stopwise.TaskUniverse.from_counts`), N, the
    coverage requirements r_g over the PLANNED groups (groups with no rows yet included) and the
    task fraction come from it; rows on tasks outside it are excluded and counted (and warned
    about). Without one, the tasks with rows of both systems stand in for T, and no final action
    is taken before the budget limit is established -- the action is ``continue`` and the reason
    names the missing universe -- unless the caller declares the record complete
    (``complete=True``: a finished record replayed; then T is the shared tasks and the limit is
    reached when every one is observed). An explicit ``budget_used`` at the limit also ends the
    evaluation (the caller says the limit is reached).

    Parameters
    ----------
    rows : OutcomeColumns or pandas.DataFrame
        Outcome rows (:func:`stopwise.read_outcomes`, :func:`stopwise.outcome_columns`); a
        frame built in Python is validated like a file (as :func:`stopwise.outcome_columns` does). Only rows of the policy's statuses are used;
        the rest are excluded and counted in the record.
    tested, baseline : str
        The tested system A and the baseline B.
    policy : Policy, optional
        The comparison policy (default: the paper's primary policy).
    universe : TaskUniverse, optional
        The planned tasks. ``boundary = "betting-wor"`` needs one with task names (the planned
        order); a universe from counts is refused.
    budget_used : float, optional
        Budget used so far in the policy's measure, >= 0 and at most the policy's limit; computed
        from the rows when omitted (observed fraction of N or count, or summed ``cost_usd`` /
        ``elapsed_s``). An explicit value is never overridden.
    complete : bool, optional
        The rows are a finished record: every shared task is the whole universe (used by replay
        of completed records). Ignored when ``universe`` is given.
    rng : numpy.random.Generator or int, optional
        Generator of the Monte-Carlo bootstrap; default ``policy.seed``.
    forecast : bool, optional
        Attach the remaining-tasks forecast to a ``continue`` record (a seeded predictive replay, seed
        ``policy.seed``; about 10-60 ms, more with ``exact-wor``); False leaves it out (replays of many looks).

    Returns
    -------
    DecisionRecord
        With ``decided_at`` set to the current UTC time (the only field that differs between two
        runs on the same input; it is excluded from :meth:`stopwise.DecisionRecord.digest`).

    Raises
    ------
    ComparisonError
        A system is absent, they coincide, the rows do not fit the universe, the budget cannot be
        measured or ``budget_used`` is invalid, or the betting boundary lacks a planned order.
    ValidationError
        A frame passed from Python breaks the outcome contract.

    Examples
    --------
    >>> import stopwise
    >>> rows = stopwise.outcome_columns(
    ...     [{"system": "A", "task": f"t{i}", "outcome": 1, "group": "g"} for i in range(40)]
    ...     + [{"system": "B", "task": f"t{i}", "outcome": int(i < 10), "group": "g"} for i in range(40)])
    >>> stopwise.decide(rows, "A", "B").action  # no universe: the 40 tasks need not be all of it
    'continue'
    >>> universe = stopwise.TaskUniverse([f"t{i}" for i in range(40)], ["g"] * 40)
    >>> record = stopwise.decide(rows, "A", "B", universe=universe)
    >>> record.action, record.delta_hat, record.r_promote < 1e-12, record.universe.n_tasks
    ('promote', 0.75, True, 40)
    >>> stopwise.decide(rows, "A", "B", universe=stopwise.TaskUniverse.from_counts(400)).action
    'continue'
    """
    iv = _powered(_decide_iv(rows, tested, baseline, policy, universe, budget_used, complete, rng))
    paired, past = _limit_look(iv, _paired(iv))
    missing = find_missing(iv.rows, paired, _usable_policy(iv), iv.universe) if iv.betting and iv.universe is not None else None
    if missing is not None and missing.treatment != "wait":
        return _missing_decide(iv, paired, past, missing, forecast)
    budget = _budget_state(iv, paired)
    seen = _observed(iv, paired)
    look = _betting_wor_look(iv, paired, budget, seen) if iv.betting else _fixed_budget_look(iv, paired, budget, seen)
    warnings = _decision_warnings(iv, paired, budget, seen, look, past)
    interval = _interval(iv, paired, budget, seen, look)
    remaining = _forecast(iv, paired, budget, seen, look) if forecast else None
    if missing is not None:  # wait: the prefix stops at the first of them; the record says which they are
        warnings.append(missing_warning(missing, 0, iv.tested, iv.baseline))
    return _decision_record(iv, paired, budget, seen, look, warnings, interval, remaining, None if missing is None else missing.state())
