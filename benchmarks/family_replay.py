"""Family replay on swebench_verified: realised FWER, FDR and power of ``none`` / ``fdr`` / ``fwer`` by budget (issue 32).

All 36 systems and 1,260 directed "A beats B" hypotheses (delta = 0) are replayed as one family along the per-pair
live replay's seeded uniform orders (the policy of ``benchmarks.live_replay``'s pooled design: uniform order, no
coverage rule, betting-wor, a = 0.05; each order shared by every pair), with a look after every task. Per budget
(the publication look of ``fdr``): the mean number of claims, the power (share of the truly positive directed pairs
claimed) and the realised FWER and FDR against the complete record's truth, with their standard errors; Bonferroni
on Ville's bound (cross at M/a) is printed beside ``fwer`` for reference.

The issue-32 target: ``fdr`` promotes >= 60 % of the truly positive pairs by 20 % of the tasks with realised FDR
<= a; ``fwer`` and ``none`` beside it (FWER <= a + 2 SE for ``fwer`` at every budget).

Speed: one look of the whole family (``decide_family`` on the first 20 % of a planned order, 1,260 hypotheses,
their capitals computed as one matrix) against a loop of per-pair ``decide`` calls measured in the same run on a
sample of pairs and scaled to all 1,260; and the complete-record leaderboard (``decide_family(complete=True)``
after reading the file, the work of ``stopwise leaderboard ... --complete``).

Usage: python -m benchmarks.family_replay [--orders 100] [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks._data import records_path
from stopwise import Policy
from stopwise.compare import decide, decide_family, order_universe, task_order
from stopwise.records import outcome_columns, read_outcomes
from stopwise.replay import prepare_source, replay_family
from stopwise.replay._report import markdown_table

UNIFORM = Policy.paper(order={"kind": "uniform"}, coverage={"rule": "none"}, decision={"boundary": "betting-wor"})
"""The per-pair live replay's pooled design (benchmarks.live_replay.UNIFORM)."""


def _speed(path: str, sample: int) -> None:
    frame = read_outcomes(path).to_frame()
    universe = order_universe(task_order(frame.drop_duplicates("task")[["task", "group"]], UNIFORM))  # `stopwise order`
    assert universe.tasks is not None
    seen = outcome_columns(frame[frame["task"].isin(universe.tasks[: universe.n_tasks // 5])])
    policy = UNIFORM
    start = time.perf_counter()
    record = decide_family(seen, policy=policy, universe=universe)
    family_seconds = time.perf_counter() - start
    systems = record.systems
    pairs = [(a, b) for a in systems for b in systems if a != b]
    chosen = np.random.default_rng(0).choice(len(pairs), sample, replace=False)
    start = time.perf_counter()
    for index in chosen:
        tested, baseline = pairs[index]
        decide(seen, tested, baseline, policy, universe=universe, forecast=False)
    loop_seconds = (time.perf_counter() - start) / sample * len(pairs)
    print(f"\none look of the family ({len(systems)} systems, {record.n_hypotheses:,} hypotheses, {record.look} tasks observed): "
          f"decide_family {family_seconds:.2f} s; per-pair decide loop {loop_seconds:.1f} s (measured on {sample} pairs, scaled to "
          f"{len(pairs):,}): ratio {loop_seconds / family_seconds:.0f}x")  # fmt: skip
    start = time.perf_counter()
    complete = decide_family(read_outcomes(path), complete=True)
    print(f"complete-record leaderboard (read + decide_family(complete=True)): {time.perf_counter() - start:.2f} s (target < 5 s); "
          f"{complete.claim}")
    print(f"  the price of e-values at one look: {complete.n_claims} of {complete.n_hypotheses:,} directed claims at FWER 5 % "
          f"(closed e-testing); exact one-sided McNemar tests with Holm's procedure: {_mcnemar_holm(frame, 0.05)}")


def _mcnemar_holm(frame, alpha: float) -> int:
    """Directed claims "A beats B" of exact one-sided McNemar (sign) tests on the discordant tasks, Holm at alpha."""
    from scipy.stats import binom

    table = frame.pivot_table(index="system", columns="task", values="outcome").to_numpy()
    wins = (table[:, None, :] > table[None, :, :]).sum(axis=2)
    discordant = wins + wins.T
    upper = ~np.eye(len(table), dtype=bool)
    p = np.sort(binom.sf(wins[upper] - 1, discordant[upper], 0.5))  # P(X >= wins) under P(win | discordant) = 1/2
    m = len(p)
    passes = p <= alpha / (m - np.arange(m))
    return m if passes.all() else int(np.argmin(passes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="20 orders and the budgets 10 %% and 20 %% only (about 10 s)")
    args = parser.parse_args()
    path = records_path("swebench_verified")
    source = prepare_source(read_outcomes(path), "swebench_verified")
    orders = 20 if args.quick else args.orders
    budgets = (0.1, 0.2) if args.quick else (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
    start = time.perf_counter()
    result = replay_family(source, UNIFORM, n_orders=orders, budgets=budgets)
    seconds = time.perf_counter() - start
    summary = result.summary
    first = summary.iloc[0]
    print(f"swebench_verified: {len(source.systems)} systems, {int(first['hypotheses']):,} directed hypotheses "
          f"({int(first['positives'])} truly positive), {orders} shared uniform orders, a look after every task: {seconds:.1f} s")  # fmt: skip
    print(markdown_table(result.table()))
    bound = float(first["bound"])
    fdr20 = summary[(summary["control"] == "fdr") & np.isclose(summary["budget"], 0.2)].iloc[0]
    fwer = summary[summary["control"] == "fwer"]
    met = fdr20["power"] >= 0.60 and fdr20["fdr"] <= UNIFORM.tail_cutoff
    print(f"\nissue 32 target: fdr promotes {fdr20['power']:.1%} of the truly positive pairs by 20 % of the tasks (>= 60 %) with "
          f"realised FDR {fdr20['fdr']:.2%} (<= 5 %): {'met' if met else 'NOT met'}")
    print(f"fwer: realised FWER at most {fwer['fwer'].max():.1%} over the budgets (a + 2 SE = {bound:.1%} at K = {orders}): "
          f"{'met' if (fwer['fwer'] <= bound).all() else 'NOT met'}")
    none = summary[summary["control"] == "none"]
    print("none (per-pair, uncontrolled): realised FWER " + ", ".join(f"{f:.1%} by {100 * b:g} %" for f, b in zip(none["fwer"], none["budget"], strict=True)))
    _speed(str(path), 20 if args.quick else 60)


if __name__ == "__main__":
    main()
