"""The planned task universe as stored in the ledger: its canonical JSON, read back exactly."""

from __future__ import annotations

import json
from typing import Any

from stopwise.errors import LedgerError, StopwiseError
from stopwise.records import Policy, TaskUniverse

__all__ = ["TaskUniverse", "stored_setup", "universe_from_json", "universe_sha256", "universe_to_json"]


def universe_to_json(universe: TaskUniverse) -> str:
    """The universe's canonical JSON (planned tasks and groups in order, or N and group sizes)."""
    if not isinstance(universe, TaskUniverse):
        raise LedgerError(f"universe must be a stopwise TaskUniverse; got {type(universe).__name__}")
    return universe.canonical_json()


def universe_from_json(text: str) -> TaskUniverse:
    """Rebuild the universe stored by :func:`universe_to_json`."""
    data = json.loads(text)
    if "tasks" in data:
        return TaskUniverse(data["tasks"], data["groups"])
    return TaskUniverse.from_counts(int(data["n_tasks"]), {str(k): int(v) for k, v in data["group_sizes"].items()})


def universe_sha256(universe: TaskUniverse) -> str:
    """The universe's own sha256 (:meth:`TaskUniverse.sha256`)."""
    return universe.sha256()


def _stored(column: str, where: str, read: Any, text: Any) -> Any:
    try:
        return read(text)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError, StopwiseError) as exc:
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise LedgerError(
            f"{where}: the stored {column} is damaged and cannot be read ({type(exc).__name__}: {reason}); "
            "the ledger was changed outside stopwise; restore it from a backup or register the evaluation anew"
        ) from None


def stored_setup(policy_json: Any, universe_json: Any, where: str) -> tuple[Policy, TaskUniverse]:
    """The policy and universe a ledger stored at registration; a damaged one is a :class:`LedgerError` naming its column.

    Examples
    --------
    >>> policy, universe = stored_setup(Policy().canonical_json(), '{"n_tasks": 3, "group_sizes": {}}', "ev")
    >>> len(universe)
    3
    >>> stored_setup("[1,", '{"n_tasks": 3, "group_sizes": {}}', "evaluation 'ev'")
    Traceback (most recent call last):
    ...
    stopwise.errors.LedgerError: evaluation 'ev': the stored policy_json is damaged ...
    """
    policy = _stored("policy_json", where, Policy.model_validate_json, policy_json)
    universe = _stored("universe_json", where, universe_from_json, universe_json)
    return policy, universe
