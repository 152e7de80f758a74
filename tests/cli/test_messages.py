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


_INSPECT_LOG = Path(__file__).parents[1] / "ingest" / "fixtures" / "inspect" / "gsm_small.json"


def _inspect_log(path: Path, n_samples: int, early_stops: list[dict[str, object]] | None = None) -> Path:
    """The Inspect fixture log with ``n_samples`` scored samples (epoch 1) and, when given, the manager's early stops."""
    log = json.loads(_INSPECT_LOG.read_text(encoding="utf-8"))
    log["samples"] = [{**log["samples"][0], "id": f"s{i:02d}"} for i in range(n_samples)]
    if early_stops is not None:
        log["results"]["early_stopping"] = {"manager": "stopwise (ev: tested anthropic/claude-3-5-sonnet-20241022)", "early_stops": early_stops}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(log), encoding="utf-8")
    return path


def _problem_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("  ")]


def test_thirty_keys_read_twice_are_one_line_with_a_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One log given twice: 30 (system, task, attempt) keys read twice are one problem line (×30), as docs/cli.md says."""
    _inspect_log(tmp_path / "logs" / "a.json", 30)
    _inspect_log(tmp_path / "logs" / "b.json", 30)
    assert main(["ingest", str(tmp_path / "logs"), "-o", str(tmp_path / "rows.csv")]) == 4
    err = capsys.readouterr().err
    assert "error: 30 problems in the input:" in err
    lines = _problem_lines(err)
    assert len(lines) == 1, err
    assert "must be unique but is read twice" in lines[0] and lines[0].endswith("… (×30)")
    assert lines[0].count("claude-3-5-sonnet-20241022, s0") == 3  # the first three keys, then "…"
    assert not (tmp_path / "rows.csv").exists()


def test_thirty_identical_problems_are_one_line_with_a_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """30 rows breaking one rule with one value (another system's rows) are one line: the count and the first rows."""
    rows = synthetic_benchmark(30, 3, rng=0)
    db = str(tmp_path / "ledger.db")
    assert main(["ledger", "init", db, "ev", "-t", "system-01", "-b", "system-02", "--n-tasks", "30"]) == 0
    third = write_outcomes(rows[rows["system"] == "system-03"], tmp_path / "third.csv")
    capsys.readouterr()
    assert main(["ledger", "append", db, "ev", str(third)]) == 4
    err = capsys.readouterr().err
    assert "30 problems in the input" in err
    lines = _problem_lines(err)
    assert len(lines) == 1 and "got 'system-03' (×30: rows 1, 2, 3, …)" in lines[0], err


def test_a_few_problems_are_each_named() -> None:
    """Three problems of one rule stay three lines (collapsing starts above 3, as documented)."""
    from stopwise.cli._common import _collapsed_problems
    from stopwise.errors import Problem, ValidationError

    three = [Problem("b.json", None, "task", "must be unique but is read twice", f"t{i}") for i in range(3)]
    assert _collapsed_problems(ValidationError(three)).count("\n  ") == 3
    mixed = [*three, *(Problem("b.json", None, "task", "must be unique but is read twice", "t0") for _ in range(2))]
    assert _collapsed_problems(ValidationError([*mixed, three[1]])).endswith("got 't0', 't1', 't2' (×6 in 3 values)")


def test_runs_skipped_by_a_manager_are_counted_by_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """20 budget stops and 5 promote stops: one short summary line counted by cause, one line per cause, no doubled words."""
    budget = [
        {"id": f"b{i:02d}", "epoch": 1, "reason": f"stopwise budget: planned task {i + 21} of 40 is beyond the policy's budget of 20 tasks",
         "metadata": {"action": "budget"}}
        for i in range(20)
    ]
    promote = [{"id": f"p{i}", "epoch": 1, "reason": "stopwise promote: " + "the bound is above -delta; " * 8, "metadata": {}} for i in range(5)]
    log = _inspect_log(tmp_path / "log.json", 6, budget + promote)
    assert main(["ingest", str(log), "-o", str(tmp_path / "rows.csv")]) == 0
    out = capsys.readouterr().out
    summary = next(line for line in out.splitlines() if "not turned into rows" in line)
    assert summary == "25 runs not turned into rows: 25 skipped by the early-stopping manager: 20 budget, 5 promote"
    skipped = [line for line in out.splitlines() if line.startswith("  skipped: ")]
    assert len(skipped) == 2, out
    assert "20 runs (sample b00 epoch 1, sample b01 epoch 1, sample b02 epoch 1, …)" in skipped[0]
    assert "planned task 21 of 40" in skipped[0] and "5 runs (sample p0 epoch 1" in skipped[1]
    assert "not run: skipped" not in out and "skipped: skipped" not in out
    assert main(["ingest", str(log), "-o", str(tmp_path / "rows.csv"), "--force", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["skipped"]
    assert [s["cause"] for s in listed] == ["skipped by the early-stopping manager: budget"] * 20 + ["skipped by the early-stopping manager: promote"] * 5
    reasons = [s["reason"] for s in listed]
    assert len(reasons) == 25 and reasons[0].endswith("planned task 21 of 40 is beyond the policy's budget of 20 tasks")  # each run's own reason kept


@pytest.mark.parametrize(("boundary", "when"), [("fixed-budget", "decide at the limit (the fixed-budget rule acts only there)"),
                                                 ("betting-wor", "decide before the limit")])
def test_the_forecast_says_when_the_rule_decides(tmp_path: Path, boundary: str, when: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A fixed-budget rule decides only at the limit: its forecast never says "decide before the limit"; betting-wor's may."""
    from stopwise.records import DEFAULT_POLICY_TOML

    rows = synthetic_benchmark(200, 3, rng=0)
    rows = rows[rows["system"].isin(["system-02", "system-03"])]
    import pandas as pd

    rows.drop_duplicates("task")[["task", "group"]].to_csv(tmp_path / "tasks.csv", index=False)
    policy = tmp_path / "policy.toml"
    policy.write_text(DEFAULT_POLICY_TOML.replace('boundary = "fixed-budget"', f'boundary = "{boundary}"'), encoding="utf-8")
    assert f'boundary = "{boundary}"' in policy.read_text()
    assert main(["order", str(tmp_path / "tasks.csv"), "--policy", str(policy), "-o", str(tmp_path / "order.csv")]) == 0
    first = pd.read_csv(tmp_path / "order.csv", comment="#")["task"].iloc[:30]
    seen = write_outcomes(rows[rows["task"].isin(first)], tmp_path / "seen.csv")
    assert main(["decide", str(seen), "-t", "system-03", "-b", "system-02", "--tasks", str(tmp_path / "order.csv"), "--policy", str(policy)]) == 2
    out = capsys.readouterr().out
    forecast = next(line for line in out.splitlines() if line.strip().startswith("forecast"))
    assert when in forecast and ("before the limit" not in forecast) == (boundary == "fixed-budget"), forecast
    decision = tmp_path / "decision.json"
    assert main(["decide", str(seen), "-t", "system-03", "-b", "system-02", "--tasks", str(tmp_path / "order.csv"), "--policy", str(policy), "--json"]) == 2
    decision.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["report", str(decision), "-o", str(tmp_path / "report.html")]) == 0
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert ("simulated completions decide at the budget limit" in page) == (boundary == "fixed-budget")
