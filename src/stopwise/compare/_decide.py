"""The decision routine of ParEvalLayer (Fig. 2) and the decision record it writes."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from stopwise._version import __version__
from stopwise.compare._coverage import coverage_state
from stopwise.compare._pairing import PairedOutcomes, pair_outcomes
from stopwise.compare._tails import lattice_threshold, tail_probabilities
from stopwise.errors import ComparisonError
from stopwise.records import ACTIONS, OUTCOME_COLUMNS, BudgetState, DecisionRecord, Policy

__all__ = ["ABSTAIN", "CONTINUE", "PROMOTE", "REJECT", "decide", "exceeds_threshold", "input_digest", "routine_actions"]

PROMOTE, REJECT, CONTINUE, ABSTAIN = 0, 1, 2, 3
"""Action codes, equal to the ``stopwise decide`` exit codes."""


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


def input_digest(rows: pd.DataFrame, systems: tuple[str, ...]) -> str:
    """sha256 of the given systems' outcome rows in canonical form (sorted, contract columns, CSV)."""
    sub = rows.loc[rows["system"].isin(systems), list(OUTCOME_COLUMNS)]
    sub = sub.sort_values(["system", "task", "attempt", "status", "outcome"], kind="stable")
    return hashlib.sha256(sub.to_csv(index=False, lineterminator="\n").encode()).hexdigest()


def _budget_used(paired: PairedOutcomes, policy: Policy) -> float:
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


def _reason(action: int, *, covered: bool, enforce: bool, n: int, forced: bool, missing: list[str], possible: bool) -> str:
    if n == 0:
        return "no paired outcomes observed yet" + ("; budget exhausted" if action == ABSTAIN else "")
    if enforce and not covered:
        why = (
            "coverage requirement impossible at this count (sum of required counts exceeds observed tasks)"
            if not possible
            else "coverage missing for group(s) " + ", ".join(repr(g) for g in missing[:10])
        )
        return why + ("; budget exhausted" if action == ABSTAIN else "; budget remains")
    if action == CONTINUE:
        return "coverage holds; budget remains"
    if forced:
        return "forced: observed mean " + ("exceeds" if action == PROMOTE else "does not exceed") + " the threshold"
    if action == PROMOTE:
        return "at the budget limit: observed mean exceeds the threshold and R_promote <= a"
    if action == REJECT:
        return "at the budget limit: observed mean does not exceed the threshold and R_reject <= a"
    return "at the budget limit: the tail on the observed side exceeds a"


def decide(
    rows: pd.DataFrame,
    tested: str,
    baseline: str,
    policy: Policy | None = None,
    *,
    budget_used: float | None = None,
    rng: np.random.Generator | int | None = None,
) -> DecisionRecord:
    """Turn the outcomes seen so far into a decision record (ParEvalLayer Fig. 2).

    Parameters
    ----------
    rows : pandas.DataFrame
        Validated outcome rows (:func:`stopwise.read_outcomes`). Tasks with rows of both systems,
        whatever their status, form the shared task set; only rows of the policy's statuses are
        used, the rest are excluded and counted in the record.
    tested, baseline : str
        The tested system A and the baseline B.
    policy : Policy, optional
        The comparison policy (default: the paper's primary policy).
    budget_used : float, optional
        Budget used so far in the policy's measure; computed from the rows when omitted
        (observed task fraction or count, or summed ``cost_usd`` / ``elapsed_s``).
    rng : numpy.random.Generator or int, optional
        Generator of the Monte-Carlo bootstrap; default ``policy.seed``.

    Returns
    -------
    DecisionRecord

    Raises
    ------
    ComparisonError
        A system is absent, they coincide, or the budget cannot be measured.

    Examples
    --------
    >>> import stopwise
    >>> rows = stopwise.outcome_frame(
    ...     [{"system": "A", "task": f"t{i}", "outcome": 1, "group": "g"} for i in range(40)]
    ...     + [{"system": "B", "task": f"t{i}", "outcome": int(i < 10), "group": "g"} for i in range(40)])
    >>> record = stopwise.decide(rows, "A", "B")
    >>> record.action, record.delta_hat, record.r_promote < 1e-12
    ('promote', 0.75, True)
    """
    policy = policy if policy is not None else Policy()
    paired = pair_outcomes(
        rows, tested, baseline, statuses=policy.statuses, group_column=policy.coverage.group_column
    )
    if paired.n_shared == 0:
        raise ComparisonError(f"systems {tested!r} and {baseline!r} share no tasks; nothing to compare")
    if budget_used is not None and (not np.isfinite(budget_used) or budget_used < 0):
        raise ComparisonError(f"budget used must be a number >= 0; got {budget_used!r}")
    used = _budget_used(paired, policy) if budget_used is None else float(budget_used)
    at_limit = used >= policy.budget.limit * (1 - 1e-12) or paired.n_observed == paired.n_shared

    coverage = coverage_state(paired.universe_groups, paired.groups, rule=policy.coverage.rule)
    enforce = policy.coverage.rule == "proportional"
    n = paired.n_observed
    covered = n > 0 and (coverage.satisfied or not enforce)
    forced = policy.tail_method == "none"

    r_promote = r_reject = None
    method: str = "none (forced: observed mean only)" if forced else policy.tail_method
    exceeds = False
    if n > 0:
        exceeds = exceeds_threshold(paired.differences, paired.lattice, policy.threshold)
    if covered and not forced:
        tails = tail_probabilities(
            paired.differences,
            policy.threshold,
            method=policy.tail_method,  # type: ignore[arg-type]
            n_resamples=policy.bootstrap_resamples,
            rng=rng if rng is not None else policy.seed,
            units=paired.units,
            population_size=paired.n_shared,
        )
        r_promote, r_reject, method = tails.r_promote, tails.r_reject, tails.method
    action = int(
        routine_actions(
            covered,
            at_limit,
            exceeds,
            r_promote if r_promote is not None else 1.0,
            r_reject if r_reject is not None else 1.0,
            tail_cutoff=policy.tail_cutoff,
            forced=forced,
        )
    )
    return DecisionRecord(
        tested=tested,
        baseline=baseline,
        action=ACTIONS[action],
        reason=_reason(
            action,
            covered=covered,
            enforce=enforce,
            n=n,
            forced=forced,
            missing=coverage.missing_groups,
            possible=coverage.possible,
        ),
        threshold=policy.threshold,
        tail_cutoff=policy.tail_cutoff,
        n_shared=paired.n_shared,
        n_observed=n,
        delta_hat=paired.delta_hat,
        r_promote=r_promote,
        r_reject=r_reject,
        tail_method=method,
        budget=BudgetState(measure=policy.budget.measure, used=used, limit=policy.budget.limit, at_limit=at_limit),
        coverage=coverage,
        excluded=list(paired.excluded),
        policy_sha256=policy.sha256(),
        input_sha256=input_digest(rows, (tested, baseline)),
        stopwise_version=__version__,
    )
