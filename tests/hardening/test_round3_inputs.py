"""Issue 37, silent acceptances and ingest layouts that mislabel a system: each reproducer of the issue, built
from its description, gives exit 4 naming the file, field, rule and value, or the right answer."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from stopwise.ingest import ingest
from stopwise.records import read_outcomes

from .conftest import Run, files, refused


def _write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc, encoding="utf-8")
    return path


def _rows(path: Path, n: int = 6) -> Path:
    lines = "".join(f"A,t{i},{int(i % 3 != 0)}\nB,t{i},{int(i % 2 == 0)}\n" for i in range(n))
    path.write_text("system,task,outcome\n" + lines)
    return path


# ------------------------------------------------------------------ silent acceptances


def test_order_refuses_a_task_listed_twice_as_decide_does(tmp_path: Path, run: Run) -> None:
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("task,group\nt1,a\nt2,b\nt1,a\n")
    refused(run("order", tasks), f"{tasks}, row 3, field 'task'", "must be unique", "already planned at position 1", "'t1'")
    refused(run("decide", _rows(tmp_path / "rows.csv"), "-t", "A", "-b", "B", "--tasks", tasks), "row 3", "'t1'")


def test_order_still_reduces_outcome_rows_to_their_tasks(tmp_path: Path, run: Run) -> None:
    result = run("order", _rows(tmp_path / "rows.csv"))  # a system column: each task has one row per system
    assert result.code == 0, result.err
    table = result.out[result.out.index("position,"):].splitlines()[1:]
    assert sorted(line.split(",")[1] for line in table) == [f"t{i}" for i in range(6)]


def test_a_covered_cell_that_is_no_flag_is_refused(tmp_path: Path, run: Run) -> None:
    tasks = tmp_path / "order.csv"
    tasks.write_text("position,task,covered\n1,t0,False\n2,t1,maybe\n3,t2,True\n4,t3,\n5,t4,1\n6,t5,0\n")
    refused(run("decide", _rows(tmp_path / "rows.csv"), "-t", "A", "-b", "B", "--tasks", tasks),
            f"{tasks}, row 2, field 'covered'", "must be true or false", "'maybe'")
    tasks.write_text("position,task,covered\n1,t0,False\n2,t1,true\n3,t2,True\n4,t3,\n5,t4,1\n6,t5,0\n")
    assert run("decide", _rows(tmp_path / "rows.csv"), "-t", "A", "-b", "B", "--tasks", tasks).code in (0, 1, 2, 3)


def test_a_parquet_file_with_two_outcome_columns_is_refused(tmp_path: Path, run: Run) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "rows.parquet"
    columns = [pa.array(["A", "B"]), pa.array(["t1", "t1"]), pa.array([1.0, 0.0]), pa.array([0.0, 1.0])]
    pq.write_table(pa.Table.from_arrays(columns, names=["system", "task", "outcome", "outcome"]), path)
    refused(run("decide", path, "-t", "A", "-b", "B"), str(path), "outcome", "appears more than once")


def _eval(path: Path, model: str, samples: list[dict[str, Any]], *, cut: str | None = None) -> Path:
    """A finished Inspect ``.eval`` archive; the member named ``cut`` is cut in half (a damaged member)."""
    header = {"version": 2, "status": "success", "eval": {"task": "arith", "model": model, "run_id": model, "eval_id": model},
              "plan": {}, "results": {"scores": [{"name": "match", "scorer": "match"}]}}
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for sample in samples:
            name = f"samples/{sample['id']}_epoch_{sample['epoch']}.json"
            text = json.dumps(sample)
            archive.writestr(name, text[: len(text) // 2] if name == cut else text)
    return path


def _samples(outcomes: list[int], **extra: Any) -> list[dict[str, Any]]:
    return [{"id": f"q{i}", "epoch": 1, "scores": {"match": {"value": "C" if o else "I"}}, "total_time": 1.5, **extra}
            for i, o in enumerate(outcomes)]


def test_watch_names_the_damaged_member_of_a_finished_log(tmp_path: Path, run: Run) -> None:
    logs = tmp_path / "logs"
    _eval(logs / "a.eval", "m/A", _samples([1, 1, 0, 1, 1, 1]))
    _eval(logs / "b.eval", "m/B", _samples([0, 1, 0, 0, 1, 0]), cut="samples/q2_epoch_1.json")
    result = run("watch", logs, "-t", "m/A", "-b", "m/B", "--n-tasks", "6", "--once")
    assert result.code == 2, result.err
    text = " ".join(result.out.split())
    assert "b.eval" in text and "samples/q2_epoch_1.json" in text and "not valid JSON" in text, text  # before: "is absent" alone
    refused(run("ingest", logs, "-o", "-"), "b.eval", "samples/q2_epoch_1.json")


def test_a_negative_inspect_total_time_is_refused_naming_the_sample(tmp_path: Path, run: Run) -> None:
    samples = _samples([1, 0])
    samples[1]["total_time"] = -3.25
    log = _eval(tmp_path / "a.eval", "m/A", samples)
    refused(run("ingest", log, "-o", tmp_path / "rows.csv"), str(log), "row 2", "field 'total_time'", "non-negative", "-3.25")
    assert not (tmp_path / "rows.csv").exists()


def test_json_with_a_repeated_key_is_refused_naming_file_and_key(tmp_path: Path, run: Run) -> None:
    ids = [f"django__django-{i}" for i in range(5)]
    text = '{"resolved_ids": ' + json.dumps(ids) + ', "unresolved_ids": [], "resolved_ids": []}'
    report = _write(tmp_path / "model.run1.json", text)
    refused(run("ingest", report, "-o", "-"), str(report), "'resolved_ids'", "appears more than once")  # before: 0 resolved


# ------------------------------------------------------------------ ingest layouts


def _tb_run(trials: list[tuple[str, bool]], stamp: str) -> dict[str, Any]:
    results = [
        {"id": f"{task}-{stamp}", "trial_name": f"{task}.1-of-1.{stamp}", "task_id": task, "is_resolved": ok, "failure_mode": "unset",
         "trial_started_at": "2025-05-01T08:00:00+00:00", "trial_ended_at": "2025-05-01T08:01:00+00:00"}
        for task, ok in trials
    ]
    return {"id": stamp, "results": results, "n_resolved": sum(ok for _, ok in trials), "accuracy": 0.5}


def test_two_legacy_terminal_bench_submissions_stored_as_timestamped_files_are_two_systems(tmp_path: Path) -> None:
    bench = tmp_path / "terminal-bench"
    _write(bench / "goose-claude" / "2025-05-01__08-00-00_results.json", _tb_run([("hello", True), ("sort", False)], "2025-05-01__08-00-00"))
    _write(bench / "goose-gpt" / "2025-05-02__09-00-00_results.json", _tb_run([("hello", False), ("sort", False)], "2025-05-02__09-00-00"))
    result = ingest(bench)
    rows = result.rows.sort_values(["system", "task"])
    assert sorted(set(rows["system"])) == ["goose-claude", "goose-gpt"]  # before: one system "terminal-bench", attempts 0 and 1
    assert rows["attempt"].tolist() == [0, 0, 0, 0]
    assert rows["outcome"].tolist() == [1.0, 0.0, 0.0, 0.0]


def test_two_timestamped_runs_of_one_submission_are_its_attempts(tmp_path: Path) -> None:
    sub = tmp_path / "terminal-bench" / "goose-claude"
    _write(sub / "2025-05-01__08-00-00_results.json", _tb_run([("hello", True)], "a"))
    _write(sub / "2025-05-02__08-00-00_results.json", _tb_run([("hello", False)], "b"))
    rows = ingest(sub).rows.sort_values("attempt")
    assert set(rows["system"]) == {"goose-claude"} and rows["attempt"].tolist() == [0, 1] and rows["outcome"].tolist() == [1.0, 0.0]


def test_a_per_instance_report_in_another_instances_folder_is_refused(tmp_path: Path, run: Run) -> None:
    report = _write(
        tmp_path / "logs" / "run_evaluation" / "run1" / "my-model" / "django__django-11099" / "report.json",
        {"django__django-22222": {"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True, "resolved": True}},
    )
    refused(run("ingest", report, "-o", "-"), str(report), "django__django-22222", "another instance's folder")
    result = run("ingest", report, "-o", "-", "--system", "my-model")  # named by the user: read
    assert result.code == 0, result.err
    assert result.out.splitlines()[1].startswith("my-model,django__django-22222,1.0")


def _tau2_info() -> dict[str, Any]:
    return {"agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1"}, "environment_info": {"domain_name": "airline"}}


def _simulation(sim_id: str, task: str, reward: float) -> dict[str, Any]:
    return {"id": sim_id, "task_id": task, "trial": 0, "termination_reason": "user_stop", "reward_info": {"reward": reward},
            "agent_cost": 0.01, "duration": 3.0, "messages": []}


def test_an_empty_tau2_run_beside_a_directory_format_run_takes_none_of_its_simulations(tmp_path: Path, run: Run) -> None:
    run_dir = tmp_path / "runs"
    _write(run_dir / "results.json", {"timestamp": "t1", "info": _tau2_info(), "tasks": [{"id": "1"}, {"id": "2"}]})
    _write(run_dir / "simulations" / "s1.json", _simulation("s1", "1", 1.0))
    _write(run_dir / "simulations" / "s2.json", _simulation("s2", "2", 0.0))
    empty = _write(run_dir / "other_run.json", {"timestamp": "t2", "info": {**_tau2_info(), "agent_info": {"llm": "other-llm"}},
                                               "tasks": [], "simulations": []})
    refused(run("ingest", empty, "-o", "-"), str(empty), "field 'simulations'", "at least one simulation")  # before: 2 rows of gpt-4.1's run
    refused(run("ingest", run_dir, "-o", "-"), str(empty), "field 'simulations'")
    empty.unlink()
    assert set(ingest(run_dir).rows["system"]) == {"gpt-4.1"} and ingest(run_dir).n_rows == 2


# ------------------------------------------------------------------ names are data


def _harbor_trial(task_name: str, agent: str, reward: float) -> dict[str, Any]:
    return {
        "id": "trial-1", "task_name": task_name, "trial_name": "trial-1", "trial_uri": "file:///jobs/trial-1",
        "task_id": {"org": "terminal-bench", "name": task_name}, "source": "terminal-bench",
        "config": {"task": {"name": task_name}, "trial_name": "trial-1", "agent": {"name": agent, "model_name": "openai/gpt-5", "kwargs": {}}},
        "agent_info": {"name": agent, "version": "1", "model_info": {"name": "gpt-5", "provider": "openai"}},
        "agent_result": {"cost_usd": 0.5}, "verifier_result": {"rewards": {"reward": reward}}, "exception_info": None,
        "started_at": "2025-09-01T10:00:00", "finished_at": "2025-09-01T10:05:00",
    }


def test_control_characters_in_harbor_and_swebench_names_never_reach_the_terminal(tmp_path: Path, run: Run) -> None:
    _write(tmp_path / "job" / "trial-1" / "result.json", _harbor_trial("evil\x1b[2J\x07task", "agent\x1b]0;owned\x07", 1.0))
    report = _write(tmp_path / "swe" / "model\x1b[31m.run1.json", {"resolved_ids": ["django__django-1\x1b[2J"], "unresolved_ids": []})
    for source in (tmp_path / "job", report):
        result = run("ingest", source, "-o", "-")
        assert result.code == 0, result.err
        assert "\x1b" not in result.out and "\x07" not in result.out and "\x1b" not in result.err
        assert "\\x1b" in result.out  # escaped as the Inspect reader escapes


@pytest.mark.parametrize("agent", ["=HYPERLINK(\"http://x\",\"y\")", "+cmd", "-2+3", "@SUM(A1)", "'=quoted", "''"])
def test_a_name_a_spreadsheet_would_run_is_written_as_text_and_read_back_unchanged(agent: str, tmp_path: Path, run: Run) -> None:
    _write(tmp_path / "job" / "trial-1" / "result.json", _harbor_trial("hello", agent, 1.0))
    out = tmp_path / "rows.csv"
    assert run("ingest", tmp_path / "job", "-o", out).code == 0
    cell = out.read_text().splitlines()[1]
    assert cell.startswith(("'", '"\'')), cell  # the system cell starts with an apostrophe: text in a spreadsheet
    assert read_outcomes(out)["system"].tolist() == [f"{agent}/gpt-5"]
    assert files(tmp_path)["rows.csv"] == out.read_bytes()
