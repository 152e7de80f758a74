"""The Learn-then-Test guarantee on simulated runs with known risks, at scale (the tests run small slices).

Run: ``.venv/bin/python -m experiments.early_risk_simulation [--reps 2000] [--n 1000] [--epsilon 0.05] [--delta 0.05]``
and ``... --cross-fit [--reps 500] [--epsilon 0.1]`` for cross-fitted calibration.

**Held-out calibration runs** (default). Halting scores are uniform on (0, 1) and a halt at score m is wrong with
probability min(1, 2.4 (1 − m)²), so the true risk of a threshold λ ≥ 0.5 is known in closed form:
0.8 (1 − λ)² among halted runs, 0.8 (1 − λ)³ among all runs. Each repetition draws a pilot set (which fixes where
the sequence starts) and a calibration set, runs :func:`stopwise.early.learn_then_test`, and checks the chosen
threshold against the true risk. Prints, per risk unit, the share of repetitions meeting the bound (must be
≥ 1 − δ), how often a threshold was found, and the chosen thresholds' quartiles next to the true boundary — and the
same for the naive rule (lowest threshold whose empirical rate is ≤ ε), which has no guarantee.

**Cross-fitted calibration** (``--cross-fit``): a learner, not a score distribution. Each repetition draws 60
tasks of 8 runs; a run fails with probability ``sigmoid(x·β + z_t·γ + e_t)`` (4 run features x, a 30-dimensional
task description z_t of which 3 dimensions matter, and a task effect e_t no feature shows). The "pipeline" fits a
ridge logistic regression on x and z on 80 % of its tasks and Platt-scales it on the other 20 % (as the heads
are early-stopped and Platt-scaled on a task split). Learn-then-Test runs on the out-of-fold scores of 5 task
folds (:func:`~stopwise.early._risk.count_start` fixes the start), and the chosen threshold's true risk (the exact
failure probabilities of 20 000 runs of fresh tasks) is checked for: the fold pipelines' averaged probability
(what ``EarlyOutcomeModel`` deploys when cross-fitted, ``deployed_heads="fold-average"``); the fold pipelines
(their mean risk — what the out-of-fold scores measure); and a pipeline refitted on all 60 tasks
(``deployed_heads="refit"``). For contrast, Learn-then-Test on the refitted pipeline's own in-sample scores.
The last line says whether the deployed model met the bound in ≥ 1 − δ of the repetitions, per unit.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from stopwise.early._risk import GRID, count_start, learn_then_test, sequence_start


def simulate(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    m = rng.uniform(size=n)
    return m, rng.uniform(size=n) < np.minimum(1.0, 2.4 * (1 - m) ** 2)


def true_risk(threshold: float, unit: str) -> float:
    return 0.8 * (1 - threshold) ** 2 if unit == "halted" else 0.8 * (1 - threshold) ** 3


# ---------------------------------------------------------------- cross-fitted calibration
BETA = 2.5 * np.array([1.5, -1.0, 0.8, 0.5])
GAMMA = np.r_[0.8, -0.6, 0.5, np.zeros(27)]


def draw_tasks(rng: np.random.Generator, n_tasks: int, per_task: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Features (with intercept), failure indicator, task id and the exact failure probability of each run."""
    z = rng.normal(size=(n_tasks, GAMMA.shape[0]))
    e = rng.normal(size=n_tasks)
    task = np.repeat(np.arange(n_tasks), per_task)
    x = rng.normal(size=(task.shape[0], BETA.shape[0]))
    p_fail = 1 / (1 + np.exp(-(x @ BETA + z[task] @ GAMMA + e[task])))
    return np.column_stack([np.ones(task.shape[0]), x, z[task]]), rng.uniform(size=task.shape[0]) < p_fail, task, p_fail


def _logistic(X: np.ndarray, y: np.ndarray, ridge: float, iterations: int = 8) -> np.ndarray:
    w = np.zeros(X.shape[1])
    for _ in range(iterations):  # Newton steps on the ridge-penalised log-likelihood
        p = 1 / (1 + np.exp(-X @ w))
        w -= np.linalg.solve((X * (p * (1 - p))[:, None]).T @ X + ridge * np.eye(X.shape[1]), X.T @ (p - y) + ridge * w)
    return w


def fit_pipeline(X: np.ndarray, y: np.ndarray, task: np.ndarray, rng: np.random.Generator, ridge: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """Ridge logistic regression on 80 % of the tasks, Platt-scaled on the other 20 %."""
    tasks = np.unique(task)
    val = np.isin(task, rng.permutation(tasks)[: max(1, tasks.shape[0] // 5)])
    w = _logistic(X[~val], y[~val].astype(float), ridge)
    s = X[val] @ w
    return w, _logistic(np.column_stack([s, np.ones_like(s)]), y[val].astype(float), 1e-3)


def score(model: tuple[np.ndarray, np.ndarray], X: np.ndarray) -> np.ndarray:
    w, (a, b) = model
    return 1 / (1 + np.exp(-(a * (X @ w) + b)))


def risk_of(m: np.ndarray, p_fail: np.ndarray, threshold: float, unit: str) -> float:
    """True wrong-halt rate of the failure head at ``threshold`` (a halt is wrong when the run succeeds)."""
    halted = m >= threshold
    wrong = (1 - p_fail[halted]).sum()
    return float(wrong / max(halted.sum(), 1)) if unit == "halted" else float(wrong / m.shape[0])


def cross_fit_repetition(
    rng: np.random.Generator, fresh: tuple[np.ndarray, np.ndarray], *, epsilon: float, delta: float, unit: str, folds: int = 5,
    n_tasks: int = 60, per_task: int = 8,
) -> dict[str, Any]:
    """One repetition: chosen thresholds (out-of-fold and in-sample) and their true risks for each deployed model."""
    X, y, task, _ = draw_tasks(rng, n_tasks, per_task)
    final = fit_pipeline(X, y, task, rng)
    fold = (rng.permutation(n_tasks) % folds)[task]
    oof = np.empty(y.shape[0])
    fold_models = []
    for j in range(folds):
        model = fit_pipeline(X[fold != j], y[fold != j], task[fold != j], rng)
        oof[fold == j] = score(model, X[fold == j])
        fold_models.append(model)
    X_new, p_new = fresh
    out: dict[str, Any] = {}
    for name, scores in (("cross", oof), ("in-sample", score(final, X))):
        start = count_start(scores, epsilon=epsilon, delta=delta, unit=unit)
        out[name] = learn_then_test(scores, ~y, epsilon=epsilon, delta=delta, unit=unit, start=start).threshold
    t = out["cross"]
    if t is not None:
        fold_scores = np.array([score(model, X_new) for model in fold_models])
        out["risk deployed"] = risk_of(score(final, X_new), p_new, t, unit)
        out["risk folds"] = float(np.mean([risk_of(s, p_new, t, unit) for s in fold_scores]))
        out["risk ensemble"] = risk_of(fold_scores.mean(axis=0), p_new, t, unit)
    if out["in-sample"] is not None:
        out["risk in-sample"] = risk_of(score(final, X_new), p_new, out["in-sample"], unit)
    return out


def cross_fit_main(args: argparse.Namespace) -> None:
    fresh_X, _, _, fresh_p = draw_tasks(np.random.default_rng(args.seed + 1), 20000, 1)
    print(f"{args.reps} repetitions, 60 tasks × 8 runs, 5 task folds, ε = {args.epsilon}, δ = {args.delta}")
    print("| Unit | Calibration scores | Deployed model | Bound met | Threshold found | Chosen λ (25/50/75 %) | Seconds |")
    print("|---|---|---|---|---|---|---|")
    verdicts: list[str] = []
    for unit in ("halted", "runs"):
        rng = np.random.default_rng(args.seed)
        started = time.perf_counter()
        reps = [cross_fit_repetition(rng, (fresh_X, fresh_p), epsilon=args.epsilon, delta=args.delta, unit=unit) for _ in range(args.reps)]
        seconds = time.perf_counter() - started
        rows = [
            ("out of fold", "**the fold pipelines' mean probability (deployed: fold-average)**", "cross", "risk ensemble"),
            ("out of fold", "the fold pipelines (mean risk)", "cross", "risk folds"),
            ("out of fold", "pipeline refitted on all tasks (deployed_heads='refit')", "cross", "risk deployed"),
            ("in-sample (refitted model's own)", "pipeline refitted on all tasks", "in-sample", "risk in-sample"),
        ]
        for scores, deployed, key, risk in rows:
            found = [r[key] for r in reps if r[key] is not None]
            met = np.mean([r[key] is None or r[risk] <= args.epsilon for r in reps])
            q = np.quantile(found, [0.25, 0.5, 0.75]) if found else [float("nan")] * 3
            print(
                f"| {unit} | {scores} | {deployed} | {100 * met:.1f}% | {100 * len(found) / args.reps:.1f}% | "
                f"{q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f} | {seconds:.0f} |"
            )
            if risk == "risk ensemble":
                verdicts.append(f"{unit}: the deployed fold average met the bound in {100 * met:.1f}% of repetitions "
                                f"({'≥' if met >= 1 - args.delta else '**below**'} 1 − δ = {100 * (1 - args.delta):.0f}%)")
    print()
    print("; ".join(verdicts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--epsilon", type=float, default=0.05)
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=2021)
    parser.add_argument("--cross-fit", action="store_true", help="Simulate cross-fitted calibration of a learner instead.")
    args = parser.parse_args()
    if args.cross_fit:
        cross_fit_main(args)
        return
    grid = np.array(GRID)
    print(f"{args.reps} repetitions, {args.n} calibration runs, ε = {args.epsilon}, δ = {args.delta}")
    print("| Unit | Procedure | Bound met | Threshold found | Chosen λ (25/50/75 %) | True boundary | Seconds |")
    print("|---|---|---|---|---|---|---|")
    for unit in ("halted", "runs"):
        boundary = 1 - np.sqrt(args.epsilon / 0.8) if unit == "halted" else 1 - (args.epsilon / 0.8) ** (1 / 3)
        rng = np.random.default_rng(args.seed)
        for name in ("Learn-then-Test", "naive (empirical ≤ ε)"):
            started = time.perf_counter()
            met, chosen = 0, []
            for _ in range(args.reps):
                pilot, pilot_wrong = simulate(rng, 300)
                m, wrong = simulate(rng, args.n)
                if name == "Learn-then-Test":
                    start = sequence_start(pilot, pilot_wrong, args.n, epsilon=args.epsilon, delta=args.delta, unit=unit)
                    threshold = learn_then_test(m, wrong, epsilon=args.epsilon, delta=args.delta, unit=unit, start=start).threshold
                else:
                    halted = m[None, :] >= grid[:, None]
                    base = halted.sum(axis=1) if unit == "halted" else np.full(grid.shape[0], args.n)
                    rate = (halted & wrong[None, :]).sum(axis=1) / np.maximum(base, 1)
                    ok = grid[rate <= args.epsilon]
                    threshold = float(ok.min()) if ok.shape[0] else None
                if threshold is None or true_risk(threshold, unit) <= args.epsilon:
                    met += 1
                if threshold is not None:
                    chosen.append(threshold)
            q = np.quantile(chosen, [0.25, 0.5, 0.75]) if chosen else [float("nan")] * 3
            print(
                f"| {unit} | {name} | {100 * met / args.reps:.1f}% | {100 * len(chosen) / args.reps:.1f}% | "
                f"{q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f} | {boundary:.3f} | {time.perf_counter() - started:.1f} |"
            )


if __name__ == "__main__":
    main()
