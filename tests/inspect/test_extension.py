"""The installed Inspect extension: ``inspect eval stopwise/compare`` configured by pyproject / environment / metadata.

The task file (``fixtures/extension_tasks.py``) imports nothing from stopwise. The configured run is the real
``inspect`` command of this environment (its entry point loads ``stopwise.inspect._extension``); the log's
early-stopping summary must carry the claim and interval that ``stopwise decide`` gives on ``ledger export
--upto-decision``. With nothing configured, the same run is untouched.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from stopwise import ACTIONS
from stopwise.cli.main import main

TASKS = Path(__file__).parent / "fixtures" / "extension_tasks.py"
MODELS = "mockllm/good,mockllm/fair"
POLICY = """\
threshold = 0.0
tail_cutoff = 0.05

[decision]
boundary = "betting-wor"

[order]
kind = "uniform"
seed = 7
"""


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STOPWISE_", "INSPECT_"))}
    return {**env, "INSPECT_DISPLAY": "none", **extra}


def inspect_eval(folder: Path, *arguments: str, env: dict[str, str], inspect: Path | None = None) -> list[Any]:
    """Run ``inspect eval`` in ``folder`` (a fresh log dir); the logs, by model."""
    from inspect_ai.log import read_eval_log

    command = inspect or Path(sys.executable).parent / "inspect"
    logs = folder / "logs"
    shutil.rmtree(logs, ignore_errors=True)
    done = subprocess.run([str(command), "eval", *arguments, "--log-dir", str(logs), "--max-samples", "4"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return sorted((read_eval_log(str(p)) for p in logs.glob("*.eval")), key=lambda log: log.eval.model)


def project(folder: Path, table: str) -> Path:
    """``folder`` with the task file, the policy and a pyproject.toml holding ``table``."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(TASKS, folder / "tasks.py")
    (folder / "policy.toml").write_text(POLICY)
    (folder / "pyproject.toml").write_text(f"[project]\nname = 'user-evals'\nversion = '0'\n\n{table}")
    return folder


def _cli(arguments: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(arguments)
    return code, out.getvalue()


def assert_summary_is_decide_on_export(folder: Path, evaluation: str, logs: list[Any]) -> None:
    """Each log's summary: the claim and interval of ``decide`` on ``ledger export --upto-decision``."""
    from stopwise.ledger import open_ledger

    with open_ledger(folder / "ledger.db", mode="read") as ledger:
        first = ledger.first_decision(evaluation)
        universe = ledger.registration(evaluation).universe
    assert first is not None and universe.tasks is not None
    # the planned order as registered (the policy's [order] draw over the dataset: not the file's order)
    assert list(universe.tasks) != sorted(universe.tasks)
    pd.DataFrame({"position": range(1, len(universe.tasks) + 1), "task": universe.tasks}).to_csv(folder / "order.csv", index=False)
    upto = folder / "upto.csv"
    assert _cli(["ledger", "export", str(folder / "ledger.db"), evaluation, "-o", str(upto),
                 "--upto-decision", str(first.sequence), "--force"])[0] == 0
    code, printed = _cli(["decide", str(upto), "-t", "mockllm/good", "-b", "mockllm/fair", "-p",
                          str(folder / "policy.toml"), "--tasks", str(folder / "order.csv"), "--json"])
    again = json.loads(printed)
    assert again["action"] == first.record.action == "promote" and code == ACTIONS.index("promote")
    for log in logs:
        meta = log.results.early_stopping.metadata
        assert meta["action"] == again["action"]
        assert meta["claim"] == again["claim"] and "mockllm/good beats mockllm/fair" in meta["claim"]
        assert meta["interval"] == {k: again["interval"][k] for k in ("low", "high", "level", "kind")}
        assert meta["ledger_position"]["decision"] == first.sequence


def assert_stopped_when_decided(logs: list[Any], evaluation: str) -> None:
    assert [log.eval.model for log in logs] == ["mockllm/fair", "mockllm/good"]
    for log in logs:
        summary = log.results.early_stopping
        meta = summary.metadata
        assert (meta["evaluation"], meta["action"], meta["system"]) == (evaluation, "promote", log.eval.model)
        ran = len(log.samples)
        # decided after n_observed pairs; at most the samples in flight (4) and the pace (2) ran on
        assert ran + len(summary.early_stops) == 200
        assert meta["decision"]["n_observed"] <= ran <= meta["decision"]["n_observed"] + 4 + 2 + 1 < 200


def test_inspect_eval_configured_by_pyproject_environment_and_metadata(tmp_path: Path) -> None:
    folder = project(tmp_path / "evals", '[tool.stopwise]\ntested = "mockllm/good"\npolicy = "policy.toml"\n')
    env = _clean_env(STOPWISE_LEDGER="sqlite:///ledger.db", STOPWISE_BASELINE="mockllm/fair")
    logs = inspect_eval(folder, "stopwise/compare", "-T", "task=tasks.py@arith", "--model", MODELS,
                        "--metadata", "stopwise_evaluation=arith-run", env=env)
    assert_stopped_when_decided(logs, "arith-run")
    sources = logs[0].results.early_stopping.metadata["sources"]
    assert sources == {
        "tested": f"{folder / 'pyproject.toml'} [tool.stopwise]",
        "policy": f"{folder / 'pyproject.toml'} [tool.stopwise]",
        "ledger": "environment STOPWISE_LEDGER",
        "baseline": "environment STOPWISE_BASELINE",
        "evaluation": "--metadata",
    }
    assert_summary_is_decide_on_export(folder, "arith-run", logs)


def test_nothing_configured_leaves_the_run_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """stopwise installed, nothing configured: plain and wrapped runs run every sample, no stopwise metadata."""
    from inspect_ai import eval as inspect_eval_
    from inspect_ai.hooks._hooks import get_all_hooks

    folder = project(tmp_path / "plain", "")
    monkeypatch.chdir(folder)
    for name in [k for k in os.environ if k.startswith("STOPWISE_")]:
        monkeypatch.delenv(name)
    plain = inspect_eval_("tasks.py@arith", task_args={"n": 12}, model=MODELS.split(","), display="none",
                          log_dir=str(folder / "logs"))
    wrapped = inspect_eval_("stopwise/compare", task_args={"task": "tasks.py@arith", "n": 12}, model=MODELS.split(","),
                            display="none", log_dir=str(folder / "logs"))
    ours = [hook for hook in get_all_hooks() if type(hook).__module__ == "stopwise.inspect._extension"]
    assert len(ours) == 1 and not ours[0].enabled()  # registered by the entry point, disabled: never called
    for runs in (plain, wrapped):
        assert sorted(log.eval.model for log in runs) == sorted(MODELS.split(","))
        for log in runs:
            assert log.status == "success" and sorted(s.id for s in log.samples) == [f"q{i:03d}" for i in range(12)]
            assert log.results.early_stopping is None
            assert not any(k.startswith("stopwise") for k in (log.eval.metadata or {}))
    # the same scores, sample by sample
    def scores(runs: list[Any]) -> dict[tuple[str, str], Any]:
        return {(log.eval.model, s.id): s.scores["skill"].value for log in runs for s in log.samples}

    assert scores(plain) == scores(wrapped)


def test_configured_but_disabled_for_one_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``STOPWISE_ENABLED=0`` turns a configured project off: the wrapper returns the task itself."""
    from stopwise.inspect._extension import compare_task

    folder = project(tmp_path / "off", '[tool.stopwise]\nledger = "sqlite:///ledger.db"\ntested = "a"\nbaseline = "b"\n')
    monkeypatch.chdir(folder)
    monkeypatch.setenv("STOPWISE_ENABLED", "0")
    assert compare_task("tasks.py@arith", n=3).early_stopping is None
    monkeypatch.setenv("STOPWISE_ENABLED", "1")
    wrapped = compare_task("tasks.py@arith", n=3)
    assert type(wrapped.early_stopping).__name__ == "ConfiguredEarlyStopping"
    assert sorted(s.id for s in wrapped.dataset) == ["q000", "q001", "q002"]
    assert not (folder / "ledger.db").exists()  # the ledger is opened when the task starts, not when it is built


@pytest.mark.slow
def test_fresh_virtualenv_pip_install_registers_the_extension(tmp_path: Path) -> None:
    """``pip install -e '.[inspect]'`` in a new virtualenv (no system site-packages): configured, the comparison
    stops when decided; not configured, the same run is untouched."""
    root = Path(__file__).resolve().parents[2]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-e", f"{root}[inspect]"],
                               capture_output=True, text=True, timeout=1800)
    assert installed.returncode == 0, installed.stderr[-3000:]
    inspect = venv / "bin" / "inspect"
    table = ('[tool.stopwise]\nledger = "sqlite:///ledger.db"\ntested = "mockllm/good"\nbaseline = "mockllm/fair"\n'
             'policy = "policy.toml"\n')
    folder = project(tmp_path / "evals", table)
    logs = inspect_eval(folder, "stopwise/compare", "-T", "task=tasks.py@arith", "--model", MODELS, env=_clean_env(),
                        inspect=inspect)
    assert_stopped_when_decided(logs, "arith")
    assert_summary_is_decide_on_export(folder, "arith", logs)
    plain = project(tmp_path / "plain", "")
    for arguments in (["tasks.py@arith"], ["stopwise/compare", "-T", "task=tasks.py@arith"]):
        logs = inspect_eval(plain, *arguments, "-T", "n=12", "--model", MODELS, env=_clean_env(), inspect=inspect)
        assert len(logs) == 2
        for log in logs:
            assert sorted(s.id for s in log.samples) == [f"q{i:03d}" for i in range(12)]
            assert log.results.early_stopping is None and not (plain / "ledger.db").exists()


def test_hook_enabled_follows_the_environment_and_the_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook's answer is cached, but a changed variable or pyproject.toml is seen at the next event."""
    import time

    from stopwise.inspect._extension import hooks_enabled

    folder = project(tmp_path / "p", "")
    monkeypatch.chdir(folder)
    for name in [k for k in os.environ if k.startswith("STOPWISE_")]:
        monkeypatch.delenv(name)
    assert hooks_enabled() is False
    monkeypatch.setenv("STOPWISE_LEDGER", "sqlite:///l.db")
    assert hooks_enabled() is True
    monkeypatch.setenv("STOPWISE_ENABLED", "false")
    assert hooks_enabled() is False
    monkeypatch.delenv("STOPWISE_LEDGER")
    monkeypatch.delenv("STOPWISE_ENABLED")
    time.sleep(0.01)  # a new modification time
    (folder / "pyproject.toml").write_text('[tool.stopwise]\nledger = "sqlite:///l.db"\n')
    assert hooks_enabled() is True
    (folder / "pyproject.toml").write_text('[tool.stopwise]\nledger = "sqlite:///l.db"\npace = 0\n')
    assert hooks_enabled() is False  # a bad value: logged, and stopwise stays off


def test_halting_setting_marks_the_wrapped_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``halting = MODEL_DIR`` (with or without a ledger): the task is marked for the halting hook, its scorers wrapped."""
    pytest.importorskip("sklearn")
    from tests.conftest import load_example

    from stopwise.inspect._extension import compare_task
    from stopwise.inspect._halting import HALT_KEY, _dispatcher

    saved = load_example("inspect_halting.py").train().save(tmp_path / "model")
    folder = project(tmp_path / "h", f'[tool.stopwise]\nhalting = "{saved}"\n')
    monkeypatch.chdir(folder)
    for name in [k for k in os.environ if k.startswith("STOPWISE_")]:
        monkeypatch.delenv(name)
    alone = compare_task("tasks.py@arith", n=3)
    assert alone.early_stopping is None and alone.metadata[HALT_KEY] in _dispatcher().halters
    assert _dispatcher().enabled()  # the dispatcher hook acts while a halter is open
    monkeypatch.setenv("STOPWISE_LEDGER", "sqlite:///l.db")
    monkeypatch.setenv("STOPWISE_TESTED", "mockllm/good")
    monkeypatch.setenv("STOPWISE_BASELINE", "mockllm/fair")
    both = compare_task("tasks.py@arith", n=3)
    assert both.early_stopping is not None and both.metadata[HALT_KEY] in _dispatcher().halters
    assert both.metadata[HALT_KEY] != alone.metadata[HALT_KEY]
    for token in (alone.metadata[HALT_KEY], both.metadata[HALT_KEY]):
        _dispatcher().halters[token].close()
