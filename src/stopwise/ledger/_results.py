"""What the ledger's operations return: small frozen dataclasses with a docstring per field."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from stopwise.records import DecisionRecord, OutcomeColumns, Policy

if TYPE_CHECKING:
    import numpy as np

    from stopwise.ledger._universe_io import TaskUniverse

__all__ = [
    "AppendResult",
    "EventKey",
    "EventSnapshot",
    "LedgerDecision",
    "LedgerHead",
    "Mismatch",
    "Registration",
    "VerifyResult",
]

EventKey = tuple[str, str, int]
"""The key of an outcome event within an evaluation: (system, task, attempt)."""


@dataclass(frozen=True)
class AppendResult:
    """What one :meth:`Ledger.append` stored, acknowledged again and refused.

    Every event of the call is in exactly one of the three lists, in input order. The call returns
    only after the transaction holding the accepted events (and the recorded conflicts) committed:
    an acknowledged event is durable.
    """

    accepted: int
    """Events stored for the first time."""
    duplicates: int
    """Events whose key was already stored with the same content: acknowledged again, not stored twice."""
    conflicts: int
    """Events whose key was already stored with different content: refused, kept in the conflicts table."""
    accepted_keys: list[EventKey] = field(default_factory=list)
    """Keys of the accepted events."""
    duplicate_keys: list[EventKey] = field(default_factory=list)
    """Keys of the duplicate events."""
    conflict_keys: list[EventKey] = field(default_factory=list)
    """Keys of the refused (conflicting) events."""

    @property
    def acknowledged(self) -> int:
        """Events now durably stored with exactly the content sent: accepted plus duplicates."""
        return self.accepted + self.duplicates


@dataclass(frozen=True)
class Registration:
    """An evaluation as registered: the locked policy, the planned task universe and the two systems (or a family's k)."""

    name: str
    """The evaluation's name (unique in the ledger)."""
    policy: Policy
    """The comparison policy, locked at registration."""
    universe: TaskUniverse
    """The planned task universe, locked at registration."""
    tested: str
    """The tested system A."""
    baseline: str
    """The baseline system B."""
    policy_sha256: str
    """sha256 of the policy's canonical JSON."""
    universe_sha256: str
    """sha256 of the universe (:meth:`TaskUniverse.sha256`)."""
    genesis_digest: str
    """The digest the decision chain starts from (binds the chain to this registration)."""
    created_at: str
    """UTC time of registration (ISO 8601)."""
    id: int = field(repr=False, default=0)
    """Internal row id."""
    family: tuple[str, ...] = ()
    """A family registration (:meth:`Ledger.register_family`): its k systems, sorted; ``tested`` and ``baseline``
    are then empty. ``()`` for a pair."""

    @property
    def systems(self) -> tuple[str, ...]:
        """The evaluation's systems: the family's, or (tested, baseline)."""
        return self.family or (self.tested, self.baseline)


@dataclass(frozen=True)
class EventSnapshot:
    """Every outcome event of an evaluation stored up to one high-water mark, column by column.

    A decision taken on it saw exactly these events. The columns are shared with the ledger's later
    reads: do not modify them.
    """

    rows: OutcomeColumns
    """The events as validated outcome columns, in storage order."""
    seqs: np.ndarray
    """The sequence number of each row (increasing)."""
    high_water: int
    """The sequence number of the last event (0 when there is none): the rows are exactly the events up to it."""

    def __len__(self) -> int:
        return len(self.seqs)


@dataclass(frozen=True)
class LedgerDecision:
    """One link of an evaluation's decision chain."""

    sequence: int
    """1, 2, ... within the evaluation."""
    outcome_seq: int
    """Outcome high-water mark: the decision saw exactly the evaluation's events with sequence <= this."""
    record: DecisionRecord
    """The decision record."""
    record_json: str
    """The record's canonical JSON, as hashed into the chain."""
    previous_digest: str
    """Digest of the previous link (the genesis digest for the first)."""
    digest: str
    """sha256(previous_digest + record_json)."""
    created_at: str
    """UTC time the decision was recorded (ISO 8601)."""

    def to_json_dict(self) -> dict[str, Any]:
        """The link as a JSON-ready mapping (the record as an object)."""
        return {
            "sequence": self.sequence,
            "outcome_seq": self.outcome_seq,
            "created_at": self.created_at,
            "previous_digest": self.previous_digest,
            "digest": self.digest,
            "record": self.record.model_dump(mode="json"),
        }


MismatchKind = Literal["registration", "outcome", "chain", "decision", "head"]


@dataclass(frozen=True)
class Mismatch:
    """The first thing :meth:`Ledger.verify` found that does not recompute."""

    kind: MismatchKind
    """registration (policy or universe digest), outcome (an event's content digest), chain (a link's
    digests, its sequence or its outcome_seq), decision (a recorded decision, or its ledger position,
    differs from the one recomputed from the outcomes) or head (the ledger does not extend the head
    an auditor kept: events or decisions were removed or changed)."""
    sequence: int | None
    """The decision sequence (chain, decision) or outcome sequence (outcome); None for registration."""
    message: str
    """What differs, with the stored and the recomputed value."""

    def __str__(self) -> str:
        where = "" if self.sequence is None else f" #{self.sequence}"
        return f"{self.kind}{where}: {self.message}"


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of recomputing an evaluation's registration, outcome digests and decision chain."""

    evaluation: str
    """The evaluation verified."""
    ok: bool
    """True when everything recomputed."""
    n_outcomes: int
    """Outcome events checked."""
    n_decisions: int
    """Decision records checked (re-decided from the outcomes at their high-water mark)."""
    head_digest: str
    """Digest of the last decision (the genesis digest when there is none)."""
    first_mismatch: Mismatch | None = None
    """The first mismatch, in the order registration, outcomes, chain (by sequence), head; None when ok."""
    head: LedgerHead | None = None
    """The evaluation's head (event and decision counts with one digest over both): keep it outside the
    ledger and pass it back (``verify --expect-head``) to detect removed events or decisions. None when
    a mismatch came before it could be computed."""
    expected_head: str | None = None
    """The head the ledger was checked against (``expect_head``), None when none was given."""


@dataclass(frozen=True)
class LedgerHead:
    """The head of an evaluation's ledger: what an auditor keeps outside the database to detect truncation.

    The chains inside the ledger detect edits; a writer with database access can still remove the
    newest events or decisions and leave a shorter, self-consistent ledger. The head (its counts and
    digest, printed by ``ledger verify``, ``ledger decide`` and ``ledger export``) kept elsewhere
    catches that: a later ledger must extend it (``Ledger.verify(..., expect_head=str(head))``).
    """

    evaluation: str
    """The evaluation."""
    n_events: int
    """Outcome events stored for the evaluation."""
    n_decisions: int
    """Decision records in its chain."""
    events_digest: str
    """Digest chained over every event's content digest in storage order, from the genesis digest:
    ``h_k = sha256(h_{k-1} + event_digest_k)``."""
    decisions_digest: str
    """Digest of the last decision record (the genesis digest when there is none)."""
    digest: str
    """sha256 of the canonical JSON of {evaluation, genesis, n_events, events, n_decisions, decisions}."""

    def __str__(self) -> str:
        """The head as one token, ``e<n_events>-d<n_decisions>-<digest>``, to keep and pass back."""
        return f"e{self.n_events}-d{self.n_decisions}-{self.digest}"
