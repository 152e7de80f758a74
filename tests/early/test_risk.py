"""Learn-then-Test thresholds: p-values against scipy-free formulas, and the guarantee on simulated runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stopwise.early import EarlyOutcomeModel
from stopwise.early._risk import binomial_pvalue, halting_scores, learn_then_test, min_halts, sequence_start
from stopwise.errors import InputError


def _binom_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


@pytest.mark.parametrize(("k", "n", "eps"), [(0, 45, 0.05), (3, 120, 0.05), (7, 60, 0.1), (0, 1, 0.5)])
def test_binomial_pvalue_matches_the_sum_of_binomial_terms(k: int, n: int, eps: float) -> None:
    assert float(binomial_pvalue(k, n, eps)) == pytest.approx(_binom_cdf(k, n, eps), rel=1e-10)


def test_no_halted_run_gives_p_one_and_min_halts_is_the_zero_error_sample_size() -> None:
    assert float(binomial_pvalue(0, 0, 0.05)) == 1.0
    n = min_halts(0.05, 0.1)
    assert 0.95**n <= 0.1 < 0.95 ** (n - 1)


def test_halting_scores_use_only_prefixes_that_may_halt() -> None:
    p = np.array([[0.99, 0.99], [0.2, 0.7], [0.6, 0.1], [0.99, 0.99]])  # k = 0 and k = T cannot halt
    assert halting_scores([p]).tolist() == [[0.6, 0.7]]
    assert halting_scores([p], min_halt_step=2).tolist() == [[0.6, 0.1]]
    assert halting_scores([p[:1]]).tolist() == [[-np.inf, -np.inf]]


def test_fixed_sequence_stops_at_the_first_threshold_not_rejected() -> None:
    # 100 runs at score 0.9 all right, 100 at 0.8 all wrong, 100 at 0.7 all right
    scores = np.repeat([0.9, 0.8, 0.7], 100)
    wrong = np.repeat([False, True, False], 100)
    rc = learn_then_test(scores, wrong, epsilon=0.05, delta=0.1, grid=[0.95, 0.9, 0.8, 0.7])
    # 0.95 halts nothing (p = 1): the sequence stops at once
    assert rc.threshold is None and rc.n_tested == 1 and "never halts" in rc.reason
    rc = learn_then_test(scores, wrong, epsilon=0.05, delta=0.1, grid=[0.95, 0.9, 0.8, 0.7], start=0.9)
    # 0.9: 0/100 wrong, rejected; 0.8: 100/200 wrong, not rejected -> stop; 0.7 (1/3 wrong overall) never tested
    assert (rc.threshold, rc.n_halted, rc.n_wrong, rc.n_tested) == (0.9, 100, 0, 2)
    assert rc.p_value == pytest.approx(0.95**100)
    runs = learn_then_test(scores, wrong, epsilon=0.5, delta=0.1, unit="runs", grid=[0.95, 0.9, 0.8, 0.7])
    # as a share of all 300 runs: 0.95 (0 wrong), 0.9 (0), 0.8 (100/300), 0.7 (100/300) are all below 0.5
    assert runs.threshold == 0.7 and runs.rate == pytest.approx(1 / 3)


def test_bad_arguments_are_input_errors() -> None:
    with pytest.raises(InputError, match="epsilon"):
        learn_then_test([0.5], [False], epsilon=0.0, delta=0.1)
    with pytest.raises(InputError, match="unit"):
        learn_then_test([0.5], [False], epsilon=0.1, delta=0.1, unit="prefixes")
    with pytest.raises(InputError, match="one entry per run"):
        learn_then_test([0.5, 0.6], [False], epsilon=0.1, delta=0.1)


def _simulate(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Halting scores uniform on (0, 1); a halt at score m is wrong with probability min(1, 2.4 (1 − m)²).

    The true risks on the grid (λ ≥ 0.5) are then known in closed form: among runs halted at λ,
    E[2.4 (1 − m)² | m ≥ λ] = 0.8 (1 − λ)², ≤ 0.05 from λ* = 0.75; as a share of all runs,
    ∫_λ^1 2.4 (1 − m)² dm = 0.8 (1 − λ)³, ≤ 0.05 from λ* = 1 − 0.0625^(1/3) ≈ 0.603.
    """
    m = rng.uniform(size=n)
    return m, rng.uniform(size=n) < np.minimum(1.0, 2.4 * (1 - m) ** 2)


def _true_risk(threshold: float, unit: str) -> float:
    return 0.8 * (1 - threshold) ** 2 if unit == "halted" else 0.8 * (1 - threshold) ** 3


@pytest.mark.parametrize("unit", ["halted", "runs"])
def test_simulated_guarantee_holds_in_at_least_95_percent_of_repetitions(unit: str) -> None:
    """The chosen threshold's true risk is ≤ ε in ≥ 95 % of 300 seeded repetitions at δ = 0.05.

    Reference values are the closed-form risks above (no estimate involved). The procedure is not vacuous:
    it picks a threshold in most repetitions, near the true boundary λ*.
    """
    rng = np.random.default_rng(2021)
    eps, delta, n, reps = 0.05, 0.05, 1000, 300
    met, chosen = 0, []
    for _ in range(reps):
        pilot, pilot_wrong = _simulate(rng, 300)  # independent runs fix where the sequence starts
        m, wrong = _simulate(rng, n)
        start = sequence_start(pilot, pilot_wrong, n, epsilon=eps, delta=delta, unit=unit)
        rc = learn_then_test(m, wrong, epsilon=eps, delta=delta, unit=unit, start=start)
        if rc.threshold is None or _true_risk(rc.threshold, unit) <= eps:
            met += 1
        if rc.threshold is not None:
            chosen.append(rc.threshold)
    assert met / reps >= 0.95
    assert len(chosen) >= 0.6 * reps
    boundary = 0.75 if unit == "halted" else 1 - 0.0625 ** (1 / 3)
    assert boundary <= float(np.median(chosen)) <= boundary + 0.1


def test_an_optimistic_procedure_fails_the_same_simulation() -> None:
    """The simulation can fail: choosing the lowest threshold whose *empirical* rate is ≤ ε misses often."""
    rng = np.random.default_rng(7)
    eps, n, reps, met = 0.05, 600, 200, 0
    grid = np.round(np.arange(0.99, 0.49, -0.01), 2)
    for _ in range(reps):
        m, wrong = _simulate(rng, n)
        rates = np.array([wrong[m >= t].mean() if (m >= t).any() else 0.0 for t in grid])
        ok = grid[rates <= eps]
        if ok.shape[0] == 0 or _true_risk(float(ok.min()), "halted") <= eps:  # boundary 0.75
            met += 1
    assert met / reps < 0.9


def test_model_with_max_halt_error_chooses_thresholds_on_held_out_tasks(small_params: dict) -> None:
    from tests.early.conftest import make_runs

    runs = make_runs(n_agents=6, n_tasks=30, seed=3)
    model = EarlyOutcomeModel(**small_params, max_halt_error=0.1, risk_confidence=0.9).fit(runs)
    held = set(model.calibration_tasks_)
    assert len(held) == 9  # ceil(0.3 * 30) tasks, every run of each on the calibration side
    assert held.isdisjoint(model.classifier_.validation_groups_)
    assert set(model.risk_control_) == {"success", "failure"}
    for head, rc in model.risk_control_.items():
        assert rc.n_runs == sum(1 for r in runs if r.task in held) == 6 * 9
        assert model.thresholds_[head] == rc.threshold
        if rc.threshold is not None:
            assert rc.p_value <= 0.1 and rc.n_wrong <= rc.n_halted
    assert model.n_train_runs_ == len(runs) - 6 * 9
    assert model.quality_["reference"] == "calibration runs"
    off = EarlyOutcomeModel(**small_params, success_threshold=None, max_halt_error=0.1).fit(runs)
    assert off.thresholds_["success"] is None and "success" not in off.risk_control_
