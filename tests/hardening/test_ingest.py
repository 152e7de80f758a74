"""``stopwise ingest`` on hostile logs and outputs: exit 4, the file and member named, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Run, eval_log, files, refused

SAMPLE = json.dumps(
    {"id": "s1", "epoch": 1, "scores": {"match": {"value": "C"}}, "messages": [], "model_usage": {}}
).encode()


def test_an_encrypted_eval_member(tmp_path: Path, run: Run) -> None:
    log = eval_log(tmp_path / "enc.eval", {"samples/s1_epoch_1.json": (SAMPLE, 1)}, encrypted="samples/s1_epoch_1.json")
    before = files(tmp_path)
    refused(run("ingest", log, "-f", "inspect", "-o", tmp_path / "out.csv"), "member samples/s1_epoch_1.json is encrypted")
    assert files(tmp_path) == before


def test_a_deeply_nested_eval_member(tmp_path: Path, run: Run) -> None:
    deep = b'{"id": "s1", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    log = eval_log(tmp_path / "deep.eval", {"samples/s1_epoch_1.json": (deep, 1)}, zstd=True)
    before = files(tmp_path)
    refused(run("ingest", log, "-f", "inspect", "-o", tmp_path / "out.csv"), "member samples/s1_epoch_1.json", "nested")
    assert files(tmp_path) == before


def test_an_escape_sequence_in_the_model_name_never_reaches_the_terminal(tmp_path: Path, run: Run) -> None:
    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m\x1b[31mred", "task_id": "x", "run_id": "r", "created": "2025-01-01T00:00:00+00:00"}}
    path = tmp_path / "log.json"
    path.write_text(json.dumps({**header, "samples": [json.loads(SAMPLE)]}))
    result = run("ingest", path, "-f", "inspect", "-o", tmp_path / "out.csv")
    assert "\x1b" not in result.out + result.err


def test_an_existing_output_is_not_replaced_without_force(tmp_path: Path, run: Run) -> None:
    path = tmp_path / "log.json"
    header = json.loads(json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m", "task_id": "x", "run_id": "r", "created": "2025-01-01T00:00:00+00:00"}}))
    path.write_text(json.dumps({**header, "samples": [json.loads(SAMPLE)]}))
    out = tmp_path / "out.csv"
    out.write_text("precious")
    before = files(tmp_path)
    refused(run("ingest", path, "-f", "inspect", "-o", out), "out.csv: exists; pass --force to replace it")
    assert files(tmp_path) == before
    assert run("ingest", path, "-f", "inspect", "-o", out, "--force").code == 0
    assert out.read_text().startswith("system,task,outcome")


def test_a_bad_trajectories_path_leaves_no_outcome_file(tmp_path: Path, run: Run) -> None:
    path = tmp_path / "log.json"
    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m", "task_id": "x", "run_id": "r", "created": "2025-01-01T00:00:00+00:00"}}
    path.write_text(json.dumps({**header, "samples": [json.loads(SAMPLE)]}))
    (tmp_path / "adir").mkdir()
    before = files(tmp_path)
    refused(run("ingest", path, "-f", "inspect", "-o", tmp_path / "out.csv", "--trajectories", tmp_path / "adir"), "adir: is a directory")
    assert files(tmp_path) == before and not (tmp_path / "out.csv").exists()


def test_a_deeply_nested_json_log(tmp_path: Path, run: Run) -> None:
    path = tmp_path / "log.json"
    path.write_text('{"version": 2, "eval": ' + "[" * 100_000 + "]" * 100_000 + "}")
    before = files(tmp_path)
    refused(run("ingest", path, "-f", "inspect", "-o", tmp_path / "out.csv"), "log.json")
    assert files(tmp_path) == before
