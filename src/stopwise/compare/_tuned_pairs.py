"""Outcome rows to the tuned treatment's paired values (``[decision] predicted = "prediction-powered-tuned"``, issue 34).

The rows follow the contract of :mod:`stopwise.compare._predicted` (``status = "predicted"`` for a halted run,
``audited`` and ``would-halt:f`` for an audited run the monitor would have halted) and each halting candidate's row
may carry ``audit-p:<pi>``, the probability its audit was drawn with (:class:`stopwise.inspect.LiveHalting` writes
it). Under ``[early] audit_rule = "active"`` the flag is required; under ``uniform`` a row without it has pi = rho.
A recorded pi below the rule's least probability for its kind is refused: the bets' cap rests on that least value.

Each run's corrected value is f + (xi / pi) (Y - f) (g = f: the prediction's weight is 1 in ``decide``; the batch
form :func:`stopwise.compare._tuned.tuned_values` also learns it from past audits, which on the issue's benchmark
changed no median). The centre's bound counts the wrong predictions *sub-audited*: drawn below the rule's least
probability, recomputed from the seeded draw :func:`stopwise.records.audit_draw` of the run (under ``[early]
audit_coupling = "antithetic"`` the task's shared uniform w for the tested system's run and 1 - w for the other's,
which needs both systems to hold the same attempts of every task).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from stopwise._vocabulary import AUDIT_PROBABILITY_FLAG
from stopwise.compare._pairing import PairedOutcomes, _rows_on_tasks
from stopwise.compare._predicted import AuditTallies, PoweredPairs, _row_kinds
from stopwise.compare._tuned import ActiveAudits, design_range
from stopwise.errors import ComparisonError
from stopwise.records import OutcomeColumns, Policy, audit_draw

__all__ = ["BEST_TASK_RATIO", "audit_probabilities", "audit_rule_of", "break_even_advice", "tuned_note", "tuned_pairs"]

BEST_TASK_RATIO = 1.24
"""The fewest tasks the prediction-powered family needs, as a multiple of across-task stopping's, on the issue-34
prototype (an oracle knowing the best constant bet, rho = 0.5): below it, no halting setting can pay."""


def audit_rule_of(policy: Policy) -> ActiveAudits:
    """The policy's pre-registered audit rule (``[early] audit_fraction``, ``audit_rule``, ``audit_favour``, ``audit_coupling``)."""
    early = policy.early
    if not 0.0 < early.audit_fraction < 1.0:
        raise ComparisonError(
            f'[decision] predicted = "prediction-powered-tuned" needs [early] audit_fraction in (0, 1); got {early.audit_fraction:g}'
        )
    if early.audit_rule == "active":
        return ActiveAudits(early.audit_fraction, favour=early.audit_favour, coupling=early.audit_coupling)
    return ActiveAudits(early.audit_fraction, favour=1.0, slope=0.0, coupling=early.audit_coupling)


def audit_probabilities(rows: OutcomeColumns) -> np.ndarray:
    """Each row's recorded audit probability (flag ``audit-p:<pi>``), NaN where the row has none.

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare._tuned_pairs import audit_probabilities
    >>> rows = stopwise.outcome_columns([{"system": "A", "task": "t", "outcome": 1, "flags": "audited;audit-p:0.75"},
    ...                                  {"system": "B", "task": "t", "outcome": 0}])
    >>> audit_probabilities(rows).tolist()
    [0.75, nan]
    """
    prefix = AUDIT_PROBABILITY_FLAG + ":"
    codes, labels = rows.codes("flags")
    values = np.full(len(labels), np.nan)
    for k, label in enumerate(labels.tolist()):
        found = [t[len(prefix) :] for t in str(label).split(";") if t.startswith(prefix)]
        if not found:
            continue
        try:
            value = float(found[0])
        except ValueError:
            value = np.nan
        if len(found) > 1 or not 0.0 < value <= 1.0:
            i = int(np.flatnonzero(codes == k)[0])
            raise ComparisonError(
                f"row {i + 1} (system {rows.system[i]!r}, task {rows.task[i]!r}): flag {label!r} must hold one audit-p:<pi> with pi in (0, 1]"
            )
        values[k] = value
    return values[codes]


def _check_antithetic_attempts(rows: OutcomeColumns, tested: str, baseline: str) -> None:
    """Antithetic audits pair a task's runs by attempt: both systems must hold the same attempts of every task.

    With unmatched attempts a run's partner draw is missing, two adverse runs of one task can both be audited and the
    task's difference can leave the design's range (:func:`stopwise.compare._tuned.design_range`).
    """
    attempts: dict[tuple[str, str], set[int]] = {}
    for system, task, attempt in zip(rows.system.tolist(), rows.task.tolist(), rows.attempt.tolist(), strict=True):
        if system in (tested, baseline):
            attempts.setdefault((system, task), set()).add(int(attempt))
    for (system, task), mine in attempts.items():
        if system == tested and (baseline, task) in attempts and attempts[(baseline, task)] != mine:
            raise ComparisonError(
                f'[early] audit_coupling = "antithetic" pairs the two systems\' runs of a task by attempt: task {task!r} has '
                f"attempts {sorted(mine)} of {tested!r} and {sorted(attempts[(baseline, task)])} of {baseline!r}"
            )


def tuned_pairs(
    rows: OutcomeColumns,
    tested: str,
    policy: Policy,
    pair: Callable[[OutcomeColumns], PairedOutcomes],
    baseline: str | None = None,
) -> tuple[PoweredPairs, ActiveAudits]:
    """The tuned treatment's pairing: X per task, the bounds l, h, P and the sub-audited wrong weights (module docstring).

    ``pair`` pairs outcome rows as the decision does (statuses including ``predicted``), as for
    :func:`stopwise.compare._predicted.powered_pairs`.
    """
    rule = audit_rule_of(policy)
    if rule.coupling == "antithetic" and baseline is not None:
        _check_antithetic_attempts(rows, tested, baseline)
    kinds = _row_kinds(rows)
    candidate = kinds.predicted | kinds.corrected
    tested_row = rows.system == tested
    recorded = audit_probabilities(rows)
    missing = candidate & np.isnan(recorded)
    if policy.early.audit_rule == "active" and missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ComparisonError(
            f'[early] audit_rule = "active": {int(missing.sum())} halted or would-halt row(s) carry no audit-p:<pi> flag (first: row {i + 1}, '
            f"system {rows.system[i]!r}, task {rows.task[i]!r}); the correction needs the probability each run was audited with"
        )
    pi = np.where(np.isnan(recorded), rule.rate, recorded)
    f = np.where(kinds.corrected, kinds.would, rows.outcome)  # a predicted row's outcome is its prediction
    favours = np.where(tested_row, f == 1.0, f == 0.0)
    least = np.where(favours, rule.least(True), rule.least(False))
    below = candidate & (pi < least - 1e-9)
    if below.any():
        i = int(np.flatnonzero(below)[0])
        raise ComparisonError(
            f"row {i + 1} (system {rows.system[i]!r}, task {rows.task[i]!r}): audit probability {pi[i]:g} is below the rule's least "
            f"{least[i]:g} for its kind ({rule.describe()})"
        )
    y = rows.outcome
    value = np.where(kinds.corrected, f + (y - f) / pi, y)
    low = np.where(kinds.predicted, np.where(tested_row, 0.0, 1.0), y)
    high = np.where(kinds.predicted, np.where(tested_row, 1.0, 0.0), y)
    low[kinds.predicted & np.isnan(y)] = np.nan
    high[kinds.predicted & np.isnan(y)] = np.nan
    paired = pair(rows.with_outcome(value))
    lows, highs, points = (pair(rows.with_outcome(v)) for v in (low, high, y))
    wrong = kinds.corrected & (y != f)
    draws = np.full(len(rows), np.inf)
    for i in np.flatnonzero(wrong).tolist():
        draws[i] = audit_draw(
            policy.early.audit_seed, rows.system[i], rows.task[i], int(rows.attempt[i]), tested=tested, coupling=rule.coupling
        )
    tallies = []
    for side in (
        True,
        False,
    ):  # promote side: favouring predictions sub-audited below the rule's least; reject: the others
        adverse = wrong & (favours == side) & (draws < rule.least(side))
        v = np.where(tested_row, adverse.astype(float), 1.0 - adverse.astype(float))
        v[np.isnan(y)] = np.nan
        tallies.append(pair(rows.with_outcome(v)).differences + 1.0)
    for other in (lows, highs, points):
        if not np.array_equal(other.tasks, paired.tasks):
            raise ComparisonError("internal: the tuned pairings differ in their tasks")  # pragma: no cover
    used = int((candidate & _rows_on_tasks(rows, paired.tasks)).sum())
    x_min, _ = design_range(rule)
    audit = AuditTallies(point=points.differences, wrong_low=tallies[0], wrong_high=tallies[1])
    return PoweredPairs(
        paired=paired, low=lows.differences, high=highs.differences, scale=-x_min, used=used, audit=audit
    ), rule


def tuned_note(rule: ActiveAudits) -> str:
    """The record's sentence on the tuned treatment: the audit rule, the weights and what it guarantees."""
    x_min, x_max = design_range(rule)
    return (
        f"predicted outcomes entered with the audit correction f + (Y - f) / pi, pi recorded per run ({rule.describe()}); weight of the "
        f"prediction 1 (g = f); bets capped by the design's worst case [{x_min:.4g}, {x_max:.4g}]; past sums bounded at 0.005, test at "
        "a - 0.005: unbiased and anytime-valid whatever the halting model's accuracy (Zrnic & Candes 2024; Angelopoulos et al. 2023)"
    )


def break_even_advice(rows: OutcomeColumns, tested: str, baseline: str, policy: Policy) -> str | None:
    r"""The CLI's recommendation when the rows' halting sits on the losing side of the break-even (None otherwise).

    With a share s of the two systems' runs halting candidates and a mean audit probability pi of them, joined halting
    spends fewer agent steps than across-task stopping alone only if the task ratio T_j / T_a < 1 / (1 - s (1 - pi) r)
    (r: the share of a halted run's steps saved, at most 1). When even r = 1 puts that below :data:`BEST_TASK_RATIO`,
    halting cannot pay.

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare._tuned_pairs import break_even_advice
    >>> rows = stopwise.outcome_columns([{"system": "A", "task": "t", "outcome": 1, "status": "predicted", "flags": "predicted"},
    ...                                  {"system": "B", "task": "t", "outcome": 0}, {"system": "A", "task": "u", "outcome": 1},
    ...                                  {"system": "B", "task": "u", "outcome": 0}])
    >>> from stopwise.records import parse_policy
    >>> policy = parse_policy('[decision]\nboundary = "betting-wor"\npredicted = "prediction-powered"\n[early]\naudit_fraction = 0.5')
    >>> break_even_advice(rows, "A", "B", policy)[:42]
    'joined halting is on the losing side: 25 %'
    """
    kinds = _row_kinds(rows)
    mine = (rows.system == tested) | (rows.system == baseline)
    usable = mine & ((rows.status == "final") | (rows.status == "predicted"))
    candidate = (kinds.predicted | kinds.corrected) & usable
    if not usable.any() or not candidate.any():
        return None
    share = float(candidate.sum() / usable.sum())
    recorded = audit_probabilities(rows)[candidate]
    pi = float(np.mean(np.where(np.isnan(recorded), policy.early.audit_fraction, recorded)))
    best = 1.0 / (1.0 - share * (1.0 - pi))
    if best >= BEST_TASK_RATIO:
        return None
    return (
        f"joined halting is on the losing side: {100 * share:.0f} % of the runs halting candidates, audited with mean probability {pi:.2f}, "
        f"pay only if the boundary needs fewer than {best:.2f} times the tasks of across-task stopping alone even when a halt saves "
        f"its whole run; the prediction-powered boundary needs about {BEST_TASK_RATIO:g} times or more (docs/joint-replay.md, "
        "break-even): halt more runs, audit fewer (a lower rho, active audits), or run without halting and stop across tasks"
    )
