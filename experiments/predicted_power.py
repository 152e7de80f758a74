"""Predicted outcomes in a paired decision (issue 22): the prediction-powered boundary's power beside the full evaluation.

Each simulated benchmark: N tasks, one run per system, A passes with probability ``pa`` and B with ``pb``
(a true difference of about pa - pb). A run is a halting candidate with probability ``halt``; a candidate's
prediction is wrong with probability ``wrong``; a run is audited with probability ``rho`` (independent of
everything). The prediction-powered boundary (:func:`stopwise.compare._predicted.powered_boundary`, looks
after every task of a uniform random order, a = 0.05) is compared with the betting-wor boundary on the
true outcomes of every run (the full evaluation, no halting). The rate is the share of benchmarks promoted
at some look; SE = sqrt(r (1 - r) / S). The null rates are in ``tests/compare/test_predicted.py``.

Usage: python -m experiments.predicted_power [--sims 200] [--tasks 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from stopwise.compare import betting_boundary
from stopwise.compare._predicted import powered_boundary, powered_scale


def promote_rates(sims: int, n_tasks: int, rho: float, halt: float, *, pa: float, pb: float, wrong: float, seed: int) -> tuple[float, float]:
    """Promote rates of prediction-powered and of the full evaluation over ``sims`` seeded benchmarks."""
    rng = np.random.default_rng(seed)
    powered = full = 0
    for _ in range(sims):
        y = np.stack([rng.random(n_tasks) < pa, rng.random(n_tasks) < pb]).astype(float)
        candidate = rng.random(y.shape) < halt
        f = np.where(candidate & (rng.random(y.shape) < wrong), 1.0 - y, y)
        audited = rng.random(y.shape) < rho
        predicted = candidate & ~audited
        value = np.where(candidate & audited, f + (y - f) / rho, np.where(predicted, f, y))
        low = np.where(predicted, np.array([[0.0], [1.0]]), y)
        high = np.where(predicted, np.array([[1.0], [0.0]]), y)
        order = rng.permutation(n_tasks)
        ours = powered_boundary(
            (value[0] - value[1])[order], (low[0] - low[1])[order], (high[0] - high[1])[order], 0.0,
            population_size=n_tasks, alpha=0.05, scale=powered_scale(rho),
        )  # fmt: skip
        powered += ours.p_promote <= 0.05
        full += betting_boundary((y[0] - y[1])[order], 0.0, population_size=n_tasks, alpha=0.05, confidence_bounds=False).p_promote <= 0.05
    return powered / sims, full / sims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"N = {args.tasks}, pA = 0.75, pB = 0.35, 10 % wrong halts, {args.sims} benchmarks per row, a = 0.05")
    print("halting share  rho   prediction-powered (SE)   full evaluation (SE)")
    for halt in (0.2, 0.5):
        for rho in (0.2, 0.5):
            ours, full = promote_rates(args.sims, args.tasks, rho, halt, pa=0.75, pb=0.35, wrong=0.1, seed=args.seed)
            se = [math.sqrt(r * (1 - r) / args.sims) for r in (ours, full)]
            print(f"{halt:>13.0%}  {rho:>4.1f}   {ours:>8.3f} ({se[0]:.3f})          {full:>8.3f} ({se[1]:.3f})")


if __name__ == "__main__":
    main()
