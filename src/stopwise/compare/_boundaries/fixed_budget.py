"""The ``fixed-budget`` boundary (the paper's primary rule, Fig. 2): one look, at the budget limit fixed in advance.

The tail probabilities R_promote / R_reject of every observed task (the policy's ``tail_method``,
:func:`stopwise.compare.tail_probabilities`); a final action only at the budget limit: promote when the mean
exceeds delta and R_promote <= a, reject when it does not and R_reject <= a, else abstain. Tail method ``none``
decides by the observed mean alone (forced). The record's interval is the tail method inverted over the threshold
(:func:`stopwise.compare._interval.one_look_interval`), at the limit only: at an earlier look it would be the
repeated-look reading the rule forbids. Its final actions carry the issue-21 warnings (rare discordance, the
unweighted mean under a group-driven order, ``exact-wor``'s fallback or non-random sample).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from stopwise._vocabulary import RARE_DISCORDANCE
from stopwise.compare._boundaries import Look
from stopwise.compare._claim import RARE_DISCORDANCE_NOTE
from stopwise.compare._interval import one_look_interval
from stopwise.compare._state import DecideState
from stopwise.compare._tails import tail_probabilities
from stopwise.compare._wor_exact import exact_wor_pvalue
from stopwise.errors import ArgumentError
from stopwise.records import (
    ACTION_CODE,
    ACTIONS,
    Action,
    DecisionWarning,
    DifferenceInterval,
    Policy,
    TailProvenance,
    TaskUniverse,
)

__all__ = ["ABSTAIN", "ANYTIME", "CONTINUE", "MIN_OBSERVED", "PROMOTE", "REJECT", "FixedBudget", "check", "routine_actions", "rule"]

ANYTIME = False
"""One look, at the budget limit: every observed task is judged."""

MIN_OBSERVED: dict[str, int] = {"exact": 20, "bootstrap": 20, "normal": 30, "serfling": 30, "exact-wor": 1}
"""Fewest paired tasks for which each tail method's tails are trusted; below it the record warns.

The bootstrap (exact or Monte Carlo) has at most 2^n distinct resample means and puts a tail of
exactly 0 on any one-signed sample, whatever n; the normal and Serfling tails rest on a central
limit approximation that the usual rule of thumb wants n >= 30 for. ``exact-wor`` is exact at every n.
What matters more than n for the bootstrap is the number of discordant tasks: see
:data:`stopwise._vocabulary.RARE_DISCORDANCE` (warning ``rare-discordance``)."""

PROMOTE, REJECT, CONTINUE, ABSTAIN = (ACTION_CODE[a] for a in ("promote", "reject", "continue", "abstain"))
"""Action codes (:data:`stopwise.records.ACTION_CODE`), equal to the ``stopwise decide`` exit codes."""


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


def check(policy: Policy, universe: TaskUniverse | None) -> None:
    """Nothing to refuse: the fixed-budget rule runs with or without a universe (without one it only continues)."""


def _units(state: DecideState) -> np.ndarray | None:
    """The analysis units of the observed tasks, when they group tasks (None: one task per unit)."""
    paired = state.paired
    return None if np.array_equal(paired.units, paired.tasks) else paired.units


def _stratified_mean(state: DecideState) -> float | None:
    """The group-weighted mean sum_g (n_g / N) mean_g of the judged tasks; None unless every group is observed."""
    labels, sizes = state.paired.universe_labels, state.paired.universe_sizes
    seen = state.observed
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


def _rare_discordance(state: DecideState, action: Action) -> DecisionWarning | None:
    """``rare-discordance``: a bootstrap or normal action on fewer than RARE_DISCORDANCE discordant tasks, with its risk."""
    policy, paired, seen = state.policy, state.paired, state.observed
    n, big_n, d = seen.n, paired.n_shared, seen.differences
    method = policy.tail_method
    discordant = int(np.count_nonzero(d))
    if method not in ("exact", "bootstrap", "normal") or discordant >= RARE_DISCORDANCE or n >= big_n:
        return None
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    risk = "; no exact figure for differences other than 0/±1 (averages of several attempts)"
    if paired.lattice == 1:
        try:
            p_promote, p_reject = exact_wor_pvalue(wins, losses, n, big_n, policy.threshold)
        except ArgumentError:
            pass
        else:
            p = p_promote if action == "promote" else p_reject
            risk = (
                f"; measured risk: the exact one-look p-value of this sample (sampling n = {n} of N = {big_n} without "
                f"replacement) is {p:.3g} against a = {policy.tail_cutoff:g}"
            )
    return DecisionWarning(
        "rare-discordance",
        f"the fixed-budget rule will {action} on {discordant} discordant task(s) ({wins} wins, {losses} losses) "
        f"of {n}: with fewer than {RARE_DISCORDANCE} its {method} tail is not level a{risk}; "
        'tail_method = "exact-wor" keeps the level',
    )


def _action_warnings(state: DecideState, action: Action, tail: TailProvenance | None) -> tuple[DecisionWarning, ...]:
    """Warnings about a final action (issue 21): rare discordance, weighting, exact-wor's model."""
    policy, paired, seen = state.policy, state.paired, state.observed
    if policy.tail_method == "none" or action not in ("promote", "reject") or seen.n == 0:
        return ()
    method = policy.tail_method
    grouped_order = policy.order.kind != "uniform" and len(paired.universe_labels) > 1
    rare = _rare_discordance(state, action)
    out = [] if rare is None else [rare]
    stratified = _stratified_mean(state) if grouped_order else None
    if stratified is not None and (stratified > policy.threshold) != seen.exceeds:
        out.append(
            DecisionWarning(
                "unweighted-estimate",
                f"the {policy.order.kind} order draws tasks by group, so the unweighted mean {float(seen.differences.mean()):.4g} the "
                "fixed-budget rule uses (as the paper does) over-represents small groups; the group-weighted (stratified) "
                f"mean {stratified:.4g} lies on the other side of the threshold {policy.threshold:g}",
            )
        )
    if method == "exact-wor" and tail is not None and tail.fallback:
        out.append(DecisionWarning("exact-wor-fallback", f"exact-wor not used: {tail.why}"))
    if method == "exact-wor" and grouped_order:
        out.append(
            DecisionWarning(
                "not-random-sample",
                f"the exact-wor test assumes the observed tasks are a simple random sample of the N = {paired.n_shared} planned "
                f"tasks; a {policy.order.kind} order draws them by group, so its level is not guaranteed (use a uniform "
                "order with it)",
            )
        )
    return tuple(out)


def _decided_end(state: DecideState, look: Look, interval: DifferenceInterval) -> DifferenceInterval:
    """The δ-side ends where the exact-wor test decided at δ (issue 35).

    At small N the exact-wor p-value is not monotone in the threshold, and the interval's search can find a crossing
    on the other side of δ from the test at δ itself. The test at δ fixes the ends around c = floor(N δ): a promote
    test that rejects at δ rejects every total up to c, so the mean is at least (c + 1) / N; one that does not leaves
    c / N in the confidence set, so the low end is at most c / N; the reject test likewise bounds the high end by c / N
    or keeps (c + 1) / N in. The other methods' ends are monotone inversions and already lie there.
    """
    policy, big_n = state.policy, state.paired.n_shared
    if look.tail is None or look.tail.method != "exact-wor" or look.r_promote is None or look.r_reject is None:
        return interval
    a, c = policy.tail_cutoff, math.floor(big_n * policy.threshold + 1e-9)
    low, high = interval.low, interval.high
    low = max(low, (c + 1) / big_n) if look.r_promote <= a else min(low, c / big_n)
    high = min(high, c / big_n) if look.r_reject <= a else max(high, (c + 1) / big_n)
    low, high = max(low, -1.0), min(high, 1.0)
    if (low, high) == (interval.low, interval.high) or low > high:
        return interval
    return interval.model_copy(update={"low": low, "high": high})


class FixedBudget:
    """The fixed-budget rule (Fig. 2): tails of the observed tasks; a final action only at the budget limit."""

    coverage_on_observed: ClassVar[bool] = False
    takes_predictions: ClassVar[bool] = False

    def look(self, state: DecideState) -> Look:
        """The tails of the judged tasks (when coverage holds) and the routine's action."""
        policy, seen = state.policy, state.observed
        forced = policy.tail_method == "none"
        look = Look(action="continue", method="none (forced: observed mean only)" if forced else policy.tail_method)
        if seen.covered and not forced:
            tails = tail_probabilities(
                seen.differences,
                policy.threshold,
                method=policy.tail_method,  # type: ignore[arg-type]  # "none" is forced
                n_resamples=policy.bootstrap_resamples,
                rng=state.inputs.rng,
                units=_units(state),
                population_size=state.paired.n_shared,
            )
            tail = TailProvenance(
                method=tails.used, resamples=tails.resamples, lattice=tails.lattice, fallback=tails.fallback is not None, why=tails.fallback
            )
            look = Look(action="continue", method=tails.method, r_promote=tails.r_promote, r_reject=tails.r_reject, tail=tail)
        code = routine_actions(
            seen.covered,
            state.budget.at_limit,
            seen.exceeds,
            look.r_promote if look.r_promote is not None else 1.0,
            look.r_reject if look.r_reject is not None else 1.0,
            tail_cutoff=policy.tail_cutoff,
            forced=forced,
        )
        action = ACTIONS[int(code)]
        return Look(
            action=action, method=look.method, r_promote=look.r_promote, r_reject=look.r_reject, tail=look.tail,
            min_observed=MIN_OBSERVED.get(policy.tail_method, 0) if look.tail is not None else 0,
            action_warnings=_action_warnings(state, action, look.tail),
        )  # fmt: skip

    def interval(self, state: DecideState, look: Look) -> DifferenceInterval | None:
        """The one-look interval of the tail method, at the budget limit only (none with tail method ``none``)."""
        policy = state.policy
        if state.observed.n == 0 or policy.tail_method == "none" or not state.budget.at_limit:
            return None
        rare = any(w.code == "rare-discordance" for w in look.action_warnings)
        if rare and state.paired.lattice == 1 and state.observed.n < state.paired.n_shared:
            # issue 35: the paper's tail is not level a here; the claim carries the exact interval that is
            exact = one_look_interval(
                state.observed.differences, method="exact-wor", alpha=policy.tail_cutoff, population_size=state.paired.n_shared
            )
            return exact.model_copy(update={"method": f"{RARE_DISCORDANCE_NOTE}: the {policy.tail_method} tail replaced by {exact.method}"})
        interval = one_look_interval(
            state.observed.differences,
            method=policy.tail_method,
            alpha=policy.tail_cutoff,
            population_size=state.paired.n_shared,
            n_resamples=policy.bootstrap_resamples,
            seed=policy.seed,
            units=_units(state),
        )
        return _decided_end(state, look, interval)

    def reason(self, state: DecideState, action: Action) -> str:
        """The rule's words for its action."""
        if action == "continue":
            return "coverage holds; budget remains (the fixed-budget rule acts only at the limit)"
        if state.policy.tail_method == "none":
            return "forced: observed mean " + ("exceeds" if action == "promote" else "does not exceed") + " the threshold"
        if action == "promote":
            return "fixed-budget rule at the budget limit: observed mean exceeds the threshold and R_promote <= a"
        if action == "reject":
            return "fixed-budget rule at the budget limit: observed mean does not exceed the threshold and R_reject <= a"
        return "fixed-budget rule at the budget limit: the tail on the observed side exceeds a"


def rule(policy: Policy, universe: TaskUniverse | None) -> FixedBudget:
    """The fixed-budget rule (the same on every universe)."""
    return FixedBudget()
