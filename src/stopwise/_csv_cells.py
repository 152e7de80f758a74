"""Text cells of the CSV files stopwise writes, safe to open in a spreadsheet, and read back unchanged.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a
formula (CSV injection), and a system, task or group name comes from someone else's log: an agent named
``=HYPERLINK(...)`` must not become a formula in ``ingest -o rows.csv``. Following OWASP's advice, such a
text cell is written with a leading apostrophe (``'=HYPERLINK(...)``), which spreadsheets show as text.

Round trip. A cell the writer left alone must not lose a character when read back, so the apostrophe is
itself escaped when it could be mistaken for ours: the writer prefixes ``'`` to a text that starts with
one of those characters, or with an apostrophe followed by one of them or by another apostrophe; the
reader (:func:`stopwise.records._tables.read_table`, every CSV stopwise reads) removes one leading ``'``
exactly when the cell starts with ``'`` followed by one of them or by ``'``. Every text ``x`` then satisfies
``unprotect(protect(x)) == x``, so ``read_outcomes(write_outcomes(rows))`` gives the rows back. A CSV written
by hand whose cell starts with ``'=`` (or ``''``, ``'-``, ...) is read without that first apostrophe; any
other cell is read as written. Numbers, and JSON lines and Parquet files, are never changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FORMULA_START", "protect", "protect_frame", "unprotect", "unprotect_cells"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""
_ESCAPED_NEXT = (*FORMULA_START, "'")


def protect(text: str) -> str:
    r"""``text`` as a CSV cell a spreadsheet shows as text (a leading ``'`` where needed; see the module notes).

    Examples
    --------
    >>> from stopwise._csv_cells import protect, unprotect
    >>> protect("=cmd|' /C calc'!A0"), protect("gpt-4o"), protect("'=x")
    ("'=cmd|' /C calc'!A0", 'gpt-4o', "''=x")
    >>> all(unprotect(protect(t)) == t for t in ["=1+2", "-", "'", "''", "'a", "@x", "\tx", "plain", ""])
    True
    """
    if text.startswith(FORMULA_START) or (text.startswith("'") and text[1:2] in _ESCAPED_NEXT and text[1:2] != ""):
        return "'" + text
    return text


def unprotect(text: str) -> str:
    """The text a cell written by :func:`protect` holds (one leading ``'`` removed before a formula start or ``'``)."""
    if text.startswith("'") and text[1:2] != "" and text[1:2] in _ESCAPED_NEXT:
        return text[1:]
    return text


def unprotect_cells(cells: np.ndarray) -> np.ndarray:
    """An object array of CSV text cells with :func:`unprotect` applied (the array itself when no cell needs it)."""
    hit = [i for i, value in enumerate(cells) if isinstance(value, str) and value[:1] == "'"]
    if not hit:
        return cells
    out = cells.copy()
    for i in hit:
        out[i] = unprotect(out[i])
    return out


def protect_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with :func:`protect` applied to every text cell (numbers, booleans and blanks unchanged), for ``to_csv``."""
    import pandas as pd

    changed = {}
    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind in "biufcmM":
            continue
        codes, distinct = pd.factorize(column, use_na_sentinel=True)
        safe = np.array([protect(v) if isinstance(v, str) else v for v in distinct], dtype=object)
        if any(a is not b for a, b in zip(safe, distinct, strict=True)):
            values = np.where(codes >= 0, safe[np.maximum(codes, 0)] if len(safe) else None, column.to_numpy(dtype=object))
            changed[name] = pd.Series(values, index=frame.index, dtype=object)
    return frame.assign(**changed) if changed else frame
