"""``stopwise leaderboard`` in-process: the family's claim and control first, --json, --html, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tests.conftest import shared_path

from stopwise.cli.main import main
from stopwise.records import DEFAULT_POLICY_TOML, FamilyRecord, write_outcomes


def _record(tmp_path: Path, rates: dict[str, float], n: int = 300) -> Path:
    rows = [{"system": s, "task": f"t{i:03d}", "outcome": int(i < r * n), "group": "g"} for s, r in rates.items() for i in range(n)]
    return write_outcomes(pd.DataFrame(rows), tmp_path / "outcomes.csv")


def test_a_complete_record_prints_the_control_the_claim_ranks_and_tiers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _record(tmp_path, {"A": 0.9, "B": 0.6, "C": 0.58, "D": 0.2})
    assert main(["leaderboard", str(path), "--complete"]) == 2  # B and C are not separated: it needs more tasks
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("NEEDS MORE TASKS") and "control FWER 5 %" in lines[0]
    assert lines[1].startswith("  claim") and "A is best" in lines[1]
    assert "[2, 3]" in out and "tier 2  B, C (not separated)" in out and "task distribution" in out
    assert main(["leaderboard", str(path), "--complete", "--systems", "A,B,D"]) == 0  # every pair separated: answered
    capsys.readouterr()


def test_json_carries_the_pairs_tiers_and_control(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _record(tmp_path, {"A": 0.9, "B": 0.6, "C": 0.58})
    assert main(["leaderboard", str(path), "--complete", "--json", "--control", "fdr"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["control"] == "fdr" and data["tiers"][0]["systems"] == ["A"]
    assert {(p["tested"], p["baseline"], p["action"]) for p in data["pairs"]} >= {("A", "B", "promote"), ("B", "A", "reject")}
    assert FamilyRecord.model_validate(data).estimand == "task-distribution"


def test_baseline_option_and_html_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _record(tmp_path, {"prod": 0.5, "up": 0.9, "down": 0.1})
    page = tmp_path / "family.html"
    assert main(["leaderboard", str(path), "--complete", "--baseline", "prod", "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "candidates against prod" in out and "1 of 2 candidates beat prod" in out
    html = page.read_text()
    assert '<meta name="stopwise-report" content="family">' in html and "FWER 5 %" in html.split('id="section-0"')[0]
    assert main(["report", str(page.with_suffix(".json"))]) == 4  # no such file
    capsys.readouterr()
    assert main(["leaderboard", str(path), "--complete", "--baseline", "prod", "--json"]) == 0
    family_json = tmp_path / "family.json"
    family_json.write_text(capsys.readouterr().out)
    assert main(["report", str(family_json), "-o", str(tmp_path / "again.html")]) == 0
    assert "family report" in capsys.readouterr().out


def test_a_policy_section_and_the_planned_tasks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _record(tmp_path, {"A": 0.95, "B": 0.5})
    policy = tmp_path / "policy.toml"
    policy.write_text(DEFAULT_POLICY_TOML.replace('boundary = "fixed-budget"', 'boundary = "betting-wor"').replace('order_check = "refuse"', 'order_check = "warn"'))
    tasks = tmp_path / "tasks.csv"
    pd.DataFrame({"task": [f"t{i:03d}" for i in range(300)][::-1], "group": "g"}).to_csv(tasks, index=False)
    # a hand-written order: refused even under order_check = "warn" (its stratified fallback is retired, issue 33)
    assert main(["leaderboard", str(path), "--tasks", str(tasks), "-p", str(policy), "--json"]) == 4
    assert "retired" in capsys.readouterr().err
    order = tmp_path / "order.csv"
    assert main(["order", str(tasks), "-p", str(policy), "-o", str(order)]) == 0
    capsys.readouterr()
    assert main(["leaderboard", str(path), "--tasks", str(order), "-p", str(policy), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["estimand"] == "planned-tasks" and data["evidence"] == "e-process" and data["best"] == "A"
    assert not any("provenance" in w or "uniformly random permutation" in w for w in data["warnings"])


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        ([], "needs the planned tasks"),
        (["--complete", "--control", "holm"], "--control"),
        (["--complete", "--systems", "A,Z"], "have no outcome rows"),
        (["--complete", "--baseline", "Z"], "baseline 'Z'"),
        (["--complete", "--kind", "best", "--control", "fdr"], "family-wise statement"),
    ],
)
def test_input_errors_exit_4_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str) -> None:
    path = _record(tmp_path, {"A": 0.9, "B": 0.6})
    assert main(["leaderboard", str(path), *extra]) == 4
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_the_shared_swebench_verified_record_prints_tiers_and_rank_intervals(capsys: pytest.CaptureFixture[str]) -> None:
    path = shared_path("records", "swebench_verified", "outcomes.csv")
    assert main(["leaderboard", str(path), "--complete"]) == 2
    out = capsys.readouterr().out
    assert "the top 8" in out and "are one tier" in out and "rank interval" in out and "tier 6" in out
