"""The ledger API on SQLite and on a real PostgreSQL server: registration, appends, chain, verify, export."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import create_engine, text
from tests.support.ledger_rows import GROUPS, TASKS, rows_for, universe

import stopwise
from stopwise.errors import FileFormatError, LedgerError, ValidationError
from stopwise.ledger import AppendResult, canonical_json, ledger_url, open_ledger
from stopwise.records import Policy, TaskUniverse, outcome_columns, read_outcomes


def raw_engine(ledger) -> object:
    return create_engine(ledger.url)


# ---------------------------------------------------------------- registration
def test_register_is_idempotent_and_a_changed_policy_is_refused(ledger) -> None:
    ledger.register("eval", policy=Policy(), universe=universe(), tested="A", baseline="B")
    assert ledger.evaluations() == ["eval"]
    changed = Policy.model_validate({**Policy().model_dump(), "threshold": 0.05})
    with pytest.raises(LedgerError, match=r"'eval' is already registered .* cannot change: policy sha256"):
        ledger.register("eval", policy=changed, universe=universe(), tested="A", baseline="B")
    with pytest.raises(LedgerError, match="task universe sha256"):
        ledger.register("eval", policy=Policy(), universe=TaskUniverse(TASKS[:-1], GROUPS[:-1]), tested="A", baseline="B")
    with pytest.raises(LedgerError, match=r"baseline system .*'B'.*'C'"):
        ledger.register("eval", policy=Policy(), universe=universe(), tested="A", baseline="C")
    # the stored registration is the first one, unchanged
    reg = ledger.registration("eval")
    assert reg.policy_sha256 == Policy().sha256() and reg.universe == universe()


def test_a_new_ledger_object_reads_the_locked_registration(ledger) -> None:
    with open_ledger(ledger.url) as again:
        reg = again.registration("eval")
    assert reg.policy == Policy() and reg.universe.sha256() == universe().sha256()
    assert (reg.tested, reg.baseline) == ("A", "B")
    counts = TaskUniverse.from_counts(60, {"a": 20, "b": 40})
    ledger.register("counts", policy=Policy(), universe=counts, tested="A", baseline="B")
    with open_ledger(ledger.url) as again:
        assert again.registration("counts").universe == counts


def test_unknown_evaluation_names_the_registered_ones(ledger) -> None:
    with pytest.raises(LedgerError, match=r"'nope' is not registered .*registered: 'eval'"):
        ledger.append("nope", rows_for(TASKS[:1]))


def test_register_refuses_bad_arguments(ledger) -> None:
    with pytest.raises(LedgerError, match="two different"):
        ledger.register("x", policy=Policy(), universe=universe(), tested="A", baseline="A")
    with pytest.raises(LedgerError, match="TaskUniverse"):
        ledger.register("x", policy=Policy(), universe=TASKS, tested="A", baseline="B")  # type: ignore[arg-type]
    with pytest.raises(LedgerError, match="non-empty"):
        ledger.register("  ", policy=Policy(), universe=universe(), tested="A", baseline="B")


# ---------------------------------------------------------------- appends
def test_append_accepts_acknowledges_duplicates_and_keeps_conflicts(ledger) -> None:
    first = ledger.append("eval", rows_for(TASKS[:10]))
    assert (first.accepted, first.duplicates, first.conflicts) == (20, 0, 0)
    before = ledger.outcomes("eval")

    again = rows_for(TASKS[5:12])  # 5 known tasks (10 events) and 2 new (4 events)
    flipped = again.copy()
    flipped.loc[(flipped["task"] == TASKS[5]) & (flipped["system"] == "A"), "outcome"] = 1 - flipped.loc[
        (flipped["task"] == TASKS[5]) & (flipped["system"] == "A"), "outcome"
    ]
    result = ledger.append("eval", flipped)
    assert isinstance(result, AppendResult)
    assert (result.accepted, result.duplicates, result.conflicts) == (4, 9, 1)
    assert result.conflict_keys == [("A", TASKS[5], 0)]
    assert result.acknowledged == 13

    stored = ledger.outcomes("eval")
    assert len(stored) == 24
    # the conflicting event did not overwrite the stored one
    pd.testing.assert_frame_equal(stored.iloc[:20].reset_index(drop=True), before)
    conflicts = ledger.conflicts("eval")
    assert len(conflicts) == 1
    row = json.loads(conflicts.loc[0, "row_json"])
    assert row["task"] == TASKS[5] and row["outcome"] == flipped.loc[5 - 5, "outcome"]
    # the same conflict sent twice is kept once
    assert ledger.append("eval", flipped.iloc[[0]]).conflicts == 1
    assert len(ledger.conflicts("eval")) == 1


def test_repeats_within_one_call_are_judged_against_the_first(ledger) -> None:
    rows = rows_for(TASKS[:1])
    # another source is provenance, not content: a duplicate (issue 20; other content is refused by validation)
    twice = pd.concat([rows, rows.assign(source="elsewhere")], ignore_index=True)
    result = ledger.append("eval", twice)
    assert (result.accepted, result.duplicates, result.conflicts) == (2, 2, 0)
    assert set(ledger.outcomes("eval")["source"]) == {"test"}


def test_outcomes_read_back_exactly_in_the_contract(ledger) -> None:
    rows = rows_for(TASKS[:15], seed=3)
    rows.loc[3, "elapsed_s"] = 12.5
    rows.loc[4, "status"] = "pending"
    rows.loc[4, "outcome"] = np.nan
    ledger.append("eval", rows)
    stored = ledger.outcomes("eval")
    pd.testing.assert_frame_equal(stored, outcome_columns(rows).to_frame())
    assert list(stored.columns) == list(stopwise.OUTCOME_COLUMNS)


def test_append_validates_before_storing_anything(ledger) -> None:
    rows = rows_for(TASKS[:3])
    rows.loc[2, "outcome"] = 1.5
    with pytest.raises(ValidationError, match=r"row 3, field 'outcome': must be a number in \[0, 1\]; got 1.5"):
        ledger.append("eval", rows)
    outside = pd.DataFrame({"system": ["A", "Z"], "task": [TASKS[0], "unplanned"], "outcome": [1, 0]})
    with pytest.raises(ValidationError) as info:
        ledger.append("eval", outside)
    message = str(info.value)
    assert "row 2, field 'system': must be 'A' or 'B'" in message
    assert "row 2, field 'task': must be a task of the evaluation's planned universe; got 'unplanned'" in message
    assert ledger.high_water("eval") == 0
    assert ledger.append("eval", []).acknowledged == 0


def test_schema_version_of_another_stopwise_is_refused(ledger) -> None:
    engine = create_engine(ledger.url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE stopwise_schema_version SET version = 99"))
    engine.dispose()
    with pytest.raises(LedgerError, match="schema version 99; this stopwise reads version 2"):
        open_ledger(ledger.url)


def test_a_version_1_ledger_without_flags_is_refused_not_misread(ledger) -> None:
    """A ledger written before flags were stored (schema 1: no flags column) gets a clear error."""
    ledger.append("eval", rows_for(TASKS[:4]))
    engine = create_engine(ledger.url)
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE stopwise_outcomes DROP COLUMN flags"))
        conn.execute(text("UPDATE stopwise_schema_version SET version = 1"))
    engine.dispose()
    with pytest.raises(LedgerError) as info:
        open_ledger(ledger.url)
    message = str(info.value)
    assert "schema version 1 (written before outcome flags were stored" in message
    assert "this stopwise reads version 2" in message and "stopwise ledger export" in message


def test_sqlite_file_connections_use_wal_and_the_ledger_flushes_the_wal_itself(tmp_path: Path) -> None:
    """A WAL file commits under synchronous=NORMAL and every write is flushed by the ledger before it returns (group
    commit); an in-memory ledger (nothing to flush) keeps synchronous=FULL."""
    with open_ledger(tmp_path / "l.db") as ledger:
        with ledger.store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL: the ledger flushes
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 60000
            assert conn.info["stopwise_flush_wal"] is True
        assert ledger.store.group_commit is not None
        flushes = ledger.store.group_commit.flushes
        ledger.register("eval", policy=Policy(), universe=universe(), tested="A", baseline="B")
        ledger.append("eval", rows_for(TASKS[:1]))
        ledger.notify("eval", system="A", state="started")
        ledger.decide("eval")
        assert ledger.store.group_commit.flushes == flushes + 4  # one per write, none per read
    with open_ledger("sqlite:///:memory:") as ledger, ledger.store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert conn.info["stopwise_flush_wal"] is False and ledger.store.group_commit is None


def test_urls() -> None:
    assert ledger_url("postgres://u@h:1/d") == "postgresql+psycopg://u@h:1/d"
    assert ledger_url("x.db").startswith("sqlite:////")
    with pytest.raises(LedgerError, match="unsupported scheme 'mysql'"):
        ledger_url("mysql://u@h/d")
    with pytest.raises(LedgerError, match="does not exist"):
        open_ledger("/nonexistent-folder-stopwise/l.db")


def test_unreachable_postgres_is_a_ledger_error() -> None:
    with pytest.raises(LedgerError, match="database error"):
        open_ledger("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2")


def test_columns_mappings_and_frames_append_the_same_events(ledger) -> None:
    """One validator for every form: columns (validated already), a frame and mappings give identical events."""
    frame = rows_for(TASKS[:8])
    columns = outcome_columns(frame)
    first = ledger.append("eval", columns.take(np.arange(4)))
    assert first.accepted == 4
    again = ledger.append("eval", frame.to_dict(orient="records"))  # the same rows as mappings: duplicates, not conflicts
    assert (again.accepted, again.duplicates, again.conflicts) == (len(frame) - 4, 4, 0)
    assert ledger.append("eval", frame).duplicates == len(frame)
    pd.testing.assert_frame_equal(ledger.outcomes("eval"), columns.to_frame())
    assert ledger.verify("eval").ok


# ---------------------------------------------------------------- verify without decisions
def test_verify_finds_an_edited_outcome(ledger) -> None:
    ledger.append("eval", rows_for(TASKS[:6]))
    assert ledger.verify("eval").ok
    engine = create_engine(ledger.url)
    with engine.begin() as conn:
        seq = conn.execute(text("SELECT min(seq) FROM stopwise_outcomes WHERE task = :t AND system = 'B'"), {"t": TASKS[2]}).scalar()
        conn.execute(text("UPDATE stopwise_outcomes SET outcome = 1 - outcome WHERE seq = :s"), {"s": seq})
    engine.dispose()
    result = ledger.verify("eval")
    assert not result.ok and result.first_mismatch is not None
    assert result.first_mismatch.kind == "outcome" and result.first_mismatch.sequence == seq
    assert f"task '{TASKS[2]}'" in result.first_mismatch.message


def test_verify_finds_an_edited_policy(ledger) -> None:
    engine = create_engine(ledger.url)
    changed = Policy.model_validate({**Policy().model_dump(), "tail_cutoff": 0.2})
    with engine.begin() as conn:
        conn.execute(text("UPDATE stopwise_evaluations SET policy_json = :p"), {"p": changed.canonical_json()})
    engine.dispose()
    result = open_ledger(ledger.url).verify("eval")
    assert not result.ok and result.first_mismatch is not None and result.first_mismatch.kind == "registration"
    assert "policy sha256" in result.first_mismatch.message


# ---------------------------------------------------------------- decisions, chain, export
def test_decisions_chain_with_independent_digests(ledger) -> None:
    ledger.append("eval", rows_for(TASKS[:4]))
    first = ledger.decide("eval")
    ledger.append("eval", rows_for(TASKS[4:30]))
    second = ledger.decide("eval")
    history = ledger.decisions("eval")
    assert [d.sequence for d in history] == [1, 2]
    assert [d.outcome_seq for d in history] == [8, 60] or history[1].outcome_seq > history[0].outcome_seq
    assert history[0].record == first and history[1].record == second
    reg = ledger.registration("eval")
    genesis = hashlib.sha256(
        json.dumps(
            {"baseline": "B", "evaluation": "eval", "policy_sha256": Policy().sha256(), "tested": "A",
             "universe_sha256": universe().sha256()},
            sort_keys=True, separators=(",", ":"),
        ).encode()
    ).hexdigest()
    assert reg.genesis_digest == genesis
    previous = genesis
    for link in history:
        record_json = json.dumps(link.record.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        assert link.record_json == record_json
        assert link.previous_digest == previous
        assert link.digest == hashlib.sha256((previous + record_json).encode()).hexdigest()
        previous = link.digest
    result = ledger.verify("eval")
    assert result.ok and result.n_decisions == 2 and result.head_digest == previous
    # the first decision saw only the first 8 events
    assert first.n_observed == 4 and second.n_observed == 30


def test_decide_without_recording_leaves_the_chain(ledger) -> None:
    ledger.append("eval", rows_for(TASKS[:10]))
    ledger.decide("eval", record=False)
    assert ledger.decisions("eval") == []


@pytest.mark.parametrize("edit", ["record", "record-and-digests", "delete"])
def test_verify_finds_a_tampered_decision(ledger, edit: str) -> None:
    ledger.append("eval", rows_for(TASKS[:10]))
    ledger.decide("eval")
    ledger.append("eval", rows_for(TASKS[10:40]))
    ledger.decide("eval")
    ledger.decide("eval")
    assert ledger.verify("eval").ok
    engine = create_engine(ledger.url)
    with engine.begin() as conn:
        stored = conn.execute(text("SELECT record_json, previous_digest FROM stopwise_decisions WHERE sequence = 2")).one()
        record = json.loads(stored[0])
        if edit == "delete":
            conn.execute(text("DELETE FROM stopwise_decisions WHERE sequence = 2"))
        else:
            record["action"] = "reject" if record["action"] != "reject" else "promote"
            forged = canonical_json(record)
            digest = hashlib.sha256((stored[1] + forged).encode()).hexdigest()
            conn.execute(text("UPDATE stopwise_decisions SET record_json = :r WHERE sequence = 2"), {"r": forged})
            if edit == "record-and-digests":  # an attacker who re-chains: the decision itself no longer recomputes
                conn.execute(text("UPDATE stopwise_decisions SET digest = :d WHERE sequence = 2"), {"d": digest})
                third = conn.execute(text("SELECT record_json FROM stopwise_decisions WHERE sequence = 3")).scalar()
                conn.execute(
                    text("UPDATE stopwise_decisions SET previous_digest = :p, digest = :d WHERE sequence = 3"),
                    {"p": digest, "d": hashlib.sha256((digest + third).encode()).hexdigest()},
                )
    engine.dispose()
    result = open_ledger(ledger.url).verify("eval")
    assert not result.ok and result.first_mismatch is not None
    mismatch = result.first_mismatch
    if edit == "record":
        assert (mismatch.kind, mismatch.sequence) == ("chain", 2) and "edited" in mismatch.message
    elif edit == "delete":
        assert (mismatch.kind, mismatch.sequence) == ("chain", 3) and "missing" in mismatch.message
    else:
        assert (mismatch.kind, mismatch.sequence) == ("decision", 2) and "'action'" in mismatch.message
    assert result.n_decisions == 1


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_export_then_decide_gives_the_ledger_decision(ledger, tmp_path: Path, suffix: str) -> None:
    ledger.append("eval", rows_for(TASKS[:25], seed=1))
    recorded = ledger.decide("eval")
    out = tmp_path / f"rows{suffix}"
    written = ledger.export("eval", out, decisions_path=tmp_path / "decisions.jsonl")
    assert written == [str(out), str(tmp_path / "decisions.jsonl")]
    exported = read_outcomes(out)
    again = stopwise.decide(exported, "A", "B", Policy(), universe=universe())  # type: ignore[call-arg]
    assert again.action == recorded.action and again.input_sha256 == recorded.input_sha256
    assert again.r_promote == recorded.r_promote and again.n_observed == recorded.n_observed == 25
    lines = (tmp_path / "decisions.jsonl").read_text().splitlines()
    assert [json.loads(line)["digest"] for line in lines] == [d.digest for d in ledger.decisions("eval")]


def _flagged_rows() -> pd.DataFrame:
    """rows_for(25 tasks) where A hit a token limit on 6 tasks it solved and B errored on 3 (scored 0)."""
    rows = rows_for(TASKS[:25], seed=1)
    flags = [""] * len(rows)
    a_solved = rows.index[(rows["system"] == "A") & (rows["outcome"] == 1.0)][:6]
    b_rows = rows.index[rows["system"] == "B"][:3]
    for i in a_solved:
        flags[i] = "limit:token"
    for i in b_rows:
        flags[i] = "error;limit:time"
    rows["flags"] = flags
    return rows


def test_flags_are_stored_exported_and_digested_only_when_present(ledger, tmp_path: Path) -> None:
    rows = _flagged_rows()
    assert ledger.append("eval", rows).accepted == 50
    stored = ledger.outcomes("eval")
    pd.testing.assert_frame_equal(stored, outcome_columns(rows).to_frame())
    assert (stored["flags"] != "").sum() == 9
    # the digest of an unflagged event is sha256 of the ten fields stored before flags were (schema 1)
    plain = stored.loc[stored["flags"] == ""].iloc[0]
    old_payload = {
        "system": plain["system"], "task": plain["task"], "outcome": float(plain["outcome"]), "group": plain["group"],
        "attempt": 0, "cost_usd": None if np.isnan(plain["cost_usd"]) else float(plain["cost_usd"]), "elapsed_s": None,
        "status": "final", "source": "test", "unit": "",
    }
    old = hashlib.sha256(json.dumps(old_payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    flagged = stored.loc[stored["flags"] != ""].iloc[0]
    engine = create_engine(ledger.url)
    with engine.connect() as conn:
        digests = dict(conn.execute(text("SELECT system || '/' || task, digest FROM stopwise_outcomes")).all())
    engine.dispose()
    assert digests[f"{plain['system']}/{plain['task']}"] == old
    assert digests[f"{flagged['system']}/{flagged['task']}"] != old
    # the same key with other flags is a conflict, never an overwrite
    changed = rows.iloc[[0]].assign(flags=rows.loc[0, "flags"] + ";error")
    assert ledger.append("eval", changed).conflicts == 1
    assert ledger.verify("eval").ok
    ledger.export("eval", tmp_path / "rows.jsonl")
    pd.testing.assert_frame_equal(read_outcomes(tmp_path / "rows.jsonl").to_frame(), stored)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_flag_excluding_policy_decides_the_same_from_the_ledger_and_its_export(
    ledger_url: str, tmp_path: Path, suffix: str
) -> None:
    """On SQLite and PostgreSQL: the ledger applies the policy's [flags] exclusions exactly as decide on a file."""
    policy = Policy.model_validate({"flags": {"exclude": ["limit:token"], "count": ["error"]}})
    rows = _flagged_rows()
    with open_ledger(ledger_url) as ledger:
        ledger.register("flagged", policy=policy, universe=universe(), tested="A", baseline="B")
        ledger.append("flagged", rows)
        recorded = ledger.decide("flagged")
        ledger.export("flagged", tmp_path / f"rows{suffix}")
        assert ledger.verify("flagged").ok
    from_file = stopwise.decide(outcome_columns(rows), "A", "B", policy, universe=universe())  # type: ignore[call-arg]
    from_export = stopwise.decide(read_outcomes(tmp_path / f"rows{suffix}"), "A", "B", policy, universe=universe())  # type: ignore[call-arg]
    # independent count: A's 6 token-limit rows are left out, so 19 tasks have both systems
    assert recorded.n_observed == from_file.n_observed == from_export.n_observed == 19
    reasons = {e.reason: e.rows for e in recorded.excluded}
    assert any("limit:token" in reason and n == 6 for reason, n in reasons.items()), reasons
    for other in (from_file, from_export):
        assert other.action == recorded.action
        assert other.delta_hat == recorded.delta_hat and other.r_promote == recorded.r_promote
        assert other.input_sha256 == recorded.input_sha256
        assert [e.model_dump() for e in other.excluded] == [e.model_dump() for e in recorded.excluded]
        assert other.flagged == recorded.flagged


def test_export_is_atomic_and_never_overwrites(ledger, tmp_path: Path) -> None:
    ledger.append("eval", rows_for(TASKS[:5]))
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "rows.csv"
    out.write_text("mine\n")
    with pytest.raises(FileFormatError, match="exists; pass --force"):
        ledger.export("eval", out)
    assert out.read_text() == "mine\n"
    ledger.export("eval", out, force=True)
    pd.testing.assert_frame_equal(read_outcomes(out).to_frame(), ledger.outcomes("eval"))
    assert sorted(p.name for p in out.parent.iterdir()) == ["rows.csv"]  # no temporary file left behind
    with pytest.raises(FileFormatError, match="folder"):
        ledger.export("eval", tmp_path / "missing" / "rows.csv")


def test_the_followers_live_in_live_only() -> None:
    """``stopwise.ledger.follow`` and co. were deprecated aliases of :mod:`stopwise.live` through 0.1; 0.2 removed them."""
    import stopwise.ledger
    import stopwise.live

    for name in ("follow", "Look", "follow_inspect_logs", "InspectLogDir", "LogLook"):
        assert hasattr(stopwise.live, name)
        with pytest.raises(AttributeError):
            getattr(stopwise.ledger, name)


# ---------------------------------------------------------------- issue 20: live evaluations
def test_an_event_resent_from_another_source_is_a_duplicate_not_a_conflict(ledger) -> None:
    """A retried Inspect eval re-appends its reused samples under a new eval id (``source``)."""
    rows = rows_for(TASKS[:6]).assign(source="inspect:EvalFirst")
    assert ledger.append("eval", rows).accepted == 12
    ledger.decide("eval")
    head = ledger.verify("eval").head_digest
    retried = ledger.append("eval", rows.assign(source="inspect:EvalRetry"))
    assert (retried.accepted, retried.duplicates, retried.conflicts) == (0, 12, 0)
    assert len(ledger.conflicts("eval")) == 0
    stored = ledger.outcomes("eval")
    assert len(stored) == 12 and set(stored["source"]) == {"inspect:EvalFirst"}  # the first source is kept
    assert ledger.verify("eval").ok and ledger.verify("eval").head_digest == head
    # a different outcome (or status, flags, ...) under the new source is still a conflict
    changed = rows.iloc[[0]].assign(source="inspect:EvalRetry", outcome=1 - rows["outcome"].iloc[0])
    assert ledger.append("eval", changed).conflicts == 1
    pending = rows.iloc[[1]].assign(source="inspect:EvalRetry", status="pending")
    assert ledger.append("eval", pending).conflicts == 1


# process-bound (two Inspect worker processes): the integration lane; on PostgreSQL in the slow lane (.ci/run)
@pytest.mark.integration
@pytest.mark.parametrize("ledger_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True)
def test_two_worker_processes_one_per_system_decide_and_both_stop(ledger_url: str, tmp_path: Path) -> None:
    """Two OS processes, one per system, share nothing but the ledger: the comparison is decided and both stop."""
    from tests.conftest import unavailable

    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        unavailable("inspect_ai is not installed: pip install -e '.[test]'")
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    worker = repo / "tests" / "inspect" / "paired_worker.py"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    from tests.conftest import load_example

    example = load_example("inspect_live.py")
    (barrier / "policy.toml").write_text(example.POLICY_TOML)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo / "src"), os.environ.get("PYTHONPATH", "")])}
    env["INSPECT_LOG_DIR"] = str(tmp_path / "inspect-logs")
    n = 200
    procs = {
        role: subprocess.Popen(
            [sys.executable, str(worker), ledger_url, role, str(tmp_path / "logs" / role), str(barrier), str(n)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for role in ("tested", "baseline")
    }
    runs = {}
    for role, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        runs[role] = json.loads(out.strip().splitlines()[-1])

    with open_ledger(ledger_url) as ledger:
        history = ledger.decisions("ev")
        finals = [link for link in history if link.record.action != "continue"]
        assert finals, f"no final decision in {len(history)} looks"
        first = finals[0]
        rows = ledger.outcomes("ev")
        upto = ledger.outcomes("ev", upto=first.outcome_seq)
        reg = ledger.registration("ev")
        assert ledger.verify("ev").ok
        engine = raw_engine(ledger)
        with engine.connect() as conn:  # when each event was received, beside when the decision was stored
            received = pd.DataFrame(conn.execute(text("SELECT system, received_at FROM stopwise_outcomes")).all())
        engine.dispose()
    assert first.record.action == "promote"
    assert all(link.record.action == "continue" for link in history[: history.index(first)])
    # the looks were taken by both processes, each when its own append completed a pair
    assert sum(run["looks"] for run in runs.values()) == len(history)
    for role, run in runs.items():
        assert run["status"] == "success", role
        ran, skipped = run["ran"], run["skipped"]
        assert sorted(ran + skipped) == sorted(reg.universe.tasks.tolist())
        # both stop scheduling (without pacing across processes, the faster one may have run ahead before the
        # decision; that it stopped promptly once decided is checked below on the times events were received)
        assert skipped, f"{role} ran all {n}: it did not see the decision at {first.record.n_observed} pairs"
        assert set(run["reasons"]) <= {"stopwise promote", "stopwise top-up"} and "stopwise promote" in run["reasons"]
        meta = run["metadata"]
        assert meta["action"] == "promote" and meta["error"] is None and meta["notes"] == []
        assert meta["decision"] == first.record.model_dump(mode="json")
        assert sorted(rows.loc[rows["system"] == role, "task"]) == sorted(ran)  # every scored sample, nothing else
        # once the decision was stored, only the samples already in flight (max_samples=4) were appended, plus at
        # most one whose schedule check read the chain just before the other process stored the decision (the
        # check and the append of a sample in another thread race with it; seen once on PostgreSQL: 5)
        later = received[(received["system"] == role) & (received["received_at"] > first.created_at)]
        assert len(later) <= 4 + 1, f"{role}: {len(later)} events received after the decision (max_samples is 4)"
    # the decision is reproduced from the ledger's rows up to it
    again = stopwise.decide(upto, "tested", "baseline", reg.policy, universe=reg.universe)
    assert again.action == "promote" and again.n_observed == first.record.n_observed


@pytest.mark.parametrize("how", ["removed", "removed-with-wal", "replaced"])
def test_a_removed_or_replaced_sqlite_file_fails_closed(tmp_path: Path, how: str) -> None:
    path = tmp_path / "ledger.db"
    ledger = open_ledger(path)
    ledger.register("eval", policy=Policy(), universe=universe(), tested="A", baseline="B")
    assert ledger.append("eval", rows_for(TASKS[:3])).accepted == 6
    if how == "replaced":
        with open_ledger(tmp_path / "other.db") as other:
            other.register("eval", policy=Policy(), universe=universe(), tested="A", baseline="B")
        (tmp_path / "other.db").replace(path)
    else:
        for suffix in ("", "-wal", "-shm") if how == "removed-with-wal" else ("",):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    word = "replaced" if how == "replaced" else "removed"
    with pytest.raises(LedgerError, match=f"database file was {word}.*fail closed"):
        ledger.append("eval", rows_for(TASKS[3:6]))
    with pytest.raises(LedgerError, match=f"database file was {word}"):
        ledger.decide("eval")
    ledger.close()


def test_an_in_memory_sqlite_ledger_has_no_file_to_check_and_serves_worker_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with open_ledger("sqlite:///:memory:") as ledger:
        ledger.register("eval", policy=Policy(), universe=universe(), tested="A", baseline="B")
        assert ledger.append("eval", rows_for(TASKS[:2])).accepted == 4
        with ThreadPoolExecutor(1) as pool:  # as the Inspect manager calls it (anyio.to_thread)
            assert pool.submit(ledger.append, "eval", rows_for(TASKS[2:4])).result().accepted == 4
            assert pool.submit(ledger.final_tasks, "eval", "A").result() == set(TASKS[:4])


def test_a_betting_policy_without_a_planned_order_is_refused_at_registration(ledger_url: str, tmp_path: Path) -> None:
    from stopwise.cli.main import main

    betting = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
    with open_ledger(ledger_url) as ledger, pytest.raises(LedgerError, match=r"betting-wor boundary needs the planned task order.*--tasks order.csv"):
        ledger.register("eval", policy=betting, universe=TaskUniverse.from_counts(500), tested="A", baseline="B")
    with open_ledger(ledger_url) as ledger:
        assert ledger.evaluations() == []  # nothing locked
        ledger.register("eval", policy=betting, universe=universe(), tested="A", baseline="B")  # with the order: fine
    policy = tmp_path / "betting.toml"
    policy.write_text('[decision]\nboundary = "betting-wor"\n')
    code = main(["ledger", "init", str(tmp_path / "cli.db"), "ev", "--n-tasks", "500", "-t", "A", "-b", "B", "-p", str(policy)])
    assert code == 4  # a user error, with the message above
    with open_ledger(tmp_path / "cli.db") as ledger:
        assert ledger.evaluations() == []


@pytest.mark.parametrize("ledger_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True)
@pytest.mark.integration  # process-bound: two Inspect worker processes
def test_a_worker_that_fails_at_start_stops_its_partner_in_another_process(ledger_url: str, tmp_path: Path) -> None:
    """Two OS processes; the baseline's worker runs other sample ids (203 questions, the tested 200): it fails at
    start, records why in the ledger, and the tested worker stops with that reason.

    Hand-shakes through the ledger's notices order them, not timing: the baseline starts its evaluation once the
    tested worker recorded ``started`` (so the tested one registered the evaluation), and the tested worker holds
    its 5th and later samples until the baseline recorded ``failed`` (so at most 4 + max_samples ran before)."""
    from tests.conftest import unavailable

    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        unavailable("inspect_ai is not installed: pip install -e '.[test]'")
    import os
    import subprocess
    import sys

    from tests.conftest import load_example

    repo = Path(__file__).resolve().parents[2]
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    (barrier / "policy.toml").write_text(load_example("inspect_live.py").POLICY_TOML)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo / "src"), os.environ.get("PYTHONPATH", "")])}
    env["INSPECT_LOG_DIR"] = str(tmp_path / "inspect-logs")
    worker = repo / "tests" / "inspect" / "paired_worker.py"
    handshakes = {
        "tested": ["--hold-from", "5", "--until-failed", "baseline"],
        "baseline": ["--mine", "203", "--start-after-started", "tested"],
    }
    procs = {
        role: subprocess.Popen(
            [sys.executable, str(worker), ledger_url, role, str(tmp_path / "logs" / role), str(barrier), "200", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for role, extra in handshakes.items()
    }
    runs = {}
    for role, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        runs[role] = json.loads(out.strip().splitlines()[-1])
    assert runs["baseline"]["status"] == "error" and "universe" in runs["baseline"]["error"]
    tested = runs["tested"]
    # the partner stops within the samples in flight and fails closed, its log naming the refusal (issue 35)
    assert tested["status"] == "error" and len(tested["ran"]) <= 4 + 4
    message = " ".join(tested["error"].split())
    assert "the paired task failed (baseline system 'baseline': its task was refused at start:" in message
    with open_ledger(ledger_url) as ledger:
        failed = [n for n in ledger.notices("ev") if n.state == "failed"]
    assert [n.system for n in failed] == ["baseline"] and "universe" in failed[0].message
