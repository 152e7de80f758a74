"""The halting rule's branches, its vectorised form, and the monitor's use of it."""

from __future__ import annotations

import numpy as np
import pytest

from stopwise.early import EarlyOutcomeModel, Verdict, halt_decision
from stopwise.early._halting import first_crossing, halt_points, mode_thresholds
from stopwise.records import Trajectory, outcome_columns


@pytest.mark.parametrize(
    ("p_s", "p_f", "s", "f", "expected"),
    [
        (0.50, 0.40, 0.9, 0.9, (None, None)),  # both below: continue
        (0.95, 0.10, 0.9, 0.9, (1, "success")),  # success crosses
        (0.10, 0.93, 0.9, 0.9, (0, "failure")),  # failure crosses
        (0.90, 0.10, 0.9, 0.9, (1, "success")),  # crossing means p >= threshold
        (0.99, 0.91, 0.9, 0.9, (1, "success")),  # both cross: larger margin wins (0.09 > 0.01)
        (0.91, 0.99, 0.9, 0.9, (0, "failure")),  # both cross: larger margin wins (0.09 > 0.01)
        (0.75, 0.5, 0.5, 0.25, (0, "failure")),  # equal margins (0.25): the conservative failure call
        (0.99, 0.10, None, 0.9, (None, None)),  # success head off (failure-only mode)
        (0.10, 0.99, 0.9, None, (None, None)),  # failure head off (success-only mode)
        (0.99, 0.99, None, None, (None, None)),  # both off
    ],
)
def test_decide_branches(p_s: float, p_f: float, s: float | None, f: float | None, expected: tuple) -> None:
    assert halt_decision(p_s, p_f, s, f) == expected


def test_the_earlier_crossing_wins() -> None:
    ps = [0.1, 0.2, 0.3, 0.4, 0.99, 0.99]
    pf = [0.1, 0.2, 0.95, 0.1, 0.1, 0.1]
    v = first_crossing(ps, pf, 0.9, 0.9)
    assert v == Verdict(2, "halt", 0, "failure", 0.3, 0.95, "failure head: p_failure 0.950 ≥ 0.900")
    assert first_crossing(ps, pf, 0.9, None) == Verdict(4, "halt", 1, "success", 0.99, 0.1, "success head: p_success 0.990 ≥ 0.900")


def test_no_halt_before_min_step_or_at_the_last_step() -> None:
    ps = [0.99, 0.2, 0.2, 0.99]  # k = 0..3, T = 3
    pf = [0.0, 0.0, 0.0, 0.0]
    assert first_crossing(ps, pf, 0.9, 0.9, min_halt_step=1) is None  # k=0 too early, k=3 is the natural end
    assert first_crossing(ps, pf, 0.9, 0.9, min_halt_step=0).step == 0


def test_vectorised_rule_equals_the_scalar_rule() -> None:
    rng = np.random.default_rng(11)
    lengths = rng.integers(0, 15, size=300)
    run = np.repeat(np.arange(300), lengths + 1)
    k = np.concatenate([np.arange(T + 1) for T in lengths])
    T = np.repeat(lengths, lengths + 1)
    ps = np.round(rng.random(run.shape[0]), 2)
    pf = np.round(rng.random(run.shape[0]), 2)
    for s, f in [(0.9, 0.9), (0.8, None), (None, 0.85), (0.95, 0.7)]:
        step, predicted, success = halt_points(run, k, T, ps, pf, s, f, min_halt_step=1)
        for r in range(300):
            rows = run == r
            v = first_crossing(ps[rows], pf[rows], s, f, min_halt_step=1)
            if v is None:
                assert np.isnan(step[r])
            else:
                assert (step[r], predicted[r], bool(success[r])) == (v.step, v.predicted, v.head == "success")


def test_modes() -> None:
    assert mode_thresholds("dual", 0.9) == (0.9, 0.9)
    assert mode_thresholds("success-only", 0.9) == (0.9, None)
    with pytest.raises(ValueError, match="mode must be one of"):
        mode_thresholds("both", 0.9)


def test_a_halt_verdict_becomes_a_predicted_outcome_row() -> None:
    row = Verdict(4, "halt", 1, "success", 0.97, 0.01).outcome_row(system="A", task="t", attempt=2)
    frame = outcome_columns([row]).to_frame()
    assert frame.loc[0, ["status", "outcome", "attempt"]].tolist() == ["predicted", 1.0, 2]
    with pytest.raises(ValueError, match="only a halt verdict"):
        Verdict(4, "continue", None, None, 0.5, 0.5).outcome_row(system="A", task="t")


def test_monitor_halts_once_and_stays_halted(fitted: EarlyOutcomeModel, runs: list[Trajectory]) -> None:
    probabilities = fitted.predict_proba(runs)
    halted_any = False
    for run, p in zip(runs, probabilities, strict=True):
        monitor = fitted.monitor(run.task_text, success_threshold=0.8, failure_threshold=0.8, guard=False)
        expected = first_crossing(p[:, 0], p[:, 1], 0.8, 0.8, min_halt_step=1)
        verdicts = [monitor.observe(step) for step in run.steps]
        first_halt = next((v for v in verdicts if v.halted), None)
        if expected is None:
            # the monitor may still halt at the last step, which replay does not count as early
            assert first_halt is None or first_halt.step == len(run.steps)
            continue
        halted_any = True
        assert first_halt == expected
        assert all(v == expected for v in verdicts[expected.step - 1 :])  # the decision is final
        assert all(not v.halted for v in verdicts[: expected.step - 1])
    assert halted_any


def test_monitor_respects_min_halt_step(fitted: EarlyOutcomeModel, runs: list[Trajectory]) -> None:
    from sklearn.base import clone

    late = clone(fitted).set_params(min_halt_step=5)
    late.featurizer_, late.classifier_, late.columns_ = fitted.featurizer_, fitted.classifier_, fitted.columns_
    monitor = late.monitor(runs[0].task_text, success_threshold=0.01, failure_threshold=0.01)
    verdicts = [monitor.observe(step) for step in runs[0].steps[:6]]
    assert [v.halted for v in verdicts] == [False] * 4 + [True, True]
