"""The unfamiliar-run guard: batch and stream agree, familiar runs pass, runs of another kind are held with a reason."""

from __future__ import annotations

import numpy as np
from scipy.stats import beta

from stopwise.early import EarlyOutcomeModel, halt_decision
from stopwise.early._quality import unvalidated, validated_floor
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
                expected_start = "held: unfamiliar run:" if not ok[k] else "held: threshold 0.60 was not validated"
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
    assert "task similarity" in verdict.reason or "coverage" in verdict.reason  # the run's own reason comes first
    # without the guard the same step halts
    bare = fitted.monitor(_foreign_runs(1)[0].task_text, success_threshold=0.01, failure_threshold=0.01, guard=False)
    assert bare.observe(_foreign_runs(1)[0].steps[0]).halted


def test_the_guard_can_be_turned_off(runs: list[Trajectory], small_params: dict) -> None:
    model = EarlyOutcomeModel(**small_params, guard_quantile=None).fit([r for r in runs if r.agent != "agent-3"])
    assert model.guard_ is None
    assert all(ok.all() for ok in model.familiar(_foreign_runs(2)))


def _floor_by_beta_quantiles(table: list[list[float]], confidence: float) -> float | None:
    """The validated floor computed independently: one-sided Clopper–Pearson lower bounds from beta quantiles,
    walked from the highest threshold halting ≥ 22 runs (0.9 ** 22 < 0.1) down to the first below 90 %."""
    floor = None
    started = False
    for t, n, p in table:
        right = round(n * p)
        if not started and n < 22:
            continue
        started = True
        low = beta.ppf(1 - confidence, right, n - right + 1) if right > 0 else 0.0
        if low < 0.9:
            break
        floor = t
    return floor


def test_a_threshold_is_held_unless_the_reference_runs_show_90_percent_precision() -> None:
    # 30 runs halted at 0.9 all right (lower bound 0.1 ** (1/30) = 0.926), 80 at 0.8 with 2 wrong (lower bound 0.92),
    # 90 at 0.7 with 18 wrong (0.74): validated down to 0.8
    table = [[0.95, 10.0, 1.0], [0.9, 30.0, 1.0], [0.8, 80.0, 78 / 80], [0.7, 90.0, 0.8]]
    assert validated_floor(table, confidence=0.9)[0] == _floor_by_beta_quantiles(table, 0.9) == 0.8
    assert unvalidated(table, 0.95, confidence=0.9) is None and unvalidated(table, 0.8, confidence=0.9) is None
    assert "at 0.70 it is right on 72 of the 90 runs" in str(unvalidated(table, 0.79, confidence=0.9))
    # 21 halts all right cannot show 90 % at confidence 0.9 (0.9 ** 21 = 0.109): nothing is validated
    few = [[0.9, 21.0, 1.0], [0.5, 21.0, 1.0]]
    assert validated_floor(few, confidence=0.9)[0] is None and "at least 22" in str(unvalidated(few, 0.9, confidence=0.9))


def test_the_model_holds_exactly_the_thresholds_below_its_validated_floor(fitted: EarlyOutcomeModel) -> None:
    table = fitted.reliability_["failure"]
    assert [row[0] for row in table] == sorted((row[0] for row in table), reverse=True)
    floor = _floor_by_beta_quantiles(table, fitted.risk_confidence)
    for t, _, _ in table:
        reason = fitted._unvalidated("failure", t)
        assert (reason is None) == (floor is not None and t >= floor - 1e-9)
        if reason is not None:
            assert reason.startswith(f"threshold {t:.2f} was not validated: the failure head's precision must be shown ≥ 90%")
