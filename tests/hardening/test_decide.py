"""``stopwise decide`` on hostile outcome files: exit 4, the right row and field named, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Run, files, refused

HEADER = "system,task,outcome"


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (f"{HEADER},attempt\nA,t,1,1e19\nB,t,0,0\n", ["row 1 (line 2), field 'attempt': must be an integer from 0 to 9007199254740992; got '1e19'"]),
        (f"{HEADER},group\nA,t,1,g1\nA,t,1,g2\nB,t,0,g1\n", ["row 2 (line 3), field 'group': (system, task, attempt) = (A, t, 0) must not repeat with a different group"]),
        (f"{HEADER},cost_usd\nA,t,1,0.5\nA,t,1,0.7\nB,t,0,1\n", ["row 2 (line 3), field 'cost_usd'", "different cost_usd"]),
        (f"{HEADER}\nA,t1,1,\nB,t1,0,\n", ["row 1 (line 2): must have 3 cells like the header (system, task, outcome); has 4", "row 2 (line 3)"]),
        (f"{HEADER},cost_usd\nA,t1,1,0.5\nB,t1,0.5,0,3\n", ["row 2 (line 3): must have 4 cells like the header", "has 5"]),
        (f"{HEADER}\nA,t1,1\nB\n", ["row 2 (line 3): must have 3 cells like the header", "has 1"]),
        (f"{HEADER},outcome\nA,t,1,1\n", ["field 'outcome': column appears more than once in the header"]),
        ("\ufeffsystem,tsk,outcome\nA,t,1\n", ["field 'task': required column missing; found columns system, tsk, outcome"]),
        (f"{HEADER}\nA,t,1\n\x00B,t,0\n", ["\\x00B"]),
    ],
)
def test_bad_outcome_files(tmp_path: Path, run: Run, text: str, fragments: list[str]) -> None:
    path = tmp_path / "o.csv"
    path.write_text(text, encoding="utf-8")
    before = files(tmp_path)
    message = refused(run("decide", path, "-t", "A", "-b", "B"), *fragments)
    assert "\ufeff" not in message and "\x00" not in message
    assert files(tmp_path) == before


def test_a_one_megabyte_system_name_is_not_echoed(tmp_path: Path, run: Run) -> None:
    path = tmp_path / "o.csv"
    path.write_text(f"{HEADER}\n{'S' * 1_000_000},t,1\nB,t,0\n")
    result = run("decide", path, "-t", "A", "-b", "B")
    refused(result, "systems present", "(line of 1000071 characters)")
    assert len(result.err) < 2000


def test_a_long_system_name_is_shortened(tmp_path: Path, run: Run) -> None:
    path = tmp_path / "o.csv"
    name = "S" * 100_000
    path.write_text(f"{HEADER}\n{name},t,2\nB,t,0\n")
    result = run("decide", path, "-t", name, "-b", "B")
    refused(result, "field 'outcome'")
    assert len(result.err) < 2000


def test_escape_sequences_in_system_names_never_reach_the_terminal(tmp_path: Path, run: Run) -> None:
    path = tmp_path / "o.csv"
    evil = "A\x1b[2J\x1b]0;owned\x07"
    path.write_text(f"{HEADER},attempt\n{evil},t,1,0\n{evil},t,0,0\n")
    result = run("decide", path, "-t", evil, "-b", "B")
    refused(result, "\\x1b[2J\\x1b]0;owned\\x07")
    assert "\x1b" not in result.err and "\x07" not in result.err


def test_group_column_outcome_is_a_policy_error(tmp_path: Path, run: Run) -> None:
    outcomes = tmp_path / "o.csv"
    outcomes.write_text(f"{HEADER}\nA,t,1\nB,t,0\n")
    policy = tmp_path / "p.toml"
    policy.write_text('[coverage]\ngroup_column = "outcome"\n')
    refused(run("decide", outcomes, "-t", "A", "-b", "B", "-p", policy), "field 'coverage.group_column'", "'outcome'")


def test_a_deeply_nested_policy_is_refused(tmp_path: Path, run: Run) -> None:
    outcomes = tmp_path / "o.csv"
    outcomes.write_text(f"{HEADER}\nA,t,1\nB,t,0\n")
    for depth in (100, 5000):
        policy = tmp_path / f"p{depth}.toml"
        policy.write_text("x = " + "[" * depth + "]" * depth + "\n")
        refused(run("decide", outcomes, "-t", "A", "-b", "B", "-p", policy), f"p{depth}.toml")


@pytest.mark.parametrize("depth", [100, 100_000])
def test_deeply_nested_jsonl_rows_are_refused(tmp_path: Path, run: Run, depth: int) -> None:
    path = tmp_path / "o.jsonl"
    path.write_text('{"system": "A", "task": "t", "outcome": 1, "source": ' + "[" * depth + "]" * depth + "}\n")
    refused(run("decide", path, "-t", "A", "-b", "B"), "o.jsonl, line 1", "nested")
