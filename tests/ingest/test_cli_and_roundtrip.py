"""``stopwise ingest`` in-process, and the round trip harness logs -> ingest -> decide."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from stopwise.cli.main import main
from stopwise.compare import decide
from stopwise.ingest import ingest
from stopwise.records import DecisionRecord, Policy, read_outcomes, read_trajectories

FIXTURES = Path(__file__).parent / "fixtures"


def test_cli_writes_rows_and_trajectories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, traj = tmp_path / "outcomes.parquet", tmp_path / "traj.jsonl.gz"
    code = main(["ingest", str(FIXTURES / "tau2" / "airline_results.json"), "-o", str(out), "--trajectories", str(traj)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "4 outcome rows from 1 file (tau2): 1 systems, 2 tasks" in printed
    assert "status: final 3, pending 1" in printed
    assert "flagged: error 1, termination:infrastructure_error 1, termination:max_steps 1" in printed
    rows = read_outcomes(out).to_frame()
    assert rows.equals(ingest(FIXTURES / "tau2" / "airline_results.json").rows)
    assert [(t.task, t.attempt, len(t.steps)) for t in read_trajectories(traj)] == [("0", 0, 3), ("0", 1, 1), ("1", 0, 0), ("1", 1, 0)]


def test_cli_options_reach_the_library(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o.csv"
    instances = FIXTURES / "swebench" / "instances.txt"
    leaderboard = FIXTURES / "swebench" / "leaderboard"
    code = main(["ingest", str(leaderboard), "-o", str(out), "--instances", str(instances), "--errors", "drop",
                 "--empty-patch", "pending", "--system", "sweagent", "--format", "swebench"])
    assert code == 0
    rows = read_outcomes(out).to_frame()
    assert len(rows) == 7 and set(rows["system"]) == {"sweagent"}
    assert rows.loc[rows["task"] == "django__django-11133", "status"].item() == "pending"
    printed = capsys.readouterr().out
    assert "1 runs not turned into rows: 1 harness error (errors='drop')" in printed
    assert "skipped: " in printed and "sympy__sympy-24066" in printed


def test_cli_instances_as_json(tmp_path: Path) -> None:
    ids = [line for line in (FIXTURES / "swebench" / "instances.txt").read_text().splitlines() if "__" in line]
    (tmp_path / "ids.json").write_text(json.dumps(ids))
    leaderboard = FIXTURES / "swebench" / "leaderboard"
    assert main(["ingest", str(leaderboard), "-o", str(tmp_path / "o.jsonl"), "--instances", str(tmp_path / "ids.json")]) == 0
    assert len(read_outcomes(tmp_path / "o.jsonl")) == 8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json"], "error: missing.json: no such file or directory"),
        ([str(FIXTURES / "swebench" / "leaderboard")], "pass the dataset's instance ids as `instances`"),
        ([str(FIXTURES / "hal"), "--errors", "zero"], "ingest: `errors` must be one of 'pending', 'fail', 'drop'; got 'zero'."),
        ([str(FIXTURES / "hal"), "--instances", "nope.txt"], "nope.txt: cannot read the instance ids"),
    ],
)
def test_cli_input_errors_exit_4(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    out = tmp_path / "o.parquet"
    assert main(["ingest", *args, "-o", str(out)]) == 4
    assert message in capsys.readouterr().err.replace("\n", " ")
    assert not out.exists()


def test_cli_warns_when_no_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traj = tmp_path / "t.jsonl"
    assert main(["ingest", str(FIXTURES / "hal"), "-o", str(tmp_path / "o.csv"), "--trajectories", str(traj)]) == 0
    assert "no trajectories written" in capsys.readouterr().err
    assert not traj.exists()


# ---------------------------------------------------------------- round trip


def _run_report(path: Path, resolved: list[str], unresolved: list[str], errors: list[str] = (), empty: list[str] = ()) -> Path:
    path.write_text(json.dumps({
        "resolved_ids": resolved, "unresolved_ids": unresolved, "error_ids": list(errors), "empty_patch_ids": list(empty),
        "schema_version": 2,
    }))
    return path


def _instances() -> list[str]:
    repos = ["django__django", "sympy__sympy", "astropy__astropy", "pytest-dev__pytest"]
    return [f"{repo}-{1000 + i}" for repo in repos for i in range(10)]


def test_round_trip_swebench_to_decision(tmp_path: Path) -> None:
    ids = _instances()
    # A resolves 30 of 40 (one harness error among them), B resolves 8
    a = _run_report(tmp_path / "agent-a.run1.json", ids[:30], ids[31:], errors=[ids[30]])
    b = _run_report(tmp_path / "agent-b.run1.json", ids[::5], [i for i in ids if i not in ids[::5]][1:], empty=[ids[1]])
    result = ingest([a, b])
    assert result.status_counts() == {"final": 79, "pending": 1}
    record = decide(result.rows, "agent-a", "agent-b")
    assert isinstance(record, DecisionRecord)
    assert record.n_shared == 40
    assert record.n_observed == 39  # the harness error is not a 0: it is left out ...
    assert [(e.reason, e.rows, e.tasks) for e in record.excluded] == [  # ... and counted, with its partner row
        ("status pending (policy uses final)", 1, 1),
        ("partner system has no usable outcome on the task yet", 1, 1),
    ]
    a_solved, b_solved = set(ids[:30]), set(ids[::5])
    observed = [i for i in ids if i != ids[30]]
    assert record.delta_hat == pytest.approx(sum((i in a_solved) - (i in b_solved) for i in observed) / 39)
    # an open run keeps the full-budget comparison open
    assert record.action == "continue" and not record.budget.at_limit
    assert {g.group for g in record.coverage.groups} == {"django/django", "sympy/sympy", "astropy/astropy", "pytest-dev/pytest"}

    # a budget of 39 of the 40 tasks is reached by the 39 observed tasks: a final action (a lower limit with
    # these rows would be a look past the limit, refused without the planned order: issue 21)
    at_limit = decide(result.rows, "agent-a", "agent-b", Policy(budget={"limit": 0.975}), complete=True)
    assert (at_limit.action, at_limit.budget.at_limit) == ("promote", True)
    # the leaderboard convention (errors count as failures): nothing excluded, all 40 observed
    strict = decide(ingest([a, b], errors="fail").rows, "agent-a", "agent-b", complete=True)
    assert (strict.action, strict.n_observed, strict.excluded) == ("promote", 40, [])
    assert strict.delta_hat == pytest.approx(sum((i in a_solved) - (i in b_solved) for i in ids) / 40)


def test_round_trip_through_files_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = _instances()
    _run_report(tmp_path / "agent-a.run1.json", ids[:25], ids[25:])
    _run_report(tmp_path / "agent-b.run1.json", ids[:24], ids[24:])
    out = tmp_path / "rows.parquet"
    assert main(["ingest", str(tmp_path), "-o", str(out)]) == 0
    in_memory = decide(ingest(tmp_path).rows, "agent-a", "agent-b")
    from_file = decide(read_outcomes(out), "agent-a", "agent-b")
    assert from_file.input_sha256 == in_memory.input_sha256
    assert (from_file.action, from_file.n_observed, from_file.delta_hat) == (in_memory.action, 40, pytest.approx(1 / 40))
    capsys.readouterr()
    code = main(["decide", str(out), "--tested", "agent-a", "--baseline", "agent-b", "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert printed["action"] == in_memory.action and code == ["promote", "reject", "continue", "abstain"].index(printed["action"])


def test_round_trip_inspect_epochs(tmp_path: Path) -> None:
    # two Inspect "systems" from one fixture: the same log under two names, one with a flipped epoch
    log = json.loads((FIXTURES / "inspect" / "gsm_small.json").read_text())
    (tmp_path / "a.json").write_text(json.dumps(log))
    log["eval"]["model"] = "openai/gpt-4o"
    log["samples"][1]["scores"]["match"]["value"] = "C"
    (tmp_path / "b.json").write_text(json.dumps(log))
    rows = ingest(tmp_path).rows
    record = decide(rows, "openai/gpt-4o", "anthropic/claude-3-5-sonnet-20241022", Policy(coverage={"rule": "none"}))
    # task "1": B averages (1+1)/2, A (1+0)/2; task "2": only epoch 1 is final for both; task "q3": equal
    assert record.n_observed == 3
    assert record.delta_hat == pytest.approx((0.5 + 0.0 + 0.0) / 3)
    assert [(e.reason, e.rows, e.tasks) for e in record.excluded] == [("status pending (policy uses final)", 2, 1)]
    assert record.r_promote is not None and math.isfinite(record.r_promote)
