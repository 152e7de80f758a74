"""tau2 directory format without an index, HAL uploads without an agent name, per-task costs and latencies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stopwise.ingest import ingest, read_hal, read_tau2

FIXTURES = Path(__file__).parent / "fixtures"
TAU2_DIR = FIXTURES / "tau2" / "dir_format"


def test_tau2_directory_format_without_an_index(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(TAU2_DIR, run)
    doc = json.loads((run / "results.json").read_text())
    doc.pop("simulation_index")
    (run / "results.json").write_text(json.dumps(doc))
    result = read_tau2(run)
    assert sorted(zip(result.rows["task"], result.rows["outcome"], strict=True)) == [
        ("mobile_data_1", 1.0),
        ("mobile_data_2", 0.0),
    ]
    assert result.ignored_files == {}


def test_tau2_simulations_whose_results_json_is_not_tau2_say_so(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(TAU2_DIR, run)
    (run / "results.json").write_text(json.dumps({"note": "not tau2"}))
    (tmp_path / "other.json").write_text(json.dumps({"resolved_ids": ["a__b-1"], "unresolved_ids": []}))
    result = ingest(tmp_path)
    reason = result.ignored_files[str(run / "simulations" / "a1.json")]
    assert reason == (
        f"a tau2 simulation file whose results.json ({run / 'results.json'}) was not read: "
        "not a harness log of a known format"
    )


def test_tau2_template_fields(tmp_path: Path) -> None:
    rows = read_tau2(TAU2_DIR, system="{agent}/{model}/{dir}").rows
    assert set(rows["system"]) == {"llm_agent/gpt-4.1-2025-04-14/dir_format"}


def _upload(path: Path, **changes: object) -> Path:
    doc = json.loads((FIXTURES / "hal" / "taubench_airline_toolcalling_gpt4o_1749000000_UPLOAD.json").read_text())
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    path.write_text(json.dumps(doc))
    return path


def test_hal_upload_without_agent_name_is_named_by_its_run_id(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "hal" / "taubench_airline_toolcalling_gpt4o_1749000000_UPLOAD.json").read_text())
    doc["config"].pop("agent_name")
    doc["config"].pop("run_id")
    path = tmp_path / "my_run_17_UPLOAD.json"
    path.write_text(json.dumps(doc))
    result = read_hal(path)
    assert set(result.rows["system"]) == {"my_run_17"}
    assert any("no config.agent_name; system named by the run id my_run_17" in n for n in result.notes)
    assert set(read_hal(path, system="{run_id}@{model}").rows["system"]) == {"my_run_17@gpt-4o-2024-11-20"}
    assert set(read_hal(path, system="{kwargs.model_name}").rows["system"]) == {"gpt-4o-2024-11-20"}


def test_hal_per_task_costs_and_plain_number_latencies(tmp_path: Path) -> None:
    raw = {"t1": {"reward": 1.0}, "t2": {"reward": 0.0, "cost": 0.07}, "t3": "ERROR: rate limited"}
    results = {"accuracy": 0.5, "successful_tasks": ["t1"], "failed_tasks": ["t2", "t3"], "total_cost": 0.5,
               "latencies": {"t1": 12.5, "t2": {"first_call_timestamp": "x", "last_call_timestamp": "y", "total_time": 30.0}},
               "costs": {"t1": 0.25, "t3": 0.18}}
    doc = {"config": {"agent_name": "agent", "benchmark_name": "terminal_bench", "run_id": "r"},
           "results": results, "raw_eval_results": raw, "total_cost": 0.5}
    path = tmp_path / "r_UPLOAD.json"
    path.write_text(json.dumps(doc))
    rows = read_hal(path, elapsed="agent").rows
    got = {t: (c, e) for t, c, e in zip(rows["task"], rows["cost_usd"], rows["elapsed_s"], strict=True)}
    assert got["t1"] == (0.25, 12.5)  # results.costs, a plain-number latency
    assert got["t2"] == (0.07, 30.0)  # the task result's own cost, latency total_time
    assert got["t3"][0] == pytest.approx(0.18)
