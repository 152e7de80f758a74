"""The events of one evaluation held column by column, so that a look fetches only the new events.

A live look reads the events stored since the previous look (usually one) and decides on all of
them. :class:`EventColumns` keeps one NumPy array per column of the outcome contract (object arrays
for text), appends each look's new events to them, and hands :func:`stopwise.decide` a
:class:`stopwise.OutcomeColumns` built from the joined arrays: no DataFrame is built or
concatenated on the decision path, and the rows are not validated again (every stored event was
validated when it was appended). The sequence numbers are kept beside the columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from stopwise.records import OUTCOME_COLUMNS, OutcomeColumns

__all__ = ["EVENT_COLUMNS", "EventColumns"]

EVENT_COLUMNS = (
    "system", "task", "attempt", "outcome", "task_group", "cost_usd", "elapsed_s", "status", "source", "unit", "flags",
)
"""The stored columns of an outcome event, in the order they are fetched (after ``seq``)."""

_STORED = {"group": "task_group"}
"""Contract column -> stored column, where the names differ."""
_TEXT = ("system", "task", "group", "status", "source", "unit", "flags")
_FLOAT = ("outcome", "cost_usd", "elapsed_s")


class EventColumns:
    """Outcome events of one evaluation, column by column (see the module notes).

    Examples
    --------
    >>> from stopwise.ledger._columns import EventColumns
    >>> events = EventColumns()
    >>> events.extend([(1, "A", "t1", 0, 1.0, "g", None, None, "final", "", "", "")])
    >>> events.extend([(2, "B", "t1", 0, 0.0, "g", 0.5, None, "final", "", "", "error")])
    >>> rows, seqs = events.columns()
    >>> rows.system.tolist(), rows.cost_usd.tolist(), rows.flags.tolist(), seqs.tolist()
    (['A', 'B'], [nan, 0.5], ['', 'error'], [1, 2])
    """

    def __init__(self) -> None:
        self.high_water = 0
        """The sequence number of the last event held (0 when none)."""
        self._arrays: dict[str, np.ndarray] = {name: _empty(name) for name in ("_seq", *OUTCOME_COLUMNS)}
        self._joined: tuple[OutcomeColumns, np.ndarray] | None = None

    def extend(self, rows: Sequence[Sequence[Any]]) -> None:
        """Add fetched events ``(seq, *EVENT_COLUMNS)``, in increasing ``seq``."""
        if not rows:
            return
        fetched = dict(zip(("_seq", *EVENT_COLUMNS), zip(*rows, strict=True), strict=True))
        n = len(rows)
        new = {
            "_seq": np.fromiter(fetched["_seq"], dtype=np.int64, count=n),
            "attempt": np.fromiter(fetched["attempt"], dtype=np.int64, count=n),
        }
        for name in _FLOAT:
            new[name] = np.array(fetched[name], dtype=float)  # None -> NaN
        for name in _TEXT:
            new[name] = np.empty(n, dtype=object)
            new[name][:] = ["" if v is None else v for v in fetched[_STORED.get(name, name)]]
        # new arrays: rows handed out by earlier looks stay as they were
        self._arrays = {name: np.concatenate([held, new[name]]) for name, held in self._arrays.items()}
        self.high_water = int(new["_seq"][-1])
        self._joined = None

    def columns(self) -> tuple[OutcomeColumns, np.ndarray]:
        """(the events as validated outcome columns, their sequence numbers); kept until :meth:`extend`."""
        if self._joined is None:
            arrays = dict(self._arrays)
            seqs = arrays.pop("_seq")
            self._joined = (OutcomeColumns(**arrays), seqs)
        return self._joined


def _empty(name: str) -> np.ndarray:
    """A column with no events, of the column's dtype."""
    return np.empty(0, dtype=np.int64 if name in ("_seq", "attempt") else float if name in _FLOAT else object)
