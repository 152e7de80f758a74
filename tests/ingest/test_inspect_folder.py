"""Inspect folders: one empty or cancelled log does not cost the other logs' rows; per-sample models name systems."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from stopwise.cli.main import main
from stopwise.errors import InputError
from stopwise.ingest import ingest, read_inspect

FIXTURE = Path(__file__).parent / "fixtures" / "inspect" / "gsm_small.json"


def _cancelled_eval(path: Path) -> Path:
    """A cancelled .eval log whose header was written before any sample finished."""
    doc = json.loads(FIXTURE.read_text())
    doc.pop("samples")
    doc["status"] = "cancelled"
    doc.pop("results", None)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": doc["eval"], "plan": doc.get("plan")}))
        archive.writestr("header.json", json.dumps(doc))
    return path


def test_a_cancelled_log_in_a_folder_is_a_note(tmp_path: Path) -> None:
    shutil.copy(FIXTURE, tmp_path / "good.json")
    cancelled = _cancelled_eval(tmp_path / "cancelled.eval")
    empty = json.loads(FIXTURE.read_text())
    empty["samples"] = []
    (tmp_path / "no-samples.json").write_text(json.dumps(empty))
    result = ingest(tmp_path)
    assert result.rows.equals(read_inspect(FIXTURE).rows.assign(source=f"inspect:{tmp_path / 'good.json'}"))
    notes = [n for n in result.notes if "no samples" in n]
    assert notes == [
        f"{cancelled}: no samples (log status cancelled); no rows from this log",
        f"{tmp_path / 'no-samples.json'}: no samples (log status success); no rows from this log "
        "(was it written with log_samples=False, or were all its samples skipped by an early-stopping manager?)",
    ]


def test_the_cli_prints_the_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(FIXTURE, tmp_path / "good.json")
    _cancelled_eval(tmp_path / "cancelled.eval")
    assert main(["ingest", str(tmp_path), "-o", str(tmp_path / "rows.csv")]) == 0
    printed = capsys.readouterr().out.replace("\n", " ")
    assert "no samples (log status cancelled); no rows from this log" in printed


def _with_output_model(model: str) -> dict:
    doc = json.loads(FIXTURE.read_text())
    doc["eval"]["model"] = "mockllm/model"
    for sample in doc["samples"]:
        sample["output"] = {"model": model, "choices": []}
    return doc


def test_the_samples_model_names_the_system(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_with_output_model("my-model-a")))
    (tmp_path / "b.json").write_text(json.dumps(_with_output_model("my-model-b")))
    rows = ingest(tmp_path, system="{output_model}").rows
    assert sorted(set(rows["system"])) == ["my-model-a", "my-model-b"]


def test_samples_of_several_models_cannot_name_one_system(tmp_path: Path) -> None:
    doc = _with_output_model("my-model-a")
    doc["samples"][0]["output"]["model"] = "my-model-b"
    (tmp_path / "a.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"samples name 2 models in output.model \(my-model-a, my-model-b\)"):
        ingest(tmp_path, system="{output_model}")
