"""The command line as a process in a pipeline: start-up imports, --version, closed pipes and piped tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import stopwise
from stopwise.cli._common import EXIT_PIPE
from stopwise.cli.main import main
from stopwise.records import synthetic_benchmark, write_outcomes

SRC = Path(stopwise.__file__).resolve().parents[1]
HEAVY = ("sklearn", "lightgbm", "matplotlib")


def _python(code: str, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "60"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-c", code, *args], env=env, text=True, check=False, **kwargs)  # type: ignore[call-overload, no-any-return]


def _cli(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return _python("from stopwise.cli.main import run; run()", *args, **kwargs)


DECIDE_PATH = (
    "import stopwise.cli.main; "
    "from stopwise.compare import decide; "
    "from stopwise.records import ACTIONS, DecisionRecord, Policy, TaskUniverse, load_policy, read_outcomes, read_task_universe"
)
"""What ``stopwise decide`` imports: the command line, then the library names its command uses."""
NOT_ON_DECIDE = (*HEAVY, "scipy", "sqlalchemy", "plotly")
"""Never imported to decide (pandas is left to the pandas-free reader's own guard)."""


@pytest.mark.parametrize(
    ("imports", "forbidden"),
    [
        ("import stopwise.cli", HEAVY),
        ("import stopwise.cli.main", NOT_ON_DECIDE),
        (DECIDE_PATH, NOT_ON_DECIDE),
        ("import stopwise.compare, stopwise.records", NOT_ON_DECIDE),
    ],
    ids=["stopwise.cli", "stopwise.cli.main", "decide command", "compare+records"],
)
def test_import_stopwise_cli_imports_no_heavy_dependency(imports: str, forbidden: tuple[str, ...]) -> None:
    code = f"import sys; {imports}; bad = [m for m in {forbidden!r} if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    done = _python(code, capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_decide_runs_without_scipy(tmp_path: Path) -> None:
    """A whole ``stopwise decide`` (exact tails) loads no SciPy, model, plotting or database library."""
    path = write_outcomes(synthetic_benchmark(60, 2, rng=0), tmp_path / "o.csv")
    code = (
        "import sys\nfrom stopwise.cli.main import main\ncode = main(sys.argv[1:])\n"
        f"bad = [m for m in {NOT_ON_DECIDE!r} if m in sys.modules]\nprint('loaded', bad, file=sys.stderr)\nsys.exit(9 if bad else code)"
    )
    done = _python(code, "decide", str(path), "-t", "system-02", "-b", "system-01", "--n-tasks", "60", capture_output=True)
    assert done.returncode in (0, 1, 2, 3), done.stderr


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"stopwise {stopwise.__version__}\n"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = synthetic_benchmark(120, 3, rng=3)
    rows["system"] = rows["system"].map(lambda s: f"an-agent-with-a-very-long-name-that-a-terminal-would-cut/{s}")
    return write_outcomes(rows, tmp_path_factory.mktemp("cli") / "a-benchmark-with-a-long-source-name-for-ci-logs.csv")


def test_closed_pipe_exits_141_never_a_decision(outcomes: Path) -> None:
    """``stopwise decide … | head -1`` where the reader has gone: the exit status is 141, never 0-3."""
    systems = sorted({line.split(",")[0] for line in outcomes.read_text().splitlines()[1:]})
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write fails with EPIPE
    try:
        done = _cli("decide", str(outcomes), "-t", systems[-1], "-b", systems[0], stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert done.returncode == EXIT_PIPE == 141, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_head_in_a_shell_pipeline_reads_the_decision_or_141(outcomes: Path) -> None:
    systems = sorted({line.split(",")[0] for line in outcomes.read_text().splitlines()[1:]})
    args = ["decide", str(outcomes), "-t", systems[-1], "-b", systems[0]]
    alone = _cli(*args, capture_output=True)
    assert alone.returncode in (0, 1, 2, 3)
    script = f'{sys.executable} -c "from stopwise.cli.main import run; run()" "$@" | head -1; echo "status=${{PIPESTATUS[0]}}"'
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(["bash", "-c", script, "bash", *args], env=env, text=True, capture_output=True, check=False)
    status = int(done.stdout.rsplit("status=", 1)[1])
    assert status in (alone.returncode, 141), done.stdout + done.stderr  # all written in time, or the pipe closed first
    assert "Traceback" not in done.stderr


def test_piped_tables_are_never_cut(outcomes: Path) -> None:
    """``stopwise replay … | cat`` in a 60-column terminal shows whole names and numbers."""
    done = _cli("replay", str(outcomes), "-k", "5", "--budgets", "0.5", "--thresholds", "0", capture_output=True)
    assert done.returncode == 0, done.stderr
    assert "a-benchmark-with-a-long-source-name-for-ci-logs" in done.stdout
    assert "…" not in done.stdout
    systems = sorted({line.split(",")[0] for line in outcomes.read_text().splitlines()[1:]})
    done = _cli("decide", str(outcomes), "-t", systems[-1], "-b", systems[0], capture_output=True)
    assert systems[-1] in done.stdout and systems[0] in done.stdout
