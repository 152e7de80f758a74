"""Decisions per second of the exact bootstrap tails against the Monte-Carlo bootstrap (B = 200), and the exact
distribution of the bootstrap mean (``TailProbabilities.distribution``), current code beside the baseline commit.

The same prefixes (random directed pair of swebench_verified, random task order, random prefix length on the
5 %..95 % grid) are decided in each version:

* exact, batched     - lattice counts of all prefixes, one exact convolution per distinct count row
* exact, one by one  - ``tail_probabilities(method="exact")`` per prefix
* Monte-Carlo B=200  - ``tail_probabilities(method="bootstrap", n_resamples=200)`` per prefix

and ``tail_probabilities(d).distribution()`` of ``--distribution`` seeded 0/±1 differences (the tails and the
distribution timed together: the current distribution reuses the tails' transform). Each figure is measured
on the current code and, in a subprocess of the same run, on the baseline commit's ``src`` (:mod:`benchmarks._baseline`,
``e974111``: before issue 31, whose ``distribution()`` convolved directly, quadratic in the support). The current code
alone then takes the distribution of ``--large`` differences (500,000: the baseline had not finished after 40 s).

Run: ``python -m benchmarks.decide_tails [--prefixes 10000] [--distribution 20000] [--large 500000] [--seed 0] [--quick]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks._baseline import BASELINE_REF, measure_side_by_side, strip_measure_flag
from benchmarks._data import records_path


def _differences(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).choice([-1.0, 0.0, 1.0], size=n, p=[0.2, 0.5, 0.3])


def _distribution_seconds(n: int, seed: int) -> tuple[float, float, float]:
    """Wall and CPU seconds of the exact tails and ``distribution()`` of n differences, and the pmf's total.

    The tails come first, as a caller has them (``tail_probabilities(d).distribution()``); the current code's
    distribution reuses their transform, so the two are timed together.
    """
    from stopwise import tail_probabilities

    d = _differences(n, seed)
    start, start_cpu = time.perf_counter(), time.process_time()
    _, pmf = tail_probabilities(d, 0.0).distribution()
    return time.perf_counter() - start, time.process_time() - start_cpu, float(pmf.sum())


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """CPU seconds of each way of deciding the prefixes (process time: the machine's 2 cores are shared), their
    agreement, and wall and CPU seconds of ``distribution()``, with this ``stopwise``."""
    from stopwise import read_outcomes, tail_probabilities
    from stopwise.compare import exact_tails_from_counts, routine_actions

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

    start = time.process_time()
    counts = np.stack([np.bincount((d + 1).astype(int), minlength=3) for d in prefixes])
    unique, inverse = np.unique(counts, axis=0, return_inverse=True)
    r_promote = exact_tails_from_counts(unique, 1, threshold)[inverse.ravel()]
    exceeds = counts[:, 2] > counts[:, 0]
    exact_actions = routine_actions(True, True, exceeds, r_promote, 1 - r_promote, tail_cutoff=cutoff)
    batched = time.process_time() - start

    start = time.process_time()
    single = np.array([tail_probabilities(d, threshold).r_promote for d in prefixes])
    one_by_one = time.process_time() - start

    mc_rng = np.random.default_rng(args.seed + 1)
    start = time.process_time()
    mc = np.array([tail_probabilities(d, threshold, method="bootstrap", n_resamples=200, rng=mc_rng).r_promote for d in prefixes])
    mc_actions = routine_actions(True, True, exceeds, mc, 1 - mc, tail_cutoff=cutoff)
    monte_carlo = time.process_time() - start
    wall, cpu, total = _distribution_seconds(args.distribution, args.seed)
    return {
        "shape": [n_systems, n_tasks, len(unique)],
        "exact, batched": batched,
        "exact, one by one": one_by_one,
        "Monte-Carlo B=200": monte_carlo,
        "max_diff": float(np.abs(single - r_promote).max()),
        "agree": float(np.mean(exact_actions == mc_actions)),
        "distribution": [wall, cpu, total],
    }


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--prefixes", type=int, default=10_000)
    parser.add_argument("--distribution", type=int, default=20_000, help="differences of the side-by-side distribution()")
    parser.add_argument("--large", type=int, default=500_000, help="differences of the current code's distribution() alone")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="500 prefixes, 5,000 and 50,000 differences: seconds, for CI")
    args = parser.parse_args(strip_measure_flag(argv))
    if args.quick:
        args.prefixes, args.distribution, args.large = min(args.prefixes, 500), min(args.distribution, 5_000), min(args.large, 50_000)
    load = os.getloadavg()[0]
    current, base = measure_side_by_side("benchmarks.decide_tails", measure, args, argv)
    n_systems, n_tasks, distinct = current["shape"]
    n = args.prefixes
    print(f"prefixes: {n} from swebench_verified ({n_systems} systems, {n_tasks} tasks); distinct count rows: {distinct}; "
          f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{'method (CPU seconds)':<28}{'current s':>11}{'decisions/s':>14}{'vs MC B=200':>13}{f'baseline {BASELINE_REF} s':>20}{'ratio':>8}")
    for name in ("exact, batched", "exact, one by one", "Monte-Carlo B=200"):
        seconds = current[name]
        print(f"{name:<28}{seconds:>11.3f}{n / seconds:>14,.0f}{current['Monte-Carlo B=200'] / seconds:>12.1f}x{base[name]:>20.3f}{base[name] / seconds:>7.1f}x")
    print(f"exact batched == exact one by one: max |diff| = {current['max_diff']:.2e}")
    print(f"decisions agreeing between exact and MC B=200: {current['agree']:.2%} (MC noise: sd of R at 0.05 is {np.sqrt(0.05 * 0.95 / 200):.4f})")
    (wall, cpu, total), (base_wall, base_cpu, _) = current["distribution"], base["distribution"]
    print(f"tail_probabilities(d).distribution() of {args.distribution:,} differences: current {wall:.3f} s wall ({cpu:.3f} s CPU), baseline {base_wall:.3f} s wall "
          f"({base_cpu:.3f} s CPU): {base_wall / wall:.1f}x wall, {base_cpu / max(cpu, 1e-9):.1f}x CPU; pmf total {total:.12f}")
    wall, cpu, total = _distribution_seconds(args.large, args.seed)
    print(f"tail_probabilities(d).distribution() of {args.large:,} differences, current code only: {wall:.3f} s wall ({cpu:.3f} s CPU), pmf total {total:.12f} "
          "(the baseline's direct convolution is quadratic in the support: it had not finished after 40 s at 500,000)")


if __name__ == "__main__":
    main()
