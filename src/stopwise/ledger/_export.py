"""Exports of a ledger: outcome rows (CSV, JSONL, Parquet) and the decision history (JSONL), written atomically.

A file is written beside its destination under a temporary name, flushed to disk and moved into place
(:func:`stopwise._atomic.write_file`). Without ``force`` the move is a hard link, which fails when the
destination exists (even if it appeared meanwhile), so nothing stopwise did not write is ever replaced.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from stopwise._atomic import special_file, write_file
from stopwise.errors import FileFormatError, LedgerError
from stopwise.ledger._results import Registration
from stopwise.records import OutcomeColumns, format_of, write_outcomes

if TYPE_CHECKING:
    from stopwise.ledger._store import LedgerStore

__all__ = ["atomic_write", "export_decisions", "export_evaluation", "export_outcomes"]


def export_evaluation(
    store: LedgerStore,
    reg: Registration,
    path: str | os.PathLike[str],
    *,
    decisions_path: str | os.PathLike[str] | None = None,
    force: bool = False,
    format: str | None = None,
    upto_decision: int | None = None,
) -> list[str]:
    """The body of :meth:`stopwise.ledger.Ledger.export`: the evaluation's rows (up to a decision) and its history."""
    events = store.snapshot(reg)
    rows, seqs = events.rows, events.seqs
    if len(rows) == 0:
        raise LedgerError(f"evaluation {reg.name!r} has no outcome events yet; nothing to export")
    first = store.first_final(reg)
    if upto_decision is not None:
        upto = store.link_field(reg, upto_decision, "outcome_seq")
        if upto is None:
            raise LedgerError(
                f"evaluation {reg.name!r} has no decision #{upto_decision} (its chain holds {len(store.link_rows(reg))} "
                "decisions: give one of 1 to that number; stopwise ledger export --decisions lists them)"
            )
        keep = seqs <= int(upto)
        rows, seqs = rows.take(keep), seqs[keep]
    after = None if first is None else seqs > first[1]
    written = [str(export_outcomes(rows, path, force=force, format=format, after_decision=after))]
    if decisions_path is not None:
        links = [link.to_json_dict() for link in store.decisions(reg, upto=upto_decision)]
        written.append(str(export_decisions(links, decisions_path, force=force)))
    return written


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
