"""Progress of the long commands off a terminal (a pipe, a CI log): plain lines on standard error; ``--quiet`` silences them."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

import stopwise
from stopwise import write_outcomes
from stopwise.cli._common import Reporter, progress
from stopwise.cli.early import _warn_first_step, _warn_never_halts
from stopwise.cli.main import app, main
from stopwise.records import Step, Trajectory, synthetic_benchmark, write_trajectories

SRC = Path(stopwise.__file__).resolve().parents[1]
COUNTED = r"(\d+)/(\d+) \(\d+%\), elapsed \d+:\d\d:\d\d(, ETA \d+:\d\d:\d\d)? — (.+)"
LINE = re.compile(r"^replay: (\d+)/(\d+) \((\d+)%\), elapsed \d+:\d\d:\d\d, ETA \d+:\d\d:\d\d — pairs x policies$")


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200, highlight=False), buffer  # a file: not a terminal


def test_plain_lines_at_every_tenth_and_a_last_line_with_the_total_time() -> None:
    console, buffer = _console()
    with progress("replay", detail="pairs x policies", on=console) as report:
        for _ in range(40):
            report.advance(1, 40)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "replay: started"
    counted = [LINE.match(line) for line in lines[1:-1]]
    assert all(counted) and [int(m[3]) for m in counted if m] == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert re.fullmatch(r"replay: 40/40 \(100%\), done in \d+:\d\d:\d\d", lines[-1])


def test_a_new_total_starts_a_new_count_whose_eta_extrapolates_that_count_alone() -> None:
    """Work reported in stages (10 runs' features at 1 s each, then 2 passes of 100 s): each stage has its tenths and its ETA."""
    console, buffer = _console()
    clock = [0.0]
    report = Reporter("early train", quiet=False, on=console, every=1e9)  # no lines of time
    report._time = lambda: clock[0]  # a fake clock: the ETA is a known number
    report._start = report._count_start = report._last_line = 0.0
    with report:
        for done in range(10):
            clock[0] = float(done)
            report(done, 10, "behavioral features")
        clock[0] = 10.0
        report(0, 2, "tokenizing steps")
        clock[0] = 110.0
        report(1, 2, "tokenizing steps")
        report(2, 2, "tokenizing steps")
    lines = buffer.getvalue().splitlines()
    assert "early train: 5/10 (50%), elapsed 0:00:05, ETA 0:00:05 — behavioral features" in lines
    # the ETA of the second stage: 100 s per pass, 1 pass left (the whole elapsed time would say 110 s)
    assert lines[-2:] == ["early train: 1/2 (50%), elapsed 0:01:50, ETA 0:01:40 — tokenizing steps", "early train: 2/2 (100%), done in 0:01:50"]


def test_quiet_prints_nothing_and_quick_work_after_an_interval_prints_nothing() -> None:
    console, buffer = _console()
    with progress("replay", quiet=True, on=console) as report:
        report(5, 10, "half")
    with progress("ingest", after=True, on=console):
        pass
    assert buffer.getvalue() == ""


def test_work_without_a_count_says_it_is_still_running(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOPWISE_PROGRESS_SECONDS", "0.05")
    console, buffer = _console()
    with progress("early train", detail="training on 48 runs", on=console):
        import time

        deadline = time.monotonic() + 120  # a hand-shake: the work ends once the notice is out, however busy the machine
        while "still running" not in buffer.getvalue():
            assert time.monotonic() < deadline, buffer.getvalue()
            time.sleep(0.01)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "early train: started" and re.fullmatch(r"early train: done in \d+:\d\d:\d\d", lines[-1])
    assert any(re.fullmatch(r"early train: still running, elapsed \d+:\d\d:\d\d — training on 48 runs", line) for line in lines)


def test_replay_prints_progress_on_standard_error_unless_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = write_outcomes(synthetic_benchmark(60, 3, rng=0), tmp_path / "outcomes.csv")
    assert main(["replay", str(outcomes), "--orders", "4", "--json"]) == 0
    run = capsys.readouterr()
    assert "replay: started" in run.err and re.search(r"replay: 6/6 \(100%\), done in", run.err)
    assert "replay:" not in run.out  # standard output holds the result alone
    assert main(["replay", str(outcomes), "--orders", "4", "--json", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def _runs(n_agents: int = 4, n_tasks: int = 12) -> list[Trajectory]:
    rng = np.random.default_rng(0)
    runs = []
    for a in range(n_agents):
        for t in range(n_tasks):
            ok = bool(rng.random() < 0.5)
            steps = [
                Step(action="python -m pytest -q", tool="bash", observation=f"{k} passed") if ok and rng.random() < 0.4
                else Step(action=f"read_file(m{t}.py)", tool="read_file", observation="[isError] denied" if not ok else "ok")
                for k in range(int(rng.integers(8, 16)))
            ]
            runs.append(Trajectory(agent=f"agent-{a}", task=f"task-{t}", attempt=1, outcome=int(ok), steps=steps))
    return runs


def test_early_train_piped_prints_progress_and_says_what_to_change_when_the_model_never_halts(tmp_path: Path) -> None:
    """``stopwise early train … --max-halt-error 0.05 | cat``: done/total lines per stage, then a warning that names the remedy; exit 0."""
    write_trajectories(_runs(), tmp_path / "runs.jsonl")
    args = ["early", "train", str(tmp_path / "runs.jsonl"), "--min-steps", "5", "--max-halt-error", "0.05", "--calibration-folds", "2"]
    env = {**os.environ, "PYTHONPATH": str(SRC), "STOPWISE_PROGRESS_SECONDS": "3600"}  # lines at every 10 % only: none of time
    env.pop("FORCE_COLOR", None)
    code = "from stopwise.cli.main import run; run()"
    result = subprocess.run([sys.executable, "-c", code, *args, "-o", str(tmp_path / "m1")], env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "early train: started"
    counted = [m for m in (re.fullmatch(f"early train: {COUNTED}", line) for line in lines) if m]
    totals = {m[4].split(":")[0]: int(m[2]) for m in counted}
    # the 48 runs' behavioral features, the 2 tokenizing passes, then 4 fitting steps (text features, 2 folds' heads,
    # thresholds), the first of them counting the 5 text blocks fitted, then the 48 runs' text features
    expected = {"behavioral features": 48, "tokenizing steps": 2, "text blocks": 5, "text features": 48, "cross-fitting": 4, "thresholds and guard": 4}
    assert totals == expected, lines
    assert all(int(m[1]) < int(m[2]) for m in counted)
    assert re.fullmatch(r"early train: 4/4 \(100%\), done in \d+:\d\d:\d\d", lines[len(counted) + 1])
    assert "early train:" not in result.stdout  # standard output holds the result alone
    assert "this model never halts a run" in result.stderr and "Raise --max-halt-error (e.g. 0.10 or 0.15)" in result.stderr
    quiet = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "m2"), "--quiet", "--json"])
    assert quiet.exit_code == 0, quiet.output
    assert "early train:" not in quiet.stderr and "never halts a run" in quiet.stderr  # --quiet silences progress, not warnings


def test_monitor_warns_when_almost_every_run_halts_at_step_one(capsys: pytest.CaptureFixture[str]) -> None:
    def run(step: int | None) -> SimpleNamespace:
        return SimpleNamespace(halted=step is not None, halt_step=step)

    _warn_first_step([run(1), run(1), run(1), run(1), run(7)])
    err = capsys.readouterr().err
    assert "4 of 5 runs halted at step 1" in err and "Raise --failure-threshold" in err
    _warn_first_step([run(1), run(1), run(5), run(None), run(9)])
    _warn_first_step([run(1), run(1)])  # too few runs to tell
    assert capsys.readouterr().err == ""


def test_monitor_of_a_model_halting_at_step_one_says_what_to_change(tmp_path: Path) -> None:
    """End to end: thresholds low enough that every run halts at step 1 (from the prompt alone) exit 0 with the warning."""
    write_trajectories(_runs(3, 8), tmp_path / "runs.jsonl")
    trained = CliRunner().invoke(app, ["early", "train", str(tmp_path / "runs.jsonl"), "--min-steps", "5", "-o", str(tmp_path / "m"), "--quiet"])
    assert trained.exit_code == 0, trained.output
    args = ["early", "monitor", str(tmp_path / "m"), str(tmp_path / "runs.jsonl"), "--summary", "--no-guard", "--limit", "6"]
    low = CliRunner().invoke(app, [*args, "--failure-threshold", "0.01", "--success-threshold", "0.01"])
    assert low.exit_code == 0, low.output
    assert "6 of 6 runs halted at step 1, from the task prompt alone" in low.stderr and "Raise --failure-threshold" in low.stderr
    strict = CliRunner().invoke(app, [*args, "--failure-threshold", "1", "--success-threshold", "1"])
    assert strict.exit_code == 0 and "halted at step 1" not in strict.stderr  # no run halts: no such warning
    misspelt = CliRunner().invoke(app, [*args, "--task", "tsak-3"])  # a misspelt task name: exit 4 with the closest names
    assert misspelt.exit_code == 4 and "no run matches" in misspelt.stderr and "--task 'tsak-3': did you mean 'task-3'" in misspelt.stderr


def test_the_never_halts_warning_suggests_values_above_the_one_given(capsys: pytest.CaptureFixture[str]) -> None:
    def summary(epsilon: float) -> dict[str, object]:
        heads = {"success": {"threshold": None}, "failure": {"threshold": None}}
        return {"quality": {"heads": heads}, "risk_control": {"failure": {"epsilon": epsilon, "delta": 0.1}}}

    _warn_never_halts(summary(0.1))
    assert "Raise --max-halt-error (e.g. 0.15 or 0.20)" in " ".join(capsys.readouterr().err.split())
    _warn_never_halts(summary(0.3))
    assert "Raise --max-halt-error (e.g. a larger value)" in " ".join(capsys.readouterr().err.split())
