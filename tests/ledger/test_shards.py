"""Sharded workers of one system: two processes each run half of the tested system's samples, a third the baseline.

Nothing is shared but the ledger (a SQLite file; a PostgreSQL database). Each worker registers the whole planned universe and runs its part of it;
one comparison, one first final decision; all three workers stop scheduling once it is taken; ``ledger export
--upto-decision`` followed by ``decide`` reproduces it (the same record digest).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import stopwise
from stopwise.cli.main import main
from stopwise.ledger import open_ledger

REPO = Path(__file__).resolve().parents[2]
N = 200


@pytest.mark.slow
@pytest.mark.parametrize("ledger_url", ["sqlite", "postgresql"], indirect=True)
def test_two_shards_of_the_tested_system_and_the_baseline_share_one_decision(ledger_url: str, tmp_path: Path) -> None:
    from tests.conftest import load_example, skip_without

    skip_without("inspect_ai", "pip install -e '.[test]'")

    barrier = tmp_path / "barrier"
    barrier.mkdir()
    (barrier / "policy.toml").write_text(load_example("inspect_live.py").POLICY_TOML)
    url = ledger_url
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO), os.environ.get("PYTHONPATH", "")]),
           "INSPECT_LOG_DIR": str(tmp_path / "inspect-logs")}
    expect = "tested-0,tested-1,baseline"
    workers = {
        "tested-0": ["tested", "--shard", "0/2"],
        "tested-1": ["tested", "--shard", "1/2"],
        "baseline": ["baseline"],
    }
    procs = {
        name: subprocess.Popen(
            [sys.executable, str(REPO / "tests" / "inspect" / "paired_worker.py"), url, args[0],
             str(tmp_path / "logs" / name), str(barrier), str(N), *args[1:], "--expect", expect],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for name, args in workers.items()
    }
    runs = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]
        runs[name] = json.loads(out.strip().splitlines()[-1])

    with open_ledger(url, mode="read") as ledger:
        first = ledger.first_decision("ev")
        history = ledger.decisions("ev")
        reg = ledger.registration("ev")
        rows = ledger.outcomes("ev")
        assert ledger.verify("ev").ok
    assert first is not None and first.record.action == "promote"
    assert all(link.record.action == "continue" for link in history if link.sequence < first.sequence)
    planned = reg.universe.tasks.tolist()
    shards = {"tested-0": set(planned[0::2]), "tested-1": set(planned[1::2]), "baseline": set(planned)}
    for name, run in runs.items():
        assert run["status"] == "success", name
        # each worker ran and skipped exactly its part; all three stopped scheduling on the one decision
        assert set(run["ran"]) | set(run["skipped"]) == shards[name] and not set(run["ran"]) & set(run["skipped"])
        assert run["skipped"] and "stopwise promote" in run["reasons"], name
        assert run["metadata"]["decision"] == first.record.model_dump(mode="json"), name
    tested_ran = set(runs["tested-0"]["ran"]) | set(runs["tested-1"]["ran"])
    assert set(rows.loc[rows["system"] == "tested", "task"]) == tested_ran
    assert len(tested_ran) < N // 2 and len(runs["baseline"]["ran"]) < N // 2
    # the looks were taken by all three processes together
    assert sum(run["looks"] for run in runs.values()) == len(history)
    # export --upto-decision reproduces the decision
    upto = tmp_path / "upto.csv"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["ledger", "export", url, "ev", "-o", str(upto), "--upto-decision", str(first.sequence)]) == 0
    again = stopwise.decide(stopwise.read_outcomes(upto), "tested", "baseline", reg.policy, universe=reg.universe)
    assert again.digest() == first.record.digest()
