"""Where in the ledger a decision is taken: the :class:`~stopwise.records.LedgerPosition` a ledger's record carries.

A record taken by :meth:`Ledger.decide` states the event sequence number it saw the events up to, how
many events that is, which record of the chain first decided (promote or reject) and how many of its
events were stored after that first final decision. The position is part of the record's canonical
JSON, so the chain digest covers it; ``ledger verify`` recomputes it from the events and the chain
(:mod:`stopwise.ledger._verify`).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from sqlalchemy import Connection, func, select

from stopwise._limits import limit
from stopwise.errors import LedgerError, LimitError
from stopwise.ledger import _schema as S
from stopwise.records import DecisionRecord, LedgerPosition

__all__ = ["FINAL_ACTIONS", "first_final", "position_of"]

FINAL_ACTIONS = frozenset({"promote", "reject"})
"""Actions that decide an evaluation (the later records count the events stored after the first of them)."""


def _stored_json(record_json: str, sequence: int) -> dict[str, Any]:
    try:
        value = json.loads(record_json)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise LedgerError(
            f"decision #{sequence} of the chain is not a JSON decision record; the chain is not extended "
            "(run stopwise ledger verify to see what was changed)"
        )
    return value


def first_final(conn: Connection, evaluation_id: int) -> tuple[int, int] | None:
    """(chain sequence, outcome_seq) of the evaluation's first promote/reject record; None when there is none.

    Read from the last record's position when it has one (one row), else by scanning the chain
    (records stored before positions were).
    """
    d = S.decisions.c
    last = conn.execute(
        select(d.sequence, func.length(d.record_json)).where(d.evaluation_id == evaluation_id).order_by(d.sequence.desc()).limit(1)
    ).first()
    if last is None:
        return None
    cap = limit("STOPWISE_MAX_LINE_BYTES")
    if int(last[1] or 0) > cap:  # refused before it is read: stopwise never writes a record that large
        raise LimitError(
            f"decision #{int(last[0])} of the chain holds {int(last[1]):,} characters, over STOPWISE_MAX_LINE_BYTES "
            f"({cap:,}); the chain is not extended (run stopwise ledger verify)"
        )
    record_json = conn.execute(
        select(d.record_json).where(d.evaluation_id == evaluation_id, d.sequence == int(last[0]))
    ).scalar_one()
    position = _stored_json(record_json, int(last[0])).get("ledger")
    if isinstance(position, dict):
        sequence = position.get("decision")
        if sequence is None:
            return None
        row = conn.execute(
            select(d.outcome_seq).where(d.evaluation_id == evaluation_id, d.sequence == int(sequence))
        ).first()
        return None if row is None else (int(sequence), int(row.outcome_seq))
    for link in conn.execute(
        select(d.sequence, d.outcome_seq, d.record_json).where(d.evaluation_id == evaluation_id).order_by(d.sequence)
    ):
        if _stored_json(link.record_json, int(link.sequence)).get("action") in FINAL_ACTIONS:
            return int(link.sequence), int(link.outcome_seq)
    return None


def position_of(
    decision: DecisionRecord, sequence: int, outcome_seq: int, seqs: np.ndarray, first: tuple[int, int] | None
) -> LedgerPosition:
    """The position of ``decision``, chain sequence ``sequence``, taken on the events with sequence numbers ``seqs``.

    Examples
    --------
    >>> import numpy as np, stopwise
    >>> from stopwise.ledger._position import position_of
    >>> rows = stopwise.outcome_columns([{"system": s, "task": "t", "outcome": 1} for s in "AB"])
    >>> record = stopwise.decide(rows, "A", "B", complete=True)
    >>> position_of(record, 3, 9, np.array([2, 5, 9]), (1, 2))
    LedgerPosition(outcome_seq=9, n_events=3, decision=1, after_decision=2)
    """
    if first is None:
        return LedgerPosition(
            outcome_seq=outcome_seq,
            n_events=len(seqs),
            decision=sequence if decision.action in FINAL_ACTIONS else None,
        )
    return LedgerPosition(
        outcome_seq=outcome_seq, n_events=len(seqs), decision=first[0], after_decision=int(np.count_nonzero(seqs > first[1]))
    )
