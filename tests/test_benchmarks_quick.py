"""Every benchmark under ``benchmarks/`` runs in its ``--quick`` form and prints its figure line (issue 31).

One subprocess per benchmark (``python -m benchmarks.<name> --quick`` from the repository root, as the docs run
them): exit 0 and the line carrying the benchmark's figure (a ratio or the measured quantity) in its output. A
benchmark that no longer runs against the current code (a renamed option, a refused input, a changed signature)
fails here instead of rotting unnoticed. The figures themselves are not judged: ``--quick`` runs on small inputs on
a shared machine. Benchmarks reading ``../shared/data`` go through :func:`tests.conftest.shared_path` (fail under
``CI=true``, skip elsewhere).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO, SHARED_DATA, shared_path

VERIFIED = ("records", "swebench_verified", "outcomes.csv")
LITE = ("records", "swebench_lite", "outcomes.csv")
TRAJECTORIES = (("trajectories", "mcpmark", "trajectories.jsonl.gz"), ("trajectories", "toolathlon", "trajectories.jsonl.gz"))

BENCHMARKS: dict[str, tuple[str, tuple[tuple[str, ...], ...]]] = {
    # name: (the figure line, a regular expression searched in stdout; the shared files it reads)
    "cli_startup": (r"stopwise decide \(200 tasks\)\s+wall\s+[\d.]+ s \(baseline\s+[\d.]+ s, ratio [\d.]+", ()),
    "decide_betting": (r"decide\(\), betting-wor policy \+ universe\s+[\d.]+ ms .* [\d.]+x", (VERIFIED,)),
    "decide_large": (r"ratio old / new: [\d.]+x", ()),
    "decide_million": (r"ratio baseline / current: [\d.]+x wall", ()),
    "decide_tails": (r"distribution\(\) of 5,000 differences: current [\d.]+ s wall .* [\d.]+x wall", (VERIFIED,)),
    "early_monitor_speed": (r"ratio from-scratch / incremental \(medians\): \d+x", TRAJECTORIES),
    "early_train_speed": (r"fit wall time: [\d.]+ s", TRAJECTORIES),
    "family_replay": (r"decide_family [\d.]+ s; per-pair decide loop [\d.]+ s .* ratio \d+x", (VERIFIED,)),
    "finality_replay_load": (r"loaded / idle wall time: [\d.]+x", ()),
    "forecast_calibration": (r"runs that decide before N: [\d.]+%", (VERIFIED,)),
    "inspect_complete_sample": (r"event-loop time per call, median: \d+x less off the loop", ()),
    "inspect_halting_hook": (r"ratio from-scratch / hook \(medians\): \d+x", TRAJECTORIES),
    "joint_replay_speed": (r"baseline / this code: [\d.]+x wall", ()),
    "ledger_throughput": (r"sqlite\s+1\s+\d+\s+\d+\s+\d+\s+[\d.]+", ()),
    "limits_memory": (r"largest current peak \d+ MiB", ()),
    "live_two_workers": (r"runs in [\d.]+ s: decided \d+, closed \d+, fail-open 0, other \d+", ()),
    "live_replay": (r"resolved by 10 %: [\d.]+%; by 20 %: [\d.]+%", (VERIFIED,)),
    "one_look_level": (r"exact-wor tables \(promote and reject\) for n = 50 of N = 500: [\d.]+ s", ()),
    "ppr_martingale": (r"resolved by 5, 10, 20, 50 %:\s+[\d.]+ %", (VERIFIED,)),
    "replay_speed": (r"speed-up: [\d,]+x decisions per second", (VERIFIED,)),
    "report_weight": (r"decision page\s+[\d,]+\s+baseline\s+[\d,]+\s+ratio [\d.]+\s+limit 1,500,000 (?s:.*)pages over the limit: 0", ()),
    "tuned_power": (r"tuned, active audits\s+median\s+[\d.]+ tasks\s+\([\d.]+x full\)", (VERIFIED,)),
    "stratified_betting": (r"ratio [\d.]+x; pairs and curve tables identical: True", (LITE,)),
}


MODEL_USERS = ("early_monitor_speed", "inspect_halting_hook")
"""Benchmarks given the model ``early_train_speed --quick --out`` saved (``--model``) instead of training their own."""


def _run(name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """``python -m benchmarks.<name> --quick [extra]`` from the repository root, on the shared data tests use."""
    env = {**os.environ, "STOPWISE_SHARED_DATA": str(SHARED_DATA), "MPLBACKEND": "Agg"}
    env.pop("PYTHONPATH", None)  # the installed (editable) stopwise, as the docs run the benchmarks
    command = [sys.executable, "-m", f"benchmarks.{name}", "--quick", *extra]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``early_train_speed --quick``, saving its small model for the two monitor benchmarks (one training, not three)."""
    for parts in TRAJECTORIES:
        shared_path(*parts)
    out = tmp_path_factory.mktemp("early") / "model"
    return _run("early_train_speed", "--out", str(out)), out


def _runnable() -> set[str]:
    """The benchmarks/ modules with a ``__main__`` block (helpers such as ``_data`` or ``early_common`` have none)."""
    return {p.stem for p in (REPO / "benchmarks").glob("*.py") if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8")}


def test_every_benchmark_is_listed() -> None:
    assert set(BENCHMARKS) == _runnable()


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_benchmark_runs_quick(name: str, request: pytest.FixtureRequest) -> None:
    figure, needs = BENCHMARKS[name]
    for parts in needs:
        shared_path(*parts)
    if name == "early_train_speed":
        done, _ = request.getfixturevalue("trained")
    elif name in MODEL_USERS:
        trained, model = request.getfixturevalue("trained")
        assert trained.returncode == 0, f"early_train_speed --quick failed:\n{trained.stderr[-3000:]}"
        done = _run(name, "--model", str(model))
    else:
        done = _run(name)
    shown = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, shown
    assert re.search(figure, done.stdout), f"no line matching {figure!r}\n{shown}"
