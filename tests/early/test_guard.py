"""The unfamiliar-run guard: batch and stream agree, familiar runs pass, runs of another kind are held with a reason."""

from __future__ import annotations

import numpy as np

from stopwise.early import EarlyOutcomeModel, halt_decision
from stopwise.records import Step, Trajectory


def _foreign_runs(n: int = 6) -> list[Trajectory]:
    """Runs of another benchmark: other task prompts, tools and observations than the synthetic training runs."""
    steps = [
        Step(action=f"kubectl rollout restart deployment/web-{k}", tool="kubectl", observation=f"deployment.apps/web-{k} restarted; pods pending")
        for k in range(12)
    ]
    return [
        Trajectory(agent="other", task=f"ops-{i}", outcome=i % 2, task_text=f"Scale the cluster ingress {i} behind the load balancer quickly.", steps=steps)
        for i in range(n)
    ]


def test_batch_coverage_equals_the_stream(fitted: EarlyOutcomeModel, runs: list[Trajectory]) -> None:
    for run in runs[36:40] + _foreign_runs(2):
        batch = fitted.featurizer_.coverage([run])[0]
        stream = fitted.featurizer_.stream(run.task_text)
        got = [stream.coverage]
        for step in run.steps:
            stream.update(step)
            got.append(stream.coverage)
        np.testing.assert_allclose(np.array(got), batch, rtol=0, atol=1e-12)


def test_the_monitor_holds_exactly_where_the_batch_guard_says(fitted: EarlyOutcomeModel, runs: list[Trajectory]) -> None:
    sample = runs[36:44] + _foreign_runs(4)
    familiar = fitted.familiar(sample)
    proba = fitted.predict_proba(sample)
    n_held = 0
    for run, ok, p in zip(sample, familiar, proba, strict=True):
        monitor = fitted.monitor(run.task_text, success_threshold=0.6, failure_threshold=0.6)
        for k, step in enumerate(run.steps, start=1):
            verdict = monitor.observe(step)
            _, head = halt_decision(p[k, 0], p[k, 1], 0.6, 0.6)
            unvalidated = head is not None and fitted._unvalidated(head, 0.6) is not None
            assert verdict.held == (head is not None and (unvalidated or not ok[k]))
            if verdict.held:
                n_held += 1
                expected_start = "held: threshold 0.60 was not validated" if unvalidated else "held: unfamiliar run:"
                assert verdict.action == "continue" and verdict.reason.startswith(expected_start)
                assert "would have halted" in verdict.reason
            if verdict.halted:
                assert ok[k] and not unvalidated and verdict.reason.endswith("≥ 0.600")
                break
    assert n_held > 0


def test_familiar_runs_pass_and_foreign_runs_are_held(fitted: EarlyOutcomeModel, runs: list[Trajectory]) -> None:
    held_out = [r for r in runs if r.agent == "agent-3"]  # same tasks, an agent the model did not see
    share = np.concatenate(fitted.familiar(held_out)).mean()
    # the reference here is the validation split of 12 synthetic tasks: 2 tasks, so the task-text floor is the
    # lower of two tasks' coverages and holds some familiar tasks (78 % of prefixes pass)
    assert share >= 0.75
    foreign = fitted.familiar(_foreign_runs())
    assert not np.concatenate(foreign).any()
    monitor = fitted.monitor(_foreign_runs(1)[0].task_text, success_threshold=0.01, failure_threshold=0.01)
    verdict = monitor.observe(_foreign_runs(1)[0].steps[0])
    assert verdict.held and not verdict.halted
    assert "task similarity" in verdict.reason or "coverage" in verdict.reason
    # without the guard the same step halts
    bare = fitted.monitor(_foreign_runs(1)[0].task_text, success_threshold=0.01, failure_threshold=0.01, guard=False)
    assert bare.observe(_foreign_runs(1)[0].steps[0]).halted


def test_the_guard_can_be_turned_off(runs: list[Trajectory], small_params: dict) -> None:
    model = EarlyOutcomeModel(**small_params, guard_quantile=None).fit([r for r in runs if r.agent != "agent-3"])
    assert model.guard_ is None
    assert all(ok.all() for ok in model.familiar(_foreign_runs(2)))


def test_a_threshold_the_reference_runs_refute_is_held_with_its_reason(fitted: EarlyOutcomeModel) -> None:
    table = fitted.reliability_["failure"]
    assert [row[0] for row in table] == sorted((row[0] for row in table), reverse=True)
    bad = [row for row in table if row[1] >= 10 and row[2] < 0.9]
    for t, n, p in bad[:1]:
        reason = fitted._unvalidated("failure", t)
        assert reason is not None and f"right on {100 * p:.0f}% of the {int(n)} runs" in reason
    good = [row for row in table if row[1] >= 10 and row[2] >= 0.9] + [row for row in table if row[1] < 10]
    for t, _, _ in good[:3]:
        assert fitted._unvalidated("failure", t) is None
