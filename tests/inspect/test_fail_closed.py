"""A task that Inspect fails stops its partner, and a task that ran nothing says why (issue 35, item 5).

With Inspect's default ``fail_on_error`` the first errored sample fails its task; Inspect then calls no
``complete_task`` and no ``on_task_end`` hook, but its ``on_sample_end`` hook sees the error. The partner
(in this process, or in another through the ledger's notices) stops scheduling within a few samples and its
log ends in error naming the failure, so ``eval_set`` retries both tasks. A re-run of an evaluation that is
already decided runs no sample and its log says so (Inspect would count every skipped sample as an error).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import stopwise
from stopwise.inspect import paired_early_stopping, planned_order
from stopwise.ledger import open_ledger

N = 200
FAILS_AT = 6
"""1-based planned position of the tested system's failing sample."""


def _tasks(example: ModuleType, out: Path, fail: dict[str, str], **spec: Any) -> tuple[list[Any], list[str]]:
    import anyio
    from inspect_ai import Task
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, TaskState, generate, solver

    (out / "policy.toml").write_text(example.POLICY_TOML)
    policy = stopwise.load_policy(out / "policy.toml")
    dataset, universe = planned_order(example.questions(N), policy, group="group")

    @solver
    def flaky(role: str) -> Any:  # fails the sample named in `fail` once (a crash, not a score)
        async def solve(state: TaskState, generate_: Generate) -> TaskState:
            await anyio.sleep(0.02)
            if fail.get(role) == str(state.sample_id):
                del fail[role]
                raise RuntimeError(f"tool crashed on {state.sample_id}")
            return state

        return solve

    managers = paired_early_stopping(f"sqlite:///{out / 'ledger.db'}", "ev", tested="tested", baseline="baseline",
                                     policy=policy, universe=universe, **spec)
    return [
        Task(dataset=dataset, solver=[flaky(role), generate()], scorer=match(), name=role,
             model=example.mock_system(role, 0.9 if role == "tested" else 0.55), early_stopping=manager)
        for role, manager in (("tested", managers[0]), ("baseline", managers[1]))
    ], [str(t) for t in universe.tasks]


def test_a_failed_task_stops_its_partner_and_both_logs_say_why(example: ModuleType, tmp_path: Path) -> None:
    from inspect_ai import eval

    _, order = _tasks(example, tmp_path, {})
    fail = {"tested": order[FAILS_AT - 1]}
    tasks, _ = _tasks(example, tmp_path, fail, partner_wait=1.0)  # no retry comes: it stops after 1 s
    logs = {log.eval.task: log for log in eval(tasks, max_tasks=2, max_samples=4, log_dir=str(tmp_path / "logs"),
                                               display="none")}
    assert logs["tested"].status == "error" and "tool crashed" in logs["tested"].error.message
    base = logs["baseline"]
    assert base.status == "error", "the partner of a failed task ran on"
    assert "the paired task failed (tested system 'tested': its task failed: sample" in base.error.message
    assert "tool crashed on " + order[FAILS_AT - 1] in base.error.message
    # within a few samples: the tested task stores at most the FAILS_AT - 1 before its failing sample and the 3
    # others in flight beside it (max_samples 4; under load they can finish before the failure is seen), the
    # baseline runs at most pace (2) stored outcomes ahead of it, plus its own 4 in flight (13 seen once under xdist)
    assert len(base.samples) <= (FAILS_AT - 1) + (4 - 1) + 2 + 4, len(base.samples)
    with open_ledger(tmp_path / "ledger.db") as ledger:
        states = [(n.system, n.state) for n in ledger.notices("ev")]
    assert ("tested", "failed") in states


def _retry(example: ModuleType, out: Path, fails_at: int) -> tuple[int, int, list[Any]]:
    """Pairs at the decision of the uninterrupted run and of an ``eval_set`` retry failing at ``fails_at``; the retry's logs."""
    from inspect_ai import eval, eval_set

    whole = out / "whole"
    whole.mkdir()
    tasks, order = _tasks(example, whole, {})
    eval(tasks, max_tasks=2, max_samples=4, log_dir=str(whole / "logs"), display="none")
    with open_ledger(whole / "ledger.db") as ledger:
        uninterrupted = ledger.first_decision("ev").record.n_observed

    retried = out / "retried"
    retried.mkdir()
    tasks, _ = _tasks(example, retried, {"tested": order[fails_at - 1]})
    ok, logs = eval_set(tasks, log_dir=str(retried / "logs"), max_tasks=2, max_samples=4, retry_attempts=2,
                        retry_wait=0.1, display="none")
    assert ok
    with open_ledger(retried / "ledger.db") as ledger:
        first = ledger.first_decision("ev")
        assert ledger.verify("ev").ok and len(ledger.conflicts("ev")) == 0
    assert first is not None and first.record.action == "promote" and uninterrupted > 0
    return uninterrupted, first.record.n_observed, logs


def test_an_eval_set_retry_of_a_failed_task_decides_within_twice_the_pairs(example: ModuleType, tmp_path: Path) -> None:
    # Issue 35: within 2x the uninterrupted run's pairs (28 here). Inspect starts the retried samples (those with a
    # prior record: the errored one and those cancelled with it) after the fresh ones; no sample runs more than
    # WINDOW places past one that has not started (stopwise.inspect._prefix), so the bound holds by construction.
    uninterrupted, retried, _ = _retry(example, tmp_path, FAILS_AT)
    assert retried <= 2 * uninterrupted, (retried, uninterrupted)


@pytest.mark.slow
@pytest.mark.parametrize("fails_at", [FAILS_AT, 2])
def test_a_retried_sample_read_late_still_decides_within_twice_the_pairs(
    example: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails_at: int
) -> None:
    """The failure once seen under load, made certain: the retry reads the errored samples' prior records 3 s late.

    Without the gate the retry then decides at ~200 pairs (every later sample runs first). At position 6 the
    decision (28 pairs) lies within the window and comes in the retry; at position 2 it does not: the retry
    skips the samples past the window, its log ends in error, and the next attempt runs them in order.
    """
    import anyio
    from inspect_ai._eval.task.log import TaskLogger  # Inspect's reuse sweep (0.3.285); the test delays it

    read = TaskLogger.read_prior_sample

    async def late_read(self: Any, id: str | int, epoch: int) -> Any:
        sample = await read(self, id, epoch)
        if sample is not None and sample.error is not None and self.eval.task == "tested":
            await anyio.sleep(3.0)
        return sample

    monkeypatch.setattr(TaskLogger, "read_prior_sample", late_read)
    uninterrupted, retried, logs = _retry(example, tmp_path, fails_at)
    assert retried <= 2 * uninterrupted, (retried, uninterrupted)
    tested = next(log for log in logs if log.eval.task == "tested")
    notes = " ".join(tested.results.early_stopping.metadata["notes"]) if fails_at == FAILS_AT else ""
    assert fails_at != FAILS_AT or "skipped to keep the planned order" in notes


def test_a_rerun_of_a_decided_evaluation_says_it_is_decided(example: ModuleType, tmp_path: Path) -> None:
    from inspect_ai import eval

    tasks, _ = _tasks(example, tmp_path, {})
    eval(tasks, max_tasks=2, max_samples=4, log_dir=str(tmp_path / "logs"), display="none")
    tasks, _ = _tasks(example, tmp_path, {})
    again = eval(tasks, max_tasks=2, max_samples=4, log_dir=str(tmp_path / "again"), display="none")
    for log in again:
        assert log.samples == [] and log.status == "error"
        assert "evaluation 'ev' is already decided" in log.error.message and "promote" in log.error.message
