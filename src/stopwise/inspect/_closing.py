"""When a paired task stops for its partner, and when its log ends in error (fail closed) rather than in success.

Two rules of :class:`~stopwise.inspect._manager.PairedComparison`, kept here as functions of it:

* :func:`partner_down`: whether the partner of a system is down -- its task failed (Inspect's ``on_sample_end``
  hook, or its worker's ``failed`` notice), it never started in another process, or its worker stopped storing
  outcomes while this one waited for it -- and so whether this system holds its next sample;
* :func:`fail_closed`: why a task's log must end in error: its partner failed before a decision (``eval_set`` then
  retries both tasks), or it ran no sample (Inspect would write no early-stopping summary and count every skipped
  sample as an error).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stopwise.inspect._errors import run_tasks
from stopwise.inspect._partner import PACE_LEDGER_POLL_S

if TYPE_CHECKING:
    from stopwise.inspect._manager import PairedComparison, Role

__all__ = ["DEAD_PARTNER_S", "REFUSED", "fail_closed", "partner_down"]

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
