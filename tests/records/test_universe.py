"""The task universe: planned tasks, counts, the tasks-file reader and the digest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from stopwise import FileFormatError, TaskUniverse, TaskUniverseError, ValidationError, read_task_universe


def test_tasks_in_planned_order_with_groups() -> None:
    u = TaskUniverse(["t3", "t1", "t2", "t4"], ["b", "a", "b", ""])
    assert u.n_tasks == len(u) == 4 and u.ordered and u.has_groups
    assert u.group_sizes == {"": 1, "a": 1, "b": 2}
    assert u.tasks.tolist() == ["t3", "t1", "t2", "t4"]
    assert u.positions(["t2", "t3", "zz"]).tolist() == [2, 0, -1]
    expected = hashlib.sha256(
        json.dumps({"groups": ["b", "a", "b", ""], "tasks": ["t3", "t1", "t2", "t4"]}, separators=(",", ":")).encode()
    ).hexdigest()
    assert u.sha256() == expected  # independent canonical JSON
    assert TaskUniverse(["t1", "t3", "t2", "t4"], ["a", "b", "b", ""]).sha256() != u.sha256()  # order matters


def test_from_counts() -> None:
    u = TaskUniverse.from_counts(510, {"hard": 210, "easy": 300})
    assert (u.n_tasks, u.ordered, u.tasks, u.group_sizes) == (510, False, None, {"easy": 300, "hard": 210})
    assert TaskUniverse.from_counts(60).group_sizes == {"": 60} and not TaskUniverse.from_counts(60).has_groups
    assert u.sha256() == hashlib.sha256(b'{"group_sizes":{"easy":300,"hard":210},"n_tasks":510}').hexdigest()
    with pytest.raises(ValueError, match="no task names"):
        u.positions(["t1"])


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ((0,), ["field 'n_tasks'", "integer in [1,"]),
        ((True,), ["field 'n_tasks'"]),
        ((10.0,), ["field 'n_tasks'"]),
        ((10, {"a": 4, "b": 5}), ["field 'group_sizes'", "add up to n_tasks = 10", "got 9"]),
        ((10, {"a": 0, "b": 10}), ["group_sizes['a']", ">= 1"]),
    ],
)
def test_bad_counts(args: tuple, fragments: list[str]) -> None:
    with pytest.raises(TaskUniverseError) as info:
        TaskUniverse.from_counts(*args)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_bad_task_lists() -> None:
    with pytest.raises(TaskUniverseError, match="row 3, field 'task': must be unique; already planned at position 1; got 't1'"):
        TaskUniverse(["t1", "t2", "t1"])
    with pytest.raises(TaskUniverseError, match="row 2, field 'task': must be a non-empty"):
        TaskUniverse(["t1", " "])
    with pytest.raises(TaskUniverseError, match="one group per task"):
        TaskUniverse(["t1", "t2"], ["a"])
    with pytest.raises(TaskUniverseError, match="at least one planned task"):
        TaskUniverse([])
    assert issubclass(TaskUniverseError, ValidationError)


def test_reads_the_order_output_and_tasks_files(tmp_path: Path) -> None:
    order = tmp_path / "order.csv"
    order.write_text("position,task,group,covered\n3,t9,b,True\n1,t2,a,False\n2,t5,b,True\n")
    u = read_task_universe(order)
    assert u.tasks.tolist() == ["t2", "t5", "t9"] and u.groups.tolist() == ["a", "b", "b"]
    frame = pd.DataFrame({"task": ["x", "y"], "group": ["g", "h"]})
    frame.to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    frame.to_parquet(tmp_path / "t.parquet")
    assert read_task_universe(tmp_path / "t.jsonl") == read_task_universe(tmp_path / "t.parquet") == TaskUniverse(["x", "y"], ["g", "h"])
    (tmp_path / "plain.csv").write_text("task\nb\na\n")
    plain = read_task_universe(tmp_path / "plain.csv")
    assert plain.tasks.tolist() == ["b", "a"] and not plain.has_groups
    (tmp_path / "strata.csv").write_text("task,stratum\na,s1\nb,s2\n")
    assert read_task_universe(tmp_path / "strata.csv", group_column="stratum").group_sizes == {"s1": 1, "s2": 1}


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        ("name\nx\n", ["field 'task': must be a column of the tasks file"]),
        ("task,groups\nx,a\n", ["field 'groups': is not a tasks-file column"]),
        ("task,group\nx,a\ny,b\nx,c\n", ["row 3, field 'task': must be unique", "got 'x'"]),
        ("position,task\n1,x\n1,y\n", ["row 2, field 'position': must be unique"]),
        ("position,task\n1,x\n3,y\n", ["row 2, field 'position': must be an integer in [1, 2]", "got '3'"]),
        ("position,task\n1,x\nfirst,y\n", ["row 2, field 'position'", "got 'first'"]),
        ("position,task\n2,x\n1,\n", ["t.csv, row 2, field 'task': must be a non-empty"]),
        ("task\n", ["at least one planned task"]),
    ],
)
def test_bad_tasks_files_name_file_row_and_field(tmp_path: Path, content: str, fragments: list[str]) -> None:
    path = tmp_path / "t.csv"
    path.write_text(content)
    with pytest.raises(TaskUniverseError) as info:
        read_task_universe(path)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert str(path) in str(info.value)


def test_unreadable_tasks_files(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match=r"none\.csv: no such file$"):
        read_task_universe(tmp_path / "none.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(FileFormatError, match="the file is empty; a tasks file needs a header and at least one row"):
        read_task_universe(tmp_path / "empty.csv")
    with pytest.raises(FileFormatError, match="is a directory, expected a tasks file"):
        read_task_universe(tmp_path)
    (tmp_path / "ragged.csv").write_text("task,group\nt1,a\nt2,b,c\n")
    with pytest.raises(ValidationError, match=r"ragged\.csv, row 2 \(line 3\): must have 2 cells like the header \(task, group\); has 3"):
        read_task_universe(tmp_path / "ragged.csv")
    (tmp_path / "t.txt").write_text("task\nx\n")
    with pytest.raises(FileFormatError, match="cannot tell the format"):
        read_task_universe(tmp_path / "t.txt")
