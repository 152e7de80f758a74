"""Messages that help: "did you mean" for a misspelt system or task, repeated problems counted once, --json on every command with a result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stopwise import write_outcomes
from stopwise.cli.main import main
from stopwise.records import synthetic_benchmark


@pytest.fixture
def outcomes(tmp_path: Path) -> Path:
    return write_outcomes(synthetic_benchmark(60, 3, rng=0), tmp_path / "outcomes.csv")


def test_decide_names_the_closest_systems_first(outcomes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", str(outcomes), "-t", "sytem-02", "-b", "system-01"]) == 4
    err = capsys.readouterr().err
    assert "tested system 'sytem-02' is absent from the outcome rows; did you mean 'system-02'" in err
    assert "systems present: system-02, " in err  # the closest first


def test_ledger_append_of_other_systems_counts_one_problem_with_a_hint(
    tmp_path: Path, outcomes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "ledger.db")
    assert main(["ledger", "init", db, "ev", "-t", "system-1", "-b", "system-2", "--n-tasks", "60"]) == 0
    capsys.readouterr()
    assert main(["ledger", "append", db, "ev", str(outcomes)]) == 4
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "field 'system'" in line]
    assert len(lines) == 3, err  # one line for each of system-01, system-02 and system-03 (60 rows each)
    assert "(the evaluation's systems; did you mean 'system-1'?); got 'system-01' (×60: rows 1, 2, 3, …)" in lines[0]
    assert "180 problems in the input" in err


def test_ledger_append_json_and_watch_json(tmp_path: Path, outcomes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "ledger.db")
    assert main(["ledger", "init", db, "ev", "-t", "system-01", "-b", "system-02", "--n-tasks", "60"]) == 0
    rows = synthetic_benchmark(60, 3, rng=0)
    two = write_outcomes(rows[rows["system"].isin(["system-01", "system-02"])], tmp_path / "two.csv")
    capsys.readouterr()
    assert main(["ledger", "append", db, "ev", str(two), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "accepted": 120, "duplicates": 0, "conflicts": 0, "conflict_keys": [], "after_decision": 0,  # nothing decided yet
    }
    code = main(["watch", db, "ev", "--once", "--json", "--no-record"])
    record = json.loads(capsys.readouterr().out)
    assert record["tested"] == "system-01" and ["promote", "reject", "continue", "abstain"].index(record["action"]) == code


def test_replay_policy_file_alone_replays_that_file(tmp_path: Path, outcomes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stopwise.records import DEFAULT_POLICY_TOML

    policy = tmp_path / "mine.toml"
    policy.write_text(DEFAULT_POLICY_TOML, encoding="utf-8")
    assert main(["replay", str(outcomes), "--orders", "3", "--policy", str(policy), "--json", "-q"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert main(["replay", str(outcomes), "--orders", "3", "--policy", str(policy), "--policies", "as-given", "--json", "-q"]) == 0
    as_given = json.loads(capsys.readouterr().out)
    assert main(["replay", str(outcomes), "--orders", "3", "--json", "-q"]) == 0
    named = json.loads(capsys.readouterr().out)
    assert alone["settings"]["policies"] == as_given["settings"]["policies"] != named["settings"]["policies"]


def test_ledger_append_names_the_closest_planned_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = synthetic_benchmark(60, 3, rng=0)
    rows = rows[rows["system"].isin(["system-01", "system-02"])]
    tasks = tmp_path / "tasks.csv"
    rows.drop_duplicates("task")[["task", "group"]].to_csv(tasks, index=False)
    db = str(tmp_path / "ledger.db")
    assert main(["ledger", "init", db, "ev", "-t", "system-01", "-b", "system-02", "--tasks", str(tasks)]) == 0
    first = rows[rows["task"] == "repo-alpha-0000"]  # both systems' rows of one task
    misspelt = first.assign(task="repo-alpa-0000")  # an h left out
    capsys.readouterr()
    assert main(["ledger", "append", db, "ev", str(write_outcomes(misspelt, tmp_path / "bad.csv"))]) == 4
    err = capsys.readouterr().err
    assert "must be a task of the evaluation's planned universe (did you mean 'repo-alpha-0000'" in err
    assert "row 2, field 'task'" in err  # two rows: each named, as before


def test_ledger_append_takes_several_files_as_decide_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two files (one of them standard input) are appended as one batch: their rows together, none twice."""
    rows = synthetic_benchmark(60, 3, rng=0)
    rows = rows[rows["system"].isin(["system-01", "system-02"])]
    first = write_outcomes(rows.iloc[:70], tmp_path / "first.csv")
    second = write_outcomes(rows.iloc[70:], tmp_path / "second.csv")
    db = str(tmp_path / "ledger.db")
    assert main(["ledger", "init", db, "ev", "-t", "system-01", "-b", "system-02", "--n-tasks", "60"]) == 0
    capsys.readouterr()
    assert main(["ledger", "append", db, "ev", str(first), str(second), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accepted"] == len(rows) == 120
    assert main(["ledger", "append", db, "ev", str(second), str(first), "--json"]) == 0  # a repeat, in another order
    assert json.loads(capsys.readouterr().out) | {"conflict_keys": []} == {
        "accepted": 0, "duplicates": 120, "conflicts": 0, "conflict_keys": [], "after_decision": 0,
    }
    assert main(["ledger", "append", db, "ev", "-", "-"]) == 4
    assert "standard input ('-') can be read once" in capsys.readouterr().err
