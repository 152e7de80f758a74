"""The CI gate (``.github/actions/stopwise-gate``): its script run locally, as the composite action runs it.

The record is three systems on 100 tasks (A solves 90 %, B 50 %, C 55 %, fixed per task by a hash); the gate's
action is the one ``stopwise decide`` gives (checked against the library), and it fails exactly on the chosen
actions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import stopwise

REPO = Path(__file__).resolve().parents[2]
GATE = REPO / ".github" / "actions" / "stopwise-gate" / "gate.py"
STOPWISE = str(Path(sys.executable).parent / "stopwise")


@pytest.fixture
def results(tmp_path: Path) -> Path:
    rate = {"A": 90, "B": 50, "C": 55}
    lines = [f"{s},t{i:03d},{int(zlib.crc32(f'{s}t{i:03d}'.encode()) % 100 < r)}\n" for i in range(100) for s, r in rate.items()]
    path = tmp_path / "results.csv"
    path.write_text("system,task,outcome\n" + "".join(lines))
    return path


def gate(tmp_path: Path, *arguments: str) -> tuple[int, str, dict[str, str]]:
    outputs = tmp_path / "github_output"
    outputs.write_text("")
    env = {**os.environ, "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    done = subprocess.run([sys.executable, str(GATE), *arguments, "--stopwise", STOPWISE,
                           "--record", str(tmp_path / "record.json")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    return done.returncode, done.stdout + done.stderr, values


def test_decide_gate_passes_or_fails_on_the_chosen_actions(tmp_path: Path, results: Path) -> None:
    expected = stopwise.decide(stopwise.read_outcomes(results), "A", "B", complete=True)
    assert expected.action == "promote"
    code, printed, out = gate(tmp_path, "decide", str(results), "-t", "A", "-b", "B", "--complete", "--fail-on", "reject")
    assert code == 0 and out["action"] == "promote" and out["failed"] == "false", printed
    assert out["claim"] == expected.claim and json.loads((tmp_path / "record.json").read_text())["action"] == "promote"
    assert "stopwise gate (decide): passed" in (tmp_path / "summary.md").read_text()
    code, printed, out = gate(tmp_path, "decide", str(results), "-t", "B", "-b", "A", "--complete", "--fail-on", "reject")
    assert code == 1 and out["action"] == "reject" and out["failed"] == "true", printed


def test_leaderboard_gate_fails_on_any_pair(tmp_path: Path, results: Path) -> None:
    code, printed, out = gate(tmp_path, "leaderboard", str(results), "-b", "B", "--complete", "--fail-on", "abstain")
    assert out["failed"] == "true" and code == 1 and "**abstain** C vs B" in printed and "**promote** A vs B" in printed
    code, printed, _ = gate(tmp_path, "leaderboard", str(results), "-b", "B", "--complete", "--fail-on", "reject")
    assert code == 0, printed


def test_bad_input_is_exit_4_with_stopwise_message(tmp_path: Path, results: Path) -> None:
    code, printed, _ = gate(tmp_path, "decide", str(results), "-t", "A", "-b", "nobody", "--complete")
    assert code == 4 and "nobody" in printed
    code, printed, _ = gate(tmp_path, "decide", str(results), "-t", "A", "-b", "B", "--fail-on", "lose")
    assert code == 2 and "unknown action 'lose'" in printed  # argparse's usage error
