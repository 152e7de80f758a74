"""A paired Inspect run with 2 % persistently erroring samples decides (issue 20, item 2).

The docs example's 200 questions and mock systems (``mockllm/model``), the betting boundary, and a solver
that raises for 4 chosen samples of each system (2 %), early in the planned order (positions 3, 6, 11 and 26
of the tested system, 6, 9, 20 and 40 of the baseline's; position 6 errs for both). Inspect calls no
``complete_sample`` for them; its ``on_sample_end`` hook does, so each becomes a ``pending`` ledger event
flagged ``error``. Under the default ``[decision] missing = "worst-case"`` the boundary counts them at their
worst case and the run decides, skipping samples of both systems; under ``wait`` (the behaviour before) the
error at position 3 freezes the prefix and every sample runs. The record lists the missing tasks, each log
lists its errored samples, and ``stopwise decide`` on the ledger's export takes the live decision again.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.support.reproduce import assert_live_decision_reproduced

import stopwise
from stopwise.cli.main import main

N = 200
TESTED_ERRORS = (3, 6, 11, 26)  # 1-based planned positions of the erroring samples
BASELINE_ERRORS = (6, 9, 20, 40)
POLICY = """\
threshold = 0.0
tail_cutoff = 0.05

[decision]
boundary = "betting-wor"
{missing}

[order]
kind = "coverage-aware"
seed = 7
"""


def run(example: ModuleType, out: Path, missing: str = "") -> dict[str, Any]:
    """The paired run with erroring samples; returns the comparison, the logs and the planned order."""
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, TaskState, generate, solver

    from stopwise.inspect import paired_early_stopping, planned_order

    out.mkdir(parents=True, exist_ok=True)
    (out / "policy.toml").write_text(POLICY.format(missing=missing))
    policy = stopwise.load_policy(out / "policy.toml")
    dataset, universe = planned_order(example.questions(N), policy, group="group")
    order = [str(t) for t in universe.tasks]
    stamp = universe.stamp
    (out / "order.csv").write_text(
        "position,task,group,order_kind,order_seed,order_sha256\n"
        + "".join(f"{i + 1},{t},{g},{stamp.kind},{stamp.seed},{stamp.sha256}\n" for i, (t, g) in enumerate(zip(order, universe.groups, strict=True)))
    )
    failing = {"tested": {order[p - 1] for p in TESTED_ERRORS}, "baseline": {order[p - 1] for p in BASELINE_ERRORS}}

    @solver
    def flaky(role: str):  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate_: Generate) -> TaskState:
            if str(state.sample_id) in failing[role]:
                raise RuntimeError(f"tool crashed on {state.sample_id}")  # every time: a persistent error
            return state

        return solve

    tested, baseline = paired_early_stopping(
        f"sqlite:///{out / 'ledger.db'}", "errors", tested="tested", baseline="baseline", policy=policy, universe=universe
    )
    tasks = [
        Task(dataset=dataset, solver=[flaky(role), generate()], scorer=match(), name=role,
             model=example.mock_system(role, 0.9 if role == "tested" else 0.55), early_stopping=manager)
        for role, manager in (("tested", tested), ("baseline", baseline))
    ]
    logs = eval(tasks, max_tasks=2, max_samples=4, fail_on_error=False, log_dir=str(out / "logs"), display="none")
    return {"comparison": tested.comparison, "logs": {log.eval.task: log for log in logs}, "failing": failing, "order": order}


@pytest.fixture(scope="module")
def errored(example: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("inspect-errors")
    return out, run(example, out)


def test_the_run_decides_despite_persistent_errors_and_skips_samples_of_both_systems(errored: tuple[Path, dict[str, Any]]) -> None:
    _, result = errored
    decision = result["comparison"].decision
    assert decision is not None and decision.action == "promote"
    for role, log in result["logs"].items():
        assert log.status == "success"
        stops = log.results.early_stopping.early_stops
        assert len(stops) > N / 2 and len(log.samples) + len(stops) == N, role  # a 35 pp gap decides well before the end
        assert all(s.reason.startswith(("stopwise promote: ", "stopwise top-up: ")) for s in stops)  # skipped once decided, or while waiting for the top-up


def test_the_record_lists_the_missing_tasks_and_each_log_its_errored_samples(errored: tuple[Path, dict[str, Any]]) -> None:
    _, result = errored
    record, failing, order = result["comparison"].decision, result["failing"], result["order"]
    missing = record.missing
    assert missing is not None and missing.treatment == "worst-case"
    ran_errored = {role: {str(s.id) for s in log.samples if s.error is not None} for role, log in result["logs"].items()}
    assert ran_errored["tested"] <= failing["tested"] and ran_errored["baseline"] <= failing["baseline"]
    assert {order[2], order[5]} <= set(missing.tasks) <= failing["tested"] | failing["baseline"]  # positions 3 and 6
    assert missing.tasks == sorted(missing.tasks, key=order.index)  # in planned order
    assert missing.judged >= 2  # counted at their worst case inside the judged prefix
    assert any(w.startswith(f"{len(missing.tasks)} planned task(s) have a missing outcome") for w in record.warnings)
    for role, log in result["logs"].items():
        meta = log.results.early_stopping.metadata
        assert {e["task"] for e in meta["errored"]} == ran_errored[role]
        assert all("tool crashed on" in e["error"] and e["epoch"] == 1 for e in meta["errored"])
        assert meta["decision"]["missing"]["tasks"] == missing.tasks
        note = next(n for n in meta["notes"] if "errored and are missing outcomes" in n)
        assert all(task in note for task in ran_errored[role]) and "worst case" in note, note


def test_the_ledger_holds_each_errored_sample_as_a_pending_event_and_decide_on_the_export_agrees(
    errored: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    from stopwise.ledger import open_ledger

    out, result = errored
    with open_ledger(f"sqlite:///{out / 'ledger.db'}") as ledger:
        ledger.export("errors", out / "outcomes.csv", force=True)
        assert ledger.verify("errors").ok
    rows = stopwise.read_outcomes(out / "outcomes.csv").to_frame()
    pending = rows[rows["status"] == "pending"]
    ran_errored = {(role, str(s.id)) for role, log in result["logs"].items() for s in log.samples if s.error is not None}
    assert set(zip(pending["system"], pending["task"], strict=True)) == ran_errored
    assert (pending["flags"] == "error").all() and pending["outcome"].isna().all() and (pending["attempt"] == 0).all()
    live = result["comparison"].decision.action
    capsys.readouterr()
    code = main(["decide", str(out / "outcomes.csv"), "-t", "tested", "-b", "baseline",
                 "-p", str(out / "policy.toml"), "--tasks", str(out / "order.csv"), "--json"])
    record = json.loads(capsys.readouterr().out)
    assert code == stopwise.ACTIONS.index(live) and record["action"] == live
    assert set(result["comparison"].decision.missing.tasks) <= set(record["missing"]["tasks"])
    # the live decision, reproduced exactly from the events up to it (the errored samples' pending events included)
    assert_live_decision_reproduced(out / "ledger.db", "errors", out / "policy.toml", out / "order.csv", out)


def test_an_error_before_the_partner_has_any_row_neither_looks_nor_stops_the_evaluation() -> None:
    """An errored sample that comes first (the partner has no row yet) is appended and waits for the partner's run:
    a look then would find no baseline rows and fail the ledger call, stopping the evaluation (seen in a real run)."""
    from types import SimpleNamespace

    from inspect_ai.dataset import Sample

    from stopwise.inspect import paired_early_stopping
    from stopwise.inspect._errors import missing_samples, record_error

    tested, _ = paired_early_stopping("sqlite:///:memory:", "first", tested="A", baseline="B", policy=stopwise.Policy.model_validate(
        {"decision": {"boundary": "betting-wor"}, "coverage": {"rule": "none"}}), universe=[f"s{i}" for i in range(10)])
    comparison = tested.comparison
    spec = SimpleNamespace(task="a", model="mockllm/model", run_id="r", task_id="t", eval_id="e1", scorers=[],
                           config=SimpleNamespace(fail_on_error=False))
    comparison.start("tested", spec, [Sample(id=f"s{i}", input="x") for i in range(10)], 1)
    record_error(comparison, "tested", "s0", 1, "RuntimeError('boom')")
    assert comparison.error is None and comparison.looks == 0
    assert missing_samples(comparison, "tested") == [{"task": "s0", "epoch": 1, "error": "RuntimeError('boom')"}]
    rows = comparison.ledger.outcomes("first")
    assert rows[["system", "task", "status", "flags", "attempt"]].values.tolist() == [["A", "s0", "pending", "error", 0]]


@pytest.mark.slow
def test_waiting_for_a_retry_freezes_the_decision_as_before(example: ModuleType, tmp_path: Path) -> None:
    """The control: ``missing = "wait"`` keeps the prefix at 2 (the error at position 3), so nothing is skipped.

    Slow (all 400 samples run); the default lane checks ``wait`` on the rows (tests/compare/test_missing.py)."""
    result = run(example, tmp_path / "wait", missing='missing = "wait"')
    decision = result["comparison"].decision
    assert decision is not None and decision.action == "continue" and decision.missing is not None
    for log in result["logs"].values():
        assert len(log.samples) == N and not log.results.early_stopping.early_stops
