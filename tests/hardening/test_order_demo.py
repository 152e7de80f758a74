"""``stopwise order -o`` and ``stopwise demo``: the overwrite rule, and arguments out of range."""

from __future__ import annotations

from pathlib import Path

from .conftest import Run, files, refused


def test_order_does_not_overwrite_without_force(tmp_path: Path, run: Run) -> None:
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("task,group\n" + "".join(f"t{i},g{i % 3}\n" for i in range(9)))
    out = tmp_path / "order.csv"
    out.write_text("precious")
    before = files(tmp_path)
    refused(run("order", tasks, "-o", out), "order.csv: exists; pass --force to replace it")
    assert files(tmp_path) == before
    assert run("order", tasks, "-o", out, "--force").code == 0
    assert out.read_text().startswith("position") or "task" in out.read_text().splitlines()[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["order.csv", "tasks.csv"]  # no temporary left


def test_order_on_a_bad_task_list_writes_nothing(tmp_path: Path, run: Run) -> None:
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("")
    refused(run("order", tasks, "-o", tmp_path / "sub" / "order.csv"), "tasks.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tasks.csv"]


def test_demo_with_too_few_tasks_or_systems(run: Run) -> None:
    refused(run("demo", "--n-tasks", 0), "the demo takes --n-tasks 6 to 10,000 and --systems 2 to 20; got --n-tasks 0")
    refused(run("demo", "--n-tasks", -5), "got --n-tasks -5, --systems 8")
    refused(run("demo", "--systems", 1), "got --n-tasks 400, --systems 1")  # the flags, not the library's n_tasks / n_systems
