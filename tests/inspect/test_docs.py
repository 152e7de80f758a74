"""docs/inspect.md shows the example script the end-to-end test runs, unchanged."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_docs_page_shows_the_example_unchanged() -> None:
    page = (REPO / "docs" / "inspect.md").read_text(encoding="utf-8")
    block = page.split("```python\n", 1)[1].split("\n```\n", 1)[0]
    assert block + "\n" == (REPO / "docs" / "examples" / "inspect_live.py").read_text(encoding="utf-8")


def test_docs_page_shows_the_task_file_unchanged() -> None:
    page = (REPO / "docs" / "inspect.md").read_text(encoding="utf-8")
    task_file = (REPO / "docs" / "examples" / "inspect_tasks.py").read_text(encoding="utf-8")
    assert "```python\n" + task_file + "```\n" in page
