"""SWE-bench shapes that must never be misread: Multi-SWE-bench results.json, unknown lists, several runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stopwise.errors import InputError, ValidationError
from stopwise.ingest import ingest, read_swebench


def _write(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=4))
    return path


def _multi_swe_bench_results(resolved: list[str], unresolved: list[str], empty: list[str], incomplete: list[str]) -> dict:
    """A results/results.json shaped like the Multi-SWE-bench leaderboard's (the run report's keys, `resolved`)."""
    submitted = sorted(resolved + unresolved + empty)
    completed = sorted(resolved + unresolved)
    return {
        "total_instances": len(submitted) + len(incomplete),
        "submitted_instances": len(submitted),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": len(empty),
        "error_instances": 0,
        "unstopped_instances": 0,
        "completed_ids": completed,
        "incomplete_ids": incomplete,
        "empty_patch_ids": empty,
        "submitted_ids": submitted,
        "resolved": resolved,
        "unresolved_ids": unresolved,
        "error_ids": [],
        "unstopped_containers": [],
        "unremoved_images": [],
    }


RESOLVED = ["fasterxml__jackson-core-1142", "google__gson-1093", "googlecontainertools__jib-4035"]
UNRESOLVED = ["apache__dubbo-10638", "apache__dubbo-7041", "fasterxml__jackson-core-174", "google__gson-1391"]
EMPTY = ["apache__dubbo-11781"]
INCOMPLETE = ["fasterxml__jackson-core-729"]


def test_multi_swe_bench_results_json_reads_the_resolved_list(tmp_path: Path) -> None:
    submission = tmp_path / "evaluation" / "java" / "verified" / "20240825_SWE-agent_gpt-4o-2024-05-13"
    path = _write(submission / "results" / "results.json", _multi_swe_bench_results(RESOLVED, UNRESOLVED, EMPTY, INCOMPLETE))
    result = ingest(tmp_path)
    rows = result.rows
    assert set(rows["system"]) == {"20240825_SWE-agent_gpt-4o-2024-05-13"}
    assert len(rows) == 8
    assert sorted(rows.loc[rows["outcome"] == 1.0, "task"]) == RESOLVED
    assert sorted(rows.loc[(rows["outcome"] == 0.0) & (rows["flags"] == ""), "task"]) == sorted(UNRESOLVED)
    assert rows.loc[rows["task"] == "apache__dubbo-11781", "flags"].tolist() == ["empty_patch"]
    assert [(s.record, s.reason) for s in result.skipped] == [
        ("fasterxml__jackson-core-729", "not submitted (incomplete_ids)")
    ]
    assert result.formats == {str(path): "swebench"}


def test_an_unknown_list_in_a_run_report_is_refused_by_name(tmp_path: Path) -> None:
    doc = _multi_swe_bench_results(RESOLVED, UNRESOLVED, EMPTY, [])
    doc["fixed_ids"] = doc.pop("resolved")  # a resolved list under a name no reader knows
    doc.pop("resolved_instances")
    path = _write(tmp_path / "sub" / "results" / "results.json", doc)
    with pytest.raises(ValidationError) as info:
        read_swebench(path)
    [problem] = info.value.problems
    assert (problem.file, problem.field, problem.value) == (str(path), "fixed_ids", "3 ids")
    assert "a list this reader does not know in a SWE-bench run report" in problem.rule
    assert "expected only resolved_ids, unresolved_ids, error_ids, empty_patch_ids, resolved" in problem.rule


def test_counts_that_disagree_with_the_lists_are_refused(tmp_path: Path) -> None:
    doc = _multi_swe_bench_results(RESOLVED, UNRESOLVED, EMPTY, [])
    doc["resolved_instances"] = 6
    path = _write(tmp_path / "sub" / "results" / "results.json", doc)
    with pytest.raises(ValidationError) as info:
        read_swebench(path)
    [problem] = info.value.problems
    assert (problem.field, problem.rule, problem.value) == (
        "resolved_instances",
        "must equal the number of ids in resolved (3)",
        6,
    )


def test_resolved_beside_resolved_ids_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.r1.json", {"resolved_ids": ["a__b-1"], "resolved": ["a__b-2"], "unresolved_ids": []})
    with pytest.raises(ValidationError, match="must not be given beside resolved_ids"):
        read_swebench(path)


def test_an_unknown_list_in_a_leaderboard_file_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "sub" / "results" / "results.json", {"resolved": ["a__b-1"], "passed": ["a__b-2"]})
    with pytest.raises(ValidationError) as info:
        read_swebench(path, instances=["a__b-1", "a__b-2"])
    assert [(p.field, p.value) for p in info.value.problems] == [("passed", "1 ids")]


def _report(resolved: list[str], unresolved: list[str]) -> dict:
    return {
        "total_instances": 3,
        "submitted_instances": 3,
        "completed_instances": 3,
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": 0,
        "error_instances": 0,
        "completed_ids": sorted(resolved + unresolved),
        "incomplete_ids": [],
        "empty_patch_ids": [],
        "submitted_ids": sorted(resolved + unresolved),
        "resolved_ids": resolved,
        "unresolved_ids": unresolved,
        "error_ids": [],
        "schema_version": 2,
    }


def test_two_runs_of_one_model_are_two_attempts(tmp_path: Path) -> None:
    _write(tmp_path / "openai__gpt-4o.run-b.json", _report(["a__b-1"], ["a__b-2", "c__d-3"]))
    _write(tmp_path / "openai__gpt-4o.run-a.json", _report(["a__b-1", "a__b-2"], ["c__d-3"]))
    rows = ingest(tmp_path).rows
    assert set(rows["system"]) == {"openai__gpt-4o"}
    got = {(t, a): o for t, a, o in zip(rows["task"], rows["attempt"], rows["outcome"], strict=True)}
    # attempts follow the run ids: run-a is attempt 0, run-b attempt 1
    assert got == {
        ("a__b-1", 0): 1.0, ("a__b-1", 1): 1.0,
        ("a__b-2", 0): 1.0, ("a__b-2", 1): 0.0,
        ("c__d-3", 0): 0.0, ("c__d-3", 1): 0.0,
    }


def test_the_run_id_is_a_template_field(tmp_path: Path) -> None:
    _write(tmp_path / "openai__gpt-4o.run-a.json", _report(["a__b-1"], []))
    _write(tmp_path / "openai__gpt-4o.run-b.json", _report([], ["a__b-1"]))
    rows = ingest(tmp_path, system="{model}@{run_id}").rows
    assert sorted(zip(rows["system"], rows["attempt"], rows["outcome"], strict=True)) == [
        ("openai__gpt-4o@run-a", 0, 1.0),
        ("openai__gpt-4o@run-b", 0, 0.0),
    ]
    by_file = ingest(tmp_path, system="{file}").rows
    assert sorted(by_file["system"]) == ["openai__gpt-4o.run-a", "openai__gpt-4o.run-b"]


def test_an_unknown_template_field_lists_the_available_ones(tmp_path: Path) -> None:
    path = _write(tmp_path / "openai__gpt-4o.run-a.json", _report(["a__b-1"], []))
    with pytest.raises(InputError) as info:
        read_swebench(path, system="{agent}")
    assert str(info.value) == (
        f"{path}: `system` template names an unknown field {{agent}}; this format offers "
        "{dir}, {file}, {model}, {run_id}, {system}"
    )


def _instance_report(root: Path, run_id: str, model: str, instance: str, resolved: bool) -> Path:
    doc = {instance: {"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True,
                      "resolved": resolved, "tests_status": {}}}
    return _write(root / "logs" / "run_evaluation" / run_id / model / instance / "report.json", doc)


def test_run_evaluation_trees_of_two_runs_are_two_attempts(tmp_path: Path) -> None:
    _instance_report(tmp_path, "run1", "my-agent", "django__django-11099", True)
    _instance_report(tmp_path, "run2", "my-agent", "django__django-11099", False)
    rows = ingest(tmp_path / "logs").rows
    assert list(zip(rows["system"], rows["attempt"], rows["outcome"], strict=True)) == [
        ("my-agent", 0, 1.0),
        ("my-agent", 1, 0.0),
    ]


def test_per_instance_reports_covered_by_their_run_report_are_listed(tmp_path: Path) -> None:
    covered = _instance_report(tmp_path, "run1", "my-agent", "django__django-11099", True)
    _write(tmp_path / "my-agent.run1.json", _report(["django__django-11099"], []))
    result = ingest(tmp_path)
    assert result.n_rows == 1
    assert result.ignored_files == {str(covered): f"covered by the run report {tmp_path / 'my-agent.run1.json'} (run run1)"}
    assert any("per-instance report.json files not read" in note for note in result.notes)


def test_one_run_read_twice_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path / "a" / "my-agent.run1.json", _report(["a__b-1"], []))
    _write(tmp_path / "b" / "my-agent.run1.json", _report(["a__b-1"], []))
    with pytest.raises(ValidationError, match="must be read once per run but is read twice in run run1"):
        ingest(tmp_path)


def test_two_scaffolds_on_one_model_are_named_by_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stopwise.cli.main import main
    from stopwise.records import read_outcomes

    _write(tmp_path / "scaffold-a" / "openai__gpt-4o.run1.json", _report(["a__b-1"], ["a__b-2"]))
    _write(tmp_path / "scaffold-b" / "openai__gpt-4o.run1.json", _report([], ["a__b-1", "a__b-2"]))
    out = tmp_path / "rows.csv"
    assert main(["ingest", str(tmp_path), "-o", str(out)]) == 4
    err = capsys.readouterr().err.replace("\n", " ")
    assert "read twice in run run1" in err and "--system-from" in err
    assert main(["ingest", str(tmp_path), "-o", str(out), "--system-from", "dir"]) == 0
    rows = read_outcomes(out).to_frame()
    assert sorted(zip(rows["system"], rows["task"], rows["outcome"], strict=True)) == [
        ("scaffold-a", "a__b-1", 1.0), ("scaffold-a", "a__b-2", 0.0),
        ("scaffold-b", "a__b-1", 0.0), ("scaffold-b", "a__b-2", 0.0),
    ]
    assert main(["ingest", str(tmp_path), "-o", str(out), "--force", "--system-from", "file"]) == 4  # same file names


def test_cli_reads_multi_swe_bench_right_and_refuses_an_unknown_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stopwise.cli.main import main
    from stopwise.records import read_outcomes

    submission = tmp_path / "evaluation" / "java" / "verified" / "20240825_SWE-agent_gpt-4o"
    path = _write(submission / "results" / "results.json", _multi_swe_bench_results(RESOLVED, UNRESOLVED, EMPTY, INCOMPLETE))
    out = tmp_path / "rows.csv"
    assert main(["ingest", str(tmp_path / "evaluation"), "-o", str(out)]) == 0
    rows = read_outcomes(out).to_frame()
    assert int((rows["outcome"] == 1.0).sum()) == len(RESOLVED) and set(rows["system"]) == {submission.name}
    doc = json.loads(path.read_text())
    doc["fixed_ids"] = doc.pop("resolved")
    doc.pop("resolved_instances")
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["ingest", str(tmp_path / "evaluation"), "-o", str(tmp_path / "again.csv")]) == 4
    err = "".join(capsys.readouterr().err.split())  # the message as printed, wrapping removed
    assert f"{path},field'fixed_ids':isalistthisreaderdoesnotknowinaSWE-benchrunreport" in err
    assert not (tmp_path / "again.csv").exists()
