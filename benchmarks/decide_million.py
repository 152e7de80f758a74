"""`stopwise decide` on a CSV of 10^6 outcome rows, current code beside the baseline commit, and a plain paired mean.

A seeded record (SYNTHETIC: 500,000 tasks x 2 systems = 10^6 rows, columns system, task, outcome)
is written to a temporary CSV once; then:

* ``stopwise decide rows.csv -t A -b B --n-tasks 500000`` (every planned task observed: the budget limit, so the
  record carries the one-look interval) through the command line's ``main``
  (reading and validating the file, pairing, exact tails, the one-look interval of the record, the record and the
  printed summary; interpreter start-up left out, it is the same for any command: see ``benchmarks.cli_startup``),
  on the current code and, in a subprocess of the same run, on the baseline commit's ``src``
  (:mod:`benchmarks._baseline`, ``e974111``: before issue 31, whose one-look interval bisected with a full pass of the
  exact tails over ~10^6 lattice points per step);
* for scale: ``pandas.read_csv`` of the same file and a paired mean with its normal interval in numpy (align the two
  systems by task, difference, mean, standard error): the least any tool must do with these rows.

The target is the command under 5 s on an idle machine (issue 25, kept by issue 31), wall and process CPU time
printed; the load average is printed before and after, since 2 shared cores make every figure scale with contention.

Run: ``python -m benchmarks.decide_million [--tasks 500000] [--repeat 3] [--seed 0] [--quick]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks._baseline import BASELINE_REF, measure_side_by_side, strip_measure_flag

TARGET_S = 5.0


def write_record(path: Path, n_tasks: int, seed: int) -> None:
    """Seeded rows: A solves each task with probability 0.55, B with 0.50, task difficulty shared."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 1.0, n_tasks)
    skill = np.array([[0.2], [0.0]])
    p = 1.0 / (1.0 + np.exp(-(skill - difficulty)))
    outcome = (rng.random((2, n_tasks)) < p).astype(np.int8)
    tasks = np.char.add("task-", np.arange(n_tasks).astype(str))
    frame = pd.DataFrame(
        {"system": np.repeat(["A", "B"], n_tasks), "task": np.tile(tasks, 2), "outcome": outcome.reshape(-1)}
    )
    frame.to_csv(path, index=False)


def plain_mean(path: Path) -> tuple[float, float]:
    """pandas.read_csv and a plain paired mean: (mean difference, its standard error)."""
    frame = pd.read_csv(path)
    wide = frame.pivot(index="task", columns="system", values="outcome")
    differences = (wide["A"] - wide["B"]).dropna().to_numpy(dtype=float)
    return float(differences.mean()), float(differences.std(ddof=1) / np.sqrt(len(differences)))


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Best-of-``repeat`` wall and CPU seconds of ``stopwise decide`` on ``args.csv`` with this ``stopwise``."""
    from stopwise.cli.main import main as stopwise_main

    command = ["decide", str(args.csv), "-t", "A", "-b", "B", "--n-tasks", str(args.tasks)]
    with tempfile.TemporaryDirectory() as folder:  # a warm-up on 20 rows: the command's lazy imports are not timed
        small = Path(folder) / "small.csv"
        write_record(small, 10, args.seed)
        with contextlib.redirect_stdout(io.StringIO()):
            stopwise_main(["decide", str(small), "-t", "A", "-b", "B", "--n-tasks", "10"])
    walls, cpus = [], []
    for _ in range(args.repeat):
        out = io.StringIO()
        start, start_cpu = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(out):
            code = stopwise_main(command)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    best = int(np.argmin(walls))
    printed = out.getvalue().splitlines()
    return {"wall": walls, "cpu": cpus, "best_wall": walls[best], "best_cpu": cpus[best], "code": code, "first": printed[0] if printed else ""}


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (the best is compared)")
    parser.add_argument("--quick", action="store_true", help="50,000 tasks, one run each: seconds, for CI")
    parser.add_argument("--csv", type=Path, help=argparse.SUPPRESS)  # the record written by the parent run
    args = parser.parse_args(strip_measure_flag(argv))
    if args.quick:
        args.tasks, args.repeat = min(args.tasks, 50_000), 1
    with tempfile.TemporaryDirectory() as folder:
        if args.csv is None:
            args.csv = Path(folder) / "rows.csv"
            write_record(args.csv, args.tasks, args.seed)
            argv = [*argv, "--csv", str(args.csv)]
        size = args.csv.stat().st_size / 2**20
        load = os.getloadavg()[0]
        current, base = measure_side_by_side("benchmarks.decide_million", measure, args, argv)
        start = time.perf_counter()
        mean, se = plain_mean(args.csv)
        plain = time.perf_counter() - start
        after = os.getloadavg()[0]
    print(f"record: {2 * args.tasks:,} rows (SYNTHETIC, seed {args.seed}), {args.tasks:,} tasks x 2 systems, {size:.1f} MiB of CSV")
    print(f"load average {load:.1f} before, {after:.1f} after, on {os.cpu_count()} cores (figures scale with contention)")
    for name, figures in (("current", current), (f"baseline {BASELINE_REF}", base)):
        runs = ", ".join(f"{w:.2f}" for w in figures["wall"])
        print(f"stopwise decide ({name}), best of {args.repeat}: {figures['best_wall']:6.2f} s wall, {figures['best_cpu']:6.2f} s CPU "
              f"(runs: {runs} s)  exit {figures['code']}: {figures['first']}")
    print(f"ratio baseline / current: {base['best_wall'] / current['best_wall']:.2f}x wall, {base['best_cpu'] / current['best_cpu']:.2f}x CPU"
          f"   (target: current under {TARGET_S:g} s on 10^6 rows, idle: "
          + (f"{'met' if current['best_wall'] < TARGET_S else 'NOT met'} here)" if 2 * args.tasks >= 10**6 else f"not judged on {2 * args.tasks:,} rows)"))
    print(f"for scale, read_csv + paired mean: {plain:6.2f} s (mean difference {mean:+.5f}, se {se:.5f}); "
          f"stopwise / it: {current['best_wall'] / plain:.1f}x")


if __name__ == "__main__":
    main()
