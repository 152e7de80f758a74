"""Decisions per second: exact bootstrap tails against the Monte-Carlo bootstrap (B = 200).

The same 10,000 prefixes (random directed pair of swebench_verified, random task order, random
prefix length on the 5 %..95 % grid) are decided side by side in one run:

* exact, batched     - lattice counts of all prefixes, one exact convolution per distinct count row
* exact, one by one  - ``tail_probabilities(method="exact")`` per prefix
* Monte-Carlo B=200  - ``tail_probabilities(method="bootstrap", n_resamples=200)`` per prefix

Run: ``.venv/bin/python -m benchmarks.decide_tails [--prefixes 10000] [--seed 0]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks._data import records_path
from stopwise import read_outcomes, tail_probabilities
from stopwise.compare import exact_tails_from_counts, routine_actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefixes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rows = read_outcomes(records_path("swebench_verified")).to_frame()
    wide = rows.pivot(index="task", columns="system", values="outcome")
    outcomes = wide.to_numpy(dtype=float).T  # systems x tasks
    n_systems, n_tasks = outcomes.shape
    rng = np.random.default_rng(args.seed)
    tested = rng.integers(0, n_systems, args.prefixes)
    baseline = (tested + rng.integers(1, n_systems, args.prefixes)) % n_systems
    grid = np.arange(5, 100, 5) / 100
    lengths = np.ceil(grid[rng.integers(0, len(grid), args.prefixes)] * n_tasks - 1e-9).astype(int)
    orders = np.argsort(rng.random((args.prefixes, n_tasks)), axis=1)
    prefixes = [
        (outcomes[a, order[:k]] - outcomes[b, order[:k]])
        for a, b, order, k in zip(tested, baseline, orders, lengths, strict=True)
    ]
    threshold, cutoff = 0.0, 0.05

    start = time.perf_counter()
    counts = np.stack([np.bincount((d + 1).astype(int), minlength=3) for d in prefixes])
    unique, inverse = np.unique(counts, axis=0, return_inverse=True)
    r_promote = exact_tails_from_counts(unique, 1, threshold)[inverse.ravel()]
    exceeds = counts[:, 2] > counts[:, 0]
    exact_actions = routine_actions(True, True, exceeds, r_promote, 1 - r_promote, tail_cutoff=cutoff)
    batched = time.perf_counter() - start

    start = time.perf_counter()
    single = np.array([tail_probabilities(d, threshold).r_promote for d in prefixes])
    one_by_one = time.perf_counter() - start

    mc_rng = np.random.default_rng(args.seed + 1)
    start = time.perf_counter()
    mc = np.array([tail_probabilities(d, threshold, method="bootstrap", n_resamples=200, rng=mc_rng).r_promote for d in prefixes])
    mc_actions = routine_actions(True, True, exceeds, mc, 1 - mc, tail_cutoff=cutoff)
    monte_carlo = time.perf_counter() - start

    n = args.prefixes
    print(f"prefixes: {n} from swebench_verified ({n_systems} systems, {n_tasks} tasks); distinct count rows: {len(unique)}")
    print(f"{'method':<28}{'seconds':>10}{'decisions/s':>14}{'vs MC B=200':>14}")
    for name, seconds in (
        ("exact, batched", batched),
        ("exact, one by one", one_by_one),
        ("Monte-Carlo B=200", monte_carlo),
    ):
        print(f"{name:<28}{seconds:>10.3f}{n / seconds:>14,.0f}{monte_carlo / seconds:>13.1f}x")
    print(f"exact batched == exact one by one: max |diff| = {np.abs(single - r_promote).max():.2e}")
    agree = float(np.mean(exact_actions == mc_actions))
    print(f"decisions agreeing between exact and MC B=200: {agree:.2%} (MC noise: sd of R at 0.05 is {np.sqrt(0.05 * 0.95 / 200):.4f})")


if __name__ == "__main__":
    main()
