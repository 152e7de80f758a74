"""Outcome rows: reading, writing and every rule of the contract."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stopwise import (
    OUTCOME_COLUMNS,
    FileFormatError,
    ValidationError,
    read_outcomes,
    validate_outcomes,
    write_outcomes,
)

GOOD = "system,task,outcome,group,attempt,cost_usd,elapsed_s\nA,t1,1,g1,0,0.5,10\nA,t1,0,g1,1,,\nB,t1,0.5,g1,0,,\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_read_csv_fills_defaults(tmp_path: Path) -> None:
    rows = read_outcomes(_write(tmp_path, "o.csv", GOOD))
    assert list(rows.columns) == list(OUTCOME_COLUMNS)
    assert rows["outcome"].tolist() == [1.0, 0.0, 0.5]
    assert rows["attempt"].tolist() == [0, 1, 0]
    assert rows["status"].tolist() == ["final"] * 3
    assert np.isnan(rows["cost_usd"].iloc[1]) and rows["cost_usd"].iloc[0] == 0.5


@pytest.mark.parametrize("name", ["o.csv", "o.csv.gz", "o.jsonl", "o.jsonl.gz", "o.parquet"])
def test_round_trip_every_format(tmp_path: Path, name: str) -> None:
    rows = read_outcomes(_write(tmp_path, "in.csv", GOOD))
    rows.loc[2, "status"] = "pending"
    path = write_outcomes(rows, tmp_path / name)
    again = read_outcomes(path)
    pd.testing.assert_frame_equal(again, rows, check_dtype=False)


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("system,task,outcome\nA,t1,1.5\n", ["o.csv", "row 1 (line 2)", "field 'outcome'", "[0, 1]", "'1.5'"]),
        ("system,task,outcome\nA,t1,yes\n", ["row 1 (line 2)", "field 'outcome'", "'yes'"]),
        ("system,task,outcome\nA,t1,\n", ["row 1 (line 2)", "field 'outcome'", "only non-final rows may leave it blank"]),
        ("system,task\nA,t1\n", ["field 'outcome'", "required column missing", "found columns system, task"]),
        ("system,task,outcome,status\nA,t1,1,done\n", ["field 'status'", "final, pending, predicted", "'done'"]),
        ("system,task,outcome,attempt\nA,t1,1,0\nA,t1,0,0\n", ["(A, t1, 0)", "different outcome", "row 1: 1.0", "row 2: 0.0"]),
        ("system,task,outcome,attempt\nA,t1,1,-1\n", ["field 'attempt'", "integer >= 0", "'-1'"]),
        ("system,task,outcome,cost_usd\nA,t1,1,-3\n", ["field 'cost_usd'", ">= 0", "'-3'"]),
        ("system,task,outcome,colour\nA,t1,1,red\n", ["field 'colour'", "unknown column"]),
        ("system,task,outcome\n,t1,1\n", ["field 'system'", "non-empty"]),
    ],
)
def test_bad_rows_name_file_row_field_rule_value(tmp_path: Path, text: str, fragments: list[str]) -> None:
    with pytest.raises(ValidationError) as info:
        read_outcomes(_write(tmp_path, "o.csv", text))
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message


def test_every_problem_is_listed(tmp_path: Path) -> None:
    text = "system,task,outcome\n" + "".join(f"A,t{i},2\n" for i in range(30))
    with pytest.raises(ValidationError) as info:
        read_outcomes(_write(tmp_path, "o.csv", text))
    assert len(info.value.problems) == 30
    assert "... and 10 more problems" in str(info.value)
    assert [p.row for p in info.value.problems] == list(range(1, 31))


def test_empty_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="empty"):
        read_outcomes(_write(tmp_path, "e.csv", ""))
    with pytest.raises(FileFormatError, match="no such file"):
        read_outcomes(tmp_path / "absent.csv")
    with pytest.raises(ValidationError, match="at least one outcome row"):
        read_outcomes(_write(tmp_path, "h.csv", "system,task,outcome\n"))
    with pytest.raises(FileFormatError, match="cannot tell the format"):
        read_outcomes(_write(tmp_path, "o.txt", GOOD))
    with pytest.raises(FileFormatError, match="cannot be read as parquet"):
        read_outcomes(_write(tmp_path, "o.parquet", GOOD))


def test_identical_duplicates_are_kept(tmp_path: Path) -> None:
    rows = read_outcomes(_write(tmp_path, "o.csv", "system,task,outcome\nA,t1,1\nA,t1,1\n"))
    assert len(rows) == 2


def test_pending_rows_may_leave_outcome_blank() -> None:
    rows = validate_outcomes(pd.DataFrame({"system": ["A"], "task": ["t"], "outcome": [None], "status": ["pending"]}))
    assert np.isnan(rows["outcome"][0])


def test_write_refuses_bad_rows_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    with pytest.raises(ValidationError):
        write_outcomes(pd.DataFrame({"system": ["A"], "task": ["t"], "outcome": [7]}), target)
    assert list(tmp_path.iterdir()) == []


def test_jsonl_rows_are_numbered(tmp_path: Path) -> None:
    text = '{"system": "A", "task": "t1", "outcome": 1}\n{"system": "A", "task": "t2", "outcome": -1}\n'
    with pytest.raises(ValidationError, match=r"o.jsonl, row 2, field 'outcome'"):
        read_outcomes(_write(tmp_path, "o.jsonl", text))


@pytest.mark.data
def test_shared_records_are_valid(shared_data: Path) -> None:
    expected = {
        "swebench_lite": (12_600, 42),
        "swebench_verified": (18_000, 36),
        "swebench_verified_bashonly": (13_500, 27),
        "terminal_bench_1_5": (6_199, 16),
        "terminal_bench_2": (623, 7),
    }
    for name, (n_rows, n_systems) in expected.items():
        rows = read_outcomes(shared_data / "records" / name / "outcomes.csv")
        assert len(rows) == n_rows and rows["system"].nunique() == n_systems, name
