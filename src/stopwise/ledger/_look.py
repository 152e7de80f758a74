"""One look at an evaluation: the events read, the decision taken on them, its append to the chain.

:meth:`stopwise.ledger.Ledger.decide` is these three steps. :meth:`stopwise.ledger.Ledger.look` hands
them out one by one, so that a caller (``benchmarks/ledger_throughput.py``) can time the read, the
decision and the append apart; the record appended is always the one taken on the events read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stopwise.errors import LedgerError
from stopwise.ledger._head_file import record_head
from stopwise.ledger._results import EventSnapshot, LedgerDecision, Registration
from stopwise.records import DecisionRecord, OutcomeColumns

if TYPE_CHECKING:
    from stopwise.ledger._store import LedgerStore

__all__ = ["LedgerLook", "decide_registered"]


def decide_registered(reg: Registration, rows: OutcomeColumns) -> DecisionRecord:
    """:func:`stopwise.decide` on ``rows`` with the registered systems, policy and planned universe."""
    from stopwise.compare import decide

    return decide(rows, reg.tested, reg.baseline, reg.policy, universe=reg.universe)


class LedgerLook:
    """The events of one evaluation read at one moment, the decision on them and its append (see the module notes).

    Build it with :meth:`stopwise.ledger.Ledger.look`.

    Attributes
    ----------
    registration : Registration
        The evaluation (its policy, universe and systems).
    events : EventSnapshot
        Every event stored up to ``events.high_water`` when the look was taken.

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.ledger import open_ledger
    >>> from stopwise.records import TaskUniverse
    >>> with open_ledger("sqlite:///:memory:") as ledger:
    ...     ledger.register("ev", policy=stopwise.Policy(), universe=TaskUniverse(["t"]), tested="A", baseline="B")
    ...     _ = ledger.append("ev", [{"system": s, "task": "t", "outcome": 1} for s in "AB"])
    ...     look = ledger.look("ev")
    ...     record = look.decide()
    ...     link = look.append()
    >>> (look.events.high_water, link.sequence, link.record.action == record.action)
    (2, 1, True)
    """

    def __init__(self, store: LedgerStore, registration: Registration, events: EventSnapshot) -> None:
        self._store = store
        self.registration = registration
        self.events = events
        self._decision: DecisionRecord | None = None
        self._appended = False

    def __repr__(self) -> str:
        return f"LedgerLook({self.registration.name!r}, events up to {self.events.high_water})"

    def decide(self) -> DecisionRecord:
        """The decision on these events (:func:`stopwise.decide` with the registration; taken once, then kept).

        Raises
        ------
        ComparisonError
            The comparison cannot be formed from these events.
        """
        if self._decision is None:
            self._decision = decide_registered(self.registration, self.events.rows)
        return self._decision

    def append(self) -> LedgerDecision | None:
        """Append the decision (taken now if it was not) to the chain with its ledger position; once per look.

        Returns
        -------
        LedgerDecision or None
            The new link; None, and nothing appended, when another process appended a decision taken
            on later events meanwhile (the chain's positions never decrease): look again.
        """
        if self._appended:
            raise LedgerError(f"{self!r}: its decision was appended already; take a new look (Ledger.look)")
        decision = self.decide()
        self._appended = True
        link = self._store.append_decision(self.registration, decision, self.events)
        if link is not None:
            record_head(self._store, self.registration)  # the head file beside a SQLite ledger
        return link
