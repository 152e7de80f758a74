"""The outcome-row entry points of 0.0 still work for one release: each warns and returns what it returned."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import stopwise
from stopwise.records import OutcomeColumns, read_outcomes


def _files(tmp_path: Path) -> list[Path]:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("system,task,outcome\nA,t1,1\nB,t1,0\n")
    b.write_text("system,task,outcome\nA,t2,1\nB,t2,0.5\n")
    return [a, b]


def test_the_old_readers_warn_and_return_their_old_types(tmp_path: Path) -> None:
    from stopwise.records import read_file_columns, read_outcome_columns, read_outcome_files

    files = _files(tmp_path)
    expected = read_outcomes(files).to_frame()
    with pytest.warns(DeprecationWarning, match=r"read_outcome_columns is deprecated .* use stopwise\.read_outcomes"):
        columns = read_outcome_columns(files)
    assert isinstance(columns, OutcomeColumns)
    pd.testing.assert_frame_equal(columns.to_frame(), expected)
    with pytest.warns(DeprecationWarning, match="read_file_columns is deprecated"):
        one = read_file_columns(files[0], format="csv")
    assert isinstance(one, OutcomeColumns) and one.task.tolist() == ["t1", "t1"]
    with pytest.warns(DeprecationWarning, match="read_outcome_files is deprecated"):
        frame = read_outcome_files(files)
    assert isinstance(frame, pd.DataFrame)
    pd.testing.assert_frame_equal(frame, expected)
    with pytest.warns(DeprecationWarning), pytest.raises(stopwise.ComparisonError, match="is already in"):
        read_outcome_files([files[0], files[0]])


def test_the_old_builders_warn_and_return_their_old_types() -> None:
    from stopwise.records import columns_of_frame, outcome_frame, validate_outcomes

    mappings = [{"system": "A", "task": "t", "outcome": 1, "flags": ["error"]}, {"system": "B", "task": "t", "outcome": 0}]
    expected = stopwise.outcome_columns(mappings).to_frame()
    with pytest.warns(DeprecationWarning, match=r"outcome_frame is deprecated .*outcome_columns\(rows\)\.to_frame\(\)"):
        frame = outcome_frame(mappings)
    pd.testing.assert_frame_equal(frame, expected)
    with pytest.warns(DeprecationWarning, match="validate_outcomes is deprecated"):
        validated = validate_outcomes(pd.DataFrame(mappings))
    pd.testing.assert_frame_equal(validated, expected)
    with pytest.warns(DeprecationWarning), pytest.raises(stopwise.ValidationError, match=r"<x>, row 1 \(line 2\), field 'outcome'"):
        validate_outcomes(pd.DataFrame({"system": ["A"], "task": ["t"], "outcome": [2]}), source="<x>", line_offset=2)
    with pytest.warns(DeprecationWarning, match="columns_of_frame is deprecated"):
        columns = columns_of_frame(expected)
    assert isinstance(columns, OutcomeColumns)
    pd.testing.assert_frame_equal(columns.to_frame(), expected)
    with pytest.warns(DeprecationWarning), pytest.raises(stopwise.ValidationError, match="must be a pandas DataFrame"):
        columns_of_frame(mappings)  # type: ignore[arg-type]


def test_the_top_level_names_are_the_same_aliases() -> None:
    with pytest.warns(DeprecationWarning, match="outcome_frame is deprecated"):
        frame = stopwise.outcome_frame([{"system": "A", "task": "t", "outcome": 1}])
    assert frame["system"].tolist() == ["A"]
