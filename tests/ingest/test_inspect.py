"""Inspect AI logs read without inspect_ai: .json logs and .eval archives built from the fixture."""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from stopwise.errors import FileFormatError, InputError, ValidationError
from stopwise.ingest import read_inspect


def flags_of(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The flags of an ingested row (the ``flags`` column: canonical tokens joined by ';')."""
    return tuple(row["flags"].split(";")) if row["flags"] else ()


FIXTURE = Path(__file__).parent / "fixtures" / "inspect" / "gsm_small.json"
MODEL = "anthropic/claude-3-5-sonnet-20241022"


def _cells(rows):
    return {(t, int(a)): r for t, a, r in zip(rows["task"], rows["attempt"], rows.to_dict("records"), strict=True)}


def _write_eval(tmp_path: Path, *, header: bool = True, name: str = "log.eval") -> Path:
    """An .eval archive (deflate members, as Inspect wrote before it moved to Zstandard) from the fixture."""
    doc = json.loads(FIXTURE.read_text())
    samples = doc.pop("samples")
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": doc["eval"], "plan": doc["plan"]}))
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        if header:
            archive.writestr("header.json", json.dumps(doc))
    return path


def test_json_log_rows() -> None:
    result = read_inspect(FIXTURE)
    cells = _cells(result.rows)
    assert set(result.rows["system"]) == {MODEL}
    assert sorted(cells) == [("1", 0), ("1", 1), ("2", 0), ("2", 1), ("q3", 0), ("q3", 1)]
    # scorer "match" (the eval's first scorer): C -> 1, I -> 0, P -> 0.5, 1 -> 1, false -> 0
    assert {k: r["outcome"] for k, r in cells.items() if r["status"] == "final"} == {
        ("1", 0): 1.0,
        ("1", 1): 0.0,
        ("2", 0): 0.5,
        ("q3", 0): 1.0,
        ("q3", 1): 0.0,
    }
    errored = cells[("2", 1)]
    assert errored["status"] == "pending" and math.isnan(errored["outcome"])
    assert flags_of(errored) == ("error",)
    assert flags_of(cells[("2", 0)]) == ("limit:message",)
    assert cells[("1", 0)]["elapsed_s"] == 4.2 and cells[("1", 1)]["elapsed_s"] == 1.5
    assert cells[("1", 0)]["cost_usd"] == 0.0012 and cells[("1", 1)]["cost_usd"] == 0.0005
    assert math.isnan(cells[("2", 0)]["cost_usd"])  # usage without total_cost: no cost, not 0
    assert result.notes == [f"{FIXTURE}: outcome from scorer 'match' (of judge, match)"]


def test_working_time_and_other_scorers() -> None:
    rows = read_inspect(FIXTURE, elapsed="agent").rows
    assert _cells(rows)[("1", 0)]["elapsed_s"] == 3.1
    judged = _cells(read_inspect(FIXTURE, scorer="judge:correct").rows)
    assert [judged[k]["outcome"] for k in (("1", 0), ("1", 1), ("2", 0), ("q3", 0), ("q3", 1))] == [1.0, 0.0, 0.5, 1.0, 0.0]
    style = _cells(read_inspect(FIXTURE, scorer="judge:style").rows)
    assert style[("1", 1)]["outcome"] == 1.0


def test_dict_score_needs_a_key() -> None:
    with pytest.raises(ValidationError) as info:
        read_inspect(FIXTURE, scorer="judge")
    problem = info.value.problems[0]
    assert (problem.file, problem.row, problem.field) == (str(FIXTURE), 1, "scores.judge.value")
    assert "scorer='judge:KEY'" in problem.rule and "correct, style" in problem.rule


def test_unknown_scorer_lists_the_available_ones() -> None:
    with pytest.raises(ValidationError) as info:
        read_inspect(FIXTURE, scorer="exact")
    assert "this log has judge, match" in info.value.problems[0].rule


def test_eval_archive_equals_json_log(tmp_path: Path) -> None:
    from_json = read_inspect(FIXTURE).rows.drop(columns="source")
    from_eval = read_inspect(_write_eval(tmp_path)).rows.drop(columns="source")
    assert from_eval.equals(from_json)


def test_in_progress_eval_archive_reads_the_journal(tmp_path: Path) -> None:
    result = read_inspect(_write_eval(tmp_path, header=False))
    assert len(result.rows) == 6
    assert "log status started" in result.notes[0]


def test_trajectories_from_messages() -> None:
    result = read_inspect(FIXTURE, trajectories=True)
    assert len(result.trajectories) == 6
    first = next(t for t in result.trajectories if (t.task, t.attempt) == ("1", 0))
    assert first.agent == MODEL and first.outcome == 1.0 and first.cost_usd == 0.0012
    assert first.task_text.startswith("Natalia sold clips")
    assert [s.tool for s in first.steps] == ["calculator", None]
    assert first.steps[0].action == '48 + 24\nLet me add.\ncalculator({"expression": "48 + 48/2"})'
    assert first.steps[0].observation == "72.0"
    assert first.steps[1].action == "The answer is 72."  # resolved from attachment://a1b2
    listed_input = next(t for t in result.trajectories if (t.task, t.attempt) == ("2", 0))
    assert listed_input.task_text == "What is 12 * 12? Show partial work."
    errored = next(t for t in result.trajectories if (t.task, t.attempt) == ("2", 1))
    assert errored.outcome is None and errored.steps == [] and errored.meta["flags"] == ["error"]
    assert "RateLimitError" in errored.meta["error"]


def test_errors_drop_lists_the_sample() -> None:
    result = read_inspect(FIXTURE, errors="drop")
    assert len(result.rows) == 5
    assert [(s.record, s.reason) for s in result.skipped] == [("sample 2 epoch 2", "harness error (errors='drop')")]


def test_system_template() -> None:
    rows = read_inspect(FIXTURE, system="{task}/{model}").rows
    assert set(rows["system"]) == {f"gsm_small/{MODEL}"}
    with pytest.raises(InputError, match=r"unknown field \{agent\}"):
        read_inspect(FIXTURE, system="{agent}")


def test_log_without_samples(tmp_path: Path) -> None:
    doc = json.loads(FIXTURE.read_text())
    doc["samples"] = []
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValidationError) as info:
        read_inspect(path)
    assert "log_samples=False" in info.value.problems[0].rule


def test_damaged_archive(tmp_path: Path) -> None:
    path = tmp_path / "broken.eval"
    path.write_bytes(_write_eval(tmp_path).read_bytes()[:200])
    with pytest.raises(FileFormatError, match=r"broken\.eval: an \.eval log must be a zip archive"):
        read_inspect(path)


def test_scored_error_keeps_its_score(tmp_path: Path) -> None:
    """With score_on_error the sample has both an error and a score: a final row, flagged."""
    doc = json.loads(FIXTURE.read_text())
    doc["samples"][3]["scores"] = {"match": {"value": "I"}}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    row = _cells(read_inspect(path).rows)[("2", 1)]
    assert (row["status"], row["outcome"], flags_of(row)) == ("final", 0.0, ("error",))
    assert row["flags"] == "error"


def test_unscored_sample_is_not_a_zero(tmp_path: Path) -> None:
    doc = json.loads(FIXTURE.read_text())
    doc["samples"][4]["scores"] = {"match": {"value": float("nan")}}  # Inspect's "unscored" value
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    row = _cells(read_inspect(path).rows)[("q3", 0)]
    assert row["status"] == "pending" and flags_of(row) == ("unscored",)
