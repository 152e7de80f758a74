"""A family evaluation in the ledger: k systems registered together, appended by any process, looked at as a family."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import create_engine, text

from stopwise.compare import decide_family
from stopwise.errors import LedgerError, ValidationError
from stopwise.ledger import open_ledger
from stopwise.records import Policy, TaskUniverse, read_outcomes

TASKS = [f"t{i:03d}" for i in range(120)]
RATES = {"A": 0.9, "B": 0.55, "D": 0.15}
POLICY = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "coverage": {"rule": "none"}})


def _rows(systems: str = "ABCD", upto: int = 120) -> list[dict[str, object]]:
    rng = np.random.default_rng(3)
    draws = {s: rng.random(len(TASKS)) < RATES[s] for s in "ABD"}
    draws["C"] = draws["B"]  # tied: on the planned tasks every non-zero gap is certain once all are observed
    return [{"system": s, "task": t, "outcome": int(draws[s][i])} for i, t in enumerate(TASKS[:upto]) for s in systems]


def test_a_family_is_registered_once_with_its_systems_in_any_order(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.db") as ledger:
        ledger.register_family("race", policy=POLICY, universe=TaskUniverse(TASKS), systems=["D", "B", "A", "C"])
        ledger.register_family("race", policy=POLICY, universe=TaskUniverse(TASKS), systems=["A", "B", "C", "D"])
        reg = ledger.registration("race")
        assert reg.family == ("A", "B", "C", "D") and reg.systems == reg.family and (reg.tested, reg.baseline) == ("", "")
        with pytest.raises(LedgerError, match="cannot change: tested system"):
            ledger.register_family("race", policy=POLICY, universe=TaskUniverse(TASKS), systems=["A", "B", "C"])
        with pytest.raises(LedgerError, match="cannot change"):
            ledger.register("race", policy=POLICY, universe=TaskUniverse(TASKS), tested="A", baseline="B")
        with pytest.raises(LedgerError, match="at least 2"):
            ledger.register_family("solo", policy=POLICY, universe=TaskUniverse(TASKS), systems=["A"])
        with pytest.raises(LedgerError, match="twice"):
            ledger.register_family("dup", policy=POLICY, universe=TaskUniverse(TASKS), systems=["A", "A", "B"])
        versus = Policy.model_validate({"family": {"kind": "baseline", "baseline": "prod"}})
        with pytest.raises(LedgerError, match="'prod' is not among"):
            ledger.register_family("vs", policy=versus, universe=TaskUniverse(TASKS), systems=["A", "B"])
        assert ledger.verify("race").ok


def test_a_pair_registration_reads_as_before(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.db") as ledger:
        ledger.register("pair", policy=POLICY, universe=TaskUniverse(TASKS), tested="A", baseline="B")
        reg = ledger.registration("pair")
        assert reg.family == () and reg.systems == ("A", "B")
        with pytest.raises(LedgerError, match="is a pair"):
            ledger.decide_family("pair")
    # the stored row of a pair is exactly what a ledger before families wrote: its tested and baseline columns
    engine = create_engine(f"sqlite:///{tmp_path / 'l.db'}")
    with engine.connect() as conn:
        assert conn.execute(text("select tested, baseline from stopwise_evaluations")).all() == [("A", "B")]
    engine.dispose()


def test_appends_take_any_family_system_and_refuse_others(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.db") as ledger:
        ledger.register_family("race", policy=POLICY, universe=TaskUniverse(TASKS), systems=list("ABCD"))
        assert ledger.append("race", _rows()).accepted == 4 * len(TASKS)
        with pytest.raises(ValidationError, match="must be 'A' or 'B' or 'C' or 'D'"):
            ledger.append("race", [{"system": "E", "task": "t000", "outcome": 1}])
        with pytest.raises(LedgerError, match="a family of 4 systems"):
            ledger.decide("race")


def test_the_family_look_is_decide_family_on_the_export(ledger_url: str, tmp_path: Path) -> None:
    with open_ledger(ledger_url) as ledger:  # SQLite and PostgreSQL
        ledger.register_family("race", policy=POLICY, universe=TaskUniverse(TASKS), systems=list("ABCD"))
        ledger.append("race", _rows("AB", 60))
        with pytest.raises(LedgerError, match=r"\['C', 'D'\] have no outcome events"):
            ledger.decide_family("race")
        ledger.append("race", _rows("CD", 60))
        early = ledger.decide_family("race")
        ledger.append("race", _rows())
        record = ledger.decide_family("race")
        assert ledger.decide_family("race", upto=240).digest() == early.digest()
        ledger.export("race", tmp_path / "rows.csv")
    again = decide_family(read_outcomes(tmp_path / "rows.csv"), None, POLICY, universe=TaskUniverse(TASKS))
    assert again.digest() == record.digest()
    assert early.look == 60 and record.look == 120
    assert record.best == "A" and [t.systems for t in record.tiers] == [["A"], ["B", "C"], ["D"]]


def test_a_non_inspect_harness_races_a_family_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stopwise.cli.main import main
    from stopwise.records import FamilyRecord, write_outcomes

    pd = pytest.importorskip("pandas")
    pd.DataFrame({"task": TASKS}).to_csv(tmp_path / "tasks.csv", index=False)
    (tmp_path / "policy.toml").write_text('[decision]\nboundary = "betting-wor"\n[coverage]\nrule = "none"\n[order]\nkind = "uniform"\nseed = 1\n')
    assert main(["order", str(tmp_path / "tasks.csv"), "-p", str(tmp_path / "policy.toml"), "-o", str(tmp_path / "order.csv")]) == 0
    capsys.readouterr()
    db = str(tmp_path / "l.db")
    start = ["ledger", "init", db, "race", "--tasks", str(tmp_path / "order.csv"), "--policy", str(tmp_path / "policy.toml")]
    assert main([*start, "--family", "A,B", "--family", "C,D", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["family"] == ["A", "B", "C", "D"]
    assert main([*start, "--family", "A,B,C,D", "--tested", "A"]) == 4
    assert "not both" in capsys.readouterr().err
    first = write_outcomes(pd.DataFrame(_rows(upto=30)), tmp_path / "first.csv")
    assert main(["ledger", "append", db, "race", str(first)]) == 0
    capsys.readouterr()
    assert main(["ledger", "decide", db, "race", "--family", "--json"]) == 2  # the tie is open
    looked = FamilyRecord.model_validate_json(capsys.readouterr().out)
    with open_ledger(db, mode="read") as ledger:
        assert looked.digest() == ledger.decide_family("race").digest()
    assert looked.n_planned == len(TASKS) and looked.look <= 30 and not looked.final
    assert main(["ledger", "decide", db, "race"]) == 4  # a family has no pair decision
    assert "--family" in capsys.readouterr().err
    assert main(["ledger", "decide", db, "race", "--family"]) == 2
    assert "needs more tasks".upper() in capsys.readouterr().out
    capsys.readouterr()
    assert main(["ledger", "decide", db, "race", "--family", "--json", "--upto", "8"]) == 2  # the first 2 tasks of 4 systems
    past = FamilyRecord.model_validate_json(capsys.readouterr().out)
    with open_ledger(db, mode="read") as ledger:
        assert past.digest() == ledger.decide_family("race", upto=8).digest() and past.look <= 2
    assert main(["ledger", "decide", db, "race", "--upto", "8"]) == 4
    assert "with --family" in capsys.readouterr().err
