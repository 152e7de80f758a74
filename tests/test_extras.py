"""Optional capabilities are extras: a missing one is one line naming it (exit 4), the core needs none of them.

An install without the extras is simulated in a subprocess: ``sys.modules[name] = None`` makes ``import name``
fail as if the package were not installed. (A real fresh venv with ``pip install .`` is too slow for the default
lane; the issue-31 report records that check by hand.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

import stopwise
from stopwise._extras import EXTRAS, require_extra
from stopwise.errors import MissingExtraError, StopwiseError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "src" / "stopwise" / "finality" / "examples" / "shared-state.toml"
IMPORT_NAMES = {"scikit-learn": "sklearn", "psycopg": "psycopg", "inspect_ai": "inspect_ai"}
"""Distribution -> import name where they differ in spelling (others: the same)."""
NOT_CORE = ("sklearn", "lightgbm", "fastapi", "uvicorn", "httpx", "inspect_ai", "psycopg", "matplotlib")
"""What `pip install stopwise` must not pull (issue 31): every extra's modules and matplotlib."""
PG = "postgresql://u@127.0.0.1:1/db"

_RUN = """
import contextlib, io, json, sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # as if it were not installed
from stopwise.cli.main import main
results = []
for args in json.loads(sys.argv[2]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(args)
    results.append([code, err.getvalue()])
print(json.dumps(results))
"""


def _cli_without(modules: tuple[str, ...], commands: list[list[str]], cwd: Path) -> list[tuple[int, str]]:
    """Each command's exit code and standard error, in one process where ``modules`` cannot be imported."""
    env = {**os.environ, "PYTHONPATH": str(Path(stopwise.__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, ",".join(modules), json.dumps(commands)], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [(code, err) for code, err in json.loads(done.stdout.strip().splitlines()[-1])]


def _distribution(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0]


def test_the_extras_table_is_pyprojects_and_the_core_pulls_none_of_them() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert tuple(IMPORT_NAMES.get(_distribution(r), _distribution(r)) for r in optional[extra]) == modules, extra
    assert optional["all"] == [f"stopwise[{','.join(EXTRAS)}]"]
    assert "stopwise[all]" in optional["test"]  # `make test` installs everything the tests need
    assert set(optional) == {*EXTRAS, "all", "experiments", "test"}
    core = {IMPORT_NAMES.get(_distribution(r), _distribution(r)) for r in project["dependencies"]}
    assert core.isdisjoint(NOT_CORE), core & set(NOT_CORE)


def test_the_error_is_an_import_error_and_a_stopwise_error() -> None:
    error = MissingExtraError("early", "stopwise early", "lightgbm")
    assert isinstance(error, ImportError) and isinstance(error, StopwiseError)
    assert (error.extra, error.name, str(error)) == ("early", "lightgbm", "stopwise early needs the [early] extra: pip install 'stopwise[early]'")
    require_extra("postgres", "a PostgreSQL ledger")  # installed here: nothing happens


_EARLY = "stopwise early needs the [early] extra: pip install 'stopwise[early]'"
_SERVICE = "stopwise finality replay needs the [service] extra: pip install 'stopwise[service]'"
_POSTGRES = "a PostgreSQL ledger needs the [postgres] extra: pip install 'stopwise[postgres]'"


@pytest.mark.parametrize(
    ("blocked", "commands"),
    [
        ("lightgbm", [(["early", "train", "runs.jsonl", "-o", "model"], _EARLY), (["early", "evaluate", "runs.jsonl", "-o", "evaluation"], _EARLY),
                      (["early", "monitor", "saved", "runs.jsonl"], _EARLY), (["report", "evaluation"], _EARLY)]),
        ("fastapi", [(["finality", "replay", "-r", "1", "--out", "replay"], _SERVICE)]),
        ("httpx", [(["finality", "replay", "-r", "1"], _SERVICE)]),
        ("psycopg", [(["ledger", "verify", PG, "nightly"], _POSTGRES), (["report", PG, "-o", "ledger.html"], _POSTGRES),
                     (["watch", PG, "nightly", "--timeout", "1"], _POSTGRES)]),
    ],
    ids=["early", "service-fastapi", "service-httpx", "postgres"],
)
def test_a_command_without_its_extra_prints_one_line_naming_it_and_exits_4(
    blocked: str, commands: list[tuple[list[str], str]], tmp_path: Path
) -> None:
    (tmp_path / "runs.jsonl").write_text("")
    (tmp_path / "saved").mkdir()
    (tmp_path / "evaluation").mkdir()
    for name in ("evaluation.json", "predictions.csv.gz"):  # what `stopwise report` takes for an early evaluation
        (tmp_path / "evaluation" / name).write_text("")
    results = _cli_without((blocked,), [args for args, _ in commands], tmp_path)
    for (args, line), (code, err) in zip(commands, results, strict=True):
        assert (code, err) == (4, f"error: {line}\n"), args
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evaluation", "runs.jsonl", "saved"]  # nothing written


_LIBRARY = """
import sys
for name in ("sklearn", "lightgbm", "fastapi", "uvicorn", "httpx", "inspect_ai", "psycopg"):
    sys.modules[name] = None
import stopwise
from stopwise.errors import MissingExtraError

def attempt(call):
    try:
        call()
    except MissingExtraError as exc:
        return [type(exc).__mro__[1].__name__, isinstance(exc, ImportError), exc.extra, exc.name, str(exc)]
    return None

def run_replay():
    from stopwise.finality import ReplaySchedule, run_controlled_replay
    run_controlled_replay(ReplaySchedule(repetitions=1))

def open_pg():
    from stopwise.ledger import open_ledger
    open_ledger("postgresql://u@127.0.0.1:1/db")

print(json.dumps({
    "import stopwise.early": attempt(lambda: __import__("stopwise.early")),
    "stopwise.EarlyOutcomeModel": attempt(lambda: stopwise.EarlyOutcomeModel),
    "import stopwise.inspect": attempt(lambda: __import__("stopwise.inspect")),
    "stopwise.finality.LocalService": attempt(lambda: __import__("stopwise.finality", fromlist=["x"]).LocalService),
    "run_controlled_replay": attempt(run_replay),
    "open_ledger(postgresql://)": attempt(open_pg),
}))
"""


def test_the_library_raises_the_hint_as_an_import_error() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(stopwise.__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", "import json\n" + _LIBRARY], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    hint = "needs the [{0}] extra: pip install 'stopwise[{0}]'"
    expected = {
        "import stopwise.early": ("early", "sklearn", "stopwise early " + hint.format("early")),
        "stopwise.EarlyOutcomeModel": ("early", "sklearn", "stopwise early " + hint.format("early")),
        "import stopwise.inspect": ("inspect", "inspect_ai", "stopwise.inspect " + hint.format("inspect")),
        "stopwise.finality.LocalService": ("service", "fastapi", "the controlled replay's local service " + hint.format("service")),
        "run_controlled_replay": ("service", "fastapi", "the controlled replay (stopwise finality replay) " + hint.format("service")),
        "open_ledger(postgresql://)": ("postgres", "psycopg", "a PostgreSQL ledger " + hint.format("postgres")),
    }
    for call, (extra, module, message) in expected.items():
        assert found[call] == ["StopwiseError", True, extra, module, message], call


def test_the_core_works_without_any_extra_or_matplotlib(tmp_path: Path) -> None:
    """decide, demo, order, replay -o, reports, finality check and a SQLite ledger, with every extra's modules missing."""
    from stopwise.records import synthetic_benchmark

    rows = synthetic_benchmark(60, 3, rng=0)
    rows[rows["system"].isin(["system-01", "system-03"])].to_csv(tmp_path / "rows.csv", index=False)
    rows.drop_duplicates("task")[["task", "group"]].to_csv(tmp_path / "tasks.csv", index=False)
    commands = [
        ["decide", "rows.csv", "-t", "system-03", "-b", "system-01", "--json"],
        ["demo", "--seed", "0", "--n-tasks", "200", "--out", "demo"],
        ["report", "demo/decisions.jsonl", "-o", "demo.html"],
        ["order", "tasks.csv", "-o", "order.csv"],
        ["replay", "rows.csv", "-k", "5", "--thresholds", "0", "-o", "replay", "--quiet"],
        ["report", "replay"],
        ["finality", "check", str(EXAMPLE)],
        ["ledger", "init", "ledger.db", "nightly", "-t", "system-03", "-b", "system-01", "--tasks", "tasks.csv"],
        ["ledger", "append", "ledger.db", "nightly", "rows.csv"],
        ["ledger", "decide", "ledger.db", "nightly"],
        ["ledger", "verify", "ledger.db", "nightly"],
        ["report", "ledger.db", "-o", "ledger.html"],
    ]
    results = _cli_without(NOT_CORE, commands, tmp_path)
    for args, (code, err) in zip(commands, results, strict=True):
        assert code in ((0, 1, 2, 3) if args[0] in ("decide", "ledger") and args[1] in ("rows.csv", "decide") else (0,)), (args, err)
        assert "extra" not in err and "Traceback" not in err, (args, err)
    assert (tmp_path / "demo.html").stat().st_size > 1_000_000 and (tmp_path / "ledger.html").stat().st_size > 1_000_000  # plotly.js inlined
