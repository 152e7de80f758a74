"""Reading the runs a completion check covers (CSV or JSONL)."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import pydantic

from stopwise._files import read_text
from stopwise._limits import json_loads, limit
from stopwise._pydantic import problems_from_pydantic
from stopwise.errors import FileFormatError, LimitError, Problem, ValidationError
from stopwise.finality._check import ScoredRun

__all__ = ["read_scored_runs"]

_COLUMNS = tuple(ScoredRun.model_fields)


def _rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    """(line, raw row) pairs; blank CSV cells are left out so optional fields take their defaults."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows: list[tuple[int, dict[str, Any]]] = []
        cap = limit("STOPWISE_MAX_LINE_BYTES")
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            if len(line) > cap:
                raise LimitError(f"{path}, line {line_no}: longer than the limit of {cap:,} characters (STOPWISE_MAX_LINE_BYTES)")
            try:
                value = json_loads(line, f"{path}, line {line_no}")
            except json.JSONDecodeError as exc:
                raise FileFormatError(f"{path}, line {line_no}: not valid JSON ({exc.msg})") from None
            if not isinstance(value, dict):
                raise FileFormatError(f"{path}, line {line_no}: must be a JSON object, got {type(value).__name__}")
            rows.append((line_no, value))
        return rows
    if suffix == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        unknown = [c for c in reader.fieldnames or [] if c not in _COLUMNS]
        if unknown:
            raise ValidationError(
                [
                    Problem(
                        str(path),
                        None,
                        ", ".join(unknown),
                        "unknown column; allowed columns are " + ", ".join(_COLUMNS),
                    )
                ]
            )
        header = [c.strip() for c in reader.fieldnames or []]
        twice = sorted({c for c in header if header.count(c) > 1})
        if twice:
            raise ValidationError([Problem(str(path), None, ", ".join(twice), "column appears more than once in the header")])
        rows = []
        ragged: list[Problem] = []
        for index, row in enumerate(reader, start=1):
            cells = len(row) - 1 + len(row[None]) if None in row else sum(v is not None for v in row.values())
            if cells != len(header):
                ragged.append(
                    Problem(str(path), index, None, f"must have {len(header)} cells like the header; has {cells}", line=reader.line_num)
                )
                continue
            rows.append((reader.line_num, {k.strip(): v.strip() for k, v in row.items() if k is not None and v is not None and v.strip()}))
        if ragged:
            raise ValidationError(ragged)
        return rows
    raise FileFormatError(f"{path}: runs must be a .csv or .jsonl file")


def read_scored_runs(path: str | os.PathLike[str]) -> list[ScoredRun]:
    r"""Read the runs to check: one per row (CSV) or line (JSONL), in execution order.

    Fields: ``run``, ``system``, ``task``, ``outcome`` (required); ``attempt``, ``scored_at``
    (ISO 8601 with a time zone), ``environment``, ``group`` (optional). See :class:`ScoredRun`.

    Raises
    ------
    FileFormatError
        The file is missing, empty, unreadable or of another format.
    ValidationError
        Rows break the schema; every problem names the file, row, field, rule and value.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from stopwise.finality import read_scored_runs
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "runs.csv"
    >>> _ = path.write_text("run,system,task,outcome,environment\na1,A,t1,1,pair-1\nb1,B,t1,0,pair-1\n")
    >>> [(r.run, r.outcome, r.environment) for r in read_scored_runs(path)]
    [('a1', 1.0, 'pair-1'), ('b1', 0.0, 'pair-1')]
    """
    file = Path(path)
    text = read_text(file, "runs file", encoding="utf-8-sig")
    rows = _rows(file, text)
    if not rows:
        raise FileFormatError(f"{file}: holds no runs")
    runs: list[ScoredRun] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for index, (line, raw) in enumerate(rows, start=1):
        try:
            run = ScoredRun.model_validate(raw)
        except pydantic.ValidationError as exc:
            for p in problems_from_pydantic(exc, str(file)):
                problems.append(Problem(p.file, index, p.field, p.rule, p.value, line))
            continue
        if run.run in seen:
            problems.append(
                Problem(str(file), index, "run", f"must be unique (also row {seen[run.run]})", run.run, line)
            )
        seen.setdefault(run.run, index)
        runs.append(run)
    if problems:
        raise ValidationError(problems)
    return runs
