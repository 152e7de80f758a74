"""Reading runs and gold solutions: every problem names the file, the row, the field, the rule and the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise.early import GoldSolution, read_gold, read_runs
from stopwise.errors import FileFormatError, ValidationError
from stopwise.records import Trajectory, write_trajectories


def test_read_runs_names_the_file_and_row(tmp_path: Path) -> None:
    good = write_trajectories([Trajectory(agent="a", task="t", outcome=1)], tmp_path / "good.jsonl")
    bad = write_trajectories([Trajectory(agent="a", task="t", outcome=1), Trajectory(agent="b", task="t", outcome=0.25)], tmp_path / "bad.jsonl")
    assert len(read_runs([good, good])) == 2
    with pytest.raises(ValidationError, match=r"bad\.jsonl, row 2, field 'outcome': must be 0 or 1 .*; got 0\.25"):
        read_runs([good, bad])
    assert len(read_runs([bad], require_outcome=False)) == 2
    with pytest.raises(ValidationError, match=r"good\.jsonl, row 1, field 'meta\.service': must be present"):
        read_runs([good], meta_keys=["service"])


def test_read_gold(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text(
        '{"task": "t1", "text": "--- a/x/y.py\\n+++ b/x/y.py\\n@@ -1 +1 @@\\n-a = f(1)\\n+a = g(2)\\n", "fail_to_pass": ["test_y"]}\n'
        "\n"
        '{"task": "t2", "text": "SELECT 1"}\n'
    )
    gold = read_gold(path)
    assert set(gold) == {"t1", "t2"}
    g = gold["t1"]
    assert isinstance(g, GoldSolution) and g.fail_to_pass == ("test_y",) and g.files == frozenset({"x/y.py"})
    names = ["gold_chars", "gold_lines", "gold_added_lines", "gold_removed_lines", "gold_hunks", "gold_files", "gold_fail_to_pass"]
    assert dict(zip(names, g.descriptors()[:7].tolist(), strict=True)) == {
        "gold_chars": len(g.text), "gold_lines": 5, "gold_added_lines": 1, "gold_removed_lines": 1, "gold_hunks": 1,
        "gold_files": 1, "gold_fail_to_pass": 1,
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"task": "t1"}\n', r"gold\.jsonl, row 1, field 'text': must be the gold solution as text"),
        ('{"text": "x"}\n', r"row 1, field 'task': must be non-empty text"),
        ("not json\n", r"row 1: must be one JSON object per line"),
        ('[1, 2]\n{"task": "t", "text": "x", "fail_to_pass": [1]}\n', r"row 1: must be a JSON object.*\n.*row 2, field 'fail_to_pass'"),
    ],
)
def test_read_gold_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text(content)
    with pytest.raises(ValidationError, match=message):
        read_gold(path)


def test_read_gold_missing_or_empty(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="no such file"):
        read_gold(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(FileFormatError, match="holds no gold solutions"):
        read_gold(tmp_path / "empty.jsonl")
