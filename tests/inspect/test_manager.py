"""The paired Inspect manager's mechanics, in real Inspect evaluations of two mock systems.

The decision itself comes from a real SQLite ledger that decides on cue (``CueLedger`` in
conftest.py), so these tests check what the manager does around a decision: what is appended,
what is skipped, what the log records. tests/inspect/test_end_to_end.py runs the real decisions.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from tests.support.inspect_solvers import act_at_sample

from stopwise import Policy
from stopwise.errors import InputError, PolicyError
from stopwise.inspect import PairedComparison, paired_early_stopping

N = 40


def _tasks(example: ModuleType, managers: Any, *, n: int = N, datasets: Any = None, **task_args: Any) -> list[Any]:
    from inspect_ai import Task
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    first, second = datasets if datasets is not None else (example.questions(n), example.questions(n))
    tested, baseline = managers
    return [
        Task(dataset=first, solver=generate(), scorer=task_args.pop("scorer", match()),
             model=example.mock_system("tested", 0.9), early_stopping=tested, name="tested", **task_args),
        Task(dataset=second, solver=generate(), scorer=match(),
             model=example.mock_system("baseline", 0.55), early_stopping=baseline, name="baseline", **task_args),
    ]


def _eval(tasks: list[Any], tmp_path: Path, **kwargs: Any) -> dict[str, Any]:
    from inspect_ai import eval

    kwargs.setdefault("max_tasks", 2)
    kwargs.setdefault("max_samples", 2)
    logs = eval(tasks, display="none", log_dir=str(tmp_path / "logs"), **kwargs)
    return {log.eval.task: log for log in logs}


def _outcome(value: str) -> float:
    return {"C": 1.0, "I": 0.0}[value]


def test_both_systems_stop_once_decided_and_the_log_records_it(cue_ledger: Any, example: ModuleType, tmp_path: Path) -> None:
    ledger = cue_ledger(decide_after=6)
    managers = paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline")
    logs = _eval(_tasks(example, managers), tmp_path)
    planned = managers[0].comparison.planned
    assert planned == [s.id for s in example.questions(N)]  # the order Inspect runs (seeded shuffle)
    assert ledger.evaluations() == ["ev"] and ledger.registration("ev").universe.tasks.tolist() == planned

    ran_total = 0
    for name, system in (("tested", "tested"), ("baseline", "baseline")):
        log = logs[name]
        assert log.status == "success"
        summary = log.results.early_stopping
        assert summary.manager == f"stopwise (ev: {system} {system})"
        ran = [s.id for s in log.samples]
        stopped = [s.id for s in summary.early_stops]
        ran_total += len(ran)
        # every planned sample either ran or was skipped, once
        assert sorted(ran + stopped) == sorted(planned)
        # the decision came at 6 pairs; at most max_samples per system were still in flight
        assert 6 <= len(ran) <= 6 + 2 + 2 and len(stopped) >= N - 10
        assert max(planned.index(i) for i in ran) < 12  # what ran is the head of the planned order
        assert all(s.reason.startswith("stopwise promote: cue: decided at 6 pairs") for s in summary.early_stops)
        assert all(s.metadata["action"] == "promote" for s in summary.early_stops)
        meta = summary.metadata
        assert meta["action"] == "promote" and meta["decision"]["action"] == "promote"
        assert (meta["system"], meta["role"], meta["planned_tasks"], meta["budget_tasks"]) == (system, system, N, N)
        assert meta["completed"] == len(ran) and meta["appended"]["accepted"] == len(ran)
        assert meta["stopped"] == len(stopped) and meta["notes"] == []
        # the ledger holds exactly the scored samples of the log
        in_log = {(s.id, s.epoch - 1, _outcome(s.scores["match"].value)) for s in log.samples}
        in_ledger = {(r["task"], r["attempt"], r["outcome"]) for r in ledger.rows(system)}
        assert in_ledger == in_log
    assert len(ledger.rows()) == ran_total
    assert ledger.looks == managers[0].comparison.looks  # one look per completed pair until decided
    assert managers[0].comparison.decision.action == "promote"


def test_an_evaluation_already_decided_stops_at_once(cue_ledger: Any, example: ModuleType, tmp_path: Path) -> None:
    ledger = cue_ledger(decide_after=3)
    _eval(_tasks(example, paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline"), n=12), tmp_path)
    rows = len(ledger.rows())
    again = paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline")  # e.g. a re-run of the script
    logs = _eval(_tasks(example, again, n=12), tmp_path)
    for log in logs.values():
        # nothing ran; Inspect writes results (and the early-stopping summary) only when a sample was scored, so
        # the log's error says why (Inspect's console would count every skipped sample as an error)
        assert log.status == "error" and not log.samples and log.results is None
        assert "evaluation 'ev' is already decided" in log.error.message and "promote" in log.error.message
    assert len(ledger.rows()) == rows and again[0].comparison.looks == 0
    assert again[0].comparison.decision.action == "promote"


@pytest.mark.parametrize("max_tasks", [1, 2])
def test_one_task_for_both_models_is_refused_before_any_sample(
    cue_ledger: Any, example: ModuleType, tmp_path: Path, max_tasks: int
) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    ledger = cue_ledger()
    tested, _ = paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline")
    task = Task(dataset=example.questions(6), solver=generate(), scorer=match(), early_stopping=tested)
    logs = eval(task, model=[example.mock_system("a", 1.0), example.mock_system("b", 0.0)], display="none",
                log_dir=str(tmp_path / "logs"), max_tasks=max_tasks)
    # Refused at start_task, before any sample of either model ran (one after the other, or at once), and each log
    # names the misuse and the manager to use instead
    assert len(logs) == 2
    for log in logs:
        assert log.status == "error" and not log.samples, (log.status, len(log.samples or []))
        message = " ".join(log.error.message.split())
        assert "this run holds 2 tasks named" in message and "runs one Task once per model" in message
        assert "paired_model_early_stopping" in message and "family_model_early_stopping" in message
    assert ledger.rows() == [] and ledger.looks == 0


def test_task_count_budget_runs_the_planned_head_only(cue_ledger: Any, example: ModuleType, tmp_path: Path) -> None:
    ledger = cue_ledger(decide_after=None)  # never decided: only the budget stops
    policy = Policy.model_validate({"budget": {"measure": "task_count", "limit": 5}})
    managers = paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline", policy=policy)
    logs = _eval(_tasks(example, managers, n=12), tmp_path)
    planned = managers[0].comparison.planned
    for log in logs.values():
        assert sorted(s.id for s in log.samples) == sorted(planned[:5])
        stops = log.results.early_stopping.early_stops
        assert sorted(s.id for s in stops) == sorted(planned[5:])
        assert all("beyond the policy's budget of 5 tasks" in s.reason for s in stops)
        assert log.results.early_stopping.metadata["action"] == "continue"
    assert ledger.looks == 5


def test_cost_budget_is_refused(cue_ledger: Any) -> None:
    policy = Policy.model_validate({"budget": {"measure": "cost_usd", "limit": 5}})
    with pytest.raises(PolicyError, match="no cost or time"):
        paired_early_stopping(cue_ledger(), "ev", tested="A", baseline="B", policy=policy)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tested": "A", "baseline": "A"}, "must differ"),
        ({"tested": "", "baseline": "B"}, "non-empty system name"),
        ({"tested": "A", "baseline": "B", "group": ""}, "metadata key"),
    ],
)
def test_bad_arguments(cue_ledger: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        paired_early_stopping(cue_ledger(), "ev", **kwargs)


def test_bad_ledger_object() -> None:
    with pytest.raises(InputError, match=r"must be a database URL .* or a stopwise.ledger.Ledger; got object"):
        paired_early_stopping(object(), "ev", tested="A", baseline="B")  # type: ignore[arg-type]


def test_the_two_tasks_must_run_the_same_samples(cue_ledger: Any, example: ModuleType, tmp_path: Path) -> None:
    managers = paired_early_stopping(cue_ledger(), "ev", tested="tested", baseline="baseline")
    logs = _eval(_tasks(example, managers, datasets=(example.questions(8), example.questions(9))), tmp_path,
                 max_tasks=1)
    errors = [log.error.message for log in logs.values() if log.status == "error"]
    assert len(errors) == 1 and "outside the planned universe" in errors[0]


def test_tasks_run_one_after_the_other_are_noted(cue_ledger: Any, example: ModuleType, tmp_path: Path) -> None:
    ledger = cue_ledger(decide_after=3)
    managers = paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline")
    logs = _eval(_tasks(example, managers, n=20), tmp_path, max_tasks=1)
    first = logs["tested"].results.early_stopping
    assert len(logs["tested"].samples) == 20 and first.early_stops == []
    assert "max_tasks >= 2" in first.metadata["notes"][0]
    second = logs["baseline"].results.early_stopping
    # decided at 3 pairs; besides the 2 samples in flight (max_samples), mock samples that finish instantly may
    # start while the deciding look runs in its worker thread (off the event loop): 6 ran once under load
    assert second.metadata["action"] == "promote" and 20 - 3 - 2 - 5 <= len(second.early_stops) <= 20 - 3


def test_unscorable_values_are_pending_rows_and_groups_and_epochs_are_kept(cue_ledger: Any, example: ModuleType, tmp_path: Path) -> None:
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import TaskState

    @scorer(metrics=[mean()])
    def out_of_range() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=2.0)

        return score

    ledger = cue_ledger(decide_after=None)
    managers = paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline", group="group")
    logs = _eval(_tasks(example, managers, n=6, scorer=out_of_range(), epochs=2), tmp_path)
    tested_rows = ledger.rows("tested")
    assert len(tested_rows) == 12 and {r["status"] for r in tested_rows} == {"pending"}
    assert all(r["source"].startswith("inspect:") and "|" not in r["source"] and r["flags"] == "unscored" for r in tested_rows)
    baseline_rows = ledger.rows("baseline")
    assert sorted(r["attempt"] for r in baseline_rows) == [0] * 6 + [1] * 6
    groups = {s.id: s.metadata["group"] for s in example.questions(6)}
    assert all(r["group"] == groups[r["task"]] for r in ledger.rows())
    assert logs["tested"].results.early_stopping.metadata["appended"]["unscored"] == 12
    assert ledger.looks == 0  # no pair of final outcomes, no look


def test_missing_group_metadata_is_an_error(cue_ledger: Any, example: ModuleType, tmp_path: Path) -> None:
    managers = paired_early_stopping(cue_ledger(), "ev", tested="tested", baseline="baseline", group="domain")
    logs = _eval(_tasks(example, managers, n=4), tmp_path)
    assert all(log.status == "error" and "lack metadata['domain']" in log.error.message for log in logs.values())


def test_planned_order_is_drawn_from_the_policy_and_checked(example: ModuleType) -> None:
    from stopwise import TaskUniverse
    from stopwise.compare import order_universe, task_order
    from stopwise.inspect import planned_order

    dataset = example.questions(30)
    policy = Policy.model_validate({"order": {"kind": "coverage-aware", "seed": 5}})
    ordered, universe = planned_order(dataset, policy, group="group")
    frame = pd.DataFrame({"task": [s.id for s in dataset], "group": [s.metadata["group"] for s in dataset]})
    expected = order_universe(task_order(frame, policy))  # the same draw, made independently
    assert universe == expected and [s.id for s in ordered] == expected.tasks.tolist()
    assert planned_order(dataset, policy, group="group")[1] == universe  # same policy, same order
    reverse = TaskUniverse([s.id for s in dataset][::-1])
    assert [s.id for s in planned_order(dataset, universe=reverse)[0]] == reverse.tasks.tolist()
    with pytest.raises(InputError, match="planned but not in the dataset: q029"):
        planned_order(example.questions(29), universe=reverse)
    with pytest.raises(InputError, match=r"lack metadata\['domain'\]"):
        planned_order(dataset, group="domain")


def test_inspect_running_another_order_than_planned_is_noted(
    cue_ledger: Any, example: ModuleType, tmp_path: Path
) -> None:
    from stopwise import TaskUniverse

    dataset = example.questions(20)
    universe = TaskUniverse([s.id for s in dataset][::-1])
    managers = paired_early_stopping(cue_ledger(), "ev", tested="tested", baseline="baseline", universe=universe)
    logs = _eval(_tasks(example, managers, datasets=(dataset, dataset)), tmp_path)
    assert managers[0].comparison.planned == universe.tasks.tolist()
    for log in logs.values():
        notes = log.results.early_stopping.metadata["notes"]
        assert len([n for n in notes if "another order than the planned universe" in n]) == 2
        # and each log names the tasks run after ones planned more than 8 positions later (planned 1-11 here)
        (late,) = [n for n in notes if "planned task(s) after tasks planned more than 8 positions later" in n]
        assert late.startswith("Inspect ran 11 planned task(s)") and "q010" in late, late
        # the cue never decides: the task that ends first also notes that later decisions are in the ledger
        assert all("another order" in n or "not decided when this task ended" in n or n == late for n in notes)


def test_a_failing_ledger_stops_the_evaluation_and_says_why(
    cue_ledger: Any, cue_ledger_class: Any, example: ModuleType, tmp_path: Path
) -> None:
    class Broken(cue_ledger_class):  # type: ignore[misc, valid-type]
        def append(self, evaluation: str, rows: Any) -> Any:
            if len(self.rows()) >= 4:
                raise OSError("disk I/O error")
            return super().append(evaluation, rows)

    ledger = cue_ledger(cls=Broken)
    managers = paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline")
    logs = _eval(_tasks(example, managers, n=30), tmp_path)
    assert len(ledger.rows()) == 4
    for log in logs.values():  # fails closed: an error log, which eval_set retries (a success log it would not)
        assert log.status == "error"
        message, ran = " ".join(log.error.message.split()), len(log.samples)
        assert ran <= 4 + 2 + 2 and "stopwise: ledger append failed (task " in message, message
        assert "OSError: disk I/O error" in message and f"this task ran {ran} sample(s) and skipped {30 - ran}" in message
        assert "not decided): no later sample of either system was scheduled (fail closed)" in message


def test_a_deleted_ledger_file_fails_closed_and_both_systems_stop(example: ModuleType, tmp_path: Path) -> None:
    """The ledger's SQLite file (and its -wal, -shm) deleted mid-run: no later append is "accepted", both stop.

    The files are deleted between two ledger transactions (holding the comparison's lock, under which every
    ledger call of the managers runs), not during one: deleting the -wal under a running commit makes SQLite's own
    error ("disk I/O error") the reason instead, at the whim of the thread scheduler."""
    path = tmp_path / "ledger.db"
    managers = paired_early_stopping(f"sqlite:///{path}", "ev", tested="tested", baseline="baseline")

    def delete() -> None:
        with managers[0].comparison._lock:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)

    tasks = _tasks(example, managers, n=N)
    delete_at = act_at_sample(12, delete)  # one solver for both tasks: the 12th sample of either deletes
    for task in tasks:
        task.solver = delete_at
    logs = _eval(tasks, tmp_path)
    comparison = managers[0].comparison
    assert comparison.error is not None and "database file was removed" in comparison.error
    assert not path.exists()
    for log in logs.values():  # both fail closed, naming the failure
        assert log.status == "error"
        message, ran = " ".join(log.error.message.split()), len(log.samples)
        assert ran <= 12 + 2 + 2 and "stopwise: ledger " in message and "database file was removed" in message, message
        assert f"this task ran {ran} sample(s) and skipped {N - ran}" in message and "(fail closed)" in message


def test_an_in_memory_ledger_serves_the_worker_threads(example: ModuleType, tmp_path: Path) -> None:
    managers = paired_early_stopping("sqlite:///:memory:", "ev", tested="tested", baseline="baseline")
    logs = _eval(_tasks(example, managers, n=12), tmp_path)
    comparison = managers[0].comparison
    assert comparison.error is None and comparison.looks > 0
    assert all(log.status == "success" and log.results.early_stopping.metadata["error"] is None for log in logs.values())
    assert len(comparison.ledger.outcomes("ev")) == sum(len(log.samples) for log in logs.values())


def test_pacing_never_holds_a_system_whose_partner_failed(
    cue_ledger: Any, example: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect calls no complete_task for a failed task, but its on_sample_end hook sees the error: the partner stops."""
    from inspect_ai.solver import Generate, TaskState, solver

    from stopwise.inspect import _manager

    monkeypatch.setattr(_manager, "_PACE_STALL_S", 0.5)

    @solver
    def fail_at(sample_id: str) -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if str(state.sample_id) == sample_id:
                raise RuntimeError("the tested system broke")
            return await generate(state)

        return solve

    ledger = cue_ledger(decide_after=None)
    managers = paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline", partner_wait=0.5)
    tasks = _tasks(example, managers, n=N)
    tasks[0].solver = fail_at(example.questions(N)[5].id)
    logs = _eval(tasks, tmp_path)
    assert logs["tested"].status == "error"
    # Inspect's on_sample_end hook tells the partner, which waits 0.5 s for a retry, then stops and fails closed
    base = logs["baseline"]
    assert base.status == "error" and len(base.samples) < N // 2
    assert "the paired task failed (tested system 'tested': its task failed: sample" in base.error.message
    assert "the tested system broke" in base.error.message



def test_while_the_boundary_waits_for_top_up_tasks_only_they_run(
    cue_ledger: Any, cue_ledger_class: Any, example: ModuleType, tmp_path: Path
) -> None:
    """The top-up design crossed at 4 pairs and waits for two tasks far ahead in the planned order (positions 21
    and 31 of 40): every other sample is skipped until they are paired, then the action is promote. Without the
    skip, the 26 samples between would run for nothing (the design and its replay count only the top-up)."""
    planned = [s.id for s in example.questions(N)]
    top_up = [planned[20], planned[30]]

    class TopUp(cue_ledger_class):  # type: ignore[misc, valid-type]
        def cue(self, record: Any, rows: Any) -> Any:
            paired = self.paired_tasks(rows)
            if len(paired) < 4:
                return super().cue(record, rows)
            if set(top_up) <= paired:
                return record.model_copy(update={"action": "promote", "reason": "cue: top-up done"})
            return record.model_copy(update={"action": "continue", "reason": "cue: crossed, waiting", "top_up": top_up})

    ledger = cue_ledger(cls=TopUp)
    managers = paired_early_stopping(ledger, "ev", tested="tested", baseline="baseline")
    logs = _eval(_tasks(example, managers), tmp_path)
    for name in ("tested", "baseline"):
        summary = logs[name].results.early_stopping
        ran = [str(s.id) for s in logs[name].samples]
        # a system whose samples all ended (ran or skipped) before the partner's top-up pair completed waits for
        # it at the end of its task: both logs carry the action
        assert set(top_up) <= set(ran) and summary.metadata["action"] == "promote" and summary.metadata["notes"] == []
        # 4 pairs, the samples in flight when the crossing was read (2 per system, pace 2), the two top-up tasks
        assert len(ran) <= 4 + 2 + 2 + 2, ran
        waiting = [s for s in summary.early_stops if s.metadata["action"] == "top-up"]
        assert waiting and all("waits only for the top-up task(s)" in s.reason and s.metadata["top_up"] == top_up for s in waiting)
        assert {str(s.id) for s in waiting}.isdisjoint(top_up)
        assert all(s.metadata["action"] in ("top-up", "promote") for s in summary.early_stops)
        assert len(ran) + len(summary.early_stops) == N
    assert managers[0].comparison.decision.action == "promote" and ledger.decisions("ev")[-1].record.action == "promote"


def test_a_system_ahead_is_not_paced_by_a_partner_whose_task_ended_waiting_for_its_top_up(
    cue_ledger: Any, cue_ledger_class: Any
) -> None:
    """The cause of a failure of the test above under load (one log carried the waiting record, 'continue').

    The tested task skipped to the two top-up tasks, ran both and ended its samples; its complete_task waits for
    the baseline's top-up pair. The baseline, which ran more samples before the crossing, is 2 completed samples
    ahead (pace 2) when its last top-up task comes up. Before the fix, pacing held the baseline until the tested
    task caught up, which it never would: both waited until one looked stalled (30 s), and the tested log ended
    first with 'continue'. Driven call by call, in the order that run took (no timing)."""
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import SampleScore, Score

    ids = [f"q{i:03d}" for i in range(12)]
    top_up = ["q008", "q010"]

    class TopUp(cue_ledger_class):  # type: ignore[misc, valid-type]
        def cue(self, record: Any, rows: Any) -> Any:
            paired = self.paired_tasks(rows)
            if len(paired) < 2:
                return super().cue(record, rows)
            if set(top_up) <= paired:
                return record.model_copy(update={"action": "promote", "reason": "cue: top-up done"})
            return record.model_copy(update={"action": "continue", "reason": "cue: crossed, waiting", "top_up": top_up})

    comparison = PairedComparison(cue_ledger(cls=TopUp), "ev", tested="tested", baseline="baseline", pace=2)
    samples = [Sample(id=i, input="x") for i in ids]
    for role in ("tested", "baseline"):
        spec = SimpleNamespace(task=role, model=f"mockllm/{role}", run_id="run", task_id=role, eval_id="", scorers=None)
        comparison.start(role, spec, samples, 1)  # type: ignore[arg-type]

    def complete(role: str, task: str) -> None:
        comparison.complete(role, task, 1, {"match": SampleScore(score=Score(value="C"), sample_id=task)})  # type: ignore[arg-type]

    for task in ("q000", "q001"):  # two pairs: the boundary is crossed and waits for q008 and q010
        complete("tested", task)
        complete("baseline", task)
    assert comparison.decision is not None and comparison.decision.top_up == top_up
    for task in ("q002", "q003", "q004"):  # in flight in the baseline when the crossing was read
        complete("baseline", task)
    for task in top_up:  # the tested task skips to the top-up tasks and runs both
        assert comparison.schedule("tested", task, 1) is None
        complete("tested", task)
    assert comparison.schedule("baseline", "q005", 1) is not None  # skipped: not a top-up task
    assert comparison.schedule("baseline", "q008", 1) is None
    complete("baseline", "q008")
    assert comparison.decision.action == "continue" and comparison.decision.top_up == top_up  # q010 unpaired
    # the tested task has ended its samples: Inspect calls its complete_task, which waits for the top-up pair
    comparison.ending("tested")
    assert comparison.awaits_top_up("tested")
    # the baseline completed 6 samples, the tested 4: pace 2 would hold it, but the tested runs no more samples
    assert not comparison.ahead("baseline")
    assert comparison.schedule("baseline", "q010", 1) is None
    complete("baseline", "q010")
    assert comparison.decision.action == "promote" and not comparison.awaits_top_up("tested")
    for role in ("tested", "baseline"):
        comparison.ending(role)
        assert comparison.finish(role)["action"] == "promote"  # type: ignore[arg-type]
