"""The head file: a SQLite ledger records its heads beside its database, so a truncated tail is caught by default.

A writer with database access can remove the newest events or decisions and leave a shorter, self-consistent
ledger; the chains inside it cannot show what is no longer there. So after each append that stores events and
each decision added to the chain, a SQLite ledger ``l.db`` writes ``l.db.heads.json`` beside it (atomically,
under an advisory lock of the folder so that concurrent writers never move a head backwards): per evaluation,
its genesis digest, the number of events, the sequence and content digest of the last one, the number of
decisions and the digest of the last link. ``Ledger.verify`` (and ``stopwise ledger verify``) reads the file
when it is there and requires the ledger to extend each of these (:func:`head_file_mismatch`).

A record the database no longer extends is never overwritten: the evidence stays until someone looks. The
file is outside the database but beside it: a writer who also deletes or edits it defeats it, as one with
write access to an ``--expect-head`` kept in the same folder would; keep a copy (or the printed head)
elsewhere for that. PostgreSQL ledgers and in-memory SQLite have no file beside them and no head file:
keep the head that ``ledger decide``, ``verify`` and ``export`` print and pass it to ``verify --expect-head``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stopwise._atomic import write_file
from stopwise.ledger._engine import folder_lock
from stopwise.ledger._results import Mismatch, Registration

if TYPE_CHECKING:
    from stopwise.ledger._store import LedgerStore

__all__ = ["FORMAT", "head_file_mismatch", "head_file_of", "read_head_file", "record_head"]

FORMAT = "stopwise-ledger-heads"
"""The ``format`` field of a head file (``version`` 1)."""
SUFFIX = ".heads.json"


def head_file_of(store: LedgerStore) -> Path | None:
    """The head file of a SQLite ledger (``<database>.heads.json``); None for PostgreSQL and in-memory SQLite."""
    database = store.sqlite_path
    return None if database is None else database.with_name(database.name + SUFFIX)


def read_head_file(path: Path) -> dict[str, Any] | None:
    """The head file's evaluations ({name: record}); None when there is no file. A damaged file raises ValueError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    if len(text) > 1 << 24:
        raise ValueError(f"holds {len(text):,} characters; stopwise writes a few hundred per evaluation")
    document = json.loads(text)
    if not isinstance(document, dict) or document.get("format") != FORMAT or not isinstance(document.get("evaluations"), dict):
        raise ValueError(f"is not a stopwise head file (format {FORMAT!r} with an 'evaluations' object)")
    return dict(document["evaluations"])


def _current(store: LedgerStore, reg: Registration) -> dict[str, Any]:
    n_events, last_seq, last_event = store.tail_state(reg)
    last = store.last_link(reg)
    n_decisions, last_decision = (0, reg.genesis_digest) if last is None else last
    return {"genesis": reg.genesis_digest, "n_events": n_events, "last_seq": last_seq, "last_event": last_event,
            "n_decisions": n_decisions, "last_decision": last_decision}


def _extends(store: LedgerStore, reg: Registration, kept: dict[str, Any], now: dict[str, Any]) -> bool:
    """Whether the ledger as stored now extends a recorded head."""
    try:
        if kept["genesis"] != reg.genesis_digest or now["n_events"] < int(kept["n_events"]):
            return False
        if int(kept["n_events"]) and store.event_digest_at(reg, int(kept["last_seq"])) != kept["last_event"]:
            return False
        n_decisions = int(kept["n_decisions"])
        if now["n_decisions"] < n_decisions:
            return False
        return n_decisions == 0 or store.link_field(reg, n_decisions, "digest") == kept["last_decision"]
    except (KeyError, TypeError, ValueError):
        return False


def record_head(store: LedgerStore, reg: Registration) -> None:
    """Write the evaluation's current head into the ledger's head file (nothing for PostgreSQL or in-memory SQLite).

    Called after an append that stored events and after a decision joined the chain. A recorded head
    the database no longer extends, or a damaged head file, is left as it is (``verify`` reports it).
    """
    path = head_file_of(store)
    if path is None or store.mode == "read":
        return
    with folder_lock(path.parent):
        try:
            evaluations = read_head_file(path) or {}
        except (OSError, ValueError):
            return  # damaged: kept for verify to report
        kept = evaluations.get(reg.name)
        now = _current(store, reg)
        if isinstance(kept, dict) and not _extends(store, reg, kept, now):
            return
        evaluations[reg.name] = now
        text = json.dumps({"format": FORMAT, "version": 1, "evaluations": evaluations}, sort_keys=True, indent=1) + "\n"
        write_file(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def head_file_mismatch(store: LedgerStore, reg: Registration, n_decisions: int) -> Mismatch | None:
    """Whether the ledger (verified up to here, ``n_decisions`` links) extends the head its head file records.

    None when it does, or when there is no head file or no record of the evaluation in it.
    """
    path = head_file_of(store)
    if path is None:
        return None
    try:
        evaluations = read_head_file(path)
    except (OSError, ValueError) as exc:
        return Mismatch("head", None, f"the head file {path} cannot be read: {exc}")
    kept = None if evaluations is None else evaluations.get(reg.name)
    if kept is None:
        return None
    now = _current(store, reg)
    if _extends(store, reg, kept, now):
        return None
    return Mismatch("head", None, _missing(path, kept, now))


def _missing(path: Path, kept: Any, now: dict[str, Any]) -> str:
    """What the head file records that the ledger no longer holds, in words."""
    where = f"the head file {path} (written at each append and decision)"
    if not isinstance(kept, dict) or not {"genesis", "n_events", "last_seq", "last_event", "n_decisions", "last_decision"} <= set(kept):
        return f"{where} holds a damaged record of this evaluation: {str(kept)[:200]!r}"
    if kept["genesis"] != now["genesis"]:
        return (f"{where} records this evaluation with genesis digest {str(kept['genesis'])[:16]}…, the ledger's is "
                f"{now['genesis'][:16]}…: the evaluation was registered again or the database replaced")
    parts = []
    n_events, last_seq = int(kept["n_events"]), int(kept["last_seq"])
    if now["n_events"] < n_events or (n_events and now["last_seq"] < last_seq):
        after = f"after sequence {now['last_seq']}" if now["n_events"] else "all of them"
        parts.append(f"{n_events - now['n_events']} of its {n_events} events are missing ({after}; the last recorded "
                     f"was sequence {last_seq})")
    elif n_events:
        parts.append(f"the event at sequence {last_seq} is not the one recorded (content digest {str(kept['last_event'])[:16]}…)")
    n_decisions = int(kept["n_decisions"])
    if now["n_decisions"] < n_decisions:
        parts.append(f"{n_decisions - now['n_decisions']} of its {n_decisions} decisions are missing (after #{now['n_decisions']})")
    elif n_decisions and not parts:
        parts.append(f"decision #{n_decisions} is not the one recorded (digest {str(kept['last_decision'])[:16]}…)")
    return (f"{where} records {n_events} events and {n_decisions} decisions; the ledger holds {now['n_events']} and "
            f"{now['n_decisions']}: " + "; ".join(parts or ["it does not extend the recorded head"])
            + ". Events or decisions were removed, or the database replaced by an older copy (after a deliberate "
            "restore, move the head file away)")
