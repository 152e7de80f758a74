"""Issue 37 item 5: tail protection without a kept head. A SQLite ledger records its heads in ``<db>.heads.json``
at each append and decision; ``ledger verify`` checks it by default and names what was removed from the end."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from stopwise.cli.main import main
from stopwise.ledger import open_ledger


def _rows(path: Path, tasks: range, attempt: int = 0) -> Path:
    lines = "".join(f"A,t{i},{attempt},{int(i % 3 != 0)}\nB,t{i},{attempt},{int(i % 4 == 0)}\n" for i in tasks)
    path.write_text("system,task,attempt,outcome\n" + lines)
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A ledger of 40 planned tasks: 20 tasks appended, a decision, 10 more appended after it."""
    db = tmp_path / "l.db"
    assert main(["ledger", "init", str(db), "ev", "-t", "A", "-b", "B", "--n-tasks", "40"]) == 0
    assert main(["ledger", "append", str(db), "ev", str(_rows(tmp_path / "a.csv", range(20)))]) == 0
    assert main(["ledger", "decide", str(db), "ev"]) in (0, 1, 2, 3)
    assert main(["ledger", "append", str(db), "ev", str(_rows(tmp_path / "b.csv", range(20, 25)))]) == 0
    return db


def _verify(db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["ledger", "verify", str(db), "ev"])
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


def test_the_head_file_records_the_current_head_after_each_append_and_decision(db: Path) -> None:
    record = json.loads(Path(f"{db}.heads.json").read_text())["evaluations"]["ev"]
    with open_ledger(db, mode="read") as ledger:
        head = ledger.head("ev")
        last = ledger.decisions("ev")[-1]
    con = sqlite3.connect(db)
    seq, digest = con.execute("SELECT seq, digest FROM stopwise_outcomes ORDER BY seq DESC LIMIT 1").fetchone()
    con.close()
    assert (record["n_events"], record["n_decisions"]) == (head.n_events, head.n_decisions) == (50, 1)
    assert (record["last_seq"], record["last_event"], record["last_decision"]) == (seq, digest, last.digest)


def test_events_deleted_after_the_last_decision_are_caught_by_default(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _verify(db, capsys)[0] == 0
    with open_ledger(db, mode="read") as ledger:
        at = ledger.decisions("ev")[-1].outcome_seq
    con = sqlite3.connect(db)
    with con:
        con.execute("DELETE FROM stopwise_outcomes WHERE seq > ?", (at,))
    con.close()
    code, text = _verify(db, capsys)
    assert code == 1, text
    assert "MISMATCH" in text and "heads.json" in text
    assert f"10 of its 50 events are missing (after sequence {at}; the last recorded was sequence 50)" in text


def test_the_last_decision_deleted_is_caught_by_default(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", "decide", str(db), "ev"]) in (0, 1, 2, 3)
    con = sqlite3.connect(db)
    with con:
        con.execute("DELETE FROM stopwise_decisions WHERE sequence = 2")
    con.close()
    code, text = _verify(db, capsys)
    assert code == 1 and "1 of its 2 decisions are missing (after #1)" in text, text


def test_an_older_copy_of_the_database_is_caught_and_a_later_append_keeps_the_evidence(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older = tmp_path / "older.db"
    shutil.copy(db, older)  # 50 events, 1 decision
    assert main(["ledger", "append", str(db), "ev", str(_rows(tmp_path / "c.csv", range(25, 30)))]) == 0
    before = Path(f"{db}.heads.json").read_text()
    shutil.copy(older, db)  # the database restored to the older copy, the head file left
    code, text = _verify(db, capsys)
    assert code == 1 and "10 of its 60 events are missing" in text, text
    assert main(["ledger", "append", str(db), "ev", str(_rows(tmp_path / "d.csv", range(30, 31)))]) == 0
    assert Path(f"{db}.heads.json").read_text() == before  # not moved backwards by the append
    assert _verify(db, capsys)[0] == 1


def test_reading_writes_no_head_file_and_a_ledger_without_one_verifies(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path(f"{db}.heads.json").unlink()  # a ledger written before head files (or with it moved away)
    code, text = _verify(db, capsys)
    assert code == 0, text
    assert not Path(f"{db}.heads.json").exists()


def test_a_damaged_head_file_is_reported_not_overwritten(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path(f"{db}.heads.json").write_text("{not json")
    code, text = _verify(db, capsys)
    assert code == 1 and "cannot be read" in text, text
    assert main(["ledger", "append", str(db), "ev", str(_rows(tmp_path / "e.csv", range(30, 31)))]) == 0
    assert Path(f"{db}.heads.json").read_text() == "{not json"


def test_an_in_memory_ledger_has_no_head_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stopwise import Policy
    from stopwise.records import TaskUniverse

    monkeypatch.chdir(tmp_path)
    with open_ledger("sqlite:///:memory:") as ledger:
        ledger.register("ev", policy=Policy(), universe=TaskUniverse(["t"]), tested="A", baseline="B")
        ledger.append("ev", [{"system": s, "task": "t", "outcome": 1} for s in "AB"])
        ledger.decide("ev")
        assert ledger.verify("ev").ok
    assert list(tmp_path.iterdir()) == []
