"""Learn-then-Test thresholds: p-values against scipy-free formulas, and the guarantee on simulated runs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from stopwise.early import EarlyOutcomeModel
from stopwise.early._risk import (
    binomial_pvalue,
    count_start,
    halting_scores,
    learn_then_test,
    min_halts,
    sequence_start,
)
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
    model = EarlyOutcomeModel(**small_params, max_halt_error=0.1, risk_confidence=0.9, calibration_folds=None).fit(runs)
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
    assert model.quality_["deployed_heads"] == "refit: heads fitted on the training runs outside the calibration tasks"
    off = EarlyOutcomeModel(**small_params, success_threshold=None, max_halt_error=0.1, calibration_folds=None).fit(runs)
    assert off.thresholds_["success"] is None and "success" not in off.risk_control_


def test_cross_fitted_calibration_scores_every_training_run_out_of_fold(small_params: dict) -> None:
    from tests.early.conftest import make_runs

    runs = make_runs(n_agents=4, n_tasks=15, seed=3)
    model = EarlyOutcomeModel(**small_params, max_halt_error=0.1, calibration_folds=3).fit(runs)
    assert model.n_train_runs_ == len(runs) and set(model.calibration_tasks_) == {r.task for r in runs}
    assert model.calibration_scores_.shape == (len(runs), 2) and model.quality_["n_runs"] == len(runs)
    assert model.quality_["reference"] == "cross-fitted training runs (3 task folds)"
    for rc in model.risk_control_.values():
        assert rc.n_runs == len(runs)
    # every run of a task sits in one fold, and a run's score comes from heads fitted without its fold:
    # fitting the heads anew on the other folds' rows (the model's text blocks) reproduces the scores
    from stopwise.early._featurizer import Corpus

    corpus = Corpus(runs, min_df=small_params.get("min_df", 5))
    _, head_seed, split_seed = model._check()
    folds = model._task_folds(corpus, np.arange(len(runs)), split_seed)
    tasks = np.array([r.task for r in runs])
    assert all(np.unique(folds[tasks == t]).shape[0] == 1 for t in np.unique(tasks))
    fold_proba = []
    for j in range(3):
        inner_idx, out_idx = np.flatnonzero(folds != j), np.flatnonzero(folds == j)
        inner = EarlyOutcomeModel(**small_params)._fit_features(
            model.featurizer_, model.featurizer_._transform_corpus(corpus, inner_idx), corpus, inner_idx, head_seed
        )
        assert set(inner.classifier_.validation_groups_).isdisjoint(tasks[out_idx])
        out_scores = halting_scores(inner._proba_from_features(model.featurizer_._transform_corpus(corpus, out_idx)))
        np.testing.assert_allclose(out_scores, model.calibration_scores_[out_idx], atol=1e-9)
        fold_proba.append(np.vstack(inner.predict_proba(runs[:3])))
    # the deployed model is the mean of those fold heads' probabilities (no heads refitted on all runs) ...
    assert model.deployed_heads_ == "fold-average" and model.classifier_.n_folds == 3
    assert model.quality_["deployed_heads"] == "fold-average: the mean of the 3 task-fold heads"
    np.testing.assert_allclose(np.vstack(model.predict_proba(runs[:3])), np.mean(fold_proba, axis=0), atol=1e-12)
    # ... and with deployed_heads="refit" the heads a fixed-threshold model fits on all runs; the thresholds, the
    # calibration scores and the guard do not depend on which heads are deployed
    fixed = EarlyOutcomeModel(**small_params).fit(runs)
    refit = EarlyOutcomeModel(**small_params, max_halt_error=0.1, calibration_folds=3, deployed_heads="refit").fit(runs)
    assert refit.deployed_heads_ == "refit" and refit.quality_["deployed_heads"] == "refit: heads fitted on all training runs"
    np.testing.assert_allclose(np.vstack(fixed.predict_proba(runs[:3])), np.vstack(refit.predict_proba(runs[:3])), atol=1e-12)
    assert refit.thresholds_ == model.thresholds_
    np.testing.assert_array_equal(refit.calibration_scores_, model.calibration_scores_)
    assert refit.guard_ is not None and model.guard_ is not None
    assert json.dumps(refit.guard_.as_dict()) == json.dumps(model.guard_.as_dict()) == json.dumps(fixed.guard_.as_dict())
    with pytest.raises(InputError, match="calibration_folds"):
        EarlyOutcomeModel(**small_params, max_halt_error=0.1, calibration_folds=16).fit(runs)


def test_count_start_uses_scores_only() -> None:
    m = np.linspace(0, 1, 101)
    assert count_start(m, epsilon=0.05, delta=0.1) == 0.56  # the 45 runs at 0.56 .. 1.00
    assert count_start(m, epsilon=0.05, delta=0.1, unit="runs") == 0.99
    assert count_start(m[:10], epsilon=0.05, delta=0.1) == 0.5  # never enough: the grid's lowest value


def _draw_tasks(rng: np.random.Generator, n_tasks: int, per_task: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Runs of tasks: P(fail) = sigmoid(x·β + z_t·γ + e_t), 4 run features, a 30-dim task description (3 dims
    matter) and a task effect no feature shows (experiments/early_risk_simulation.py, "--cross-fit")."""
    beta, gamma = 2.5 * np.array([1.5, -1.0, 0.8, 0.5]), np.r_[0.8, -0.6, 0.5, np.zeros(27)]
    z, e = rng.normal(size=(n_tasks, 30)), rng.normal(size=n_tasks)
    task = np.repeat(np.arange(n_tasks), per_task)
    x = rng.normal(size=(task.shape[0], 4))
    p_fail = 1 / (1 + np.exp(-(x @ beta + z[task] @ gamma + e[task])))
    return np.column_stack([np.ones(task.shape[0]), x, z[task]]), rng.uniform(size=task.shape[0]) < p_fail, task, p_fail


def _ridge_logistic(X: np.ndarray, y: np.ndarray, ridge: float) -> np.ndarray:
    w = np.zeros(X.shape[1])
    for _ in range(8):
        p = 1 / (1 + np.exp(-X @ w))
        w -= np.linalg.solve((X * (p * (1 - p))[:, None]).T @ X + ridge * np.eye(X.shape[1]), X.T @ (p - y) + ridge * w)
    return w


def _pipeline(X: np.ndarray, y: np.ndarray, task: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Ridge logistic regression on 80 % of the tasks, Platt-scaled on the other 20 % (like the heads)."""
    tasks = np.unique(task)
    val = np.isin(task, rng.permutation(tasks)[: tasks.shape[0] // 5])
    w = _ridge_logistic(X[~val], y[~val].astype(float), 3.0)
    s = X[val] @ w
    return w, _ridge_logistic(np.column_stack([s, np.ones_like(s)]), y[val].astype(float), 1e-3)


def _score(model: tuple[np.ndarray, np.ndarray], X: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(model[1][0] * (X @ model[0]) + model[1][1])))


def test_cross_fitted_guarantee_holds_for_the_deployed_fold_average_in_at_least_95_percent_of_repetitions() -> None:
    """Learn-then-Test on out-of-fold scores (5 task folds of 60 tasks, ε = 0.1, δ = 0.05, halted unit).

    The true risk at the chosen threshold (exact failure probabilities of 20 000 runs of fresh tasks) is ≤ ε in
    ≥ 95 % of 100 repetitions for what ``EarlyOutcomeModel`` deploys when cross-fitted — the mean of the fold
    models' calibrated probabilities (``deployed_heads="fold-average"``) — and for the fold models themselves
    (their mean risk: what the out-of-fold scores measure). The bar is the issue's 95 % itself, no tolerance: these
    100 seeded repetitions measure 100 % for the average and 96 % for the fold models (the benchmark's 500: 99.2 %
    and 95.2 %). The pipeline refitted on all tasks (``deployed_heads="refit"``) meets the bound less often (90 %
    here, 90.6 % in the benchmark), and Learn-then-Test on the deployed model's own in-sample scores fails most of
    the time (21 % here).
    """
    fresh_X, _, _, fresh_p = _draw_tasks(np.random.default_rng(2022), 20000, 1)
    rng = np.random.default_rng(2021)
    eps, delta, reps = 0.1, 0.05, 100
    met_average = met_folds = met_refit = met_in_sample = found = 0
    for _ in range(reps):
        X, y, task, _ = _draw_tasks(rng, 60, 8)
        final = _pipeline(X, y, task, rng)
        fold = (rng.permutation(60) % 5)[task]
        oof, models = np.empty(y.shape[0]), []
        for j in range(5):
            models.append(_pipeline(X[fold != j], y[fold != j], task[fold != j], rng))
            oof[fold == j] = _score(models[-1], X[fold == j])
        t = learn_then_test(oof, ~y, epsilon=eps, delta=delta, start=count_start(oof, epsilon=eps, delta=delta)).threshold
        if t is None:
            met_average, met_folds, met_refit = met_average + 1, met_folds + 1, met_refit + 1
        else:
            found += 1
            fold_scores = np.array([_score(m, fresh_X) for m in models])
            met_average += float((1 - fresh_p[fold_scores.mean(axis=0) >= t]).mean()) <= eps
            met_folds += float(np.mean([(1 - fresh_p[s >= t]).mean() for s in fold_scores])) <= eps
            met_refit += float((1 - fresh_p[_score(final, fresh_X) >= t]).mean()) <= eps
        own = _score(final, X)
        t = learn_then_test(own, ~y, epsilon=eps, delta=delta, start=count_start(own, epsilon=eps, delta=delta)).threshold
        met_in_sample += t is None or float((1 - fresh_p[_score(final, fresh_X) >= t]).mean()) <= eps
    assert found >= 0.6 * reps
    assert met_average / reps >= 0.95 and met_folds / reps >= 0.95
    assert met_average > met_refit
    assert met_in_sample / reps < 0.5


def test_cross_fitting_by_agent_keeps_every_run_of_an_agent_in_one_fold(small_params: dict) -> None:
    from tests.early.conftest import make_runs

    from stopwise.early._featurizer import Corpus

    runs = make_runs(n_agents=4, n_tasks=8, seed=3)
    model = EarlyOutcomeModel(**small_params, max_halt_error=0.1, calibration_folds=2, calibration_groups="agent")
    folds = model._task_folds(Corpus(runs, min_df=1), np.arange(len(runs)), 0)
    agents = np.array([r.agent for r in runs])
    assert all(np.unique(folds[agents == a]).shape[0] == 1 for a in np.unique(agents))
    assert np.unique(folds).shape[0] == 2
    with pytest.raises(InputError, match="at least 5 agents"):
        EarlyOutcomeModel(**small_params, max_halt_error=0.1, calibration_groups="agent").fit(runs)
