"""``stopwise ingest ... -o -``: rows on standard output, the summary on standard error, ``| decide -`` works."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from stopwise.cli.main import main
from stopwise.ingest import ingest
from stopwise.records import read_outcomes


def _run_report(path: Path, resolved: list[str], unresolved: list[str]) -> None:
    path.write_text(json.dumps({"resolved_ids": resolved, "unresolved_ids": unresolved, "error_ids": [], "empty_patch_ids": []}))


@pytest.fixture
def two_agents(tmp_path: Path) -> Path:
    ids = [f"django__django-{1000 + i}" for i in range(40)]
    _run_report(tmp_path / "agent-a.run1.json", ids[:25], ids[25:])
    _run_report(tmp_path / "agent-b.run1.json", ids[:24], ids[24:])
    return tmp_path


@pytest.mark.parametrize(("extra", "suffix"), [([], ".csv"), (["--out-format", "jsonl"], ".jsonl")])
def test_rows_go_to_standard_output(
    two_agents: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], extra: list[str], suffix: str
) -> None:
    assert main(["ingest", str(two_agents), "-o", "-", *extra]) == 0
    captured = capsysbinary.readouterr()
    assert b"80 outcome rows from 2 files (swebench)" in captured.err
    assert b"wrote <stdout>" in captured.err
    written = tmp_path / f"rows{suffix}"
    written.write_bytes(captured.out)
    assert read_outcomes(written).to_frame().equals(ingest(two_agents).rows)


def test_ingest_pipes_into_decide(two_agents: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["ingest", str(two_agents), "-o", "-"]) == 0
    rows = capsysbinary.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(rows)))
    code = main(["decide", "-", "--tested", "agent-a", "--baseline", "agent-b", "--json"])
    printed = json.loads(capsysbinary.readouterr().out)
    assert printed["n_observed"] == 40
    assert code == ["promote", "reject", "continue", "abstain"].index(printed["action"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--json"], "--json prints to standard output, where -o - writes the rows"),
        (["--out-format", "parquet"], "`--out-format` must be one of csv, jsonl with -o -; got 'parquet'"),
        (["--trajectories", "-"], "--trajectories must name a file (.jsonl or .jsonl.gz)"),
    ],
)
def test_standard_output_conflicts_exit_4(
    two_agents: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["ingest", str(two_agents), "-o", "-", *extra]) == 4
    captured = capsys.readouterr()
    assert message in captured.err.replace("\n", " ") and captured.out == ""
