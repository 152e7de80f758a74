"""``eval_retry`` of an interrupted tested run decides from the ledger (issue 20).

The baseline system runs alone first (all 200 samples in the ledger, no pair, no look). The tested
run is interrupted by an error at planned position 31 (before the boundary can be crossed); its
log holds the samples scored until then. ``eval_retry`` loads the task file again, so a new manager
(a new ``PairedComparison``, as a new process would have) runs the retry: it reuses the scored
samples, whose re-appended outcomes (under the new eval id) are duplicates, not conflicts, and it
reads the pairs and the decision from the ledger, so the retried task decides and skips the rest.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import stopwise
from stopwise.inspect import planned_order
from stopwise.ledger import open_ledger

REPO = Path(__file__).resolve().parents[2]

TASK_FILE = '''\
import importlib.util
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
def interrupt():  # fails the sample named in HERE/fail while that file exists
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        marker = HERE / "fail"
        if marker.exists() and str(state.sample_id) == marker.read_text().strip():
            raise RuntimeError("interrupted")
        return state

    return solve


def _task(role):
    policy = stopwise.load_policy(HERE / "policy.toml")
    dataset, universe = planned_order(example.questions(200), policy, group="group")
    managers = paired_early_stopping(
        f"sqlite:///{{HERE / 'ledger.db'}}", "ev", tested="tested", baseline="baseline", policy=policy, universe=universe
    )
    return Task(dataset=dataset, solver=[interrupt(), generate()], scorer=match(),
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

    (tmp_path / "policy.toml").write_text(example.POLICY_TOML)
    (tmp_path / "tasks.py").write_text(TASK_FILE.format(example=str(REPO / "docs" / "examples" / "inspect_live.py")))
    logs = str(tmp_path / "logs")
    policy = stopwise.load_policy(tmp_path / "policy.toml")
    _, universe = planned_order(example.questions(200), policy, group="group")

    (base,) = eval(f"{tmp_path / 'tasks.py'}@baseline", display="none", log_dir=logs, max_samples=4)
    assert base.status == "success" and len(base.samples) == 200
    assert base.results.early_stopping.metadata["looks"] == 0  # no tested outcome yet

    (tmp_path / "fail").write_text(str(universe.tasks[30]))
    (first,) = eval(f"{tmp_path / 'tasks.py'}@tested", display="none", log_dir=logs, max_samples=4)
    assert first.status == "error" and "interrupted" in first.error.message
    with open_ledger(tmp_path / "ledger.db") as ledger:
        scored_before = ledger.outcomes("ev").query("system == 'tested'")["task"].tolist()
        looks_before = len(ledger.decisions("ev"))
    assert 0 < len(scored_before) < 46, "the interruption must come before the boundary is crossed"
    assert looks_before == len(scored_before)  # each tested outcome completed a pair with the baseline's

    (tmp_path / "fail").unlink()
    (retry,) = eval_retry(first, display="none", log_dir=logs, max_samples=4)
    assert retry.status == "success" and retry.eval.eval_id != first.eval.eval_id
    summary = retry.results.early_stopping
    meta = summary.metadata
    reused = {str(s.id) for s in first.samples if s.scores}
    assert reused <= {str(s.id) for s in retry.samples}
    assert meta["appended"]["conflicts"] == 0 and meta["appended"]["duplicates"] >= len(reused) > 0
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
    assert meta["decision"] == first_final.record.model_dump(mode="json")
    again = stopwise.decide(rows, "tested", "baseline", reg.policy, universe=reg.universe)
    assert again.action == "promote"
