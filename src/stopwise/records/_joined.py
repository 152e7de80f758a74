"""Several outcome files read as one table, each validated, with rows repeated across files refused."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from stopwise.errors import ComparisonError
from stopwise.records._outcomes import read_outcomes

__all__ = ["read_outcome_files"]


def read_outcome_files(paths: Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    """Read several outcome files (each validated by :func:`read_outcomes`) as one table.

    A (system, task, attempt) present in two files is an error naming both files and rows (a file
    given twice, or two runs under one name); within one file the contract's rules apply.

    Raises
    ------
    FileFormatError, ValidationError
        A file cannot be read or breaks the contract.
    ComparisonError
        A row repeats a row of an earlier file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from stopwise.records import read_outcome_files
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.csv").write_text("system,task,outcome\\nA,t1,1\\nB,t1,0\\n")
    >>> _ = (d / "b.csv").write_text("system,task,outcome\\nA,t2,1\\nB,t2,1\\n")
    >>> len(read_outcome_files([d / "a.csv", d / "b.csv"]))
    4
    """
    frames = [read_outcomes(path) for path in paths]
    if len(frames) == 1:
        return frames[0]
    keyed = pd.concat(
        [f[["system", "task", "attempt"]].assign(_file=i, _row=np.arange(1, len(f) + 1)) for i, f in enumerate(frames)],
        ignore_index=True,
    )
    first_file = keyed.groupby(["system", "task", "attempt"], sort=False)["_file"].transform("min")
    clash = (keyed["_file"] != first_file).to_numpy()
    if clash.any():
        i = int(np.flatnonzero(clash)[0])
        row = keyed.iloc[i]
        earlier = keyed[
            (keyed["system"] == row["system"]) & (keyed["task"] == row["task"]) & (keyed["attempt"] == row["attempt"])
        ].iloc[0]
        raise ComparisonError(
            f"{paths[int(row['_file'])]}, row {int(row['_row'])}: (system, task, attempt) = "
            f"({row['system']}, {row['task']}, {int(row['attempt'])}) is already in {paths[int(earlier['_file'])]}, "
            f"row {int(earlier['_row'])}; {int(clash.sum())} row(s) repeat rows of an earlier file (is a file given twice?)"
        )
    return pd.concat(frames, ignore_index=True)
