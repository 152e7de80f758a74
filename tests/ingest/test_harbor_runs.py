"""Harbor jobs and legacy Terminal-Bench runs: runs become attempts, task ids pair up, nothing covered is silent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stopwise.cli.main import main
from stopwise.errors import InputError, ValidationError
from stopwise.ingest import ingest, read_harbor
from stopwise.records import read_outcomes

TASKS = ("cobol-modernization", "hello-world")


def _write(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def _tb_trial(task: str, run: str, resolved: bool | None, minute: int) -> dict:
    return {
        "id": f"{run}-{task}",
        "trial_name": f"{task}.1-of-1.{run}",
        "task_id": task,
        "instruction": "do it",
        "is_resolved": resolved,
        "failure_mode": "unset" if resolved is not None else "unknown_agent_error",
        "parser_results": None,
        "trial_started_at": f"2025-05-01T08:{minute:02d}:00+00:00",
        "trial_ended_at": f"2025-05-01T08:{minute:02d}:30+00:00",
    }


def _tb_run(folder: Path, run: str, outcomes: dict[str, bool | None]) -> Path:
    results = [_tb_trial(task, run, resolved, i) for i, (task, resolved) in enumerate(outcomes.items())]
    n = sum(1 for r in outcomes.values() if r)
    doc = {"id": run, "results": results, "pass_at_k": {}, "n_resolved": n, "n_unresolved": len(outcomes) - n,
           "resolved_ids": [t for t, r in outcomes.items() if r], "unresolved_ids": [t for t, r in outcomes.items() if not r],
           "accuracy": n / len(outcomes)}
    return _write(folder / run / "results.json", doc)


def test_five_legacy_runs_without_metadata_are_one_system_with_five_attempts(tmp_path: Path) -> None:
    agent = tmp_path / "my-agent"
    runs = [f"2025-05-0{i}__10-00-00" for i in range(1, 6)]
    for i, run in enumerate(runs):
        _tb_run(agent, run, {"cobol-modernization": i % 2 == 0, "hello-world": True})
    result = ingest(agent)
    rows = result.rows
    assert set(rows["system"]) == {"my-agent"}
    assert sorted(rows.loc[rows["task"] == "cobol-modernization", "attempt"]) == [0, 1, 2, 3, 4]
    # attempts follow the run folders: runs 1, 3 and 5 resolved the task
    cobol = rows[rows["task"] == "cobol-modernization"].sort_values("attempt")
    assert cobol["outcome"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0]
    assert any("no run_metadata.json" in note and "(my-agent)" in note for note in result.notes)
    # the run folder is a template field
    by_run = ingest(agent, system="{run_id}").rows
    assert sorted(set(by_run["system"])) == runs and set(by_run["attempt"]) == {0}


def test_a_run_without_its_results_json_is_one_system(tmp_path: Path) -> None:
    run = tmp_path / "my-agent" / "2025-05-01__10-00-00"
    for task in TASKS:
        trial = _tb_trial(task, run.name, task == "hello-world", 0)
        _write(run / task / trial["trial_name"] / "results.json", trial)
    rows = ingest(tmp_path).rows
    assert rows[["system", "task", "outcome"]].to_records(index=False).tolist() == [
        ("my-agent", "cobol-modernization", 0.0),
        ("my-agent", "hello-world", 1.0),
    ]


def test_trial_files_covered_by_their_run_results_are_listed(tmp_path: Path) -> None:
    run_file = _tb_run(tmp_path / "my-agent", "r1", {"hello-world": True})
    trial = _tb_trial("hello-world", "r1", True, 0)
    trial_file = _write(run_file.parent / "hello-world" / trial["trial_name"] / "results.json", trial)
    result = ingest(tmp_path)
    assert result.n_rows == 1
    assert result.ignored_files == {str(trial_file): f"covered by the run's {run_file}"}
    assert any("1 Terminal-Bench trial results.json files not read" in note for note in result.notes)


def _harbor_trial(task_name: str, trial: str, reward: float, started: str, kwargs: dict | None = None) -> dict:
    return {
        "id": trial,
        "task_name": task_name,
        "trial_name": trial,
        "trial_uri": f"file:///jobs/{trial}",
        "task_id": {"org": "terminal-bench", "name": task_name.rsplit("/", 1)[-1]},
        "source": "terminal-bench",
        "task_checksum": "c0ffee",
        "config": {"task": {"name": task_name}, "trial_name": trial,
                   "agent": {"name": "terminus-2", "model_name": "openai/gpt-5", "kwargs": kwargs or {}}},
        "agent_info": {"name": "terminus-2", "version": "2.0.0", "model_info": {"name": "gpt-5", "provider": "openai"}},
        "agent_result": {"cost_usd": 0.5},
        "verifier_result": {"rewards": {"reward": reward}},
        "exception_info": None,
        "started_at": started,
        "finished_at": started.replace(":00:00", ":05:00"),
    }


def _harbor_job(folder: Path, trials: list[dict]) -> None:
    for trial in trials:
        _write(folder / trial["trial_name"] / "result.json", trial)


def test_a_harbor_job_gives_one_system_with_distinct_attempts_and_canonical_tasks(tmp_path: Path) -> None:
    _harbor_job(tmp_path / "job-1", [
        _harbor_trial("terminal-bench/cobol-modernization", "cobol-modernization__aaaaaaa", 1.0, "2025-09-01T10:00:00Z"),
        _harbor_trial("terminal-bench/cobol-modernization", "cobol-modernization__bbbbbbb", 0.0, "2025-09-01T09:00:00Z"),
        _harbor_trial("terminal-bench/hello-world", "hello-world__ccccccc", 1.0, "2025-09-01T11:00:00Z"),
    ])
    rows = read_harbor(tmp_path).rows
    assert rows[["system", "task", "attempt", "outcome"]].to_records(index=False).tolist() == [
        ("terminus-2/gpt-5", "cobol-modernization", 0, 0.0),
        ("terminus-2/gpt-5", "cobol-modernization", 1, 1.0),
        ("terminus-2/gpt-5", "hello-world", 0, 1.0),
    ]
    raw = read_harbor(tmp_path, task_ids="raw").rows
    assert sorted(set(raw["task"])) == ["terminal-bench/cobol-modernization", "terminal-bench/hello-world"]


def test_trial_rows_and_job_summary_rows_pair_up(tmp_path: Path) -> None:
    _harbor_job(tmp_path / "trials" / "job-1", [
        _harbor_trial("terminal-bench/cobol-modernization", "cobol-modernization__aaaaaaa", 1.0, "2025-09-01T10:00:00Z"),
        _harbor_trial("terminal-bench/hello-world", "hello-world__ccccccc", 0.0, "2025-09-01T11:00:00Z"),
    ])
    summary = {
        "id": "j2", "started_at": "2025-09-02T09:00:00Z", "finished_at": "2025-09-02T10:00:00Z", "n_total_trials": 2,
        "stats": {"n_trials": 2, "n_errors": 0, "evals": {"oracle__terminal-bench": {
            "n_trials": 2, "n_errors": 0, "metrics": [{"mean": 1.0}],
            "reward_stats": {"reward": {"1.0": ["cobol-modernization__ddddddd", "hello-world__eeeeeee"]}},
            "exception_stats": {}}}},
    }
    _write(tmp_path / "summary" / "job-2" / "result.json", summary)
    rows = ingest(tmp_path).rows
    tasks = {system: sorted(rows.loc[rows["system"] == system, "task"]) for system in set(rows["system"])}
    assert tasks == {"terminus-2/gpt-5": ["cobol-modernization", "hello-world"], "oracle": ["cobol-modernization", "hello-world"]}


def test_long_task_names_in_a_job_summary_are_noted(tmp_path: Path) -> None:
    long_name = "a-very-long-task-name-that-harbor"  # 33 characters: cut to 32 in trial names
    summary = {
        "id": "j", "n_total_trials": 1,
        "stats": {"n_trials": 1, "n_errors": 0, "evals": {"oracle__tb": {
            "reward_stats": {"reward": {"1.0": [f"{long_name[:32]}__fffffff"]}}, "exception_stats": {}}}},
    }
    _write(tmp_path / "job" / "result.json", summary)
    result = ingest(tmp_path)
    assert any("Harbor cuts at 32 characters" in note and long_name[:32] in note for note in result.notes)


def test_agent_kwargs_name_the_system(tmp_path: Path) -> None:
    _harbor_job(tmp_path / "job-1", [
        _harbor_trial("terminal-bench/hello-world", "hello-world__aaaaaaa", 1.0, "2025-09-01T10:00:00Z", {"temperature": 0.2}),
    ])
    _harbor_job(tmp_path / "job-2", [
        _harbor_trial("terminal-bench/hello-world", "hello-world__bbbbbbb", 0.0, "2025-09-01T10:00:00Z", {"temperature": 0.8}),
    ])
    rows = read_harbor(tmp_path, system="{agent}/{model}/t={kwargs.temperature}").rows
    assert sorted(zip(rows["system"], rows["outcome"], strict=True)) == [
        ("terminus-2/gpt-5/t=0.2", 1.0),
        ("terminus-2/gpt-5/t=0.8", 0.0),
    ]
    with pytest.raises(InputError, match=r"has no agent keyword argument 'seed' to name the system \(kwargs: temperature\)"):
        read_harbor(tmp_path, system="{kwargs.seed}")
    with pytest.raises(InputError) as info:
        read_harbor(tmp_path, system="{scaffold}")
    assert str(info.value).endswith(
        "this format offers {agent}, {dataset}, {dir}, {file}, {kwargs.NAME}, {model}, {provider}, {run_id}"
    )


def test_cli_keeps_raw_task_ids(tmp_path: Path) -> None:
    _harbor_job(tmp_path / "job-1", [
        _harbor_trial("terminal-bench/hello-world", "hello-world__aaaaaaa", 1.0, "2025-09-01T10:00:00Z"),
    ])
    out = tmp_path / "rows.csv"
    assert main(["ingest", str(tmp_path / "job-1"), "-o", str(out), "--raw-task-ids"]) == 0
    assert read_outcomes(out).to_frame()["task"].tolist() == ["terminal-bench/hello-world"]


def test_a_legacy_run_whose_count_disagrees_with_its_trials_is_refused(tmp_path: Path) -> None:
    path = _tb_run(tmp_path / "agent", "r1", {"hello-world": True, "cobol-modernization": False})
    doc = json.loads(path.read_text())
    doc["n_resolved"] = 2
    path.write_text(json.dumps(doc))
    with pytest.raises(ValidationError) as info:
        read_harbor(path)
    [problem] = info.value.problems
    assert (problem.field, problem.rule, problem.value) == (
        "n_resolved", "must equal the number of trials with is_resolved true (1)", 2
    )


def test_runs_of_three_harnesses_read_in_one_call(tmp_path: Path) -> None:
    """Done-when of issue 23: two SWE-bench runs, five legacy runs, a Harbor job -> one system each, distinct attempts."""
    for run_id, resolved in (("run-a", ["a__b-1"]), ("run-b", [])):
        _write(tmp_path / "swe" / f"openai__gpt-4o.{run_id}.json",
               {"resolved_ids": resolved, "unresolved_ids": [i for i in ["a__b-1"] if i not in resolved],
                "error_ids": [], "empty_patch_ids": []})
    for i in range(5):
        _tb_run(tmp_path / "tb" / "my-agent", f"2025-05-0{i + 1}__10-00-00", {"hello-world": i < 2})
    _harbor_job(tmp_path / "harbor" / "job-1", [
        _harbor_trial("terminal-bench/hello-world", f"hello-world__{c * 7}", 1.0, f"2025-09-01T1{n}:00:00Z")
        for n, c in enumerate("abc")
    ])
    result = ingest(tmp_path)
    attempts = {
        system: sorted(result.rows.loc[result.rows["system"] == system, "attempt"])
        for system in sorted(set(result.rows["system"]))
    }
    assert attempts == {"my-agent": [0, 1, 2, 3, 4], "openai__gpt-4o": [0, 1], "terminus-2/gpt-5": [0, 1, 2]}
    assert sorted(set(result.formats.values())) == ["harbor", "swebench"]


def test_cut_task_names_of_a_job_summary_are_completed_from_trials_read_with_it(tmp_path: Path) -> None:
    long_name = "configure-git-webserver-with-post-receive-hook"
    _harbor_job(tmp_path / "trials" / "job-1", [
        _harbor_trial(f"terminal-bench/{long_name}", f"{long_name[:32].rstrip('_-')}__aaaaaaa", 1.0, "2025-09-01T10:00:00Z"),
    ])
    summary = {
        "id": "j", "n_total_trials": 1,
        "stats": {"n_trials": 1, "n_errors": 0, "evals": {"oracle__terminal-bench": {
            "reward_stats": {"reward": {"0.0": [f"{long_name[:32].rstrip('_-')}__bbbbbbb"]}}, "exception_stats": {}}}},
    }
    _write(tmp_path / "summary" / "job-2" / "result.json", summary)
    result = ingest(tmp_path)
    assert sorted(zip(result.rows["system"], result.rows["task"], strict=True)) == [
        ("oracle", long_name),
        ("terminus-2/gpt-5", long_name),
    ]
    assert any(f"{long_name[:32]} -> {long_name}" in note for note in result.notes)
