"""The decision routine of ParEvalLayer (Fig. 2): :func:`decide`, a pipeline of small steps.

The boundary (the policy's ``[decision] boundary``) is a module of :mod:`stopwise.compare._boundaries`, one per
boundary, behind one protocol (:class:`stopwise.compare._boundaries.BoundaryRule`):

* ``fixed-budget`` (the paper's primary rule): tail probabilities R_promote / R_reject of the
  observed tasks; a final action only at the budget limit fixed in advance (one look);
* ``betting-wor``: the anytime-valid betting boundary over the N planned tasks sampled without
  replacement (:func:`stopwise.compare.betting_boundary`), fed the longest observed prefix of the planned
  order; a final action at ANY look once its p-value is at most a and coverage holds. Its designs (the top-up
  design, the stratified process) are modules of the same package.

The task universe (N, planned groups, planned order) is an input (:class:`stopwise.TaskUniverse`).
Without one, N and the groups are only inferred from the rows, and ``decide`` takes no final action
before the budget limit is established (see :func:`decide`).

The pipeline:

1. :func:`_decide_iv` validates and normalises every argument (:class:`stopwise.compare._state.DecideInputs`);
   under ``[decision] predicted = "prediction-powered"`` the predicted rows are paired with their audit
   correction (:func:`stopwise.compare._powered.powered_inputs`);
2. the two systems are paired within the universe and the look is cut at the budget limit, or refused, when the
   rows reach past it (:func:`stopwise.compare._state.limit_look`: ``[decision] past_limit``);
3. planned tasks whose outcome is missing for a system are treated as ``[decision] missing`` says under a
   boundary valid at every look (:mod:`stopwise.compare._missing`, :mod:`stopwise.compare._missing_look`);
4. the frozen state of the look (:class:`stopwise.compare._state.DecideState`: the inputs, the pairing, the
   budget, the judged tasks) goes to the boundary's rule: its :class:`stopwise.compare._boundaries.Look` (the
   action and its evidence) and its interval for the mean difference;
5. the record (:mod:`stopwise.compare._record`): the guards (warnings: tails from fewer paired tasks than
   :data:`stopwise.compare.MIN_OBSERVED` names, one-sided evidence before the limit, rows outside the universe,
   universes without groups, a look past the limit, the fixed-budget rule's issue-21 warnings, ...; each a
   :class:`stopwise.records.DecisionWarning` with a code, the record keeping its message), the forecast of a
   ``continue`` look (:mod:`stopwise.compare._forecast`), the digests and the claim sentence.

Inside it an action is the :data:`stopwise.records.Action` word; the integer codes (:data:`stopwise.compare.PROMOTE`
...) serve the vectorised :func:`stopwise.compare.routine_actions` and the replay.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from stopwise._params import check_random_state
from stopwise.compare._boundaries import boundary_module
from stopwise.compare._missing import find_missing, missing_warning
from stopwise.compare._missing_look import missing_decide
from stopwise.compare._pairing import _check_systems, as_columns
from stopwise.compare._powered import powered_inputs, usable_policy
from stopwise.compare._record import decision_record, decision_warnings, forecast_of
from stopwise.compare._state import DecideInputs, limit_look, look_state, paired_outcomes
from stopwise.errors import ComparisonError
from stopwise.records import DecisionRecord, OutcomeColumns, Policy, TaskUniverse

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["decide"]


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


def _decide_iv(
    rows: pd.DataFrame | OutcomeColumns,
    tested: str,
    baseline: str,
    policy: Policy | None,
    universe: TaskUniverse | None,
    budget_used: float | None,
    complete: bool,
    rng: np.random.Generator | int | None,
) -> DecideInputs:
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
    boundary_module(policy.decision.boundary).check(policy, universe)
    checked = _checked_rows(rows)
    for role, system in (("tested", tested), ("baseline", baseline)):
        if not isinstance(system, str):
            raise ComparisonError(f"`{role}` must be a system name (str); got {type(system).__name__}")
    _check_systems(checked, tested, baseline)
    system_codes, system_labels = checked.codes("system")
    if len(system_labels) > 2:  # only the two systems' rows are paired and digested
        wanted = np.flatnonzero((system_labels == tested) | (system_labels == baseline))
        checked = checked.take((system_codes == wanted[0]) | (system_codes == wanted[1]))
    return DecideInputs(
        rows=checked,
        tested=tested,
        baseline=baseline,
        policy=policy,
        universe=universe,
        budget_used=_budget_used_iv(budget_used, policy),
        complete=bool(complete) and universe is None,
        rng=check_random_state("decide", rng, name="rng", default=policy.seed, error=ComparisonError),
    )


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

    Looks are what the policy planned: rows reaching past the budget limit are cut at the limit in the
    planned order (``[decision] past_limit = "at-limit"``, the rows beyond excluded with code
    ``beyond-limit``) or the look is refused (``"refuse"``, or no planned order): never a silent second
    decision. The betting boundary, valid at every look, keeps them and warns (``past-limit``).

    Parameters
    ----------
    rows : OutcomeColumns or pandas.DataFrame
        Outcome rows (:func:`stopwise.read_outcomes`, :func:`stopwise.outcome_columns`); a
        frame built in Python is validated like a file (as :func:`stopwise.outcome_columns` does). Only rows of the policy's statuses are used;
        the rest are excluded and counted in the record.
    tested, baseline : str
        The tested system A and the baseline B.
    policy : Policy, optional
        The comparison policy (default: ``Policy()``, the exact-wor one-look test on a uniform order; ``Policy.paper()`` is the paper's primary policy).
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
    inputs = powered_inputs(_decide_iv(rows, tested, baseline, policy, universe, budget_used, complete, rng))
    paired, past = limit_look(inputs, paired_outcomes(inputs))
    missing = None
    if inputs.anytime and inputs.universe is not None:
        missing = find_missing(inputs.rows, paired, usable_policy(inputs), inputs.universe)
    if missing is not None and missing.treatment != "wait":
        return missing_decide(inputs, paired, past, missing, forecast)
    state = look_state(inputs, paired)
    look = state.rule.look(state)
    warnings = decision_warnings(state, look, past)
    interval = state.rule.interval(state, look)
    remaining = forecast_of(state, look) if forecast else None
    if missing is not None:  # wait: the prefix stops at the first of them; the record says which they are
        warnings.append(missing_warning(missing, 0, inputs.tested, inputs.baseline))
    return decision_record(state, look, warnings, interval=interval, forecast=remaining, missing=None if missing is None else missing.state())
