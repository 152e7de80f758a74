"""``stopwise finality`` on hostile documents and run files: exit 4, the field named, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise.finality import example_text

from .conftest import Run, files, refused


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("deep.toml", "x = " + "[" * 5000 + "]" * 5000 + "\n", "deep.toml: nested too deeply"),
        ("deep.yaml", "x: " + "[" * 5000 + "]" * 5000 + "\n", "deep.yaml: nested too deeply"),
        ("deeper.yaml", "x: " + "[" * 100 + "]" * 100 + "\n", "deeper.yaml: nested deeper than 64 levels"),
        ("bad.yaml", "name: " + "v" * 100_000 + "\x1b[2J\n: [\n", "bad.yaml"),
    ],
)
def test_hostile_completion_arguments(tmp_path: Path, run: Run, name: str, text: str, fragment: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = run("finality", "check", path)
    refused(result, fragment)
    assert "\x1b" not in result.err and len(result.err) < 3000


RUNS = "run,system,task,outcome\na1,A,t1,1\nb1,B,t1,0\n"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("run,system,task,outcome\na1,A,t1,1,extra\n", "row 1 (line 2): must have 4 cells like the header; has 5"),
        ("run,system,task,outcome\na1,A,t1\n", "row 1 (line 2): must have 4 cells like the header; has 3"),
        ("run,system,task,outcome,outcome\na1,A,t1,1,0\n", "field 'outcome': column appears more than once"),
    ],
)
def test_hostile_run_files(tmp_path: Path, run: Run, text: str, fragment: str) -> None:
    argument = tmp_path / "arg.toml"
    argument.write_text(example_text("terminal-reconciliation"))
    runs = tmp_path / "runs.csv"
    runs.write_text(text)
    before = files(tmp_path)
    refused(run("finality", "check", argument, "--runs", runs, "--rows", tmp_path / "rows.csv"), "runs.csv", fragment)
    assert files(tmp_path) == before


def test_a_bom_before_the_runs_header_is_dropped(tmp_path: Path, run: Run) -> None:
    argument = tmp_path / "arg.toml"
    argument.write_text(example_text("terminal-reconciliation"))
    runs = tmp_path / "runs.csv"
    runs.write_bytes(b"\xef\xbb\xbf" + RUNS.encode())
    assert run("finality", "check", argument, "--runs", runs).code == 0


def test_rows_are_not_overwritten_without_force(tmp_path: Path, run: Run) -> None:
    argument = tmp_path / "arg.toml"
    argument.write_text(example_text("terminal-reconciliation"))
    runs = tmp_path / "runs.csv"
    runs.write_text(RUNS)
    rows = tmp_path / "rows.csv"
    rows.write_text("precious")
    before = files(tmp_path)
    refused(run("finality", "check", argument, "--runs", runs, "--rows", rows), "rows.csv: exists; pass --force")
    assert files(tmp_path) == before
    assert run("finality", "check", argument, "--runs", runs, "--rows", rows, "--force").code == 0
    assert rows.read_text().startswith("system,task,outcome")


def test_replay_out_is_checked_before_the_replay(tmp_path: Path, run: Run) -> None:
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "notes.txt").write_text("mine")
    before = files(tmp_path)
    refused(run("finality", "replay", "-r", 1, "--out", tmp_path / "theirs", "--force"), "is a directory stopwise did not write")
    assert files(tmp_path) == before
