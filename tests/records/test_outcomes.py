"""Outcome rows: reading, writing and every rule of the contract."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest

import stopwise
import stopwise.records._outcomes as outcomes_module
from stopwise import (
    OUTCOME_COLUMNS,
    ComparisonError,
    FileFormatError,
    OutcomeColumns,
    ValidationError,
    outcome_columns,
    read_outcomes,
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
    assert np.isnan(rows["cost_usd"][1]) and rows["cost_usd"][0] == 0.5
    assert isinstance(rows, OutcomeColumns) and isinstance(rows["task"], np.ndarray)
    assert list(rows) == list(OUTCOME_COLUMNS)  # iteration gives the column names, as a frame's does
    with pytest.raises(KeyError, match="'colour' is not an outcome column"):
        rows["colour"]


@pytest.mark.parametrize("name", ["o.csv", "o.csv.gz", "o.jsonl", "o.jsonl.gz", "o.parquet"])
def test_round_trip_every_format(tmp_path: Path, name: str) -> None:
    rows = read_outcomes(_write(tmp_path, "in.csv", GOOD)).to_frame()
    rows.loc[2, "status"] = "pending"
    path = write_outcomes(rows, tmp_path / name)
    again = read_outcomes(path).to_frame()
    pd.testing.assert_frame_equal(again, rows, check_dtype=False)


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("system,task,outcome\nA,t1,1.5\n", ["o.csv", "row 1 (line 2)", "field 'outcome'", "[0, 1]", "'1.5'"]),
        ("system,task,outcome\nA,t1,yes\n", ["row 1 (line 2)", "field 'outcome'", "'yes'"]),
        ("system,task,outcome\nA,t1,\n", ["row 1 (line 2)", "field 'outcome'", "only non-final rows may leave it blank"]),
        ("system,task\nA,t1\n", ["field 'outcome'", "required column missing", "found columns system, task"]),
        ("system,task,outcome,status\nA,t1,1,done\n", ["field 'status'", "final, pending, predicted", "'done'"]),
        ("system,task,outcome,attempt\nA,t1,1,0\nA,t1,0,0\n", ["row 2 (line 3)", "(A, t1, 0)", "different outcome (row 1 has '1.0'); got '0.0'"]),
        ("system,task,outcome,attempt\nA,t1,1,-1\n", ["field 'attempt'", "integer from 0 to 9007199254740992", "'-1'"]),
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
    rows = outcome_columns(pd.DataFrame({"system": ["A"], "task": ["t"], "outcome": [None], "status": ["pending"]}))
    assert np.isnan(rows["outcome"][0])


def test_write_refuses_bad_rows_and_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    with pytest.raises(ValidationError):
        write_outcomes(pd.DataFrame({"system": ["A"], "task": ["t"], "outcome": [7]}), target)
    assert list(tmp_path.iterdir()) == []


def test_several_files_read_as_one_and_a_row_repeated_across_files_is_refused(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.csv", "system,task,outcome\nA,t1,1\nB,t1,0\n")
    b = _write(tmp_path, "b.jsonl", '{"system": "A", "task": "t2", "outcome": 1}\n{"system": "B", "task": "t2", "outcome": 0.5}\n')
    rows = read_outcomes([a, b])
    assert rows["task"].tolist() == ["t1", "t1", "t2", "t2"] and rows["outcome"].tolist() == [1.0, 0.0, 1.0, 0.5]
    assert read_outcomes((a,))["task"].tolist() == ["t1", "t1"]  # a sequence of one file
    c = _write(tmp_path, "c.csv", "system,task,outcome\nB,t3,1\nB,t2,0.5\nA,t1,1\n")
    with pytest.raises(ComparisonError) as info:
        read_outcomes([a, b, c])
    assert str(info.value) == (
        f"{c}, row 2: (system, task, attempt) = (B, t2, 0) is already in {b}, row 2; "
        "2 row(s) repeat rows of an earlier file (is a file given twice?)"
    )
    with pytest.raises(ComparisonError, match=r"a\.csv, row 1: .* is already in .*a\.csv, row 1; 2 row\(s\)"):
        read_outcomes([a, a])
    with pytest.raises(stopwise.errors.ArgumentError, match="at least one outcome file"):
        read_outcomes([])


def test_writing_validated_columns_does_not_validate_again(tmp_path: Path) -> None:
    n = 200_000
    rows = outcome_columns(
        pd.DataFrame(
            {
                "system": np.where(np.arange(n) % 2 == 0, "A", "B"),
                "task": [f"t{i // 2}" for i in range(n)],
                "outcome": (np.arange(n) % 3) / 2,
                "flags": np.where(np.arange(n) % 7 == 0, "error", ""),
            }
        )
    )
    with (
        patch.object(outcomes_module, "_validate", wraps=outcomes_module._validate) as validate,
        patch.object(outcomes_module, "_validate_frame", wraps=outcomes_module._validate_frame) as validate_frame,
    ):
        path = write_outcomes(rows, tmp_path / "o.parquet")
        assert validate.call_count == 0 and validate_frame.call_count == 0  # columns are written as they are
        write_outcomes(rows.to_frame().head(3), tmp_path / "f.csv")
        assert validate_frame.call_count == 1  # a frame goes through the validator once
    pd.testing.assert_frame_equal(read_outcomes(path).to_frame(), rows.to_frame())


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
        assert len(rows) == n_rows and len(set(rows["system"])) == n_systems, name


# ---------------------------------------------------------------- hostile inputs (issue 12)


def _refused(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValidationError) as info:
        read_outcomes(path)
    return str(info.value)


def test_attempt_past_exact_integers_is_refused_not_wrapped(tmp_path: Path) -> None:
    message = _refused(tmp_path, "o.csv", "system,task,outcome,attempt\nA,t,1,1e19\nA,t,1,-9223372036854775808\n")
    assert "row 1 (line 2), field 'attempt': must be an integer from 0 to 9007199254740992; got '1e19'" in message
    assert "row 2 (line 3), field 'attempt'" in message
    jsonl = '{"system": "A", "task": "t", "outcome": 1, "attempt": 10000000000000000000}\n'
    assert "row 1, field 'attempt'" in _refused(tmp_path, "o.jsonl", jsonl)


@pytest.mark.parametrize(
    ("second", "field"),
    [("A,t,1,g2,0,0.5", "group"), ("A,t,1,g1,0,0.7", "cost_usd"), ("A,t,0,g1,0,0.5", "outcome")],
)
def test_duplicates_are_compared_on_every_column(tmp_path: Path, second: str, field: str) -> None:
    text = f"system,task,outcome,group,attempt,cost_usd\nA,t,1,g1,0,0.5\n{second}\n"
    message = _refused(tmp_path, "o.csv", text)
    assert f"row 2 (line 3), field '{field}': (system, task, attempt) = (A, t, 0) must not repeat" in message
    same = tmp_path / "same.csv"
    same.write_text("system,task,outcome,group,attempt,cost_usd\nA,t,1,g1,0,0.5\nA,t,1,g1,0,0.5\n")
    assert len(read_outcomes(same)) == 2  # identical duplicates are kept (and counted downstream)


def test_a_trailing_comma_on_every_row_is_refused_never_an_index(tmp_path: Path) -> None:
    message = _refused(tmp_path, "o.csv", "system,task,outcome\nA,t1,1,\nB,t1,0,\n")
    assert "row 1 (line 2): must have 3 cells like the header (system, task, outcome); has 4" in message
    assert "row 2 (line 3): must have 3 cells" in message
    message = _refused(tmp_path, "o.csv", "system,task,outcome,\nA,t1,1,\n")
    assert "field 'column 4': header cell must not be empty (a trailing comma?)" in message


def test_ragged_rows_are_named_and_do_not_shift_blame(tmp_path: Path) -> None:
    message = _refused(tmp_path, "o.csv", "system,task,outcome,cost_usd\nA,t1,1,0.5\nB,t1,0.5,0,3\nC,t1\n")
    assert message.splitlines()[0] == "2 problems in the input:"
    assert "row 2 (line 3): must have 4 cells like the header (system, task, outcome, cost_usd); has 5" in message
    assert "row 3 (line 4): must have 4 cells" in message and "has 2" in message
    assert "field 'cost_usd'" not in message and "field 'outcome'" not in message


def test_a_duplicated_header_column_is_refused(tmp_path: Path) -> None:
    message = _refused(tmp_path, "o.csv", "system,task,outcome,outcome\nA,t,1,0\n")
    assert "field 'outcome': column appears more than once in the header" in message


def test_a_bom_is_dropped_from_the_header(tmp_path: Path) -> None:
    path = tmp_path / "o.csv"
    path.write_bytes(b"\xef\xbb\xbfsystem,task,outcome\nA,t,1\n")
    assert list(read_outcomes(path)["system"]) == ["A"]
    message = _refused(tmp_path, "p.csv", b"\xef\xbb\xbfsystem,tusk,outcome\nA,t,1\n")
    assert "field 'task': required column missing; found columns system, tusk, outcome" in message
    assert "\ufeff" not in message and "ufeff" not in message


def test_a_huge_system_name_is_not_echoed_and_escapes_are_escaped(tmp_path: Path) -> None:
    big = "S" * 100_000
    message = _refused(tmp_path, "o.csv", f"system,task,outcome\n{big},t,2\n{big},u,1\n")
    assert len(message) < 1000
    evil = "sys\x1b[2J\x1b]0;pwned\x07"
    message = _refused(tmp_path, "e.csv", f"system,task,outcome,attempt\n{evil},t,1,0\n{evil},t,0,0\n")
    assert "\x1b" not in message and "\x07" not in message
    assert "sys\\x1b[2J\\x1b]0;pwned\\x07" in message


def test_csv_lines_are_numbered_across_quoted_newlines_and_blank_lines(tmp_path: Path) -> None:
    text = 'system,task,outcome\n"A\nB",t,1\n\nC,t,7\n'
    assert "row 2 (line 5), field 'outcome'" in _refused(tmp_path, "o.csv", text)


def test_jsonl_rows_must_be_flat_objects(tmp_path: Path) -> None:
    message = _refused(tmp_path, "o.jsonl", '[1, 2]\n{"system": {"a": 1}, "task": "t", "outcome": 1}\n')
    assert "row 1: must be one JSON object; got 'list'" in message
    assert "row 2, field 'system': must be a single value" in message


@pytest.mark.parametrize("data", [b"system,task,outcome\nA,t1,1\nB,t1,0\nA,t2,\xff\xfe1\n", bytes(range(256)) * 8])
def test_bytes_that_are_not_utf8_are_refused_without_a_traceback(tmp_path: Path, data: bytes) -> None:
    # pyarrow's fast reader fails while decoding such a row for its invalid-row handler and reports that as an
    # "Exception ignored" traceback on stderr (pytest would turn it into a warning, so run a fresh interpreter);
    # the reader must catch it and let the exact reader name the byte
    path = tmp_path / "o.csv"
    path.write_bytes(data)
    code = "from stopwise.cli.main import run; run()"
    done = subprocess.run(
        [sys.executable, "-c", code, "decide", str(path), "-t", "A", "-b", "B"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 4
    assert re.fullmatch(r"error: \S*o\.csv: is not UTF-8 text \(invalid start byte at byte \d+\)\n", done.stderr), done.stderr
