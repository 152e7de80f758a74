"""Racing four mock systems live with the k-system manager: one best, two tied, one worse (issue 32 item 2)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest
from tests.support import family_race
from typer.testing import CliRunner

import stopwise
from stopwise.cli.main import app
from stopwise.compare import decide_family
from stopwise.errors import InputError
from stopwise.inspect import FamilySpec, family_early_stopping, family_model_early_stopping
from stopwise.ledger import open_ledger
from stopwise.records import FamilyRecord


def _summaries(logs: list[Any]) -> dict[str, Any]:
    return {log.results.early_stopping.metadata["system"]: log for log in logs}


def _check_race(url: str, logs: dict[str, Any], tmp_path: Path, universe: stopwise.TaskUniverse) -> None:
    """What the race must show, whoever ran it: the claims, who stopped early, and three sources that agree."""
    with open_ledger(url) as ledger:
        record = ledger.decide_family("race")
        registered = ledger.registration("race").universe
        rows = ledger.outcomes("race")
        ledger.export("race", tmp_path / "rows.csv")
        assert ledger.verify("race").ok
    # the best system is named at FWER 5 %, the tied pair is one tier, the worse system is last
    assert record.control == "fwer" and record.level == 0.05 and record.best == "best"
    assert [t.systems for t in record.tiers] == [["best"], ["tied-a", "tied-b"], ["worse"]]
    assert record.pair("tied-a", "tied-b").action == "continue"
    assert record.needed == ["tied-a", "tied-b"]  # only the tie is still open
    ran = rows.groupby("system")["task"].nunique().to_dict()
    # the worse and the best system stopped early; the tied pair ran its whole budget
    assert ran["tied-a"] == ran["tied-b"] == family_race.N_QUESTIONS
    assert ran["worse"] < family_race.N_QUESTIONS / 2 and ran["best"] < family_race.N_QUESTIONS / 2
    for system, log in logs.items():
        summary = log.results.early_stopping
        assert log.status == "success"
        assert len(log.samples) + len(summary.early_stops) == family_race.N_QUESTIONS
        assert {str(s.id) for s in log.samples} == set(rows.loc[rows["system"] == system, "task"])
        if system in ("best", "worse"):
            assert summary.early_stops and all(s.metadata["action"] == "decided" for s in summary.early_stops)
    # the logs, the ledger and the export agree: each log carries a look the ledger gives again from its events, and
    # the last look taken (at the ledger's last event) is the ledger's final look
    with open_ledger(url) as ledger:
        for log in logs.values():
            metadata = log.results.early_stopping.metadata
            assert ledger.decide_family("race", upto=metadata["outcome_seq"]).digest() == metadata["record_sha256"]
        last = max(logs.values(), key=lambda log: log.results.early_stopping.metadata["outcome_seq"])
        assert last.results.early_stopping.metadata["outcome_seq"] == ledger.high_water("race")
    assert last.results.early_stopping.metadata["record_sha256"] == record.digest()
    exported = stopwise.read_outcomes(tmp_path / "rows.csv")
    again = decide_family(exported, None, record_policy(tmp_path), universe=registered)
    assert again.digest() == record.digest()
    # with the stamped order the run was given, only the ledger's missing-stamp warning differs (the ledger stores
    # the planned tasks, not the order's stamp)
    stamped = decide_family(exported, None, record_policy(tmp_path), universe=universe)
    assert stamped.model_copy(update={"warnings": record.warnings, "decided_at": None}) == record.model_copy(update={"decided_at": None})
    # and from the command line: stopwise leaderboard on the export, with the policy and the stamped order
    stamp = universe.stamp
    pd.DataFrame({"task": universe.tasks, "group": universe.groups, "order_kind": stamp.kind, "order_seed": stamp.seed,
                  "order_sha256": stamp.sha256}).to_csv(tmp_path / "order.csv", index=False)
    board = CliRunner().invoke(app, ["leaderboard", str(tmp_path / "rows.csv"), "--tasks", str(tmp_path / "order.csv"),
                                     "--policy", str(tmp_path / "policy.toml"), "--json"])
    assert board.exit_code == 2, board.output
    printed = FamilyRecord.model_validate_json(board.output)
    assert printed.digest() == stamped.digest()
    result = CliRunner().invoke(app, ["ledger", "decide", url, "race", "--family", "--json"])
    assert result.exit_code == 2, result.output  # the tie is not settled: the family needs more tasks
    assert json.loads(result.output)["tiers"] == [t.model_dump() for t in record.tiers]


def record_policy(folder: Path) -> stopwise.Policy:
    return stopwise.load_policy(folder / "policy.toml")


def test_one_task_per_system_races_to_the_best_and_stops_the_worse(example: ModuleType, tmp_path: Path) -> None:
    from inspect_ai import eval

    policy, dataset, universe = family_race.planned(example, tmp_path)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    managers = family_early_stopping(url, "race", systems=list(family_race.ACCURACY), policy=policy, universe=universe)
    tasks = [family_race.system_task(dataset, s, m, managers[s]) for s, m in family_race.models(example).items()]
    logs = eval(tasks, max_tasks=4, max_samples=4, display="none", log_dir=str(tmp_path / "logs"))
    _check_race(url, _summaries(logs), tmp_path, universe)


@pytest.mark.slow
def test_one_task_run_for_four_models_races_them(example: ModuleType, tmp_path: Path) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    policy, dataset, universe = family_race.planned(example, tmp_path)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    models = family_race.models(example)
    manager = family_model_early_stopping(url, "race", models=models, policy=policy, universe=universe)
    task = Task(dataset=dataset, solver=generate(), scorer=match(), early_stopping=manager, name="arith")
    logs = eval(task, model=list(models.values()), max_tasks=4, max_samples=4, display="none", log_dir=str(tmp_path / "logs"))
    _check_race(url, _summaries(logs), tmp_path, universe)


@pytest.mark.parametrize("max_tasks", [1, 3])
def test_one_systems_manager_on_one_task_for_every_model_is_refused_before_any_sample(
    example: ModuleType, tmp_path: Path, max_tasks: int
) -> None:
    """``eval(task, model=[...])`` with one system's manager of ``family_early_stopping`` would store every model's
    outcomes as that system: refused at ``start_task`` in every model's log, naming the manager to use (issue 35)."""
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    managers = family_early_stopping(url, "race", systems=["a", "b", "c"])
    task = Task(dataset=example.questions(6), solver=generate(), scorer=match(), early_stopping=managers["a"], name="arith")
    models = [example.mock_system(name, 0.5) for name in "abc"]
    logs = eval(task, model=models, max_tasks=max_tasks, display="none", log_dir=str(tmp_path / "logs"))
    assert len(logs) == 3
    for log in logs:
        assert log.status == "error" and not log.samples, (log.status, len(log.samples or []))
        message = " ".join(log.error.message.split())
        assert "this run holds 3 tasks named 'arith' on the manager of one system" in message, message
        assert "family_model_early_stopping" in message
    with open_ledger(url) as ledger:
        assert "race" not in ledger.evaluations()  # nothing registered, nothing stored


def test_a_model_outside_the_family_is_refused(example: ModuleType) -> None:
    with pytest.raises(InputError, match="one Model object to two systems"):
        model = example.mock_system("x", 0.5)
        family_model_early_stopping("sqlite:///:memory:", "race", models={"a": model, "b": model})
    with pytest.raises(InputError, match="not the keys"):
        family_model_early_stopping("sqlite:///:memory:", FamilySpec("race", systems=["a", "b"]), models={"a": "x/y", "c": "x/z"})


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_one_worker_process_per_system_on_one_ledger(backend: str, example: ModuleType, tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    _, _, universe = family_race.planned(example, barrier)
    (tmp_path / "policy.toml").write_text((barrier / "policy.toml").read_text())
    if backend == "sqlite":
        _run_workers(f"sqlite:///{tmp_path / 'ledger.db'}", repo, barrier, example, tmp_path, universe)
        return
    from tests.conftest import private_postgres
    from tests.support.pgtemp import create_database

    with private_postgres() as server:
        _run_workers(create_database(server, "race"), repo, barrier, example, tmp_path, universe)


def _run_workers(url: str, repo: Path, barrier: Path, example: ModuleType, tmp_path: Path, universe: stopwise.TaskUniverse) -> None:
    import os
    import subprocess
    import sys

    from inspect_ai.log import read_eval_log

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo / "src"), os.environ.get("PYTHONPATH", "")])}
    env["INSPECT_LOG_DIR"] = str(tmp_path / "inspect-logs")
    worker = repo / "tests" / "inspect" / "family_worker.py"
    procs = {
        system: subprocess.Popen(
            [sys.executable, str(worker), url, system, str(tmp_path / "logs" / system), str(barrier)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for system in family_race.ACCURACY
    }
    runs = {}
    for system, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        runs[system] = json.loads(out.strip().splitlines()[-1])
    assert {s: r["status"] for s, r in runs.items()} == dict.fromkeys(family_race.ACCURACY, "success")
    logs = {system: read_eval_log(run["location"]) for system, run in runs.items()}
    _check_race(url, logs, tmp_path, universe)


def test_an_errored_sample_is_a_pending_event_of_its_system(example: ModuleType, tmp_path: Path) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, TaskState, generate, solver

    policy, dataset, universe = family_race.planned(example, tmp_path)
    broken = str(universe.tasks[2])

    @solver
    def fail_on(sample_id: str) -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if str(state.sample_id) == sample_id:
                raise RuntimeError("the sandbox died")
            return state

        return solve

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    managers = family_early_stopping(url, "race", systems=["best", "worse"], policy=policy, universe=universe)
    models = family_race.models(example)
    tasks = [
        Task(dataset=dataset, solver=[fail_on(broken if system == "worse" else ""), generate()], scorer=match(),
             model=models[system], early_stopping=managers[system], name=system, fail_on_error=False)
        for system in ("best", "worse")
    ]
    logs = _summaries(eval(tasks, max_tasks=2, max_samples=4, display="none", log_dir=str(tmp_path / "logs")))
    metadata = logs["worse"].results.early_stopping.metadata
    assert [e["task"] for e in metadata["errored"]] == [broken] and "the sandbox died" in metadata["errored"][0]["error"]
    assert broken in metadata["notes"][0] and not logs["best"].results.early_stopping.metadata["errored"]
    with open_ledger(url) as ledger:
        rows = ledger.outcomes("race")
    row = rows[(rows["system"] == "worse") & (rows["task"] == broken)].iloc[0]
    assert row["status"] == "pending" and row["flags"] == "error"
