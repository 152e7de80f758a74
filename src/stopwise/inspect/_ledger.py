"""What the Inspect manager needs of a ledger: register, append, decide.

:func:`stopwise.ledger.open_ledger` returns an object with these methods (SQLite or PostgreSQL);
the protocol keeps the manager independent of the storage and lets tests count the calls.

Two more methods, optional, make the ledger the single source of pairing state (several
processes, retries): ``decisions(evaluation, after=k)`` (the decision links after sequence ``k``)
and ``final_tasks(evaluation, system, tasks)`` (which of ``tasks`` have a final outcome of
``system``). A ledger object without them is read through this process's own appends and looks.
Three more, as optional, tell the workers of the two systems about each other across processes:
``notify``, ``notices`` (the workers' started / failed / finished states) and ``progress`` (events
stored per system, for pacing); without them, only tasks in one process are told and paced.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from stopwise._redact import redact_url
from stopwise.errors import InputError
from stopwise.records import DecisionRecord, Policy

__all__ = ["LedgerLike", "count_of", "open_any", "redact_url"]


@runtime_checkable
class LedgerLike(Protocol):
    """The three ledger methods the live manager calls (``Ledger`` before 0.1; the class is :class:`stopwise.ledger.Ledger`)."""

    def register(self, evaluation: str, *, policy: Policy, universe: Any, tested: str, baseline: str) -> Any:
        """Register ``evaluation`` with its policy and planned task universe (idempotent)."""
        ...

    def append(self, evaluation: str, rows: Any) -> Any:
        """Append outcome rows (mappings in the outcome-row contract); returns the accepted, duplicate and conflict counts."""
        ...

    def decide(self, evaluation: str) -> DecisionRecord:
        """Decide from every outcome stored so far and append the decision record."""
        ...


def open_any(ledger: Any) -> tuple[LedgerLike, str]:
    """(ledger object, description) from a URL or an object that has the ledger methods."""
    if isinstance(ledger, str):
        if not ledger.strip():
            raise InputError("`ledger` must be a database URL such as 'sqlite:///ledger.db' or a ledger object")
        from stopwise.ledger import open_ledger

        return open_ledger(ledger, mode="create"), redact_url(ledger)  # the manager registers: it may create the ledger
    missing = [name for name in ("register", "append", "decide") if not callable(getattr(ledger, name, None))]
    if missing:
        raise InputError(
            "`ledger` must be a database URL or a ledger (stopwise.ledger.open_ledger); "
            f"{type(ledger).__name__} has no {', '.join(missing)}"
        )
    return ledger, type(ledger).__name__


def count_of(result: Any, name: str) -> int:
    """The number behind ``result.<name>``: an int, or the length of a list of rows or keys."""
    value = getattr(result, name, 0)
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    try:
        return len(value)
    except TypeError:
        return 0
