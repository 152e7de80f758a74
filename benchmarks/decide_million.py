"""`stopwise decide` on a CSV of 10^6 outcome rows, against reading the same file with pandas and a plain paired mean.

A seeded record (SYNTHETIC: 500,000 tasks x 2 systems = 10^6 rows, columns system, task, outcome)
is written to a temporary CSV once; then, side by side in one process:

* ``stopwise decide rows.csv -t A -b B --n-tasks 500000`` through the command line's ``main``
  (reading and validating the file, pairing, exact tails, the record and the printed summary;
  interpreter start-up left out, it is the same for any command: see ``benchmarks.cli_startup``);
* baseline - ``pandas.read_csv`` of the same file and a paired mean with its normal interval in
  numpy (align the two systems by task, difference, mean, standard error): the least any tool
  must do with these rows.

The target is the command under 5 s on an idle machine (issue 25); the load average is printed
before and after, since 2 shared cores make every figure scale with contention.

Run: ``.venv/bin/python -m benchmarks.decide_million [--tasks 500000] [--repeat 3] [--seed 0]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from stopwise.cli.main import main as stopwise_main


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


def baseline(path: Path) -> tuple[float, float]:
    """pandas.read_csv and a plain paired mean: (mean difference, its standard error)."""
    frame = pd.read_csv(path)
    wide = frame.pivot(index="task", columns="system", values="outcome")
    differences = (wide["A"] - wide["B"]).dropna().to_numpy(dtype=float)
    return float(differences.mean()), float(differences.std(ddof=1) / np.sqrt(len(differences)))


def run_decide(path: Path, n_tasks: int) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = stopwise_main(["decide", str(path), "-t", "A", "-b", "B", "--n-tasks", str(n_tasks)])
    return code, out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (the best is compared)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.csv"
        write_record(path, args.tasks, args.seed)
        print(f"record: {2 * args.tasks:,} rows (SYNTHETIC, seed {args.seed}), {args.tasks:,} tasks x 2 systems, "
              f"{path.stat().st_size / 2**20:.1f} MiB of CSV")
        print(f"load average before timing: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (figures scale with contention)")
        ours, theirs = [], []
        for _ in range(args.repeat):  # interleaved, so both see the same load
            start = time.perf_counter()
            code, printed = run_decide(path, args.tasks)
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            mean, se = baseline(path)
            theirs.append(time.perf_counter() - start)
        print(f"load average after timing: {os.getloadavg()[0]:.1f}")
    first = printed.splitlines()[0] if printed else "(nothing printed)"
    print(f"stopwise decide (CLI, in-process), best of {args.repeat}: {min(ours):6.2f} s  (runs: {', '.join(f'{t:.2f}' for t in ours)} s)  exit {code}: {first}")
    print(f"baseline read_csv + paired mean,  best of {args.repeat}: {min(theirs):6.2f} s  (runs: {', '.join(f'{t:.2f}' for t in theirs)} s)  "
          f"mean difference {mean:+.5f} (se {se:.5f})")
    print(f"ratio stopwise / baseline: {min(ours) / min(theirs):.1f}x   (target: stopwise decide under 5 s on 10^6 rows, idle)")


if __name__ == "__main__":
    main()
