"""End to end: the docs example (200 questions, two mock systems) with the real ledger and ``decide``.

A real Inspect evaluation with the paired managers stops scheduling samples once the comparison is
decided; the Inspect logs record the early-stopping summary with the decision record; the ledger,
the rows ingested from the logs and ``decide`` (library and CLI) on the ledger's export agree.
Two policies: the anytime-valid betting boundary (the docs example: stops as soon as it crosses)
and the fixed-budget rule with a 25 % task budget (stops at the planned budget limit).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest
from tests.support.reproduce import assert_live_decision_reproduced

import stopwise
from stopwise.cli.main import main
from stopwise.ingest import ingest, system_template

MAX_SAMPLES = 4
PACE = 2  # paired_early_stopping's default: the faster system waits 2 completed samples ahead

FIXED_BUDGET_TOML = """\
threshold = 0.0
tail_cutoff = 0.05

[order]
kind = "coverage-aware"
seed = 11

[budget]
measure = "task_fraction"
limit = 0.25
"""


def _logs(out: Path) -> dict[str, Any]:
    from inspect_ai.log import read_eval_log

    logs = [read_eval_log(str(p)) for p in sorted((out / "logs").glob("*.eval"))]
    return {log.eval.task: log for log in logs}


def _history(out: Path) -> list[Any]:
    from stopwise.ledger import open_ledger

    with open_ledger(f"sqlite:///{out / 'ledger.db'}") as ledger:
        return ledger.decisions("arith-demo")


def _agree(out: Path, summary: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """Ledger export == rows read from the Inspect logs; decide on the export == the live decision."""
    assert summary["ledger_verified"] is True
    exported = stopwise.read_outcomes(out / "outcomes.csv")
    ingested = ingest(out / "logs", system=system_template("task"))
    from_logs = ingested.rows
    # the samples the managers skipped are reported by ingest, each with the manager's reason
    def short(reason: str) -> str:
        return reason if len(reason) <= 160 else reason[:157] + "..."

    stops = {
        (log.location, f"sample {s.id} epoch {s.epoch}", f"early-stopping manager {log.results.early_stopping.manager}: {short(s.reason)}")
        for log in _logs(out).values()
        for s in log.results.early_stopping.early_stops
    }
    assert stops and {(item.file, item.record, item.reason) for item in ingested.skipped} == stops
    assert f"{len(stops)} runs not turned into rows" in ingested.summary()

    def key(frame: Any) -> set[tuple[str, str, int, float]]:
        return set(zip(frame["system"], frame["task"], frame["attempt"].astype(int), frame["outcome"], strict=True))

    assert len(exported) == len(from_logs) == summary["ledger_rows"]
    assert key(exported) == key(from_logs)
    assert summary["export_decision"] == summary["decision"]
    lines = (out / "decisions.jsonl").read_text().splitlines()
    assert len(lines) == summary["looks"] and json.loads(lines[-1])["record"]["action"] == summary["decision"]
    # `stopwise decide` on the export, with the policy and the planned tasks, exits with the same action
    capsys.readouterr()
    code = main(["decide", str(out / "outcomes.csv"), "-t", "tested", "-b", "baseline",
                 "-p", str(out / "policy.toml"), "--tasks", str(out / "order.csv"), "--json"])
    assert code == stopwise.ACTIONS.index(summary["decision"])
    assert json.loads(capsys.readouterr().out)["action"] == summary["decision"]
    # the live decision itself, reproduced exactly from the ledger's events up to it (ledger export --upto-decision)
    if summary["decision"] in ("promote", "reject"):
        assert_live_decision_reproduced(out / "ledger.db", "arith-demo", out / "policy.toml", out / "order.csv", out)


@pytest.fixture(scope="module")
def betting_run(example: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("inspect-live")
    return out, example.run(out, n=200, max_samples=MAX_SAMPLES)


def test_betting_boundary_stops_the_evaluation_once_crossed(betting_run: tuple[Path, dict[str, Any]]) -> None:
    out, summary = betting_run
    assert summary["decision"] == "promote"
    history = _history(out)
    final = history[-1].record
    assert final.action == "promote" and all(link.record.action == "continue" for link in history[:-1])
    assert len(history) == summary["looks"]
    from sqlalchemy import create_engine, text

    engine = create_engine(f"sqlite:///{out / 'ledger.db'}")
    with engine.connect() as conn:  # when each event was received, beside when the decision was stored
        received = conn.execute(text("SELECT system, received_at FROM stopwise_outcomes")).all()
    engine.dispose()
    for system in ("tested", "baseline"):  # once the decision was stored, only samples in flight were appended
        assert sum(1 for s, at in received if s == system and at > history[-1].created_at) <= MAX_SAMPLES
    for system, log in _logs(out).items():
        ran, stops = len(log.samples), log.results.early_stopping.early_stops
        assert ran + len(stops) == 200
        # after the decision at n_observed pairs, at most the samples already in flight ran; a system may
        # have been up to PACE completed samples ahead of the other when the decision was taken
        assert final.n_observed <= ran <= final.n_observed + PACE + MAX_SAMPLES + 1
        assert ran < 100, "the boundary should be crossed well before the end at a 35 pp difference"
        # skipped after the decision, or while the crossed boundary waited for its top-up tasks (not these)
        waiting = {task for link in history if link.record.top_up for task in link.record.top_up}
        assert all(s.reason.startswith(("stopwise promote: ", "stopwise top-up: ")) for s in stops)
        assert all(str(s.id) not in waiting for s in stops if s.metadata["action"] == "top-up")
        meta = log.results.early_stopping.metadata
        assert (meta["system"], meta["action"], meta["planned_tasks"], meta["looks"]) == (system, "promote", 200, len(history))
        assert meta["decision"] == final.model_dump(mode="json")


def test_betting_run_ledger_logs_and_export_agree(
    betting_run: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    _agree(*betting_run, capsys)


@pytest.fixture(scope="module")
def budget_run(example: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("inspect-budget")
    return out, example.run(out, n=200, max_samples=MAX_SAMPLES, policy_toml=FIXED_BUDGET_TOML)


def test_fixed_budget_runs_the_planned_quarter_and_decides_at_the_limit(budget_run: tuple[Path, dict[str, Any]]) -> None:
    out, summary = budget_run
    planned = pd.read_csv(out / "order.csv")["task"].tolist()  # the pre-registered order
    history = _history(out)
    final = history[-1].record
    # 50 pairs (25 % of 200) observed, decided once at the limit; every earlier look continued
    assert final.n_observed == 50 and final.budget.at_limit and final.coverage.satisfied
    assert final.action == summary["decision"] == "promote"
    assert all(link.record.action == "continue" for link in history[:-1]) and len(history) == 50
    for system, log in _logs(out).items():
        assert sorted(s.id for s in log.samples) == sorted(planned[:50]), system
        stops = log.results.early_stopping.early_stops
        assert sorted(s.id for s in stops) == sorted(planned[50:])
        assert all(s.reason.startswith(("stopwise budget: ", "stopwise promote: ")) for s in stops)
        meta = log.results.early_stopping.metadata
        assert (meta["budget_tasks"], meta["completed"], meta["action"]) == (50, 50, "promote")
        assert meta["decision"] == final.model_dump(mode="json")


def test_fixed_budget_ledger_logs_and_export_agree(
    budget_run: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    _agree(*budget_run, capsys)
