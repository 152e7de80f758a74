"""The two-worker SQLite scenario, N times: a worker process per system on one ledger never fails open (issue 37).

Each repetition starts two ``tests/inspect/paired_worker.py`` processes (the docs example's 200 questions and
mock systems, the betting boundary, ``max_samples=4``), one per system, on a fresh SQLite ledger, and classifies
the run from the workers' summaries and the ledger:

* ``decided``: a final decision in the ledger, and each worker stopped (it skipped samples, or ran fewer than all);
* ``closed``: no decision, and every worker that wrote a log ended it in error naming stopwise's reason (a
  worker that died wrote none; its partner's log names it);
* ``fail-open``: a worker ran its whole dataset without a decision (what must never happen);
* ``other``: anything else (printed in full).

A worker that exited non-zero is counted (``crashed``) and the last line of its stderr shown: the run is
still classified by what its partner did. ``--die-at K`` kills the baseline worker at its K-th sample in every
repetition (the partner must fail closed); ``--partner-wait`` is the spec's ``partner_wait``.

Usage: python -m benchmarks.live_two_workers [--runs 50] [--die-at K] [--partner-wait 30] [--quick]

Run it under load as issue 37 asks: ``yes > /dev/null &`` twice, then kill both. ``--quick``: 2 runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORKER = REPO / "tests" / "inspect" / "paired_worker.py"
N = 200


def one_run(folder: Path, *, die_at: int | None = None, partner_wait: str = "30") -> dict[str, Any]:
    """Run the two workers once in ``folder``; their summaries, exit codes, stderr tails and the ledger's decision."""
    from stopwise.ledger import open_ledger

    sys.path.insert(0, str(REPO))
    from tests.conftest import load_example

    barrier = folder / "barrier"
    barrier.mkdir(parents=True)
    (barrier / "policy.toml").write_text(load_example("inspect_live.py").POLICY_TOML)
    url = f"sqlite:///{folder / 'ledger.db'}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO), os.environ.get("PYTHONPATH", "")])}
    env["INSPECT_LOG_DIR"] = str(folder / "inspect-logs")
    procs = {}
    for role in ("tested", "baseline"):
        extra = ["--partner-wait", partner_wait]
        if die_at is not None and role == "baseline":
            extra += ["--die-at", str(die_at)]
        procs[role] = subprocess.Popen(
            [sys.executable, str(WORKER), url, role, str(folder / "logs" / role), str(barrier), str(N), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
    workers: dict[str, Any] = {}
    for role, proc in procs.items():
        out, err = proc.communicate(timeout=900)
        lines = out.strip().splitlines()
        summary = None
        if proc.returncode == 0 and lines:
            summary = json.loads(lines[-1])
        workers[role] = {"code": proc.returncode, "summary": summary,
                         "stderr": err.strip().splitlines()[-1] if err.strip() else ""}
    final: str | None = None
    if (folder / "ledger.db").exists():
        try:
            with open_ledger(url, mode="read") as ledger:
                if "ev" in ledger.evaluations():
                    first = ledger.first_decision("ev")
                    final = None if first is None else first.record.action
        except Exception as exc:  # a ledger the run left unreadable is a finding, not a crash of the benchmark
            final = f"unreadable: {exc}"
    return {"workers": workers, "final": final}


def classify(run: dict[str, Any]) -> str:
    """``decided``, ``closed``, ``fail-open`` or ``other`` (see the module docstring)."""
    summaries = [w["summary"] for w in run["workers"].values() if w["summary"] is not None]
    if any(s["status"] == "success" and len(s["ran"]) == N and run["final"] in (None, "continue") for s in summaries):
        return "fail-open"
    if run["final"] in ("promote", "reject", "abstain"):
        stopped = all(len(s["ran"]) < N or s["skipped"] for s in summaries)
        return "decided" if stopped else "other"
    if summaries and all(s["status"] == "error" and "stopwise" in (s["error"] or "") for s in summaries):
        return "closed"
    return "other"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--die-at", type=int, default=None)
    parser.add_argument("--partner-wait", default="30")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    runs = 2 if args.quick else args.runs
    counts: Counter[str] = Counter()
    crashed = 0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="two-workers-") as tmp:
        for i in range(runs):
            t0 = time.perf_counter()
            run = one_run(Path(tmp) / f"run{i}", die_at=args.die_at, partner_wait=args.partner_wait)
            kind = classify(run)
            counts[kind] += 1
            bad = [(role, w["code"], w["stderr"][-300:]) for role, w in run["workers"].items() if w["code"] != 0]
            crashed += bool(bad)
            ran = {role: (None if w["summary"] is None else len(w["summary"]["ran"])) for role, w in run["workers"].items()}
            print(f"run {i + 1:>3}: {kind:<9} final={run['final']} ran={ran} {time.perf_counter() - t0:.1f} s"
                  + (f" crashed={bad}" if bad else ""), flush=True)
            if kind in ("other", "fail-open"):
                print(json.dumps(run, default=str)[:4000], flush=True)
    print(f"\n{runs} runs in {time.perf_counter() - start:.0f} s: "
          + ", ".join(f"{k} {counts[k]}" for k in ("decided", "closed", "fail-open", "other"))
          + f"; runs with a crashed worker: {crashed}")
    return 0 if counts["fail-open"] == 0 and counts["other"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
