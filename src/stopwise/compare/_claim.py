"""The words of a decision record: its interval as printed everywhere and its one claim sentence (issue 24, 35).

Every claim names its estimand (:class:`stopwise.records.EstimandState`): these planned tasks with these runs, or the
benchmark's task distribution; where attempts exist, how far new runs would move the difference. A record that
observed every planned task under a finite-population test states the mean difference as known exactly, never as a
zero-width "90 %" interval. An end of the interval is printed with as many decimals as it takes not to round onto the
threshold or across it (issue 35: "[+0.0, +28.0]" for a bound the test at 0 placed above 0).
"""

from __future__ import annotations

from stopwise.records import DecisionRecord, DifferenceInterval

__all__ = ["RARE_DISCORDANCE_NOTE", "claim_sentence", "interval_text"]

RARE_DISCORDANCE_NOTE = "rare discordance"
"""Marks the method of an interval that replaced the paper's tail at rare discordance by the exact-wor interval."""

_MAX_DECIMALS = 4


def _pp(value: float, threshold: float | None = None) -> str:
    """A difference in percentage points, signed; an exact zero is ``0.0`` (never ``+0.0`` or ``-0.0``).

    A value that is not zero gets as many decimals (up to four) as it takes not to print as zero, and, with
    ``threshold``, not to print as the threshold or beyond it.
    """
    if value == 0:
        return "0.0"
    for decimals in range(1, _MAX_DECIMALS + 1):
        text = f"{value * 100:+.{decimals}f}"
        shown = float(text) / 100
        off_threshold = threshold is None or value == threshold or (shown - threshold) * (value - threshold) > 0
        if shown != 0 and off_threshold:
            break
    return text


def interval_text(interval: DifferenceInterval, threshold: float | None = None) -> str:
    """``90 % anytime-valid interval [+1.2, +9.8] pp``: how the record's interval is printed everywhere.

    Examples
    --------
    >>> from stopwise.compare import interval_text
    >>> from stopwise.records import DifferenceInterval
    >>> ci = DifferenceInterval(low=0.00031, high=0.28, level=0.9, kind="anytime-valid", method="m")
    >>> interval_text(ci)
    '90 % anytime-valid interval [+0.03, +28.0] pp'
    >>> interval_text(ci.model_copy(update={"low": -0.0, "high": 0.0496}), threshold=0.05)
    '90 % anytime-valid interval [0.0, +4.96] pp'
    """
    level = f"{interval.level * 100:.4g}"
    return f"{level} % {interval.kind} interval [{_pp(interval.low, threshold)}, {_pp(interval.high, threshold)}] pp"


def _where(record: DecisionRecord) -> str:
    """What the claim is about: the record's estimand, less the tasks a ``missing = exclude`` look left out."""
    estimand = record.estimand
    where = f"on {estimand.text}" if estimand is not None else f"on these {record.n_planned} planned tasks"
    gone = record.missing
    if gone is not None and gone.treatment == "exclude" and gone.tasks:  # the boundary judged the universe without them
        where = (
            f"on these {record.n_planned - len(gone.tasks)} planned tasks ({len(gone.tasks)} errored or unscored task(s) "
            "left out: missing = exclude, valid only if errors are independent of the outcomes)"
        )
    predicted = record.predicted
    if predicted is not None and predicted.treatment == "bounded":
        where += " (if the halting model's certified wrong-halt rate holds on these runs: valid only on its calibration distribution)"
    return where


def _reruns(record: DecisionRecord) -> str:
    """The rerun component, where attempts exist: how far new runs would move the difference."""
    estimand = record.estimand
    if estimand is None or estimand.rerun_sd is None:
        return ""
    return (
        f"; new runs of the same systems with one attempt per task would move it by about {estimand.rerun_sd * 100:.1f} pp "
        f"(SD, estimated from the within-task variance of {estimand.attempts:.3g} attempts per task)"
    )


def _exact(record: DecisionRecord) -> bool:
    """Every planned task observed under a finite-population test: the mean difference is known, not estimated."""
    ci, estimand = record.interval, record.estimand
    return (
        ci is not None and estimand is not None and estimand.kind == "planned-tasks" and ci.low == ci.high
        and record.n_observed == record.n_planned and record.missing is None
    )  # fmt: skip


def _evidence(record: DecisionRecord, seen: str) -> str:
    """The bracket after a claim: the interval (or the exact mean) and the tasks observed."""
    ci = record.interval
    if ci is None:
        return f"({seen}; no interval: {record.tail_method})"
    if _exact(record):
        return f"(the mean difference is {_pp(ci.low)} pp, known exactly: {seen}{_reruns(record)})"
    return f"({interval_text(ci, record.threshold)}, {seen}{_reruns(record)})"


def _rare(record: DecisionRecord, threshold: str, seen: str) -> str | None:
    """The qualified claim of the paper's rule at rare discordance: its action with the exact interval that tests it."""
    ci = record.interval
    if ci is None or RARE_DISCORDANCE_NOTE not in ci.method or record.action not in ("promote", "reject"):
        return None
    a, b, where = record.tested, record.baseline, _where(record)
    word = "beats" if record.action == "promote" else "does not beat"
    shown = (record.action == "promote" and ci.low > record.threshold) or (
        record.action == "reject" and ci.high <= record.threshold
    )
    verdict = (
        f"the exact interval agrees, so {a} {word} {b} by more than {threshold} {where}"
        if shown
        else f"the exact interval includes the threshold, so the sample does not show that {a} {word} {b} by more than {threshold} {where}"
    )
    return (
        f"The paper's fixed-budget rule would {record.action} on too few discordant tasks for its tail to keep level a; "
        f"{verdict} ({interval_text(ci, record.threshold)}, {seen})."
    )


def claim_sentence(record: DecisionRecord) -> str:
    """One sentence saying what the record supports, generated from its fields (``DecisionRecord.claim``).

    Examples
    --------
    >>> import stopwise
    >>> rows = stopwise.outcome_columns(
    ...     [{"system": "A", "task": f"t{i}", "outcome": 1} for i in range(40)]
    ...     + [{"system": "B", "task": f"t{i}", "outcome": int(i < 10)} for i in range(40)])
    >>> policy = stopwise.Policy(tail_method="exact-wor")
    >>> stopwise.decide(rows, "A", "B", policy, complete=True).claim
    'A beats B by more than 0 pp on these 40 planned tasks with these runs (the mean difference is +75.0 pp, known exactly: 40 of 40 tasks observed).'
    """
    a, b = record.tested, record.baseline
    threshold = f"{record.threshold * 100:g} pp"
    where = _where(record)
    seen = f"{record.n_observed} of {record.n_planned} tasks observed"
    ci = record.interval
    rare = _rare(record, threshold, seen)
    if rare is not None:
        return rare
    if record.action == "promote":
        return f"{a} beats {b} by more than {threshold} {where} {_evidence(record, seen)}."
    if record.action == "reject":
        return f"{a} does not beat {b} by more than {threshold} {where} {_evidence(record, seen)}."
    if record.action == "continue":
        return _not_decided(record, seen)
    # abstain
    if ci is None:
        return f"No claim about {a} against {b} at {threshold}: {record.reason} ({seen})."
    if ci.low <= record.threshold <= ci.high:
        support = (
            f"the data support a mean difference from {_pp(ci.low)} to {_pp(ci.high)} pp, which includes the threshold "
            f"{threshold}, so neither 'better by more than {threshold}' nor 'not better by more' is shown"
        )
        return f"No claim about {a} against {b} {where}: {support} {_evidence(record, seen)}."
    side = "above" if ci.low > record.threshold else "below"
    support = f"the {interval_text(ci, record.threshold)} lies {side} the threshold {threshold}, but no final action was allowed: {record.reason}"
    return f"No claim about {a} against {b} {where}: {support} ({seen})."


def _not_decided(record: DecisionRecord, seen: str) -> str:
    """The claim of a ``continue`` record: what the action waits for, and the interval so far."""
    forecast, ci = record.forecast, record.interval
    if forecast is not None:
        share = f"{forecast.decided_share * 100:.0f} %"
        if forecast.n_simulations == 0:  # the top-up design: crossed, waiting for these tasks alone
            need = f"the boundary is crossed; the action waits for the {forecast.median:.0f} top-up task(s) that bring coverage"
        elif record.boundary == "betting-wor":
            need = (
                f"needs about {forecast.median:.0f} more tasks (median of a predictive replay; 80 % range "
                f"{forecast.low:.0f}-{forecast.high:.0f}; {share} of the simulated completions decide before the budget limit)"
            )
        else:
            need = (
                f"the fixed-budget rule acts at the budget limit, {forecast.median:.0f} more tasks away "
                f"({share} of the simulated completions decide there)"
            )
    else:
        need = "no forecast (" + record.reason + ")"
    now = f"; so far {interval_text(ci, record.threshold)}" if ci is not None else ""
    return f"Not decided {_where(record)}: {need}{now}; {seen}."
