"""Replay speed: the full primary-policy grid on swebench_verified against the Monte-Carlo replay.

Target (issue 3): 1,260 directed pairs x 500 orders x 19 budgets x 3 thresholds (about 36 M
decisions) in under 30 s wall time and under 4 GiB peak memory on a 2-core machine.

Side by side in one run:

* stopwise replay     - ``replay_source_grid`` with exact bootstrap tails (the B -> infinity limit)
* Monte-Carlo replay  - the paper-faithful approach: for each decision, a fresh bootstrap of
  B = 200 resamples (``tail_probabilities(method="bootstrap")``), on a random subset of the same
  grid's decisions; its rate is extrapolated to the full grid.

Run: ``.venv/bin/python -m benchmarks.replay_speed [--orders 500] [--mc-decisions 3000] [--quick]``
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from benchmarks._data import records_path
from stopwise import Policy, read_outcomes, tail_probabilities
from stopwise.compare import budget_task_count, exceeds_threshold, routine_actions
from stopwise.replay import DEFAULT_BUDGETS, pair_orders, prepare_source, replay_source_grid

THRESHOLDS = (0.0, 0.05, 0.10)


def _peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=500)
    parser.add_argument("--mc-decisions", type=int, default=3000)
    parser.add_argument("--quick", action="store_true", help="5 orders, 100 Monte-Carlo decisions: seconds, for CI")
    args = parser.parse_args()
    if args.quick:
        args.orders, args.mc_decisions = 5, 100

    rows = read_outcomes(records_path("swebench_verified"))
    start = time.perf_counter()
    source = prepare_source(rows, "swebench_verified")
    prepared = time.perf_counter() - start
    policy = Policy.paper()
    rss_before = _peak_rss_gib()
    start = time.perf_counter()
    run = replay_source_grid(source, policy, policy_name="primary", thresholds=THRESHOLDS, n_orders=args.orders)
    wall = time.perf_counter() - start
    rss_peak = _peak_rss_gib()
    decisions = int(run.cases["orders"].sum())

    # Monte-Carlo replay on a random subset of the same decisions (same pairs, orders, budgets, thresholds)
    rng = np.random.default_rng(0)
    mc_rng = np.random.default_rng(1)
    picks = rng.integers(0, [len(source.pairs), args.orders, len(DEFAULT_BUDGETS), len(THRESHOLDS)], size=(args.mc_decisions, 4))
    by_task_set: dict[bytes, np.ndarray] = {}
    for pair_index in np.unique(picks[:, 0]):  # the orders are the replay's own, drawn before timing
        pair = source.pairs[pair_index]
        if pair.tasks.tobytes() not in by_task_set:
            by_task_set[pair.tasks.tobytes()] = pair_orders(source, pair, policy, args.orders)
    start = time.perf_counter()
    for pair_index, order, budget_index, threshold_index in picks:
        pair = source.pairs[pair_index]
        k = budget_task_count(pair.n_shared, float(DEFAULT_BUDGETS[budget_index]))
        prefix = pair.differences[by_task_set[pair.tasks.tobytes()][order, :k]]
        threshold = THRESHOLDS[threshold_index]
        tails = tail_probabilities(prefix, threshold, method="bootstrap", n_resamples=200, rng=mc_rng)
        routine_actions(True, True, exceeds_threshold(prefix, 1, threshold), tails.r_promote, tails.r_reject, tail_cutoff=0.05)
    mc_seconds = time.perf_counter() - start
    mc_rate = args.mc_decisions / mc_seconds

    print(f"source: swebench_verified, {len(source.pairs)} directed pairs x {args.orders} orders x {len(DEFAULT_BUDGETS)} budgets x {len(THRESHOLDS)} thresholds")
    print(f"prepare (read -> matrices, lattices): {prepared:.2f} s")
    print(f"{'method':<34}{'decisions':>14}{'seconds':>10}{'decisions/s':>14}")
    print(f"{'stopwise replay (exact tails)':<34}{decisions:>14,}{wall:>10.2f}{decisions / wall:>14,.0f}")
    print(f"{'Monte-Carlo replay, B=200 (subset)':<34}{args.mc_decisions:>14,}{mc_seconds:>10.2f}{mc_rate:>14,.1f}")
    print(f"Monte-Carlo replay of the full grid, extrapolated: {decisions / mc_rate / 3600:.1f} h")
    print(f"speed-up: {decisions / wall / mc_rate:,.0f}x decisions per second")
    print(f"peak resident memory: {rss_peak:.2f} GiB (before the replay: {rss_before:.2f} GiB); target < 4 GiB")
    print(f"wall time target < 30 s: {'met' if wall < 30 else 'NOT met'}")


if __name__ == "__main__":
    main()
