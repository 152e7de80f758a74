"""Speed and "done when" figures of the live-look replay on the full swebench_verified grid.

1,260 directed pairs x 500 orders x a look after every task (N = 500), delta = 0, the betting-wor
boundary under uniform orders (pooled process). Prints the wall time, looks per second, the ratio
against a per-decision Python loop of the scalar :func:`stopwise.compare.betting_boundary`
(p-values only, ``confidence_bounds=False``, as decide calls it) on a small subsample measured in
the same run, and the issue-9 targets: every pair's wrong-decision rate <= a + 2 SE and the share
of (pair, order) runs resolved by 20 % of the tasks (>= 66 %, stretch 75 %). With ``--strategies``
the same grid is replayed with the other bets (``max``, the previous default; ``horizon``; aGRAPA and
the predictable plug-in alone); with ``--stratified`` the coverage-aware primary order with the
stratified process is timed on a subsample of pairs.

Issue 21: the primary policy's coverage rule with ``betting-wor`` runs the top-up design by default (the
pooled process on uniform orders pi; once it crosses, the fewest tasks that meet coverage, then the
action). It is replayed on the same uniform orders as the pooled process (same seed: the same pi) and
printed beside it, with the "done when" targets (>= 62 % resolved by 20 %, no pair above a + 2 SE, under
60 s) and a check that coverage holds at the end of the top-up after every crossing look of every order;
the stratified design (coverage-aware orders) is replayed on all pairs with ``--stratified-orders``
orders (default 100; 0 skips it).

An estimated ceiling is printed beside the resolution figures: "resolved by b" of any procedure valid at
every look is a level-a test at the single look b N (reject iff the boundary was crossed by then), so it
cannot resolve more than the most powerful level-a one-look test at b N. The figure printed is the
randomized one-sided sign test on the discordant tasks (each direction at level a, as the two betting
tests), evaluated on the same orders: most powerful only among unbiased tests under a with-replacement
model, so an estimate of the ceiling, not a bound (a per-pair test exact under sampling without
replacement can resolve slightly more: see docs/live_looks.md).

Usage: python -m benchmarks.live_replay [--orders 500] [--jobs 2] [--strategies] [--stratified] [--stratified-orders 100]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time

import numpy as np

from benchmarks._data import records_path
from stopwise import Policy
from stopwise.compare import betting_boundary, required_counts
from stopwise.compare._topup import top_up_ends
from stopwise.records import read_outcomes
from stopwise.replay import pair_orders, prepare_source, replay_source_looks

UNIFORM = Policy.model_validate({"order": {"kind": "uniform"}, "coverage": {"rule": "none"}, "decision": {"boundary": "betting-wor"}})
PRIMARY = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
"""The primary policy with betting-wor: coverage rule, top-up design (the default)."""
STRATIFIED = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "betting": {"design": "stratified"}})
"""The primary policy with betting-wor and the stratified design (coverage-aware orders, per-group process)."""


def coverage_after_top_up(source, n_orders: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(entries checked, entries failing): for every order pi (the replay's uniform orders) and every crossing look
    tau, the observed set after the top-up -- pi's first tau tasks plus each short group's missing tasks -- has
    ``end`` tasks and meets the coverage rule at ``end`` (r_g recomputed here from required_counts)."""
    checked = failing = 0
    done: set[bytes] = set()
    for pair in source.pairs:
        key = pair.tasks.tobytes()
        if key in done:
            continue
        done.add(key)
        labels, codes = np.unique(source.groups[pair.tasks], return_inverse=True)
        sizes = np.bincount(codes, minlength=len(labels))
        ordered = codes[pair_orders(source, pair, UNIFORM, n_orders)]
        ends = top_up_ends(ordered, sizes)
        for lo in range(0, len(ordered), 50):
            block, end = ordered[lo : lo + 50], ends[lo : lo + 50]
            counts = np.cumsum(block[..., None] == np.arange(len(sizes)), axis=1)  # (K, N, G) at tau = index + 1
            need = required_counts(sizes, end)  # (K, N, G) at the end of the top-up
            after = np.maximum(counts, need)  # the top-up adds exactly each group's shortfall
            ok = (after.sum(axis=-1) == end) & (after >= need).all(axis=-1) & (need.sum(axis=-1) <= end)
            checked += ok.size
            failing += int((~ok).sum())
    return checked, failing


def _loop_seconds_per_look(source, policy: Policy, n_looks: int) -> float:  # type: ignore[no-untyped-def]
    """Per-decision Python loop: one scalar betting_boundary call per look of one (pair, order)."""
    pair = source.pairs[0]
    order = pair_orders(source, pair, policy, 1)[0]
    d = pair.differences[order]
    stratified = policy.order.kind != "uniform"
    groups = source.groups[pair.tasks][order]
    labels, counts = np.unique(groups, return_counts=True)
    sizes = dict(zip(labels.tolist(), counts.tolist(), strict=True)) if stratified else None
    start = time.perf_counter()
    for k in range(1, n_looks + 1):
        b = betting_boundary(
            d[:k], 0.0, population_size=pair.n_shared, alpha=policy.tail_cutoff, groups=groups[:k] if stratified else None,
            group_sizes=sizes, confidence_bounds=False,
        )  # fmt: skip
        if b.promote or b.reject:
            pass
    return (time.perf_counter() - start) / n_looks


def _sign_test_rejects(count: np.ndarray, discordant: np.ndarray, alpha: float) -> np.ndarray:
    """Rejection probability of the randomized one-sided sign test (H0: P(win) <= 1/2 among discordant tasks)."""
    from scipy.stats import binom

    above = binom.sf(count, discordant, 0.5)  # P(X > count)
    at = binom.pmf(count, discordant, 0.5)
    gamma = (alpha - above) / np.where(at > 0, at, 1.0)
    return np.where(above + at <= alpha, 1.0, np.where(above < alpha, gamma, 0.0))


def one_look_ceiling(source, n_orders: int, fraction: float) -> float:  # type: ignore[no-untyped-def]
    """Mean over pairs of the power of the randomized UMP-unbiased sign test (each direction at level a) at the
    single look ceil(fraction N), on the replay's uniform orders (lattice-1 pairs only; NaN otherwise)."""
    if any(p.lattice != 1 for p in source.pairs):
        return float("nan")
    alpha = UNIFORM.tail_cutoff
    orders: dict[bytes, np.ndarray] = {}
    powers = []
    for pair in source.pairs:
        key = pair.tasks.tobytes()
        if key not in orders:
            orders[key] = pair_orders(source, pair, UNIFORM, n_orders)
        k = math.ceil(fraction * pair.n_shared - 1e-9)
        prefix = pair.differences[orders[key][:, :k]]
        wins, losses = (prefix > 0).sum(axis=1), (prefix < 0).sum(axis=1)
        power = _sign_test_rejects(wins, wins + losses, alpha) + _sign_test_rejects(losses, wins + losses, alpha)
        powers.append(np.minimum(1.0, power).mean())
    return float(np.mean(powers))


def _report(label: str, live, seconds: float, cpu: float, looks: int, loop_per_look: float | None, target: str = ">= 66 %, stretch 75 %") -> None:  # type: ignore[no-untyped-def]
    row = live.summary.iloc[0]
    pairs = live.pairs
    orders = int(pairs["orders"].iloc[0])
    se = math.sqrt(0.05 * 0.95 / orders)
    print(f"\n{label}")
    print(f"  wall time {seconds:.1f} s (target < 60 s), process CPU time {cpu:.1f} s, for {looks:,} looks: {looks / seconds / 1e6:.2f} M looks/s")
    if loop_per_look is not None:
        print(f"  per-decision loop of betting_boundary: {loop_per_look * 1e3:.2f} ms per look -> {looks * loop_per_look / 3600:.1f} h; "
              f"ratio {looks * loop_per_look / seconds:,.0f}x")
    print(f"  wrong-decision rate per pair: mean {row['mean_wrong_rate']:.3%}, max {row['max_wrong_rate']:.2%}; pairs above a + 2 SE "
          f"({pairs['bound'].iloc[0]:.2%}, SE = {se:.2%} over {orders} orders): {row['pairs_over_bound']} of {row['pairs']}")
    print(f"  resolved by 10 %: {row['resolved_10']:.1%}; by 20 %: {row['resolved_20']:.1%} (target {target}); "
          f"unresolved at N: {row['unresolved']:.2%}")
    print(f"  stopping time (fraction of tasks) quartiles: {row['stop_q25']:.2f} / {row['stop_q50']:.2f} / {row['stop_q75']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=500)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--strategies", action="store_true", help="also replay the aGRAPA and plug-in bets alone")
    parser.add_argument("--stratified", action="store_true", help="also time the stratified process (coverage-aware order) on 60 pairs")
    parser.add_argument("--stratified-orders", type=int, default=100, help="orders of the stratified design on all pairs (0: skip)")
    args = parser.parse_args()
    source = prepare_source(read_outcomes(records_path("swebench_verified")), "swebench_verified")
    n = source.pairs[0].n_shared
    looks = len(source.pairs) * args.orders * n
    print(f"swebench_verified: {len(source.pairs)} directed pairs x {args.orders} orders x {n} looks = {looks:,} looks; "
          f"{args.jobs} threads (2-core machine shared with other sessions: figures are under contention)")
    loop = _loop_seconds_per_look(source, UNIFORM, 200)
    for strategy in ["auto", *(["max", "horizon", "agrapa", "plug-in"] if args.strategies else [])]:
        start, cpu = time.perf_counter(), time.process_time()
        live = replay_source_looks(source, UNIFORM, thresholds=[0.0], n_orders=args.orders, rules=["betting-wor"], strategy=strategy, n_jobs=args.jobs)
        used = live.pairs["method"].iloc[0]
        _report(f"{used}, uniform orders, bet = {strategy}", live, time.perf_counter() - start, time.process_time() - cpu, looks, loop)
    # issue 21: the primary policy's coverage rule with betting-wor, top-up design, on the same uniform orders
    start, cpu = time.perf_counter(), time.process_time()
    live = replay_source_looks(source, PRIMARY, thresholds=[0.0], n_orders=args.orders, rules=["betting-wor"], n_jobs=args.jobs)
    used = live.pairs["method"].iloc[0]
    _report(f"{used}: primary policy (coverage rule), the same uniform orders as above", live, time.perf_counter() - start,
            time.process_time() - cpu, looks, None, target=">= 62 %")  # fmt: skip
    checked, failing = coverage_after_top_up(source, args.orders)
    print(f"  coverage at the final action: met at the end of the top-up after every crossing look of every order "
          f"({checked:,} (order, look) entries, {failing} failing)")
    if args.stratified_orders:
        start, cpu = time.perf_counter(), time.process_time()
        live = replay_source_looks(source, STRATIFIED, thresholds=[0.0], n_orders=args.stratified_orders, rules=["betting-wor"], n_jobs=args.jobs)
        s_looks = len(source.pairs) * args.stratified_orders * n
        _report(f"{live.pairs['method'].iloc[0]}: primary policy, [betting] design = stratified (coverage-aware orders, "
                f"{args.stratified_orders} orders)", live, time.perf_counter() - start, time.process_time() - cpu, s_looks, None,
                target="none; the design top-up replaces")  # fmt: skip
    ceiling_10, ceiling_20 = (one_look_ceiling(source, args.orders, b) for b in (0.1, 0.2))
    print(f"\nestimated ceiling (randomized UMP-unbiased sign test at one look, each direction at a, same orders): resolved "
          f"{ceiling_10:.1%} at 10 %, {ceiling_20:.1%} at 20 % (an estimate of what a one-look test can resolve, not a bound)")
    if args.stratified:
        rng = np.random.default_rng(0)
        sub = dataclasses.replace(source, pairs=[source.pairs[i] for i in rng.choice(len(source.pairs), 60, replace=False)])
        sub_looks = len(sub.pairs) * args.orders * n
        loop_s = _loop_seconds_per_look(sub, STRATIFIED, 50)
        start, cpu = time.perf_counter(), time.process_time()
        live = replay_source_looks(sub, STRATIFIED, thresholds=[0.0], n_orders=args.orders, rules=["betting-wor"], n_jobs=args.jobs)
        seconds = time.perf_counter() - start
        _report("betting-wor, coverage-aware orders + coverage rule, stratified process (60 random pairs)", live, seconds, time.process_time() - cpu, sub_looks, loop_s)


if __name__ == "__main__":
    main()
