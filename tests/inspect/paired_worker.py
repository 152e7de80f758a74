"""One system of a paired comparison in its own OS process, on a shared ledger (issue 20).

The tests start two of these, one per system, on one ledger (SQLite file or PostgreSQL database):
each builds the paired managers the documented way, keeps the one of its system and runs a real
Inspect evaluation of the docs example's mock system. Nothing is shared between the two processes
but the ledger.

    python paired_worker.py LEDGER_URL ROLE LOG_DIR BARRIER_DIR N [--mine N_MINE]
        [--start-after-started SYSTEM] [--hold-from K --until-failed SYSTEM] [--shard K/M --expect NAMES]
        [--partner-wait S] [--die-at K] [--ledger-fails-at K]

The two processes wait for each other at BARRIER_DIR (a file per role) before their evaluations
start, so that their samples interleave (as two workers started together would). The last line of
stdout is a JSON summary of the run. ``--mine`` (default N) is the size of this worker's dataset (a
worker given other sample ids than its partner's fails at start). Hand-shakes through the ledger's
worker notices order the two workers without timing: ``--start-after-started SYSTEM`` starts this
worker's evaluation once SYSTEM's worker has recorded ``started`` (it registered the evaluation);
``--hold-from K --until-failed SYSTEM`` holds this worker's K-th and later samples (in its solver)
until SYSTEM's worker has recorded ``failed``, so that no more than K + max_samples samples run before
it. ``--shard K/M`` runs only the planned positions p with p % M == K (the universe registered is the whole
planned order), waiting at the barrier as ``ROLE-K`` for every name of ``--expect``. ``--partner-wait`` is the
spec's ``partner_wait`` (``none``: None); ``--die-at K`` ends this process at its K-th sample at once (``os._exit``:
no log, no notice), as a worker killed or crashed would; ``--ledger-fails-at K`` makes every ledger append of this
process fail from its K-th sample on (``sqlite3.OperationalError: database is locked``), as a ledger that stays
busy past its timeout would. Each wait fails after :data:`HANDSHAKE_S` seconds (never
reached when the code is right).
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
HANDSHAKE_S = 300.0
"""Longest wait for the other worker's notice."""


def wait_for_notice(url: str, system: str, state: str) -> None:
    """Return once ``system``'s latest worker notice in the ledger is ``state`` (the ledger may not exist yet)."""
    from stopwise.errors import LedgerError
    from stopwise.ledger import open_ledger

    deadline = time.monotonic() + HANDSHAKE_S
    while time.monotonic() < deadline:
        try:
            with open_ledger(url, mode="read") as ledger:
                mine = [n for n in ledger.notices("ev") if n.system == system]
        except LedgerError:  # not created yet by the other worker
            mine = []
        if mine and mine[-1].state == state:
            return
        time.sleep(0.02)
    raise SystemExit(f"the {system} worker never recorded {state!r} in {HANDSHAKE_S:.0f} s")


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("inspect_live_example", REPO / "docs" / "examples" / "inspect_live.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    import anyio
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, TaskState, generate, solver

    import stopwise
    from stopwise.inspect import paired_early_stopping, planned_order

    parser = argparse.ArgumentParser()
    for name in ("url", "role", "log_dir", "barrier"):
        parser.add_argument(name)
    parser.add_argument("n", type=int)
    parser.add_argument("--mine", type=int, default=None)
    parser.add_argument("--start-after-started", default=None)
    parser.add_argument("--hold-from", type=int, default=None)
    parser.add_argument("--until-failed", default=None)
    parser.add_argument("--shard", default=None, help="K/M: run only the planned positions p with p % M == K")
    parser.add_argument("--expect", default="tested,baseline", help="the barrier names of every worker of the run")
    parser.add_argument("--partner-wait", default="30")
    parser.add_argument("--die-at", type=int, default=None)
    parser.add_argument("--ledger-fails-at", type=int, default=None)
    args = parser.parse_args(argv)
    url, role, log_dir, barrier = args.url, args.role, args.log_dir, args.barrier
    mine = args.n if args.mine is None else args.mine
    example = _example()
    policy_file = Path(barrier) / "policy.toml"
    if not policy_file.exists():
        policy_file.write_text(example.POLICY_TOML)
    policy = stopwise.load_policy(policy_file)
    dataset, universe = planned_order(example.questions(mine), policy, group="group")
    name = role
    if args.shard is not None:  # a shard of one system: its samples are a part of the planned universe, registered whole
        k, m = (int(x) for x in args.shard.split("/"))
        dataset = [sample for position, sample in enumerate(dataset) if position % m == k]
        name = f"{role}-{k}"
    wait = None if args.partner_wait == "none" else float(args.partner_wait)
    managers = paired_early_stopping(
        url, "ev", tested="tested", baseline="baseline", policy=policy, universe=universe, refresh=0.0,
        partner_wait=wait,
    )
    manager = managers[0] if role == "tested" else managers[1]
    started = itertools.count(1)

    def locked(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database is locked")

    released: list[bool] = []

    @solver
    def think() -> Any:  # a few milliseconds per sample, as a model call would take
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            count = next(started)
            if args.die_at is not None and count >= args.die_at:
                os._exit(9)
            if args.ledger_fails_at is not None and count == args.ledger_fails_at:
                manager.comparison.ledger.append = locked  # type: ignore[method-assign]
            if args.hold_from is not None and count >= args.hold_from and not released:
                await anyio.to_thread.run_sync(wait_for_notice, url, args.until_failed, "failed")
                released.append(True)
            await anyio.sleep(0.01)
            return state

        return solve

    task = Task(
        dataset=dataset,
        solver=[think(), generate()],
        scorer=match(),
        model=example.mock_system(role, 0.90 if role == "tested" else 0.55),
        early_stopping=manager,
        name=role,
    )
    (Path(barrier) / name).touch()
    deadline = time.monotonic() + 120
    while not all((Path(barrier) / r).exists() for r in args.expect.split(",")):
        if time.monotonic() > deadline:
            print("the other worker never started", file=sys.stderr)
            return 3
        time.sleep(0.02)
    if args.start_after_started is not None:
        wait_for_notice(url, args.start_after_started, "started")
    (log,) = eval(task, max_samples=4, display="none", log_dir=log_dir)
    summary = log.results.early_stopping if log.results is not None else None
    print(
        json.dumps(
            {
                "status": log.status,
                "error": None if log.error is None else log.error.message,
                "ran": sorted(str(s.id) for s in log.samples or []),
                "skipped": [] if summary is None else sorted(str(s.id) for s in summary.early_stops),
                "reasons": [] if summary is None else sorted({s.reason.split(":")[0] for s in summary.early_stops}),
                "metadata": None if summary is None else summary.metadata,
                "looks": manager.comparison.looks,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
