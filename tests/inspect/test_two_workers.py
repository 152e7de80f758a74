"""A worker process per system on one SQLite ledger never fails open (issue 37, "a rare fail-open").

Once in 25 runs the baseline worker died and the tested worker then ran all 200 of its samples with 0 looks.
A partner that never starts, or dies, now stops the other within a bounded number of samples (``pace`` plus
the samples in flight), after ``partner_wait`` seconds, and the survivor's log ends in error naming why.
The repetitions of the whole scenario are ``benchmarks/live_two_workers.py`` (its ``one_run`` and
``classify``); the slow lane runs 10 of them, and one with a worker killed at its 8th sample. ``classify`` returns
the rule that gave each run's kind and the run's details (exit codes, log statuses, samples ran and skipped,
stderr tails, the ledger's events and notices): a failing repetition prints every run's. Two causes of ``other``
runs were found that way: a worker refused at start by SQLite while both created the ledger (``database is
locked``; its partner then gave up at the barrier: no log at all; ``tests/ledger/test_creation_race.py``), and a
worker whose own ledger call failed ending its log in success while its partner's ended in error (the last test).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.live_two_workers import WORKER, N, classify, one_run

from stopwise.ledger import open_ledger

REPO = Path(__file__).resolve().parents[2]


def test_a_worker_whose_partner_never_starts_stops_within_a_few_samples(tmp_path: Path) -> None:
    from tests.conftest import load_example

    barrier = tmp_path / "barrier"
    barrier.mkdir()
    (barrier / "policy.toml").write_text(load_example("inspect_live.py").POLICY_TOML)
    (barrier / "baseline").touch()  # the baseline worker "got as far as the barrier" and died before its task started
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO), os.environ.get("PYTHONPATH", "")])}
    env["INSPECT_LOG_DIR"] = str(tmp_path / "inspect-logs")
    done = subprocess.run(
        [sys.executable, str(WORKER), url, "tested", str(tmp_path / "logs"), str(barrier), str(N), "--partner-wait", "1"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads(done.stdout.strip().splitlines()[-1])
    assert run["status"] == "error" and len(run["ran"]) <= 2 + 4  # pace, plus the samples in flight (max_samples)
    message = " ".join(run["error"].split())
    assert "baseline system 'baseline': its task never started" in message and "waited 1 s" in message
    with open_ledger(url) as ledger:
        assert [(n.system, n.state) for n in ledger.notices("ev")] == [("tested", "started"), ("tested", "finished")]


@pytest.mark.slow
def test_a_worker_killed_mid_run_stops_its_partner(tmp_path: Path) -> None:
    run = one_run(tmp_path, die_at=8, partner_wait="5")
    assert run["workers"]["baseline"]["code"] != 0 and run["final"] in (None, "continue")
    assert classify(run).kind == "closed", str(classify(run))
    tested = run["workers"]["tested"]["summary"]
    assert len(tested["ran"]) < 30 and "its worker stored no outcome for 30 s" in " ".join(tested["error"].split())


@pytest.mark.slow
def test_ten_runs_of_two_workers_each_decide_or_fail_closed(tmp_path: Path) -> None:
    verdicts = [classify(one_run(tmp_path / f"run{i}")) for i in range(10)]
    assert {v.kind for v in verdicts} <= {"decided", "closed"}, "\n\n".join(
        f"run {i}: {v}" for i, v in enumerate(verdicts)
    )


@pytest.mark.slow
def test_a_worker_whose_ledger_fails_stops_and_both_logs_end_in_error(tmp_path: Path) -> None:
    """A path to ``other`` before: the worker whose own ledger append failed ended its log in *success* (the error
    only in its summary's metadata) while its partner's ended in error, so ``eval_set`` would retry only the partner."""
    run = one_run(tmp_path, ledger_fails_at=8, partner_wait="5")
    verdict = classify(run)
    assert verdict.kind == "closed", str(verdict)
    baseline, tested = (" ".join(run["workers"][role]["summary"]["error"].split()) for role in ("baseline", "tested"))
    assert "stopwise: ledger append failed (task " in baseline and "OperationalError: database is locked" in baseline
    assert "no later sample of either system was scheduled (fail closed)" in baseline
    assert "the paired task failed (baseline system 'baseline': ledger append failed (task " in tested
