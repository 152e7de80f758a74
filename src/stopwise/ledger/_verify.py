"""``Ledger.verify``: recompute an evaluation's registration, events and decision chain, and its head.

What is checked, in order (the first mismatch is reported):

1. the registration: policy and universe sha256 and the genesis digest;
2. every outcome event's content digest;
3. the decision chain: sequences 1, 2, ... without a gap, each link's previous digest and digest, each
   decision's event position (``outcome_seq``) never below the previous one's and the sequence of an
   event the evaluation still holds;
4. each record's ledger position (records taken since positions were stored): ``outcome_seq`` as linked,
   ``n_events`` equal to the events stored up to it, the first final decision and the events after it;
5. each decision taken again with :func:`stopwise.decide` from exactly the events up to its position;
6. when a SQLite ledger has a head file beside it (:mod:`stopwise.ledger._head_file`, written at each append
   and decision), that the ledger extends the head it records: no event or decision removed from the end;
7. when the auditor passes the head they kept (``expect_head``), that the ledger extends it: at least as
   many events and decisions, and the same digest over the first ones.

A stored decision record longer than ``STOPWISE_MAX_LINE_BYTES`` (it is one line of
``ledger export --decisions``) is refused before it is read (:class:`~stopwise.errors.LimitError`), so
verifying a ledger holds one bounded record at a time.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import RowMapping

from stopwise._limits import json_loads, limit
from stopwise.errors import LedgerError, LimitError, StopwiseError
from stopwise.ledger._digest import canonical_json, chain_digest, event_digest, genesis_digest
from stopwise.ledger._events import column_payloads
from stopwise.ledger._head_file import head_file_mismatch
from stopwise.ledger._look import decide_registered
from stopwise.ledger._position import FINAL_ACTIONS, position_of
from stopwise.ledger._results import EventSnapshot, LedgerHead, Mismatch, Registration, VerifyResult
from stopwise.ledger._universe_io import universe_sha256
from stopwise.records import DecisionRecord

if TYPE_CHECKING:
    from stopwise.ledger._store import LedgerStore

__all__ = ["VOLATILE_RECORD_FIELDS", "head_digest", "ledger_head", "parse_head", "verify_evaluation"]

VOLATILE_RECORD_FIELDS: frozenset[str] = frozenset({"decided_at", "timestamp", "created_at", "stopwise_version"})
"""Record fields that ``verify`` does not require to recompute equal (the time of the look, the library
version); they are still covered by the chain digest."""

_HEAD = re.compile(r"^e(\d+)-d(\d+)-([0-9a-f]{64})$")
_SKIPPED = VOLATILE_RECORD_FIELDS | {"ledger"}
"""Record fields not compared with the decision taken again: VOLATILE_RECORD_FIELDS (time, library version) and the ledger
position (checked against the events on its own)."""


class _Found(Exception):
    """The first mismatch (internal: unwinds the checks to :func:`verify_evaluation`)."""

    def __init__(self, mismatch: Mismatch, n_decisions: int, previous: str) -> None:
        super().__init__(str(mismatch))
        self.mismatch, self.n_decisions, self.previous = mismatch, n_decisions, previous


def head_digest(evaluation: str, genesis: str, n_events: int, events: str, n_decisions: int, decisions: str) -> str:
    """The digest of a :class:`LedgerHead` (sha256 of the canonical JSON of its parts).

    Examples
    --------
    >>> from stopwise.ledger._verify import head_digest
    >>> len(head_digest("ev", "0" * 64, 0, "0" * 64, 0, "0" * 64))
    64
    """
    parts = {"evaluation": evaluation, "genesis": genesis, "n_events": n_events, "events": events,
             "n_decisions": n_decisions, "decisions": decisions}
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


def _events_chain(genesis: str, digests: list[str]) -> str:
    """The digest chained over the event digests, from ``genesis``."""
    running = genesis
    for digest in digests:
        running = hashlib.sha256((running + digest).encode()).hexdigest()
    return running


def parse_head(text: str) -> tuple[int, int, str]:
    """(events, decisions, digest) of a head token ``e<events>-d<decisions>-<sha256 hex>``.

    Examples
    --------
    >>> from stopwise.ledger._verify import parse_head
    >>> parse_head("e40-d3-" + "a" * 64)[:2]
    (40, 3)
    """
    match = _HEAD.match(str(text).strip().lower())
    if match is None:
        shown = str(text)[:80]
        raise LedgerError(
            f"expected head {shown!r}: must be e<events>-d<decisions>-<64 hex digits>, as printed by "
            "stopwise ledger verify, decide or export"
        )
    return int(match[1]), int(match[2]), match[3]


def ledger_head(store: LedgerStore, reg: Registration) -> LedgerHead:
    """The current head of an evaluation from its stored digests (not re-verified: see :meth:`Ledger.verify`)."""
    digests = [digest for _, digest in store.event_digests(reg)]
    last = store.last_link(reg)
    n_decisions, chain = (0, reg.genesis_digest) if last is None else last
    return _head(reg.name, reg.genesis_digest, digests, n_decisions, chain)


def _head(name: str, genesis: str, digests: list[str], n_decisions: int, chain: str) -> LedgerHead:
    events = _events_chain(genesis, digests)
    digest = head_digest(name, genesis, len(digests), events, n_decisions, chain)
    return LedgerHead(name, len(digests), n_decisions, events, chain, digest)


def _registration_mismatch(
    store: LedgerStore, name: str, row: RowMapping
) -> tuple[Registration | None, Mismatch | None]:
    try:
        reg = store.registration(name)
    except (StopwiseError, ValueError, KeyError) as exc:
        return None, Mismatch("registration", None, f"cannot read the registration: {exc}")
    checks = [
        ("policy sha256", reg.policy.sha256(), row["policy_sha256"]),
        ("universe sha256", universe_sha256(reg.universe), row["universe_sha256"]),
        (
            "genesis digest",
            genesis_digest(name, row["policy_sha256"], row["universe_sha256"], row["tested"], row["baseline"]),
            row["genesis_digest"],
        ),
    ]
    for label, computed, stored in checks:
        if computed != stored:
            return reg, Mismatch("registration", None, f"{label} stored {stored}, recomputed {computed}")
    return reg, None


def verify_evaluation(store: LedgerStore, evaluation: str, *, expect_head: str | None = None) -> VerifyResult:
    """Recompute one evaluation (see the module notes) from what is stored now; the body of :meth:`Ledger.verify`."""
    name = str(evaluation).strip()
    expected = None if expect_head is None else parse_head(expect_head)
    row = store.registration_row(name)
    if row is None:
        store.registration(name)  # raises the not-registered error
    assert row is not None
    genesis = str(row["genesis_digest"])

    def result(n_out: int, n_dec: int, head: str, mismatch: Mismatch | None, top: LedgerHead | None = None) -> VerifyResult:
        return VerifyResult(name, mismatch is None, n_out, n_dec, head, mismatch, top, expect_head)

    reg, mismatch = _registration_mismatch(store, name, row)
    if mismatch is not None or reg is None:
        return result(0, 0, genesis, mismatch)
    events = store.snapshot(reg, reread=True)  # every event as stored now, not as this process read it before
    digests = [event_digest(p) for p in column_payloads(events.rows)]
    mismatch = _event_mismatch(events, digests, store.event_digests(reg))
    if mismatch is not None:
        return result(len(digests), 0, genesis, mismatch)
    try:
        n_decisions, chain = _verify_chain(store, reg, events)
    except _Found as found:
        return result(len(digests), found.n_decisions, found.previous, found.mismatch)
    head = _head(name, genesis, digests, n_decisions, chain)
    mismatch = head_file_mismatch(store, reg, n_decisions)
    if mismatch is not None:
        return result(len(digests), n_decisions, chain, mismatch, head)
    if expected is not None:
        mismatch = _head_mismatch(store, reg, digests, head, expected)
        if mismatch is not None:
            return result(len(digests), n_decisions, chain, mismatch, head)
    return result(len(digests), n_decisions, chain, None, head)


def _event_mismatch(events: EventSnapshot, digests: list[str], stored: list[tuple[int, str]]) -> Mismatch | None:
    """The first stored event whose content digest does not recompute, or whose sequence no event read holds.

    Events are matched by sequence, not by position: an event stored by hand at a sequence stopwise never
    gives (0 or below, which no read returns) is reported by its sequence; events stored after the
    snapshot was read (above its high-water mark) are left to the next verify.
    """
    held = {seq: i for i, seq in enumerate(events.seqs.tolist())}
    for seq, stored_digest in stored:
        if seq > events.high_water:
            break
        i = held.get(seq)
        if i is None:
            return Mismatch("outcome", seq, (
                f"an event is stored at sequence {seq}, which stopwise never gives (sequences start at 1): it was "
                "put into the outcomes table by hand, outside the ledger"))
        if digests[i] != stored_digest:
            payload = column_payloads(events.rows.take(np.array([i])))[0]
            return Mismatch("outcome", seq, (
                f"content digest stored {stored_digest}, recomputed {digests[i]} "
                f"(system {payload['system']!r}, task {payload['task']!r}, attempt {payload['attempt']})"))
    return None


def _head_mismatch(
    store: LedgerStore, reg: Registration, digests: list[str], head: LedgerHead, expected: tuple[int, int, str]
) -> Mismatch | None:
    """Whether the ledger extends the head an auditor kept (None when it does)."""
    n_events, n_decisions, digest = expected
    kept = f"e{n_events}-d{n_decisions}-{digest[:16]}…"
    if n_events > head.n_events or n_decisions > head.n_decisions:
        return Mismatch("head", None, (
            f"the ledger holds {head.n_events} events and {head.n_decisions} decisions, fewer than the head you kept "
            f"({kept}: {n_events} events, {n_decisions} decisions): events or decisions were removed"))
    events = _events_chain(reg.genesis_digest, digests[:n_events])
    chain = reg.genesis_digest if n_decisions == 0 else str(store.link_field(reg, n_decisions, "digest"))
    if head_digest(reg.name, reg.genesis_digest, n_events, events, n_decisions, chain) != digest:
        return Mismatch("head", None, (
            f"the first {n_events} events and {n_decisions} decisions do not recompute the head you kept ({kept}): "
            "something stored before that head was changed, removed or reordered"))
    return None


def _record_json(store: LedgerStore, reg: Registration, link: Any) -> str:
    """One stored record, refused past the line limit before it is read."""
    cap = limit("STOPWISE_MAX_LINE_BYTES")
    if int(link.size or 0) > cap:
        raise LimitError(
            f"decision #{int(link.sequence)} of evaluation {reg.name!r}: the stored record holds {int(link.size):,} "
            f"characters, over STOPWISE_MAX_LINE_BYTES ({cap:,}); stopwise never writes one that large. "
            "Raise the limit if the ledger is trusted"
        )
    return str(store.link_field(reg, int(link.sequence), "record_json"))


def _parse(record_json: str, where: str) -> DecisionRecord:
    try:
        return DecisionRecord.model_validate(json_loads(record_json, where))
    except LimitError:
        raise
    except ValueError as exc:
        raise LedgerError(f"stored decision record is not a valid decision record: {str(exc).splitlines()[0]}") from exc


def _verify_chain(store: LedgerStore, reg: Registration, events: EventSnapshot) -> tuple[int, str]:
    """(decisions checked, the chain's head digest); raises :class:`_Found` at the first mismatch."""
    rows, seqs = events.rows, events.seqs
    previous, last_seq = reg.genesis_digest, 0
    first: tuple[int, int] | None = None
    links = store.link_rows(reg)
    for expected, link in enumerate(links, start=1):
        sequence, outcome_seq = int(link.sequence), int(link.outcome_seq)

        def fail(kind: str, message: str, sequence: int = sequence, done: int = expected - 1, previous: str = previous) -> _Found:
            return _Found(Mismatch(kind, sequence, message), done, previous)  # type: ignore[arg-type]

        if sequence != expected:
            raise fail("chain", f"sequence {sequence} where {expected} was expected (a record is missing)")
        if link.previous_digest != previous:
            raise fail("chain", f"previous digest stored {link.previous_digest}, chain has {previous}")
        record_json = _record_json(store, reg, link)
        computed = chain_digest(previous, record_json)
        if computed != link.digest:
            raise fail("chain", f"digest stored {link.digest}, recomputed {computed} (the record or its digest was edited)")
        if outcome_seq < last_seq:
            raise fail("chain", (
                f"taken at event sequence {outcome_seq}, below the previous decision's {last_seq}: decisions are "
                "taken on a growing ledger, so records were swapped or reordered"))
        n_seen = int(np.searchsorted(seqs, outcome_seq, side="right"))
        if n_seen == 0 or int(seqs[n_seen - 1]) != outcome_seq:
            end = f"its events end at sequence {int(seqs[-1])}" if len(seqs) else "it has no events"
            raise fail("decision", (
                f"taken at event sequence {outcome_seq}, but the evaluation holds no event with that sequence "
                f"({end}): the events it was taken on were removed"))
        try:
            stored_record = _parse(record_json, f"decision #{sequence}")
        except LedgerError as exc:
            raise fail("decision", str(exc)) from None
        _check_position(stored_record, sequence, outcome_seq, n_seen, seqs, first, fail)
        seen = rows.take(seqs <= outcome_seq)
        try:
            again = decide_registered(reg, seen)
        except StopwiseError as exc:
            raise fail("decision", f"cannot be taken again from the stored outcomes: {exc}") from None
        difference = record_difference(stored_record, again)
        if difference is not None:
            raise fail("decision", difference)
        if first is None and stored_record.action in FINAL_ACTIONS:
            first = (sequence, outcome_seq)
        previous, last_seq = link.digest, outcome_seq
    return len(links), previous


def _check_position(record: DecisionRecord, sequence: int, outcome_seq: int, n_seen: int, seqs: np.ndarray,
                    first: tuple[int, int] | None, fail: Any) -> None:
    """The record's ledger position against the link and the events (records without one are not checked)."""
    position = record.ledger
    if position is None:
        return
    expected = position_of(record, sequence, outcome_seq, seqs[:n_seen], first)  # as Ledger.decide wrote it
    for key in ("outcome_seq", "n_events", "decision", "after_decision"):
        stored, value = getattr(position, key), getattr(expected, key)
        if stored != value:
            raise fail("decision", (
                f"ledger position {key} recorded {stored}, the stored events and chain give {value}"
                + (": events it was taken on were removed or added" if key == "n_events" else "")))


def record_difference(stored: DecisionRecord, again: DecisionRecord) -> str | None:
    """The first field where a stored record and the recomputed one differ (None when they agree)."""
    a = json.loads(canonical_json(stored.model_dump(mode="json")))
    b = json.loads(canonical_json(again.model_dump(mode="json")))
    for key in sorted(set(a) | set(b)):
        if key in _SKIPPED or (key in ("tail", "flagged") and not a.get(key)):
            continue  # fields added later are absent from records stored before them
        if not _same(a.get(key), b.get(key)):
            return f"field {key!r} recorded {a.get(key)!r}, recomputed from the stored outcomes {b.get(key)!r}"
    return None


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return bool(np.isclose(x, y, rtol=1e-12, atol=1e-15))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_same(p, q) for p, q in zip(x, y, strict=True))
    return bool(x == y)
