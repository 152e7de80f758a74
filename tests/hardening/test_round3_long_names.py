"""Issue 37: a very long task id. Task, system and group names are held in fixed-width text arrays (N x the
longest x 4 bytes): one 100,000-character id among 20,000 planned tasks asked for 7.45 GiB (MemoryError, exit 5).
Such names are refused before the table is allocated (exit 4, naming file, row, field and length); a CSV cell
longer than the csv module's 131,072 characters is read up to STOPWISE_MAX_LINE_BYTES, like a JSONL line."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise.records._universe import MAX_NAME_TABLE_BYTES

from .conftest import Run, refused


def _rows(path: Path, extra: str | None = None, n: int = 20) -> Path:
    lines = "".join(f"A,t{i},{int(i % 3 != 0)}\nB,t{i},{int(i % 4 == 0)}\n" for i in range(n))
    if extra is not None:
        lines += f"A,{extra},1\nB,{extra},0\n"
    path.write_text("system,task,outcome\n" + lines)
    return path


def test_a_100k_character_task_id_among_20000_planned_tasks_is_refused(tmp_path: Path, run: Run) -> None:
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("task,group\n" + "".join(f"t{i},g{i % 3}\n" for i in range(20_000)) + "x" * 100_000 + ",g0\n")
    for argv in (["decide", _rows(tmp_path / "rows.csv"), "-t", "A", "-b", "B", "--tasks", tasks], ["order", tasks]):
        refused(run(*argv), f"{tasks}, row 20001, field 'task'", "100,000 characters long", "7.45 GiB", "shorten it")
    assert not (tmp_path / "order.csv").exists()


def test_outcome_rows_whose_task_table_would_pass_the_limit_are_refused(tmp_path: Path, run: Run) -> None:
    width = MAX_NAME_TABLE_BYTES // (21 * 4) + 1  # 21 distinct tasks at this width pass the limit by a little
    rows = _rows(tmp_path / "rows.csv", "z" * width)
    refused(run("decide", rows, "-t", "A", "-b", "B"), f"{rows}, row 41 (line 42), field 'task'", f"{width:,} characters long")


def test_a_cell_past_the_csv_modules_default_is_read(tmp_path: Path, run: Run) -> None:
    rows = _rows(tmp_path / "rows.csv", "y" * 200_000)  # over csv.field_size_limit()'s 131,072; 16.8 MB of table
    result = run("decide", rows, "-t", "A", "-b", "B")
    assert result.code in (0, 1, 2, 3), result.err
    assert "observed   21 " in result.out or "21" in result.out


def test_a_cell_past_the_line_limit_is_a_limit_error(tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOPWISE_MAX_LINE_BYTES", "150000")
    rows = _rows(tmp_path / "rows.csv", "y" * 200_000)
    rows.write_text(rows.read_text() + "A,t1\n")  # a ragged row: the exact reader (pyarrow's has no cell limit) runs
    refused(run("decide", rows, "-t", "A", "-b", "B"), f"{rows}, line 42", "STOPWISE_MAX_LINE_BYTES (150,000 characters)")
