"""The planned task universe as stored in the ledger (JSON), through :class:`stopwise.records.TaskUniverse`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from stopwise.errors import LedgerError

if TYPE_CHECKING:
    from stopwise.records import TaskUniverse  # type: ignore[attr-defined]

__all__ = ["universe_from_json", "universe_sha256", "universe_to_json"]


def _universe_class() -> Any:
    try:
        from stopwise.records import TaskUniverse  # type: ignore[attr-defined]
    except ImportError as exc:  # pragma: no cover - only before the task universe exists
        raise LedgerError("this stopwise has no TaskUniverse (stopwise.records); cannot use a ledger") from exc
    return TaskUniverse


def universe_to_json(universe: TaskUniverse) -> str:
    """The universe's tasks and groups as JSON (order kept: it is the planned order)."""
    tasks = [str(t) for t in universe.tasks]
    groups = getattr(universe, "groups", None)
    data: dict[str, Any] = {"tasks": tasks, "groups": None if groups is None else [str(g) for g in groups]}
    return json.dumps(data, separators=(",", ":"), ensure_ascii=True)


def universe_from_json(text: str) -> TaskUniverse:
    """Rebuild the universe stored by :func:`universe_to_json`."""
    data = json.loads(text)
    return _universe_class()(data["tasks"], groups=data["groups"])


def universe_sha256(universe: TaskUniverse) -> str:
    """The universe's own sha256 (tasks, groups and order)."""
    return str(universe.sha256())
