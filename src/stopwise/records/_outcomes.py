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
flags       no        short tokens without spaces (``error``, ``empty_patch``, ``limit:<type>``,
                      ``unscored``): a list in JSONL and Parquet, ``;``-joined text in CSV
==========  ========  =========================================================

A row whose status is not ``final`` may leave ``outcome`` blank (a pending run has no
label yet). Two rows with the same (system, task, attempt) that differ in any column but
``source`` (where the row came from) are an error; duplicates are kept and counted when a
comparison is formed.

``flags`` is held in a frame in canonical form: the distinct tokens, sorted, joined by ``;``
(``""`` for none), so every format reads back the same frame. A policy's ``[flags]`` section
excludes or counts rows by flag (:class:`stopwise.records.FlagPolicy`). Files written before the
column existed still read (the column defaults to no flags).

CSV files are read cell by cell with the header as the only source of column names: a row with
more or fewer cells than the header is refused (naming the row), never shifted into other
columns or taken as an index; a byte-order mark before the header is dropped. Compressed
(``.gz``) files are bounded by ``STOPWISE_MAX_DECOMPRESSED_BYTES``, JSONL lines by
``STOPWISE_MAX_LINE_BYTES`` (docs/limits.md).
"""

from __future__ import annotations

import csv
import io
import math
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from stopwise._limits import gunzip_bytes, json_loads, read_lines
from stopwise.errors import FileFormatError, LimitError, Problem, ValidationError, shown
from stopwise.records._columns import TEXT_COLUMNS, OutcomeColumns
from stopwise.records._vocabulary import STATUSES

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FLAG_SEPARATOR",
    "OUTCOME_COLUMNS",
    "STATUSES",
    "OutcomeFormat",
    "flag_mask",
    "outcome_columns",
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
    "flags",
)
"""Every column of the outcome contract, in canonical order."""

REQUIRED_COLUMNS: tuple[str, ...] = ("system", "task", "outcome")
OutcomeFormat = Literal["csv", "jsonl", "parquet"]
OUTCOME_FORMATS: tuple[OutcomeFormat, ...] = get_args(OutcomeFormat)
FLAG_SEPARATOR = ";"
"""Joins the flags of a row in a CSV cell and in a frame: ``"error;limit:token"``."""
_SUFFIXES: dict[str, OutcomeFormat] = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def format_of(path: Path, fmt: str | None) -> OutcomeFormat:
    if fmt is not None:
        for name in OUTCOME_FORMATS:
            if fmt == name:
                return name
        raise FileFormatError(f"{path}: format must be one of {', '.join(OUTCOME_FORMATS)}; got {fmt!r}")
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _SUFFIXES:
        return _SUFFIXES[suffixes[-1]]
    raise FileFormatError(
        f"{path}: cannot tell the format from the file name; use a .csv, .jsonl or .parquet "
        "suffix (optionally .gz for text formats) or pass the format explicitly"
    )


_MAX_ATTEMPT = 2**53
"""Attempts above this are not exactly representable as numbers; they are refused, not wrapped."""


class _Lines:
    """Text line of each data row of a CSV file, worked out (by the exact reader) when first needed."""

    def __init__(self, path: Path, data: bytes | None) -> None:
        self.path, self.data = path, data
        self._lines: np.ndarray | None = None

    def __getitem__(self, i: int) -> int:
        if self._lines is None:
            self._lines = _read_csv_exact(self.path, self.data)[1]
        return int(self._lines[i])


_Raw = dict[str, np.ndarray]
"""Cells of a file or frame by column name (file order), before validation."""


def _read_csv(path: Path, gz: bool) -> tuple[_Raw, np.ndarray | _Lines]:
    """Cells of a CSV file as text; pyarrow's reader when every row is well formed, else the exact one."""
    data = gunzip_bytes(path) if gz else None
    fast = _read_csv_arrow(path, data)
    if fast is not None:
        return fast, _Lines(path, data)
    return _read_csv_exact(path, data)


def _read_csv_arrow(path: Path, data: bytes | None) -> _Raw | None:
    """Fast path: every cell as text; ``None`` when anything is off (the exact reader then says what)."""
    import pyarrow as pa
    import pyarrow.csv as pv

    try:
        with (io.StringIO(data[:1 << 20].decode("utf-8-sig", "replace"), newline="") if data is not None
              else open(path, encoding="utf-8-sig", errors="replace", newline="")) as handle:
            header = next(csv.reader(handle), None)
    except csv.Error:
        return None
    names = [c.strip() for c in header or []]
    if not names or not all(names) or len(set(names)) != len(names) or len(set(header or [])) != len(names):
        return None
    invalid: list[object] = []

    def skip(row: object) -> str:
        invalid.append(row)
        return "skip"

    # pyarrow decodes an invalid row's text before calling the handler; on bytes that are not UTF-8 that
    # fails inside pyarrow, which reports it as an "Exception ignored" traceback on stderr. Catch it here:
    # such a file goes to the exact reader, which says where the text stops being UTF-8.
    unraisable: list[object] = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        table = pv.read_csv(
            pa.BufferReader(data) if data is not None else str(path),
            read_options=pv.ReadOptions(use_threads=False),
            parse_options=pv.ParseOptions(newlines_in_values=True, invalid_row_handler=skip),
            convert_options=pv.ConvertOptions(
                column_types=dict.fromkeys(header or [], pa.string()),
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowException, OSError):
        return None
    finally:
        sys.unraisablehook = hook
    if invalid or unraisable or table.column_names != list(header or []):
        return None
    # to_pylist, not to_numpy: pyarrow converts text to NumPy through pandas, and the decision path does not load pandas
    return {name: _objects(table.column(i).to_pylist()) for i, name in enumerate(names)}


def _read_csv_exact(path: Path, data: bytes | None) -> tuple[_Raw, np.ndarray]:
    """Cells of a CSV file as text, with the text line of each data row; refuses ragged rows."""
    source = str(path)
    handle: io.TextIOBase
    if data is not None:
        handle = io.StringIO(data.decode("utf-8-sig"), newline="")
    else:
        handle = open(path, encoding="utf-8-sig", newline="")
    rows: list[list[str]] = []
    lines: list[int] = []
    with handle:
        reader = csv.reader(handle, skipinitialspace=True)
        try:
            header = next(reader, None)
            for cells in reader:
                if not cells or (len(cells) == 1 and not cells[0].strip()):
                    continue  # a blank line
                rows.append(cells)
                lines.append(reader.line_num)
        except csv.Error as exc:
            raise FileFormatError(f"{source}, line {reader.line_num}: cannot be read as CSV ({exc})") from None
    if header is None or not any(c.strip() for c in header):
        raise FileFormatError(f"{source}: the file has no header; an outcome file needs a header and rows")
    names = [c.strip() for c in header]
    problems = [
        Problem(source, None, f"column {i + 1}", "header cell must not be empty (a trailing comma?)")
        for i, name in enumerate(names)
        if not name
    ]
    duplicated = sorted({c for c in names if c and names.count(c) > 1})
    if duplicated:
        problems.append(Problem(source, None, ", ".join(duplicated), "column appears more than once in the header"))
    counts = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    width = len(names)
    for i in np.flatnonzero(counts != width):
        problems.append(
            Problem(
                source,
                int(i) + 1,
                None,
                f"must have {width} cells like the header ({', '.join(names)}); has {int(counts[i])}",
                line=lines[i],
            )
        )
    if problems:
        raise ValidationError(problems)
    columns = list(zip(*rows, strict=True)) if rows else [()] * width
    raw = {name: _objects(col) for name, col in zip(names, columns, strict=True)}
    return raw, np.asarray(lines, dtype=np.int64)


def _objects(values: Iterable[Any]) -> np.ndarray:
    """A 1-D object array of the values (lists and arrays stay single cells)."""
    items = list(values)
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


def _read_jsonl(path: Path, gz: bool) -> tuple[_Raw, np.ndarray | None]:
    """JSON objects, one a line (blank lines skipped), with the line of each row."""
    source = str(path)
    stream: IO[bytes] = io.BytesIO(gunzip_bytes(path)) if gz else open(path, "rb")
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    problems: list[Problem] = []
    with stream:
        for number, raw in read_lines(stream, source):
            if not raw.strip():
                continue
            row = len(records) + len(problems) + 1
            try:
                value = json_loads(raw, f"{source}, line {number}")
            except (ValueError, UnicodeDecodeError) as exc:
                if isinstance(exc, LimitError):
                    raise
                problems.append(Problem(source, row, None, f"must be one JSON object ({exc})", line=number if number != row else None))
                continue
            if not isinstance(value, dict):
                problems.append(Problem(source, row, None, "must be one JSON object", type(value).__name__, number if number != row else None))
                continue
            nested = [k for k, v in value.items() if isinstance(v, dict) or (isinstance(v, list) and k != "flags")]
            if nested:
                problems.append(Problem(source, row, str(nested[0]), "must be a single value", value[nested[0]], number if number != row else None))
                continue
            records.append(value)
            lines.append(number)
    if problems:
        raise ValidationError(problems)
    if not records:
        raise FileFormatError(f"{source}: the file has no rows; an outcome file needs at least one JSON object")
    names = list(dict.fromkeys(key for record in records for key in record))
    cells = {str(name): _objects(record.get(name) for record in records) for name in names}
    numbers = np.asarray(lines, dtype=np.int64)
    same = bool((numbers == np.arange(1, len(numbers) + 1)).all())
    return cells, None if same else numbers  # a line only when it differs


def _read_parquet(path: Path) -> _Raw:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return {str(name): _array(table.column(i).to_numpy(zero_copy_only=False)) for i, name in enumerate(table.column_names)}


def _array(values: np.ndarray) -> np.ndarray:
    """Numbers and booleans stay typed; anything else becomes an object array."""
    array = np.asarray(values)
    return array if array.dtype.kind in "biuf" and array.ndim == 1 else _objects(values)


def _read_raw(path: Path, fmt: OutcomeFormat) -> tuple[_Raw, np.ndarray | _Lines | None]:
    if not path.exists():
        raise FileFormatError(f"{path}: no such file")
    if path.is_dir():
        raise FileFormatError(f"{path}: is a directory, expected an outcome file")
    if path.stat().st_size == 0:
        raise FileFormatError(f"{path}: the file is empty; an outcome file needs a header and at least one row")
    gz = path.suffix.lower() == ".gz"
    try:
        if fmt == "csv":
            return _read_csv(path, gz)
        if fmt == "jsonl":
            return _read_jsonl(path, gz)
        return _read_parquet(path), None
    except UnicodeDecodeError as exc:
        raise FileFormatError(f"{path}: is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except (ValueError, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FileFormatError(f"{path}: cannot be read as {fmt}: {first[:300]}") from exc


def read_file_columns(path: str | os.PathLike[str], *, format: str | None = None) -> OutcomeColumns:
    """Read and validate one outcome file into NumPy columns (see :func:`stopwise.read_outcome_columns`)."""
    file = Path(path)
    fmt = format_of(file, format)
    raw, lines = _read_raw(file, fmt)
    return _validate(raw, str(file), lines)


def read_outcomes(path: str | os.PathLike[str], *, format: str | None = None) -> pd.DataFrame:
    r"""Read and validate an outcome file (CSV, JSONL or Parquet).

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
    >>> _ = (d / "o.csv").write_text("system,task,outcome\nA,t1,1\nB,t1,0\n")
    >>> stopwise.read_outcomes(d / "o.csv")[["system", "task", "outcome", "status"]]
      system task  outcome status
    0      A   t1      1.0  final
    1      B   t1      0.0  final
    """
    return read_file_columns(path, format=format).to_frame()


_NA_TYPES = frozenset({"NAType", "NaTType"})


def _missing(values: np.ndarray) -> np.ndarray:
    """None, NaN and pandas' NA markers."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind != "O":
        return np.zeros(len(values), dtype=bool)
    try:
        return np.asarray((values == None) | (values != values), dtype=bool)  # noqa: E711 (elementwise)
    except TypeError:  # pandas' NA refuses to be compared
        return np.fromiter(
            (v is None or (isinstance(v, float) and v != v) or type(v).__name__ in _NA_TYPES for v in values.tolist()),
            dtype=bool,
            count=len(values),
        )


def _all_text(items: list[Any]) -> bool:
    return set(map(type, items)) <= {str}


def _text(values: np.ndarray) -> np.ndarray:
    """Each cell as stripped text; missing cells as ``""``."""
    items = values.tolist()
    if values.dtype.kind == "O" and _all_text(items):
        return _objects(map(str.strip, items))
    missing = _missing(values)
    return _objects(
        "" if gone else (v.strip() if type(v) is str else str(v))
        for v, gone in zip(items, missing.tolist(), strict=True)
    )


def _is_blank(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind != "O":
        return _missing(values)
    items = values.tolist()
    if _all_text(items):
        return _objects(map(str.strip, items)) == ""
    return _missing(values) | np.fromiter((type(v) is str and not v.strip() for v in items), dtype=bool, count=len(items))


def _number(value: Any) -> float:
    if isinstance(value, str):
        text = value.strip()
        if not text.isascii() or "_" in text:  # Python's float() takes '1_0' and non-ASCII digits; the contract does not
            return math.nan
        try:
            return float(text)
        except ValueError:
            return math.nan
    if isinstance(value, bool | int | float | np.number):
        try:
            return float(value)
        except OverflowError:
            return math.inf
    return math.nan


def _numbers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (values, blank mask, not-a-number mask) for a column of numbers."""
    blank = _is_blank(values)
    if values.dtype.kind in "biuf":
        numbers = values.astype(float)
    else:
        numbers = np.full(len(values), np.nan)
        filled = values[~blank]
        items = filled.tolist()
        joined = "".join(items) if _all_text(items) else None
        try:
            if joined is None or not joined.isascii() or "_" in joined:
                raise ValueError("not plain ASCII text")
            numbers[~blank] = filled.astype(float)  # float() of each text at C speed
        except (ValueError, TypeError, OverflowError):
            numbers[~blank] = np.fromiter(map(_number, items), dtype=float, count=len(items))
    numbers[blank] = np.nan
    bad = ~blank & ~np.isfinite(numbers)
    return numbers + 0.0, blank, bad  # + 0.0: "-0" reads as 0.0


def _raw_of_frame(frame: pd.DataFrame) -> _Raw:
    names = [str(c).strip() for c in frame.columns]
    raw: _Raw = {}
    for position, name in enumerate(names):
        if name in raw:
            raise ValidationError([Problem("<DataFrame>", None, name, "column appears more than once")])
        column = frame.iloc[:, position]
        raw[name] = column.to_numpy() if column.dtype.kind in "biuf" else column.to_numpy(dtype=object)
    return raw


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
    lines = None if line_offset is None else np.arange(len(frame), dtype=np.int64) + line_offset
    return _validate_frame(frame, source, lines).to_frame()


def _validate_frame(frame: pd.DataFrame, source: str, lines: np.ndarray | None) -> OutcomeColumns:
    names = [str(c).strip() for c in frame.columns]
    duplicated = sorted({c for c in names if names.count(c) > 1})
    if duplicated:
        raise ValidationError([Problem(source, None, ", ".join(duplicated), "column appears more than once")])
    return _validate(_raw_of_frame(frame), source, lines)


def _canonical_frame(frame: pd.DataFrame) -> bool:
    """Whether a frame looks like validated outcome rows and passes the contract's cheap array checks."""
    import pandas as pd

    if list(frame.columns) != list(OUTCOME_COLUMNS) or len(frame) == 0:
        return False
    if any(frame[c].dtype.kind not in "OT" and not isinstance(frame[c].dtype, pd.StringDtype) for c in TEXT_COLUMNS):
        return False
    if frame["outcome"].dtype != np.float64 or frame["attempt"].dtype != np.int64:
        return False
    if frame["cost_usd"].dtype != np.float64 or frame["elapsed_s"].dtype != np.float64:
        return False
    return not frame[list(TEXT_COLUMNS)].isna().any().any()


def columns_of_frame(frame: pd.DataFrame, *, source: str = "<DataFrame>") -> OutcomeColumns:
    """The rows of a frame as columns: validated frames (the reader's dtypes) pass cheap checks, others are validated.

    Raises
    ------
    ValidationError
        The frame breaks the outcome contract.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ValidationError(
            [Problem(source, None, None, f"outcome rows must be a pandas DataFrame (see stopwise.read_outcomes); got {type(frame).__name__}")]
        )
    if _canonical_frame(frame):
        columns = OutcomeColumns(
            **{name: frame[name].to_numpy(dtype=object) if name in TEXT_COLUMNS else frame[name].to_numpy() for name in OUTCOME_COLUMNS}
        )
        if _cheap_checks(columns):
            return columns
    return _validate_frame(frame, source, None)


def _cheap_checks(rows: OutcomeColumns) -> bool:
    """The contract's array checks on typed columns (strings stripped and flags canonical are taken as given)."""
    outcome = rows.outcome
    final = rows.status == "final"
    with np.errstate(invalid="ignore"):
        if (final & ~np.isfinite(outcome)).any() or ((outcome < 0) | (outcome > 1)).any():
            return False
        if (rows.cost_usd < 0).any() or (rows.elapsed_s < 0).any():
            return False
    if (rows.attempt < 0).any():
        return False
    statuses = set(rows.codes("status")[1].tolist())
    if not statuses <= set(STATUSES):
        return False
    return "" not in set(rows.codes("system")[1].tolist()) and "" not in set(rows.codes("task")[1].tolist())


def _validate(raw: _Raw, source: str, lines: np.ndarray | _Lines | None) -> OutcomeColumns:
    n = len(next(iter(raw.values()))) if raw else 0
    if not raw or n == 0:
        raise ValidationError([Problem(source, None, None, "must hold at least one outcome row", None)])
    raw = {str(name).strip(): values for name, values in raw.items()}
    columns = list(raw)
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
    if problems:
        raise ValidationError(problems)

    def problem_rows(mask: np.ndarray, field: str, rule: str, values: np.ndarray) -> None:
        for i in np.flatnonzero(mask):
            line = int(lines[int(i)]) if lines is not None else None
            value = values[i]
            if isinstance(value, np.generic):
                value = value.item()
            problems.append(Problem(source, int(i) + 1, field, rule, value, line))

    out: dict[str, np.ndarray] = {}
    for name in ("system", "task"):
        values = raw[name]
        problem_rows(_is_blank(values), name, "must be non-empty text", values)
        out[name] = _text(values)

    status_raw = raw.get("status")
    if status_raw is None:
        status = np.full(n, "final", dtype=object)
    else:
        status = _objects(s.lower() or "final" for s in _text(status_raw).tolist())
        known = set(STATUSES)
        problem_rows(
            np.fromiter((s not in known for s in status.tolist()), dtype=bool, count=n),
            "status",
            "must be one of " + ", ".join(STATUSES),
            status_raw,
        )
    out["status"] = status

    outcome_raw = raw["outcome"]
    outcome, blank, bad = _numbers(outcome_raw)
    final = status == "final"
    problem_rows(blank & final, "outcome", "must be a number in [0, 1] (only non-final rows may leave it blank)", outcome_raw)
    problem_rows(bad, "outcome", "must be a number in [0, 1]", outcome_raw)
    with np.errstate(invalid="ignore"):
        outside = np.isfinite(outcome) & ((outcome < 0.0) | (outcome > 1.0))
    problem_rows(outside, "outcome", "must be a number in [0, 1]", outcome_raw)
    out["outcome"] = outcome

    if "attempt" in raw:
        attempt_raw = raw["attempt"]
        attempt, blank, bad = _numbers(attempt_raw)
        attempt = np.where(blank, 0.0, attempt)
        with np.errstate(invalid="ignore"):
            wrong = bad | (np.isfinite(attempt) & ((attempt < 0) | (attempt != np.round(attempt))))
            wrong |= np.isfinite(attempt) & (attempt > _MAX_ATTEMPT)
        problem_rows(wrong, "attempt", f"must be an integer from 0 to {_MAX_ATTEMPT}", attempt_raw)
        usable = np.isfinite(attempt) & (attempt >= 0) & (attempt <= _MAX_ATTEMPT)
        out["attempt"] = np.where(usable, attempt, 0).astype(np.int64)
    else:
        out["attempt"] = np.zeros(n, dtype=np.int64)

    for name in ("cost_usd", "elapsed_s"):
        if name in raw:
            values, blank, bad = _numbers(raw[name])
            with np.errstate(invalid="ignore"):
                negative = np.isfinite(values) & (values < 0)
            problem_rows(bad | negative, name, "must be a number >= 0 or blank", raw[name])
            out[name] = values
        else:
            out[name] = np.full(n, np.nan)

    for name in ("group", "source", "unit"):
        out[name] = _text(raw[name]) if name in raw else np.full(n, "", dtype=object)
    if "flags" in raw:
        out["flags"], bad_flags = _flags(raw["flags"])
        problem_rows(bad_flags, "flags", "must be short tokens without spaces (a list, or text joined by ';')", raw["flags"])
    else:
        out["flags"] = np.full(n, "", dtype=object)

    result = OutcomeColumns(**{c: out[c] for c in OUTCOME_COLUMNS})
    if not problems:
        problems.extend(_conflicting_duplicates(result, source, lines))
    if problems:
        raise ValidationError(problems)
    return result


def _canonical_flags(text: str) -> tuple[str, bool]:
    """(canonical ``;``-joined tokens, whether every token is well formed) of one joined value."""
    tokens = {t.strip() for t in text.split(FLAG_SEPARATOR)} - {""}
    return FLAG_SEPARATOR.join(sorted(tokens)), all(t.isprintable() and not any(c.isspace() for c in t) for t in tokens)


def _flags(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Canonical flags of a column (text or lists) and the mask of malformed values.

    Lists (JSONL, Parquet) are joined first; then each distinct value is canonicalised once.
    """
    listed = np.fromiter((isinstance(v, list | tuple | np.ndarray) for v in values), dtype=bool, count=len(values))
    plain = values.copy() if values.dtype.kind == "O" else _objects(values.tolist())
    plain[listed] = None
    joined = _text(plain)
    bad = np.zeros(len(values), dtype=bool)
    for i in np.flatnonzero(listed):  # only rows given as lists
        items = list(values[i])
        bad[i] = not all(isinstance(t, str) and FLAG_SEPARATOR not in t for t in items)
        joined[i] = FLAG_SEPARATOR.join(str(t) for t in items)
    canonical: dict[str, tuple[str, bool]] = {}
    text = _objects(canonical.setdefault(j, _canonical_flags(j))[0] for j in joined.tolist())
    ok = np.fromiter((canonical[j][1] for j in joined.tolist()), dtype=bool, count=len(values))
    return text, bad | ~ok


def flag_mask(flags: Any, flag: str) -> np.ndarray:
    """Rows whose canonical ``flags`` hold ``flag`` (vectorised over the distinct values).

    Examples
    --------
    >>> from stopwise.records import flag_mask
    >>> flag_mask(["error;limit:token", "", "errors"], "error").tolist()
    [True, False, False]
    """
    values = np.asarray(flags, dtype=object)
    if len(values) == 0:
        return np.zeros(0, dtype=bool)
    from stopwise.records._columns import factorize

    codes, labels = factorize(values.astype(str).astype(object))
    wanted = FLAG_SEPARATOR + flag + FLAG_SEPARATOR
    holds = np.fromiter((wanted in f"{FLAG_SEPARATOR}{label}{FLAG_SEPARATOR}" for label in labels.tolist()), dtype=bool, count=len(labels))
    return holds[codes]


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _cell_text(values: np.ndarray) -> list[str]:
    """Cells as a frame shows them after ``fillna("")``: numbers as ``str``, NaN as ``""``."""
    if values.dtype.kind == "f":
        return ["" if v != v else str(v) for v in values.tolist()]
    return [str(v) for v in values.tolist()]


def _conflicting_duplicates(result: OutcomeColumns, source: str, lines: np.ndarray | _Lines | None) -> list[Problem]:
    """Rows with one (system, task, attempt) that differ in any column but ``source`` (the rest are kept)."""
    system_codes, _ = result.codes("system")
    task_codes, _ = result.codes("task")
    keys = np.stack([system_codes, task_codes, result.attempt])
    _, key_of, key_counts = np.unique(keys, axis=1, return_inverse=True, return_counts=True)
    key_of = key_of.reshape(-1)
    dup = key_counts[key_of] > 1
    if not dup.any():
        return []
    rows = np.flatnonzero(dup)
    compared = [c for c in OUTCOME_COLUMNS if c != "source"]
    cells = {c: _cell_text(getattr(result, c)[rows]) for c in compared}
    first_of_key: dict[int, int] = {}
    seen: set[tuple[str, ...]] = set()
    problems: list[Problem] = []
    for k, i in enumerate(rows.tolist()):
        whole = tuple(cells[c][k] for c in compared)
        key = int(key_of[i])
        first = first_of_key.setdefault(key, k)
        if whole in seen:
            continue
        seen.add(whole)
        if first == k:
            continue
        differ = [c for c in compared if cells[c][k] != cells[c][first]]
        j = int(rows[first])
        system, task, attempt = cells["system"][k], cells["task"][k], cells["attempt"][k]
        problems.append(
            Problem(
                source,
                i + 1,
                differ[0],
                f"(system, task, attempt) = ({_short(system)}, {_short(task)}, {attempt}) must not repeat with a "
                f"different {', '.join(differ)} (row {j + 1} has {shown(cells[differ[0]][first])})",
                cells[differ[0]][k],
                lines[i] if lines is not None else None,
            )
        )
    return problems


def outcome_columns(rows: Iterable[Mapping[str, Any]], *, source: str = "<rows>") -> OutcomeColumns:
    """Build validated outcome columns from mappings (e.g. produced by an adapter, a monitor or a ledger).

    Examples
    --------
    >>> import stopwise
    >>> stopwise.outcome_columns([{"system": "A", "task": "t", "outcome": 1, "status": "predicted"}]).status.tolist()
    ['predicted']
    """
    records = list(rows)
    names = list(dict.fromkeys(key for record in records for key in record))
    raw = {str(name): _objects(record.get(name) for record in records) for name in names}
    return _validate(raw, source, None)


def outcome_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Build validated outcome rows from mappings (e.g. produced by an adapter or a monitor).

    Examples
    --------
    >>> import stopwise
    >>> stopwise.outcome_frame([{"system": "A", "task": "t", "outcome": 1, "status": "predicted"}])["status"][0]
    'predicted'
    """
    return outcome_columns(rows).to_frame()


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
    fmt = format_of(file, format)
    rows = validate_outcomes(frame, source="<rows to write>")
    file.parent.mkdir(parents=True, exist_ok=True)
    compression = "gzip" if file.suffix.lower() == ".gz" else None
    handle, tmp_name = tempfile.mkstemp(prefix=f".{file.name}.", dir=file.parent)
    os.close(handle)
    tmp = Path(tmp_name)
    try:
        if fmt == "csv":
            rows.to_csv(tmp, index=False, compression=compression)
        else:  # flags as a list of tokens in JSONL and Parquet
            listed = rows.assign(flags=[f.split(FLAG_SEPARATOR) if f else [] for f in rows["flags"]])
            if fmt == "jsonl":
                listed.to_json(tmp, orient="records", lines=True, compression=compression)
            else:
                listed.to_parquet(tmp, index=False)
        tmp.replace(file)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return file
