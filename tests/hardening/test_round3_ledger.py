"""Issue 37, the last internal error: a SQLite ledger forged by hand (an event deleted, a forged event with a
correct digest put before the first decision) is reported by ``ledger verify`` (exit 1, naming the sequence),
never an ``IndexError`` (exit 5)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from stopwise.cli.main import main
from stopwise.ledger import canonical_json

from .conftest import Run


def _decided(folder: Path) -> Path:
    """A ledger of 24 planned tasks (A vs B), all appended, one decision."""
    rows = "".join(f"A,t{i},{int(i % 3 != 0)}\nB,t{i},{int(i % 4 == 0)}\n" for i in range(12))
    (folder / "rows.csv").write_text("system,task,outcome\n" + rows)
    db = folder / "l.db"
    assert main(["ledger", "init", str(db), "ev", "-t", "A", "-b", "B", "--n-tasks", "24"]) == 0
    assert main(["ledger", "append", str(db), "ev", str(folder / "rows.csv")]) == 0
    assert main(["ledger", "decide", str(db), "ev"]) in (0, 1, 2, 3)
    return db


def _payload(row: sqlite3.Row) -> dict[str, object]:
    """The digested payload of a stored event row (as stopwise.ledger._digest.event_payload builds it)."""
    payload = {"system": row["system"], "task": row["task"], "outcome": row["outcome"], "group": row["task_group"],
               "attempt": row["attempt"], "cost_usd": row["cost_usd"], "elapsed_s": row["elapsed_s"],
               "status": row["status"], "source": row["source"], "unit": row["unit"]}
    return payload | ({"flags": row["flags"]} if row["flags"] else {})


@pytest.mark.parametrize("forged_seq", [0, -7])
def test_a_deleted_event_and_a_forged_one_before_the_first_decision_is_reported(forged_seq: int, tmp_path: Path, run: Run) -> None:
    db = _decided(tmp_path)
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    victim = con.execute("SELECT * FROM stopwise_outcomes WHERE seq = 5").fetchone()
    forged = dict(victim)
    forged.update(seq=forged_seq, outcome=1.0 - float(victim["outcome"]), source="forged")
    digest = hashlib.sha256(canonical_json(_payload(forged)).encode()).hexdigest()  # type: ignore[arg-type]
    assert digest != victim["digest"]
    forged["digest"] = digest
    with con:
        con.execute("DELETE FROM stopwise_outcomes WHERE seq = 5")
        columns = ", ".join(forged)
        con.execute(f"INSERT INTO stopwise_outcomes ({columns}) VALUES ({', '.join('?' * len(forged))})", list(forged.values()))
    con.close()
    result = run("ledger", "verify", db, "ev")
    assert result.code == 1, (result.code, result.err)
    text = " ".join((result.out + result.err).split())
    assert "Traceback" not in text and "internal error" not in text
    assert f"sequence {forged_seq}" in text, text


def test_the_stored_digest_of_a_copied_event_matches_stopwise(tmp_path: Path) -> None:
    """The forger's digest above is stopwise's: an unchanged event row recomputes its stored digest."""
    db = _decided(tmp_path)
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    row = con.execute("SELECT * FROM stopwise_outcomes WHERE seq = 5").fetchone()
    con.close()
    assert hashlib.sha256(canonical_json(_payload(row)).encode()).hexdigest() == row["digest"]
    assert json.loads(canonical_json(_payload(row)))["task"] == row["task"]
