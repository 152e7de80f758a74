"""Controlled finality replay: the same counts and about 20 s, idle or with every core busy.

Target (issue 12): the paper's counts (50/200 snapshot successes, ...) whatever the load, and
still about 20 s on an idle machine. Side by side in one run:

* idle    - the full replay (200 trials x 8 conditions) with nothing else started by this script
* loaded  - the same replay next to one CPU-spinning process per core (stopped by pid afterwards)

Prints wall and CPU seconds of each, whether every count matched the paper, and the loaded/idle
wall-time ratio. Other jobs on a shared machine inflate both figures: say so when reporting.

Run: ``.venv/bin/python -m benchmarks.finality_replay_load [--quick]`` (``--quick``: identifiers 1-2, delays 0 and
25 ms, one repetition: 4 trials per condition, next to one spinning process: seconds, a check that it runs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from stopwise.finality import ReplaySchedule, run_controlled_replay

SPIN = "import time\nend = time.monotonic() + 900\nwhile time.monotonic() < end:\n    pass\n"


def timed(schedule: ReplaySchedule) -> tuple[float, float, bool, int]:
    wall, cpu = time.monotonic(), time.process_time()
    result = run_controlled_replay(schedule)
    return time.monotonic() - wall, time.process_time() - cpu, result.matches, result.requests


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 trials per condition, one spinning process: seconds")
    args = parser.parse_args()
    schedule = ReplaySchedule(identifiers=(1, 2), delays_ms=(0, 25), repetitions=1) if args.quick else ReplaySchedule()
    idle = timed(schedule)
    n_burners = 1 if args.quick else max(2, os.cpu_count() or 2)
    burners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n_burners)]
    try:
        loaded = timed(schedule)
    finally:
        for process in burners:
            process.kill()
            process.wait()
    print(f"{'run':<8}{'wall s':>8}{'cpu s':>8}  matches paper  requests")
    for name, (wall, cpu, matches, requests) in (("idle", idle), ("loaded", loaded)):
        print(f"{name:<8}{wall:>8.1f}{cpu:>8.1f}  {matches!s:<13}  {requests}")
    print(f"loaded / idle wall time: {loaded[0] / idle[0]:.2f}x ({len(burners)} spinning processes)")


if __name__ == "__main__":
    main()
