"""The ``betting-wor`` boundary: anytime-valid betting over the N planned tasks sampled without replacement.

:func:`stopwise.compare.betting_boundary` is fed the longest observed prefix of the planned order; a final action
is taken at ANY look once its p-value is at most a and coverage holds. The record's interval is the test's
confidence sequence at the look (:func:`stopwise.compare._interval.betting_interval`), each end tightened to delta
when the look's own test rejected on that side.

Which process runs depends on the planned order (:func:`rule`): its provenance is checked first (a seeded random
permutation written by ``stopwise order``, or the policy's own seeded draw), then the policy's design
(``[betting] design``, a module ``betting_wor_<design>``) runs if it runs on the order's kind; otherwise the pooled
process (:class:`Pooled`: the observed prefix of a uniform order is a simple random sample of the N tasks). The
stratified process is retired (issue 33): an order that is not a uniform permutation is refused
(:func:`stopwise.compare._plan.retired_order`), whatever ``[betting] order_check`` says, except a universe built
in Python without a stamp, decided with the pooled process and an ``order-provenance`` warning. A universe of one
group always gets the pooled process: coverage holds from the first task.
Under ``[decision] predicted = "prediction-powered"`` the pooled process judges the prediction-powered differences
(:mod:`stopwise.compare._powered`).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, cast

from stopwise.compare._betting import BettingBoundary, betting_boundary
from stopwise.compare._boundaries import BoundaryRule, Look, design_module
from stopwise.compare._interval import sequence_interval
from stopwise.compare._plan import RANDOM_KINDS, drawn_kind, order_check, retired_order
from stopwise.compare._powered import prefix_boundary, prefix_interval
from stopwise.compare._state import DecideState
from stopwise.errors import ComparisonError
from stopwise.records import Action, DecisionWarning, DifferenceInterval, Policy, TailProvenance, TaskUniverse

__all__ = ["ANYTIME", "Pooled", "certain_answer", "check", "check_betting_order", "rule"]

ANYTIME = True
"""Valid at every look: the observed prefix of the planned order is judged at any look."""


def check(policy: Policy, universe: TaskUniverse | None) -> None:
    """Refuse a universe without the planned order (names and order of the tasks): the boundary reads its prefix."""
    if universe is None or not universe.ordered:
        given = "no task universe" if universe is None else "a task universe from counts only"
        raise ComparisonError(
            f"the betting-wor boundary needs the planned task order, but {given} was given: pass the `stopwise order` "
            "output or a tasks file (universe=read_task_universe(...), --tasks FILE)"
        )


def check_betting_order(policy: Policy, universe: TaskUniverse) -> None:
    """Refuse a planned order the betting-wor boundary of ``policy`` would refuse at every look.

    What :func:`stopwise.decide` checks at each look (the order's provenance, ``[betting] order_check``), checked
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
        _provenance(policy, universe)


_CHECKED: dict[tuple[object, ...], tuple[str, str | None] | ComparisonError] = {}
""":func:`_provenance`'s answer per universe and order settings of the policy: a live evaluation decides on the same
universe at every look, and redrawing candidate orders cost about 1 ms a look (issue 31)."""
_CHECKED_MAX = 64


def _provenance(policy: Policy, universe: TaskUniverse) -> tuple[str, str | None]:
    """The order kind and the order-provenance warning of :func:`_judge_order`, judged once per universe and settings."""
    key = (universe.sha256(), universe.stamp, universe.from_file, universe.has_groups, policy.order.kind, policy.order.seed,
           policy.betting.order_check, policy.betting.design, policy.coverage.rule, drawn_kind(policy))  # fmt: skip
    if key not in _CHECKED:
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.pop(next(iter(_CHECKED)))
        try:
            _CHECKED[key] = _judge_order(policy, universe)
        except ComparisonError as refused:
            _CHECKED[key] = refused
    found = _CHECKED[key]
    if isinstance(found, ComparisonError):
        raise ComparisonError(str(found))
    return found


def _judge_order(policy: Policy, universe: TaskUniverse) -> tuple[str, str | None]:
    """The order kind the planned order is a draw of, and the record's ``order-provenance`` warning (None: verified).

    The kind is the stamp's (``stopwise order``), verified by redrawing it; an order without a stamp that is
    exactly the draw ``stopwise order`` makes for this policy (its kind, :func:`stopwise.compare._plan.drawn_kind`,
    and ``[order] seed``) counts as verified. The pooled process needs a uniformly random permutation, so any other
    order is refused (:func:`stopwise.compare._plan.retired_order`: the stratified process it used to fall back to
    is retired, issue 33), except a universe built in Python without a stamp: it is taken as uniform, with a warning.
    """
    problem = order_check(universe, RANDOM_KINDS)
    kind = universe.stamp.kind if universe.stamp is not None else None
    if problem is not None and universe.stamp is None:
        for candidate in dict.fromkeys((drawn_kind(policy), policy.order.kind)):
            if candidate in RANDOM_KINDS and order_check(universe.with_stamp(candidate, policy.order.seed), RANDOM_KINDS) is None:
                problem, kind = None, candidate  # the policy's own seeded draw, unstamped
                break
    refusal = retired_order(policy, universe, problem, kind)
    if refusal is not None:
        raise ComparisonError(refusal)
    if problem is None:
        assert kind is not None
        return kind, None
    return "uniform", f"{problem}; the betting-wor guarantee assumes a uniformly random permutation drawn before any outcome"


def certain_answer(state: DecideState, look: Look) -> Look:
    """``look``, or at a complete record (every one of the N planned tasks judged) the answer that is certain.

    With all N tasks observed the population mean difference is known exactly: promote when it exceeds delta
    (p_promote 0, p_reject 1), reject when it does not (p_reject 0, p_promote 1), as the fixed-budget rule
    says on the same data (not under ``predicted = "prediction-powered"``, where predictions stand in for
    outcomes). A look that already gives that action (the process's logical bounds settle a mean
    off delta at t = N) is kept as it is. Without this, a mean exactly at delta (all ties, say) left both betting tests
    unsettled and the record abstained although "not above the threshold" is certain.

    Examples
    --------
    >>> from stopwise import Policy, decide, outcome_columns
    >>> from stopwise.compare import order_universe, task_order
    >>> import pandas as pd
    >>> policy = Policy(decision={"boundary": "betting-wor"})
    >>> universe = order_universe(task_order(pd.DataFrame({"task": [f"t{i}" for i in range(30)]}), policy))
    >>> ties = outcome_columns([{"system": s, "task": f"t{i}", "outcome": 1} for i in range(30) for s in "AB"])
    >>> decide(ties, "A", "B", policy, universe=universe).action
    'reject'
    """
    seen, paired = state.observed, state.paired
    if state.inputs.powered is not None:  # predicted outcomes stand in for some tasks: the mean is not known
        return look
    if not (state.inputs.known and seen.n > 0 and seen.n == paired.n_shared):
        return look
    above = seen.exceeds
    action: Action = "promote" if above else "reject"
    if look.action == action:  # the process settled it already (its logical bounds): its words and p-values stay
        return look
    reason = (
        f"every one of the N = {paired.n_shared} planned tasks is observed: the mean difference "
        f"{float(seen.differences.mean()):.4g} is known exactly and {'exceeds' if above else 'is not above'} the threshold"
    )
    tail = look.tail or TailProvenance(method="betting-wor", lattice=paired.lattice)
    return dataclasses.replace(
        look, action=action, r_promote=0.0 if above else 1.0, r_reject=1.0 if above else 0.0, tail=tail, reason=reason,
        top_up_left=None, top_up=None,
    )


def rule(policy: Policy, universe: TaskUniverse | None) -> BoundaryRule:
    """The process the planned order supports (see the module docstring); refuses an unfit order."""
    assert universe is not None  # check() refuses the betting boundary without an ordered universe
    kind, warning = _provenance(policy, universe)
    if len(universe.group_sizes) <= 1:  # one group: coverage holds from the first task, nothing to top up
        return Pooled(warning)
    design = design_module(policy.betting.design)
    return design.rule(warning) if design.runs_on(kind, policy) else Pooled(warning)


SOLVE_SPAN = 0.01
"""The confidence sequence's grid step: the δ-side end rounded outward onto δ lies within this of δ."""
SOLVE_STEPS = 14
"""Bisection steps of the δ-side end (0.01 / 2^14 ~ 6e-7: below the fourth decimal of a percentage point)."""


def _solved_end(state: DecideState, lo: float, hi: float, *, side: int) -> float:
    """The δ-side end of the confidence sequence where the look's own test rejected δ (issue 35).

    The grid rounds the end outward onto δ although the test at δ rejected; the end is solved here by bisection on
    the test's anytime p-value, keeping the rejected side of the bracket: for ``side`` 0 (promote) ``lo`` = δ is
    rejected and the result is the largest mean found rejected (> δ unless no mean above δ is); for ``side`` 1
    (reject) ``hi`` = δ is rejected and the result is the least mean found rejected.
    """
    seen, policy = state.observed, state.policy
    a, big_n = policy.tail_cutoff, state.paired.n_shared

    def rejected(mean: float) -> bool:
        result = betting_boundary(seen.differences, mean, alpha=a, population_size=big_n, confidence_bounds=False)
        return float(result.p_promote if side == 0 else result.p_reject) <= a

    hi = min(hi, 1.0 - 1e-9)  # the test takes thresholds in [-1, 1)
    if lo >= hi:
        return lo if side == 0 else hi
    for _ in range(SOLVE_STEPS):
        mid = 0.5 * (lo + hi)
        if rejected(mid) == (side == 0):
            lo = mid
        else:
            hi = mid
    return lo if side == 0 else hi


@dataclasses.dataclass(frozen=True)
class Pooled:
    """The pooled process on the observed prefix: valid when the planned order is a uniform random permutation.

    A uniform planned order makes the observed prefix a simple random sample of the N tasks.
    """

    warning: str | None = None
    """The record's ``order-provenance`` warning (None when the order is verified)."""

    coverage_on_observed: ClassVar[bool] = False
    takes_predictions: ClassVar[bool] = True

    @property
    def notes(self) -> tuple[DecisionWarning, ...]:
        """The look's own warnings: the order's provenance when it is not verified."""
        return () if self.warning is None else (DecisionWarning("order-provenance", self.warning),)

    def boundary(self, state: DecideState) -> BettingBoundary:
        """The boundary's p-values and log-capital paths on the judged prefix.

        The confidence bounds come from the same computation (their first pass holds the test at delta) and are kept
        in ``state.memo`` for :meth:`interval`; the prediction-powered boundary computes its interval apart.
        """
        if state.inputs.powered is not None:
            return prefix_boundary(state)
        policy = state.policy
        result = betting_boundary(state.observed.differences, policy.threshold, alpha=policy.tail_cutoff, population_size=state.paired.n_shared)
        state.memo["bounds"] = (result.lower, result.upper, result.method)
        return result


    def look(self, state: DecideState) -> Look:
        """The process's look (:meth:`crossing`), or the certain answer at a complete record (:func:`certain_answer`)."""
        return certain_answer(state, self.crossing(state))

    def crossing(self, state: DecideState) -> Look:
        """A final action at any look once a p-value is at most a and coverage holds."""
        seen, a = state.observed, state.policy.tail_cutoff
        r_promote = r_reject = None
        method, tail = "betting-wor", None
        if seen.covered:
            result = self.boundary(state)
            r_promote, r_reject, method = float(result.p_promote), float(result.p_reject), result.method
            tail = TailProvenance(method="betting-wor", lattice=state.paired.lattice)
        promote = seen.covered and r_promote is not None and r_promote <= a and r_promote <= (1.0 if r_reject is None else r_reject)  # 0.0 is a p-value (issue 35)
        reject = seen.covered and not promote and r_reject is not None and r_reject <= a
        action: Action = "promote" if promote else "reject" if reject else "abstain" if state.budget.at_limit else "continue"
        return Look(action=action, method=method, r_promote=r_promote, r_reject=r_reject, tail=tail, warnings=self.notes)

    def interval(self, state: DecideState, look: Look) -> DifferenceInterval | None:
        """The anytime-valid confidence sequence of the judged prefix, its ends tightened to the look's own tests.

        The bounds are those the look computed with its p-values (``state.memo``), else computed here, once. The
        confidence sequence's 0.01 grid is rounded outward; the look's own test at delta tightens the end it
        rejected to delta, so a promote's interval never reaches below the threshold nor a reject's above it.
        """
        seen, policy = state.observed, state.policy
        if seen.n == 0:
            return None
        if state.inputs.powered is not None:
            interval = prefix_interval(state)
        else:
            if "bounds" not in state.memo:  # the look computed no boundary (coverage does not hold yet): compute it here
                result = betting_boundary(seen.differences, policy.threshold, alpha=policy.tail_cutoff, population_size=state.paired.n_shared)
                state.memo["bounds"] = (result.lower, result.upper, result.method)
            lower, upper, method = cast(tuple[float, float, str], state.memo["bounds"])
            interval = sequence_interval(lower, upper, method, policy.tail_cutoff)
        a, delta = policy.tail_cutoff, policy.threshold
        low, high = interval.low, interval.high
        solve = state.inputs.powered is None
        # an end is tightened where its test rejected delta; when both did (the sequence is empty at this look, chance
        # <= 2a), only the end on the side of the action taken
        final = look.action in ("promote", "reject")
        if look.r_promote is not None and look.r_promote <= a and low <= delta and (not final or look.action == "promote"):
            low = _solved_end(state, delta, min(high, delta + SOLVE_SPAN), side=0) if solve else delta
        if look.r_reject is not None and look.r_reject <= a and high >= delta and (not final or look.action == "reject"):
            high = _solved_end(state, max(low, delta - SOLVE_SPAN), delta, side=1) if solve else delta
        return interval.model_copy(update={"low": low, "high": high}) if low <= high else interval

    def reason(self, state: DecideState, action: Action) -> str:
        """The boundary's words for its action."""
        if action == "promote":
            return "betting-wor boundary crossed: anytime-valid p_promote <= a (mean difference exceeds the threshold)"
        if action == "reject":
            return "betting-wor boundary crossed: anytime-valid p_reject <= a (mean difference below the threshold)"
        if action == "abstain":
            return "at the budget limit: the betting-wor boundary was not crossed (both p-values exceed a)"
        return "coverage holds; betting-wor boundary not crossed; budget remains"
