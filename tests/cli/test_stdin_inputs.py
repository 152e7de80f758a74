"""``-`` reads standard input in ``finality check`` and the ``early`` commands: the same result as the file, errors name ``<stdin>``."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import pytest
from tests.early.conftest import make_runs

from stopwise.cli._common import EXIT_ERROR, Inputs
from stopwise.cli.finality import _argument_syntax
from stopwise.cli.main import main
from stopwise.errors import InputError
from stopwise.records import write_trajectories

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "finality" / "fixtures"
EXAMPLES = TESTS.parent / "src" / "stopwise" / "finality" / "examples"


def _run(args: list[str], stdin: bytes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _run_file(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# finality check ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["closed-simulator.toml", "bounded-window.yaml", "async-no-reconciliation.toml"])
def test_finality_argument_from_stdin_equals_the_file(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = EXAMPLES / name
    expected = _run_file(["finality", "check", str(path), "--json"], capsys)
    got = _run(["finality", "check", "-", "--json"], path.read_bytes(), monkeypatch, capsys)
    assert expected[0] == got[0] == 0, got[2]
    assert json.loads(got[1]) == json.loads(expected[1])


def test_finality_yaml_argument_from_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "async-namespaced.yaml"
    expected = _run_file(["finality", "check", str(path), "--json"], capsys)
    code, out, err = _run(["finality", "check", "-", "--json"], path.read_bytes(), monkeypatch, capsys)
    assert code == expected[0] == 0, err
    assert json.loads(out) == json.loads(expected[1]) and json.loads(out)["argument"] == "async-namespaced"


@pytest.mark.parametrize("option", ["--runs", "--record"])
def test_finality_runs_or_record_from_stdin(option: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    files = {"--runs": FIXTURES / "runs.csv", "--record": FIXTURES / "record-good.json"}
    args = ["finality", "check", str(EXAMPLES / "async-no-reconciliation.toml"), "--json"]
    whole = [*args, "--runs", str(files["--runs"]), "--record", str(files["--record"])]
    expected = _run_file(whole, capsys)
    piped = [*args, *(item for o, f in files.items() for item in (o, "-" if o == option else str(f)))]
    code, out, err = _run(piped, files[option].read_bytes(), monkeypatch, capsys)
    assert code == expected[0] == 0, err
    assert json.loads(out) == json.loads(expected[1])
    assert [c["label"] for c in json.loads(out)] == ["unresolved", "unresolved"]


def test_finality_runs_as_jsonl_from_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import csv

    rows = list(csv.DictReader((FIXTURES / "runs.csv").read_text().splitlines()))
    jsonl = "".join(json.dumps({k: v for k, v in row.items() if v != ""}) + "\n" for row in rows).encode()
    argument = str(EXAMPLES / "namespaced-runs.toml")
    expected = _run_file(["finality", "check", argument, "--runs", str(FIXTURES / "runs.csv"), "--json"], capsys)
    code, out, err = _run(["finality", "check", argument, "--runs", "-", "--json"], jsonl, monkeypatch, capsys)
    assert code == expected[0] == 0, err
    assert [c["label"] for c in json.loads(out)] == [c["label"] for c in json.loads(expected[1])] == ["final", "final"]


def test_finality_errors_name_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["finality", "check", "-"], (FIXTURES / "bad-schema.toml").read_bytes(), monkeypatch, capsys)
    assert code == EXIT_ERROR and out == ""
    assert "<stdin>" in err and "field 'outcome.period'" in err and "stopwise-stdin-" not in err
    args = ["finality", "check", "-", "--runs", "-"]
    code, _, err = _run(args, (EXAMPLES / "closed-simulator.toml").read_bytes(), monkeypatch, capsys)
    assert code == EXIT_ERROR and "standard input ('-') can be read once" in err


def test_argument_syntax_is_told_from_the_first_line() -> None:
    assert _argument_syntax(b"# comment\n\n[outcome]\nperiod = 'terminal'\n") == ".toml"
    assert _argument_syntax(b'\xef\xbb\xbfversion = 1\nname = "x"\n') == ".toml"
    assert _argument_syntax(b'"a key".b = 1\n') == ".toml"
    assert _argument_syntax(b"# comment\nversion: 1\nname: x\n") == ".yaml"
    assert _argument_syntax(b"---\nversion: 1\n") == ".yaml"
    assert _argument_syntax(b"url: http://h/?a=b\n") == ".yaml"


def test_inputs_allow_one_stdin_among_all_files() -> None:
    with Inputs([Path("a.jsonl"), Path("-")], None) as inputs:
        assert inputs.file(Path("a.jsonl")) == Path("a.jsonl")
    with pytest.raises(InputError, match="can be read once"), Inputs([Path("-")], Path("-")):
        pass


# early train / evaluate / monitor ------------------------------------------------------------------


@pytest.fixture(scope="module")
def trajectories(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """48 runs (4 agents x 12 tasks), gzip-compressed JSONL."""
    return write_trajectories(make_runs(), tmp_path_factory.mktemp("stdin-early") / "runs.jsonl.gz")


@pytest.fixture(scope="module")
def trained(trajectories: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """``cat runs.jsonl.gz | stopwise early train - -o model``: the model folder and the printed summary."""
    model = tmp_path_factory.mktemp("stdin-model") / "model"
    args = ["early", "train", "-", "--out", str(model), "--min-steps", "5", "--backbone", "logistic", "--json"]  # no LightGBM: quick to fit and load
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(trajectories.read_bytes())))
        out = io.StringIO()
        patch.setattr(sys, "stdout", out)
        code = main(args)
    assert code == 0
    return model, json.loads(out.getvalue())


def test_early_train_from_stdin(trained: tuple[Path, dict[str, object]]) -> None:
    model, summary = trained
    assert summary["n_train_runs"] == 48 and (model / "manifest.json").exists()


def test_early_monitor_from_stdin_equals_the_file(
    trained: tuple[Path, dict[str, object]], trajectories: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = gzip.decompress(trajectories.read_bytes())  # uncompressed JSONL this time
    args = ["early", "monitor", str(trained[0]), "--summary", "--limit", "2", "--json"]
    expected = _run_file([*args[:3], str(trajectories), *args[3:]], capsys)
    code, out, err = _run([*args[:3], "-", *args[3:]], plain, monkeypatch, capsys)
    assert code == expected[0] == 0, err
    got = [json.loads(line) for line in out.splitlines()]
    assert got == [json.loads(line) for line in expected[1].splitlines()] and len(got) == 2


def test_early_evaluate_from_stdin_equals_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_trajectories(make_runs(n_agents=3, n_tasks=8), tmp_path / "runs.jsonl")
    options = ["--min-steps", "5", "--variant", "dense-lr", "--by", "service", "--thresholds", "0.6,0.9", "--threshold", "0.6", "--json"]
    code, out, err = _run_file(["early", "evaluate", str(path), *options], capsys)
    assert code == 0, err
    expected = json.loads(out)
    code, out, err = _run(["early", "evaluate", "-", *options], path.read_bytes(), monkeypatch, capsys)
    assert code == 0, err
    got = json.loads(out)
    assert got["n_runs"] == expected["n_runs"] == 24
    assert got["sweeps"] == expected["sweeps"] and got["per_agent"] == expected["per_agent"]


def test_early_stdin_errors_name_stdin(
    trajectories: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _run(["early", "train", "-", "--out", str(tmp_path / "m")], b'{"agent": "a", "task": 3\n', monkeypatch, capsys)
    assert code == EXIT_ERROR and out == ""
    assert "<stdin>" in err and "stopwise-stdin-" not in err
    assert not (tmp_path / "m").exists()
    for args in (["early", "evaluate", "-", str(trajectories), "-"], ["early", "monitor", str(tmp_path), "-", "--gold", "-"]):
        code, _, err = _run(args, trajectories.read_bytes(), monkeypatch, capsys)
        assert code == EXIT_ERROR and "standard input ('-') can be read once" in err


def test_early_monitor_on_stdin_names_stdin_when_no_run_matches(
    trained: tuple[Path, dict[str, object]], trajectories: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(["early", "monitor", str(trained[0]), "-", "--agent", "nobody"], trajectories.read_bytes(), monkeypatch, capsys)
    assert code == EXIT_ERROR and out == ""
    assert "<stdin>: no run matches --agent 'nobody'" in err and "stopwise-stdin-" not in err
