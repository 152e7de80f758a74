"""Following a ledger: take a look whenever new outcome events arrive, until the comparison is decided.

Also what every follower shares: the look (:class:`FollowLook`), the polling rules and the wait between polls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stopwise.errors import ComparisonError, LedgerError, StopwiseError
from stopwise.records import ACTIONS, DecisionRecord

if TYPE_CHECKING:
    from stopwise.compare import NextTasks
    from stopwise.ledger import Ledger, Registration

__all__ = ["FINAL_ACTIONS", "FollowLook", "Look", "follow"]

FINAL_ACTIONS = frozenset(ACTIONS) - {"continue"}
"""Actions that end a comparison (``continue`` does not)."""


@dataclass(frozen=True, kw_only=True)
class FollowLook:
    """What every look at a followed source (a ledger, an Inspect log directory) holds."""

    record: DecisionRecord | None
    """The decision (None while the comparison cannot be formed yet, e.g. one system has no outcome)."""
    elapsed_s: float
    """Seconds since following started."""
    next: NextTasks | None = None
    """The tasks to run next, top-up first (:func:`stopwise.compare.next_tasks`): None when the look has no
    decision yet and no planned order to follow, or the follower was asked for none."""

    @property
    def final(self) -> bool:
        """True when the decision ends the comparison (promote, reject or abstain)."""
        return self.record is not None and self.record.action in FINAL_ACTIONS


@dataclass(frozen=True, kw_only=True)
class Look(FollowLook):
    """One look at a followed evaluation of a ledger."""

    outcome_seq: int
    """The outcome high-water mark the look saw."""
    waiting: str | None
    """Why there is no decision yet (None when there is one)."""


def check_polling(interval: float, timeout: float | None, error: type[StopwiseError]) -> None:
    """Refuse a poll interval that is not > 0 or a timeout that is not >= 0 (None: no timeout) with ``error``."""
    if not interval > 0:
        raise error(f"`interval` must be a number of seconds > 0; got {interval!r}")
    if timeout is not None and not timeout >= 0:
        raise error(f"`timeout` must be a number of seconds >= 0; got {timeout!r}")


def wait_for_next_poll(
    start: float, interval: float, timeout: float | None, clock: Callable[[], float], sleep: Callable[[float], None]
) -> bool:
    """Sleep until the next poll (never past the timeout); False, without sleeping, once the timeout has passed."""
    if timeout is not None and clock() - start >= timeout:
        return False
    sleep(interval if timeout is None else max(0.0, min(interval, timeout - (clock() - start))))
    return True


def _upcoming(ledger: Ledger, evaluation: str, registration: Registration, decision: DecisionRecord | None, n: int) -> NextTasks | None:
    """The look's next tasks (None without a planned order, when none are asked for, or while the rows cannot be paired)."""
    from stopwise.compare import next_tasks

    if not n or not registration.universe.ordered:
        return None
    rows = ledger.outcomes(evaluation) if ledger.high_water(evaluation) else None
    try:
        return next_tasks(
            rows, registration.tested, registration.baseline, registration.policy, universe=registration.universe, n=n, record=decision
        )
    except ComparisonError:  # the look's own decision said why (its ``waiting``)
        return None


def _known_decision(ledger: Ledger, evaluation: str, high_water: int) -> DecisionRecord | None:
    """The chain's decision when a new look would bring no new evidence, else None.

    That is the first final decision, or the latest one when it was taken on every stored event.
    """
    first = ledger.first_decision(evaluation)
    if first is not None:
        return first.record
    links = ledger.decisions(evaluation)
    if links and links[-1].outcome_seq >= high_water:
        return links[-1].record
    return None


def follow(
    ledger: Ledger,
    evaluation: str,
    *,
    interval: float = 1.0,
    timeout: float | None = None,
    record: bool = True,
    force: bool = False,
    n_next: int = 10,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Look]:
    """Yield a look now and after every change of the outcome high-water mark, until decided or timed out.

    Each look with new events takes a decision (appended to the chain when ``record``); the
    iteration ends after the first final action (promote, reject, abstain) or when ``timeout``
    seconds have passed (the last look is yielded again with the current state). A look records
    only new evidence: when the chain already holds a decision taken on every stored event, or the
    evaluation is already decided (its first final decision), that decision is the look's and
    nothing is appended, unless ``force``.

    Parameters
    ----------
    ledger : Ledger
        An open ledger.
    evaluation : str
        A registered evaluation.
    interval : float, optional
        Seconds between polls of the high-water mark (> 0).
    timeout : float, optional
        Stop following after this many seconds (None: until decided).
    record : bool, optional
        Append each decision to the chain (default) or only compute it.
    force : bool, optional
        Take and record the first look even when the chain has a decision on every stored event or the
        evaluation is decided (a look without new evidence).
    n_next : int, optional
        Each look's :attr:`Look.next`: at most this many tasks to run next, top-up first (0: none computed). The
        betting boundary's early stop depends on running them (docs/live_looks.md).
    clock, sleep : callable, optional
        Time source and sleeper (for tests).

    Yields
    ------
    Look
    """
    check_polling(interval, timeout, LedgerError)
    if isinstance(n_next, bool) or not isinstance(n_next, int) or n_next < 0:
        raise LedgerError(f"`n_next` must be a whole number of tasks >= 0; got {n_next!r}")
    registration = ledger.registration(evaluation)
    start = clock()
    seen = -1
    while True:
        now = ledger.high_water(evaluation)
        if now != seen:
            first_look, seen = seen < 0, now
            decision: DecisionRecord | None = None
            waiting: str | None = "no outcome events yet"
            known = None if force or not first_look else _known_decision(ledger, evaluation, now)
            if known is not None:  # no new evidence: the chain's decision is the look's, nothing appended
                decision, waiting = known, None
            elif now > 0:
                try:
                    decision, waiting = ledger.decide(evaluation, record=record), None
                except ComparisonError as exc:
                    waiting = str(exc)
            upcoming = _upcoming(ledger, evaluation, registration, decision, n_next)
            look = Look(outcome_seq=now, record=decision, waiting=waiting, elapsed_s=clock() - start, next=upcoming)
            yield look
            if look.final:
                return
        if not wait_for_next_poll(start, interval, timeout, clock, sleep):
            return
