"""The decision record of a look: its guards (warnings), its reason, its forecast, digests and claim sentence.

:func:`decision_record` writes what :func:`stopwise.decide` found (the state of the look, the boundary's
:class:`stopwise.compare._boundaries.Look`, the interval) into a :class:`stopwise.DecisionRecord`, stamped with the
current UTC time. The guards of :func:`decision_warnings` are the record's warnings, in the order
:data:`stopwise.records.WARNING_CODES` lists them.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from stopwise._version import __version__
from stopwise.compare._boundaries import Look
from stopwise.compare._bounded import bounded_warning
from stopwise.compare._claim import claim_sentence
from stopwise.compare._coverage import coverage_enforced
from stopwise.compare._estimand import estimand_of
from stopwise.compare._forecast import FORECAST_SIMULATIONS, TopUpPlan, limit_in_tasks, remaining_forecast
from stopwise.compare._pairing import PairedOutcomes, _rows_of_systems, as_columns
from stopwise.compare._powered import predicted_state_of
from stopwise.compare._predicted import audit_disagreements
from stopwise.compare._state import DecideState, PastLimit
from stopwise.compare._tuned_pairs import audit_probabilities, break_even_advice
from stopwise.records import (
    OUTCOME_COLUMNS,
    TEXT_COLUMNS,
    Action,
    BudgetState,
    CoverageState,
    DecisionRecord,
    DecisionWarning,
    DifferenceInterval,
    MissingState,
    OutcomeColumns,
    RemainingForecast,
    TaskUniverse,
    UniverseState,
    WarningCode,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["decision_record", "decision_warnings", "forecast_of", "input_digest", "reason"]


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


def reason(state: DecideState, action: Action) -> str:
    """Why the look took ``action``: nothing observed, coverage missing, no universe, else the boundary's words."""
    policy, seen = state.policy, state.observed
    end = "; budget exhausted" if action == "abstain" else "; budget remains"
    if seen.n == 0:
        return "no paired outcomes observed yet" + ("; budget exhausted" if action == "abstain" else "")
    if coverage_enforced(policy.coverage.rule) and not seen.covered and not _tops_up(state):
        why = (
            "coverage requirement impossible at this count (sum of required counts exceeds observed tasks)"
            if not seen.coverage.possible
            else "coverage missing for group(s) " + ", ".join(repr(g) for g in seen.coverage.missing_groups[:10])
        )
        return why + end
    if action == "continue" and state.budget.limit_unknown:
        return (
            "no task universe given: N and the planned groups are unknown, so the tasks with rows cannot be taken as the "
            "whole benchmark and the budget limit cannot be established; pass the planned tasks (universe=, --tasks or "
            "--n-tasks) or declare a finished record complete (complete=True, --complete)"
        )
    return state.rule.reason(state, action)


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


def decision_warnings(state: DecideState, look: Look, past: PastLimit | None = None) -> list[DecisionWarning]:
    """The guards of the look, in the order the record lists them (:data:`stopwise.records.WARNING_CODES`)."""
    inputs, paired, budget, seen = state.inputs, state.paired, state.budget, state.observed
    warnings = [DecisionWarning("no-groups", note) for note in paired.notes]

    def warn(code: WarningCode, message: str) -> None:
        warnings.append(DecisionWarning(code, message))

    n, policy = seen.n, state.policy
    if inputs.budget_used is not None and inputs.known and not budget.at_limit and paired.n_observed == paired.n_shared:
        warn(
            "budget-below-limit",
            f"every one of the N = {paired.n_shared} tasks is observed, but the budget used given ({budget.used:g}) is below the limit",
        )
    if not inputs.known:
        warn(
            "no-universe",
            f"no task universe: N = {paired.n_shared} and the groups are inferred from the rows (tasks with rows of both "
            "systems); pass the planned tasks or --n-tasks",
        )
    for e in paired.excluded:
        if e.code == "outside-universe":
            warn("outside-universe", f"{e.rows} row(s) on {e.tasks} task(s) outside the planned task universe were excluded")
    if seen.waiting:
        top_up = inputs.anytime and state.rule.coverage_on_observed
        warn(
            "waiting",
            f"{seen.waiting} observed task(s) lie beyond the longest observed prefix of the planned order "
            + (f"({n} tasks): they count for coverage (top-up), not for the boundary" if top_up else f"({n} tasks) and wait for the tasks before them"),
        )
    if n < look.min_observed:
        warn(
            "few-observed",
            f"only {n} paired tasks observed: {policy.tail_method} tails are unreliable below {look.min_observed} "
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
    warnings.extend(look.action_warnings)
    if inputs.powered is not None and policy.decision.predicted == "bounded":
        warn("bounded-treatment", bounded_warning(policy.early.halt_error_bound))
    elif inputs.powered is not None:
        recorded = audit_probabilities(inputs.rows) if policy.decision.predicted == "prediction-powered-tuned" else None
        disagreement = audit_disagreements(
            inputs.rows, policy.early.audit_fraction, policy.early.audit_seed, recorded,
            tested=inputs.tested, coupling=policy.early.audit_coupling,
        )  # fmt: skip
        if disagreement is not None:
            warn("audit-draw", disagreement)
        advice = break_even_advice(inputs.rows, inputs.tested, inputs.baseline, policy)
        if advice is not None:
            warn("halting-break-even", advice)
    return warnings


def forecast_of(state: DecideState, look: Look) -> RemainingForecast | None:
    """The remaining tasks a ``continue`` look is likely to need (:mod:`stopwise.compare._forecast`), seeded by ``policy.seed``."""
    paired, budget, seen, policy = state.paired, state.budget, state.observed, state.policy
    if look.action != "continue" or budget.limit_unknown or seen.n == 0 or state.inputs.powered is not None:
        return None
    if look.top_up_left is not None:  # crossed: the action waits for these tasks alone, whatever they show
        n = float(look.top_up_left)
        return RemainingForecast(median=n, low=n, high=n, decided_share=1.0, n_simulations=0, seed=policy.seed)
    limit = limit_in_tasks(policy, paired.n_observed, paired.n_shared, budget.used)
    universe, plan = state.inputs.universe, None
    if state.inputs.anytime and state.inputs.rule.coverage_on_observed and universe is not None and universe.groups is not None:
        # the top-up design (it judges coverage on every observed task): the crossing's top-up is simulated too
        codes = np.searchsorted(np.asarray(paired.universe_labels), universe.groups)
        plan = TopUpPlan(codes, np.asarray(paired.universe_sizes, dtype=np.int64), policy.coverage.rule, policy.coverage.slack)
    return remaining_forecast(
        seen.differences, policy=policy, population_size=paired.n_shared, limit_tasks=limit, n_simulations=FORECAST_SIMULATIONS,
        seed=policy.seed, top_up=plan,
    )  # fmt: skip


def _tops_up(state: DecideState) -> bool:
    """The betting boundary's top-up design: coverage is met after the crossing, by top-up, not by the prefix."""
    return state.inputs.anytime and state.rule.coverage_on_observed


def _coverage(state: DecideState, look: Look) -> CoverageState:
    """The coverage the action waits on (issue 35).

    A crossed top-up look's own (its top-up's groups); before the top-up design's crossing no group (the prefix's
    counts kept, its groups below quota not listed: the evaluation runs the planned order, and the crossing names its
    top-up); otherwise the observed tasks'.
    """
    coverage = look.coverage or state.observed.coverage
    if look.action == "continue" and look.top_up is None and _tops_up(state) and coverage.missing_groups:
        return coverage.model_copy(update={"missing_groups": []})
    return coverage


def decision_record(
    state: DecideState,
    look: Look,
    warnings: list[DecisionWarning],
    *,
    interval: DifferenceInterval | None,
    forecast: RemainingForecast | None,
    missing: MissingState | None,
) -> DecisionRecord:
    """The decision record of the look with its claim sentence, stamped with the current UTC time.

    ``state`` holds the record's pairing (under ``missing = "worst-case"``: the real pairs, with the judged tasks of
    the sequence the action rests on).
    """
    inputs, paired, budget, seen, policy = state.inputs, state.paired, state.budget, state.observed, state.policy
    record = DecisionRecord(
        tested=inputs.tested,
        baseline=inputs.baseline,
        action=look.action,
        reason=look.reason or reason(state, look.action),
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
        coverage=_coverage(state, look),
        excluded=list(paired.excluded),
        flagged=list(paired.flagged),
        policy_sha256=policy.sha256(),
        input_sha256=input_digest(inputs.rows, (inputs.tested, inputs.baseline)),
        stopwise_version=__version__,
        boundary=inputs.boundary,
        universe=_universe_state(paired, inputs.universe, inputs.complete),
        waiting=seen.waiting,
        warnings=[w.message for w in warnings],
        decided_at=datetime.now(UTC),
        interval=interval,
        forecast=forecast,
        predicted=predicted_state_of(inputs, paired),
        missing=missing,
        top_up=None if look.top_up is None or look.action != "continue" else list(look.top_up),
        estimand=estimand_of(state, interval),
    )
    return record.model_copy(update={"claim": claim_sentence(record)})
