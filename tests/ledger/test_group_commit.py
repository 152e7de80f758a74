"""Group commit on SQLite (issue 31): concurrent appenders share WAL flushes, and nothing acknowledged is lost.

An append returns once a WAL flush that started after its commit has finished
(:mod:`stopwise.ledger._group_commit`). The mechanics are shown with a held flush (deterministic
hand-shakes, no timing); the promise with appender processes killed by SIGKILL at seeded random
points, and with two writer processes racing a third that holds SQLite's write lock.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.support.ledger_rows import TASKS, rows_for, universe
from tests.support.workload import racing_writer, register_workload, worker_events, writer

from stopwise.errors import LedgerError
from stopwise.ledger import event_digest, open_ledger
from stopwise.ledger._digest import event_payload
from stopwise.records import Policy, outcome_columns

SPAWN = mp.get_context("spawn")
WAIT_S = 60.0
"""Longest wait of a hand-shake before the test fails (never reached when the code is right)."""


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


def _one_event(task: str, system: str = "A") -> list[dict[str, object]]:
    return [{"system": system, "task": task, "outcome": 1.0, "source": "test"}]


def test_one_flush_serves_the_appends_waiting_at_that_moment(tmp_path: Path) -> None:
    """Thread 1's flush is held; threads 2-4 commit meanwhile and wait, since that flush started before their
    commits; once it ends, one flush serves all three. Four durable appends, two flushes, none returned early."""
    with open_ledger(tmp_path / "l.db") as ledger:
        ledger.register("eval", policy=Policy(), universe=universe(), tested="A", baseline="B")
        group = ledger.store.group_commit
        assert group is not None
        flushes, commits = group.flushes, group.commits
        release, flush = threading.Event(), group.flush
        flushed_at: list[float] = []

        def held(path: Path) -> None:
            if len(flushed_at) == 0:
                assert release.wait(WAIT_S)
            flush(path)
            flushed_at.append(time.monotonic())

        group.flush = held
        returned: dict[str, float] = {}

        def append(task: str) -> None:
            assert ledger.append("eval", _one_event(task)).accepted == 1
            returned[task] = time.monotonic()

        first = threading.Thread(target=append, args=(TASKS[0],))
        first.start()
        _until(lambda: group.commits == commits + 1, "the first commit")
        others = [threading.Thread(target=append, args=(task,)) for task in TASKS[1:4]]
        for thread in others:
            thread.start()
        _until(lambda: group.commits == commits + 4, "three commits while the first flush is held")
        assert returned == {}  # no append returned before a flush covering it ended
        release.set()
        for thread in [first, *others]:
            thread.join(WAIT_S)
        assert group.flushes == flushes + 2 and len(flushed_at) == 2
        assert returned[TASKS[0]] >= flushed_at[0]
        assert all(returned[task] >= flushed_at[1] for task in TASKS[1:4])  # each waited for the flush after its commit
        assert sorted(ledger.outcomes("eval")["task"]) == TASKS[:4]


def test_a_flush_that_fails_acknowledges_nothing_and_the_retry_is_a_duplicate(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.db") as ledger:
        ledger.register("eval", policy=Policy(), universe=universe(), tested="A", baseline="B")
        group = ledger.store.group_commit
        assert group is not None
        flush = group.flush

        def failing(path: Path) -> None:
            raise OSError(5, "Input/output error")

        group.flush = failing
        with pytest.raises(LedgerError, match=r"could not be flushed to disk \(OSError: .*Input/output error\); nothing was acknowledged"):
            ledger.append("eval", rows_for(TASKS[:2]))
        group.flush = flush
        again = ledger.append("eval", rows_for(TASKS[:2]))  # the commit was made, unacknowledged: now acknowledged
        assert (again.accepted, again.duplicates) == (0, 4)
        assert ledger.verify("eval").ok


def _read_acks(path: Path) -> set[tuple[str, str, int]]:
    acked = set()
    for line in path.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) == 3:  # a line cut by the kill was never acknowledged whole
            acked.add((parts[0], parts[1], int(parts[2])))
    return acked


@pytest.mark.integration  # process-bound: appender processes killed with SIGKILL
@pytest.mark.parametrize(("processes", "threads", "seed"), [(4, 1, 1), (2, 3, 2), pytest.param(4, 2, 3, marks=pytest.mark.slow)])
# PostgreSQL (its own group commit) in the slow lane (.ci/run): SQLite, where the ledger flushes, in the default lane
@pytest.mark.parametrize("ledger_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True)
def test_appenders_killed_at_seeded_random_points_lose_nothing_acknowledged(
    ledger_url: str, tmp_path: Path, processes: int, threads: int, seed: int
) -> None:
    """Appender processes (``threads`` appender threads each, one event per call; the first also decides every
    5 calls) are each killed with SIGKILL after a seeded random number of acknowledgements plus a seeded random
    delay: every acknowledged event is in the ledger with the content sent, at most the appends in flight were
    stored unacknowledged, the chain verifies, and the rest of the stream is taken once."""
    url = ledger_url
    n_events = 4000
    register_workload(url, n_events)
    rng = np.random.default_rng(seed)
    kill_after = rng.integers(40, 240, size=processes)
    delays = rng.uniform(0.0, 0.01, size=processes)
    acks = [tmp_path / f"acks-{w}.tsv" for w in range(processes)]
    ready = [SPAWN.Event() for _ in range(processes)]
    go = SPAWN.Event()
    appenders = []
    for w in range(processes):
        acks[w].touch()
        kwargs = {"ack_path": str(acks[w]), "ready": ready[w], "go": go, "threads": threads, "decide_every": 5 if w == 0 else 0}
        appenders.append(SPAWN.Process(target=writer, args=(url, "load", worker_events(w, processes, n_events)), kwargs=kwargs))
    for p in appenders:
        p.start()
    for event in ready:
        assert event.wait(120), "an appender did not open the ledger"
    go.set()
    order = np.argsort(kill_after)
    for w in order:
        _until(lambda w=w: len(acks[w].read_text().splitlines()) >= kill_after[w] or not appenders[w].is_alive(),
               f"appender {w} to acknowledge {kill_after[w]} events")
        time.sleep(float(delays[w]))
        os.kill(appenders[w].pid, signal.SIGKILL)
    for p in appenders:
        p.join(30)
        assert p.exitcode == -signal.SIGKILL, "each appender must be killed mid-stream"
    acked = set().union(*(_read_acks(path) for path in acks))
    assert len(acked) >= int(kill_after.sum())
    events = [e for w in range(processes) for e in worker_events(w, processes, n_events)]
    sent = {
        (r["system"], r["task"], int(r["attempt"])): event_digest(event_payload(r))
        for r in outcome_columns(pd.DataFrame(events)).to_frame().to_dict("records")
    }
    with open_ledger(url) as ledger:
        stored = {
            (r["system"], r["task"], int(r["attempt"])): event_digest(event_payload(r))
            for r in ledger.outcomes("load").to_dict("records")
        }
        result = ledger.verify("load")
        assert result.ok, result.first_mismatch
        assert result.n_decisions > 0  # decisions were appended (and some killed) while the others appended
    missing = acked - set(stored)
    assert not missing, f"{len(missing)} acknowledged events lost, e.g. {sorted(missing)[:3]}"
    assert all(stored[key] == sent[key] for key in stored)
    assert len(stored) - len(acked) <= processes * threads  # at most one append in flight per appender
    with open_ledger(url) as ledger:
        rest = ledger.append("load", events)
    assert (rest.accepted + rest.duplicates, rest.conflicts, rest.duplicates) == (n_events, 0, len(stored))


@pytest.mark.integration  # process-bound: two writer processes and a lock-taking connection
def test_two_writer_processes_never_get_an_immediate_busy_error(tmp_path: Path) -> None:
    """Two processes create one new ledger at once, register, append, decide and notify, while a third connection
    takes SQLite's write lock again and again: every write transaction begins IMMEDIATE (a deferred one that has
    read cannot take the lock and fails at once, without the busy timeout), so nothing fails."""
    path = tmp_path / "l.db"
    url = f"sqlite:///{path}"
    n_events = 400
    go = SPAWN.Event()
    results = SPAWN.Queue()
    writers = [
        SPAWN.Process(target=racing_writer, args=(url, worker_events(w, 2, n_events), n_events, go, results),
                      kwargs={"decide_every": 5})
        for w in range(2)
    ]
    for p in writers:
        p.start()
    go.set()
    _until(lambda: path.exists() and Path(f"{path}-wal").exists(), "the ledger to be created")
    holder = sqlite3.connect(path, timeout=60, isolation_level=None)
    held = 0
    while any(p.is_alive() for p in writers) and held < 40:
        holder.execute("BEGIN IMMEDIATE")
        time.sleep(0.05)
        holder.execute("COMMIT")
        held += 1
        time.sleep(0.02)
    holder.close()
    reports = [results.get(timeout=300) for _ in writers]
    for p in writers:
        p.join(30)
    assert [error for _, error, _ in reports] == [None, None], reports
    assert sorted(calls for _, _, calls in reports) == [n_events // 2, n_events // 2]
    assert held > 0
    with open_ledger(url) as ledger:
        assert len(ledger.outcomes("load")) == n_events and ledger.verify("load").ok
