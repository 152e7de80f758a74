"""Fixtures of the finality tests: the controlled replay, and the same replay with every core busy.

Module-scoped: only tests/finality/test_replay.py asks for them. The replay's counts are deterministic (the service
schedules every delayed write itself), so the default lane replays without any other load; the integration lane
replays once more beside one CPU-burning process per core, started and stopped by pid around that one replay.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from stopwise.finality import DelayedWriteReplay, ReplaySchedule, run_controlled_replay

# a burner lowers its priority, says so by creating its file (the hand-shake), then spins until killed
_SPIN = "import os, sys\nos.nice(5)\nopen(sys.argv[1], 'x').close()\nwhile True:\n    pass\n"


@dataclass
class Load:
    """CPU burners spinning beside the replay: one process per core (at least 2)."""

    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    spinning_before: bool = False
    """Every burner had created its file (it was spinning) before the replay started."""
    spinning_after: bool = False
    """Every burner was still running when the replay returned (they stop only when killed)."""


@pytest.fixture(scope="module", params=[2, pytest.param(10, marks=pytest.mark.slow, id="paper-10")], ids=lambda r: f"reps-{r}")
def replay(request: pytest.FixtureRequest) -> DelayedWriteReplay:
    """The controlled replay (5 identifiers x 4 delays x ``repetitions`` trials, 8 conditions) against a real local
    service. The default lane replays 2 repetitions (40 trials a condition); the paper's full 10 (200 trials) run under
    the ``slow`` marker with the same assertions, scaled."""
    return run_controlled_replay(ReplaySchedule(repetitions=request.param), timeout_s=1200)


@pytest.fixture(scope="module")
def loaded_replay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DelayedWriteReplay, Load]]:
    """The 2-repetition replay run while one burner per core spins (nice 5: the replay still gets a share).

    No timing: each burner creates its file once it spins, the replay starts after every file exists, and the
    burners are checked to be alive when it returns. The burners are killed (by pid) when the module ends.
    """
    folder = tmp_path_factory.mktemp("burners")
    flags = [folder / f"spinning-{i}" for i in range(max(2, os.cpu_count() or 2))]
    load = Load(processes=[subprocess.Popen([sys.executable, "-c", _SPIN, str(flag)]) for flag in flags])
    try:
        for process, flag in zip(load.processes, flags, strict=True):
            _wait_for(flag, process)
        load.spinning_before = all(flag.exists() for flag in flags)
        result = run_controlled_replay(ReplaySchedule(repetitions=2), timeout_s=1200)
        load.spinning_after = all(p.poll() is None for p in load.processes)
        yield result, load
    finally:
        for process in load.processes:
            process.kill()
            process.wait()


def _wait_for(flag: Path, process: subprocess.Popen[bytes]) -> None:
    """Block until the burner created ``flag`` (a condition, not a duration); fail if it exited first."""
    while not flag.exists():
        try:
            process.wait(timeout=0.01)
        except subprocess.TimeoutExpired:
            continue
        raise AssertionError(f"burner {process.pid} exited with {process.returncode} before it spun")
