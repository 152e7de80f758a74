"""The ledger: registered evaluations, append-only outcome events and a hash-chained decision history.

:class:`Ledger` is the facade users call: it validates what they give and words what they get; the
rows are read and written by its :class:`~stopwise.ledger._store.LedgerStore` (transactions, events,
decision links, notices), which ``verify`` and ``export`` use too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pandas as pd

from stopwise.errors import ComparisonError, LedgerError
from stopwise.ledger._columns import EVENT_COLUMNS
from stopwise.ledger._digest import canonical_json, event_digest, event_payload, genesis_digest
from stopwise.ledger._engine import ledger_url
from stopwise.ledger._events import payloads as event_payloads
from stopwise.ledger._head_file import record_head
from stopwise.ledger._look import LedgerLook
from stopwise.ledger._membership import check_membership
from stopwise.ledger._notices import WorkerNotice
from stopwise.ledger._opening import LedgerMode
from stopwise.ledger._results import (
    AppendResult,
    EventKey,
    LedgerDecision,
    LedgerHead,
    Registration,
    VerifyResult,
)
from stopwise.ledger._store import LedgerStore, now
from stopwise.ledger._universe_io import universe_sha256, universe_to_json
from stopwise.ledger._verify import VOLATILE_RECORD_FIELDS
from stopwise.records import DecisionRecord, FamilyRecord, OutcomeColumns, Policy, WorkerState

if TYPE_CHECKING:
    from stopwise.ledger._universe_io import TaskUniverse

__all__ = ["VOLATILE_RECORD_FIELDS", "Ledger", "open_ledger"]

_STALE_RETRIES = 10
"""Times :meth:`Ledger.decide` decides again when another process appended a decision on later events first."""
_REGISTRATION_FIELDS = (
    ("policy_sha256", "policy sha256"),
    ("universe_sha256", "task universe sha256"),
    ("tested", "tested system"),
    ("baseline", "baseline system"),
)
"""What a second registration of one name must repeat: (column, what it is)."""


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
    Every write is one transaction whose commit is on disk before the method returns, so anything a
    method acknowledges is durable; on SQLite, concurrent appenders share the flushes
    (:mod:`stopwise.ledger._group_commit`). Many processes, and threads of one, may append to one
    ledger at once; each process opens its own :class:`Ledger`. See ``docs/ledger.md`` for the schema.

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
        self.store = LedgerStore(ledger_url(url), mode=mode)
        """Where the rows are read and written (transactions, events, decision links, notices)."""
        self.url = self.store.url
        self.mode: LedgerMode = self.store.mode
        self._registrations: dict[str, Registration] = {}
        self._planned: dict[int, frozenset[str]] = {}

    def close(self) -> None:
        """Release the database connections (the ledger stays on disk)."""
        self.store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Ledger({self.store.display!r})"

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
        self._insert_registration(name, policy, universe, tested, baseline)

    def register_family(self, evaluation: str, *, policy: Policy, universe: TaskUniverse, systems: Sequence[str]) -> None:
        """Register a family evaluation: k systems decided together under the policy's ``[family]`` section (idempotent).

        Registering the same name again with the same policy, universe and systems (in any order) does nothing; any
        change is refused. The family's looks are :meth:`decide_family`; any number of processes may append the
        systems' outcomes (a worker per system).

        Parameters
        ----------
        evaluation : str
            The evaluation's name, unique in the ledger.
        policy : Policy
            The policy: its ``[family]`` section (kind, control, baseline, equivalence) and its decision settings;
            its budget must be counted in tasks.
        universe : TaskUniverse
            The planned task universe (ordered under the ``betting-wor`` boundary).
        systems : sequence of str
            The family's systems (at least 2).

        Raises
        ------
        LedgerError
            Fewer than 2 distinct systems, the policy's baseline not among them, a budget not in tasks, or the name
            registered with something else.

        Examples
        --------
        >>> import stopwise
        >>> from stopwise.ledger import open_ledger
        >>> with open_ledger("sqlite:///:memory:") as ledger:
        ...     ledger.register_family("race", policy=stopwise.Policy(), universe=stopwise.TaskUniverse(["t1", "t2"]),
        ...                            systems=["C", "A", "B"])
        ...     ledger.registration("race").systems
        ('A', 'B', 'C')
        """
        from stopwise.ledger._family import check_family_systems, encode_family

        name = _name(evaluation)
        if not isinstance(policy, Policy):
            raise LedgerError(f"policy must be a stopwise Policy; got {type(policy).__name__}")
        tested, baseline = encode_family(check_family_systems(name, systems, policy))
        self._insert_registration(name, policy, universe, tested, baseline)

    def _insert_registration(self, name: str, policy: Policy, universe: TaskUniverse, tested: str, baseline: str) -> None:
        """Store the registration row, or check that the stored one is the same."""
        _check_betting_order(name, policy, universe)
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
            "created_at": now(),
        }
        existing = self.store.insert_registration(row)
        if existing is None:
            return
        changes = [
            f"{label} (registered {existing[key][:16] if 'sha' in key else existing[key]!r:.200}, "
            f"given {row[key][:16] if 'sha' in key else row[key]!r:.200})"
            for key, label in _REGISTRATION_FIELDS
            if existing[key] != row[key]
        ]
        if changes:
            raise LedgerError(
                f"evaluation {name!r} is already registered in {self.store.display} and cannot change: "
                + "; ".join(changes)
                + ". The policy and the task universe are locked at registration; register a new evaluation name "
                "to use different ones."
            )

    def evaluations(self) -> list[str]:
        """Names of the registered evaluations, in registration order."""
        with self.store.transaction(write=False) as conn:
            return self.store.evaluation_names(conn)

    def registration(self, evaluation: str) -> Registration:
        """The registered policy, universe and systems of an evaluation.

        Raises
        ------
        LedgerError
            No evaluation of that name is registered.
        """
        name = _name(evaluation)
        if name not in self._registrations:
            self._registrations[name] = self.store.registration(name)
        return self._registrations[name]

    # ------------------------------------------------------------------ outcomes
    def append(self, evaluation: str, rows: OutcomeColumns | pd.DataFrame | Iterable[Mapping[str, Any]]) -> AppendResult:
        """Append outcome events; idempotent per (system, task, attempt).

        The rows are validated against the outcome-row contract first (nothing is stored when one
        breaks it). Then, in one transaction: events with a new key are stored; an event whose key
        is stored with the same content is a duplicate (acknowledged again, not stored twice; the
        content is every field but ``source``, so an event re-sent from another log or a retried
        run is a duplicate and the stored event keeps its first source); one
        whose key is stored with different content is a conflict (refused, recorded in the
        conflicts table, never overwriting). The method returns once the commit is on disk (on SQLite,
        concurrent appenders share that flush: :mod:`stopwise.ledger._group_commit`).

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
            The evaluation is not registered, or the database or the flush failed (nothing acknowledged).
        """
        reg = self.registration(evaluation)
        if not isinstance(rows, pd.DataFrame | OutcomeColumns):
            rows = list(rows)
        if len(rows) == 0:
            return AppendResult(0, 0, 0)
        source = f"<append to {reg.name}>"
        payloads = event_payloads(rows, source=source)
        check_membership(payloads, reg, self._planned_tasks(reg), source)
        keys: list[EventKey] = [(p["system"], p["task"], p["attempt"]) for p in payloads]
        received = now()
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
                "digest": event_digest(p),
                "received_at": received,
            }
            for p in payloads
        ]
        stored = self.store.store_events(reg.id, values, keys, payloads)
        if stored.accepted:
            record_head(self.store, reg)  # the head file beside a SQLite ledger (truncation caught by verify)
        return AppendResult(
            accepted=len(stored.accepted),
            duplicates=len(stored.duplicates),
            conflicts=len(stored.conflicts),
            accepted_keys=[keys[i] for i in stored.accepted],
            duplicate_keys=[keys[i] for i in stored.duplicates],
            conflict_keys=[keys[i] for i in stored.conflicts],
        )

    def _planned_tasks(self, reg: Registration) -> frozenset[str] | None:
        """The planned task ids (kept per evaluation); None for a universe given by counts."""
        if reg.id not in self._planned and reg.universe.tasks is not None:
            self._planned[reg.id] = frozenset(reg.universe.tasks.tolist())
        return self._planned.get(reg.id)

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
        events = self.store.snapshot(self.registration(evaluation))
        rows = events.rows if upto is None else events.rows.take(events.seqs <= upto)
        return rows.to_frame()

    def high_water(self, evaluation: str) -> int:
        """The evaluation's current outcome high-water mark (0 when nothing is stored)."""
        return self.store.high_water(self.registration(evaluation))

    def conflicts(self, evaluation: str) -> pd.DataFrame:
        """The refused events of the evaluation: key, refused content (JSON), its digest, the stored digest and content.

        ``stored_json`` is the canonical JSON of the event stored under the same key (what the refused
        one would have replaced), so the two can be shown side by side.
        """
        out = []
        for r in self.store.conflict_rows(self.registration(evaluation)):
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
        first = self.store.first_final(reg)
        if first is None:
            return None
        return next(iter(self.store.decisions(reg, after=first[0] - 1, upto=first[0])), None)

    # ------------------------------------------------------------------ decisions
    def look(self, evaluation: str) -> LedgerLook:
        """Read the evaluation's stored events now: the first step of :meth:`decide`, handed out.

        The look takes the decision on exactly these events (:meth:`LedgerLook.decide`) and appends it to
        the chain (:meth:`LedgerLook.append`); :meth:`decide` is these steps, taken again when another
        process appended a decision on later events first. Use it to time the steps apart.

        Raises
        ------
        LedgerError
            No outcome event is stored yet.
        """
        reg = self.registration(evaluation)
        if reg.family:
            raise LedgerError(
                f"evaluation {reg.name!r} is a family of {len(reg.family)} systems: take its looks with "
                "Ledger.decide_family (stopwise ledger decide --family)"
            )
        events = self.store.snapshot(reg)
        if events.high_water == 0:
            raise LedgerError(f"evaluation {reg.name!r} has no outcome events yet; nothing to decide")
        return LedgerLook(self.store, reg, events)

    def decide_family(self, evaluation: str, *, upto: int | None = None) -> FamilyRecord:
        """One look at a family evaluation: :func:`stopwise.compare.decide_family` on its stored events.

        The registered systems, policy (its ``[family]`` section) and planned universe; the record is computed, not
        appended to the decision chain: :func:`~stopwise.compare.decide_family` on the rows of :meth:`export`
        (or :meth:`outcomes`) gives it again. A live harness calls it at each look and stops scheduling the systems
        not in the record's ``needed``.

        Parameters
        ----------
        evaluation : str
            A family evaluation (:meth:`register_family`).
        upto : int, optional
            Only the events with sequence <= ``upto`` (a past look).

        Returns
        -------
        FamilyRecord

        Raises
        ------
        LedgerError
            The evaluation is a pair, or a system has no outcome event yet.
        ComparisonError
            The family cannot be formed from the stored events.

        Examples
        --------
        >>> import stopwise
        >>> from stopwise.ledger import open_ledger
        >>> tasks = [f"t{i}" for i in range(40)]
        >>> with open_ledger("sqlite:///:memory:") as ledger:
        ...     ledger.register_family("race", policy=stopwise.Policy(), universe=stopwise.TaskUniverse(tasks), systems=["A", "B", "C"])
        ...     _ = ledger.append("race", [{"system": s, "task": t, "outcome": int(s == "A")} for s in "ABC" for t in tasks])
        ...     record = ledger.decide_family("race")
        >>> record.systems, record.look, record.final
        (['A', 'B', 'C'], 40, True)
        """
        from stopwise.ledger._family import decide_family_registered

        reg = self.registration(evaluation)
        events = self.store.snapshot(reg)
        rows = events.rows if upto is None else events.rows.take(events.seqs <= upto)
        return decide_family_registered(reg, rows)

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
        for _ in range(_STALE_RETRIES):
            look = self.look(evaluation)
            decision = look.decide()
            if not record:
                return decision
            link = look.append()
            if link is not None:
                return link.record
        return decision  # another process kept deciding on later events: theirs are in the chain

    def decisions(self, evaluation: str, *, after: int = 0, upto: int | None = None) -> list[LedgerDecision]:
        """The evaluation's decision history, oldest first, as stored (not verified: see :meth:`verify`).

        ``after``: only the links with a higher sequence (what a live reader has not seen yet);
        ``upto``: only the links up to that sequence.
        """
        return self.store.decisions(self.registration(evaluation), after=after, upto=upto)

    def final_tasks(self, evaluation: str, system: str, tasks: Iterable[str] | None = None) -> set[str]:
        """The tasks (of ``tasks`` when given) that have a final outcome event of ``system``.

        The live Inspect manager reads pairing state here, so that every process appending to the
        ledger sees the same pairs.
        """
        return self.store.final_tasks(self.registration(evaluation), str(system), tasks)

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
        return self.store.notify(_name(evaluation), str(system), state, message)

    def notices(self, evaluation: str, *, after: int = 0) -> list[WorkerNotice]:
        """The evaluation's worker notices with an id above ``after``, oldest first (see :meth:`notify`)."""
        return self.store.notices(_name(evaluation), after)

    def progress(self, evaluation: str) -> dict[str, int]:
        """Outcome events stored per system (pacing across processes reads how far each system got)."""
        return self.store.progress(self.registration(evaluation))

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

        name = _name(evaluation)
        self._registrations.pop(name, None)  # read again: verify checks the stored registration
        return verify_evaluation(self.store, name, expect_head=expect_head)

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

        return ledger_head(self.store, self.registration(evaluation))

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
        from stopwise.ledger._export import export_evaluation

        return export_evaluation(
            self.store, self.registration(evaluation), path, decisions_path=decisions_path, force=force, format=format,
            upto_decision=upto_decision,
        )


def _check_betting_order(name: str, policy: Policy, universe: TaskUniverse) -> None:
    """Refuse, before anything is locked, a betting-wor evaluation that could never decide on ``universe``."""
    if policy.decision.boundary != "betting-wor":
        return
    if not getattr(universe, "ordered", True):
        raise LedgerError(
            f"evaluation {name!r}: the policy's betting-wor boundary needs the planned task order, but the task "
            f"universe gives counts only ({universe.n_tasks} tasks), so no decision could ever be taken. Register "
            "the planned tasks in planned order instead (stopwise order ... -o order.csv, then stopwise ledger init "
            "... --tasks order.csv), or use a policy with the fixed-budget boundary"
        )
    from stopwise.compare import check_betting_order

    try:
        check_betting_order(policy, universe)
    except ComparisonError as exc:
        raise LedgerError(f"evaluation {name!r}: {exc}") from None


def _name(evaluation: str) -> str:
    name = str(evaluation).strip()
    if not name:
        raise LedgerError("evaluation name must be non-empty text")
    return name


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
