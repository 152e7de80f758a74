"""``stopwise ledger ...`` and ``stopwise watch`` in-process: exit codes, messages, files."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from stopwise import DecisionRecord, Policy, read_outcomes, read_task_universe, write_outcomes
from stopwise.cli.main import main
from stopwise.ledger import open_ledger

N = 60


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    order = tmp_path / "order.csv"
    pd.DataFrame({"task": [f"t{i:02d}" for i in range(N)], "group": ["g1", "g2"] * (N // 2)}).to_csv(order, index=False)
    rows = []
    for i in range(N):  # A solves every task, B one in six: a clear promote once enough is seen
        rows.append({"system": "A", "task": f"t{i:02d}", "outcome": 1, "group": ["g1", "g2"][i % 2]})
        rows.append({"system": "B", "task": f"t{i:02d}", "outcome": int(i % 6 == 0), "group": ["g1", "g2"][i % 2]})
    frame = pd.DataFrame(rows)
    return {
        "order": order,
        "first": write_outcomes(frame.iloc[:8], tmp_path / "first.csv"),
        "all": write_outcomes(frame, tmp_path / "all.csv"),
        "db": tmp_path / "ledger.db",
    }


def init(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ledger", "init", str(files["db"]), "ev", "--tasks", str(files["order"]), "-t", "A", "-b", "B"])
    assert code == 0, capsys.readouterr()
    capsys.readouterr()


def test_init_append_decide_verify_export(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    init(files, capsys)
    assert main(["ledger", "append", str(files["first"]), "ev", str(files["first"])]) == 4  # not a ledger: a CSV file
    capsys.readouterr()
    assert main(["ledger", "append", str(files["db"]), "ev", str(files["first"])]) == 0
    assert "8 accepted, 0 already stored" in capsys.readouterr().out
    assert main(["ledger", "decide", str(files["db"]), "ev", "--json"]) == 2  # continue: 4 of 60 tasks
    first = DecisionRecord.model_validate_json(capsys.readouterr().out)
    assert first.action == "continue" and first.n_observed == 4 and first.n_shared == N

    assert main(["ledger", "append", str(files["db"]), "ev", str(files["all"])]) == 0
    assert "112 accepted, 8 already stored" in capsys.readouterr().out
    code = main(["ledger", "decide", str(files["db"]), "ev", "--json"])
    final = DecisionRecord.model_validate_json(capsys.readouterr().out)
    assert code == 0 and final.action == "promote" and final.n_observed == N

    assert main(["ledger", "verify", str(files["db"]), "ev"]) == 0
    assert "120 outcome events and 2 decisions recompute" in capsys.readouterr().out

    out, history = tmp_path / "export.parquet", tmp_path / "decisions.jsonl"
    assert main(["ledger", "export", str(files["db"]), "ev", "-o", str(out), "--decisions", str(history)]) == 0
    capsys.readouterr()
    assert main(["ledger", "export", str(files["db"]), "ev", "-o", str(out)]) == 4
    assert "exists; pass --force" in capsys.readouterr().err
    links = [json.loads(line) for line in history.read_text().splitlines()]
    assert [link["record"]["action"] for link in links] == ["continue", "promote"]
    # `stopwise decide` on the export, with the same planned tasks, gives the ledger's decision
    code = main(["decide", str(out), "-t", "A", "-b", "B", "--tasks", str(files["order"]), "--json"])
    again = json.loads(capsys.readouterr().out)
    assert code == 0 and again["action"] == "promote" and again["input_sha256"] == final.input_sha256
    assert len(read_outcomes(out)) == 2 * N


def test_conflicts_exit_4_and_are_listed(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    init(files, capsys)
    main(["ledger", "append", str(files["db"]), "ev", str(files["first"])])
    changed = read_outcomes(files["first"]).to_frame()
    changed.loc[0, "outcome"] = 0.0
    write_outcomes(changed, tmp_path / "changed.csv")
    capsys.readouterr()
    assert main(["ledger", "append", str(files["db"]), "ev", str(tmp_path / "changed.csv")]) == 4
    captured = capsys.readouterr()
    assert "0 accepted, 7 already stored (acknowledged), 1 conflicts" in captured.out
    assert "(A, t00, 0)" in captured.err and "nothing overwritten" in captured.err
    assert main(["ledger", "conflicts", str(files["db"]), "ev", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(c["system"], c["task"], json.loads(c["row_json"])["outcome"]) for c in listed] == [("A", "t00", 0.0)]


def test_init_refuses_a_changed_policy_and_missing_universe(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    init(files, capsys)
    policy = tmp_path / "p.toml"
    assert main(["policy", "init", str(policy)]) == 0
    policy.write_text(policy.read_text().replace("threshold = 0.0", "threshold = 0.05"))
    capsys.readouterr()
    code = main(["ledger", "init", str(files["db"]), "ev", "--tasks", str(files["order"]), "-t", "A", "-b", "B", "-p", str(policy)])
    assert code == 4 and "cannot change: policy sha256" in capsys.readouterr().err
    assert main(["ledger", "init", str(files["db"]), "ev2", "-t", "A", "-b", "B"]) == 4
    assert "--tasks FILE or --n-tasks N" in capsys.readouterr().err
    assert main(["ledger", "init", str(files["db"]), "ev3", "-t", "A", "-b", "B", "--n-tasks", "60", "--group-size", "g1=30", "--group-size", "g2=30"]) == 0
    assert main(["ledger", "decide", str(files["db"]), "missing"]) == 4
    assert "'missing' is not registered" in capsys.readouterr().err


def test_verify_exits_1_on_a_tampered_decision(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    init(files, capsys)
    main(["ledger", "append", str(files["db"]), "ev", str(files["all"])])
    main(["ledger", "decide", str(files["db"]), "ev"])
    import sqlite3

    with sqlite3.connect(files["db"]) as conn:
        conn.execute("UPDATE stopwise_decisions SET record_json = replace(record_json, '\"promote\"', '\"reject\"')")
    capsys.readouterr()
    assert main(["ledger", "verify", str(files["db"]), "ev"]) == 1
    assert "MISMATCH ev: chain #1: digest stored" in capsys.readouterr().out


def test_watch_follows_until_decided(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    init(files, capsys)
    assert main(["watch", str(files["db"]), "ev", "--once"]) == 2
    assert "no decision yet: no outcome events yet" in capsys.readouterr().out
    all_rows = read_outcomes(files["all"]).to_frame()

    def feed() -> None:
        # a hand-shake, not a pause: the next 20 rows only once `watch` has recorded a look after these
        deadline = time.monotonic() + 120
        with open_ledger(files["db"]) as ledger:
            for start in range(0, len(all_rows), 20):
                looks = len(ledger.decisions("ev"))
                ledger.append("ev", all_rows.iloc[start : start + 20])
                while len(ledger.decisions("ev")) == looks and time.monotonic() < deadline:
                    time.sleep(0.01)
                if ledger.decisions("ev")[-1].record.action != "continue":
                    return  # decided: watch has ended

    feeder = threading.Thread(target=feed)
    feeder.start()
    code = main(["watch", str(files["db"]), "ev", "--interval", "0.02", "--timeout", "120"])
    feeder.join()
    out = capsys.readouterr().out
    assert code == 0 and "PROMOTE" in out
    with open_ledger(files["db"]) as ledger:
        history = ledger.decisions("ev")
        assert ledger.verify("ev").ok
    assert history[-1].record.action == "promote" and len(history) >= 2
    assert [d.record.action for d in history[:-1]] == ["continue"] * (len(history) - 1)


def test_watch_records_a_look_only_on_new_evidence(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35: `watch` on a decided ledger appended an identical decision at every call (head d6 -> d7 -> d8)."""
    init(files, capsys)
    main(["ledger", "append", str(files["db"]), "ev", str(files["first"])])
    assert main(["watch", str(files["db"]), "ev", "--once"]) == 2  # new events: one look recorded
    assert main(["watch", str(files["db"]), "ev", "--once"]) == 2  # nothing new: the chain's decision, none appended
    with open_ledger(files["db"]) as ledger:
        assert [d.record.action for d in ledger.decisions("ev")] == ["continue"]
    main(["ledger", "append", str(files["db"]), "ev", str(files["all"])])
    assert main(["watch", str(files["db"]), "ev", "--once"]) == 0
    with open_ledger(files["db"]) as ledger:
        head = len(ledger.decisions("ev"))
    for _ in range(2):  # decided: each call reports the decision and appends nothing
        assert main(["watch", str(files["db"]), "ev", "--once"]) == 0
    assert "PROMOTE" in capsys.readouterr().out
    with open_ledger(files["db"]) as ledger:
        assert len(ledger.decisions("ev")) == head
    assert main(["watch", str(files["db"]), "ev", "--once", "--record"]) == 0  # forced: one look more
    with open_ledger(files["db"]) as ledger:
        assert len(ledger.decisions("ev")) == head + 1
    assert main(["watch", str(files["db"]), "ev", "--record", "--no-record"]) == 4


def test_watch_times_out_with_continue(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    init(files, capsys)
    main(["ledger", "append", str(files["db"]), "ev", str(files["first"])])
    started = time.monotonic()
    assert main(["watch", str(files["db"]), "ev", "--interval", "0.05", "--timeout", "0.5", "--no-record"]) == 2
    assert 0.4 < time.monotonic() - started < 30
    assert "CONTINUE" in capsys.readouterr().out
    with open_ledger(files["db"]) as ledger:
        assert ledger.decisions("ev") == []


def test_init_and_export_print_json(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ledger", "init", str(files["db"]), "ev", "--tasks", str(files["order"]), "-t", "A", "-b", "B", "--json"])
    registered = json.loads(capsys.readouterr().out)
    universe = read_task_universe(files["order"])
    assert code == 0 and registered == {
        "evaluation": "ev", "tested": "A", "baseline": "B", "n_tasks": N,
        "policy_sha256": Policy().sha256(), "universe_sha256": universe.sha256(),
    }
    assert main(["ledger", "append", str(files["db"]), "ev", str(files["first"])]) == 0
    capsys.readouterr()
    out, history = tmp_path / "export.csv", tmp_path / "decisions.jsonl"
    code = main(["ledger", "export", str(files["db"]), "ev", "-o", str(out), "--decisions", str(history), "--json"])
    with open_ledger(files["db"]) as ledger:
        head = str(ledger.head("ev"))  # the head to keep (issue 25): e8-d0-<digest>
    assert code == 0 and json.loads(capsys.readouterr().out) == {"wrote": [str(out), str(history)], "head": head}
    assert head.startswith("e8-d0-")
    assert len(read_outcomes(out)) == 8


def test_init_refuses_a_betting_policy_with_a_hand_written_order(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    betting = tmp_path / "betting.toml"
    betting.write_text('[decision]\nboundary = "betting-wor"\n', encoding="utf-8")
    # files["order"] is a hand-written tasks file (t00, t01, ... in name order): not a seeded random permutation
    code = main(["ledger", "init", str(files["db"]), "ev", "--tasks", str(files["order"]), "-t", "A", "-b", "B", "-p", str(betting)])
    err = capsys.readouterr().err
    assert code == 4 and "carries no provenance stamp" in err and "stopwise order" in err
    # the order `stopwise order` writes for the same tasks and policy is accepted
    order = tmp_path / "stamped.csv"
    assert main(["order", str(files["order"]), "-p", str(betting), "-o", str(order)]) == 0
    capsys.readouterr()
    code = main(["ledger", "init", str(files["db"]), "ev", "--tasks", str(order), "-t", "A", "-b", "B", "-p", str(betting)])
    assert code == 0, capsys.readouterr().err
