"""The two-worker SQLite scenario, N times: a worker process per system on one ledger never fails open (issue 37).

Each repetition starts two ``tests/inspect/paired_worker.py`` processes (the docs example's 200 questions and
mock systems, the betting boundary, ``max_samples=4``), one per system, on a fresh SQLite ledger, and classifies
the run from the workers' summaries and the ledger:

* ``decided``: a final decision in the ledger, and each worker stopped (it skipped samples, or ran fewer than all);
* ``closed``: no decision, and every worker that wrote a log ended it in error naming stopwise's reason (a
  worker that died wrote none; its partner's log names it);
* ``fail-open``: a worker ran its whole dataset without a decision (what must never happen);
* ``other``: anything else (:func:`classify` lists every path to it; the run's details are printed).

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORKER = REPO / "tests" / "inspect" / "paired_worker.py"
N = 200


def one_run(
    folder: Path, *, die_at: int | None = None, ledger_fails_at: int | None = None, partner_wait: str = "30", timeout: float = 900.0
) -> dict[str, Any]:
    """Run the two workers once in ``folder``: per worker (exit code, summary, timing, stdout and stderr tails, its
    logs' statuses) and the ledger (first decision, outcome events per system, worker notices).

    Each worker's stdout and stderr go to files in ``folder`` (``tested.out``, ``tested.err``, ...): a pipe read
    only after the other worker's would fill and block a chatty worker. A worker still running ``timeout``
    seconds after the start is killed and marked ``timed_out``; a summary line that is not JSON is kept as text.
    """

    sys.path.insert(0, str(REPO))
    from tests.conftest import load_example

    barrier = folder / "barrier"
    barrier.mkdir(parents=True)
    (barrier / "policy.toml").write_text(load_example("inspect_live.py").POLICY_TOML)
    url = f"sqlite:///{folder / 'ledger.db'}"
    # the workers' settings are their arguments only: no STOPWISE_* or INSPECT_* variable and no working folder of
    # the calling process (a test run before in the same pytest process, a user's shell) reaches them
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STOPWISE_", "INSPECT_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO), os.environ.get("PYTHONPATH", "")])
    env["INSPECT_LOG_DIR"] = str(folder / "inspect-logs")
    procs = {}
    start = time.monotonic()
    for role in ("tested", "baseline"):
        extra = ["--partner-wait", partner_wait]
        if die_at is not None and role == "baseline":
            extra += ["--die-at", str(die_at)]
        if ledger_fails_at is not None and role == "baseline":
            extra += ["--ledger-fails-at", str(ledger_fails_at)]
        with open(folder / f"{role}.out", "w") as out, open(folder / f"{role}.err", "w") as err:
            procs[role] = subprocess.Popen(
                [sys.executable, str(WORKER), url, role, str(folder / "logs" / role), str(barrier), str(N), *extra],
                stdout=out, stderr=err, env=env, cwd=folder,
            )
    workers: dict[str, Any] = {}
    for role, proc in procs.items():
        timed_out = False
        try:
            proc.wait(timeout=max(0.0, start + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            timed_out = True
        workers[role] = _worker(folder, role, proc.returncode, timed_out, time.monotonic() - start)
    return {"workers": workers, **_ledger_state(url, folder / "ledger.db")}


def _worker(folder: Path, role: str, code: int, timed_out: bool, seconds: float) -> dict[str, Any]:
    """What one worker left: exit code, its JSON summary (or None), the tails of its output and its logs."""
    out = (folder / f"{role}.out").read_text(errors="replace").strip()
    err = (folder / f"{role}.err").read_text(errors="replace").strip()
    lines = out.splitlines()
    summary, not_json = None, None
    if code == 0 and lines:
        try:
            summary = json.loads(lines[-1])
        except ValueError:
            not_json = lines[-1][-500:]
    return {
        "code": code, "timed_out": timed_out, "seconds": round(seconds, 1), "summary": summary, "not_json": not_json,
        "stdout_tail": "\n".join(lines[-5:])[-1000:] if summary is None else "",
        "stderr": err.splitlines()[-1] if err else "", "stderr_tail": "\n".join(err.splitlines()[-25:])[-4000:],
        "logs": _logs(folder / "logs" / role),
    }


def _logs(folder: Path) -> list[dict[str, Any]]:
    """Each Inspect log in ``folder``: its name, status, error message and number of samples (header only)."""
    from inspect_ai.log import read_eval_log

    found = []
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        try:
            log = read_eval_log(str(path), header_only=True)
            error = None if log.error is None else log.error.message[-500:]
            found.append({"file": path.name, "status": log.status, "error": error,
                          "samples": None if log.results is None else log.results.completed_samples})
        except Exception as exc:  # a log cut short by a killed worker is a finding, not a crash of the benchmark
            found.append({"file": path.name, "unreadable": f"{type(exc).__name__}: {str(exc)[:300]}"})
    return found


def _ledger_state(url: str, database: Path) -> dict[str, Any]:
    """The ledger's first decision (``final``), decisions, outcome events per system and worker notices."""
    from stopwise.ledger import open_ledger

    state: dict[str, Any] = {"final": None, "decisions": 0, "events": {}, "notices": []}
    if not database.exists():
        return state
    try:
        with open_ledger(url, mode="read") as ledger:
            if "ev" in ledger.evaluations():
                first = ledger.first_decision("ev")
                state["final"] = None if first is None else first.record.action
                state["decisions"] = len(ledger.decisions("ev"))
                state["events"] = {str(k): int(v) for k, v in ledger.outcomes("ev")["system"].value_counts().items()}
                state["notices"] = [f"{n.system}:{n.state}" for n in ledger.notices("ev")]
    except Exception as exc:  # a ledger the run left unreadable is a finding, not a crash of the benchmark
        state["final"] = f"unreadable: {type(exc).__name__}: {exc}"
    return state


@dataclass(frozen=True)
class Verdict:
    """How one run of the scenario ended, and why.

    Attributes
    ----------
    kind : str
        ``decided``, ``closed``, ``fail-open`` or ``other`` (see the module docstring).
    why : str
        The rule that gave ``kind``, naming the worker and the fact (for ``other``: what broke which rule).
    details : str
        Per worker: exit code, time, timeout, log status, samples ran and skipped, the error, its logs and the
        tail of its stderr; and the ledger's decision, events per system and worker notices.

    Examples
    --------
    >>> run = {"workers": {}, "final": None}
    >>> classify(run).kind, classify(run).why
    ('other', 'no decision in the ledger and no worker wrote a summary (every worker exited non-zero or timed out)')
    """

    kind: str
    why: str
    details: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.why}\n{self.details}"


def describe(run: dict[str, Any]) -> str:
    """The run's details, a line per worker and one for the ledger."""
    lines = []
    for role, w in run["workers"].items():
        s = w.get("summary")
        head = f"{role}: exit {w['code']}" + (" TIMED OUT" if w.get("timed_out") else "") + f" after {w.get('seconds')} s"
        if s is not None:
            head += (f"; log {s['status']}, ran {len(s['ran'])}, skipped {len(s['skipped'])}, looks {s.get('looks')}"
                     f", reasons {s.get('reasons')}, error {' '.join((s['error'] or '').split())[:600]!r}")
            meta = s.get("metadata") or {}
            if meta.get("error") or meta.get("notes"):  # a success log's own account (a ledger failure, a note)
                head += f", summary error {meta.get('error')!r}, notes {[n[:200] for n in meta.get('notes') or []]}"
        else:
            head += f"; no summary (stdout tail {w.get('not_json') or w.get('stdout_tail', '')!r})"
        head += f"; logs {w.get('logs')}"
        lines.append(head)
        if w.get("stderr_tail"):
            lines.append("  stderr tail:\n    " + w["stderr_tail"].replace("\n", "\n    "))
    lines.append(f"ledger: final {run['final']!r}, decisions {run.get('decisions')}, events {run.get('events')}, "
                 f"notices {run.get('notices')}")
    return "\n".join(lines)


def classify(run: dict[str, Any]) -> Verdict:
    """The run's :class:`Verdict`: ``decided``, ``closed``, ``fail-open`` or ``other``, the rule, and the details.

    Every path to ``other``: a decision in the ledger while a worker ran its whole dataset and skipped nothing;
    no decision and no summary at all (both workers exited non-zero, were killed at the timeout, or printed no
    JSON); no decision and a worker whose log ended otherwise than in error naming stopwise (``success`` with
    fewer than all samples, ``cancelled``, or an error that is not stopwise's: a raw library exception); and a
    ledger that could not be read.
    """
    details = describe(run)
    final = run["final"]
    summaries = {role: w["summary"] for role, w in run["workers"].items() if w["summary"] is not None}
    for role, s in summaries.items():
        if s["status"] == "success" and len(s["ran"]) == N and final in (None, "continue"):
            return Verdict("fail-open", f"{role} ran all {N} samples and the ledger holds no decision ({final})", details)
    if isinstance(final, str) and final.startswith("unreadable"):
        return Verdict("other", f"the ledger cannot be read after the run ({final})", details)
    if final in ("promote", "reject", "abstain"):
        unstopped = [role for role, s in summaries.items() if len(s["ran"]) >= N and not s["skipped"]]
        if not unstopped:
            return Verdict("decided", f"{final} in the ledger; every worker that wrote a summary stopped", details)
        return Verdict("other", f"{final} in the ledger, but {' and '.join(unstopped)} ran all {N} samples and "
                       "skipped none (decided only after its last sample started)", details)
    if not summaries:
        return Verdict("other", "no decision in the ledger and no worker wrote a summary (every worker exited "
                       "non-zero or timed out)", details)
    off = {role: s for role, s in summaries.items() if not (s["status"] == "error" and "stopwise" in (s["error"] or ""))}
    if not off:
        return Verdict("closed", f"no decision ({final}); every log that was written ended in error naming stopwise",
                       details)
    return Verdict("other", f"no decision ({final}); " + "; ".join(
        f"{role}'s log ended {s['status']} after {len(s['ran'])} samples"
        + (f" with an error not naming stopwise: {' '.join((s['error'] or '').split())[:200]!r}" if s["status"] == "error" else "")
        for role, s in off.items()), details)


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
            verdict = classify(run)
            counts[verdict.kind] += 1
            bad = [(role, w["code"], w["stderr"][-300:]) for role, w in run["workers"].items() if w["code"] != 0]
            crashed += bool(bad)
            ran = {role: (None if w["summary"] is None else len(w["summary"]["ran"])) for role, w in run["workers"].items()}
            print(f"run {i + 1:>3}: {verdict.kind:<9} final={run['final']} ran={ran} {time.perf_counter() - t0:.1f} s"
                  + (f" crashed={bad}" if bad else ""), flush=True)
            if verdict.kind in ("other", "fail-open"):
                print(str(verdict), flush=True)
    print(f"\n{runs} runs in {time.perf_counter() - start:.0f} s: "
          + ", ".join(f"{k} {counts[k]}" for k in ("decided", "closed", "fail-open", "other"))
          + f"; runs with a crashed worker: {crashed}")
    return 0 if counts["fail-open"] == 0 and counts["other"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
