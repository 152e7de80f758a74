"""``stopwise decide``, ``policy`` and ``demo`` run in-process: exit codes, messages, files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from stopwise import DecisionRecord, write_outcomes
from stopwise.cli.main import main
from stopwise.records import DEFAULT_POLICY_TOML, PAPER_POLICY_TOML


def _outcomes(tmp_path: Path, wins_a: int, wins_b: int, ties: int = 20, pending: int = 0) -> Path:
    rows = []
    for i in range(wins_a + wins_b + ties + pending):
        a, b = (1, 0) if i < wins_a else (0, 1) if i < wins_a + wins_b else (1, 1)
        status = "pending" if i >= wins_a + wins_b + ties else "final"
        for system, value in (("A", a), ("B", b)):
            rows.append({"system": system, "task": f"t{i:03d}", "outcome": value if status == "final" else None,
                         "group": "g", "status": status})
    return write_outcomes(pd.DataFrame(rows), tmp_path / "outcomes.csv")


def _policy(tmp_path: Path, text: str = "") -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(DEFAULT_POLICY_TOML + text)
    return path


@pytest.mark.parametrize(
    ("wins_a", "wins_b", "pending", "limit", "action", "code"),
    [(15, 1, 0, 1.0, "promote", 0), (1, 15, 0, 1.0, "reject", 1), (15, 1, 20, 0.9, "continue", 2), (3, 2, 0, 1.0, "abstain", 3)],
)
def test_exit_code_is_the_action(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], wins_a: int, wins_b: int, pending: int, limit: float, action: str, code: int
) -> None:
    outcomes = _outcomes(tmp_path, wins_a, wins_b, pending=pending)
    policy = tmp_path / "p.toml"
    policy.write_text(PAPER_POLICY_TOML.replace("limit = 1.0", f"limit = {limit}"))  # the bootstrap tail: 3 vs 2 abstains
    argv = ["decide", str(outcomes), "--tested", "A", "--baseline", "B", "--policy", str(policy), "--complete"]
    assert main([*argv, "--json"]) == code
    record = DecisionRecord.model_validate(json.loads(capsys.readouterr().out))
    assert record.action == action and record.universe is not None and record.universe.source == "complete-record"
    assert main(["decide", str(outcomes), "-t", "A", "-b", "B", "-p", str(policy), "--complete"]) == code
    assert action.upper() in capsys.readouterr().out


def test_budget_used_option(tmp_path: Path) -> None:
    outcomes = _outcomes(tmp_path, 15, 1, pending=20)
    policy = tmp_path / "p.toml"
    policy.write_text(DEFAULT_POLICY_TOML.replace("limit = 1.0", "limit = 0.9"))
    args = ["decide", str(outcomes), "-t", "A", "-b", "B", "-p", str(policy)]
    assert main(args) == 2
    assert main([*args, "--budget-used", "0.9"]) == 0


@pytest.mark.parametrize(
    ("content", "extra", "fragments"),
    [
        ("system,task,outcome\nA,t1,1.5\nB,t1,0\n", [], ["outcomes.csv, row 1 (line 2), field 'outcome'", "'1.5'"]),
        ("system,task,outcome\nA,t1,1\nB,t1,0\n", ["-t", "C"], ["tested system 'C' is absent", "systems present: A, B"]),
        ("", [], ["empty"]),
        ("system,task,outcome,status\nA,t1,1,maybe\nB,t1,0,final\n", [], ["field 'status'", "'maybe'"]),
    ],
)
def test_bad_input_exits_4_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, extra: list[str], fragments: list[str]
) -> None:
    path = tmp_path / "outcomes.csv"
    path.write_text(content)
    before = sorted(tmp_path.iterdir())
    argv = ["decide", str(path), "-t", "A", "-b", "B", *extra]
    if extra:
        argv = ["decide", str(path), "-b", "B", *extra]
    assert main(argv) == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err
    assert sorted(tmp_path.iterdir()) == before


def test_bad_policy_exits_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = _outcomes(tmp_path, 5, 1)
    policy = _policy(tmp_path, "\n[extra]\nx = 1\n")
    assert main(["decide", str(outcomes), "-t", "A", "-b", "B", "-p", str(policy)]) == 4
    assert "field 'extra'" in capsys.readouterr().err


def test_usage_error_exits_4(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", "x.csv"]) == 4
    assert "Missing option" in capsys.readouterr().err


def test_policy_init_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "policy.toml"
    assert main(["policy", "init", str(target)]) == 0
    assert target.read_text() == DEFAULT_POLICY_TOML
    assert main(["policy", "init", str(target)]) == 4
    assert "--force" in capsys.readouterr().err
    assert main(["policy", "check", str(target)]) == 0
    assert "sha256 " in capsys.readouterr().out


def test_demo_runs_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--n-tasks", "120", "--systems", "4", "--out", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "SYNTHETIC" in out and "Decision record at 100 % budget" in out
    lines = (tmp_path / "demo" / "decisions.jsonl").read_text().splitlines()
    assert len(lines) == 6
    records = [DecisionRecord.model_validate_json(line) for line in lines]
    assert [r.n_observed for r in records] == [6, 12, 30, 60, 90, 120]
    assert main(["demo", "--n-tasks", "120", "--systems", "4", "--json"]) == 0
    again = [DecisionRecord.model_validate_json(line) for line in capsys.readouterr().out.splitlines()]
    assert [r.digest() for r in again] == [r.digest() for r in records]  # equal but for decided_at


def test_demo_never_writes_into_a_directory_it_did_not_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "decisions.jsonl").write_text("my own notes\n")
    assert main(["demo", "--n-tasks", "60", "--systems", "3", "--out", str(mine)]) == 4
    assert "is a directory stopwise did not write" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["decisions.jsonl"] and (mine / "decisions.jsonl").read_text() == "my own notes\n"
    ours = tmp_path / "ours"
    assert main(["demo", "--n-tasks", "60", "--systems", "3", "--out", str(ours)]) == 0
    assert main(["demo", "--n-tasks", "60", "--systems", "3", "--out", str(ours)]) == 4
    assert "pass --force to replace it" in capsys.readouterr().err
    assert main(["demo", "--n-tasks", "60", "--systems", "3", "--seed", "1", "--out", str(ours), "--force"]) == 0
    assert {p.name for p in ours.iterdir()} == {".stopwise-output", "decisions.jsonl", "synthetic_outcomes.csv"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".stopwise-tmp")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "-1"], "Invalid value for '--seed'"),  # a usage error: exit 4 like every input error
        (["--n-tasks", "10001"], "the demo takes --n-tasks 6 to 10,000 and --systems 2 to 20; got --n-tasks 10,001"),
        (["--systems", "21"], "got --n-tasks 400, --systems 21"),
        (["--n-tasks", "5"], "the demo takes --n-tasks 6 to 10,000 and --systems 2 to 20; got --n-tasks 5, --systems 8"),
        (["--systems", "1"], "got --n-tasks 400, --systems 1"),
    ],
)
def test_demo_refuses_bad_sizes_and_seeds(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", *args]) == 4
    err = capsys.readouterr().err
    assert message in err
    assert "n_tasks" not in err and "n_systems" not in err  # the flags, not the library's parameter names


def test_demo_lower_bounds_are_the_synthetic_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    """The smallest sizes the command allows are the smallest the library accepts (one task per group, two systems)."""
    from stopwise.cli.compare import MIN_DEMO_SYSTEMS, MIN_DEMO_TASKS
    from stopwise.errors import ArgumentError
    from stopwise.records import synthetic_benchmark

    assert main(["demo", "--n-tasks", str(MIN_DEMO_TASKS), "--systems", str(MIN_DEMO_SYSTEMS), "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 6
    for n_tasks, n_systems in ((MIN_DEMO_TASKS - 1, MIN_DEMO_SYSTEMS), (MIN_DEMO_TASKS, MIN_DEMO_SYSTEMS - 1)):
        with pytest.raises(ArgumentError):
            synthetic_benchmark(n_tasks, n_systems, rng=0)


def test_order_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("task,group\n" + "".join(f"t{i},{'ab'[i % 2]}\n" for i in range(8)))
    assert main(["order", str(tasks), "-o", str(tmp_path / "order.csv")]) == 0
    assert "coverage rule first met after 2 tasks" in capsys.readouterr().out
    order = pd.read_csv(tmp_path / "order.csv")
    assert order.columns.tolist() == ["position", "task", "group", "covered", "order_kind", "order_seed", "order_sha256"] and len(order) == 8
    # the default policy draws a uniform order (issue 35); the paper's preset a coverage-aware one
    assert set(order["order_kind"]) == {"uniform"} and set(order["order_seed"]) == {0} and order["order_sha256"].nunique() == 1
    assert main(["order", str(tasks)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == (tmp_path / "order.csv").read_text().splitlines()
    (tmp_path / "paper.toml").write_text(PAPER_POLICY_TOML)
    assert main(["order", str(tasks), "-p", str(tmp_path / "paper.toml"), "-o", str(tmp_path / "paper.csv")]) == 0
    assert "coverage rule first met after 2 tasks" in capsys.readouterr().out
    assert set(pd.read_csv(tmp_path / "paper.csv")["order_kind"]) == {"coverage-aware"}
    (tmp_path / "bad.csv").write_text("name\nx\n")
    assert main(["order", str(tmp_path / "bad.csv")]) == 4
    assert "needs a 'task' column" in capsys.readouterr().err


def test_decide_with_the_planned_tasks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = _outcomes(tmp_path, 15, 1)  # 36 tasks t000..t035, all final, group g
    base = ["decide", str(outcomes), "-t", "A", "-b", "B"]
    assert main(base) == 2
    assert "no task universe given" in capsys.readouterr().out
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("task,group\n" + "".join(f"t{i:03d},g\n" for i in range(36)))
    assert main([*base, "--tasks", str(tasks), "--json"]) == 0
    record = DecisionRecord.model_validate(json.loads(capsys.readouterr().out))
    assert record.universe is not None and (record.universe.source, record.universe.n_tasks) == ("tasks", 36)
    assert record.decided_at is not None
    # the same tasks planned among 400: budget remains, continue; the coverage table lists planned groups
    assert main([*base, "--n-tasks", "400", "--group-size", "g=300", "--group-size", "h=100"]) == 2
    out = capsys.readouterr().out
    assert "universe   counts: N = 400" in out and "missing h" in out
    assert main([*base, "--group-size", "g=36", "--json"]) == 0  # N from the group sizes
    capsys.readouterr()


def test_decide_order_output_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = _outcomes(tmp_path, 15, 1)
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("task,group\n" + "".join(f"t{i:03d},g\n" for i in range(36)))
    assert main(["order", str(tasks), "-o", str(tmp_path / "order.csv")]) == 0
    capsys.readouterr()
    assert main(["decide", str(outcomes), "-t", "A", "-b", "B", "--tasks", str(tmp_path / "order.csv"), "--json"]) == 0
    record = DecisionRecord.model_validate(json.loads(capsys.readouterr().out))
    assert record.universe is not None and record.universe.ordered


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--budget-used", "5"], "budget used 5 exceeds the policy's budget limit 1"),
        (["--budget-used", "-1"], "finite number >= 0"),
        (["--group-size", "g"], "--group-size must be NAME=COUNT"),
        (["--group-size", "g=0"], "--group-size must be NAME=COUNT"),
        (["--n-tasks", "0"], "field 'n_tasks'"),
        (["--n-tasks", "10"], "the rows name 36 tasks but the task universe plans 10"),
        (["--n-tasks", "50", "--tasks", "x.csv"], "either as --tasks FILE or as --n-tasks"),
        (["--tasks", "missing.csv"], "missing.csv: no such file"),
    ],
)
def test_universe_and_budget_errors_exit_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str
) -> None:
    outcomes = _outcomes(tmp_path, 15, 1)
    assert main(["decide", str(outcomes), "-t", "A", "-b", "B", *extra]) == 4
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_several_outcome_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _outcomes(tmp_path / "a", 15, 1)
    second = tmp_path / "b" / "more.csv"
    second.write_text("system,task,outcome,group\n" + "".join(f"{s},u{i},{int(s == 'A')},g\n" for i in range(4) for s in "AB"))
    assert main(["decide", str(first), str(second), "-t", "A", "-b", "B", "--complete", "--json"]) == 0
    record = DecisionRecord.model_validate(json.loads(capsys.readouterr().out))
    assert record.n_observed == 40
    assert main(["decide", str(first), str(first), "-t", "A", "-b", "B"]) == 4
    err = capsys.readouterr().err
    assert "row 1: (system, task, attempt) = (A, t000, 0) is already in" in err and "is a file given twice?" in err
    bad = tmp_path / "b" / "bad.csv"
    bad.write_text("system,task,outcome\nA,x,2\n")
    assert main(["decide", str(first), str(bad), "-t", "A", "-b", "B"]) == 4
    assert "bad.csv, row 1 (line 2), field 'outcome'" in capsys.readouterr().err


def test_decide_says_when_the_bounded_treatment_rests_on_the_halting_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``predicted = "bounded"`` (issue 34): the console names the margin's assumption, valid on the calibration runs only."""
    rows = []
    for i in range(60):
        a, b = (1, 0) if i < 30 else (1, 1)
        rows.append({"system": "A", "task": f"t{i:03d}", "outcome": a, "status": "predicted" if i % 3 == 0 else "final",
                     "flags": "predicted" if i % 3 == 0 else ""})
        rows.append({"system": "B", "task": f"t{i:03d}", "outcome": b})
    outcomes = write_outcomes(pd.DataFrame(rows), tmp_path / "outcomes.csv")
    policy = tmp_path / "policy.toml"
    policy.write_text('[decision]\nboundary = "betting-wor"\npredicted = "bounded"\n[coverage]\nrule = "none"\n[early]\nhalt_error_bound = 0.05\n')
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("task\n" + "".join(f"t{i:03d}\n" for i in range(60)))
    assert main(["order", str(tasks), "-o", str(tmp_path / "order.csv")]) == 0
    capsys.readouterr()
    code = main(["decide", str(outcomes), "-t", "A", "-b", "B", "--tasks", str(tmp_path / "order.csv"), "--policy", str(policy)])
    out = " ".join(capsys.readouterr().out.split())
    assert code in (0, 2), out
    assert 'warning predicted = "bounded"' in out and "calibration distribution" in out
