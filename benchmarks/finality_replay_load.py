"""Controlled finality replay: the same counts and about 20 s, idle or with every core busy.

Target (issue 12): the paper's counts (50/200 snapshot successes, ...) whatever the load, and
still about 20 s on an idle machine. Side by side in one run:

* idle    - the full replay (200 trials x 8 conditions) with nothing else started by this script
* loaded  - the same replay next to one CPU-spinning process per core (stopped by pid afterwards)

Prints wall and CPU seconds of each, whether every count matched the paper, and the loaded/idle
wall-time ratio. Other jobs on a shared machine inflate both figures: say so when reporting.

Run: ``.venv/bin/python -m benchmarks.finality_replay_load``
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from stopwise.finality import run_controlled_replay

SPIN = "import time\nend = time.monotonic() + 900\nwhile time.monotonic() < end:\n    pass\n"


def timed() -> tuple[float, float, bool, int]:
    wall, cpu = time.monotonic(), time.process_time()
    result = run_controlled_replay()
    return time.monotonic() - wall, time.process_time() - cpu, result.matches, result.requests


def main() -> None:
    idle = timed()
    burners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(max(2, os.cpu_count() or 2))]
    try:
        loaded = timed()
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
