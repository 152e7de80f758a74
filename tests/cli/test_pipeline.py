"""The command line in pipelines: light start-up, ``-`` for standard input, ``--json`` on every result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

import stopwise
from stopwise.cli.main import app, main
from stopwise.records import synthetic_benchmark, write_outcomes

SRC = Path(stopwise.__file__).resolve().parents[1]
HEAVY = ("sklearn", "lightgbm", "matplotlib", "plotly", "scipy", "pandas")


def _run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-c", "from stopwise.cli.main import run; run()", *args], env=env, text=True, check=False, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["decide", "--help"], ["early", "train", "--help"], ["report", "--help"]])
def test_help_imports_no_heavy_dependency(args: list[str]) -> None:
    """``stopwise --help`` (and any command's help) loads the command line only: no pandas, SciPy, scikit-learn, LightGBM, matplotlib or Plotly."""
    code = (
        "import sys\nfrom stopwise.cli.main import main\ncode = main(sys.argv[1:])\n"
        f"bad = [m for m in {HEAVY!r} if m in sys.modules]\nprint('HEAVY', bad, file=sys.stderr)\nsys.exit(9 if bad else code)"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, text=True, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def test_decide_imports_no_model_or_plotting_library(tmp_path: Path) -> None:
    path = write_outcomes(synthetic_benchmark(60, 2, rng=0), tmp_path / "o.csv")
    code = (
        "import sys\nfrom stopwise.cli.main import main\ncode = main(sys.argv[1:])\n"
        "bad = [m for m in ('sklearn', 'lightgbm', 'matplotlib', 'plotly') if m in sys.modules]\nsys.exit(9 if bad else code)"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", code, "decide", str(path), "-t", "system-02", "-b", "system-01"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1, 2, 3), done.stderr


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_decide_reads_standard_input(tmp_path: Path, suffix: str) -> None:
    """``cat outcomes | stopwise decide -`` gives the record of the file itself (same input digest), in any format."""
    rows = synthetic_benchmark(80, 3, rng=1)
    path = write_outcomes(rows, tmp_path / f"outcomes{suffix}")
    args = ["-t", "system-03", "-b", "system-01", "--json"]
    from_file = _run(["decide", str(path), *args], capture_output=True)
    with path.open("rb") as handle:
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        from_stdin = subprocess.run(
            [sys.executable, "-c", "from stopwise.cli.main import run; run()", "decide", "-", *args], stdin=handle, env=env, capture_output=True, check=False
        )
    assert from_stdin.returncode == from_file.returncode, from_stdin.stderr
    a, b = json.loads(from_file.stdout), json.loads(from_stdin.stdout)
    for record in (a, b):
        record.pop("decided_at", None)
    assert a == b


def test_standard_input_errors_name_stdin() -> None:
    done = _run(["decide", "-", "-t", "A", "-b", "B"], input="system,task,outcome\nA,t1,7\n", capture_output=True)
    assert done.returncode == 4
    assert "<stdin>" in done.stderr and "stopwise-stdin-" not in done.stderr


RESULT_COMMANDS = [
    ("decide",), ("order",), ("demo",), ("replay",), ("ingest",), ("report",), ("policy", "check"),
    ("early", "train"), ("early", "evaluate"), ("early", "monitor"), ("finality", "check"), ("finality", "replay"),
    ("ledger", "decide"), ("ledger", "verify"), ("ledger", "conflicts"),
]


def _command(path: tuple[str, ...]) -> object:
    group = typer.main.get_command(app)
    for name in path:
        group = group.commands[name]  # type: ignore[attr-defined]
    return group


@pytest.mark.parametrize("path", RESULT_COMMANDS, ids=" ".join)
def test_every_result_command_has_json(path: tuple[str, ...]) -> None:
    command = _command(path)
    assert any("--json" in p.opts for p in command.params), f"stopwise {' '.join(path)} has no --json"  # type: ignore[attr-defined]


def test_replay_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_outcomes(synthetic_benchmark(80, 3, rng=2), tmp_path / "bench.csv")
    assert main(["replay", str(path), "-k", "5", "--budgets", "0.5", "--thresholds", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sufficiency"][0]["source"] == "bench" and data["sources"][0]["pairs"] == 6
    assert data["settings"]["n_orders"] == 5


def test_policy_check_json_and_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from stopwise.records import PAPER_POLICY_TOML, Policy

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(PAPER_POLICY_TOML.encode())))
    assert main(["policy", "check", "-", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sha256"] == Policy.paper().sha256() != Policy().sha256()


def test_order_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_outcomes(synthetic_benchmark(40, 2, rng=0), tmp_path / "tasks.csv")
    assert main(["order", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["order"]) == 40 and data["policy_sha256"]


def test_literal_constants_match_the_library() -> None:
    """Values the command line spells out (so that ``--help`` imports no library code) equal the library's."""
    from stopwise.cli import _common as common_cli
    from stopwise.cli import early as early_cli
    from stopwise.cli import replay as replay_cli
    from stopwise.early import THRESHOLDS
    from stopwise.ingest import SYSTEM_SOURCES
    from stopwise.replay import DEFAULT_BUDGETS

    assert early_cli.THRESHOLDS == THRESHOLDS and common_cli.SYSTEM_SOURCES == SYSTEM_SOURCES
    assert replay_cli._DEFAULT_BUDGETS == ", ".join(f"{b:g}" for b in DEFAULT_BUDGETS)


def test_the_library_and_the_command_line_share_one_vocabulary() -> None:
    """The closed vocabularies the command line offers are the library's own objects (stopwise/_vocabulary.py)."""
    from stopwise import _vocabulary
    from stopwise.cli import ingest as ingest_cli
    from stopwise.cli import replay as replay_cli
    from stopwise.compare import _betting
    from stopwise.ingest import INGEST_FORMATS
    from stopwise.replay import DEFAULT_BUDGETS, LIVE_RULES

    assert replay_cli.LIVE_RULES is LIVE_RULES is _vocabulary.LIVE_RULES == ("betting-wor", "fixed-budget")
    assert replay_cli.STRATEGIES is _betting.STRATEGIES is _vocabulary.STRATEGIES
    assert _vocabulary.STRATEGIES == ("auto", "mixture", "max", "horizon", "agrapa", "plug-in")
    assert ingest_cli.INGEST_FORMATS is INGEST_FORMATS is _vocabulary.INGEST_FORMATS
    assert DEFAULT_BUDGETS.tolist() == list(_vocabulary.DEFAULT_BUDGETS) == [k / 100 for k in range(5, 100, 5)]
