"""The ledger's storage: one database, its transactions, and the rows of registrations, events and decisions.

:class:`LedgerStore` holds what :class:`~stopwise.ledger.Ledger` (the facade users call), ``verify``
(:mod:`stopwise.ledger._verify`) and ``export`` (:mod:`stopwise.ledger._export`) read and write: the
engine and its fail-closed checks, write transactions with group commit on SQLite
(:mod:`stopwise.ledger._group_commit`), the events read column by column since the last read, the
decision chain's links and the workers' notices. It validates nothing the user gives (the facade
does) and decides nothing (``stopwise.decide`` does).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, RowMapping, func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from stopwise._redact import redact_url
from stopwise.errors import LedgerError, StopwiseError
from stopwise.ledger import _schema as S
from stopwise.ledger._columns import EVENT_COLUMNS, EventColumns
from stopwise.ledger._digest import canonical_json, chain_digest, same_content
from stopwise.ledger._engine import (
    SQLITE_BUSY_TIMEOUT_MS,
    file_identity,
    folder_lock,
    make_engine,
    sqlite_file,
    watch_server,
)
from stopwise.ledger._family import decode_family
from stopwise.ledger._group_commit import FLUSH_WAL, GroupCommit
from stopwise.ledger._notices import WorkerNotice, insert_notice, read_notices, system_progress
from stopwise.ledger._opening import LedgerMode, check_mode, prepare_schema
from stopwise.ledger._position import first_final, position_of
from stopwise.ledger._results import EventKey, EventSnapshot, LedgerDecision, Registration
from stopwise.ledger._universe_io import stored_setup
from stopwise.records import DecisionRecord

__all__ = ["LINK_COLUMNS", "LedgerStore", "StoredEvents", "now"]

CHUNK = 400
"""Rows per INSERT or IN list (well under SQLite's bound-parameter limit)."""
LINK_COLUMNS = ("sequence", "outcome_seq", "record_json", "previous_digest", "digest", "created_at")
"""A decision link as stored in ``stopwise_decisions`` (beside its evaluation): fields of :class:`LedgerDecision`."""
_KEY_COLUMNS = ["evaluation_id", "system", "task", "attempt"]


def now() -> str:
    """The current UTC time, ISO 8601 with microseconds (every stored timestamp)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def parse_record(record_json: str) -> DecisionRecord:
    """A stored decision record (a :class:`LedgerError` when it is not one)."""
    try:
        return DecisionRecord.model_validate_json(record_json)
    except ValueError as exc:
        raise LedgerError(f"stored decision record is not a valid decision record: {str(exc).splitlines()[0]}") from exc


class StoredEvents:
    """What one :meth:`LedgerStore.store_events` did with each event: positions in the order given."""

    def __init__(self) -> None:
        self.accepted: list[int] = []
        """Events stored for the first time."""
        self.duplicates: list[int] = []
        """Events whose key was stored with the same content."""
        self.conflicts: list[int] = []
        """Events whose key was stored with other content (kept in the conflicts table)."""


class LedgerStore:
    """One ledger database: its engine, transactions and the stored rows (see the module notes).

    Parameters
    ----------
    url : str
        A normalised ledger URL (:func:`stopwise.ledger.ledger_url`).
    mode : {"create", "write", "read"}
        How the database is opened (:mod:`stopwise.ledger._opening`).

    Examples
    --------
    >>> from stopwise.ledger._store import LedgerStore
    >>> store = LedgerStore("sqlite:///:memory:", mode="create")
    >>> with store.transaction(write=False) as conn:
    ...     store.evaluation_names(conn)
    []
    >>> store.close()
    """

    def __init__(self, url: str, *, mode: LedgerMode) -> None:
        self.url = url
        self.display = redact_url(url)
        """The URL with any password hidden (for messages)."""
        self.mode: LedgerMode = check_mode(mode)
        self.engine = make_engine(url, mode=self.mode)
        self.postgres = self.engine.dialect.name == "postgresql"
        self._insert = pg_insert if self.postgres else sqlite_insert
        self._insert_events = (  # built once: an append of one event is mostly this statement's overhead
            self._insert(S.outcomes)
            .on_conflict_do_nothing(index_elements=_KEY_COLUMNS)
            .returning(S.outcomes.c.system, S.outcomes.c.task, S.outcomes.c.attempt)
        )
        self._file = sqlite_file(url)
        self.sqlite_path: Path | None = self._file
        """The database file of a SQLite ledger (None for PostgreSQL and in-memory SQLite)."""
        self._identity: tuple[int, int] | None = None
        self._lost: str | None = None
        self._events: dict[int, EventColumns] = {}
        self._events_lock = threading.Lock()  # threads of one process read into the same columns
        self.group_commit = (
            None if self._file is None else GroupCommit(self._file, timeout_s=SQLITE_BUSY_TIMEOUT_MS / 1000)
        )
        """The writers' turns and shared WAL flushes of a SQLite file (None for PostgreSQL and in-memory SQLite)."""
        if self.postgres:  # fail closed: the server this ledger writes to is the one it first reached
            watch_server(self.engine, self._server_changed)
        # Creating a SQLite ledger, one process at a time: two processes switching one new file to WAL at once each
        # hold the shared lock the other's switch needs, and SQLite refuses one of them at once ("database is
        # locked", its busy timeout not waited): one worker of two started together died at start (issue 37).
        creating = folder_lock(self._file.parent) if self._file is not None and self.mode == "create" else nullcontext()
        try:
            with creating, self.transaction(write=self.mode == "create") as conn:  # read and write modes change nothing
                prepare_schema(conn, self.display, mode=self.mode, postgres=self.postgres, now=now())
        except BaseException:
            self.close()
            raise
        if self._file is not None:  # fail closed: the file this ledger writes to is the one at its path
            self._identity = file_identity(self._file)

    def close(self) -> None:
        """Release the database connections (the ledger stays on disk)."""
        self.engine.dispose()
        if self.group_commit is not None:
            self.group_commit.close()

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[Connection]:
        """One transaction; a write returns only once its commit is durable (before the caller acknowledges anything).

        On SQLite a write takes its turn among the file's writers and begins ``IMMEDIATE`` (the write
        lock first: a read cannot need an upgrade that SQLite refuses at once); its commit is flushed
        with the group's (:mod:`stopwise.ledger._group_commit`). Database errors become a
        :class:`LedgerError` naming the ledger.
        """
        if write and self.mode == "read":
            raise LedgerError(f"ledger {self.display} is open read-only (mode='read'); open it with mode='write' to append or record")
        group = self.group_commit if write else None
        try:
            ticket = None
            self.check_file()  # before connecting too: a new pooled SQLite connection would re-create a removed file
            with group.turn() if group is not None else nullcontext(), self.engine.connect() as conn:
                if write:
                    conn = conn.execution_options(stopwise_write=True)
                self.check_file()
                with conn.begin():
                    yield conn
                if group is not None and conn.info.get(FLUSH_WAL, False):
                    ticket = group.committed()
            if ticket is not None:
                assert group is not None
                group.durable(ticket)
            if write:  # a commit into a file removed meanwhile is not durable: nothing is acknowledged
                self.check_file()
        except StopwiseError:
            raise
        except SQLAlchemyError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise LedgerError(f"ledger {self.display}: database error: {first}") from exc
        except OSError as exc:
            raise LedgerError(
                f"ledger {self.display}: the commit could not be flushed to disk ({type(exc).__name__}: {exc}); "
                "nothing was acknowledged"
            ) from exc

    def check_file(self) -> None:
        """Fail closed when the SQLite database file was removed or replaced since the ledger was opened.

        An open SQLite connection keeps writing to a deleted file (and its ``-wal``) without an error,
        so every later append would be "accepted" into a file that no longer exists at the ledger's
        path. The file's (device, inode) recorded at open is compared with the path's before each
        transaction and after each write (one ``stat``, about a microsecond). On PostgreSQL, a
        connection the pool had to re-open that reached a restarted server or a re-created database
        (:func:`~stopwise.ledger._engine.watch_server`) fails the same way.
        """
        if self._lost is not None:
            raise LedgerError(
                f"ledger {self.display}: its connection to the database was lost and {self._lost}; nothing more "
                "is written or read through this ledger (fail closed: events it acknowledged may be missing). Check "
                "the ledger (stopwise ledger verify) and open it again"
            )
        if self._identity is None or self._file is None:
            return
        current = file_identity(self._file)
        if current != self._identity:
            what = "was removed" if current is None else "was replaced by another file"
            raise LedgerError(
                f"ledger {self.display}: its database file {what} since the ledger was opened; nothing more is "
                "written or read through this ledger (fail closed: its audit trail is no longer on disk at that path). "
                "Restore the file, or register the evaluation in a new ledger and append the Inspect logs to it "
                "(stopwise ingest, stopwise ledger append)"
            )

    def _server_changed(self, why: str) -> None:
        self._lost = why

    # ------------------------------------------------------------------ registrations
    def evaluation_names(self, conn: Connection, limit: int | None = None) -> list[str]:
        """Names of the registered evaluations, in registration order (the first ``limit``)."""
        query = select(S.evaluations.c.name).order_by(S.evaluations.c.id)
        return list(conn.execute(query if limit is None else query.limit(limit)).scalars())

    def registration_row(self, name: str) -> RowMapping | None:
        """The stored registration of ``name`` as a mapping of its columns (None when it is not registered)."""
        with self.transaction(write=False) as conn:
            return conn.execute(select(S.evaluations).where(S.evaluations.c.name == name)).mappings().first()

    def registration(self, name: str) -> Registration:
        """The registration of ``name``, read now; a :class:`LedgerError` listing the registered names when there is none."""
        with self.transaction(write=False) as conn:
            row = conn.execute(select(S.evaluations).where(S.evaluations.c.name == name)).mappings().first()
            known = self.evaluation_names(conn, 20) if row is None else []
        if row is None:
            listing = ", ".join(map(repr, known)) if known else "none"
            raise LedgerError(
                f"evaluation {name!r} is not registered in {self.display} (registered: {listing}); "
                "register it first (stopwise ledger init)"
            )
        policy, universe = stored_setup(row["policy_json"], row["universe_json"], f"evaluation {name!r} in {self.display}")
        family = decode_family(row["tested"], row["baseline"])
        return Registration(
            name=name, policy=policy, universe=universe, tested="" if family else row["tested"],
            baseline=row["baseline"], policy_sha256=row["policy_sha256"], universe_sha256=row["universe_sha256"],
            genesis_digest=row["genesis_digest"], created_at=row["created_at"], id=int(row["id"]), family=family,
        )

    def insert_registration(self, row: Mapping[str, Any]) -> RowMapping | None:
        """Store a registration row; None when stored, else the row already registered under its name."""
        name = row["name"]
        query = select(S.evaluations).where(S.evaluations.c.name == name)
        try:
            with self.transaction(write=True) as conn:
                existing = conn.execute(query).mappings().first()
                if existing is None:
                    conn.execute(S.evaluations.insert().values(**row))
                return existing
        except LedgerError as exc:
            if not isinstance(exc.__cause__, IntegrityError):
                raise
        # Another process registered the same name at the same moment: that row is the registration.
        with self.transaction(write=False) as conn:
            return conn.execute(query).mappings().first()

    # ------------------------------------------------------------------ outcome events
    def store_events(
        self, evaluation_id: int, values: list[dict[str, Any]], keys: list[EventKey], payloads: list[dict[str, Any]]
    ) -> StoredEvents:
        """Store new events in one transaction; repeats of stored keys are duplicates or recorded conflicts.

        ``values`` are the rows to insert (one per event, :data:`~stopwise.ledger._schema.outcomes`
        columns), ``keys`` their (system, task, attempt) and ``payloads`` their content (digested
        into ``values[i]["digest"]``). An event whose key came earlier in the same call is judged
        against the stored one, like any repeat.
        """
        first: dict[EventKey, int] = {}
        for i, key in enumerate(keys):
            first.setdefault(key, i)
        unique = sorted(first.values())
        done = StoredEvents()
        with self.transaction(write=True) as conn:
            # executemany with RETURNING: SQLAlchemy batches it into multi-row INSERTs ("insertmanyvalues")
            # from one cached compiled statement.
            inserted = {(r[0], r[1], int(r[2])) for r in conn.execute(self._insert_events, [values[i] for i in unique])}
            done.accepted = [i for i in unique if keys[i] in inserted]
            judged = [i for i in range(len(keys)) if not (keys[i] in inserted and first[keys[i]] == i)]
            stored = self._stored_digests(conn, evaluation_id, [keys[i] for i in judged if keys[i] not in inserted])
            stored.update({keys[i]: (values[i]["digest"], payloads[i]["source"]) for i in done.accepted})
            conflict_rows = []
            for i in judged:
                if same_content(payloads[i], values[i]["digest"], *stored[keys[i]]):
                    done.duplicates.append(i)
                    continue
                done.conflicts.append(i)
                conflict_rows.append({
                    "evaluation_id": evaluation_id, "system": keys[i][0], "task": keys[i][1], "attempt": keys[i][2],
                    "row_json": canonical_json(payloads[i]), "digest": values[i]["digest"],
                    "stored_digest": stored[keys[i]][0], "received_at": values[i]["received_at"],
                })
            if conflict_rows:
                conn.execute(
                    self._insert(S.conflicts).values(conflict_rows).on_conflict_do_nothing(index_elements=[*_KEY_COLUMNS, "digest"])
                )
        return done

    @staticmethod
    def _stored_digests(conn: Connection, evaluation_id: int, keys: list[EventKey]) -> dict[EventKey, tuple[str, str]]:
        """(digest, source) of the stored events with these keys."""
        tasks = sorted({k[1] for k in keys})
        wanted = set(keys)
        found: dict[EventKey, tuple[str, str]] = {}
        c = S.outcomes.c
        for start in range(0, len(tasks), CHUNK):
            query = select(c.system, c.task, c.attempt, c.digest, c.source).where(
                c.evaluation_id == evaluation_id, c.task.in_(tasks[start : start + CHUNK])
            )
            for system, task, attempt, digest, source in conn.execute(query):
                key = (system, task, int(attempt))
                if key in wanted:
                    found[key] = (digest, source)
        return found

    def snapshot(self, reg: Registration, *, reread: bool = False) -> EventSnapshot:
        """Every stored event of the evaluation, exactly those up to the high-water mark it reports.

        Only the events stored since the previous read are fetched (``reread``: all of them again); the
        rows are held column by column (:class:`~stopwise.ledger._columns.EventColumns`). On PostgreSQL
        the read takes a SHARE lock on the outcomes table, which waits for appends in flight: an event
        with a lower sequence can then no longer commit after this read. The threads of one process
        read one at a time (each extends the same columns).
        """
        with self._events_lock:  # one reader at a time extends the columns: no event is added twice
            columns = self._events.get(reg.id)
            if columns is None or reread:
                columns = self._events[reg.id] = EventColumns()
            c = S.outcomes.c
            with self.transaction(write=False) as conn:
                if self.postgres:
                    conn.execute(text(f"LOCK TABLE {S.outcomes.name} IN SHARE MODE"))
                query = (
                    select(c.seq, *[getattr(c, name) for name in EVENT_COLUMNS])
                    .where(c.evaluation_id == reg.id, c.seq > columns.high_water)
                    .order_by(c.seq)
                )
                new = conn.execute(query).all()
            columns.extend(new)
            rows, seqs = columns.columns()
            return EventSnapshot(rows, seqs, columns.high_water)

    def high_water(self, reg: Registration) -> int:
        """The evaluation's current outcome high-water mark (0 when nothing is stored)."""
        with self.transaction(write=False) as conn:
            value = conn.execute(select(func.max(S.outcomes.c.seq)).where(S.outcomes.c.evaluation_id == reg.id)).scalar()
        return int(value or 0)

    def event_digests(self, reg: Registration) -> list[tuple[int, str]]:
        """(sequence, stored content digest) of every event of the evaluation, in storage order."""
        o = S.outcomes.c
        with self.transaction(write=False) as conn:
            rows = conn.execute(select(o.seq, o.digest).where(o.evaluation_id == reg.id).order_by(o.seq))
            return [(int(seq), str(digest)) for seq, digest in rows]

    def tail_state(self, reg: Registration) -> tuple[int, int, str | None]:
        """(events stored, the last one's sequence, its content digest) of the evaluation; (0, 0, None) when none."""
        o = S.outcomes.c
        with self.transaction(write=False) as conn:
            count, last = conn.execute(select(func.count(), func.max(o.seq)).where(o.evaluation_id == reg.id)).one()
            if not count:
                return 0, 0, None
            digest = conn.execute(select(o.digest).where(o.evaluation_id == reg.id, o.seq == last)).scalar()
        return int(count), int(last), str(digest)

    def event_digest_at(self, reg: Registration, seq: int) -> str | None:
        """The stored content digest of the event at sequence ``seq``; None when the evaluation holds none there."""
        o = S.outcomes.c
        with self.transaction(write=False) as conn:
            digest = conn.execute(select(o.digest).where(o.evaluation_id == reg.id, o.seq == int(seq))).scalar()
        return None if digest is None else str(digest)

    def final_tasks(self, reg: Registration, system: str, tasks: Iterable[str] | None = None) -> set[str]:
        """The tasks (of ``tasks`` when given) with a final outcome event of ``system``."""
        c = S.outcomes.c
        base = select(c.task).where(c.evaluation_id == reg.id, c.system == system, c.status == "final")
        wanted = None if tasks is None else sorted({str(t) for t in tasks})
        found: set[str] = set()
        with self.transaction(write=False) as conn:
            if wanted is None:
                found.update(conn.execute(base).scalars())
            for start in range(0, len(wanted or ()), CHUNK):
                found.update(conn.execute(base.where(c.task.in_((wanted or [])[start : start + CHUNK]))).scalars())
        return found

    def conflict_rows(self, reg: Registration) -> list[Any]:
        """The refused events: key, content, digests, time, then the :data:`EVENT_COLUMNS` of the stored event."""
        c, o = S.conflicts.c, S.outcomes.c
        stored_columns = [o[name] for name in EVENT_COLUMNS]
        same_key = (o.evaluation_id == c.evaluation_id) & (o.system == c.system) & (o.task == c.task) & (o.attempt == c.attempt)
        with self.transaction(write=False) as conn:
            return list(conn.execute(
                select(c.system, c.task, c.attempt, c.row_json, c.digest, c.stored_digest, c.received_at, *stored_columns)
                .select_from(S.conflicts.outerjoin(S.outcomes, same_key))
                .where(c.evaluation_id == reg.id)
                .order_by(c.id)
            ).all())

    # ------------------------------------------------------------------ the decision chain
    def append_decision(self, reg: Registration, decision: DecisionRecord, events: EventSnapshot) -> LedgerDecision | None:
        """Append ``decision``, taken on ``events``, to the chain with its ledger position.

        None, and nothing appended, when the chain's last record was taken on later events (another
        process decided meanwhile): the chain's positions never decrease, which ``verify`` checks.
        """
        d = S.decisions.c
        with self.transaction(write=True) as conn:
            if self.postgres:  # one chain writer per evaluation at a time
                conn.execute(select(S.evaluations.c.id).where(S.evaluations.c.id == reg.id).with_for_update())
            last = conn.execute(
                select(d.sequence, d.digest, d.outcome_seq).where(d.evaluation_id == reg.id).order_by(d.sequence.desc()).limit(1)
            ).first()
            if last is not None and int(last[2]) > events.high_water:
                return None
            sequence = 1 if last is None else int(last[0]) + 1
            previous = reg.genesis_digest if last is None else str(last[1])
            position = position_of(decision, sequence, events.high_water, events.seqs, first_final(conn, reg.id))
            decision = decision.model_copy(update={"ledger": position})
            record_json = canonical_json(decision.model_dump(mode="json"))
            link = LedgerDecision(
                sequence=sequence, outcome_seq=events.high_water, record=decision, record_json=record_json,
                previous_digest=previous, digest=chain_digest(previous, record_json), created_at=now(),
            )
            conn.execute(S.decisions.insert().values(evaluation_id=reg.id, **{name: getattr(link, name) for name in LINK_COLUMNS}))
        return link

    def decisions(self, reg: Registration, *, after: int = 0, upto: int | None = None) -> list[LedgerDecision]:
        """The chain's links with a sequence above ``after`` (and up to ``upto``), oldest first, records parsed."""
        d = S.decisions.c
        query = select(*(d[name] for name in LINK_COLUMNS)).where(d.evaluation_id == reg.id, d.sequence > int(after))
        if upto is not None:
            query = query.where(d.sequence <= int(upto))
        with self.transaction(write=False) as conn:
            rows = list(conn.execute(query.order_by(d.sequence)))
        return [LedgerDecision(record=parse_record(r.record_json), **{name: getattr(r, name) for name in LINK_COLUMNS}) for r in rows]

    def link_rows(self, reg: Registration) -> list[Any]:
        """Every link of the chain without its record (``size``: the record's length), in sequence order."""
        d = S.decisions.c
        with self.transaction(write=False) as conn:
            return list(conn.execute(
                select(d.sequence, d.outcome_seq, d.previous_digest, d.digest, func.length(d.record_json).label("size"))
                .where(d.evaluation_id == reg.id)
                .order_by(d.sequence)
            ))

    def link_field(self, reg: Registration, sequence: int, field: str) -> Any:
        """One stored field (``record_json``, ``digest``, ``outcome_seq``, ...) of link ``sequence``; None when there is none."""
        d = S.decisions.c
        with self.transaction(write=False) as conn:
            return conn.execute(select(d[field]).where(d.evaluation_id == reg.id, d.sequence == int(sequence))).scalar()

    def last_link(self, reg: Registration) -> tuple[int, str] | None:
        """(sequence, digest) of the chain's last link; None when the chain is empty."""
        d = S.decisions.c
        with self.transaction(write=False) as conn:
            last = conn.execute(
                select(d.sequence, d.digest).where(d.evaluation_id == reg.id).order_by(d.sequence.desc()).limit(1)
            ).first()
        return None if last is None else (int(last[0]), str(last[1]))

    def first_final(self, reg: Registration) -> tuple[int, int] | None:
        """(chain sequence, outcome_seq) of the evaluation's first promote/reject record; None when there is none."""
        with self.transaction(write=False) as conn:
            return first_final(conn, reg.id)

    # ------------------------------------------------------------------ live workers
    def notify(self, evaluation: str, system: str, state: str, message: str) -> WorkerNotice:
        """Append one worker notice (see :meth:`stopwise.ledger.Ledger.notify`)."""
        with self.transaction(write=True) as conn:
            return insert_notice(conn, evaluation, system, state, message, now())

    def notices(self, evaluation: str, after: int = 0) -> list[WorkerNotice]:
        """The evaluation's notices with an id above ``after``, oldest first."""
        with self.transaction(write=False) as conn:
            return read_notices(conn, evaluation, after)

    def progress(self, reg: Registration) -> dict[str, int]:
        """Outcome events stored per system."""
        with self.transaction(write=False) as conn:
            return system_progress(conn, reg.id)

