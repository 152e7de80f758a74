"""The events of one evaluation held column by column, so that a look costs the new events, not all of them.

A live look reads the events stored since the previous look (usually one) and decides on all of
them. Building a DataFrame from the fetched tuples and concatenating it to the previous one costs
milliseconds per look with pandas' string dtype (every concatenation adds a chunk to every text
column, and each construction goes through per-column conversions). :class:`EventColumns` instead
keeps each column as chunks -- numpy arrays for numbers, Arrow arrays for text when pandas' ``str``
dtype is Arrow-backed -- appends the new events' chunk, merges chunks now and then, and builds the
frame from them without copying the text (the frame is cached until new events arrive).

The frame has the columns and dtypes of :func:`stopwise.validate_outcomes` (tested); the sequence
numbers are kept beside it, not as a column, so a decision needs no column drop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from stopwise.records import OUTCOME_COLUMNS

__all__ = ["EVENT_COLUMNS", "EventColumns"]

EVENT_COLUMNS = (
    "system", "task", "attempt", "outcome", "task_group", "cost_usd", "elapsed_s", "status", "source", "unit", "flags",
)
"""The stored columns of an outcome event, in the order they are fetched (after ``seq``)."""

_TEXT = {"system": "system", "task": "task", "group": "task_group", "status": "status", "source": "source", "unit": "unit", "flags": "flags"}
"""Frame column -> stored column, for the text columns."""
_FLOAT = {"outcome": "outcome", "cost_usd": "cost_usd", "elapsed_s": "elapsed_s"}
_MERGE_AFTER = 32
"""Chunks per column before they are merged into one (bounds the per-look cost of many small chunks)."""

_STR_DTYPE = pd.Series([""], dtype=object).astype(str).dtype
"""The dtype :func:`stopwise.validate_outcomes` gives text columns (``str``; Arrow-backed on pandas >= 3)."""


def _arrow_type() -> Any:
    """The Arrow type behind pandas' ``str`` dtype, or None when it is not Arrow-backed."""
    array = pd.Series([""], dtype=object).astype(str).array
    pa_array = getattr(array, "_pa_array", None)
    return None if pa_array is None else pa_array.type


_ARROW = _arrow_type()


class EventColumns:
    """Outcome events of one evaluation, column by column (see the module notes).

    Examples
    --------
    >>> from stopwise.ledger._columns import EventColumns
    >>> columns = EventColumns()
    >>> columns.extend([(1, "A", "t1", 0, 1.0, "g", None, None, "final", "", "", "")])
    >>> columns.extend([(2, "B", "t1", 0, 0.0, "g", 0.5, None, "final", "", "", "error")])
    >>> frame, seqs = columns.frame()
    >>> frame[["system", "task", "outcome", "cost_usd", "flags"]].values.tolist(), seqs.tolist()
    ([['A', 't1', 1.0, nan, ''], ['B', 't1', 0.0, 0.5, 'error']], [1, 2])
    """

    def __init__(self) -> None:
        self.high_water = 0
        """The sequence number of the last event held (0 when none)."""
        self._numbers: dict[str, list[np.ndarray]] = {name: [] for name in ("_seq", "attempt", *_FLOAT)}
        self._texts: dict[str, list[Any]] = {name: [] for name in _TEXT}
        self._frame: tuple[pd.DataFrame, np.ndarray] | None = None

    def __len__(self) -> int:
        return int(sum(len(chunk) for chunk in self._numbers["_seq"]))

    def extend(self, rows: Sequence[Sequence[Any]]) -> None:
        """Add fetched events ``(seq, *EVENT_COLUMNS)``, in increasing ``seq``."""
        if not rows:
            return
        fetched = dict(zip(("_seq", *EVENT_COLUMNS), zip(*rows, strict=True), strict=True))
        n = len(rows)
        self._numbers["_seq"].append(np.fromiter(fetched["_seq"], dtype=np.int64, count=n))
        self._numbers["attempt"].append(np.fromiter(fetched["attempt"], dtype=np.int64, count=n))
        for name, stored in _FLOAT.items():
            self._numbers[name].append(np.array(fetched[stored], dtype=float))  # None -> NaN
        for name, stored in _TEXT.items():
            self._texts[name].append(_text_chunk(fetched[stored]))
        self.high_water = int(self._numbers["_seq"][-1][-1])
        self._frame = None

    def frame(self) -> tuple[pd.DataFrame, np.ndarray]:
        """(outcome rows in the contract's columns and dtypes, their sequence numbers); cached until :meth:`extend`."""
        if self._frame is None:
            if not self._numbers["_seq"]:
                empty = {
                    name: pd.Series([], dtype=_STR_DTYPE if name in _TEXT else (np.int64 if name == "attempt" else float))
                    for name in OUTCOME_COLUMNS
                }
                self._frame = (pd.DataFrame(empty, columns=list(OUTCOME_COLUMNS)), np.empty(0, dtype=np.int64))
                return self._frame
            numbers = {name: _joined(chunks, np.concatenate, np.concatenate) for name, chunks in self._numbers.items()}
            data = {
                name: numbers[name] if name in numbers else _text_array(_joined(self._texts[name], _combine_text, _view_text))
                for name in OUTCOME_COLUMNS
            }
            self._frame = (pd.DataFrame(data, copy=False), numbers["_seq"])  # data is in OUTCOME_COLUMNS order
        return self._frame


def _joined(chunks: list[Any], merge: Any, view: Any) -> Any:
    """The chunks as one column: a view over them, merged into one chunk once there are many (O(n), rarely)."""
    if len(chunks) > _MERGE_AFTER:
        chunks[:] = [merge(chunks)]
    return chunks[0] if len(chunks) == 1 else view(chunks)


def _text_chunk(values: tuple[Any, ...]) -> Any:
    if _ARROW is not None:
        import pyarrow as pa

        return pa.array(["" if v is None else str(v) for v in values], type=_ARROW)
    return np.array(["" if v is None else str(v) for v in values], dtype=object)


def _view_text(chunks: list[Any]) -> Any:
    if _ARROW is not None:
        import pyarrow as pa

        return pa.chunked_array(chunks, type=_ARROW)  # no copy
    return np.concatenate(chunks)


def _combine_text(chunks: list[Any]) -> Any:
    if _ARROW is not None:
        return _view_text(chunks).combine_chunks()
    return np.concatenate(chunks)


def _text_array(values: Any) -> Any:
    """A text column in pandas' ``str`` dtype, without copying Arrow data."""
    if _ARROW is not None:
        import pyarrow as pa

        chunked = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values], type=_ARROW)
        return pd.arrays.ArrowStringArray(chunked, dtype=_STR_DTYPE)
    return pd.Series(values, dtype=object).astype(str)
