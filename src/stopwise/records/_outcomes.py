"""Outcome rows: the ledger every level of stopwise reads and writes.

One row per (system, task, attempt). Columns and their rules:

==========  ========  =========================================================
column      required  rule
==========  ========  =========================================================
system      yes       non-empty text
task        yes       non-empty text
outcome     yes       a number in [0, 1]
group       no        text; the coverage stratum ("" when unknown)
attempt     no        an integer >= 0 (default 0)
cost_usd    no        a number >= 0, or blank
elapsed_s   no        a number >= 0, or blank
status      no        one of final, pending, predicted (default final)
source      no        text: where the row came from
unit        no        text: the analysis unit (cluster); blank means the task itself
==========  ========  =========================================================

A row whose status is not ``final`` may leave ``outcome`` blank (a pending run has no
label yet). Two rows with the same (system, task, attempt) and different outcomes are an
error; identical duplicates are kept and counted when a comparison is formed.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from stopwise.errors import FileFormatError, Problem, ValidationError

__all__ = [
    "OUTCOME_COLUMNS",
    "STATUSES",
    "OutcomeFormat",
    "outcome_frame",
    "read_outcomes",
    "validate_outcomes",
    "write_outcomes",
]

OUTCOME_COLUMNS: tuple[str, ...] = (
    "system",
    "task",
    "outcome",
    "group",
    "attempt",
    "cost_usd",
    "elapsed_s",
    "status",
    "source",
    "unit",
)
"""Every column of the outcome contract, in canonical order."""

REQUIRED_COLUMNS: tuple[str, ...] = ("system", "task", "outcome")
STATUSES: tuple[str, ...] = ("final", "pending", "predicted")
"""Allowed values of ``status``: a final label, an unresolved one, or an early prediction."""

OutcomeFormat = Literal["csv", "jsonl", "parquet"]
_TEXT_COLUMNS = ("system", "task", "group", "status", "source", "unit")
_SUFFIXES: dict[str, OutcomeFormat] = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def _format_of(path: Path, fmt: str | None) -> OutcomeFormat:
    if fmt is not None:
        if fmt not in ("csv", "jsonl", "parquet"):
            raise FileFormatError(f"{path}: format must be one of csv, jsonl, parquet; got {fmt!r}")
        return fmt  # type: ignore[return-value]
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _SUFFIXES:
        return _SUFFIXES[suffixes[-1]]
    raise FileFormatError(
        f"{path}: cannot tell the format from the file name; use a .csv, .jsonl or .parquet "
        "suffix (optionally .gz for text formats) or pass the format explicitly"
    )


def _read_raw(path: Path, fmt: OutcomeFormat) -> pd.DataFrame:
    if not path.exists():
        raise FileFormatError(f"{path}: no such file")
    if path.is_dir():
        raise FileFormatError(f"{path}: is a directory, expected an outcome file")
    if path.stat().st_size == 0:
        raise FileFormatError(f"{path}: the file is empty; an outcome file needs a header and at least one row")
    try:
        if fmt == "csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], skipinitialspace=True)
        if fmt == "jsonl":
            return pd.read_json(path, lines=True, dtype=False)
        return pd.read_parquet(path)
    except pd.errors.EmptyDataError as exc:
        raise FileFormatError(f"{path}: the file has no header or rows ({exc})") from exc
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FileFormatError(f"{path}: cannot be read as {fmt}: {first}") from exc


def read_outcomes(path: str | os.PathLike[str], *, format: str | None = None) -> pd.DataFrame:
    """Read and validate an outcome file (CSV, JSONL or Parquet).

    Parameters
    ----------
    path : path-like
        The file. The format follows the suffix (``.csv``, ``.jsonl``, ``.parquet``;
        ``.gz`` allowed after a text suffix) unless ``format`` is given.
    format : {"csv", "jsonl", "parquet"}, optional
        Override the format taken from the suffix.

    Returns
    -------
    pandas.DataFrame
        One row per input row, in input order, with every column of
        :data:`OUTCOME_COLUMNS` in canonical dtypes (missing optional columns filled
        with their defaults).

    Raises
    ------
    FileFormatError
        The file is missing, empty or unreadable.
    ValidationError
        Rows break the contract; every problem names the file, row, field, rule and value.

    Examples
    --------
    >>> import stopwise, pandas as pd, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "o.csv").write_text("system,task,outcome\\nA,t1,1\\nB,t1,0\\n")
    >>> stopwise.read_outcomes(d / "o.csv")[["system", "task", "outcome", "status"]]
      system task  outcome status
    0      A   t1      1.0  final
    1      B   t1      0.0  final
    """
    file = Path(path)
    fmt = _format_of(file, format)
    raw = _read_raw(file, fmt)
    return validate_outcomes(raw, source=str(file), line_offset=2 if fmt == "csv" else None)


def _is_blank(series: pd.Series) -> np.ndarray:
    values = series.to_numpy(dtype=object)
    blank = pd.isna(series).to_numpy()
    text = np.array([isinstance(v, str) and not v.strip() for v in values], dtype=bool) if len(values) else blank
    return blank | text


def _text(series: pd.Series) -> pd.Series:
    out = series.astype(object).where(~pd.isna(series), "")
    return out.map(lambda v: v.strip() if isinstance(v, str) else str(v)).astype(str)


def _numbers(series: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (values, blank mask, not-a-number mask) for a column of numbers."""
    blank = _is_blank(series)
    if series.dtype == bool:
        numeric = series.astype(float)
    else:
        numeric = pd.to_numeric(series.where(~blank, np.nan), errors="coerce")
    values = numeric.to_numpy(dtype=float)
    bad = ~blank & ~np.isfinite(values)
    return values, blank, bad


def validate_outcomes(
    frame: pd.DataFrame,
    *,
    source: str = "<DataFrame>",
    line_offset: int | None = None,
) -> pd.DataFrame:
    """Check outcome rows against the contract and return them in canonical form.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows with at least ``system``, ``task`` and ``outcome``. Extra columns are an error,
        so that a misspelt optional column is not ignored.
    source : str, optional
        Name used in error messages (usually the file path).
    line_offset : int, optional
        When given, messages also name the text line: ``line = row + line_offset - 1``.

    Returns
    -------
    pandas.DataFrame
        A new frame with all :data:`OUTCOME_COLUMNS`, index ``0..n-1``.

    Raises
    ------
    ValidationError
        Listing every broken rule with file, row, field, rule and value.

    Examples
    --------
    >>> import pandas as pd, stopwise
    >>> rows = pd.DataFrame({"system": ["A"], "task": ["t"], "outcome": [1.5]})
    >>> stopwise.validate_outcomes(rows)
    Traceback (most recent call last):
    ...
    stopwise.errors.ValidationError: 1 problem in the input:
      <DataFrame>, row 1, field 'outcome': must be a number in [0, 1]; got 1.5
    """
    if len(frame.columns) == 0 or len(frame) == 0:
        raise ValidationError([Problem(source, None, None, "must hold at least one outcome row", None)])
    frame = frame.reset_index(drop=True)
    columns = [str(c).strip() for c in frame.columns]
    frame.columns = pd.Index(columns)
    problems: list[Problem] = []
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        problems.append(
            Problem(source, None, ", ".join(missing), "required column missing; found columns " + ", ".join(columns))
        )
    unknown = [c for c in columns if c not in OUTCOME_COLUMNS]
    if unknown:
        problems.append(
            Problem(
                source,
                None,
                ", ".join(unknown),
                "unknown column; allowed columns are " + ", ".join(OUTCOME_COLUMNS),
            )
        )
    duplicated = sorted({c for c in columns if columns.count(c) > 1})
    if duplicated:
        problems.append(Problem(source, None, ", ".join(duplicated), "column appears more than once"))
    if problems:
        raise ValidationError(problems)

    n = len(frame)
    rows = np.arange(1, n + 1)

    def problem_rows(mask: np.ndarray, field: str, rule: str, values: np.ndarray) -> None:
        for i in np.flatnonzero(mask):
            line = int(rows[i] + line_offset - 1) if line_offset is not None else None
            value = values[i]
            if isinstance(value, np.generic):
                value = value.item()
            problems.append(Problem(source, int(rows[i]), field, rule, value, line))

    out: dict[str, Any] = {}
    for name in ("system", "task"):
        raw = frame[name]
        blank = _is_blank(raw)
        problem_rows(blank, name, "must be non-empty text", raw.to_numpy(dtype=object))
        out[name] = _text(raw)

    status_raw = frame["status"] if "status" in frame else pd.Series([""] * n)
    status = _text(status_raw).str.lower()
    status = status.where(status != "", "final")
    problem_rows(
        ~status.isin(STATUSES).to_numpy(),
        "status",
        "must be one of " + ", ".join(STATUSES),
        status_raw.to_numpy(dtype=object),
    )
    out["status"] = status

    outcome_raw = frame["outcome"]
    outcome, blank, bad = _numbers(outcome_raw)
    final = (status == "final").to_numpy()
    problem_rows(blank & final, "outcome", "must be a number in [0, 1] (only non-final rows may leave it blank)", outcome_raw.to_numpy(dtype=object))
    problem_rows(bad, "outcome", "must be a number in [0, 1]", outcome_raw.to_numpy(dtype=object))
    with np.errstate(invalid="ignore"):
        outside = np.isfinite(outcome) & ((outcome < 0.0) | (outcome > 1.0))
    problem_rows(outside, "outcome", "must be a number in [0, 1]", outcome_raw.to_numpy(dtype=object))
    out["outcome"] = outcome

    if "attempt" in frame:
        attempt_raw = frame["attempt"]
        attempt, blank, bad = _numbers(attempt_raw)
        attempt = np.where(blank, 0.0, attempt)
        with np.errstate(invalid="ignore"):
            wrong = bad | (np.isfinite(attempt) & ((attempt < 0) | (attempt != np.round(attempt))))
        problem_rows(wrong, "attempt", "must be an integer >= 0", attempt_raw.to_numpy(dtype=object))
        out["attempt"] = np.where(np.isfinite(attempt), attempt, 0).astype(np.int64)
    else:
        out["attempt"] = np.zeros(n, dtype=np.int64)

    for name in ("cost_usd", "elapsed_s"):
        if name in frame:
            raw = frame[name]
            values, blank, bad = _numbers(raw)
            with np.errstate(invalid="ignore"):
                negative = np.isfinite(values) & (values < 0)
            problem_rows(bad | negative, name, "must be a number >= 0 or blank", raw.to_numpy(dtype=object))
            out[name] = values
        else:
            out[name] = np.full(n, np.nan)

    for name in ("group", "source", "unit"):
        out[name] = _text(frame[name]) if name in frame else pd.Series([""] * n)

    result = pd.DataFrame({c: out[c] for c in OUTCOME_COLUMNS})
    for name in _TEXT_COLUMNS:
        result[name] = result[name].astype(str)

    if not problems:
        keys = result[["system", "task", "attempt"]]
        dup = keys.duplicated(keep=False).to_numpy()
        if dup.any():
            sub = result.loc[dup, ["system", "task", "attempt", "outcome", "status"]].copy()
            sub["row"] = rows[dup]
            for (system, task, attempt), grp in sub.groupby(["system", "task", "attempt"], sort=False):
                labels = grp[["outcome", "status"]].astype(str).drop_duplicates()
                if len(labels) > 1:
                    listing = ", ".join(f"row {r}: {o} ({s})" for r, o, s in zip(grp["row"], grp["outcome"], grp["status"], strict=True))
                    problems.append(
                        Problem(
                            source,
                            int(grp["row"].iloc[0]),
                            "outcome",
                            f"(system, task, attempt) = ({system}, {task}, {attempt}) must not repeat with a "
                            f"different outcome or status; {listing}",
                        )
                    )
    if problems:
        raise ValidationError(problems)
    return result


def outcome_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Build validated outcome rows from mappings (e.g. produced by an adapter or a monitor).

    Examples
    --------
    >>> import stopwise
    >>> stopwise.outcome_frame([{"system": "A", "task": "t", "outcome": 1, "status": "predicted"}])["status"][0]
    'predicted'
    """
    frame = pd.DataFrame(list(rows))
    return validate_outcomes(frame, source="<rows>")


def write_outcomes(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
) -> Path:
    """Validate outcome rows and write them atomically (nothing is written on error).

    Parameters
    ----------
    frame : pandas.DataFrame
        Outcome rows; validated with :func:`validate_outcomes` first.
    path : path-like
        Destination; the format follows the suffix unless ``format`` is given.
    format : {"csv", "jsonl", "parquet"}, optional
        Override the format taken from the suffix.

    Returns
    -------
    pathlib.Path
        The written path.
    """
    file = Path(path)
    fmt = _format_of(file, format)
    rows = validate_outcomes(frame, source="<rows to write>")
    file.parent.mkdir(parents=True, exist_ok=True)
    compression = "gzip" if file.suffix.lower() == ".gz" else None
    handle, tmp_name = tempfile.mkstemp(prefix=f".{file.name}.", dir=file.parent)
    os.close(handle)
    tmp = Path(tmp_name)
    try:
        if fmt == "csv":
            rows.to_csv(tmp, index=False, compression=compression)
        elif fmt == "jsonl":
            rows.to_json(tmp, orient="records", lines=True, compression=compression)
        else:
            rows.to_parquet(tmp, index=False)
        tmp.replace(file)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return file
