"""``eval_retry`` of an interrupted tested run, and the ``inspect eval`` command line, decide from the ledger (issue 20).

The baseline system runs alone first (all 200 samples in the ledger, no pair, no look). The tested
run is interrupted by an error at planned position 31 (before the decision: the boundary crosses at
position 28 and waits for the top-up tasks at positions 29-31, 33 and 34, the interrupted one among them); its
log holds the samples scored until then. ``eval_retry`` loads the task file again, so a new manager
(a new ``PairedComparison``, as a new process would have) runs the retry: it reuses the scored
samples, whose re-appended outcomes (under the new eval id) are duplicates, not conflicts, and it
reads the pairs and the decision from the ledger, so the retried task decides and skips the rest.

The interrupted sample is a top-up task the decision waits for. Inspect's retry reads each sample's
prior record before it queues the sample, and the record of an errored sample takes longer to read: on
a loaded machine the re-run sample was queued after dozens of others. While the crossed boundary waits
for its top-up tasks the manager skips every other sample, so those dozens end at once instead of
running (before that skip the retry ran 104-200 samples on a loaded machine).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from types import ModuleType

import pytest
from tests.conftest import unavailable

import stopwise
from stopwise.inspect import planned_order
from stopwise.ledger import open_ledger
from stopwise.records import DecisionRecord

pytestmark = pytest.mark.integration  # process-bound: interrupted and retried Inspect evaluations, `inspect eval` subprocesses

REPO = Path(__file__).resolve().parents[2]

INTERRUPTED = 30
"""The 0-based planned position of the interrupted sample (``q039``, a top-up task; see the module docstring)."""

TASK_FILE = '''\
import asyncio
import importlib.util
import itertools
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.solver import Generate, TaskState, generate, solver
from inspect_ai.scorer import match

import stopwise
from stopwise.inspect import paired_early_stopping, planned_order

HERE = Path(__file__).parent
spec = importlib.util.spec_from_file_location("inspect_live_example", {example!r})
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)


@solver
def interrupt(role):  # fails the sample of the system named in HERE/fail ("ROLE SAMPLE_ID") once
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        # a sample takes 40 ms, as a (very fast) real one takes time: the looks run off the event loop, and on a
        # loaded machine instant mock samples could all finish before the look that decides them does
        await asyncio.sleep(0.04)
        marker = HERE / "fail"
        if marker.exists() and f"{{role}} {{state.sample_id}}" == marker.read_text().strip():
            marker.unlink()
            raise RuntimeError("interrupted")
        return state

    return solve


def _task(role):
    policy = stopwise.load_policy(HERE / "policy.toml")
    dataset, universe = planned_order(example.questions(200), policy, group="group")
    # HERE/alone: the systems run one after the other (the first alone), so no worker waits for its partner to start
    managers = paired_early_stopping(
        f"sqlite:///{{HERE / 'ledger.db'}}", "ev", tested="tested", baseline="baseline", policy=policy, universe=universe,
        partner_wait=None if (HERE / "alone").exists() else 30.0,
    )
    return Task(dataset=dataset, solver=[interrupt(role), generate()], scorer=match(),
                model=example.mock_system(role, 0.9 if role == "tested" else 0.55),
                early_stopping=managers[0] if role == "tested" else managers[1], name=role)


@task
def tested():
    return _task("tested")


@task
def baseline():
    return _task("baseline")
'''


def test_eval_retry_of_an_interrupted_run_decides_without_conflicts(example: ModuleType, tmp_path: Path) -> None:
    from inspect_ai import eval, eval_retry

    # the scenario (a crossing at 28 that waits for top-up tasks, the interrupted one among them) is the paper's
    # proportional coverage rule's; the default with betting-wor is the tolerant rule since issue 33
    (tmp_path / "policy.toml").write_text(example.POLICY_TOML + '\n[coverage]\nrule = "proportional"\n')
    (tmp_path / "tasks.py").write_text(TASK_FILE.format(example=str(REPO / "docs" / "examples" / "inspect_live.py")))
    (tmp_path / "alone").touch()
    logs = str(tmp_path / "logs")
    policy = stopwise.load_policy(tmp_path / "policy.toml")
    _, universe = planned_order(example.questions(200), policy, group="group")

    (base,) = eval(f"{tmp_path / 'tasks.py'}@baseline", display="none", log_dir=logs, max_samples=4)
    assert base.status == "success" and len(base.samples) == 200
    assert base.results.early_stopping.metadata["looks"] == 0  # no tested outcome yet

    (tmp_path / "fail").write_text(f"tested {universe.tasks[INTERRUPTED]}")
    (first,) = eval(f"{tmp_path / 'tasks.py'}@tested", display="none", log_dir=logs, max_samples=4)
    assert first.status == "error" and "interrupted" in first.error.message
    with open_ledger(tmp_path / "ledger.db") as ledger:
        scored_before = ledger.outcomes("ev").query("system == 'tested'")["task"].tolist()
        looks_before = len(ledger.decisions("ev"))
    assert 0 < len(scored_before) < 46, "the interruption must come before the boundary is crossed"
    assert looks_before == len(scored_before)  # each tested outcome completed a pair with the baseline's

    assert not (tmp_path / "fail").exists()
    (retry,) = eval_retry(first, display="none", log_dir=logs, max_samples=4)
    assert retry.status == "success" and retry.eval.eval_id != first.eval.eval_id
    summary = retry.results.early_stopping
    meta = summary.metadata
    reused = {str(s.id) for s in first.samples if s.scores}
    ran = {str(s.id) for s in retry.samples}
    assert reused <= ran
    # every sample of the retry that the first run had appended (reused from its log, or in flight when it
    # was interrupted and run again) is a duplicate; none is a conflict
    assert meta["appended"]["conflicts"] == 0
    assert meta["appended"]["duplicates"] == len(set(scored_before) & ran) > 0
    assert meta["appended"]["accepted"] == len(ran - set(scored_before))
    assert meta["action"] == "promote" and summary.early_stops  # decided, the rest skipped
    assert len(retry.samples) + len(summary.early_stops) == 200 and len(retry.samples) < 100
    with open_ledger(tmp_path / "ledger.db") as ledger:
        assert len(ledger.conflicts("ev")) == 0
        history = ledger.decisions("ev")
        first_final = next(link for link in history if link.record.action != "continue")
        rows = ledger.outcomes("ev", upto=first_final.outcome_seq)
        reg = ledger.registration("ev")
        assert ledger.verify("ev").ok
        tested_rows = ledger.outcomes("ev").query("system == 'tested'")
    assert sorted(tested_rows["task"]) == sorted(str(s.id) for s in retry.samples)  # each scored sample once
    waiting = [link.record.top_up for link in history if link.record.top_up]
    assert waiting and universe.tasks[INTERRUPTED] in waiting[0]  # a task the action waits for
    assert all(set(later) <= set(earlier) for earlier, later in itertools.pairwise(waiting))  # it only shrinks
    assert all(s.metadata["action"] in ("promote", "top-up") for s in summary.early_stops)
    assert meta["decision"] == first_final.record.model_dump(mode="json")
    again = stopwise.decide(rows, "tested", "baseline", reg.policy, universe=reg.universe)
    assert again.action == "promote"


# one task file in the default lane; the manager-per-task file (the same command) in the slow lane
@pytest.mark.parametrize("task_file", [pytest.param("manager-per-task", marks=pytest.mark.slow), "one-liner"])
def test_inspect_eval_command_line_with_both_tasks_of_one_file_decides(
    example: ModuleType, tmp_path: Path, task_file: str
) -> None:
    """``inspect eval tasks.py@tested tasks.py@baseline --max-tasks 2``: Inspect loads the task file once per
    task. With ``paired_early_stopping`` in each task, each has its own manager (its own PairedComparison) and
    they pair through the ledger; with the one-liner ``paired_manager(ledger, evaluation, role, ...)`` of
    ``docs/examples/inspect_tasks.py`` and the ledger and evaluation given as ``-T`` arguments, both get the
    process's one comparison for them."""
    import os
    import subprocess
    import sys

    from inspect_ai.log import read_eval_log

    inspect_cli = Path(sys.executable).parent / "inspect"
    if not inspect_cli.exists():
        unavailable(f"no `inspect` command beside {sys.executable} (pip install -e '.[test]')")
    (tmp_path / "policy.toml").write_text(example.POLICY_TOML)
    (tmp_path / "tasks.py").write_text(TASK_FILE.format(example=str(REPO / "docs" / "examples" / "inspect_live.py")))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    if task_file == "manager-per-task":
        evaluation, file, arguments = "ev", "tasks.py", []
    else:  # the task file docs/inspect.md shows, run as the page says
        evaluation, file = "cli-ev", str(REPO / "docs" / "examples" / "inspect_tasks.py")
        # Inspect runs a task in its file's folder: a relative ledger path would be docs/examples/ledger.db
        arguments = ["-T", f"ledger=sqlite:///{tmp_path / 'ledger.db'}", "-T", f"evaluation={evaluation}"]
    done = subprocess.run(
        [str(inspect_cli), "eval", f"{file}@tested", f"{file}@baseline", "--max-tasks", "2", "--max-samples", "4",
         *arguments, "--log-dir", str(tmp_path / "logs"), "--display", "none"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    logs = {log.eval.task: log for log in map(read_eval_log, map(str, sorted((tmp_path / "logs").glob("*.eval"))))}
    with open_ledger(tmp_path / "ledger.db") as ledger:
        history = ledger.decisions(evaluation)
        states = [(n.system, n.state) for n in ledger.notices(evaluation)]
        first_final = next(link for link in history if link.record.action != "continue")
        assert ledger.verify(evaluation).ok
    assert first_final.record.action == "promote"
    assert sorted(states) == sorted([(r, s) for r in ("tested", "baseline") for s in ("started", "finished")])
    looks = [logs[role].results.early_stopping.metadata["looks"] for role in ("tested", "baseline")]
    if task_file == "one-liner":  # one comparison in the process: each log counts every look
        assert looks == [len(history)] * 2
    else:  # a comparison per task: each counts its own
        assert sum(looks) == len(history)
    for role in ("tested", "baseline"):
        log = logs[role]
        summary = log.results.early_stopping
        assert log.status == "success" and summary.early_stops, role
        assert len(log.samples) + len(summary.early_stops) == 200 and len(log.samples) < 100
        assert summary.metadata["action"] == "promote" and summary.metadata["notes"] == []
        # the same decision (digest: every field but the time it was taken and the ledger position); with a
        # comparison per task both may take the deciding look, and the ledger keeps the one appended first
        assert DecisionRecord.model_validate(summary.metadata["decision"]).digest() == first_final.record.digest()


def test_eval_set_retry_of_a_failed_task_reuses_its_manager_and_decides(example: ModuleType, tmp_path: Path) -> None:
    """``eval_set`` retries a failed task with the same Task object (same run and task id, a new eval id): the
    manager starts again, and the retry decides through the ledger (it was refused as "one Task for two models")."""
    import importlib.util

    from inspect_ai import eval_set

    # the interruption (position 31) must come before the decision: the proportional rule's crossing at 28 waits for
    # top-up tasks, the interrupted one among them (the tolerant default decides at 28)
    (tmp_path / "policy.toml").write_text(example.POLICY_TOML + '\n[coverage]\nrule = "proportional"\n')
    (tmp_path / "tasks.py").write_text(TASK_FILE.format(example=str(REPO / "docs" / "examples" / "inspect_live.py")))
    spec = importlib.util.spec_from_file_location("retry_tasks", tmp_path / "tasks.py")
    assert spec is not None and spec.loader is not None
    tasks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tasks)
    _, universe = planned_order(example.questions(200), stopwise.load_policy(tmp_path / "policy.toml"), group="group")
    (tmp_path / "fail").write_text(f"tested {universe.tasks[INTERRUPTED]}")
    tested = tasks.tested()
    ok, logs = eval_set([tested, tasks.baseline()], log_dir=str(tmp_path / "logs"), max_tasks=2, max_samples=4,
                        retry_attempts=2, retry_wait=0.1, display="none")
    assert ok and not (tmp_path / "fail").exists()  # the first attempt of `tested` failed, its retry succeeded
    from inspect_ai.log import read_eval_log

    final_logs = {log.eval.task: read_eval_log(log.location) for log in logs}
    meta = final_logs["tested"].results.early_stopping.metadata
    assert meta["error"] is None and meta["action"] == "promote"
    assert meta["appended"]["conflicts"] == 0 and meta["appended"]["duplicates"] > 0  # samples reused by the retry
    with open_ledger(tmp_path / "ledger.db") as ledger:
        assert len(ledger.conflicts("ev")) == 0 and ledger.verify("ev").ok
        first_final = next(link for link in ledger.decisions("ev") if link.record.action != "continue")
        rows = ledger.outcomes("ev")
    assert first_final.record.action == "promote"
    for role in ("tested", "baseline"):
        assert (rows["system"] == role).sum() < 200, f"{role} ran every sample: the retry did not stop it"

