"""Calibration of the remaining-tasks forecast of ``continue`` records (issues 24, 33) on a real record.

For each sampled pair of systems (unordered; the tested one is the first by name) and each seeded uniformly
random order pi of the N planned tasks, the default policy with betting-wor (delta = 0, a = 0.05, the tolerant
coverage rule, the top-up design) runs on the real paired outcomes: the pooled process crosses at look tau (the
first look at which either test reaches 1/a) and the action comes when the crossing's top-up ends,
``top_up_ends(pi)[tau - 1]`` tasks (the stop a user who runs ``stopwise next``'s tasks experiences); N when no test
crosses. At each forecast look k < tau (a ``continue`` look whose forecast is simulated; from tau on the record
names its top-up tasks and the forecast is their number, exact) the forecast that :func:`stopwise.decide`
attaches (:func:`stopwise.compare._forecast.remaining_forecast` with the top-up simulated, seed ``policy.seed``,
200 completions) is computed from the first k outcomes and compared with the realised remaining tasks: the
share realised later than the median (the issue-33 target: 40-60 %), within a factor of 2 of it, inside its
10-90 % range, and for runs that never decide whether the forecast said most completions would not decide.
The forecast without the top-up (issue 24's, the action at the crossing) is printed beside it against the same
realised stops: it runs low.

    python -m benchmarks.forecast_calibration                        # 100 pairs x 2 orders, looks 25 / 50 / 100
    python -m benchmarks.forecast_calibration --pairs 0 --orders 2   # every pair
    python -m benchmarks.forecast_calibration --quick                # 15 pairs x 1 order, looks 25 / 50 (seconds)

SWE-bench Verified, 100 pairs x 2 orders (200 runs, seed 24; 98 % decide before N), share of continue looks whose
realised remaining tasks exceed the forecast median ("later"; 134 / 77 / 48 simulated looks at k = 25 / 50 / 100):

    rule           forecast                     k = 25   k = 50   k = 100
    tolerant       with the top-up (new)         43.3 %   45.5 %   47.9 %
    tolerant       at the crossing (issue 24)    56.7 %   48.1 %   47.9 %
    proportional   with the top-up (new)         40.3 %   45.5 %   47.9 %
    proportional   at the crossing (issue 24)    73.1 %   57.1 %   56.2 %

(``--rule proportional`` for the last two rows.) SWE-bench Lite (``--record swebench_lite``, 200 runs; 167 / 122 / 94
simulated looks), tolerant rule: 55.1 / 52.5 / 50.0 % with the top-up, 65.9 / 55.7 / 51.1 % at the crossing. The forecast at the crossing ran low because the top-up after the
crossing is part of the stop a user experiences; simulating it brings the median within the 40-60 % the issue
asks for, its 10-90 % range holding 71-83 % of the realised values.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np

from benchmarks._data import records_path
from stopwise.compare import betting_paths, top_up_ends
from stopwise.compare._forecast import TopUpPlan, remaining_forecast
from stopwise.records import Policy, read_outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", default="swebench_verified", help="a shared record's name")
    parser.add_argument("--pairs", type=int, default=100, help="pairs sampled (0: every pair)")
    parser.add_argument("--orders", type=int, default=2, help="random orders per pair")
    parser.add_argument("--looks", default="25,50,100", help="forecast looks k (tasks observed)")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--rule", default=None, help="coverage rule (default: the default policy's with betting-wor, tolerant)")
    parser.add_argument("--quick", action="store_true", help="15 pairs x 1 order at looks 25 and 50")
    args = parser.parse_args()
    if args.quick:
        args.pairs, args.orders, args.looks = 15, 1, "25,50"
    frame = read_outcomes(records_path(args.record)).to_frame()
    table = frame.pivot_table(index="task", columns="system", values="outcome", aggfunc="mean")
    systems = sorted(table.columns)
    values = table[systems].to_numpy(dtype=float)
    if np.isnan(values).any():
        raise SystemExit("the record has missing outcomes; this benchmark needs a complete record")
    group_of = frame.drop_duplicates("task").set_index("task")["group"].reindex(table.index).to_numpy(dtype=str)
    labels, task_codes = np.unique(group_of, return_inverse=True)
    sizes = np.bincount(task_codes, minlength=len(labels))
    big_n = values.shape[0]
    rng = np.random.default_rng(args.seed)
    pairs = list(itertools.combinations(range(len(systems)), 2))
    if args.pairs:
        pairs = [pairs[i] for i in sorted(rng.choice(len(pairs), size=min(args.pairs, len(pairs)), replace=False))]
    looks = [int(k) for k in args.looks.split(",")]
    policy = Policy.paper(**{"decision": {"boundary": "betting-wor"}, **({"coverage": {"rule": args.rule}} if args.rule else {})})
    rule, slack = policy.coverage.rule, policy.coverage.slack
    a = policy.tail_cutoff
    level = math.log(1.0 / a)
    runs, orders = [], []
    for i, j in pairs:
        d = values[:, i] - values[:, j]
        for _ in range(args.orders):
            order = rng.permutation(big_n)
            runs.append(d[order])
            orders.append(task_codes[order])
    x, codes = np.stack(runs), np.stack(orders)
    paths = betting_paths(x, policy.threshold, population_size=big_n, alpha=a)
    crossed = (np.maximum.accumulate(paths.log_promote, axis=1) >= level) | (np.maximum.accumulate(paths.log_reject, axis=1) >= level)
    decides = np.asarray(crossed.any(axis=1))
    tau = np.where(decides, np.argmax(crossed, axis=1) + 1, big_n)
    ends = top_up_ends(codes, sizes, rule=rule, slack=slack)
    stop = np.where(decides, ends[np.arange(len(runs)), tau - 1], big_n)
    print(f"{args.record}: N = {big_n}, {len(systems)} systems, {len(labels)} groups, {len(pairs)} pairs x {args.orders} orders = "
          f"{len(runs)} runs; {policy.coverage.rule} coverage rule (slack {policy.coverage.slack:g}), top-up design")
    print(f"runs that decide before N: {decides.mean():.1%}; median crossing look {np.median(tau):.0f}, median stop (after the "
          f"top-up) {np.median(stop):.0f}")
    header = f"{'look k':>7} {'forecast':>18} {'continuing':>10} {'later':>7} {'remaining x2':>13} {'in 10-90%':>10} {'undecided flagged':>18} {'ms/forecast':>12}"
    print(header)
    for k in looks:
        live = np.flatnonzero(tau > k)  # continue looks whose forecast is simulated (before the crossing)
        topping = int(((tau <= k) & (stop > k)).sum())
        for label, with_top_up in (("with top-up (new)", True), ("at the crossing", False)):
            within = inside = later = flagged = undecided = 0
            elapsed = 0.0
            for r in live:
                plan = TopUpPlan(codes[r], sizes, rule=rule, slack=slack) if with_top_up else None
                start = time.perf_counter()
                f = remaining_forecast(x[r, :k], policy=policy, population_size=big_n, limit_tasks=big_n, seed=policy.seed, top_up=plan)
                elapsed += time.perf_counter() - start
                assert f is not None
                realised = max(int(stop[r]) - k, 1)
                median = max(f.median, 1.0)
                within += median / 2 <= realised <= 2 * median
                later += realised > median
                inside += f.low <= realised <= f.high
                if not decides[r]:
                    undecided += 1
                    flagged += f.decided_share < 0.5
            n_live = max(len(live), 1)
            print(
                f"{k:>7} {label:>18} {len(live):>10} {later / n_live:>7.1%} {within / n_live:>13.1%} {inside / n_live:>10.1%} "
                f"{flagged:>8} of {undecided:<6} {1000 * elapsed / n_live:>12.1f}"
            )
        print(f"{'':>7} {'':>18} ({topping} runs at look {k} wait for their top-up: forecast exact, its number of tasks)")
    print(
        "later: realised remaining tasks > the forecast median (unbiased: about half; issue 33 target 40-60 %); "
        "remaining x2: within a factor of 2 of the median; in 10-90%: inside the forecast's range; undecided flagged: "
        "runs that never decide whose forecast gave decided_share < 0.5"
    )


if __name__ == "__main__":
    main()
