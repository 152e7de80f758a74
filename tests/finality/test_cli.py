"""``stopwise finality``: schema, example, check and replay, in-process through the CLI runner."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer
from typer.testing import CliRunner

from stopwise.cli.finality import register
from stopwise.records import read_outcomes

FIXTURES = Path(__file__).parent / "fixtures"


EXAMPLES = Path(__file__).parents[2] / "src" / "stopwise" / "finality" / "examples"
runner = CliRunner()


def app() -> typer.Typer:
    root = typer.Typer()
    register(root)

    @root.callback()
    def _root() -> None:  # keeps "finality" a subcommand
        pass

    return root


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app(), ["finality", *args])
    return result.exit_code, result.stdout, result.stderr


def test_schema() -> None:
    code, out, _ = invoke("schema")
    assert code == 0 and json.loads(out)["$id"] == "urn:stopwise:schema:effects-record:1"
    code, out, _ = invoke("schema", "completion-argument")
    assert code == 0 and json.loads(out)["title"] == "stopwise completion argument"
    code, _, err = invoke("schema", "policy")
    assert code == 4 and "schema name must be one of" in err


def test_example() -> None:
    code, out, _ = invoke("example")
    assert code == 0 and "closed-simulator" in out.split()
    code, out, _ = invoke("example", "namespaced-runs")
    assert code == 0 and 'handling = "isolate"' in out
    code, _, err = invoke("example", "nope")
    assert code == 4 and "example argument must be one of" in err


def test_check_an_argument() -> None:
    code, out, _ = invoke("check", str(EXAMPLES / "closed-simulator.toml"))
    assert code == 0
    assert "label: final" in out and "final by construction" in out and "unit: separate" in out
    code, out, _ = invoke("check", str(EXAMPLES / "async-no-reconciliation.toml"), "--json")
    assert code == 0 and json.loads(out)["label"] == "unresolved"


def test_check_bad_documents_exit_4_with_the_problem() -> None:
    code, out, err = invoke("check", str(FIXTURES / "bad-schema.toml"))
    assert code == 4 and out == ""
    assert "field 'outcome.period': must be one of endpoint, terminal or window; got 'eventually'" in err
    code, _, err = invoke("check", str(FIXTURES / "bad-rules.toml"))
    assert code == 4 and "field 'routes[2].bound': must be two numbers, low then high, with low <= high" in err
    code, _, err = invoke("check", str(FIXTURES / "missing.toml"))
    assert code == 4 and "no such completion argument" in err
    code, _, err = invoke(
        "check", str(EXAMPLES / "closed-simulator.toml"), "--record", str(FIXTURES / "record-good.json")
    )
    assert code == 4 and "--record and --rows need --runs" in err
    code, _, err = invoke(
        "check",
        str(EXAMPLES / "closed-simulator.toml"),
        "--runs",
        str(FIXTURES / "runs.csv"),
        "--record",
        str(FIXTURES / "record-bad.json"),
    )
    assert code == 4 and "7 problems in the open-effects record" in err


def test_check_runs_with_evidence_writes_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = tmp_path / "rows.csv"
    code, out, _ = invoke(
        "check",
        str(EXAMPLES / "async-no-reconciliation.toml"),
        "--runs",
        str(FIXTURES / "runs.csv"),
        "--record",
        str(FIXTURES / "record-good.json"),
        "--rows",
        str(rows),
    )
    assert code == 0 and "labels: 0 final, 2 unresolved, 0 bounded; 1 analysis units from 2 runs" in out
    written = read_outcomes(rows)
    assert list(written["status"]) == ["pending", "pending"] and set(written["unit"]) == {"unit:A"}
    code, out, _ = invoke(
        "check", str(EXAMPLES / "namespaced-runs.toml"), "--runs", str(FIXTURES / "runs.csv"), "--json"
    )
    assert code == 0 and [c["label"] for c in json.loads(out)] == ["final", "final"]


def test_replay_prints_the_table() -> None:
    code, out, err = invoke("replay", "-r", "1", "-c", "snapshot", "-c", "terminal")
    assert code == 0
    assert "snapshot scoring" in out and "5/20" in out and "20/20" in out
    assert "Completion checker on the replayed runs" in out
    # off a terminal: trials done of all trials (20 per sweep), a line every 10 %, then the total time
    counted = re.findall(r"^finality replay: (\d+)/(\d+) \(\d+%\), elapsed \d+:\d\d:\d\d, ETA \d+:\d\d:\d\d — trials", err, re.M)
    total = int(counted[0][1])
    assert total % 20 == 0 and len(counted) >= 9 and all(int(t) == total for _, t in counted)
    assert re.search(rf"^finality replay: {total}/{total} \(100%\), done in", err, re.M)
    assert "finality replay:" not in out


def test_replay_json_and_out(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = invoke("replay", "--repetitions", "1", "--condition", "shared", "--json", "--out", str(tmp_path))
    assert code == 0
    summary = json.loads(out)
    assert summary["matches"] is True
    assert [(c["measure"], c["count"], c["of"]) for c in summary["counts"]] == [
        ("run B exposed to A's delayed write", 15, 20)
    ]
    assert (tmp_path / "shared.outcomes.csv").exists() and (tmp_path / "shared.effects.json").exists()


def test_replay_bad_options_exit_4() -> None:
    code, _, err = invoke("replay", "-r", "0")
    assert code == 4 and "--repetitions must be an integer from 1 to 100" in err
    code, _, err = invoke("replay", "-r", "1", "-c", "everything")
    assert code == 4 and "conditions must be among" in err


def test_registered_in_the_stopwise_command() -> None:
    from stopwise.cli.main import main

    assert main(["finality", "schema", "replay-result"]) == 0
    assert main(["finality", "check", str(FIXTURES / "bad-rules.yaml")]) == 4
