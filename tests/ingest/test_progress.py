"""``ingest(..., progress=...)``: files read of all files found, then the Inspect .eval archives read."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.ingest.test_inspect import _write_eval

from stopwise.ingest import ingest

HARBOR = Path(__file__).parent / "fixtures" / "harbor" / "job-2025-09-01"


def test_progress_counts_every_file_then_the_eval_archives(tmp_path: Path) -> None:
    shutil.copytree(HARBOR, tmp_path / "harbor")
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        _write_eval(tmp_path / name)
    calls: list[tuple[int, int, str]] = []
    result = ingest([tmp_path / "harbor", tmp_path / "a", tmp_path / "b"], system="{dir}", progress=lambda *call: calls.append(call))
    files = len(list((tmp_path / "harbor").rglob("*.json"))) + 2
    assert files == 7 and len(result.rows) > 0
    assert calls[:files] == [(i, files, "files read") for i in range(files)]  # before each file: those done
    assert calls[files:] == [(0, 2, "Inspect .eval logs read"), (1, 2, "Inspect .eval logs read"), (files, files, "files read")]
