"""Prediction-powered looks of :func:`stopwise.decide`: the pairing of predicted rows and the boundary on the judged prefix.

Under ``[decision] predicted = "prediction-powered"`` (:mod:`stopwise.compare._predicted`, which holds the estimator
and its proof) ``decide`` pairs the prediction-powered values instead of the outcomes (:func:`powered_inputs`),
and the betting boundary's pooled process judges their observed prefix (:func:`prefix_boundary`,
:func:`prefix_interval`). A missing task under ``missing = "worst-case"`` enters the pairing as a known
difference at its worst case (:func:`fill_powered`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import numpy as np

from stopwise.compare._betting import BettingBoundary
from stopwise.compare._bounded import bounded_boundary, bounded_interval, bounded_note, bounded_pairs
from stopwise.compare._missing import MissingTasks
from stopwise.compare._pairing import PairedOutcomes, _rows_on_tasks
from stopwise.compare._predicted import AuditTallies, powered_boundary, powered_interval, powered_pairs, predicted_state
from stopwise.compare._state import DecideInputs, DecideState, paired_outcomes
from stopwise.compare._tuned import tuned_boundary, tuned_interval
from stopwise.compare._tuned_pairs import audit_rule_of, tuned_note, tuned_pairs
from stopwise.errors import ComparisonError
from stopwise.records import DifferenceInterval, OutcomeColumns, Policy, PredictedState

__all__ = ["fill_powered", "powered_inputs", "predicted_state_of", "prefix_boundary", "prefix_interval", "unknown_sides", "usable_policy"]


def powered_inputs(inputs: DecideInputs) -> DecideInputs:
    """Under ``predicted = "prediction-powered"``: the inputs with the prediction-powered pairing (:mod:`._predicted`).

    The treatment rests on the pooled betting boundary (a uniform planned order); the one-look fixed-budget tails
    are refused (their finite-population corrections would use the noisy past sums as exact).
    """
    policy = inputs.policy
    treatment = policy.decision.predicted
    if policy.early.audit_coupling == "antithetic" and treatment != "prediction-powered-tuned":
        raise ComparisonError('[early] audit_coupling = "antithetic" needs [decision] predicted = "prediction-powered-tuned"')
    if treatment == "exclude":
        if policy.early.audit_rule == "active":
            raise ComparisonError('[early] audit_rule = "active" needs [decision] predicted = "prediction-powered-tuned"')
        return inputs
    if treatment in ("prediction-powered", "bounded") and policy.early.audit_rule == "active":
        raise ComparisonError(
            '[early] audit_rule = "active" audits each run with its own probability; the uniform-rho correction of predicted = '
            '"prediction-powered" does not take it: use predicted = "prediction-powered-tuned"'
        )
    if inputs.boundary != "betting-wor":
        raise ComparisonError(
            f'[decision] predicted = "{treatment}" needs boundary = "betting-wor" (an anytime-valid boundary on a '
            "uniform planned order); the fixed-budget tails do not take the audit correction"
        )
    if not inputs.rule.takes_predictions:
        raise ComparisonError(
            f'[decision] predicted = "{treatment}" runs the pooled betting process on a uniform planned order (with '
            'the coverage rule: [betting] design = "top-up"); this order needs the stratified process, which does not take it'
        )
    statuses = tuple(dict.fromkeys((*policy.statuses, "predicted")))

    def pair(rows: OutcomeColumns) -> PairedOutcomes:
        return paired_outcomes(inputs.replace(rows=rows), statuses)

    if treatment == "prediction-powered-tuned":
        return inputs.replace(powered=tuned_pairs(inputs.rows, inputs.tested, policy, pair, inputs.baseline)[0])
    if treatment == "bounded":
        return inputs.replace(powered=bounded_pairs(inputs.rows, policy, pair))
    return inputs.replace(powered=powered_pairs(inputs.rows, inputs.tested, policy.early.audit_fraction, pair))


def usable_policy(inputs: DecideInputs) -> Policy:
    """The policy whose statuses say which rows are outcomes: under ``prediction-powered``, predicted rows too."""
    policy = inputs.policy
    if inputs.powered is None or "predicted" in policy.statuses:
        return policy
    return policy.model_copy(update={"statuses": [*policy.statuses, "predicted"]})


def _centre(state: DecideState) -> dict[str, Any]:
    """The prediction-powered boundary's centre options of the policy (``[decision] predicted_centre``) on the prefix."""
    powered, policy, index = state.inputs.powered, state.policy, state.observed.index
    assert powered is not None and powered.audit is not None
    audit = powered.audit
    tallies = AuditTallies(point=audit.point[index], wrong_low=audit.wrong_low[index], wrong_high=audit.wrong_high[index])
    return {"centre": policy.decision.predicted_centre, "audit": tallies, "audit_fraction": policy.early.audit_fraction}


def _tuned(state: DecideState) -> tuple[Any, Any] | None:
    """Under ``prediction-powered-tuned``: the prefix's audit tallies and the policy's audit rule (None otherwise)."""
    if state.policy.decision.predicted != "prediction-powered-tuned":
        return None
    powered, index = state.inputs.powered, state.observed.index
    assert powered is not None and powered.audit is not None
    audit = powered.audit
    return AuditTallies(
        point=audit.point[index], wrong_low=audit.wrong_low[index], wrong_high=audit.wrong_high[index]
    ), audit_rule_of(state.policy)


def prefix_boundary(state: DecideState) -> BettingBoundary:
    """The pooled betting boundary on the prediction-powered differences of the judged prefix (:mod:`._predicted`, :mod:`._tuned`)."""
    powered, index = state.inputs.powered, state.observed.index
    assert powered is not None
    if state.policy.decision.predicted == "bounded":
        return bounded_boundary(
            state.observed.differences, state.policy.threshold, state.policy.early.halt_error_bound,
            population_size=state.paired.n_shared, alpha=state.policy.tail_cutoff,
        )  # fmt: skip
    tuned = _tuned(state)
    if tuned is not None:
        return tuned_boundary(
            state.observed.differences, powered.low[index], powered.high[index], tuned[0], state.policy.threshold,
            population_size=state.paired.n_shared, alpha=state.policy.tail_cutoff, rule=tuned[1],
        )  # fmt: skip
    return powered_boundary(
        state.observed.differences, powered.low[index], powered.high[index], state.policy.threshold,
        population_size=state.paired.n_shared, alpha=state.policy.tail_cutoff, scale=powered.scale, **_centre(state),
    )  # fmt: skip


def prefix_interval(state: DecideState) -> DifferenceInterval:
    """The prediction-powered confidence sequence of the judged prefix (:func:`stopwise.compare._predicted.powered_interval`)."""
    powered, index = state.inputs.powered, state.observed.index
    assert powered is not None
    if state.policy.decision.predicted == "bounded":
        return bounded_interval(
            state.observed.differences, state.policy.early.halt_error_bound,
            population_size=state.paired.n_shared, alpha=state.policy.tail_cutoff,
        )  # fmt: skip
    tuned = _tuned(state)
    if tuned is not None:
        return tuned_interval(
            state.observed.differences, powered.low[index], powered.high[index], tuned[0],
            population_size=state.paired.n_shared, alpha=state.policy.tail_cutoff, rule=tuned[1],
        )  # fmt: skip
    return powered_interval(
        state.observed.differences, powered.low[index], powered.high[index],
        population_size=state.paired.n_shared, alpha=state.policy.tail_cutoff, scale=powered.scale, **_centre(state),
    )  # fmt: skip


def predicted_state_of(inputs: DecideInputs, paired: PairedOutcomes) -> PredictedState | None:
    """The record's count of predicted, audited and corrected rows and the treatment (None: no such row, ``exclude``)."""
    policy = inputs.policy
    if inputs.powered is not None:
        used = inputs.powered.used
    else:
        used = (
            int(((inputs.rows.status == "predicted") & _rows_on_tasks(inputs.rows, paired.tasks)).sum())
            if "predicted" in policy.statuses
            else 0
        )
    state = predicted_state(inputs.rows, policy.decision.predicted, policy.early.audit_fraction, used)
    if state is not None and policy.decision.predicted == "prediction-powered-tuned":
        state = state.model_copy(update={"note": tuned_note(audit_rule_of(policy))})
    if state is not None and policy.decision.predicted == "bounded":
        state = state.model_copy(update={"note": bounded_note(policy.early.halt_error_bound)})
    return state


def unknown_sides(missing: MissingTasks) -> MissingTasks:
    """``missing`` with both sides of every task unknown: its worst case is -1 (promote test) and +1 (reject test).

    Under ``prediction-powered`` the observed side of a missing task may be a predicted row, whose true outcome is
    only known to lie in [0, 1]; filling both sides at their extremes is the worst case whatever that side is.
    """
    both = np.ones(len(missing.tasks), dtype=bool)
    return dataclasses.replace(missing, tested=both, baseline=both)


def fill_powered(
    inputs: DecideInputs, filled: PairedOutcomes, missing: MissingTasks, side: Literal["low", "high"]
) -> DecideInputs:
    """Under ``prediction-powered``, the inputs whose prediction-powered pairing holds the ready missing tasks at their worst case.

    A filled task enters as a known difference, -1 for the promote test (``side = "low"``) and +1 for the reject
    test: X_i = l_i = h_i = P_i = that value, no audited wrong weight. The worst-case argument of
    :mod:`stopwise.compare._missing` fills the population with values no better (no worse) than the truth; on that
    fixed population the prediction-powered proof (:mod:`stopwise.compare._predicted`) holds as on any other, the
    filled tasks being tasks without predicted rows. That needs the errors independent of the planned order (as
    without predictions) and of the audit draw (whether a run errors must not depend on whether it was audited:
    an audited run is never halted, so errors that strike only long runs would bias the other runs' audit
    correction). ``filled`` is :func:`stopwise.compare._missing.fill_missing`'s pairing on ``side`` (both sides
    unknown: :func:`unknown_sides`); the arrays are appended in its order.
    """
    powered = inputs.powered
    keep = missing.ready
    if powered is None or not keep.any():
        return inputs
    value = np.full(int(keep.sum()), -1.0 if side == "low" else 1.0)
    none = np.zeros(len(value))
    audit = powered.audit
    tallies = None if audit is None else AuditTallies(
        point=np.r_[audit.point, value], wrong_low=np.r_[audit.wrong_low, none], wrong_high=np.r_[audit.wrong_high, none]
    )  # fmt: skip
    grown = dataclasses.replace(
        powered, paired=filled, low=np.r_[powered.low, value], high=np.r_[powered.high, value], audit=tallies
    )
    return inputs.replace(powered=grown)
