"""The digests of the ledger: outcome-event content, registration and the decision chain.

Each hashes canonical JSON (:func:`stopwise._canonical.canonical_json`, the project's one form, re-exported here).

* An outcome event's digest is ``sha256(canonical JSON of its contract fields)``; two events with the
  same key are duplicates when their digests agree and a conflict otherwise. ``flags`` enters the
  payload only when the event has flags, so the digest of an unflagged event is the same as before
  flags were stored (schema version 1).
* An evaluation's chain starts at its genesis digest, ``sha256(canonical JSON of the registration)``
  (name, policy sha256, universe sha256, tested, baseline), so that the chain is bound to what was
  registered.
* Decision ``k`` stores ``digest_k = sha256(digest_{k-1} + canonical JSON of record k)`` (hex digests,
  UTF-8); editing, removing or reordering any record breaks every later digest.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

from stopwise._canonical import canonical_json

__all__ = ["canonical_json", "chain_digest", "event_digest", "event_payload", "genesis_digest", "same_content"]


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def event_payload(row: Mapping[str, Any]) -> dict[str, Any]:
    """The contract fields of one validated outcome row as plain JSON values (NaN becomes null).

    ``flags`` (canonical text, as :func:`stopwise.outcome_columns` gives it) is included only when
    non-empty.

    Examples
    --------
    >>> from stopwise.ledger._digest import event_payload
    >>> row = {"system": "A", "task": "t", "outcome": 0.0, "group": "", "attempt": 0, "cost_usd": None,
    ...        "elapsed_s": None, "status": "final", "source": "", "unit": "", "flags": "error"}
    >>> event_payload(row)["flags"], "flags" in event_payload({**row, "flags": ""})
    ('error', False)
    """
    payload: dict[str, Any] = {
        "system": str(row["system"]),
        "task": str(row["task"]),
        "outcome": _number(row["outcome"]),
        "group": str(row["group"]),
        "attempt": int(row["attempt"]),
        "cost_usd": _number(row["cost_usd"]),
        "elapsed_s": _number(row["elapsed_s"]),
        "status": str(row["status"]),
        "source": str(row["source"]),
        "unit": str(row["unit"]),
    }
    flags = row.get("flags")
    if isinstance(flags, str) and flags:
        payload["flags"] = flags
    return payload


def event_digest(payload: Mapping[str, Any]) -> str:
    """sha256 hex digest of an event payload's canonical JSON."""
    return hashlib.sha256(canonical_json(dict(payload)).encode()).hexdigest()


def same_content(payload: Mapping[str, Any], digest: str, stored_digest: str, stored_source: str) -> bool:
    """Whether an event repeats a stored one: same content, whatever ``source`` each names.

    ``source`` is provenance (which file or run reported the event), not content: the same sample
    read again from another log, or re-appended by a retried Inspect eval (a new eval id), is a
    duplicate. The stored event keeps its first source, and its digest (which covers ``source``) is
    unchanged, so ``verify`` recomputes it as before.

    Examples
    --------
    >>> from stopwise.ledger._digest import event_digest, same_content
    >>> stored = {"system": "A", "task": "t", "outcome": 1.0, "source": "log-1"}
    >>> again = {**stored, "source": "log-2"}
    >>> same_content(again, event_digest(again), event_digest(stored), "log-1")
    True
    """
    if digest == stored_digest:
        return True
    if payload["source"] == stored_source:
        return False
    return event_digest({**payload, "source": stored_source}) == stored_digest


def genesis_digest(name: str, policy_sha256: str, universe_sha256: str, tested: str, baseline: str) -> str:
    """The digest an evaluation's decision chain starts from."""
    registration = {
        "evaluation": name,
        "policy_sha256": policy_sha256,
        "universe_sha256": universe_sha256,
        "tested": tested,
        "baseline": baseline,
    }
    return hashlib.sha256(canonical_json(registration).encode()).hexdigest()


def chain_digest(previous: str, record_json: str) -> str:
    """``sha256(previous + record_json)``: the link of one decision record to the chain.

    Examples
    --------
    >>> from stopwise.ledger import chain_digest
    >>> import hashlib
    >>> chain_digest("ab", "{}") == hashlib.sha256(b"ab{}").hexdigest()
    True
    """
    return hashlib.sha256((previous + record_json).encode()).hexdigest()
