"""Atomic exports of a ledger: outcome rows (CSV, JSONL, Parquet) and the decision history (JSONL).

A file is written beside its destination under a temporary name, flushed to disk and moved into place
(:func:`stopwise._atomic.write_file`). Without ``force`` the move is a hard link, which fails when the
destination exists (even if it appeared meanwhile), so nothing stopwise did not write is ever replaced.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stopwise._atomic import special_file, write_file
from stopwise.errors import FileFormatError
from stopwise.records import OutcomeColumns, format_of, write_outcomes

__all__ = ["atomic_write", "export_decisions", "export_outcomes"]


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], object], *, force: bool = False) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then move it into place.

    Raises
    ------
    FileFormatError
        ``path`` exists and ``force`` is false, is a directory, a device, a FIFO or a socket, or its folder is missing.
    OutputExistsError
        ``path`` appeared while the file was being written, and ``force`` is false.
    """
    file = Path(path)
    what = special_file(file)
    if what is not None:
        raise FileFormatError(f"{file}: is {what}, not a regular file; it is never replaced (force or not)")
    if file.is_dir():
        raise FileFormatError(f"{file}: is a directory; give a file name")
    if not file.parent.is_dir():
        raise FileFormatError(f"{file}: folder {file.parent} does not exist")
    if file.exists() and not force:
        raise FileFormatError(f"{file}: exists; pass --force (force=True) to overwrite it")
    return write_file(file, write, replace=force, durable=True)


def export_outcomes(
    rows: OutcomeColumns,
    path: str | os.PathLike[str],
    *,
    force: bool = False,
    format: str | None = None,
    after_decision: np.ndarray | None = None,
) -> Path:
    """Write outcome rows atomically in the format of the suffix (or ``format``); the stored rows are not validated again.

    ``after_decision``: one boolean per row, written as the column ``after_decision`` (rows stored after the
    evaluation's first final decision); readers of outcome rows drop that column.
    """
    fmt = format_of(Path(path), format)
    extra = None if after_decision is None else {"after_decision": np.asarray(after_decision, dtype=bool)}
    return atomic_write(path, lambda tmp: write_outcomes(rows, tmp, format=fmt, extra_columns=extra), force=force)


def export_decisions(links: Sequence[dict[str, Any]], path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write the decision history as JSON lines (one chain link per line), atomically."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as handle:
            for link in links:
                handle.write(json.dumps(link, sort_keys=True, ensure_ascii=False) + "\n")

    return atomic_write(path, write, force=force)
