"""One decision, reproducible (issue 20, item 3): positions, ``export --upto-decision``, rows after the decision.

The live decision is taken on half the planned tasks (a fixed budget of 50 %: A solves 90 %, B 30 %, so it
promotes); then the rows of samples that were in flight arrive. ``decide`` on the export up to the decision
must give the live record again, field for field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tests.support.ledger_rows import TASKS, rows_for, universe

import stopwise
from stopwise.cli.main import main
from stopwise.ledger import open_ledger
from stopwise.records import Policy, read_outcomes

POLICY = Policy.model_validate({"budget": {"limit": 0.5}})


@pytest.fixture
def decided(ledger_url: str):
    """A ledger (SQLite, PostgreSQL) whose first decision (promote, on 20 tasks) is followed by 10 tasks' rows and a second decision."""
    with open_ledger(ledger_url) as ledger:
        ledger.register("eval", policy=POLICY, universe=universe(), tested="A", baseline="B")
        ledger.append("eval", rows_for(TASKS[:20]))
        live = ledger.decide("eval")
        ledger.append("eval", rows_for(TASKS[20:30]))  # samples in flight when the decision was taken
        final = ledger.decide("eval")
        yield ledger, live, final


def _without_time(record: stopwise.DecisionRecord) -> dict:
    return record.model_dump(mode="json", exclude={"decided_at", "ledger"})


def test_records_carry_their_position_and_count_the_rows_after_the_decision(decided) -> None:
    ledger, live, final = decided
    assert live.action == "promote"
    assert live.ledger is not None and final.ledger is not None
    assert (live.ledger.outcome_seq, live.ledger.n_events, live.ledger.decision, live.ledger.after_decision) == (40, 40, 1, 0)
    assert (final.ledger.n_events, final.ledger.decision, final.ledger.after_decision) == (60, 1, 20)
    assert [link.record.ledger for link in ledger.decisions("eval")] == [live.ledger, final.ledger]
    assert ledger.first_decision("eval").sequence == 1
    assert ledger.verify("eval").ok  # each decision taken again from the events up to its position


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_decide_on_the_export_up_to_the_decision_gives_the_live_record(decided, tmp_path: Path, suffix: str) -> None:
    ledger, live, _ = decided
    out = tmp_path / f"upto{suffix}"
    assert main(["ledger", "export", ledger.url, "eval", "-o", str(out), "--upto-decision", "1"]) == 0
    again = stopwise.decide(read_outcomes(out), "A", "B", POLICY, universe=universe())
    assert again.digest() == live.digest()
    assert _without_time(again) == _without_time(live)  # every field, the interval, claim and forecast too
    assert len(read_outcomes(out)) == 40 and len(ledger.outcomes("eval")) == 60  # the in-flight rows are left out


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_full_export_marks_the_rows_after_the_decision_and_reads_back(decided, tmp_path: Path, suffix: str) -> None:
    ledger, _, final = decided
    out = tmp_path / f"all{suffix}"
    ledger.export("eval", out)
    read = {".csv": pd.read_csv, ".jsonl": lambda f: pd.read_json(f, lines=True), ".parquet": pd.read_parquet}[suffix]
    frame = read(out)
    assert frame["after_decision"].tolist() == [False] * 40 + [True] * 20
    assert list(frame.columns)[-1] == "after_decision"
    again = stopwise.decide(read_outcomes(out), "A", "B", POLICY, universe=universe())
    assert again.digest() == final.digest()


def test_an_export_up_to_a_decision_the_chain_does_not_hold_is_refused(decided, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    ledger, _, _ = decided
    assert main(["ledger", "export", ledger.url, "eval", "-o", str(tmp_path / "x.csv"), "--upto-decision", "3"]) == 4
    assert "no decision #3 (its chain holds 2 decisions" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_append_after_the_decision_warns_and_decide_notes_the_count(decided, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    ledger, _, _ = decided
    rows = tmp_path / "late.csv"
    rows_for(TASKS[30:32]).to_csv(rows, index=False)
    assert main(["ledger", "append", ledger.url, "eval", str(rows)]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "warning: 4 row(s) arrived after evaluation eval was decided (PROMOTE at decision #1" in err
    assert "--upto-decision 1" in err
    assert main(["ledger", "decide", ledger.url, "eval", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["ledger"]["after_decision"] == 24
    assert "24 of the 64 events this record counts were stored after decision #1" in " ".join(captured.err.split())


def test_conflicts_show_the_stored_value_beside_the_refused_one(decided, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    ledger, _, _ = decided
    stored = ledger.outcomes("eval").iloc[0]
    changed = pd.DataFrame([{**stored.to_dict(), "outcome": 1.0 - stored["outcome"]}])
    ledger.append("eval", changed)
    assert main(["ledger", "conflicts", ledger.url, "eval"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if stored["task"] in line)
    assert line.split()[-3:] == ["outcome", str(float(stored["outcome"])), str(1.0 - float(stored["outcome"]))]
    frame = ledger.conflicts("eval")
    assert json.loads(frame["stored_json"][0])["outcome"] == stored["outcome"]


def test_report_reads_the_decision_history_an_export_writes(decided, tmp_path: Path) -> None:
    ledger, _, _ = decided
    ledger.export("eval", tmp_path / "rows.csv", decisions_path=tmp_path / "decisions.jsonl")
    assert main(["report", str(tmp_path / "decisions.jsonl"), "-o", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").stat().st_size > 0
