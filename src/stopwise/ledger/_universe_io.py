"""The planned task universe as stored in the ledger: its canonical JSON, read back exactly."""

from __future__ import annotations

import json

from stopwise.errors import LedgerError
from stopwise.records import TaskUniverse

__all__ = ["TaskUniverse", "universe_from_json", "universe_sha256", "universe_to_json"]


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
