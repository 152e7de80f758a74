"""Several outcome files read as one table, each validated, with rows repeated across files refused."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from stopwise.errors import ComparisonError
from stopwise.records._columns import OutcomeColumns
from stopwise.records._outcomes import read_file_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_outcome_columns", "read_outcome_files"]


def read_outcome_columns(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> OutcomeColumns:
    r"""Read one or several outcome files into NumPy columns without pandas: the decision path's reader.

    The same files, rules and errors as :func:`read_outcome_files`; :func:`stopwise.decide` takes
    the result as it is. A (system, task, attempt) present in two files is an error naming both
    files and rows (a file given twice, or two runs under one name).

    Raises
    ------
    FileFormatError, ValidationError
        A file cannot be read or breaks the contract.
    ComparisonError
        A row repeats a row of an earlier file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from stopwise.records import read_outcome_columns
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.csv").write_text("system,task,outcome\nA,t1,1\nB,t1,0\n")
    >>> _ = (d / "b.csv").write_text("system,task,outcome\nA,t2,1\nB,t2,1\n")
    >>> rows = read_outcome_columns([d / "a.csv", d / "b.csv"])
    >>> len(rows), rows.task.tolist()
    (4, ['t1', 't1', 't2', 't2'])
    """
    listed = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    parts = [read_file_columns(path) for path in listed]
    if len(parts) == 1:
        return parts[0]
    joined = OutcomeColumns.concat(parts)
    file_of = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
    row_of = np.concatenate([np.arange(1, len(p) + 1) for p in parts])
    keys = np.stack([joined.codes("system")[0], joined.codes("task")[0], joined.attempt])
    _, key_of = np.unique(keys, axis=1, return_inverse=True)
    key_of = key_of.reshape(-1)
    first_file = np.full(int(key_of.max()) + 1, len(parts), dtype=np.int64)
    np.minimum.at(first_file, key_of, file_of)
    clash = file_of != first_file[key_of]
    if clash.any():
        i = int(np.flatnonzero(clash)[0])
        earlier = int(np.flatnonzero(key_of == key_of[i])[0])
        raise ComparisonError(
            f"{listed[int(file_of[i])]}, row {int(row_of[i])}: (system, task, attempt) = "
            f"({joined.system[i]}, {joined.task[i]}, {int(joined.attempt[i])}) is already in {listed[int(file_of[earlier])]}, "
            f"row {int(row_of[earlier])}; {int(clash.sum())} row(s) repeat rows of an earlier file (is a file given twice?)"
        )
    return joined


def read_outcome_files(paths: Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    r"""Read several outcome files (each validated by :func:`read_outcomes`) as one pandas frame.

    The rows of :func:`read_outcome_columns` (same rules, same errors: a (system, task, attempt)
    present in two files is refused) as :meth:`OutcomeColumns.to_frame` gives them.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from stopwise.records import read_outcome_files
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.csv").write_text("system,task,outcome\nA,t1,1\nB,t1,0\n")
    >>> len(read_outcome_files([d / "a.csv", d / "a.csv"]))
    Traceback (most recent call last):
    ...
    stopwise.errors.ComparisonError: ...a.csv, row 1: (system, task, attempt) = (A, t1, 0) is already in ...a.csv, row 1; 2 row(s) repeat rows of an earlier file (is a file given twice?)
    """
    return read_outcome_columns(list(paths)).to_frame()
