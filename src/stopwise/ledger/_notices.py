"""The live workers' states in the ledger: who started, who failed (and why), who finished.

Several processes (one per system, or a retry) share nothing but the ledger, so what one worker must
tell the other goes there: a worker that fails (bad sample ids, a ledger error) appends a ``failed``
notice with its reason, and its partner, which reads the notices before scheduling, stops too. The
notices are append-only (``stopwise_notices``); the latest notice of a system is its state, so a
worker started again (a retry) supersedes its earlier failure with ``started``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, inspect, select

from stopwise.errors import InputError
from stopwise.ledger import _schema as S
from stopwise.records import WORKER_STATES, WorkerState

__all__ = ["WorkerNotice", "insert_notice", "latest_states", "read_notices", "system_progress"]

MESSAGE_CHARS = 2000
"""A notice's message is cut to this many characters."""


@dataclass(frozen=True)
class WorkerNotice:
    """One notice of a live worker (see :meth:`stopwise.ledger.Ledger.notify`)."""

    id: int
    """Increasing over the ledger (read the notices after an id with ``notices(after=id)``)."""
    evaluation: str
    """The evaluation (its name; it need not be registered yet)."""
    system: str
    """The system whose worker sent it."""
    state: WorkerState
    """``started``, ``failed`` or ``finished``."""
    message: str
    """Why (the error of a failure), or ""."""
    created_at: str
    """UTC time it was stored (ISO 8601)."""


def insert_notice(conn: Connection, evaluation: str, system: str, state: str, message: str, now: str) -> WorkerNotice:
    """Append one notice in the caller's transaction (the state is checked against :data:`WORKER_STATES`)."""
    if state not in WORKER_STATES:
        raise InputError(f"notice state must be one of {', '.join(WORKER_STATES)}; got {state!r}")
    for name, value in (("evaluation", evaluation), ("system", system)):
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"notice {name} must be a non-empty name; got {value!r}")
    text = str(message or "")[:MESSAGE_CHARS]
    values = {"evaluation": evaluation, "system": system, "state": state, "message": text, "created_at": now}
    new_id = conn.execute(S.notices.insert().values(**values).returning(S.notices.c.id)).scalar_one()
    return WorkerNotice(id=int(new_id), **values)  # type: ignore[arg-type]


def read_notices(conn: Connection, evaluation: str, after: int = 0) -> list[WorkerNotice]:
    """The evaluation's notices with an id above ``after``, oldest first (none on a ledger made before notices)."""
    if not inspect(conn).has_table(S.notices.name):
        return []
    n = S.notices.c
    rows = conn.execute(
        select(n.id, n.evaluation, n.system, n.state, n.message, n.created_at)
        .where(n.evaluation == evaluation, n.id > int(after))
        .order_by(n.id)
    ).all()
    return [WorkerNotice(id=int(r.id), evaluation=r.evaluation, system=r.system, state=r.state, message=r.message,
                         created_at=r.created_at) for r in rows]


def latest_states(notices: Iterable[WorkerNotice]) -> dict[str, WorkerNotice]:
    """The latest notice of each system (its current state).

    Examples
    --------
    >>> from stopwise.ledger._notices import WorkerNotice, latest_states
    >>> a = WorkerNotice(1, "ev", "A", "started", "", "t1")
    >>> b = WorkerNotice(2, "ev", "A", "failed", "bad ids", "t2")
    >>> latest_states([a, b])["A"].state
    'failed'
    """
    latest: dict[str, WorkerNotice] = {}
    for notice in notices:
        if notice.system not in latest or notice.id > latest[notice.system].id:
            latest[notice.system] = notice
    return latest


def system_progress(conn: Connection, evaluation_id: Any) -> dict[str, int]:
    """Outcome events stored per system of one evaluation (by its registration id)."""
    c = S.outcomes.c
    rows = conn.execute(select(c.system, func.count()).where(c.evaluation_id == evaluation_id).group_by(c.system)).all()
    return {str(system): int(count) for system, count in rows}
