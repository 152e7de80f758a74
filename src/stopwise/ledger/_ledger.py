"""The ledger: registered evaluations, append-only outcome events and a hash-chained decision history."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlalchemy import Connection, func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from stopwise._redact import redact_url
from stopwise.errors import ComparisonError, LedgerError, Problem, StopwiseError, ValidationError
from stopwise.ledger import _schema as S
from stopwise.ledger._columns import EVENT_COLUMNS, EventColumns
from stopwise.ledger._digest import canonical_json, chain_digest, event_digest, event_payload, genesis_digest
from stopwise.ledger._engine import file_identity, ledger_url, make_engine, sqlite_file, watch_server
from stopwise.ledger._events import payloads as event_payloads
from stopwise.ledger._notices import WorkerNotice, insert_notice, read_notices, system_progress
from stopwise.ledger._opening import LedgerMode, check_mode, prepare_schema
from stopwise.ledger._position import first_final, position_of
from stopwise.ledger._results import AppendResult, EventKey, LedgerDecision, LedgerHead, Registration, VerifyResult
from stopwise.ledger._universe_io import stored_setup, universe_sha256, universe_to_json
from stopwise.records import DecisionRecord, OutcomeColumns, Policy, WorkerState

if TYPE_CHECKING:
    from stopwise.ledger._universe_io import TaskUniverse

__all__ = ["VOLATILE_RECORD_FIELDS", "Ledger", "open_ledger"]

VOLATILE_RECORD_FIELDS: frozenset[str] = frozenset({"decided_at", "timestamp", "created_at", "stopwise_version"})
"""Record fields that ``verify`` does not require to recompute equal (the time of the look, the library
version); they are still covered by the chain digest."""

_CHUNK = 400
"""Rows per INSERT statement (well under SQLite's bound-parameter limit)."""
_HINTED = 20
"""Distinct misspelt names of one append that get a "did you mean" (each costs a pass over the planned tasks)."""
_STALE_RETRIES = 10
"""Times :meth:`Ledger.decide` decides again when another process appended a decision on later events first."""
_LINK_COLUMNS = ("sequence", "outcome_seq", "record_json", "previous_digest", "digest", "created_at")
"""A decision link as stored in ``stopwise_decisions`` (beside its evaluation): fields of :class:`LedgerDecision`."""

def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _display(url: str) -> str:
    return redact_url(url)


class Ledger:
    """A durable decision ledger in SQLite or PostgreSQL (open it with :func:`open_ledger`).

    Parameters
    ----------
    url : str or path-like
        ``sqlite:///path``, a plain path (SQLite) or ``postgresql+psycopg://user@host:port/db``.
    mode : {"create", "write", "read"}, optional
        ``create`` (default) makes the database and its tables when there are none; ``write`` opens an
        existing stopwise ledger and creates nothing; ``read`` opens one read-only (see
        :mod:`stopwise.ledger._opening`). A database with another schema is refused in every mode.

    Notes
    -----
    Every write is one transaction that commits before the method returns, so anything a method
    acknowledges is durable. Many processes may append to one ledger at once; each process opens
    its own :class:`Ledger`. See ``docs/ledger.md`` for the schema.

    Examples
    --------
    >>> import tempfile, pathlib, stopwise
    >>> from stopwise.ledger import open_ledger
    >>> from stopwise.records import TaskUniverse
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ledger.db"
    >>> universe = TaskUniverse([f"t{i}" for i in range(4)])
    >>> with open_ledger(path) as ledger:
    ...     ledger.register("demo", policy=stopwise.Policy(), universe=universe, tested="A", baseline="B")
    ...     result = ledger.append("demo", [{"system": "A", "task": "t0", "outcome": 1},
    ...                                     {"system": "B", "task": "t0", "outcome": 0}])
    ...     again = ledger.append("demo", [{"system": "A", "task": "t0", "outcome": 1}])
    ...     clash = ledger.append("demo", [{"system": "A", "task": "t0", "outcome": 0}])
    >>> (result.accepted, again.duplicates, clash.conflicts)
    (2, 1, 1)
    """

    def __init__(self, url: str | os.PathLike[str], *, mode: LedgerMode = "create") -> None:
        self.url = ledger_url(url)
        self.mode: LedgerMode = check_mode(mode)
        self._engine = make_engine(self.url, mode=self.mode)
        self._file = sqlite_file(self.url)
        self._identity: tuple[int, int] | None = None
        self._postgres = self._engine.dialect.name == "postgresql"
        self._insert = pg_insert if self._postgres else sqlite_insert
        self._registrations: dict[str, Registration] = {}
        self._cache: dict[int, EventColumns] = {}
        self._planned: dict[int, frozenset[str]] = {}
        self._lost: str | None = None
        if self._postgres:  # fail closed: the server this ledger writes to is the one it first reached
            watch_server(self._engine, self._server_changed)
        try:
            self._ensure_schema()
        except BaseException:
            self._engine.dispose()
            raise
        if self._file is not None:  # fail closed: the file this ledger writes to is the one at its path
            self._identity = file_identity(self._file)

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def _tx(self, *, write: bool) -> Iterator[Connection]:
        """One transaction; commits on success (before the caller acknowledges anything)."""
        if write and self.mode == "read":
            raise LedgerError(f"ledger {_display(self.url)} is open read-only (mode='read'); open it with mode='write' to append or record")
        try:
            with self._engine.connect() as conn:
                if write:
                    conn = conn.execution_options(stopwise_write=True)
                self._check_file()
                with conn.begin():
                    yield conn
                if write:  # a commit into a file removed meanwhile is not durable: nothing is acknowledged
                    self._check_file()
        except StopwiseError:
            raise
        except SQLAlchemyError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise LedgerError(f"ledger {_display(self.url)}: database error: {first}") from exc

    def _check_file(self) -> None:
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
                f"ledger {_display(self.url)}: its connection to the database was lost and {self._lost}; nothing more "
                "is written or read through this ledger (fail closed: events it acknowledged may be missing). Check "
                "the ledger (stopwise ledger verify) and open it again"
            )
        if self._identity is None or self._file is None:
            return
        current = file_identity(self._file)
        if current != self._identity:
            what = "was removed" if current is None else "was replaced by another file"
            raise LedgerError(
                f"ledger {_display(self.url)}: its database file {what} since the ledger was opened; nothing more is "
                "written or read through this ledger (fail closed: its audit trail is no longer on disk at that path). "
                "Restore the file, or register the evaluation in a new ledger and append the Inspect logs to it "
                "(stopwise ingest, stopwise ledger append)"
            )

    def _server_changed(self, why: str) -> None:
        self._lost = why

    def _ensure_schema(self) -> None:
        with self._tx(write=self.mode == "create") as conn:  # read and write modes change nothing here
            prepare_schema(conn, _display(self.url), mode=self.mode, postgres=self._postgres, now=_now())

    def close(self) -> None:
        """Release the database connections (the ledger stays on disk)."""
        self._engine.dispose()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Ledger({_display(self.url)!r})"

    # ------------------------------------------------------------------ registration
    def register(
        self,
        evaluation: str,
        *,
        policy: Policy,
        universe: TaskUniverse,
        tested: str,
        baseline: str,
    ) -> None:
        """Register an evaluation with its policy, planned task universe and systems (idempotent).

        Registering the same name again with the same policy (by sha256), universe and systems does
        nothing; any change is refused, since the policy and the universe are locked at registration.

        Parameters
        ----------
        evaluation : str
            The evaluation's name, unique in the ledger.
        policy : Policy
            The comparison policy.
        universe : TaskUniverse
            The planned task universe (every task the evaluation may run, with groups).
        tested, baseline : str
            The tested system A and the baseline B.

        Raises
        ------
        LedgerError
            The name is registered with a different policy, universe or systems; or an argument is invalid.
        """
        name = _name(evaluation)
        if not isinstance(policy, Policy):
            raise LedgerError(f"policy must be a stopwise Policy; got {type(policy).__name__}")
        tested, baseline = str(tested).strip(), str(baseline).strip()
        if not tested or not baseline or tested == baseline:
            raise LedgerError(f"tested and baseline must be two different non-empty system names; got {tested!r}, {baseline!r}")
        if policy.decision.boundary == "betting-wor" and not getattr(universe, "ordered", True):
            # Refused before anything is locked: such an evaluation could never decide.
            raise LedgerError(
                f"evaluation {name!r}: the policy's betting-wor boundary needs the planned task order, but the task "
                f"universe gives counts only ({universe.n_tasks} tasks), so no decision could ever be taken. Register "
                "the planned tasks in planned order instead (stopwise order ... -o order.csv, then stopwise ledger init "
                "... --tasks order.csv), or use a policy with the fixed-budget boundary"
            )
        if policy.decision.boundary == "betting-wor":
            from stopwise.compare import check_betting_order

            try:
                check_betting_order(policy, universe)
            except ComparisonError as exc:
                raise LedgerError(f"evaluation {name!r}: {exc}") from None
        universe_json = universe_to_json(universe)
        policy_sha = policy.sha256()
        universe_sha = universe_sha256(universe)
        row = {
            "name": name,
            "policy_json": policy.canonical_json(),
            "policy_sha256": policy_sha,
            "universe_json": universe_json,
            "universe_sha256": universe_sha,
            "tested": tested,
            "baseline": baseline,
            "genesis_digest": genesis_digest(name, policy_sha, universe_sha, tested, baseline),
            "created_at": _now(),
        }
        try:
            with self._tx(write=True) as conn:
                existing = conn.execute(select(S.evaluations).where(S.evaluations.c.name == name)).mappings().first()
                if existing is None:
                    conn.execute(S.evaluations.insert().values(**row))
                    return
        except LedgerError as exc:
            if not isinstance(exc.__cause__, IntegrityError):
                raise
            # Another process registered the same name at the same moment: compare with it.
            with self._tx(write=False) as conn:
                existing = conn.execute(select(S.evaluations).where(S.evaluations.c.name == name)).mappings().first()
        assert existing is not None
        changes = [
            f"{label} (registered {existing[key][:16] if 'sha' in key else existing[key]!r}, "
            f"given {row[key][:16] if 'sha' in key else row[key]!r})"
            for key, label in (
                ("policy_sha256", "policy sha256"),
                ("universe_sha256", "task universe sha256"),
                ("tested", "tested system"),
                ("baseline", "baseline system"),
            )
            if existing[key] != row[key]
        ]
        if changes:
            raise LedgerError(
                f"evaluation {name!r} is already registered in {_display(self.url)} and cannot change: "
                + "; ".join(changes)
                + ". The policy and the task universe are locked at registration; register a new evaluation name "
                "to use different ones."
            )

    def evaluations(self) -> list[str]:
        """Names of the registered evaluations, in registration order."""
        with self._tx(write=False) as conn:
            return list(conn.execute(select(S.evaluations.c.name).order_by(S.evaluations.c.id)).scalars())

    def registration(self, evaluation: str) -> Registration:
        """The registered policy, universe and systems of an evaluation.

        Raises
        ------
        LedgerError
            No evaluation of that name is registered.
        """
        name = _name(evaluation)
        if name in self._registrations:
            return self._registrations[name]
        with self._tx(write=False) as conn:
            row = conn.execute(select(S.evaluations).where(S.evaluations.c.name == name)).mappings().first()
            if row is None:
                known = list(conn.execute(select(S.evaluations.c.name).order_by(S.evaluations.c.id).limit(20)).scalars())
        if row is None:
            listing = ", ".join(map(repr, known)) if known else "none"
            raise LedgerError(
                f"evaluation {name!r} is not registered in {_display(self.url)} (registered: {listing}); "
                "register it first (stopwise ledger init)"
            )
        policy, universe = stored_setup(row["policy_json"], row["universe_json"], f"evaluation {name!r} in {_display(self.url)}")
        registration = Registration(
            name=name,
            policy=policy,
            universe=universe,
            tested=row["tested"],
            baseline=row["baseline"],
            policy_sha256=row["policy_sha256"],
            universe_sha256=row["universe_sha256"],
            genesis_digest=row["genesis_digest"],
            created_at=row["created_at"],
            id=int(row["id"]),
        )
        self._registrations[name] = registration
        return registration

    # ------------------------------------------------------------------ outcomes
    def append(self, evaluation: str, rows: OutcomeColumns | pd.DataFrame | Iterable[Mapping[str, Any]]) -> AppendResult:
        """Append outcome events; idempotent per (system, task, attempt).

        The rows are validated against the outcome-row contract first (nothing is stored when one
        breaks it). Then, in one transaction: events with a new key are stored; an event whose key
        is stored with the same content is a duplicate (acknowledged again, not stored twice; the
        content is every field but ``source``, so an event re-sent from another log or a retried
        run is a duplicate and the stored event keeps its first source); one
        whose key is stored with different content is a conflict (refused, recorded in the
        conflicts table, never overwriting). The method returns after the commit.

        Parameters
        ----------
        evaluation : str
            A registered evaluation.
        rows : OutcomeColumns, pandas.DataFrame or iterable of mappings
            Outcome rows of the evaluation's two systems on tasks of its universe (validated by
            :func:`stopwise.outcome_columns`; columns are validated already).

        Returns
        -------
        AppendResult

        Raises
        ------
        ValidationError
            A row breaks the contract, names another system, or a task outside the planned universe.
        LedgerError
            The evaluation is not registered, or the database failed (nothing acknowledged).
        """
        reg = self.registration(evaluation)
        if not isinstance(rows, pd.DataFrame | OutcomeColumns):
            rows = list(rows)
        if len(rows) == 0:
            return AppendResult(0, 0, 0)
        source = f"<append to {reg.name}>"
        payloads = event_payloads(rows, source=source)
        self._check_membership(payloads, reg, source)
        digests = [event_digest(p) for p in payloads]
        keys: list[EventKey] = [(p["system"], p["task"], p["attempt"]) for p in payloads]
        now = _now()
        values = [
            {
                "evaluation_id": reg.id,
                "system": p["system"],
                "task": p["task"],
                "attempt": p["attempt"],
                "outcome": p["outcome"],
                "task_group": p["group"],
                "cost_usd": p["cost_usd"],
                "elapsed_s": p["elapsed_s"],
                "status": p["status"],
                "source": p["source"],
                "unit": p["unit"],
                "flags": p.get("flags", ""),
                "digest": d,
                "received_at": now,
            }
            for p, d in zip(payloads, digests, strict=True)
        ]
        key_columns = ["evaluation_id", "system", "task", "attempt"]
        first: dict[EventKey, int] = {}
        for i, key in enumerate(keys):
            first.setdefault(key, i)
        unique = sorted(first.values())
        accepted: list[int] = []
        duplicates: list[int] = []
        refused: list[int] = []
        with self._tx(write=True) as conn:
            # executemany with RETURNING: SQLAlchemy batches it into multi-row INSERTs ("insertmanyvalues")
            # from one cached compiled statement.
            stmt = (
                self._insert(S.outcomes)
                .on_conflict_do_nothing(index_elements=key_columns)
                .returning(S.outcomes.c.system, S.outcomes.c.task, S.outcomes.c.attempt)
            )
            inserted: set[EventKey] = {
                (r[0], r[1], int(r[2])) for r in conn.execute(stmt, [values[i] for i in unique])
            }
            accepted = [i for i in unique if keys[i] in inserted]
            judged = [i for i in range(len(keys)) if not (keys[i] in inserted and first[keys[i]] == i)]
            stored = self._stored_digests(conn, reg.id, [keys[i] for i in judged if keys[i] not in inserted])
            stored.update({keys[i]: (digests[i], payloads[i]["source"]) for i in accepted})
            conflict_rows = []
            for i in judged:
                if _same_content(payloads[i], digests[i], *stored[keys[i]]):
                    duplicates.append(i)
                    continue
                refused.append(i)
                conflict_rows.append(
                    {
                        "evaluation_id": reg.id,
                        "system": keys[i][0],
                        "task": keys[i][1],
                        "attempt": keys[i][2],
                        "row_json": canonical_json(payloads[i]),
                        "digest": digests[i],
                        "stored_digest": stored[keys[i]][0],
                        "received_at": now,
                    }
                )
            if conflict_rows:
                conn.execute(
                    self._insert(S.conflicts)
                    .values(conflict_rows)
                    .on_conflict_do_nothing(index_elements=["evaluation_id", "system", "task", "attempt", "digest"])
                )
        return AppendResult(
            accepted=len(accepted),
            duplicates=len(duplicates),
            conflicts=len(refused),
            accepted_keys=[keys[i] for i in accepted],
            duplicate_keys=[keys[i] for i in duplicates],
            conflict_keys=[keys[i] for i in refused],
        )

    def _check_membership(self, payloads: list[dict[str, Any]], reg: Registration, source: str) -> None:
        planned = self._planned.get(reg.id)
        if planned is None and reg.universe.tasks is not None:
            planned = self._planned[reg.id] = frozenset(reg.universe.tasks.tolist())
        systems = (reg.tested, reg.baseline)
        problems: list[Problem] = []
        hints: dict[tuple[str, str], str] = {}  # (field, value) -> "did you mean ...?" (or ""), once per distinct value

        def hint(field: str, value: str, known: Iterable[str], n: int) -> str:
            if (field, value) not in hints:
                close = difflib.get_close_matches(value, sorted(known), n=n, cutoff=0.6) if len(hints) < _HINTED else []
                hints[field, value] = f"did you mean {' or '.join(map(repr, close))}?" if close else ""
            return hints[field, value]

        for i, p in enumerate(payloads):
            if p["system"] not in systems:
                close = hint("system", p["system"], systems, 1)
                rule = f"must be {reg.tested!r} or {reg.baseline!r} (the evaluation's systems{'; ' + close if close else ''})"
                problems.append(Problem(source, i + 1, "system", rule, p["system"]))
            if planned is not None and p["task"] not in planned:
                close = hint("task", p["task"], planned, 3)
                rule = "must be a task of the evaluation's planned universe" + (f" ({close})" if close else "")
                problems.append(Problem(source, i + 1, "task", rule, p["task"]))
        if problems:
            raise ValidationError(problems)

    def _stored_digests(
        self, conn: Connection, evaluation_id: int, keys: list[EventKey]
    ) -> dict[EventKey, tuple[str, str]]:
        """(digest, source) of the stored events with these keys."""
        tasks = sorted({k[1] for k in keys})
        wanted = set(keys)
        found: dict[EventKey, tuple[str, str]] = {}
        c = S.outcomes.c
        for start in range(0, len(tasks), _CHUNK):
            query = select(c.system, c.task, c.attempt, c.digest, c.source).where(
                c.evaluation_id == evaluation_id, c.task.in_(tasks[start : start + _CHUNK])
            )
            for system, task, attempt, digest, source in conn.execute(query):
                key = (system, task, int(attempt))
                if key in wanted:
                    found[key] = (digest, source)
        return found

    def _snapshot(self, reg: Registration) -> tuple[OutcomeColumns, np.ndarray, int]:
        """Every stored event of the evaluation, their sequence numbers, and the high-water mark they are exactly the events up to.

        Only the events stored since the previous look are fetched; the rows are held column by
        column (:class:`~stopwise.ledger._columns.EventColumns`). On PostgreSQL the read takes a
        SHARE lock on the outcomes table, which waits for appends in flight: an event with a lower
        sequence can then no longer commit after this read. The columns are shared with later looks:
        callers do not modify them.
        """
        columns = self._cache.get(reg.id)
        if columns is None:
            columns = self._cache[reg.id] = EventColumns()
        c = S.outcomes.c
        with self._tx(write=False) as conn:
            if self._postgres:
                conn.execute(text(f"LOCK TABLE {S.outcomes.name} IN SHARE MODE"))
            query = (
                select(c.seq, *[getattr(c, name) for name in EVENT_COLUMNS])
                .where(c.evaluation_id == reg.id, c.seq > columns.high_water)
                .order_by(c.seq)
            )
            new = conn.execute(query).all()
        columns.extend(new)
        rows, seqs = columns.columns()
        return rows, seqs, columns.high_water

    def outcomes(self, evaluation: str, *, upto: int | None = None) -> pd.DataFrame:
        """The evaluation's outcome rows in the outcome-row contract, in the order they were stored.

        Parameters
        ----------
        evaluation : str
            A registered evaluation.
        upto : int, optional
            Only events with sequence <= ``upto`` (a decision's high-water mark).

        Returns
        -------
        pandas.DataFrame
            Columns :data:`stopwise.OUTCOME_COLUMNS`; ``decide`` and ``replay`` read it unchanged.
        """
        reg = self.registration(evaluation)
        rows, seqs, _ = self._snapshot(reg)
        if upto is not None:
            rows = rows.take(seqs <= upto)
        return rows.to_frame()

    def high_water(self, evaluation: str) -> int:
        """The evaluation's current outcome high-water mark (0 when nothing is stored)."""
        reg = self.registration(evaluation)
        with self._tx(write=False) as conn:
            value = conn.execute(
                select(func.max(S.outcomes.c.seq)).where(S.outcomes.c.evaluation_id == reg.id)
            ).scalar()
        return int(value or 0)

    def conflicts(self, evaluation: str) -> pd.DataFrame:
        """The refused events of the evaluation: key, refused content (JSON), its digest, the stored digest and content.

        ``stored_json`` is the canonical JSON of the event stored under the same key (what the refused
        one would have replaced), so the two can be shown side by side.
        """
        reg = self.registration(evaluation)
        c, o = S.conflicts.c, S.outcomes.c
        stored_columns = [o[name] for name in EVENT_COLUMNS]
        with self._tx(write=False) as conn:
            rows = conn.execute(
                select(c.system, c.task, c.attempt, c.row_json, c.digest, c.stored_digest, c.received_at, *stored_columns)
                .select_from(S.conflicts.outerjoin(S.outcomes, (o.evaluation_id == c.evaluation_id) & (o.system == c.system)
                                                   & (o.task == c.task) & (o.attempt == c.attempt)))
                .where(c.evaluation_id == reg.id)
                .order_by(c.id)
            ).all()
        out = []
        for r in rows:
            stored = dict(zip(EVENT_COLUMNS, r[7:], strict=True))
            stored_json = "" if stored["system"] is None else canonical_json(
                event_payload({**stored, "group": stored["task_group"], "flags": stored["flags"] or ""})
            )
            out.append((*r[:7], stored_json))
        return pd.DataFrame(
            out, columns=["system", "task", "attempt", "row_json", "digest", "stored_digest", "received_at", "stored_json"]
        )

    def first_decision(self, evaluation: str) -> LedgerDecision | None:
        """The evaluation's first promote or reject record (None while nothing is decided).

        Events stored after it (e.g. samples in flight when it was taken) are counted in later
        records (:attr:`stopwise.records.LedgerPosition.after_decision`) and marked in a full export;
        ``export(..., upto_decision=link.sequence)`` writes exactly the events it was taken on.
        """
        reg = self.registration(evaluation)
        with self._tx(write=False) as conn:
            first = first_final(conn, reg.id)
        if first is None:
            return None
        return next(iter(self.decisions(evaluation, after=first[0] - 1, upto=first[0])), None)

    # ------------------------------------------------------------------ decisions
    def decide(self, evaluation: str, *, record: bool = True) -> DecisionRecord:
        """Decide the evaluation from its stored outcomes and append the record to its chain.

        Calls :func:`stopwise.decide` with the registered policy and planned task universe on
        exactly the events stored up to the current high-water mark. The appended record carries its
        :class:`~stopwise.records.LedgerPosition` (that mark, the number of events, the first final
        decision and the events stored after it). When another process appended a decision taken on
        later events meanwhile, the decision is taken again on the newer events, so the chain's
        positions never decrease.

        Parameters
        ----------
        evaluation : str
            A registered evaluation.
        record : bool, optional
            Append the record to the decision chain (default). ``False`` only computes it.

        Returns
        -------
        DecisionRecord

        Raises
        ------
        LedgerError
            No outcome event is stored yet.
        ComparisonError
            The comparison cannot be formed from the stored events.
        """
        reg = self.registration(evaluation)
        for _ in range(_STALE_RETRIES):
            rows, seqs, seq = self._snapshot(reg)
            if seq == 0:
                raise LedgerError(f"evaluation {reg.name!r} has no outcome events yet; nothing to decide")
            decision = self._decide_rows(reg, rows)
            if not record:
                return decision
            link = self._append_decision(reg, decision, seq, seqs)
            if link is not None:
                return link.record
        return decision  # another process kept deciding on later events: theirs are in the chain

    @staticmethod
    def _decide_rows(reg: Registration, rows: OutcomeColumns | pd.DataFrame) -> DecisionRecord:
        from stopwise.compare import decide

        return decide(rows, reg.tested, reg.baseline, reg.policy, universe=reg.universe)

    def _append_decision(
        self, reg: Registration, decision: DecisionRecord, outcome_seq: int, seqs: np.ndarray
    ) -> LedgerDecision | None:
        """Append ``decision``, taken on the events with sequence numbers ``seqs`` (up to ``outcome_seq``), with its position.

        None, and nothing appended, when the chain's last record was taken on later events (another
        process decided meanwhile): the chain's positions never decrease, which ``verify`` checks.
        """
        d = S.decisions.c
        with self._tx(write=True) as conn:
            if self._postgres:  # one chain writer per evaluation at a time
                conn.execute(select(S.evaluations.c.id).where(S.evaluations.c.id == reg.id).with_for_update())
            last = conn.execute(
                select(d.sequence, d.digest, d.outcome_seq).where(d.evaluation_id == reg.id).order_by(d.sequence.desc()).limit(1)
            ).first()
            if last is not None and int(last[2]) > outcome_seq:
                return None
            sequence = 1 if last is None else int(last[0]) + 1
            previous = reg.genesis_digest if last is None else str(last[1])
            position = position_of(decision, sequence, outcome_seq, seqs, first_final(conn, reg.id))
            decision = decision.model_copy(update={"ledger": position})
            record_json = canonical_json(decision.model_dump(mode="json"))
            link = LedgerDecision(
                sequence=sequence,
                outcome_seq=outcome_seq,
                record=decision,
                record_json=record_json,
                previous_digest=previous,
                digest=chain_digest(previous, record_json),
                created_at=_now(),
            )
            conn.execute(S.decisions.insert().values(evaluation_id=reg.id, **{name: getattr(link, name) for name in _LINK_COLUMNS}))
        return link

    def decisions(self, evaluation: str, *, after: int = 0, upto: int | None = None) -> list[LedgerDecision]:
        """The evaluation's decision history, oldest first, as stored (not verified: see :meth:`verify`).

        ``after``: only the links with a higher sequence (what a live reader has not seen yet);
        ``upto``: only the links up to that sequence.
        """
        reg = self.registration(evaluation)
        return [
            LedgerDecision(record=_parse_record(r.record_json), **{name: getattr(r, name) for name in _LINK_COLUMNS})
            for r in self._decision_rows(reg, after=after, upto=upto)
        ]

    def _decision_rows(self, reg: Registration, *, after: int = 0, upto: int | None = None) -> list[Any]:
        d = S.decisions.c
        query = select(*(d[name] for name in _LINK_COLUMNS)).where(d.evaluation_id == reg.id, d.sequence > int(after))
        if upto is not None:
            query = query.where(d.sequence <= int(upto))
        with self._tx(write=False) as conn:
            return list(conn.execute(query.order_by(d.sequence)))

    def final_tasks(self, evaluation: str, system: str, tasks: Iterable[str] | None = None) -> set[str]:
        """The tasks (of ``tasks`` when given) that have a final outcome event of ``system``.

        The live Inspect manager reads pairing state here, so that every process appending to the
        ledger sees the same pairs.
        """
        reg = self.registration(evaluation)
        c = S.outcomes.c
        base = select(c.task).where(c.evaluation_id == reg.id, c.system == str(system), c.status == "final")
        wanted = None if tasks is None else sorted({str(t) for t in tasks})
        found: set[str] = set()
        with self._tx(write=False) as conn:
            if wanted is None:
                found.update(conn.execute(base).scalars())
            for start in range(0, len(wanted or ()), _CHUNK):
                assert wanted is not None
                found.update(conn.execute(base.where(c.task.in_(wanted[start : start + _CHUNK]))).scalars())
        return found

    # ------------------------------------------------------------------ live workers
    def notify(self, evaluation: str, *, system: str, state: WorkerState, message: str = "") -> WorkerNotice:
        """Record a live worker's state: ``started``, ``failed`` (with the reason) or ``finished``.

        The evaluation need not be registered yet (a worker may fail before registering). The
        latest notice of a system is its state; the live Inspect managers read their partner's
        (:meth:`notices`) before scheduling and stop when it failed. Notices change no decision and
        are not part of the decision chain.

        Examples
        --------
        >>> from stopwise.ledger import open_ledger
        >>> with open_ledger("sqlite:///:memory:") as ledger:
        ...     _ = ledger.notify("demo", system="B", state="failed", message="sample ids differ")
        ...     [(n.system, n.state, n.message) for n in ledger.notices("demo")]
        [('B', 'failed', 'sample ids differ')]
        """
        with self._tx(write=True) as conn:
            return insert_notice(conn, _name(evaluation), str(system), state, message, _now())

    def notices(self, evaluation: str, *, after: int = 0) -> list[WorkerNotice]:
        """The evaluation's worker notices with an id above ``after``, oldest first (see :meth:`notify`)."""
        with self._tx(write=False) as conn:
            return read_notices(conn, _name(evaluation), after)

    def progress(self, evaluation: str) -> dict[str, int]:
        """Outcome events stored per system (pacing across processes reads how far each system got)."""
        reg = self.registration(evaluation)
        with self._tx(write=False) as conn:
            return system_progress(conn, reg.id)

    def verify(self, evaluation: str, *, expect_head: str | None = None) -> VerifyResult:
        """Recompute the registration digests, every outcome digest, the chain and every decision.

        Each recorded decision is taken again with :func:`stopwise.decide` from exactly the outcomes
        stored up to its position and compared field by field (except :data:`VOLATILE_RECORD_FIELDS`
        and the ledger position, which is checked against the events); the decisions' positions must
        not decrease and must name events the evaluation holds. The first mismatch is reported (the
        full list of checks: :mod:`stopwise.ledger._verify`; what they do and do not catch:
        ``docs/ledger.md``).

        Parameters
        ----------
        evaluation : str
            A registered evaluation.
        expect_head : str, optional
            A head kept from an earlier ``verify``/``decide``/``export`` (``str(result.head)``,
            ``e<events>-d<decisions>-<digest>``): the ledger must extend it, which detects events or
            decisions removed from its end.

        Returns
        -------
        VerifyResult
            With :attr:`VerifyResult.head`, the head to keep for the next check.

        Raises
        ------
        LimitError
            A stored record is longer than ``STOPWISE_MAX_LINE_BYTES``.
        """
        from stopwise.ledger._verify import verify_evaluation

        return verify_evaluation(self, _name(evaluation), expect_head=expect_head)

    def head(self, evaluation: str) -> LedgerHead:
        """The evaluation's current head from its stored digests (keep it; pass it to :meth:`verify` later).

        Examples
        --------
        >>> import tempfile, pathlib, stopwise
        >>> from stopwise.ledger import open_ledger
        >>> from stopwise.records import TaskUniverse
        >>> with open_ledger(pathlib.Path(tempfile.mkdtemp()) / "l.db") as ledger:
        ...     ledger.register("ev", policy=stopwise.Policy(), universe=TaskUniverse(["t"]), tested="A", baseline="B")
        ...     _ = ledger.append("ev", [{"system": s, "task": "t", "outcome": 1} for s in "AB"])
        ...     head = ledger.head("ev")
        ...     ledger.verify("ev", expect_head=str(head)).ok
        True
        >>> (head.n_events, head.n_decisions)
        (2, 0)
        """
        from stopwise.ledger._verify import ledger_head

        return ledger_head(self, evaluation)

    # ------------------------------------------------------------------ export
    def export(
        self,
        evaluation: str,
        path: str | os.PathLike[str],
        *,
        decisions_path: str | os.PathLike[str] | None = None,
        force: bool = False,
        format: str | None = None,
        upto_decision: int | None = None,
    ) -> list[str]:
        """Write the outcome rows (CSV, JSONL or Parquet) and optionally the decision history (JSONL).

        Each file is written to a temporary file beside it and moved into place, so a reader never
        sees half a file; an existing file is refused unless ``force``. Once the evaluation has a
        promote or reject record, the rows carry a column ``after_decision`` (true for the rows stored
        after the first of them, e.g. samples in flight when it was taken); readers of outcome rows
        (``stopwise decide``) drop it.

        Parameters
        ----------
        upto_decision : int, optional
            Export exactly the events decision ``upto_decision`` (its chain sequence, 1, 2, ...) was
            taken on, and the history up to it: :func:`stopwise.decide` on them gives that record again.

        Returns
        -------
        list of str
            The written paths.

        Examples
        --------
        >>> import tempfile, pathlib, stopwise
        >>> from stopwise.ledger import open_ledger
        >>> from stopwise.records import TaskUniverse, read_outcomes
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> with open_ledger(folder / "l.db") as ledger:
        ...     ledger.register("ev", policy=stopwise.Policy(), universe=TaskUniverse(["t1", "t2"]), tested="A", baseline="B")
        ...     _ = ledger.append("ev", [{"system": s, "task": "t1", "outcome": 1} for s in "AB"])
        ...     live = ledger.decide("ev")
        ...     _ = ledger.append("ev", [{"system": s, "task": "t2", "outcome": 0} for s in "AB"])
        ...     _ = ledger.export("ev", folder / "upto.csv", upto_decision=1)
        >>> again = stopwise.decide(read_outcomes(folder / "upto.csv"), "A", "B", universe=TaskUniverse(["t1", "t2"]))
        >>> again.digest() == live.digest()
        True
        """
        from stopwise.ledger._export import export_decisions, export_outcomes

        reg = self.registration(evaluation)
        rows, seqs, _ = self._snapshot(reg)
        if len(rows) == 0:
            raise LedgerError(f"evaluation {reg.name!r} has no outcome events yet; nothing to export")
        d = S.decisions.c
        with self._tx(write=False) as conn:
            first = first_final(conn, reg.id)
            upto = None
            if upto_decision is not None:
                upto = conn.execute(
                    select(d.outcome_seq).where(d.evaluation_id == reg.id, d.sequence == int(upto_decision))
                ).scalar()
                if upto is None:
                    n = conn.execute(select(func.count()).where(d.evaluation_id == reg.id)).scalar()
                    raise LedgerError(
                        f"evaluation {reg.name!r} has no decision #{upto_decision} (its chain holds {n} decisions: "
                        "give one of 1 to that number; stopwise ledger export --decisions lists them)"
                    )
        if upto is not None:
            keep = seqs <= int(upto)
            rows, seqs = rows.take(keep), seqs[keep]
        after = None if first is None else seqs > first[1]
        written = [str(export_outcomes(rows, path, force=force, format=format, after_decision=after))]
        if decisions_path is not None:
            links = [link.to_json_dict() for link in self.decisions(evaluation, upto=upto_decision)]
            written.append(str(export_decisions(links, decisions_path, force=force)))
        return written


def _same_content(payload: Mapping[str, Any], digest: str, stored_digest: str, stored_source: str) -> bool:
    """Whether an event repeats a stored one: same content, whatever ``source`` each names.

    ``source`` is provenance (which file or run reported the event), not content: the same sample
    read again from another log, or re-appended by a retried Inspect eval (a new eval id), is a
    duplicate. The stored event keeps its first source, and its digest (which covers ``source``) is
    unchanged, so ``verify`` recomputes it as before.
    """
    if digest == stored_digest:
        return True
    if payload["source"] == stored_source:
        return False
    return event_digest({**payload, "source": stored_source}) == stored_digest


def _name(evaluation: str) -> str:
    name = str(evaluation).strip()
    if not name:
        raise LedgerError("evaluation name must be non-empty text")
    return name


def _parse_record(record_json: str) -> DecisionRecord:
    try:
        return DecisionRecord.model_validate_json(record_json)
    except ValueError as exc:
        raise LedgerError(f"stored decision record is not a valid decision record: {str(exc).splitlines()[0]}") from exc


def open_ledger(url: str | os.PathLike[str], *, mode: LedgerMode = "create") -> Ledger:
    """Open a ledger: create it when new (``mode="create"``, the default), or open an existing one.

    Parameters
    ----------
    url : str or path-like
        ``sqlite:///path/to/ledger.db`` (or a plain path) for the embedded SQLite ledger, or
        ``postgresql+psycopg://user@host:port/database`` for a PostgreSQL ledger shared by many workers.
    mode : {"create", "write", "read"}, optional
        ``create`` makes the database and the stopwise tables when there are none; ``write`` opens an
        existing stopwise ledger without creating or altering anything but its events and decisions;
        ``read`` opens one read-only (every write is refused). ``write`` and ``read`` refuse a missing
        SQLite file and a database without the stopwise tables, and change nothing in it.

    Returns
    -------
    Ledger

    Raises
    ------
    LedgerError
        The database cannot be reached, holds another schema version or part of the stopwise
        tables; with ``write`` or ``read``: it does not exist or is not a stopwise ledger.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from stopwise.ledger import open_ledger
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "l.db"
    >>> with open_ledger(path) as ledger:
    ...     ledger.evaluations()
    []
    >>> with open_ledger(path, mode="read") as ledger:
    ...     ledger.evaluations()
    []
    >>> open_ledger(path.with_name("typo.db"), mode="read")
    Traceback (most recent call last):
    ...
    stopwise.errors.LedgerError: ledger sqlite:///.../typo.db: no such file .../typo.db; nothing was created. ...
    """
    return Ledger(url, mode=mode)
