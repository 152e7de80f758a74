"""System names for Inspect logs that share a model, eval-set folders, and escaped control characters.

The issue's bug: two logs of ``mockllm/model`` read as one system and fail with "(system, task,
attempt) ... must be unique but is read twice". Real ``eval_set`` runs (mock model, no network)
reproduce it and show each ``--system-from`` choice fixing it; hand-written JSON logs cover each
field's errors. Expected outcomes come from inspect_ai's own reading of the same logs.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from stopwise.cli.main import main
from stopwise.errors import InputError, ValidationError
from stopwise.ingest import SYSTEM_SOURCES, ingest, read_inspect, system_template


@pytest.fixture(scope="module")
def inspect_ai() -> ModuleType:
    try:
        return importlib.import_module("inspect_ai")
    except ImportError as exc:
        message = f"inspect_ai is not installed ({exc}); install the test extras: pip install -e '.[test]'"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def _answers(right: bool) -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage

    def answer(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        a, b = (int(x) for x in messages[-1].text.split("?")[0].split(" + "))
        out = ModelOutput.from_content("mockllm/model", str(a + b if right or (a + b) % 2 else a + b + 1))
        out.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)  # no tokenizer download
        return out

    return answer


@pytest.fixture(scope="module")
def eval_set_dir(inspect_ai: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real eval_set folder: one task, two variants (task arg), one mock model, JSON logs."""
    from inspect_ai import Task, eval_set, task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    @task
    def adding(variant: str = "careful") -> Task:
        return Task(
            dataset=[Sample(id=f"s{i}", input=f"{i} + {2 * i}? Number only.", target=str(3 * i)) for i in range(1, 7)],
            solver=generate(),
            scorer=match(),
        )

    root = tmp_path_factory.mktemp("evalset")
    models = {"careful": get_model("mockllm/model", custom_outputs=_answers(True)),
              "sloppy": get_model("mockllm/model", custom_outputs=_answers(False))}
    for variant, model in models.items():
        ok, logs = eval_set([adding(variant=variant)], log_dir=str(root / variant), model=model, display="none",
                            log_format="json", tags=[f"system={variant}", "run-1"])
        assert ok and logs[0].status == "success"
    return root


def _official(folder: Path) -> dict[tuple[str, str], float]:
    from inspect_ai.log import read_eval_log

    out = {}
    for path in folder.rglob("*.json"):
        if path.name in ("eval-set.json", "logs.json"):
            continue
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            out[(log.eval.task_args["variant"], str(sample.id))] = {"C": 1.0, "I": 0.0}[sample.scores["match"].value]
    return out


def _flat(eval_set_dir: Path, tmp_path: Path) -> Path:
    """Both variants' logs in one eval-set folder (as one eval_set over two tasks writes them)."""
    flat = tmp_path / "flat"
    flat.mkdir()
    for path in eval_set_dir.rglob("*.json"):
        if path.name not in ("eval-set.json", "logs.json"):
            (flat / path.name).write_bytes(path.read_bytes())
    (flat / "eval-set.json").write_text(json.dumps({"eval_set_id": "x", "tasks": []}))
    return flat


def test_two_logs_of_one_model_collide_without_naming(eval_set_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"field 'system, task, attempt': must be unique but is read twice .*; got \(mockllm/model, s1, 0\)"):
        ingest(_flat(eval_set_dir, tmp_path))


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("task-arg:variant", {"careful": "careful", "sloppy": "sloppy"}),
        ("tag:system=", {"careful": "careful", "sloppy": "sloppy"}),
        ("dir", {"careful": "careful", "sloppy": "sloppy"}),
        (["model", "task-arg:variant"], {"careful": "mockllm/model/careful", "sloppy": "mockllm/model/sloppy"}),
    ],
)
def test_system_from_names_each_log(eval_set_dir: Path, source: Any, names: dict[str, str]) -> None:
    rows = ingest(eval_set_dir, system=system_template(source)).rows
    expected = {(names[variant], task): outcome for (variant, task), outcome in _official(eval_set_dir).items()}
    got = {(s, t): o for s, t, o in zip(rows["system"], rows["task"], rows["outcome"], strict=True)}
    assert got == expected
    assert len(rows) == 12
    assert sum(expected.values()) == 6 + 3  # careful right on all 6; sloppy wrong on the even sums 6, 12, 18


def test_file_names_each_log(eval_set_dir: Path, tmp_path: Path) -> None:
    flat = _flat(eval_set_dir, tmp_path)
    rows = ingest(flat, system=system_template("file")).rows
    assert set(rows["system"]) == {p.stem for p in flat.glob("*.json") if p.name != "eval-set.json"}


def test_eval_set_folder_is_read_whole_and_replaced_attempts_are_left_out(eval_set_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "careful"
    folder.mkdir()
    for path in (eval_set_dir / "careful").iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    log = next(p for p in folder.glob("*.json") if p.name not in ("eval-set.json", "logs.json"))
    doc = json.loads(log.read_text())
    # an earlier attempt of the same task (as eval_set leaves it when a retry replaces it)
    doc["eval"]["created"] = "2000-01-01T00:00:00+00:00"
    for sample in doc["samples"]:
        sample["scores"]["match"]["value"] = "I"
    earlier = folder / ("2000-01-01T00-00-00-00-00_" + log.name.split("_", 1)[1])
    earlier.write_text(json.dumps(doc))
    result = read_inspect(folder)
    assert set(result.rows["outcome"]) == {1.0} and len(result.rows) == 6
    assert result.ignored_files == {str(earlier): f"replaced in its eval set by a later attempt ({log.name})"}
    assert any("an eval set; read the newest log of each of its 1 tasks (1 replaced attempts left out)" in n
               for n in result.notes)


def _json_log(path: Path, **eval_fields: Any) -> Path:
    doc = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "model": "mockllm/model", **eval_fields},
        "samples": [{"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("fields", "source", "name"),
    [
        ({"solver": "chain_of_thought"}, "solver", "chain_of_thought"),
        ({"metadata": {"arm": "B"}}, "metadata:arm", "B"),
        ({"tags": ["only"]}, "tag", "only"),
        ({"task_args": {"k": 3}}, "task-arg:k", "3"),
        ({}, "task", "t"),
        ({}, "model", "mockllm/model"),
    ],
)
def test_each_source(tmp_path: Path, fields: dict[str, Any], source: str, name: str) -> None:
    log = _json_log(tmp_path / "a.json", **fields)
    assert read_inspect(log, system=system_template(source)).rows["system"].tolist() == [name]


@pytest.mark.parametrize(
    ("fields", "source", "message"),
    [
        ({"task_args": {"k": 3}}, "task-arg:variant", r"a.json: the log has no task_args\['variant'\] .*\(task_args: k\)"),
        ({"task_args": {"k": {"x": 1}}}, "task-arg:k", r"task_args\['k'\] must be a scalar"),
        ({"tags": ["a", "b"]}, "tag", "must have exactly one tag .* it has 2 \\(a, b\\); use --system-from tag:PREFIX"),
        ({"tags": ["a"]}, "tag:system=", "exactly one tag starting with 'system='.* it has 0"),
        ({}, "solver", "names no solver"),
        ({}, "metadata:arm", r"no metadata\['arm'\]"),
    ],
)
def test_missing_fields_name_the_file(tmp_path: Path, fields: dict[str, Any], source: str, message: str) -> None:
    log = _json_log(tmp_path / "a.json", **fields)
    with pytest.raises(InputError, match=message):
        read_inspect(log, system=system_template(source))


@pytest.mark.parametrize("bad", ["", "modle", "task-arg:", "task-arg:a]b", "metadata:{x}", ["file", ""]])
def test_bad_system_from(bad: Any) -> None:
    with pytest.raises(InputError, match="system_from"):
        system_template(bad)


def test_sources_listed() -> None:
    assert SYSTEM_SOURCES[0] == "model" and "task-arg:NAME" in SYSTEM_SOURCES


def test_control_characters_in_model_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _json_log(tmp_path / "a.json", model="mockllm/\x1b[2J\x1b[31mred\u202e")
    out = tmp_path / "o.csv"
    assert main(["ingest", str(log), "-o", str(out)]) == 0
    rows = read_inspect(log).rows
    assert rows["system"].tolist() == ["mockllm/\\x1b[2J\\x1b[31mred\\u202e"]
    printed = capsys.readouterr()
    assert "\x1b" not in printed.out + printed.err
    assert "\x1b" not in out.read_text()


def test_cli_hints_at_system_from_when_logs_collide(
    eval_set_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(_flat(eval_set_dir, tmp_path)), "-o", str(tmp_path / "o.csv")]) == 4
    err = capsys.readouterr().err
    assert "hint: logs of one model read as one system" in err and "must be unique but is read twice" in err
    assert not (tmp_path / "o.csv").exists()


def test_cli_system_from(eval_set_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o.csv"
    assert main(["ingest", str(eval_set_dir), "-o", str(out), "--system-from", "task-arg:variant"]) == 0
    printed = capsys.readouterr().out
    assert "12 outcome rows from 2 files (inspect): 2 systems, 6 tasks" in printed
    assert "an eval set; read the newest log of each of its 1 tasks" in printed
    assert "ignored" not in printed  # eval-set.json and logs.json are the set's index, not stray files
    assert main(["ingest", str(eval_set_dir), "-o", str(out), "--system", "x", "--system-from", "file"]) == 4
    assert "either --system or --system-from" in capsys.readouterr().err
    assert main(["ingest", str(eval_set_dir), "-o", str(tmp_path / "p.csv"), "--system-from", "colour"]) == 4
    assert not (tmp_path / "p.csv").exists()
