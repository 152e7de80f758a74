"""Many writer processes on one ledger, and a writer killed mid-stream, on SQLite and on PostgreSQL.

Workers are separate processes started with ``spawn`` (nothing shared but the database); the writer
is :func:`tests.support.workload.writer`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import create_engine, text
from tests.support.workload import register_workload, worker_events, writer

import stopwise
from stopwise.errors import LedgerError
from stopwise.ledger import event_digest, open_ledger
from stopwise.ledger._digest import event_payload
from stopwise.records import outcome_columns

pytestmark = pytest.mark.integration  # process-bound: writer processes (spawn) on one ledger

SPAWN = mp.get_context("spawn")


def run_writers(url: str, n_workers: int, n_events: int, *, batch: int, overlap: int = 0) -> list[tuple]:
    """Start the writers, release them together, and return their reports.

    With ``overlap``, each worker first re-sends the first ``overlap`` events of the next worker
    (same content), so that duplicates race with the originals.
    """
    ready = [SPAWN.Event() for _ in range(n_workers)]
    go = SPAWN.Event()
    results = SPAWN.Queue()
    processes = []
    for w in range(n_workers):
        events = worker_events(w, n_workers, n_events)
        if overlap:
            events = worker_events((w + 1) % n_workers, n_workers, n_events)[:overlap] + events
        p = SPAWN.Process(
            target=writer,
            args=(url, "load", events),
            kwargs={"batch": batch, "ready": ready[w], "go": go, "results": results},
        )
        p.start()
        processes.append(p)
    for event in ready:
        assert event.wait(120), "a writer did not open the ledger"
    go.set()
    reports = [results.get(timeout=600) for _ in processes]
    for p in processes:
        p.join(60)
        assert p.exitcode == 0
    return reports


def expected_frame(n_events: int) -> pd.DataFrame:
    return outcome_columns(pd.DataFrame(worker_events(0, 1, n_events))).to_frame()


def check_exactly_once(url: str, n_events: int) -> None:
    engine = create_engine(url)
    with engine.connect() as conn:
        count, distinct = conn.execute(
            text("SELECT count(*), count(DISTINCT system || '|' || task || '|' || attempt) FROM stopwise_outcomes")
        ).one()
        seqs = conn.execute(text("SELECT count(DISTINCT seq) FROM stopwise_outcomes")).scalar()
    engine.dispose()
    assert count == distinct == seqs == n_events
    with open_ledger(url) as ledger:
        stored = ledger.outcomes("load")
        assert ledger.verify("load").ok
    key = ["system", "task", "attempt"]
    got = stored.sort_values(key).reset_index(drop=True)
    want = expected_frame(n_events).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize(
    ("n_events", "overlap"),
    [
        (120, 10),
        # slow: the 120-event case above runs the same races in the default lane
        pytest.param(600, 40, marks=pytest.mark.slow, id="600-40"),
    ],
)
# the default lane races on SQLite; the same races on PostgreSQL run in the slow lane (.ci/run)
@pytest.mark.parametrize("ledger_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True)
def test_four_writers_one_commit_per_event_lose_and_duplicate_nothing(ledger_url: str, n_events: int, overlap: int) -> None:
    n_workers, batch = 4, 1
    register_workload(ledger_url, n_events)
    reports = run_writers(ledger_url, n_workers, n_events, batch=batch, overlap=overlap)
    assert sum(r[4] for r in reports) == n_events  # accepted exactly once in total
    assert sum(r[3] for r in reports) == n_events + n_workers * overlap  # every event acknowledged
    check_exactly_once(ledger_url, n_events)


@pytest.mark.parametrize(
    ("n_workers", "per_worker", "overlap"),
    [
        (4, 100, 25),
        # the figure, slow: the 4 x 100 case above runs the same races in the default lane
        pytest.param(8, 2000, 100, marks=pytest.mark.slow, id="8-2000-100"),
    ],
)
# the default lane races on SQLite; the same races on PostgreSQL run in the slow lane (.ci/run)
@pytest.mark.parametrize("ledger_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True)
def test_writers_in_transactions_of_25_lose_and_duplicate_nothing(ledger_url: str, n_workers: int, per_worker: int, overlap: int) -> None:
    """``n_workers`` processes x ``per_worker`` events (in transactions of 25), all present exactly once, while
    every writer also re-sends ``overlap`` events of another writer; the full scale (the issue's figure) is
    8 x 2,000 = 16,000 events with 100 re-sent each."""
    n_events = n_workers * per_worker
    register_workload(ledger_url, n_events)
    started = time.monotonic()
    reports = run_writers(ledger_url, n_workers, n_events, batch=25, overlap=overlap)
    assert sum(r[4] for r in reports) == n_events  # each event accepted once, by one writer
    assert sum(r[3] for r in reports) == n_events + n_workers * overlap  # the racing re-sends acknowledged too
    check_exactly_once(ledger_url, n_events)
    assert time.monotonic() - started < 600


def read_acks(path: Path) -> set[tuple[str, str, int]]:
    acked = set()
    for line in path.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 3:  # a line cut by the kill was never acknowledged whole
            acked.add((parts[0], parts[1], int(parts[2])))
    return acked


@pytest.mark.parametrize("batch", [1, 7])
def test_sigkill_mid_stream_loses_no_acknowledged_event(ledger_url: str, tmp_path: Path, batch: int) -> None:
    n_events = 6000
    register_workload(ledger_url, n_events)
    acks = tmp_path / "acks.tsv"
    acks.touch()
    events = worker_events(0, 1, n_events)
    process = SPAWN.Process(target=writer, args=(ledger_url, "load", events), kwargs={"batch": batch, "ack_path": str(acks)})
    process.start()
    deadline = time.monotonic() + 120
    while acks.stat().st_size < 200 * 20 and time.monotonic() < deadline:  # about 200 acknowledged events
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.join(30)
    assert process.exitcode == -signal.SIGKILL
    acked = read_acks(acks)
    assert 100 < len(acked) < n_events, "the writer must be killed mid-stream"
    with open_ledger(ledger_url) as ledger:
        stored = ledger.outcomes("load")
        assert ledger.verify("load").ok
    stored_digests = {
        (r["system"], r["task"], int(r["attempt"])): event_digest(event_payload(r)) for r in stored.to_dict("records")
    }
    sent = {
        (r["system"], r["task"], int(r["attempt"])): event_digest(event_payload(r))
        for r in outcome_columns(pd.DataFrame(events)).to_frame().to_dict("records")
    }
    missing = acked - set(stored_digests)
    assert not missing, f"{len(missing)} acknowledged events lost, e.g. {sorted(missing)[:3]}"
    assert all(stored_digests[k] == sent[k] for k in acked)
    # at most the batch in flight was committed without its acknowledgement being written
    assert len(stored_digests) - len(acked) <= batch
    # the ledger takes the rest of the stream after the crash: nothing lost, nothing twice
    with open_ledger(ledger_url) as ledger:
        result = ledger.append("load", events)
    assert result.accepted + result.duplicates == n_events and result.conflicts == 0
    assert result.duplicates == len(stored_digests)


@pytest.mark.parametrize("n_events", [300, pytest.param(900, marks=pytest.mark.slow)])
def test_decisions_taken_while_writers_append_all_verify(ledger_url: str, n_events: int) -> None:
    n_workers = 3
    register_workload(ledger_url, n_events)
    ready = [SPAWN.Event() for _ in range(n_workers)]
    go = SPAWN.Event()
    results = SPAWN.Queue()
    processes = [
        SPAWN.Process(
            target=writer,
            args=(ledger_url, "load", worker_events(w, n_workers, n_events)),
            kwargs={"batch": 5, "ready": ready[w], "go": go, "results": results, "decide_every": 10 if w == 0 else 0},
        )
        for w in range(n_workers)
    ]
    for p in processes:
        p.start()
    for event in ready:
        assert event.wait(120)
    go.set()
    with open_ledger(ledger_url) as ledger:
        taken = 0
        while any(p.is_alive() for p in processes):
            try:
                ledger.decide("load")
                taken += 1
            except (stopwise.ComparisonError, LedgerError):
                pass  # no outcome event yet
            time.sleep(0.02)
        for p in processes:
            p.join(60)
            assert p.exitcode == 0
        ledger.decide("load")
        result = ledger.verify("load")
        history = ledger.decisions("load")
    assert result.ok, result.first_mismatch
    assert result.n_decisions == len(history) >= taken + 1
    assert history[-1].outcome_seq > 0 and history[-1].record.n_observed == n_events // 2
