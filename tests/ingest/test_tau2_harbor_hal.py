"""tau2-bench results, Harbor / Terminal-Bench trial and job results, HAL uploads."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from stopwise.errors import ValidationError
from stopwise.ingest import read_hal, read_harbor, read_tau2


def flags_of(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The flags of an ingested row (the ``flags`` column: canonical tokens joined by ';')."""
    return tuple(row["flags"].split(";")) if row["flags"] else ()


FIXTURES = Path(__file__).parent / "fixtures"
TAU2 = FIXTURES / "tau2"
HARBOR = FIXTURES / "harbor"
HAL = FIXTURES / "hal"
SONNET = "terminus-2/claude-sonnet-4-20250514"


def _cells(rows):
    return {(s, t, int(a)): r for s, t, a, r in zip(rows["system"], rows["task"], rows["attempt"], rows.to_dict("records"), strict=True)}


# ---------------------------------------------------------------- tau2


def test_tau2_monolithic_results() -> None:
    result = read_tau2(TAU2 / "airline_results.json")
    cells = _cells(result.rows)
    llm = "claude-3-7-sonnet-20250219"
    assert sorted(cells) == [(llm, "0", 0), (llm, "0", 1), (llm, "1", 0), (llm, "1", 1)]
    assert set(result.rows["group"]) == {"airline"}
    first = cells[(llm, "0", 0)]
    assert (first["outcome"], first["cost_usd"], first["elapsed_s"], first["status"]) == (1.0, 0.0831, 72.4, "final")
    assert flags_of(first) == ()
    assert flags_of(cells[(llm, "0", 1)]) == ("termination:max_steps",)
    assert cells[(llm, "0", 1)]["outcome"] == 0.0
    # infrastructure_error: tau2 leaves it out of its metrics, so the outcome is unknown
    infra = cells[(llm, "1", 1)]
    assert infra["status"] == "pending" and math.isnan(infra["outcome"]) and math.isnan(infra["cost_usd"])
    assert flags_of(infra) == ("error", "termination:infrastructure_error")


def test_tau2_trajectories_keep_tool_calls_and_tokens() -> None:
    result = read_tau2(TAU2 / "airline_results.json", trajectories=True)
    trajectory = next(t for t in result.trajectories if (t.task, t.attempt) == ("0", 0))
    assert trajectory.task_text == "I want to cancel reservation EHGLP3."
    assert [s.tool for s in trajectory.steps] == [None, "get_reservation_details", "cancel_reservation"]
    assert trajectory.steps[0].observation == "I want to cancel reservation EHGLP3."
    assert trajectory.steps[1].action == 'get_reservation_details({"reservation_id": "EHGLP3"})'
    assert (trajectory.steps[1].tokens_in, trajectory.steps[1].tokens_out) == (2100, 35)
    assert trajectory.steps[2].observation == '{"status": "cancelled"}\nThanks! ###STOP###'
    assert trajectory.meta["termination_reason"] == "user_stop"


def test_tau2_directory_format_uses_files_and_index() -> None:
    result = read_tau2(TAU2 / "dir_format", trajectories=True)
    cells = _cells(result.rows)
    llm = "gpt-4.1-2025-04-14"
    assert {k[1]: (r["outcome"], r["cost_usd"], r["elapsed_s"]) for k, r in cells.items()} == {
        "mobile_data_1": (1.0, 0.04, 51.5),
        "mobile_data_2": (0.0, 0.09, 88.0),
        "roaming_3": (1.0, 0.03, 20.25),  # from the index only: its simulation file is missing
    }
    assert set(result.rows["group"]) == {"telecom"} and set(result.rows["system"]) == {llm}
    assert flags_of(cells[(llm, "mobile_data_2", 0)]) == ("termination:too_many_errors",)
    assert cells[(llm, "roaming_3", 0)]["source"].endswith("dir_format/results.json")
    assert sorted(t.task for t in result.trajectories) == ["mobile_data_1", "mobile_data_2"]
    assert result.ignored_files == {}


def test_tau2_reward_outside_unit_interval(tmp_path: Path) -> None:
    doc = json.loads((TAU2 / "airline_results.json").read_text())
    doc["simulations"][2]["reward_info"]["reward"] = 2.0
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValidationError) as info:
        read_tau2(path)
    problem = info.value.problems[0]
    assert (problem.file, problem.row, problem.field, problem.value) == (str(path), 3, "reward_info.reward", 2.0)
    assert problem.rule == "must be in [0, 1] (the outcome contract)"


# ---------------------------------------------------------------- Harbor / Terminal-Bench


def test_harbor_job_directory_reads_each_trial_once() -> None:
    result = read_harbor(HARBOR / "job-2025-09-01")
    cells = _cells(result.rows)
    assert sorted(cells) == [(SONNET, "build-kernel", 0), (SONNET, "fix-git", 0), (SONNET, "hello-world", 0), (SONNET, "hello-world", 1)]
    # attempts follow start time: the 09:00 trial (reward 0) is attempt 0
    assert (cells[(SONNET, "hello-world", 0)]["outcome"], cells[(SONNET, "hello-world", 0)]["elapsed_s"]) == (0.0, 100.0)
    assert (cells[(SONNET, "hello-world", 1)]["outcome"], cells[(SONNET, "hello-world", 1)]["cost_usd"]) == (1.0, 0.21)
    timeout = cells[(SONNET, "fix-git", 0)]
    assert (timeout["outcome"], timeout["status"], timeout["elapsed_s"]) == (0.0, "final", 900.0)
    assert flags_of(timeout) == ("exception:AgentTimeoutError",)
    broken = cells[(SONNET, "build-kernel", 0)]
    assert broken["status"] == "pending" and flags_of(broken) == ("error", "exception:DockerBuildError")
    assert any("job summary not used" in note for note in result.notes)


def test_harbor_agent_execution_time() -> None:
    cells = _cells(read_harbor(HARBOR / "job-2025-09-01", elapsed="agent").rows)
    assert cells[(SONNET, "hello-world", 1)]["elapsed_s"] == 130.0  # 10:00:20 -> 10:02:30
    assert cells[(SONNET, "fix-git", 0)]["elapsed_s"] == 840.0


def test_harbor_job_summary_without_trials() -> None:
    result = read_harbor(HARBOR / "job_summary_only" / "result.json")
    cells = _cells(result.rows)
    assert sorted(cells) == [(SONNET, "build-kernel", 0), (SONNET, "fix-git", 0), (SONNET, "hello-world", 0), (SONNET, "hello-world", 1)]
    assert sorted(r["outcome"] for k, r in cells.items() if k[1] == "hello-world") == [0.0, 1.0]
    assert cells[(SONNET, "build-kernel", 0)]["status"] == "pending"
    assert result.rows["cost_usd"].isna().all() and result.rows["elapsed_s"].isna().all()
    assert "no cost or time per trial" in result.notes[0]


def test_harbor_several_rewards_need_a_choice(tmp_path: Path) -> None:
    trial = json.loads((HARBOR / "job-2025-09-01" / "hello-world__AbC12de" / "result.json").read_text())
    trial["verifier_result"] = {"rewards": {"tests_passed": 0.75, "style": 0.5}}
    path = tmp_path / "result.json"
    path.write_text(json.dumps(trial))
    with pytest.raises(ValidationError) as info:
        read_harbor(path)
    assert "choose one with `scorer`" in info.value.problems[0].rule
    assert read_harbor(path, scorer="tests_passed").rows["outcome"].tolist() == [0.75]


def test_terminal_bench_legacy_run() -> None:
    result = read_harbor(HARBOR / "tb_legacy")
    cells = _cells(result.rows)
    system = "terminus/openai/gpt-4.1"
    assert {k[1]: (r["outcome"], r["status"]) for k, r in cells.items() if not math.isnan(r["outcome"])} == {
        "hello-world": (1.0, "final"),
        "csv-to-parquet": (0.0, "final"),
    }
    assert cells[(system, "grep-logs", 0)]["status"] == "pending"
    assert flags_of(cells[(system, "csv-to-parquet", 0)]) == ("failure:agent_timeout",)
    assert cells[(system, "hello-world", 0)]["elapsed_s"] == 60.0
    assert list(result.ignored_files.values()) == ["not a harness log of a known format"]  # run_metadata.json


# ---------------------------------------------------------------- HAL


def test_hal_taubench_upload() -> None:
    path = HAL / "taubench_airline_toolcalling_gpt4o_1749000000_UPLOAD.json"
    result = read_hal(path)
    cells = _cells(result.rows)
    system = "TauBench ToolCalling (gpt-4o-2024-11-20)"
    final = result.rows[result.rows["status"] == "final"].fillna(-1.0)
    assert final[["task", "outcome", "cost_usd", "elapsed_s"]].to_records(index=False).tolist() == [
        ("0", 1.0, 0.31, 70.5),
        ("1", 0.0, 0.44, 55.0),
        ("2", 1.0, -1.0, 33.25),  # no per-task cost in task_metrics: blank, not 0
        ("5", 0.0, -1.0, -1.0),  # only named in failed_tasks
    ]
    assert cells[(system, "3", 0)]["status"] == "pending"  # HAL wrote the error message as the result
    assert flags_of(cells[(system, "5", 0)]) == ("listed_only",)
    agent = _cells(read_hal(path, elapsed="agent").rows)
    assert agent[(system, "0", 0)]["elapsed_s"] == 64.0


def test_hal_swebench_upload_is_a_run_report() -> None:
    result = read_hal(HAL / "swebench_verified_mini_sweagent_1749100000_UPLOAD.json", errors="fail")
    cells = _cells(result.rows)
    system = "SWE-agent (claude-3-7-sonnet)"
    assert {k[1]: r["outcome"] for k, r in cells.items()} == {
        "astropy__astropy-12907": 0.0,
        "django__django-11099": 1.0,
        "django__django-11133": 0.0,
        "sympy__sympy-20590": 1.0,
        "sympy__sympy-24066": 0.0,
    }
    assert flags_of(cells[(system, "sympy__sympy-24066", 0)]) == ("error",)
    assert flags_of(cells[(system, "django__django-11133", 0)]) == ("empty_patch",)
    assert cells[(system, "django__django-11099", 0)]["group"] == "django/django"
    assert set(result.rows["status"]) == {"final"}


def test_hal_prompt_variations_are_attempts(tmp_path: Path) -> None:
    doc = {
        "config": {"agent_name": "a", "benchmark_name": "gaia"},
        "raw_eval_results": {"t1": [{"score": 1}, {"score": 0}, {"score": 1}], "t2": {"correct": True}},
    }
    path = tmp_path / "x_UPLOAD.json"
    path.write_text(json.dumps(doc))
    cells = _cells(read_hal(path).rows)
    assert {k: r["outcome"] for k, r in cells.items()} == {("a", "t1", 0): 1.0, ("a", "t1", 1): 0.0, ("a", "t1", 2): 1.0, ("a", "t2", 0): 1.0}
    doc["raw_eval_results"]["t2"] = {"accuracy_pct": 87}
    path.write_text(json.dumps(doc))
    with pytest.raises(ValidationError) as info:
        read_hal(path)
    problem = info.value.problems[0]
    assert (problem.row, problem.field) == (2, "raw_eval_results.t2")
    assert "must hold a score" in problem.rule


def test_hal_scorer_key_and_range(tmp_path: Path) -> None:
    doc = {"config": {"agent_name": "a", "benchmark_name": "corebench_hard"}, "raw_eval_results": {"c1": {"frac": 0.25}, "c2": {"frac": 3}}}
    path = tmp_path / "c_UPLOAD.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValidationError) as info:
        read_hal(path, scorer="frac")
    assert [(p.field, p.value) for p in info.value.problems] == [("raw_eval_results.c2", {"frac": 3})]
    doc["raw_eval_results"]["c2"] = {"frac": 1}
    path.write_text(json.dumps(doc))
    assert read_hal(path, scorer="frac").rows["outcome"].tolist() == [0.25, 1.0]


def test_trials_of_two_jobs_are_two_attempts(tmp_path: Path) -> None:
    shutil.copytree(HARBOR / "job-2025-09-01" / "fix-git__Qq11aa", tmp_path / "a" / "fix-git__Qq11aa")
    shutil.copytree(HARBOR / "job-2025-09-01" / "fix-git__Qq11aa", tmp_path / "b" / "fix-git__Qq11aa")
    # two trials of one task: two attempts, not a collision
    assert sorted(read_harbor(tmp_path).rows["attempt"]) == [0, 1]


def test_terminal_bench_legacy_trial_file_finds_its_run(tmp_path: Path) -> None:
    run = tmp_path / "2025-05-01__run"
    trial_dir = run / "hello-world" / "hello-world.1-of-1.2025-05-01__run"
    trial_dir.mkdir(parents=True)
    shutil.copy(HARBOR / "tb_legacy" / "2025-05-01__run" / "run_metadata.json", run / "run_metadata.json")
    trial = json.loads((HARBOR / "tb_legacy" / "2025-05-01__run" / "results.json").read_text())["results"][0]
    (trial_dir / "results.json").write_text(json.dumps(trial))
    rows = read_harbor(trial_dir / "results.json").rows
    assert rows[["system", "task", "outcome"]].to_records(index=False).tolist() == [("terminus/openai/gpt-4.1", "hello-world", 1.0)]
    # with the run's results.json beside it, the trial file is not read twice
    shutil.copy(HARBOR / "tb_legacy" / "2025-05-01__run" / "results.json", run / "results.json")
    assert len(read_harbor(run).rows) == 3
