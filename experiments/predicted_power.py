"""Predicted outcomes in a paired decision (issue 22): the prediction-powered boundary's power beside the full evaluation.

Each simulated benchmark: N tasks, one run per system, A passes with probability ``pa`` and B with ``pb``
(a true difference of about pa - pb). A run is a halting candidate with probability ``halt``; a candidate's
prediction is wrong with probability ``wrong``; a run is audited with probability ``rho`` (independent of
everything). The prediction-powered boundary (:func:`stopwise.compare._predicted.powered_boundary`, looks
after every task of a uniform random order, a = 0.05) is compared with the betting-wor boundary on the
true outcomes of every run (the full evaluation, no halting) and with an oracle centre (see
:func:`promote_looks`). The rate is the share of benchmarks promoted at some look, SE = sqrt(r (1 - r) / S),
and the median look of the promote (inf when fewer than half promote). The null rates are in
``tests/compare/test_predicted.py``.

Usage: python -m experiments.predicted_power [--sims 200] [--tasks 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from stopwise.compare import betting_boundary
from stopwise.compare._predicted import powered_boundary, powered_scale


def _first_promote(log_capital: np.ndarray) -> float:
    """The look at which the promote test first crosses 1/a (a = 0.05); inf when it never does."""
    crossed = np.flatnonzero(np.maximum.accumulate(log_capital) >= np.log(20.0))
    return float(crossed[0] + 1) if len(crossed) else math.inf


def promote_looks(sims: int, n_tasks: int, rho: float, halt: float, *, pa: float, pb: float, wrong: float, seed: int) -> dict[str, np.ndarray]:
    """The look of the first promote per benchmark: prediction-powered, the same with an oracle centre, the full evaluation.

    The oracle centre uses the true past outcomes of the predicted runs (not computable in practice): the gap
    between it and ``prediction-powered`` is the price of the worst-case past sum; the gap between the oracle and
    the full evaluation is the price of the wider range and the audit noise.
    """
    rng = np.random.default_rng(seed)
    looks: dict[str, list[float]] = {"prediction-powered": [], "oracle centre": [], "full evaluation": []}
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
        x, d = (value[0] - value[1])[order], (y[0] - y[1])[order]
        for name, (lo, hi) in (("prediction-powered", ((low[0] - low[1])[order], (high[0] - high[1])[order])), ("oracle centre", (d, d))):
            result = powered_boundary(x, lo, hi, 0.0, population_size=n_tasks, alpha=0.05, scale=powered_scale(rho))
            looks[name].append(_first_promote(result.log_capital_promote))
        full = betting_boundary(d, 0.0, population_size=n_tasks, alpha=0.05, confidence_bounds=False)
        looks["full evaluation"].append(_first_promote(full.log_capital_promote))
    return {name: np.array(v) for name, v in looks.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"N = {args.tasks}, pA = 0.75, pB = 0.35, 10 % wrong halts, {args.sims} benchmarks per row, a = 0.05")
    print("promote rate (SE) and median tasks to the promote, per method")
    for halt in (0.2, 0.5):
        for rho in (0.2, 0.5):
            looks = promote_looks(args.sims, args.tasks, rho, halt, pa=0.75, pb=0.35, wrong=0.1, seed=args.seed)
            cells = []
            for name, at in looks.items():
                rate = float(np.isfinite(at).mean())
                cells.append(f"{name} {rate:.3f} ({math.sqrt(rate * (1 - rate) / args.sims):.3f}), median {np.median(at):g}")
            print(f"halting {halt:.0%}, rho {rho:.1f}: " + "; ".join(cells))
    print(f"\nN = 500, pA = 0.60, pB = 0.45, 10 % wrong halts, {args.sims // 2} benchmarks per row, a = 0.05")
    for halt in (0.2, 0.5):
        looks = promote_looks(args.sims // 2, 500, 0.5, halt, pa=0.6, pb=0.45, wrong=0.1, seed=3)
        cells = [f"{name} {float(np.isfinite(at).mean()):.3f}, median {np.median(at):g}" for name, at in looks.items()]
        print(f"halting {halt:.0%}, rho 0.5: " + "; ".join(cells))


if __name__ == "__main__":
    main()
