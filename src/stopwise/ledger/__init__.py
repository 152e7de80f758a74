"""The decision ledger: durable, append-only outcome events and a tamper-evident decision history.

One schema through SQLAlchemy 2 Core. ``sqlite:///path`` (or a plain path) is the embedded default
(WAL journal, flushed before each write returns, concurrent appenders sharing the flushes: group
commit); ``postgresql+psycopg://user@host:port/db`` serves many evaluation workers writing to one database.

* :meth:`Ledger.register` locks an evaluation's policy (by sha256), planned task universe and systems.
* :meth:`Ledger.append` stores outcome events idempotently per (system, task, attempt): a repeat with
  the same content is acknowledged again, one with different content is refused and kept as a conflict.
  It returns only after the commit is on disk, so an acknowledged event is durable.
* :meth:`Ledger.decide` takes a decision with :func:`stopwise.decide` from the stored events, the
  registered policy and universe, and appends it to a hash chain (:meth:`Ledger.look` hands out its
  steps); :meth:`Ledger.verify` recomputes the chain and every decision.
* :meth:`Ledger.notify` and :meth:`Ledger.notices` record the live workers' states (started, failed with the
  reason, finished), so that the worker of one system learns that its partner's failed.
* :meth:`Ledger.export` writes the outcome rows and the decision history for ``stopwise decide``/``replay``.
* :func:`open_ledger` takes a ``mode`` (:data:`LEDGER_MODES`): ``create`` (the default) makes a new ledger,
  ``write`` and ``read`` open an existing stopwise ledger only and change nothing else (``read``: read-only).

Following a ledger (``stopwise watch``) is :mod:`stopwise.live`'s.

The schema is documented in ``docs/ledger.md`` and in :mod:`stopwise.ledger._schema`.
"""

from stopwise.ledger._digest import canonical_json, chain_digest, event_digest, genesis_digest
from stopwise.ledger._engine import ledger_url
from stopwise.ledger._ledger import Ledger, open_ledger
from stopwise.ledger._look import LedgerLook
from stopwise.ledger._notices import WorkerNotice
from stopwise.ledger._opening import LEDGER_MODES, LedgerMode
from stopwise.ledger._results import (
    AppendResult,
    EventKey,
    EventSnapshot,
    LedgerDecision,
    LedgerHead,
    Mismatch,
    Registration,
    VerifyResult,
)
from stopwise.ledger._schema import SCHEMA_VERSION
from stopwise.ledger._verify import VOLATILE_RECORD_FIELDS

__all__ = [
    "LEDGER_MODES",
    "SCHEMA_VERSION",
    "VOLATILE_RECORD_FIELDS",
    "AppendResult",
    "EventKey",
    "EventSnapshot",
    "Ledger",
    "LedgerDecision",
    "LedgerHead",
    "LedgerLook",
    "LedgerMode",
    "Mismatch",
    "Registration",
    "VerifyResult",
    "WorkerNotice",
    "canonical_json",
    "chain_digest",
    "event_digest",
    "genesis_digest",
    "ledger_url",
    "open_ledger",
]

