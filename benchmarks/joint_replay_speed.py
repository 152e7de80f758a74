"""The whole-evaluation replay's speed: this code beside the baseline commit's order-by-order replay, in one run.

Issue 31's target: ``python -m experiments.joint_replay`` replays 500 orders per pair in **< 60 s** (486 s on the
baseline, which runs the prediction-powered boundary order by order in a Python loop). This benchmark times
exactly that replay (:func:`experiments.joint_replay.run_tables` and :func:`experiments.joint_replay.replay_all`:
every pair, audit fraction and centre of the study) on the cached leave-one-group-out evaluations, once on this
code and once, in a subprocess, on the ``src`` of the baseline commit (:mod:`benchmarks._baseline`), and checks
that both gave the same replays: the SHA-256 of every order's row (action, observed tasks, step and token shares)
and of every summary row. Wall and process CPU seconds are printed (the machine's 2 cores are shared, so wall
time moves with the load; CPU time much less). Beside it, one ``decide`` look on prediction-powered rows
(:func:`decide_look`), whose boundary and interval now share the audited bound's centre sums.

``--quick`` replays a seeded synthetic run table (no training, no shared data; 120 tasks, 2 attempts of the
baseline agent, 40 orders, two audit fractions, both centres) in seconds.

Usage: python -m benchmarks.joint_replay_speed [--orders 500] [--cache out/joint_cache] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks._baseline import BASELINE_REF, measure_side_by_side, paper_policy, strip_measure_flag

TARGET_SECONDS = 60.0
"""Issue 31: the replay of 500 orders per pair."""


def quick_table(n_tasks: int = 120, *, rng: int = 0) -> pd.DataFrame:
    """A seeded run table of two agents (the baseline agent with two attempts per task): 70 % of runs halted, 93 % rightly."""
    generator = np.random.default_rng(rng)
    parts = []
    for agent, p, attempts in (("A", 0.62, 1), ("B", 0.5, 2)):
        for attempt in range(1, attempts + 1):
            y = (generator.random(n_tasks) < p).astype(float)
            steps = generator.integers(12, 41, n_tasks).astype(float)
            halted = generator.random(n_tasks) < 0.7
            halt = np.where(halted, np.floor(steps * generator.uniform(0.1, 0.9, n_tasks)), np.nan)
            parts.append(pd.DataFrame({
                "agent": agent, "task": [f"t{i:04d}" for i in range(n_tasks)], "attempt": attempt, "outcome": y,
                "n_steps": steps, "halt_step": halt, "predicted": np.where(halted, np.where(generator.random(n_tasks) < 0.93, y, 1 - y), np.nan),
                "halt_tokens": 90.0 * halt, "total_tokens": 90.0 * steps,
            }))  # fmt: skip
    return pd.concat(parts, ignore_index=True)


def _digest(replays: list[Any]) -> dict[str, str]:
    """Per mode: SHA-256 of every replay's per-order and summary rows of that mode (floats written to round-trip
    exactly). Per mode, because a mode added since the baseline (issue 34's ``joined tuned``) is compared with nothing."""
    digests: dict[str, Any] = {}
    for replay in replays:
        for frame in (replay.orders, replay.summary):
            for mode, rows in frame.groupby("mode", sort=True):
                digests.setdefault(str(mode), hashlib.sha256()).update(rows.to_csv(index=False, float_format="%.17g").encode())
    return {mode: digest.hexdigest() for mode, digest in digests.items()}


def _flatten(result: Any) -> list[Any]:
    """The JointReplay objects of nested tuples and dicts, in a fixed order."""
    if isinstance(result, tuple | list):
        return [r for part in result for r in _flatten(part)]
    if isinstance(result, dict):
        return [r for key in result for r in _flatten(result[key])]
    return [result]


def decide_look(repeat: int = 20) -> tuple[float, str]:
    """Median CPU milliseconds of one ``decide`` look on prediction-powered rows, and the record's action and p-values.

    The rows a live evaluation holds after 250 of 500 planned tasks (:func:`quick_table`'s agents, rho = 0.5, audit
    seed 0, the audited-bound centre): ``decide`` computes the boundary and the interval of that look, and both
    centre on the same audited bound.
    """
    from stopwise import decide
    from stopwise.records import TaskUniverse, audit_draw
    from stopwise.replay import joint_rows

    table = quick_table(500, rng=1)
    audited = [audit_draw(0, a, t, n) < 0.5 for a, t, n in zip(table["agent"], table["task"], table["attempt"], strict=True)]
    rows = joint_rows(table, audited)
    order = [f"t{i:04d}" for i in np.random.default_rng(2).permutation(500)]
    seen = rows[rows["task"].isin(order[:250])]
    policy = paper_policy(**{
        "order": {"kind": "uniform"}, "coverage": {"rule": "none"}, "early": {"audit_fraction": 0.5, "audit_seed": 0},
        "decision": {"boundary": "betting-wor", "predicted": "prediction-powered", "predicted_centre": "audited-bound"},
    })  # fmt: skip
    universe = TaskUniverse(order)
    record = decide(seen, "A", "B", policy, universe=universe)
    cpu = []
    for _ in range(repeat):
        start = time.process_time()
        decide(seen, "A", "B", policy, universe=universe)
        cpu.append(time.process_time() - start)
    interval = record.interval
    return float(np.median(cpu) * 1e3), f"{record.action}, p {record.r_promote!r} / {record.r_reject!r}, interval {interval and (interval.low, interval.high)}"


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Seconds (wall and CPU) of the replay on whichever ``stopwise`` is importable, and the digest of its results."""
    from stopwise.replay import replay_joint

    decide_ms, decide_record = decide_look()

    if args.quick:
        table = quick_table()
        policy = {"order": {"kind": "uniform"}, "coverage": {"rule": "none"}, "decision": {"boundary": "betting-wor", "predicted": "prediction-powered"}}
        started, cpu = time.perf_counter(), time.process_time()
        results = [
            replay_joint(table, policy=paper_policy(**{**policy, "decision": {**policy["decision"], "predicted_centre": centre}}),
                         audit_fraction=rho, n_orders=args.orders, rng=0)
            for centre in ("audited-bound", "worst-case") for rho in (0.35, 0.7)
        ]  # fmt: skip
        tables = 0.0
    else:
        from experiments.joint_replay import evaluations, replay_all, run_tables

        loaded = evaluations(args.cache)
        started, cpu = time.perf_counter(), time.process_time()
        built = run_tables(loaded)
        tables = time.perf_counter() - started
        results = _flatten(replay_all(built, args.orders))
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    orders = sum(len(r.orders) for r in results)
    return {"seconds": seconds, "cpu": cpu_seconds, "tables": tables, "digest": _digest(results), "rows": orders,
            "decide_ms": decide_ms, "decide_record": decide_record}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=None, help="orders per pair (default 500; --quick: 40)")
    parser.add_argument("--cache", type=Path, default=Path("out/joint_cache"), help="the experiment's cached leave-one-out evaluations")
    parser.add_argument("--quick", action="store_true", help="a seeded synthetic table, 40 orders: seconds")
    args = parser.parse_args(strip_measure_flag(argv))
    if args.orders is None:
        args.orders = 40 if args.quick else 500
    if not args.quick:
        from experiments.joint_replay import evaluations

        evaluations(args.cache)  # trained and cached here once if missing, so both measurements only load them
    load = os.getloadavg()[0]
    current, baseline = measure_side_by_side("benchmarks.joint_replay_speed", measure, args, argv)
    what = "a seeded synthetic table (120 tasks, rho 0.35 and 0.7, both centres)" if args.quick else f"experiments.joint_replay's replays on {args.cache}"
    print(f"joint replay, {args.orders} orders per pair: {what}; {current['rows']} order rows")
    print(f"  {'':<22}{'wall':>10}{'CPU':>10}   (load average {load:.1f} before, {os.getloadavg()[0]:.1f} after)")
    print(f"  {'this code':<22}{current['seconds']:>8.1f} s{current['cpu']:>8.1f} s")
    print(f"  {'baseline ' + BASELINE_REF:<22}{baseline['seconds']:>8.1f} s{baseline['cpu']:>8.1f} s")
    print(f"  baseline / this code: {baseline['seconds'] / current['seconds']:.1f}x wall, {baseline['cpu'] / current['cpu']:.1f}x CPU")
    if not args.quick:
        print(f"  of which the run tables (joint_halts): {current['tables']:.1f} s here, {baseline['tables']:.1f} s on the baseline")
        if args.orders == 500:
            print(f"  target < {TARGET_SECONDS:.0f} s for 500 orders: {'met' if current['seconds'] < TARGET_SECONDS else 'NOT met'}")
    common = sorted(set(current["digest"]) & set(baseline["digest"]))
    same = bool(common) and all(current["digest"][m] == baseline["digest"][m] for m in common)
    added = sorted(set(current["digest"]) - set(baseline["digest"]))
    print(f"  the same replays of the baseline's {len(common)} modes (every order's action, tasks and shares, every summary row): "
          f"{same}" + (f"; modes added since: {', '.join(added)}" if added else ""))
    print(f"one decide look on prediction-powered rows (250 of 500 tasks, audited-bound centre), median CPU: {current['decide_ms']:.1f} ms "
          f"here, {baseline['decide_ms']:.1f} ms on the baseline; the same record: {current['decide_record'] == baseline['decide_record']}")
    if not same or current["decide_record"] != baseline["decide_record"]:
        sys.exit("the replays or the decide record differ from the baseline's")


if __name__ == "__main__":
    main()
