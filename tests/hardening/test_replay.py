"""``stopwise replay`` on hostile inputs and outputs: exit 4 before computing, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise._atomic import MARKER

from .conftest import Run, files, refused


@pytest.fixture
def two(tmp_path: Path) -> Path:
    path = tmp_path / "two.csv"
    path.write_text("system,task,outcome\n" + "".join(f"A,t{i},{i % 2}\nB,t{i},{(i // 2) % 2}\n" for i in range(12)))
    return path


def test_a_one_system_file(tmp_path: Path, run: Run) -> None:
    one = tmp_path / "one.csv"
    one.write_text("system,task,outcome\nA,t1,1\nA,t2,0\n")
    before = files(tmp_path)
    refused(run("replay", one, "-k", 5), "source(s) one: no pair of systems to replay")
    assert files(tmp_path) == before


@pytest.mark.parametrize(
    ("option", "fragment"),
    [
        (["--thresholds", "nan"], "`thresholds` must be a non-empty list of numbers in [-1, 1)"),
        (["--budgets", "nan"], "budget"),
        (["-k", "100000000"], "`n_orders` must be an integer from 1 to 100,000; got 100000000"),
    ],
)
def test_bad_arguments(tmp_path: Path, run: Run, two: Path, option: list[str], fragment: str) -> None:
    before = files(tmp_path)
    refused(run("replay", two, *option, "-o", tmp_path / "out"), fragment)
    assert files(tmp_path) == before and not (tmp_path / "out").exists()


def test_outputs_are_checked_before_computing(tmp_path: Path, run: Run, two: Path) -> None:
    (tmp_path / "file").write_text("keep")
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "manifest.json").write_text("{}")
    before = files(tmp_path)
    refused(run("replay", two, "-k", 5, "-o", tmp_path / "file"), "exists and is not a directory")
    refused(run("replay", two, "-k", 5, "-o", tmp_path / "theirs", "--force"), "is a directory stopwise did not write")
    assert files(tmp_path) == before


def test_an_earlier_output_is_replaced_only_with_force(tmp_path: Path, run: Run, two: Path) -> None:
    out = tmp_path / "out"
    assert run("replay", two, "-k", 5, "-o", out).code == 0
    assert (out / MARKER).is_file() and (out / "summary.csv").is_file()
    first = files(out)
    refused(run("replay", two, "-k", 5, "-o", out), "holds earlier stopwise output; pass --force")
    assert files(out) == first
    assert run("replay", two, "-k", 7, "-o", out, "--force").code == 0
    assert files(out) != first and sorted(p.name for p in tmp_path.iterdir()) == ["out", "two.csv"]


def test_a_failing_replay_leaves_nothing(tmp_path: Path, run: Run, two: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("system,task,outcome\nA,t,7\n")
    before = files(tmp_path)
    refused(run("replay", two, bad, "-k", 5, "-o", tmp_path / "new" / "out"), "bad.csv, row 1 (line 2), field 'outcome'")
    assert files(tmp_path) == before and not (tmp_path / "new").exists()
