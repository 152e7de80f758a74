"""The Learn-then-Test guarantee on simulated runs with known risks, at scale (the test runs a small slice).

Run: ``.venv/bin/python benchmarks/early_risk_simulation.py [--reps 2000] [--n 1000] [--epsilon 0.05] [--delta 0.05]``.

Halting scores are uniform on (0, 1) and a halt at score m is wrong with probability min(1, 2.4 (1 − m)²), so
the true risk of a threshold λ ≥ 0.5 is known in closed form: 0.8 (1 − λ)² among halted runs, 0.8 (1 − λ)³
among all runs. Each repetition draws a pilot set (which fixes where the sequence starts) and a calibration set,
runs :func:`stopwise.early.learn_then_test`, and checks the chosen threshold against the true risk. Prints,
per risk unit, the share of repetitions meeting the bound (must be ≥ 1 − δ), how often a threshold was found,
and the chosen thresholds' quartiles next to the true boundary — and the same for the naive rule (lowest
threshold whose empirical rate is ≤ ε), which has no guarantee.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from stopwise.early._risk import GRID, learn_then_test, sequence_start


def simulate(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    m = rng.uniform(size=n)
    return m, rng.uniform(size=n) < np.minimum(1.0, 2.4 * (1 - m) ** 2)


def true_risk(threshold: float, unit: str) -> float:
    return 0.8 * (1 - threshold) ** 2 if unit == "halted" else 0.8 * (1 - threshold) ** 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--epsilon", type=float, default=0.05)
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=2021)
    args = parser.parse_args()
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
