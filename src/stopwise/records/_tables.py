"""Reading a table file (CSV, JSONL or Parquet, ``.gz`` for the text formats) into raw cells: the one table reader.

The outcome reader (:func:`stopwise.read_outcomes`), the task-universe reader
(:func:`stopwise.read_task_universe`) and ``stopwise order`` read their files here: one format detection
from the suffix, one set of limits and one wording for what is wrong (file, row, field, rule, value).
Cells come back unvalidated, one NumPy array per column in file order (text cells for CSV, JSON
values for JSONL, typed arrays for Parquet); each reader applies its own contract.

CSV files are read cell by cell with the header as the only source of column names: a row with
more or fewer cells than the header is refused (naming the row), never shifted into other
columns or taken as an index; a byte-order mark before the header is dropped. Compressed
(``.gz``) files are bounded by ``STOPWISE_MAX_DECOMPRESSED_BYTES``, JSONL lines by
``STOPWISE_MAX_LINE_BYTES`` (docs/limits.md).
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple, get_args

import numpy as np

from stopwise._csv_cells import unprotect_cells
from stopwise._limits import gunzip_bytes, json_loads, limit, read_lines
from stopwise.errors import FileFormatError, LimitError, Problem, ValidationError

__all__ = ["TABLE_FORMATS", "Table", "TableFormat", "format_of", "read_table"]

TableFormat = Literal["csv", "jsonl", "parquet"]
TABLE_FORMATS: tuple[TableFormat, ...] = get_args(TableFormat)
_CSV_BLOCK_BYTES = 1 << 22
"""Bytes of CSV text parsed at once (then turned into Python text before the next block)."""
_SUFFIXES: dict[str, TableFormat] = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def format_of(path: Path, fmt: str | None) -> TableFormat:
    """The format ``fmt`` names, else the one of the file's suffix (``.gz`` looked through).

    Raises
    ------
    FileFormatError
        ``fmt`` is no table format, or the suffix says none.

    Examples
    --------
    >>> from pathlib import Path
    >>> from stopwise.records._tables import format_of
    >>> format_of(Path("rows.jsonl.gz"), None), format_of(Path("rows.txt"), "csv")
    ('jsonl', 'csv')
    """
    if fmt is not None:
        for name in TABLE_FORMATS:
            if fmt == name:
                return name
        raise FileFormatError(f"{path}: format must be one of {', '.join(TABLE_FORMATS)}; got {fmt!r}")
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _SUFFIXES:
        return _SUFFIXES[suffixes[-1]]
    raise FileFormatError(
        f"{path}: cannot tell the format from the file name; use a .csv, .jsonl or .parquet "
        "suffix (optionally .gz for text formats) or pass the format explicitly"
    )


class _Lines:
    """Text line of each data row of a CSV file, worked out (by the exact reader) when first needed."""

    def __init__(self, path: Path, data: bytes | None, what: str) -> None:
        self.path, self.data, self.what = path, data, what
        self._lines: np.ndarray | None = None

    def __getitem__(self, i: int) -> int:
        if self._lines is None:
            self._lines = _read_csv_exact(self.path, self.data, self.what)[1]
        return int(self._lines[i])


_Raw = dict[str, np.ndarray]
"""Cells of a file or frame by column name (file order), before validation."""


def _read_csv(path: Path, gz: bool, what: str) -> tuple[_Raw, np.ndarray | _Lines]:
    """Cells of a CSV file as text; pyarrow's reader when every row is well formed, else the exact one."""
    data = gunzip_bytes(path) if gz else None
    fast = _read_csv_arrow(path, data)
    if fast is not None:
        return fast, _Lines(path, data, what)
    return _read_csv_exact(path, data, what)


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
    parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
    reader = None
    try:
        reader = pv.open_csv(
            pa.BufferReader(data) if data is not None else str(path),
            read_options=pv.ReadOptions(use_threads=False, block_size=_CSV_BLOCK_BYTES),
            parse_options=pv.ParseOptions(newlines_in_values=True, invalid_row_handler=skip),
            convert_options=pv.ConvertOptions(
                column_types=dict.fromkeys(header or [], pa.string()),
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
        if reader.schema.names != list(header or []):
            return None
        for batch in reader:  # block by block: the text of the whole file is never held as Arrow and Python objects at once
            for i, name in enumerate(names):
                parts[name].append(_shared_text(batch.column(i)))
    except (pa.ArrowException, OSError):
        return None
    finally:
        sys.unraisablehook = hook
        if reader is not None:  # its read-ahead stopped now, not at interpreter exit (an abort there: exit -6)
            reader.close()
    if invalid or unraisable:
        return None
    return {name: np.concatenate(chunks) if chunks else _objects(()) for name, chunks in parts.items()}


def _shared_text(column: Any) -> np.ndarray:
    """An Arrow text column as an object array in which equal cells share one Python string.

    A column repeats its values (systems, groups, a stamp on every row): one object per distinct value
    keeps a million-row file to its distinct texts. ``to_pylist`` and the indices' buffer, not ``to_numpy``:
    pyarrow converts to NumPy through pandas, and the decision path does not load pandas.
    """
    encoded = column.dictionary_encode()
    distinct = unprotect_cells(_objects(encoded.dictionary.to_pylist()))  # a cell written as '=x is =x
    indices = encoded.indices  # int32 without nulls; read from its buffer: Array.to_numpy loads pandas
    return distinct[np.frombuffer(indices.buffers()[1], dtype=np.int32)[indices.offset : indices.offset + len(indices)]]


def _read_csv_exact(path: Path, data: bytes | None, what: str) -> tuple[_Raw, np.ndarray]:
    """Cells of a CSV file as text, with the text line of each data row; refuses ragged rows."""
    source = str(path)
    handle: io.TextIOBase
    if data is not None:
        handle = io.StringIO(data.decode("utf-8-sig"), newline="")
    else:
        handle = open(path, encoding="utf-8-sig", newline="")
    rows: list[list[str]] = []
    lines: list[int] = []
    cap = limit("STOPWISE_MAX_LINE_BYTES")  # a cell as long as a JSONL line may be (not the csv module's 131,072)
    previous = csv.field_size_limit(cap)
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
            if "field larger than field limit" in str(exc):
                raise LimitError(
                    f"{source}, line {reader.line_num}: a cell is longer than STOPWISE_MAX_LINE_BYTES ({cap:,} characters); "
                    "raise the limit if the file is trusted"
                ) from None
            raise FileFormatError(f"{source}, line {reader.line_num}: cannot be read as CSV ({exc})") from None
        finally:
            csv.field_size_limit(previous)
    if header is None or not any(c.strip() for c in header):
        raise FileFormatError(f"{source}: the file has no header; {_a(what)} needs a header and rows")
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
    raw = {name: unprotect_cells(_objects(col)) for name, col in zip(names, columns, strict=True)}
    return raw, np.asarray(lines, dtype=np.int64)


def _objects(values: Iterable[Any]) -> np.ndarray:
    """A 1-D object array of the values (lists and arrays stay single cells)."""
    items = list(values)
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


def _read_jsonl(path: Path, gz: bool, what: str, lists: tuple[str, ...]) -> tuple[_Raw, np.ndarray | None]:
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
            nested = [k for k, v in value.items() if isinstance(v, dict) or (isinstance(v, list) and k not in lists)]
            if nested:
                problems.append(Problem(source, row, str(nested[0]), "must be a single value", value[nested[0]], number if number != row else None))
                continue
            records.append(value)
            lines.append(number)
    if problems:
        raise ValidationError(problems)
    if not records:
        raise FileFormatError(f"{source}: the file has no rows; {_a(what)} needs at least one JSON object")
    names = list(dict.fromkeys(key for record in records for key in record))
    cells = {str(name): _objects(record.get(name) for record in records) for name in names}
    numbers = np.asarray(lines, dtype=np.int64)
    same = bool((numbers == np.arange(1, len(numbers) + 1)).all())
    return cells, None if same else numbers  # a line only when it differs


def _read_parquet(path: Path) -> _Raw:
    """The columns of a Parquet file, decoded in batches and refused past ``STOPWISE_MAX_DECOMPRESSED_BYTES``.

    Run-length and dictionary encoding let a file of a few hundred KB hold 10^8 rows (decoded, tens
    of GB), so the decoded bytes are counted batch by batch and reading stops at the limit.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    cap = limit("STOPWISE_MAX_DECOMPRESSED_BYTES")
    with pq.ParquetFile(path) as parquet:
        names = parquet.schema_arrow.names
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:  # a mapping by name would keep one of them: refused, as a repeated CSV header cell is
            raise ValidationError([Problem(str(path), None, ", ".join(repeated), "column appears more than once in the file")])
        batches, total = [], 0
        for batch in parquet.iter_batches(batch_size=1 << 16):
            total += batch.nbytes
            if total > cap:
                raise LimitError(
                    f"{path} (decoded): exceeds the limit of {cap:,} bytes ({parquet.metadata.num_rows:,} rows declared; "
                    "STOPWISE_MAX_DECOMPRESSED_BYTES; raise it if the input is trusted)"
                )
            batches.append(batch)
        table = pa.Table.from_batches(batches, schema=parquet.schema_arrow)
    return {str(name): _array(table.column(i).to_numpy(zero_copy_only=False)) for i, name in enumerate(table.column_names)}


def _array(values: np.ndarray) -> np.ndarray:
    """Numbers and booleans stay typed; anything else becomes an object array."""
    array = np.asarray(values)
    return array if array.dtype.kind in "biuf" and array.ndim == 1 else _objects(values)


class Table(NamedTuple):
    """The raw cells of a table file and where each row stands in it."""

    cells: dict[str, np.ndarray]
    """Column name (as in the file, not stripped) -> one cell per row, in file order; not validated."""
    lines: np.ndarray | _Lines | None
    """Text line of each row (``lines[i]`` for row ``i + 1``), or None when rows and lines agree."""


def _a(what: str) -> str:
    return ("an " if what[:1] in "aeiou" else "a ") + what


def read_table(
    path: str | Path,
    *,
    format: str | None = None,
    what: str = "table file",
    lists: tuple[str, ...] = (),
) -> Table:
    r"""Read the raw cells of a CSV, JSONL or Parquet file (``.gz`` after a text suffix), format from the suffix.

    Parameters
    ----------
    path : path-like
        The file.
    format : {"csv", "jsonl", "parquet"}, optional
        Override the format taken from the suffix.
    what : str, optional
        What the file should be, for messages (``"outcome file"``, ``"tasks file"``).
    lists : tuple of str, optional
        JSONL fields whose values may be lists (``flags``); any other list or object is refused.

    Returns
    -------
    Table

    Raises
    ------
    FileFormatError
        The file is missing, a directory, empty, of no known format or unreadable.
    ValidationError
        Rows of the wrong shape (a CSV row with another cell count than the header, a JSONL line
        that is no object or holds nested values); each problem names the file, row, field, rule and value.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from stopwise.records._tables import read_table
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "tasks.csv"
    >>> _ = f.write_text("task,group\nt1,a\nt2,b\n")
    >>> {name: cells.tolist() for name, cells in read_table(f, what="tasks file").cells.items()}
    {'task': ['t1', 't2'], 'group': ['a', 'b']}
    """
    file = Path(path)
    if not file.exists():
        raise FileFormatError(f"{file}: no such file")
    if file.is_dir():
        raise FileFormatError(f"{file}: is a directory, expected {_a(what)}")
    fmt = format_of(file, format)
    if file.stat().st_size == 0:
        raise FileFormatError(f"{file}: the file is empty; {_a(what)} needs a header and at least one row")
    gz = file.suffix.lower() == ".gz"
    try:
        if fmt == "csv":
            return Table(*_read_csv(file, gz, what))
        if fmt == "jsonl":
            return Table(*_read_jsonl(file, gz, what, lists))
        return Table(_read_parquet(file), None)
    except UnicodeDecodeError as exc:
        raise FileFormatError(f"{file}: is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except (ValueError, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FileFormatError(f"{file}: cannot be read as {fmt}: {first[:300]}") from exc
