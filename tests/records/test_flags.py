"""The ``flags`` column: kept in every format, and a policy that excludes or counts rows by flag."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import stopwise
from stopwise.errors import ValidationError
from stopwise.records import outcome_columns, parse_policy, read_outcomes, write_outcomes


def _rows() -> pd.DataFrame:
    return outcome_columns(
        [
            {"system": "A", "task": "t1", "outcome": 1, "flags": ["limit:token", "error"]},
            {"system": "A", "task": "t2", "outcome": 1, "flags": "empty_patch"},
            {"system": "A", "task": "t3", "outcome": 0},
            {"system": "B", "task": "t1", "outcome": 0},
            {"system": "B", "task": "t2", "outcome": 0, "flags": ["error"]},
            {"system": "B", "task": "t3", "outcome": 0},
        ]
    ).to_frame()


def test_flags_are_canonical_tokens() -> None:
    assert _rows()["flags"].tolist() == ["error;limit:token", "empty_patch", "", "", "error", ""]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet", ".csv.gz", ".jsonl.gz"])
def test_flags_round_trip_in_every_format(tmp_path, suffix: str) -> None:
    rows = _rows()
    path = write_outcomes(rows, tmp_path / f"o{suffix}")
    pd.testing.assert_frame_equal(read_outcomes(path).to_frame(), rows)


def test_formats_store_flags_as_text_in_csv_and_lists_elsewhere(tmp_path) -> None:
    rows = _rows()
    assert "error;limit:token" in write_outcomes(rows, tmp_path / "o.csv").read_text()
    first = json.loads(write_outcomes(rows, tmp_path / "o.jsonl").read_text().splitlines()[0])
    assert first["flags"] == ["error", "limit:token"]
    assert pd.read_parquet(write_outcomes(rows, tmp_path / "o.parquet"))["flags"][0].tolist() == ["error", "limit:token"]


def test_old_files_without_flags_still_read(tmp_path) -> None:
    (tmp_path / "o.csv").write_text("system,task,outcome\nA,t1,1\n")
    assert read_outcomes(tmp_path / "o.csv")["flags"].tolist() == [""]


def test_a_flag_with_a_space_is_refused() -> None:
    with pytest.raises(ValidationError, match="field 'flags'"):
        outcome_columns([{"system": "A", "task": "t", "outcome": 1, "flags": ["harness error"]}])


def test_default_policy_counts_error_rows_in_the_record() -> None:
    record = stopwise.decide(_rows(), "A", "B", complete=True)
    assert [(f.flag, f.rows, f.tasks) for f in record.flagged] == [("error", 2, 2)]
    assert record.n_observed == 3
    assert not [e for e in record.excluded if e.reason.startswith("flag")]


def test_policy_excludes_error_rows_and_the_record_says_so() -> None:
    policy = parse_policy('[flags]\nexclude = ["error"]\ncount = ["empty_patch"]')
    record = stopwise.decide(_rows(), "A", "B", policy=policy, complete=True)
    assert [(e.reason, e.rows, e.tasks) for e in record.excluded if e.reason.startswith("flag")] == [
        ("flag error (policy excludes it)", 2, 2)
    ]
    # t1 and t2 each lose one side, so only t3 is observed; no used row carries empty_patch
    assert record.n_observed == 1
    assert record.flagged == []


def test_default_flags_section_keeps_the_policy_digest() -> None:
    assert "flags" not in stopwise.Policy().canonical_json()
    assert "flags" in parse_policy('[flags]\nexclude = ["error"]').canonical_json()
