"""The outcome-row entry points of stopwise 0.0, kept for one release: each warns and returns what it used to.

Use :func:`stopwise.read_outcomes` (one file or several; returns :class:`~stopwise.records.OutcomeColumns`),
:func:`stopwise.outcome_columns` (mappings or a frame, validated) and :meth:`OutcomeColumns.to_frame`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from stopwise.records._columns import OutcomeColumns
from stopwise.records._outcomes import (
    _columns_of_frame,
    _is_frame,
    _validate_frame,
    not_a_frame,
    outcome_columns,
    read_outcomes,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "columns_of_frame",
    "outcome_frame",
    "read_file_columns",
    "read_outcome_columns",
    "read_outcome_files",
    "validate_outcomes",
]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"stopwise.records.{old} is deprecated and will be removed in 0.2; use {new}", DeprecationWarning, stacklevel=3)


def read_outcome_columns(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> OutcomeColumns:
    """Deprecated: :func:`stopwise.read_outcomes` (which now returns these columns)."""
    _deprecated("read_outcome_columns", "stopwise.read_outcomes")
    return read_outcomes(paths)


def read_file_columns(path: str | os.PathLike[str], *, format: str | None = None) -> OutcomeColumns:
    """Deprecated: :func:`stopwise.read_outcomes`."""
    _deprecated("read_file_columns", "stopwise.read_outcomes")
    return read_outcomes(path, format=format)


def read_outcome_files(paths: Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    """Deprecated: ``stopwise.read_outcomes(paths).to_frame()``."""
    _deprecated("read_outcome_files", "stopwise.read_outcomes(paths).to_frame()")
    return read_outcomes(list(paths)).to_frame()


def outcome_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Deprecated: ``stopwise.outcome_columns(rows).to_frame()``."""
    _deprecated("outcome_frame", "stopwise.outcome_columns(rows).to_frame()")
    return outcome_columns(rows, source="<rows>").to_frame()


def validate_outcomes(frame: pd.DataFrame, *, source: str = "<DataFrame>", line_offset: int | None = None) -> pd.DataFrame:
    """Deprecated: ``stopwise.outcome_columns(frame).to_frame()`` (every cell validated, as before)."""
    _deprecated("validate_outcomes", "stopwise.outcome_columns(frame).to_frame()")
    lines = None if line_offset is None else np.arange(len(frame), dtype=np.int64) + line_offset
    return _validate_frame(frame, source, lines).to_frame()


def columns_of_frame(frame: pd.DataFrame, *, source: str = "<DataFrame>") -> OutcomeColumns:
    """Deprecated: :func:`stopwise.outcome_columns`."""
    _deprecated("columns_of_frame", "stopwise.outcome_columns")
    if not _is_frame(frame):
        raise not_a_frame(frame, source)
    return _columns_of_frame(frame, source)
