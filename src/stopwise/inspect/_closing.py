"""When a paired task stops for its partner, and when its log ends in error (fail closed) rather than in success.

Two rules of :class:`~stopwise.inspect._manager.PairedComparison`, kept here as functions of it:

* :func:`partner_down`: whether the partner of a system is down -- its task failed (Inspect's ``on_sample_end``
  hook, or its worker's ``failed`` notice), it never started in another process, or its worker stopped storing
  outcomes while this one waited for it -- and so whether this system holds its next sample;
* :func:`fail_closed`: why a task's log must end in error: its partner failed before a decision (``eval_set`` then
  retries both tasks), it skipped samples to keep the planned order and nothing was decided
  (:mod:`stopwise.inspect._prefix`: the next attempt runs them), or it ran no sample (Inspect would write no
  early-stopping summary and count every skipped sample as an error);
* :func:`end_notes`: what the log's notes say of how the task ended (the ledger or the partner failed, why
  nothing is decided yet, the samples skipped to keep the order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stopwise.inspect._errors import run_tasks
from stopwise.inspect._partner import PACE_LEDGER_POLL_S
from stopwise.inspect._prefix import WINDOW, Late

if TYPE_CHECKING:
    from stopwise.inspect._manager import PairedComparison, Role

__all__ = ["DEAD_PARTNER_S", "REFUSED", "end_notes", "fail_closed", "order_note", "partner_down"]

DEAD_PARTNER_S = 30.0
"""The least time a paced partner in another process may store nothing before it is taken for dead."""
REFUSED = "its task was refused at start"
"""How a refusal at ``start_task`` begins its failure notice (a retry brings it again: the partner does not wait)."""
_PARTNER: dict[Role, Role] = {"tested": "baseline", "baseline": "tested"}


def partner_down(comparison: PairedComparison, role: Role, now: float) -> tuple[str | None, bool, bool]:
    """Why ``role``'s partner is down (or None), whether ``role`` is paced behind it, and whether it already waited."""
    partner = comparison._sides[_PARTNER[role]]
    if now - comparison._notices_at >= PACE_LEDGER_POLL_S:
        comparison.partners.refresh()
        comparison._notices_at = now
    failed = comparison._partner_failure(role)
    if failed is not None:  # a refusal at start comes again on a retry: no wait for one
        return failed, False, REFUSED in failed
    if partner.started:
        return None, False, False
    wait = comparison.spec.partner_wait
    state = comparison.partners.state(partner.system)
    if state is None and (run_tasks(comparison._sides[role].run) or 1) > 1:
        return None, False, False  # it may run in this process, later in this run (eval(tasks) with max_tasks=1)
    if state is None:  # no worker of the partner has started (in another process)
        if wait is not None and comparison._sides[role].counts.completed >= (comparison.pace or 2):
            return (
                f"{_PARTNER[role]} system {partner.system!r}: its task never started (no worker of it recorded "
                "`started` in the ledger); start a worker per system at the same time, or give partner_wait=None "
                "to run the systems one after the other"
            ), False, False
        return None, False, False
    if state != "started" or comparison.pace is None:  # finished: its outcomes are in the ledger
        return None, False, False
    stall = DEAD_PARTNER_S if wait is None else max(wait, DEAD_PARTNER_S)
    ahead = comparison.partners.ahead(comparison._sides[role].system, partner.system, comparison.pace, float("inf"))
    if ahead and comparison.partners.stalled(partner.system, stall):
        if wait is None:  # run on alone
            return None, False, False
        return (
            f"{_PARTNER[role]} system {partner.system!r}: its worker stored no outcome for {stall:g} s while this "
            "one waited for it (it may have died)"
        ), False, True
    return None, ahead, False


def end_notes(comparison: PairedComparison, role: Role, partner_failed: str | None, partner_running: bool) -> list[str]:
    """What ``role``'s log says of how its task ended: the ledger failed, its partner failed, or why nothing is decided yet.

    And the samples skipped to keep the planned order (:func:`order_note`), if any.
    """
    partner = comparison._sides[_PARTNER[role]]
    notes: list[str] = []
    if comparison.error is not None:
        notes.append(
            "the ledger failed, so no later sample of either system was scheduled in this process; the "
            "samples scored before stay in the Inspect log (see `error`)"
        )
    elif partner_failed is not None and not comparison.final:
        notes.append(
            f"the paired task failed, so this task stopped scheduling samples ({partner_failed}); fix it and "
            "run both again: the outcomes stored so far are kept in the ledger (duplicates are not stored twice)"
        )
    elif comparison.decision is None and not partner.started and partner_running:
        notes.append(
            f"no decision yet when this task ended: the paired task ({partner.system!r}) is still running in "
            "another process; the final decision will be in the ledger's decision chain (stopwise watch, "
            "stopwise ledger export --decisions)"
        )
    elif comparison.decision is None and not partner.started:
        notes.append(
            f"no task had outcomes of both systems in the ledger when this task ended, so no decision was "
            f"taken: run the paired task ({partner.system!r}) at the same time, in one eval() call with "
            "max_tasks >= 2 or in a worker process per system on one ledger, so their samples interleave"
        )
    elif comparison.decision is None:
        notes.append("no task had outcomes of both systems yet, so no decision was taken")
    elif not comparison.final and (partner_running or not partner.started):
        notes.append(
            f"not decided when this task ended (latest action {comparison.decision.action!r}); the paired task may "
            "still be running: later decisions are in the ledger's decision chain (stopwise watch, "
            "stopwise ledger export --decisions)"
        )
    gate = comparison._sides[role].gate
    if gate is not None and gate.skipped:
        notes.append(order_note(gate.skipped, comparison.final))
    return notes


def order_note(skipped: list[Late], decided: bool) -> str:
    """The log's note on the samples :class:`~stopwise.inspect._prefix.PrefixGate` skipped, and what comes next."""
    first = skipped[0]
    tasks = list(dict.fromkeys(late.task for late in skipped))
    shown = ", ".join(tasks[:5]) + (" ..." if len(tasks) > 5 else "")
    then = (
        "the comparison was decided all the same" if decided else
        "the log ends in error so that eval_set (or eval_retry) runs them again, in order: they have no prior record"
    )
    return (
        f"{len(skipped)} sample(s) skipped to keep the planned order: each came more than {WINDOW} places after a task "
        f"of this run that had not started (first {first.task}, place {first.place}; waited for: {shown}); Inspect "
        "starts a retried sample after the fresh ones and the betting boundary judges the planned prefix, so no "
        f"sample runs that far ahead of a missing one; {then}"
    )


def fail_closed(comparison: PairedComparison, role: Role, partner_failed: str | None) -> str | None:
    """Why ``role``'s task must end in error (its log's ``error``), or None for a successful log.

    Its partner failed before a decision, or the ledger failed before one (this process's append, read or
    decide): ``eval_set`` then retries both tasks (a successful log is complete for Inspect, and a retried
    task alone would find no partner to pair with; the partner's log names the same failure). Or it ran no
    sample at all: Inspect then writes no results, hence no early-stopping summary, and its console
    counts every skipped sample as an error; the log's error says why instead.
    """
    side = comparison._sides[role]
    counts = side.counts
    done = f"this task ran {counts.completed} sample(s) and skipped {counts.stopped}"
    if role in comparison._misused and not comparison.final:
        return f"stopwise: {comparison._misused[role]}; so {done} (evaluation {comparison.evaluation!r}, not decided)"
    if partner_failed is not None and not comparison.final and comparison.error is None:
        return (
            f"stopwise: the paired task failed ({partner_failed}), so {done} (evaluation {comparison.evaluation!r}, "
            "not decided); run both tasks again (eval_set retries both, or eval_retry both logs): the outcomes "
            "stored so far are kept in the ledger and not stored twice"
        )
    skipped = [] if side.gate is None else side.gate.skipped
    if skipped and not comparison.final and comparison.error is None:
        return f"stopwise: {order_note(skipped, False)}; {done} (evaluation {comparison.evaluation!r}, not decided)"
    if comparison.error is not None and not comparison.final:
        return (
            f"stopwise: {comparison.error}; {done} (evaluation {comparison.evaluation!r}, not decided): no later sample "
            "of either system was scheduled (fail closed); run both tasks again once the ledger works (eval_set retries "
            "both, or eval_retry both logs): the outcomes stored so far are kept in the ledger and not stored twice"
        )
    if counts.completed or not counts.stopped:
        return None
    if comparison.error is not None:
        return f"stopwise: {comparison.error}; {done}: no later sample of either system was scheduled (fail closed)"
    if comparison.final and comparison.decision is not None:
        reason = comparison.decision.reason if len(comparison.decision.reason) <= 300 else comparison.decision.reason[:300] + "..."
        return (
            f"stopwise: evaluation {comparison.evaluation!r} is already decided in ledger {comparison.ledger_name} "
            f"({comparison.decision.action}: {reason}); {done}: nothing was left to run. The decision is in the ledger "
            "(stopwise watch, stopwise ledger export --decisions); to evaluate again, register a new evaluation id"
        )
    return None
