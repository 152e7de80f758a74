"""The look of :func:`stopwise.decide` on planned tasks with a missing outcome, as ``[decision] missing`` says.

The treatments and why they keep the boundary valid are :mod:`stopwise.compare._missing`'s; this module runs the
boundary's rule on the treated sequences and writes the record (``missing = "wait"`` needs no second look: the
observed prefix simply stops at the first missing task).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from stopwise.compare._missing import MissingTasks, combine_looks, exclude_missing, fill_missing, missing_warning
from stopwise.compare._pairing import PairedOutcomes
from stopwise.compare._powered import fill_powered, unknown_sides
from stopwise.compare._record import decision_record, decision_warnings, forecast_of
from stopwise.compare._state import DecideInputs, DecideState, PastLimit, budget_state, look_state
from stopwise.records import DecisionRecord, Exclusion

__all__ = ["missing_decide"]


def _excluded(inputs: DecideInputs, paired: PairedOutcomes, past: PastLimit | None, missing: MissingTasks, forecast: bool) -> DecisionRecord:
    """``exclude``: the boundary judges the planned universe without the ready missing tasks.

    The order's provenance is judged on the full planned order (the rule is built before the universe shrinks:
    the reduced order is the same draw); the record keeps the real pairs (N, observed, exclusions).
    """
    assert inputs.universe is not None
    rule = inputs.rule  # judged on the full planned order, kept by replace()
    smaller, reduced = exclude_missing(paired, inputs.universe, missing)
    treated = look_state(inputs.replace(universe=reduced), smaller)
    look = rule.look(treated)
    gone = np.sort(missing.positions[missing.ready])
    judged = int(np.count_nonzero(gone - np.arange(len(gone)) < treated.observed.n))
    interval = rule.interval(treated, look)
    remaining = forecast_of(treated, look) if forecast else None
    exclusion = Exclusion.from_code("missing", rows=0, tasks=len(gone))
    paired = dataclasses.replace(paired, excluded=(*paired.excluded, exclusion)) if len(gone) else paired
    state = DecideState(inputs, paired, treated.budget, treated.observed)
    warnings = decision_warnings(state, look, past)
    warnings.append(missing_warning(missing, judged, inputs.tested, inputs.baseline))
    return decision_record(state, look, warnings, interval=interval, forecast=remaining, missing=missing.state(judged))


def _worst_case(inputs: DecideInputs, paired: PairedOutcomes, past: PastLimit | None, missing: MissingTasks, forecast: bool) -> DecisionRecord:
    """``worst-case``: each test judges the sequence with the ready missing tasks at its worst case.

    The promote test judges the sequence with every ready missing task at its lowest difference, the reject test the
    one at its highest (:func:`stopwise.compare._missing.combine_looks`); the interval takes its low end from the
    first, its high end from the second. The record keeps the real pairs.
    """
    filling = missing if inputs.powered is None else unknown_sides(missing)
    low, high = fill_missing(paired, filling, "low"), fill_missing(paired, filling, "high")
    budget = budget_state(inputs, low)
    low_state = look_state(fill_powered(inputs, low, missing, "low"), low, budget)
    high_state = look_state(fill_powered(inputs, high, missing, "high"), high, budget)
    rule = inputs.rule
    look = combine_looks(rule.look(low_state), rule.look(high_state), alpha=inputs.policy.tail_cutoff, at_limit=budget.at_limit)
    seen = high_state.observed if look.action == "reject" else low_state.observed
    judged = int(np.count_nonzero(missing.positions[missing.ready] < seen.n))
    interval = rule.interval(low_state, look)
    upper = rule.interval(high_state, look)
    if interval is not None and upper is not None and interval.low <= upper.high:
        interval = interval.model_copy(update={"high": upper.high})
    remaining = forecast_of(low_state, look) if forecast else None
    state = DecideState(inputs, paired, budget, seen)
    warnings = decision_warnings(state, look, past)
    warnings.append(missing_warning(missing, judged, inputs.tested, inputs.baseline))
    return decision_record(state, look, warnings, interval=interval, forecast=remaining, missing=missing.state(judged))


def missing_decide(inputs: DecideInputs, paired: PairedOutcomes, past: PastLimit | None, missing: MissingTasks, forecast: bool) -> DecisionRecord:
    """The look under ``[decision] missing = "worst-case"`` or ``"exclude"`` (:mod:`stopwise.compare._missing`)."""
    if missing.treatment == "exclude":
        return _excluded(inputs, paired, past, missing, forecast)
    return _worst_case(inputs, paired, past, missing, forecast)
