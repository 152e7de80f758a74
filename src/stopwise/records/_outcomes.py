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

Rows have one form inside stopwise, :class:`~stopwise.records.OutcomeColumns`, and one way in:
:func:`read_outcomes` for files (read by :func:`stopwise.records._tables.read_table`: CSV rows with
another cell count than the header are refused, ``.gz`` and JSONL lines are bounded, see
docs/limits.md) and :func:`outcome_columns` for mappings and pandas frames; both end in the one
validator (:func:`_validate`). :func:`write_outcomes` writes columns as they are.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from stopwise._atomic import write_file
from stopwise._csv_cells import protect_frame
from stopwise._vocabulary import STATUSES
from stopwise.errors import ArgumentError, ComparisonError, Problem, ValidationError, shown
from stopwise.records._columns import TEXT_COLUMNS, OutcomeColumns
from stopwise.records._tables import TABLE_FORMATS, TableFormat, _Lines, _objects, format_of, read_table
from stopwise.records._universe import MAX_NAME_TABLE_BYTES

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FLAG_SEPARATOR",
    "OUTCOME_COLUMNS",
    "QUICK_MAX_ROWS",
    "STATUSES",
    "OutcomeFormat",
    "flag_mask",
    "outcome_columns",
    "read_outcomes",
    "write_outcomes",
]

EXPORT_MARKERS: tuple[str, ...] = ("after_decision",)
"""Columns a ``stopwise ledger export`` may add beside the contract's (``after_decision``: the row was stored after
the evaluation's first final decision). They describe where a row sits in the ledger, not the outcome: a reader
drops them, so an export reads back as the rows it holds."""

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
OutcomeFormat = TableFormat
OUTCOME_FORMATS: tuple[OutcomeFormat, ...] = TABLE_FORMATS
FLAG_SEPARATOR = ";"
"""Joins the flags of a row in a CSV cell and in a frame: ``"error;limit:token"``."""
QUICK_MAX_ROWS = 256
"""At most this many mappings try the validator's plain-Python path first (a live append of a few rows)."""
_Raw = dict[str, np.ndarray]
"""Cells of a file or frame by column name (file order), before validation."""
_MAX_ATTEMPT = 2**53
"""Attempts above this are not exactly representable as numbers; they are refused, not wrapped."""

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


def _columns_of_frame(frame: pd.DataFrame, source: str) -> OutcomeColumns:
    """The rows of a frame: a frame with the reader's columns and dtypes passes the cheap array checks, others are validated."""
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
    raw = {name: values for name, values in raw.items() if name not in EXPORT_MARKERS}
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
        lowered: dict[str, str] = {}  # one text per distinct status, not a new one per row
        status = _objects(lowered.get(s) or lowered.setdefault(s, s.lower() or "final") for s in _text(status_raw).tolist())
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
        problems.extend(_name_tables(result, source, lines))
    if not problems:
        problems.extend(_conflicting_duplicates(result, source, lines))
    if problems:
        raise ValidationError(problems)
    return result


def _name_tables(rows: OutcomeColumns, source: str, lines: np.ndarray | _Lines | None) -> list[Problem]:
    """Names whose fixed-width table (distinct names x the longest x 4 bytes) would pass ``MAX_NAME_TABLE_BYTES``.

    The comparison holds systems, tasks and groups in fixed-width text arrays: one 15 MB task id among 21 made
    a 1.23 GiB array (issue 37). Refused here, before any such array is allocated.
    """
    found: list[Problem] = []
    for name in ("system", "task", "group"):
        values = getattr(rows, name)
        lengths = np.fromiter(map(len, values.tolist()), dtype=np.int64, count=len(values))
        if not len(lengths):
            continue
        longest = int(np.argmax(lengths))
        if len(values) * int(lengths[longest]) * 4 <= MAX_NAME_TABLE_BYTES:
            continue
        import pandas as pd

        size = len(pd.unique(values)) * int(lengths[longest]) * 4
        if size > MAX_NAME_TABLE_BYTES:
            line = int(lines[longest]) if lines is not None else None
            found.append(Problem(
                source, longest + 1, name,
                f"is {int(lengths[longest]):,} characters long: the distinct {name} names are held at the width of the "
                f"longest, {size / 2**30:.2f} GiB, over the limit of {MAX_NAME_TABLE_BYTES // 2**20} MiB; shorten it",
                values[longest], line,
            ))
    return found


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
    system_codes, system_labels = result.codes("system")
    task_codes, task_labels = result.codes("task")
    attempts = np.asarray(result.attempt, dtype=np.int64)
    span = int(attempts.max()) + 1 if len(attempts) else 1
    cells_count = max(len(system_labels) * len(task_labels), 1)
    if len(attempts) and attempts.min() >= 0 and span <= np.iinfo(np.int64).max // cells_count:
        # one int64 key per row, ordered as (system, task, attempt): a 1-D unique, far faster than axis=1
        flat = (system_codes.astype(np.int64) * len(task_labels) + task_codes) * span + attempts
        _, key_of, key_counts = np.unique(flat, return_inverse=True, return_counts=True)
    else:
        keys = np.stack([system_codes, task_codes, attempts])
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


def _is_frame(value: object) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas for rows that are none)."""
    import sys

    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def not_a_frame(value: object, source: str) -> ValidationError:
    """The error for a value given where a pandas DataFrame of outcome rows belongs."""
    return ValidationError(
        [Problem(source, None, None, f"outcome rows must be a pandas DataFrame (see stopwise.read_outcomes); got {type(value).__name__}")]
    )


def outcome_columns(
    rows: OutcomeColumns | pd.DataFrame | Iterable[Mapping[str, Any]],
    *,
    source: str | None = None,
) -> OutcomeColumns:
    """Validated outcome columns from mappings or a pandas frame: the one builder and validator of outcome rows.

    Parameters
    ----------
    rows : iterable of mappings, pandas.DataFrame or OutcomeColumns
        Mappings (one per row, e.g. from an adapter, a monitor or a ledger append) or a frame, with at
        least ``system``, ``task`` and ``outcome``; other columns of :data:`OUTCOME_COLUMNS` optional,
        any other column an error (a misspelt optional column is not ignored). ``OutcomeColumns`` are
        validated already and returned as they are.
    source : str, optional
        Name used in error messages (default ``<rows>``, or ``<DataFrame>`` for a frame).

    Returns
    -------
    OutcomeColumns
        All :data:`OUTCOME_COLUMNS` in canonical form, rows in input order.

    Raises
    ------
    ValidationError
        Listing every broken rule with source, row, field, rule and value.

    Notes
    -----
    A frame with exactly the columns and dtypes :meth:`OutcomeColumns.to_frame` gives is checked
    with array operations only (its text is taken as stripped and its flags as canonical); any
    other frame is validated cell by cell. Up to :data:`QUICK_MAX_ROWS` mappings of plain values
    (text, numbers, None) are checked in plain Python, which a live append of one row needs; any
    other value or any broken rule sends them through the array validator, which gives the result
    or the message.

    Examples
    --------
    >>> import stopwise
    >>> stopwise.outcome_columns([{"system": "A", "task": "t", "outcome": 1, "status": "predicted"}]).status.tolist()
    ['predicted']
    >>> import pandas as pd
    >>> stopwise.outcome_columns(pd.DataFrame({"system": ["A"], "task": ["t"], "outcome": [1.5]}))
    Traceback (most recent call last):
    ...
    stopwise.errors.ValidationError: 1 problem in the input:
      <DataFrame>, row 1, field 'outcome': must be a number in [0, 1]; got 1.5
    """
    if isinstance(rows, OutcomeColumns):
        return rows
    if _is_frame(rows):
        return _columns_of_frame(rows, source or "<DataFrame>")
    if isinstance(rows, str | bytes) or not isinstance(rows, Iterable):
        raise ValidationError(
            [
                Problem(
                    source or "<rows>",
                    None,
                    None,
                    "outcome rows must be mappings, a pandas DataFrame or stopwise.OutcomeColumns "
                    f"(see stopwise.read_outcomes); got {type(rows).__name__}",
                )
            ]
        )
    iterator = iter(rows)
    head = list(itertools.islice(iterator, QUICK_MAX_ROWS + 1))
    if len(head) <= QUICK_MAX_ROWS:
        quick = _quick_columns(head)
        if quick is not None:
            too_wide = _name_tables(quick, source or "<rows>", None)
            if too_wide:
                raise ValidationError(too_wide)
            return quick
    return _validate(_columns_of_mappings(itertools.chain(head, iterator), source or "<rows>"), source or "<rows>", None)


def _columns_of_mappings(records: Iterable[Any], source: str) -> _Raw:
    """The columns of mappings, read in one pass: a mapping is dropped once its values are in the columns.

    A column first named at row k holds None (a missing value) for the rows before it, as ``record.get`` gives.
    Holding every mapping until all were read cost about 0.6 KB per row more (issue 37: a million ingested ids).
    """
    columns: dict[Any, list[Any]] = {}
    n = 0
    for record in records:
        if not isinstance(record, Mapping):
            raise ValidationError([Problem(source, n + 1, None, "must be a mapping of column names to values", type(record).__name__)])
        for key in record:
            if key not in columns:
                columns[key] = [None] * n
        for key, column in columns.items():
            column.append(record.get(key))
        n += 1
    return {str(name): _objects(columns.pop(name)) for name in list(columns)}


# ---------------------------------------------------------------- the plain-Python path for a few rows

_ALLOWED = frozenset(OUTCOME_COLUMNS)
_Unusable = object()
"""A value the plain-Python path does not judge (the array validator does)."""


def _quick_blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def _quick_number(value: Any) -> float | object | None:
    """A finite float, None for blank, or _Unusable when the value is not a plain finite number."""
    if _quick_blank(value):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _Unusable
    number = float(value)
    return number + 0.0 if math.isfinite(number) else _Unusable  # + 0.0: -0.0 is 0.0, as in the validator


def _quick_text(value: Any) -> str | object:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value.strip() if isinstance(value, str) else _Unusable


def _quick_flags(value: Any) -> str | object:
    """Canonical flags of text or a list; _Unusable when malformed (the validator then says why)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, list | tuple) and all(isinstance(t, str) and FLAG_SEPARATOR not in t for t in value):
        value = FLAG_SEPARATOR.join(value)  # as the validator joins listed flags
    if not isinstance(value, str):
        return _Unusable
    canonical, ok = _canonical_flags(value)
    return canonical if ok else _Unusable


def _quick_columns(records: Sequence[Any]) -> OutcomeColumns | None:
    """Columns of a few simple, valid mappings; None when any row needs the array validator.

    Gives exactly what :func:`_validate` gives for such rows (tested).
    """
    if not records:
        return None
    text: dict[str, list[str]] = {name: [] for name in TEXT_COLUMNS}
    numbers: dict[str, list[float | None]] = {"outcome": [], "cost_usd": [], "elapsed_s": []}
    attempts: list[int] = []
    labels: dict[tuple[str, str, int], tuple[Any, ...]] = {}
    for row in records:
        if not isinstance(row, Mapping):
            return None
        keys = row.keys()
        if not _ALLOWED.issuperset(keys) or any(k not in keys for k in REQUIRED_COLUMNS):
            return None
        values: dict[str, Any] = {}
        for name in ("system", "task", "group", "source", "unit", "status"):
            value = _quick_text(row.get(name))
            if not isinstance(value, str):
                return None
            values[name] = value
        if not values["system"] or not values["task"]:
            return None
        values["status"] = values["status"].lower() or "final"
        if values["status"] not in STATUSES:
            return None
        for name in ("outcome", "cost_usd", "elapsed_s", "attempt"):
            number = _quick_number(row.get(name))
            if number is _Unusable:
                return None
            values[name] = number
        outcome, attempt = values["outcome"], values["attempt"]
        if (outcome is None and values["status"] == "final") or (outcome is not None and not 0.0 <= outcome <= 1.0):
            return None
        if attempt is not None and (attempt < 0 or attempt != round(attempt) or attempt > _MAX_ATTEMPT):
            return None
        if any(values[name] is not None and values[name] < 0 for name in ("cost_usd", "elapsed_s")):
            return None
        flags = _quick_flags(row.get("flags"))
        if not isinstance(flags, str):
            return None
        values["flags"], values["attempt"] = flags, 0 if attempt is None else int(attempt)
        # repeats of a key must agree in every column but source (the validator's rule)
        label = tuple(values[name] for name in OUTCOME_COLUMNS if name != "source")
        if labels.setdefault((values["system"], values["task"], values["attempt"]), label) != label:
            return None
        for name in TEXT_COLUMNS:
            text[name].append(values[name])
        for name in numbers:
            numbers[name].append(values[name])
        attempts.append(values["attempt"])
    return OutcomeColumns(
        **{name: _objects(text[name]) for name in TEXT_COLUMNS},
        **{name: np.array(numbers[name], dtype=float) for name in numbers},  # None -> NaN
        attempt=np.array(attempts, dtype=np.int64),
    )


# ---------------------------------------------------------------- files


def _read_file(path: str | os.PathLike[str], format: str | None) -> OutcomeColumns:
    file = Path(path)
    table = read_table(file, format=format, what="outcome file", lists=("flags",))
    return _validate(table.cells, str(file), table.lines)


def read_outcomes(
    path_or_paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    format: str | None = None,
) -> OutcomeColumns:
    r"""Read and validate one or several outcome files (CSV, JSONL or Parquet) into columns.

    Parameters
    ----------
    path_or_paths : path-like or sequence of path-like
        The file, or files read as one table in the given order. The format follows each
        suffix (``.csv``, ``.jsonl``, ``.parquet``; ``.gz`` allowed after a text suffix)
        unless ``format`` is given.
    format : {"csv", "jsonl", "parquet"}, optional
        Override the format taken from the suffixes.

    Returns
    -------
    OutcomeColumns
        One row per input row, in input order, with every column of :data:`OUTCOME_COLUMNS` in
        canonical form (missing optional columns filled with their defaults); ``rows["task"]``
        is a column, :meth:`~OutcomeColumns.to_frame` the rows as a pandas frame.
        :func:`stopwise.decide` takes them as they are.

    Raises
    ------
    FileFormatError
        A file is missing, empty or unreadable.
    ValidationError
        Rows break the contract; every problem names the file, row, field, rule and value.
    ComparisonError
        A (system, task, attempt) of one file repeats one of an earlier file (a file given
        twice, or two runs under one name); the message names both files and rows.

    Examples
    --------
    >>> import stopwise, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.csv").write_text("system,task,outcome\nA,t1,1\nB,t1,0\n")
    >>> _ = (d / "b.csv").write_text("system,task,outcome\nA,t2,1\nB,t2,1\n")
    >>> rows = stopwise.read_outcomes([d / "a.csv", d / "b.csv"])
    >>> len(rows), rows["task"].tolist(), rows["status"].tolist()
    (4, ['t1', 't1', 't2', 't2'], ['final', 'final', 'final', 'final'])
    >>> rows.to_frame()[["system", "task", "outcome"]].head(2)
      system task  outcome
    0      A   t1      1.0
    1      B   t1      0.0
    """
    listed = [path_or_paths] if isinstance(path_or_paths, str | os.PathLike) else list(path_or_paths)
    if not listed:
        raise ArgumentError("`path_or_paths` must name at least one outcome file; got none")
    parts = [_read_file(path, format) for path in listed]
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


def _csv_frame(columns: OutcomeColumns) -> pd.DataFrame:
    """The columns as a frame for ``to_csv``: the text columns as the object arrays they are (written alike).

    :meth:`OutcomeColumns.to_frame` turns them into pandas' string dtype, a copy of every text: 220 MiB more for a
    million ingested ids (issue 37).
    """
    import pandas as pd

    return pd.DataFrame(
        {name: pd.Series(columns.column(name), dtype=object if name in TEXT_COLUMNS else None, copy=False) for name in columns.columns}
    )


def write_outcomes(
    rows: OutcomeColumns | pd.DataFrame | Iterable[Mapping[str, Any]],
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    extra_columns: Mapping[str, Any] | None = None,
) -> Path:
    """Write outcome rows atomically (nothing is written on error).

    Parameters
    ----------
    rows : OutcomeColumns, pandas.DataFrame or iterable of mappings
        Outcome rows. Columns are written as they are (they were validated when built); a
        frame or mappings are validated once, cell by cell (:func:`outcome_columns`).
    path : path-like
        Destination; the format follows the suffix unless ``format`` is given.
    format : {"csv", "jsonl", "parquet"}, optional
        Override the format taken from the suffix.
    extra_columns : mapping of str to array_like, optional
        Columns written after the outcome columns, one value per row (e.g. ``after_decision`` of a ledger
        export); readers of outcome rows drop columns they do not know.

    Returns
    -------
    pathlib.Path
        The written path.

    Raises
    ------
    ValidationError
        A frame or mappings break the outcome contract.
    """
    file = Path(path)
    fmt = format_of(file, format)
    if isinstance(rows, OutcomeColumns):
        columns = rows
    elif _is_frame(rows):
        columns = _validate_frame(rows, "<rows to write>", None)
    else:
        columns = outcome_columns(rows, source="<rows to write>")
    frame = _csv_frame(columns) if fmt == "csv" else columns.to_frame()
    if extra_columns:
        frame = frame.assign(**{name: np.asarray(values) for name, values in extra_columns.items()})
    compression = "gzip" if file.suffix.lower() == ".gz" else None

    def write(tmp: Path) -> None:
        if fmt == "csv":
            protect_frame(frame).to_csv(tmp, index=False, compression=compression)  # no cell a spreadsheet runs as a formula
        else:  # flags as a list of tokens in JSONL and Parquet
            listed = frame.assign(flags=[f.split(FLAG_SEPARATOR) if f else [] for f in frame["flags"]])
            if fmt == "jsonl":
                listed.to_json(tmp, orient="records", lines=True, compression=compression)
            else:
                listed.to_parquet(tmp, index=False)

    return write_file(file, write)
