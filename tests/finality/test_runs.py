"""Reading the runs to check (CSV, JSONL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise.errors import FileFormatError, ValidationError
from stopwise.finality import read_scored_runs

FIXTURES = Path(__file__).parent / "fixtures"


def test_csv_runs() -> None:
    runs = read_scored_runs(FIXTURES / "runs.csv")
    assert [(r.run, r.system, r.outcome, r.environment, r.group) for r in runs] == [
        ("A", "A", 0.0, "shared", "delay-100ms"),
        ("B", "B", 1.0, "shared", "delay-100ms"),
    ]
    assert runs[1].scored_at is not None and runs[1].scored_at.microsecond == 200000


def test_jsonl_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "runs.jsonl"
    path.write_text(
        '{"run": "a", "system": "A", "task": "t", "outcome": 1}\n\n{"run": "b", "system": "B", "task": "t", "outcome": 0}\n'
    )
    assert [r.run for r in read_scored_runs(path)] == ["a", "b"]
    path.write_text('{"run": "a", "system": "A", "task": "t", "outcome": 1, "score": 1}\n')
    with pytest.raises(ValidationError, match=r"row 1 \(line 1\), field 'score': is not a known field"):
        read_scored_runs(path)
    path.write_text("[1]\n")
    with pytest.raises(FileFormatError, match="line 1: must be a JSON object"):
        read_scored_runs(path)


def test_bad_csv_lists_every_problem() -> None:
    path = FIXTURES / "runs-bad.csv"
    with pytest.raises(ValidationError) as info:
        read_scored_runs(path)
    text = str(info.value)
    for line in [
        f"{path}, row 1 (line 2), field 'outcome': must be <= 1; got '1.5'",
        f"{path}, row 2 (line 3), field 'attempt': must be >= 0; got '-1'",
        f"{path}, row 2 (line 3), field 'scored_at': must be an ISO 8601 date-time; got 'yesterday'",
        f"{path}, row 3 (line 4), field 'system': is required",
    ]:
        assert line in text, line


def test_files_that_cannot_be_runs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FileFormatError, match="no such runs file"):
        read_scored_runs(tmp_path / "none.csv")
    (tmp_path / "runs.txt").write_text("x")
    with pytest.raises(FileFormatError, match=r"must be a .csv or .jsonl file"):
        read_scored_runs(tmp_path / "runs.txt")
    (tmp_path / "empty.csv").write_text("run,system,task,outcome\n")
    with pytest.raises(FileFormatError, match="holds no runs"):
        read_scored_runs(tmp_path / "empty.csv")
    (tmp_path / "extra.csv").write_text("run,system,task,outcome,score\n")
    with pytest.raises(ValidationError, match="field 'score': unknown column"):
        read_scored_runs(tmp_path / "extra.csv")
