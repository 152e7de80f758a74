"""Validated outcome rows held column by column in NumPy arrays: the form the decision path computes on.

:class:`OutcomeColumns` is the one form of outcome rows inside stopwise: what
:func:`stopwise.read_outcomes` and :func:`stopwise.outcome_columns` return and what
:func:`stopwise.decide`, :func:`stopwise.pair_outcomes`, the ledger and the input digest work on; a
pandas frame is the same rows for people, built by :meth:`OutcomeColumns.to_frame`. Keeping the decision path on arrays means reading a file and
deciding never imports pandas (the command line starts in a fraction of a second) and a decision
after the rows are loaded costs a few milliseconds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TEXT_COLUMNS", "OutcomeColumns", "factorize"]

TEXT_COLUMNS: tuple[str, ...] = ("system", "task", "group", "status", "source", "unit", "flags")
"""The text columns of the outcome contract."""
_NUMBER_COLUMNS: tuple[str, ...] = ("outcome", "cost_usd", "elapsed_s")
_HASHED_FACTORIZE = 50_000
"""Above this many values, factorise with pandas' hash table instead of sorting Python objects."""


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes into the sorted distinct values, and those values (object array).

    The same as ``pandas.factorize(values, sort=True)`` for text without missing values: only the
    distinct values are sorted, and a hash table gives every value its code.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.records import factorize
    >>> codes, labels = factorize(np.array(["b", "a", "b"], dtype=object))
    >>> codes.tolist(), labels.tolist()
    ([1, 0, 1], ['a', 'b'])
    """
    array = np.asarray(values, dtype=object)
    if len(array) > _HASHED_FACTORIZE:
        import pandas as pd

        codes, labels = pd.factorize(array, sort=True)
        return codes.astype(np.int64, copy=False), np.asarray(labels, dtype=object)
    items = array.tolist()
    distinct = sorted(dict.fromkeys(items))
    code_of = {value: code for code, value in enumerate(distinct)}
    labels = np.empty(len(distinct), dtype=object)
    labels[:] = distinct
    return np.fromiter(map(code_of.__getitem__, items), dtype=np.int64, count=len(items)), labels


@dataclass(frozen=True, eq=False)
class OutcomeColumns:
    """Validated outcome rows, one NumPy array per column of :data:`stopwise.OUTCOME_COLUMNS`.

    Build it with :func:`stopwise.read_outcomes` or :func:`stopwise.outcome_columns` (each
    validates the contract); the arrays are not checked again when built directly. ``rows["task"]``
    is a column (like a frame's, but a NumPy array), iteration gives the column names, and
    :meth:`to_frame` the rows as a pandas frame.

    Attributes
    ----------
    system, task, group, status, source, unit, flags : numpy.ndarray of object
        Text per row (``""`` where the contract's default applies; ``status`` lower case).
    outcome, cost_usd, elapsed_s : numpy.ndarray of float64
        Numbers per row (NaN where blank).
    attempt : numpy.ndarray of int64
        Attempt index per row.

    Examples
    --------
    >>> import stopwise
    >>> rows = stopwise.outcome_columns([{"system": "A", "task": "t1", "outcome": 1}, {"system": "B", "task": "t1", "outcome": 0}])
    >>> len(rows), rows.system.tolist(), rows["status"].tolist()
    (2, ['A', 'B'], ['final', 'final'])
    """

    system: np.ndarray
    task: np.ndarray
    outcome: np.ndarray
    group: np.ndarray
    attempt: np.ndarray
    cost_usd: np.ndarray
    elapsed_s: np.ndarray
    status: np.ndarray
    source: np.ndarray
    unit: np.ndarray
    flags: np.ndarray
    _codes: dict[str, tuple[np.ndarray, np.ndarray]] = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.system)
        for name in (*TEXT_COLUMNS, *_NUMBER_COLUMNS, "attempt"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"column {name!r} has {len(getattr(self, name))} values, not {n} like 'system'")

    def __len__(self) -> int:
        return len(self.system)

    def __getitem__(self, name: str) -> np.ndarray:
        """The array of one column (``rows["outcome"]``); see :meth:`column`."""
        return self.column(name)

    def __iter__(self) -> Iterator[str]:
        """The column names, as iterating over a frame gives them."""
        return iter(self.columns)

    @property
    def columns(self) -> tuple[str, ...]:
        """The column names, in the contract's order."""
        from stopwise.records._outcomes import OUTCOME_COLUMNS

        return OUTCOME_COLUMNS

    def column(self, name: str) -> np.ndarray:
        """The array of one column.

        Raises
        ------
        KeyError
            ``name`` is no column of the outcome contract.
        """
        if not isinstance(name, str) or name not in self.columns:
            raise KeyError(f"{name!r} is not an outcome column; columns are {', '.join(self.columns)}")
        column: np.ndarray = getattr(self, name)
        return column

    def codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, sorted distinct values)`` of a text column, computed once and kept."""
        if name not in TEXT_COLUMNS:
            raise KeyError(f"{name!r} is not a text column; text columns are {', '.join(TEXT_COLUMNS)}")
        if name not in self._codes:
            self._codes[name] = factorize(getattr(self, name))
        return self._codes[name]

    def take(self, index: np.ndarray) -> OutcomeColumns:
        """The rows selected by a boolean mask or integer positions, in that order."""
        return OutcomeColumns(**{name: getattr(self, name)[index] for name in self.columns})

    def with_outcome(self, outcome: np.ndarray) -> OutcomeColumns:
        """The same rows with another ``outcome`` column, sharing the text columns' codes (:meth:`codes`).

        Pairing the same rows under several outcome values (the prediction-powered pairings) then factorizes
        each text column once, not once per pairing.

        Examples
        --------
        >>> import numpy as np, stopwise
        >>> rows = stopwise.outcome_columns([{"system": "A", "task": "t1", "outcome": 1}])
        >>> rows.with_outcome(np.array([0.0])).outcome.tolist(), rows.outcome.tolist()
        ([0.0], [1.0])
        """
        other = dataclasses.replace(self, outcome=outcome)
        object.__setattr__(other, "_codes", self._codes)  # the text columns are the same arrays
        return other

    @classmethod
    def concat(cls, parts: Sequence[OutcomeColumns]) -> OutcomeColumns:
        """The rows of several parts, one after the other."""
        if len(parts) == 1:
            return parts[0]
        names = parts[0].columns
        return cls(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in names})

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, source: str = "<DataFrame>") -> OutcomeColumns:
        """Rows of a pandas frame: the frame path of :func:`stopwise.outcome_columns` (cheap checks for a canonical frame).

        Raises
        ------
        ValidationError
            The frame breaks the outcome contract, or is no frame.
        """
        from stopwise.records._outcomes import _columns_of_frame, _is_frame, not_a_frame

        if not _is_frame(frame):
            raise not_a_frame(frame, source)
        return _columns_of_frame(frame, source)

    def to_frame(self) -> pd.DataFrame:
        """The rows as a new pandas frame: text columns as ``object``, ``attempt`` int64, the numbers float64."""
        import pandas as pd

        frame = pd.DataFrame({name: getattr(self, name) for name in self.columns})
        for name in TEXT_COLUMNS:
            frame[name] = frame[name].astype(str)
        return frame
