"""The top-up design of the betting boundary (``[betting] design = "top-up"``, the default with a coverage rule).

It runs on a uniformly random planned order pi (:mod:`stopwise.compare._topup`): the pooled process tests on pi's
observed prefix, and once a test has crossed at look tau the action is issued when, for some L from tau to the
observed prefix, pi's first L tasks and their fewest top-up tasks (the fewest further tasks that bring the set to
coverage) are all observed; coverage holds on that set, which the record's coverage describes. Until then the
reason and ``top_up`` name the crossing look's top-up tasks still to run (L = tau: fixed at the crossing, so the
list only shrinks). The action depends only on the pooled crossing, so the pooled guarantee carries over; coverage
is judged on every observed task (pi's prefix and the top-up tasks beyond it).
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np

from stopwise.compare._boundaries import Look
from stopwise.compare._boundaries.betting_wor import Pooled
from stopwise.compare._coverage import coverage_from_sizes
from stopwise.compare._plan import top_up_design
from stopwise.compare._state import DecideState
from stopwise.compare._topup import top_up_check
from stopwise.records import Action, Policy, TailProvenance

__all__ = ["TopUp", "not_crossed", "rule", "runs_on"]


@dataclasses.dataclass(frozen=True)
class TopUp(Pooled):
    """The pooled process on pi's observed prefix, acting once the crossing's top-up tasks are observed."""

    coverage_on_observed: ClassVar[bool] = True

    def crossing(self, state: DecideState) -> Look:
        """The crossing look tau of either test, and whether its top-up tasks are in (the module docstring).

        The reason keeps tau and the p-value at tau.
        """
        seen, budget = state.observed, state.budget
        if seen.n == 0:
            return Look(action="abstain" if budget.at_limit else "continue", method="betting-wor", warnings=self.notes)
        result = self.boundary(state)
        method = result.method.replace(", pooled)", ", pooled on a uniform order, coverage by top-up)")
        tail = TailProvenance(method="betting-wor", lattice=state.paired.lattice)
        level = math.log(1.0 / state.policy.tail_cutoff)
        crossed = [np.flatnonzero(np.maximum.accumulate(log) >= level) for log in (result.log_capital_promote, result.log_capital_reject)]
        at = [int(c[0]) + 1 if len(c) else None for c in crossed]
        look = Look(
            action="continue", method=method, r_promote=float(result.p_promote), r_reject=float(result.p_reject), tail=tail, warnings=self.notes
        )
        if at[0] is None and at[1] is None:
            if budget.at_limit:
                return dataclasses.replace(look, action="abstain", reason="at the budget limit: the betting-wor boundary was not crossed (both p-values exceed a)")
            return dataclasses.replace(look, reason=not_crossed(seen.n))
        side = 0 if at[1] is None or (at[0] is not None and at[0] <= at[1]) else 1
        tau = at[side]
        assert tau is not None
        log_capital = (result.log_capital_promote, result.log_capital_reject)[side]
        p_tau = float(min(1.0, math.exp(-float(np.max(log_capital[:tau])))))
        crossing = (
            f"betting-wor boundary crossed at look {tau} of the planned order: anytime-valid p_{('promote', 'reject')[side]} = {p_tau:.3g} "
            f"<= a (mean difference {'exceeds' if side == 0 else 'below'} the threshold)"
        )
        return _act_when_covered(state, look, "promote" if side == 0 else "reject", tau, crossing)

    def reason(self, state: DecideState, action: Action) -> str:
        """The boundary's words for its action; a continue is one before the crossing (a crossing gives its own)."""
        return not_crossed(state.observed.n) if action == "continue" else super().reason(state, action)


def not_crossed(n: int) -> str:
    """The reason of a look before the crossing: the planned order runs on; coverage is not asked of its prefix."""
    return f"betting-wor boundary not crossed on the first {n} tasks of the planned order; budget remains"


def _act_when_covered(state: DecideState, look: Look, word: Action, tau: int, crossing: str) -> Look:
    """The action once pi's first L tasks and their fewest top-up tasks are observed, for some L from tau on; else wait."""
    paired, policy, universe, seen = state.paired, state.policy, state.inputs.universe, state.observed
    assert universe is not None and universe.tasks is not None and universe.groups is not None
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
    if state.budget.at_limit:
        return dataclasses.replace(look, action="abstain", reason=crossing + f"; at the budget limit without coverage ({len(missing)} top-up task(s) short)")
    return dataclasses.replace(
        look,
        reason=crossing + f"; coverage not yet met: run the {len(missing)} top-up task(s) {shown}, then decide again",
        top_up_left=len(missing),
        top_up=tuple(str(task) for task in missing),
    )


def runs_on(kind: str, policy: Policy) -> bool:
    """A uniform order under the coverage rule (without it there is nothing to top up: the pooled process runs).

    Examples
    --------
    >>> from stopwise import Policy
    >>> betting = Policy(decision={"boundary": "betting-wor"})
    >>> runs_on("uniform", betting), runs_on("coverage-aware", betting)
    (True, False)
    >>> runs_on("uniform", Policy(decision={"boundary": "betting-wor"}, coverage={"rule": "none"}))
    False
    """
    return kind == "uniform" and top_up_design(policy)


def rule(warning: str | None) -> TopUp:
    """The top-up design; ``warning``: the order's provenance warning (None when verified)."""
    return TopUp(warning)
