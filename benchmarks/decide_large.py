"""decide() on 10^6 outcome rows: the vectorised pairing core against the per-group pandas approach.

A seeded record (SYNTHETIC: 2 systems x 250,000 tasks x 2 attempts = 10^6 rows, 12 groups, cost
and elapsed time on every row, all final) is decided side by side in one run:

* new  - ``stopwise.decide`` with the planned universe (pairing by ``outcome_cells``: bincount over
  factorised codes; the column-bytes input digest), the whole call, tails and record included;
* old  - a copy of the algorithm ``decide`` used before (kept below as the baseline): a pandas
  groupby with per-group Python lambdas summing cost and elapsed time, ``unstack`` into wide
  columns, and the input digest hashed from a CSV rendering of the sorted rows. Only the pairing
  and the digest are timed for it (its tails and record are the same as the new path's), so the
  ratio understates the old total slightly.

``--old-rows`` times the old approach on the first rows of the same record instead of all of them
(its cost grows linearly with the rows; the printed ratio then extrapolates linearly and says so).

Run: ``.venv/bin/python -m benchmarks.decide_large [--tasks 250000] [--attempts 2] [--old-rows N] [--quick]``
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time

import numpy as np
import pandas as pd

from stopwise import Policy, TaskUniverse, decide, outcome_columns
from stopwise.records import OUTCOME_COLUMNS


def record(n_tasks: int, attempts: int, seed: int) -> pd.DataFrame:
    """Seeded synthetic outcome rows: systems A and B, every task attempted ``attempts`` times."""
    rng = np.random.default_rng(seed)
    n = 2 * n_tasks * attempts
    task_index = np.tile(np.repeat(np.arange(n_tasks), attempts), 2)
    skill = np.repeat([0.55, 0.50], n_tasks * attempts)
    difficulty = rng.normal(0, 1, n_tasks)[task_index]
    p = 1 / (1 + np.exp(-(4 * (skill - 0.5) - difficulty)))
    frame = pd.DataFrame(
        {
            "system": np.repeat(["A", "B"], n_tasks * attempts),
            "task": np.char.add("task-", task_index.astype(str)),
            "outcome": (rng.random(n) < p).astype(float),
            "group": np.char.add("repo-", (task_index % 12).astype(str)),
            "attempt": np.tile(np.arange(attempts), 2 * n_tasks),
            "cost_usd": np.round(rng.gamma(2.0, 0.05, n), 4),
            "elapsed_s": np.round(rng.gamma(2.0, 30.0, n), 2),
        }
    )
    return outcome_columns(frame).to_frame()


def old_pairing(rows: pd.DataFrame, tested: str, baseline: str) -> np.ndarray:
    """The pairing decide() used before the shared core (copied; its exclusion bookkeeping left out)."""
    sub = rows.loc[rows["system"].isin([tested, baseline])]
    sub = sub.loc[~sub.duplicated(["system", "task", "attempt"], keep="first")]
    tested_tasks = set(sub.loc[sub["system"] == tested, "task"])
    baseline_tasks = set(sub.loc[sub["system"] == baseline, "task"])
    shared = np.array(sorted(tested_tasks & baseline_tasks), dtype=object).astype(str)
    sub = sub.loc[sub["task"].isin(shared)]
    sub = sub.loc[sub["status"] == "final"]
    usable = sub.groupby(["task", "system"], sort=True).agg(
        outcome=("outcome", "mean"),
        attempts=("outcome", "size"),
        cost=("cost_usd", lambda s: s.sum(min_count=len(s))),
        elapsed=("elapsed_s", lambda s: s.sum(min_count=len(s))),
    )
    wide = usable.unstack("system")
    both = wide["outcome"][[tested, baseline]].notna().all(axis=1)
    observed = wide.index[both].to_numpy(dtype=str)
    y = wide["outcome"].reindex(observed)
    return (y[tested] - y[baseline]).to_numpy(dtype=float)


def old_digest(rows: pd.DataFrame, systems: tuple[str, ...]) -> str:
    """The input digest decide() used before: sha256 of a CSV rendering of the sorted rows."""
    sub = rows.loc[rows["system"].isin(systems), list(OUTCOME_COLUMNS)]
    sub = sub.sort_values(["system", "task", "attempt", "status", "outcome"], kind="stable")
    return hashlib.sha256(sub.to_csv(index=False, lineterminator="\n").encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=250_000)
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--old-rows", type=int, default=None, help="time the old approach on this many rows only")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of the new decide (the best is compared)")
    parser.add_argument("--quick", action="store_true", help="20,000 tasks, one timed run: seconds, for CI")
    args = parser.parse_args()
    if args.quick:
        args.tasks, args.repeat = 20_000, 1

    rows = record(args.tasks, args.attempts, args.seed)
    tasks = rows.drop_duplicates("task")
    policy = Policy.paper(budget={"measure": "cost_usd", "limit": 1e9})  # cost summed on every row
    print(f"record: {len(rows):,} rows (SYNTHETIC, seed {args.seed}), {args.tasks:,} tasks x {args.attempts} attempts x 2 systems")

    print(f"load average before timing: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (figures scale with contention)")
    times = []
    for _ in range(args.repeat):
        fresh = TaskUniverse(tasks["task"].tolist(), tasks["group"].tolist())  # its digest and index built inside decide
        start = time.perf_counter()
        new = decide(rows, "A", "B", policy, universe=fresh)
        times.append(time.perf_counter() - start)
    t_new = min(times)
    shown = ", ".join(f"{t:.2f}" for t in times)
    print(f"new decide (whole call), best of {args.repeat}: {t_new:8.2f} s  (runs: {shown} s)  action {new.action}, delta_hat {new.delta_hat:.5f}")

    old_rows = rows
    if args.old_rows is not None and args.old_rows < len(rows):
        half = args.old_rows // 2  # the same share of both systems' rows
        per_system = len(rows) // 2
        old_rows = pd.concat([rows.iloc[:half], rows.iloc[per_system : per_system + half]], ignore_index=True)
    start = time.perf_counter()
    differences = old_pairing(old_rows, "A", "B")
    t_pair = time.perf_counter() - start
    start = time.perf_counter()
    old_digest(old_rows, ("A", "B"))
    t_digest = time.perf_counter() - start
    t_old = t_pair + t_digest
    scale = len(rows) / len(old_rows)
    note = "" if scale == 1 else f" on {len(old_rows):,} rows (x{scale:.1f} linear extrapolation below)"
    print(f"old pairing + digest{note}: {t_old:8.2f} s  (pairing {t_pair:.2f} s, digest {t_digest:.2f} s)")
    if scale == 1:
        assert new.delta_hat is not None and np.isclose(differences.mean(), new.delta_hat), "old and new pairing disagree"
    print(f"load average after timing: {os.getloadavg()[0]:.1f}")
    print(f"ratio old / new: {t_old * scale / t_new:.1f}x   (target: new under 5 s on 10^6 rows)")


if __name__ == "__main__":
    main()
