"""Fixtures of the finality tests: one full replay, with both cores busy, for the module that reads it.

Both are module-scoped: only tests/finality/test_replay.py asks for them, and the CPU burners stop when that
module ends instead of spinning through the rest of the session."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from stopwise.finality import DelayedWriteReplay, ReplaySchedule, run_controlled_replay

_SPIN = "import os, time\nos.nice(5)\nend = time.monotonic() + float(__import__('sys').argv[1])\nwhile time.monotonic() < end:\n    pass\n"


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Load:
    """CPU burners running next to the replay: one spinning process per core."""

    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: list[float] = field(default_factory=list)


@pytest.fixture(scope="module")
def load() -> Iterator[Load]:
    """Start ``os.cpu_count()`` (at least 2) spinning processes; stop them (by pid) when the module ends.

    They run at nice 5, so the replay still gets most of one core (the suite stays quick) while
    both cores are kept busy the whole time; the counts must not depend on it either way
    (benchmarks/finality_replay_load.py runs the replay next to full-priority spinners).
    """
    n = max(2, os.cpu_count() or 2)
    state = Load(processes=[subprocess.Popen([sys.executable, "-c", _SPIN, "900"]) for _ in range(n)])
    try:
        yield state
    finally:
        for process in state.processes:
            process.kill()
            process.wait()


@pytest.fixture(scope="module", params=[2, pytest.param(10, marks=pytest.mark.slow, id="paper-10")], ids=lambda r: f"reps-{r}")
def replay(load: Load, request: pytest.FixtureRequest) -> DelayedWriteReplay:
    """The controlled replay (5 identifiers x 4 delays x ``repetitions`` trials, 8 conditions) against a real
    local service, run once per scale while every core is also busy with a CPU-burning process (the counts
    must not depend on load). The default lane replays 2 repetitions (40 trials a condition); the paper's
    full 10 (200 trials) run under the ``slow`` marker with the same assertions, scaled."""
    before = [_cpu_seconds(p.pid) for p in load.processes]
    started = time.monotonic()
    result = run_controlled_replay(ReplaySchedule(repetitions=request.param), timeout_s=1200)
    load.wall_s = time.monotonic() - started
    load.cpu_s = [_cpu_seconds(p.pid) - b for p, b in zip(load.processes, before, strict=True)]
    return result
