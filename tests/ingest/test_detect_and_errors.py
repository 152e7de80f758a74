"""Format detection, directory walking, and clear errors for malformed input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import stopwise.ingest as ingest_module
from stopwise.errors import FileFormatError, InputError, ValidationError
from stopwise.ingest import INGEST_FORMATS, detect_format, ingest
from stopwise.records import OUTCOME_COLUMNS

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("swebench/run_report/openai__gpt-4o.eval-2024.json", "swebench"),
        ("swebench/leaderboard/20240620_sweagent_claude3.5sonnet/results/results.json", "swebench"),
        ("swebench/logs/run_evaluation/run1/my-agent/django__django-11099/report.json", "swebench"),
        ("swebench/bash-only/20250726_mini-v1.0.0_gpt-5/per_instance_details.json", "swebench"),
        ("swebench/logs", "swebench"),
        ("inspect/gsm_small.json", "inspect"),
        ("tau2/airline_results.json", "tau2"),
        ("tau2/dir_format", "tau2"),
        ("harbor/job-2025-09-01", "harbor"),
        ("harbor/job-2025-09-01/fix-git__Qq11aa/result.json", "harbor"),
        ("harbor/job_summary_only/result.json", "harbor"),
        ("harbor/tb_legacy", "harbor"),
        ("hal/taubench_airline_toolcalling_gpt4o_1749000000_UPLOAD.json", "hal"),
        ("hal", "hal"),
    ],
)
def test_detect_format(path: str, fmt: str) -> None:
    assert detect_format(FIXTURES / path) == fmt


def test_detect_format_refuses_mixed_and_unknown(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match=r"mixes formats: hal .*, tau2 "):
        detect_format(FIXTURES / "tau2" / "..")
    unknown = tmp_path / "config.json"
    unknown.write_text(json.dumps({"model": "x", "temperature": 0}))
    with pytest.raises(FileFormatError, match=r"config\.json: cannot tell the format"):
        detect_format(unknown)
    with pytest.raises(FileFormatError, match="holds no harness log"):
        detect_format(tmp_path)


def test_auto_ingest_of_several_formats_at_once() -> None:
    result = ingest([FIXTURES / "tau2" / "airline_results.json", FIXTURES / "inspect", FIXTURES / "hal"])
    assert set(result.formats.values()) == {"tau2", "inspect", "hal"}
    assert sorted(result.rows["system"].unique()) == [
        "SWE-agent (claude-3-7-sonnet)",
        "TauBench ToolCalling (gpt-4o-2024-11-20)",
        "anthropic/claude-3-5-sonnet-20241022",
        "claude-3-7-sonnet-20250219",
    ]
    assert list(result.rows.columns) == list(OUTCOME_COLUMNS)
    # deterministic order: sorted by system, task, attempt
    keys = list(zip(result.rows["system"], result.rows["task"], result.rows["attempt"], strict=True))
    assert keys == sorted(keys)


def test_walking_a_directory_lists_what_it_ignores(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "harbor" / "job-2025-09-01", tmp_path / "job")
    (tmp_path / "job" / "config.json").write_text(json.dumps({"job_name": "job", "n_attempts": 2}))
    (tmp_path / "job" / "broken.json").write_text("{not json")
    result = ingest(tmp_path)
    assert len(result.rows) == 4
    assert result.ignored_files == {
        str(tmp_path / "job" / "broken.json"): "not valid JSON (line 1, column 2: Expecting property name enclosed in double quotes)",
        str(tmp_path / "job" / "config.json"): "not a harness log of a known format",
    }


def test_explicit_format_must_match(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="is a tau2 file, not inspect"):
        ingest(FIXTURES / "tau2" / "airline_results.json", format="inspect")
    # inside a walked directory, other formats are set aside and listed
    result = ingest([FIXTURES / "hal", FIXTURES / "tau2" / "dir_format"], format="hal")
    assert set(result.formats.values()) == {"hal"}
    assert set(result.ignored_files.values()) == {"a tau2 file (format=hal)"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", r"bad\.json: the file is empty"),
        ('{"resolved_ids": [1', r"bad\.json: not valid JSON \(line 1, column 20"),
        ("[1, 2, 3]", r"bad\.json: cannot tell the format"),
        ('{"eval": {"task": "t"}}', r"bad\.json: cannot tell the format"),
    ],
)
def test_unreadable_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(FileFormatError, match=message):
        ingest(path)


def test_missing_path() -> None:
    with pytest.raises(FileFormatError, match="no such file or directory"):
        ingest("does/not/exist.json")


def _problems(tmp_path: Path, doc: object, **kwargs: object) -> list:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValidationError) as info:
        ingest(path, **kwargs)  # type: ignore[arg-type]
    for problem in info.value.problems:
        assert problem.file == str(path)
    return [(p.row, p.field, p.rule, p.value) for p in info.value.problems]


def test_malformed_inspect_samples(tmp_path: Path) -> None:
    doc = {
        "version": 2,
        "eval": {"task": "t", "model": "m"},
        "samples": [
            {"id": "a", "epoch": 1, "scores": {"s": {"value": "X"}}},
            {"id": "b", "epoch": 0, "scores": {"s": {"value": "C"}}},
            {"id": "c", "epoch": 1, "scores": {"s": {"value": 7}}},
            {"id": None, "epoch": 1},
        ],
    }
    assert _problems(tmp_path, doc) == [
        (1, "scores.s.value", "must be C, I, P, N, a boolean or a number in [0, 1]", "X"),
        (2, "epoch", "must be an integer >= 1", 0),
        (3, "scores.s.value", "must map to a number in [0, 1] (the outcome contract); rescale the scorer", 7),
        (4, "id", "must be a sample id (text or integer)", None),
    ]


def test_malformed_harbor_trial(tmp_path: Path) -> None:
    trial = json.loads((FIXTURES / "harbor" / "job-2025-09-01" / "hello-world__AbC12de" / "result.json").read_text())
    trial["verifier_result"] = {"rewards": {"reward": "yes"}}
    assert _problems(tmp_path, trial) == [(None, "verifier_result.rewards.reward", "must be a number", "yes")]
    trial["verifier_result"] = {"rewards": {"reward": 1.5}}
    assert _problems(tmp_path, trial)[0][2:] == ("must be in [0, 1] (the outcome contract)", 1.5)
    trial["task_name"] = ""
    assert _problems(tmp_path, trial) == [(None, "task_name", "must be the task name", "")]


def test_malformed_swebench(tmp_path: Path) -> None:
    assert _problems(tmp_path, {"resolved_ids": ["a__b-1", ""], "error_ids": "a__b-2"}) == [
        (None, "resolved_ids[1]", "must be a non-empty instance id", ""),
        (None, "error_ids", "must be a list of instance ids", "a__b-2"),
    ]
    assert _problems(tmp_path, {"a__b-1": {"resolved": "yes"}, "a__b-2": {"resolved": True, "cost": -1}}) == [
        (1, "a__b-1.resolved", "must be true or false", "yes"),
        (2, "a__b-2.cost", "must be a number >= 0", -1),
    ]


def test_malformed_tau2(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "tau2" / "airline_results.json").read_text())
    doc["simulations"][0]["trial"] = -1
    doc["simulations"][1]["task_id"] = ""
    doc["simulations"][2]["reward_info"] = {"reward": "high"}
    assert _problems(tmp_path, doc) == [
        (1, "trial", "must be an integer >= 0 or null", -1),
        (2, "task_id", "must be a task id", ""),
        (3, "reward_info.reward", "must be a number", "high"),
    ]


def test_the_same_run_from_two_files_is_refused(tmp_path: Path) -> None:
    for name in ("a", "b"):
        shutil.copy(FIXTURES / "inspect" / "gsm_small.json", tmp_path / f"{name}.json")
    with pytest.raises(ValidationError) as info:
        ingest(tmp_path)
    problem = info.value.problems[0]
    assert problem.field == "system, task, attempt"
    assert f"from {tmp_path / 'a.json'} and {tmp_path / 'b.json'}" in problem.rule
    assert "`system`" in problem.rule


_ID_RULE = "a collection of instance ids (at least one, none blank, not one string) or None"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"format": "csv"}, "ingest: `format` must be one of 'auto', 'swebench', 'inspect', 'tau2', 'harbor', 'hal'; got 'csv'."),
        ({"errors": "zero"}, "ingest: `errors` must be one of 'pending', 'fail', 'drop'; got 'zero'."),
        ({"empty_patch": "ignore"}, "ingest: `empty_patch` must be one of 'pending', 'fail', 'drop'; got 'ignore'."),
        ({"elapsed": "cpu"}, "ingest: `elapsed` must be one of 'total', 'agent'; got 'cpu'."),
        ({"task_ids": "short"}, "ingest: `task_ids` must be one of 'canonical', 'raw'; got 'short'."),
        ({"system": " "}, "ingest: `system` must be non-empty text (a name or a template such as '{model}') or None; got ' '."),
        ({"trajectories": 1}, "ingest: `trajectories` must be one of False, True; got 1."),
        ({"instances": "django__django-1"}, f"ingest: `instances` must be {_ID_RULE}; got 'django__django-1'."),
        ({"instances": []}, f"ingest: `instances` must be {_ID_RULE}; got ()."),
        ({"instances": ["a__b-1", " "]}, f"ingest: `instances` must be {_ID_RULE}; got ('a__b-1', '')."),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(InputError) as info:
        ingest(FIXTURES / "hal", **kwargs)
    assert str(info.value) == message


def test_each_reader_names_itself_in_argument_errors() -> None:
    from stopwise.ingest import read_hal, read_harbor, read_inspect, read_swebench, read_tau2

    for reader in (read_swebench, read_inspect, read_tau2, read_harbor, read_hal):
        with pytest.raises(InputError, match=rf"^{reader.__name__}: `errors` must be one of"):
            reader(FIXTURES / "hal", errors="zero")


def test_no_paths() -> None:
    with pytest.raises(InputError, match="at least one file"):
        ingest([])


def test_public_names() -> None:  # __all__'s order (constants, classes, functions) is tests/test_exports.py's
    for name in ingest_module.__all__:
        assert getattr(ingest_module, name) is not None
    assert INGEST_FORMATS == ("swebench", "inspect", "tau2", "harbor", "hal")
    for name in ("detect_format", "ingest", "read_hal", "read_harbor", "read_inspect", "read_swebench", "read_tau2"):
        doc = getattr(ingest_module, name).__doc__
        assert "Examples" in doc and ">>>" in doc


def test_directory_without_harness_logs(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileFormatError, match=r"no harness logs found in .*config\.json: not a harness log"):
        ingest(p for p in [tmp_path])
