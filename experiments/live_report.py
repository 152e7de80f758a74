"""Write docs/live_looks.md: the betting boundary against the fixed-budget rule under repeated looks.

Every shared record in ../shared/data/records is replayed with a look after every task
(:func:`stopwise.replay.replay_source_looks`): the betting-wor boundary (uniform orders, pooled process, all
directed pairs, 500 orders by default, thresholds 0 / 5 / 10 pp) and the paper's fixed-budget rule re-declared
at every look (looks every 5 % of the tasks; exact bootstrap tails). The coverage-aware primary order
with the stratified process and the coverage rule is replayed on a random subsample of pairs (it is
~7x more expensive per look). On swebench_verified the other bets (max, horizon, aGRAPA, plug-in) are
also replayed, to show what the default mixture bet buys, and the one-look sign-test ceiling of
"resolved by b" is computed on every win/tie/loss record (benchmarks/live_replay.py).

Usage: python -m experiments.live_report [--orders 500] [--stratified-pairs 60] [--stratified-orders 100]
       [--jobs 2] [--doc docs/live_looks.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
from benchmarks._data import records_path
from benchmarks.live_replay import one_look_ceiling

from stopwise import Policy
from stopwise.records import read_outcomes
from stopwise.replay import prepare_source, replay_source_looks
from stopwise.replay._live import plot_live, summary_table
from stopwise.replay._report import markdown_table

RECORDS = ["swebench_verified", "swebench_verified_bashonly", "swebench_lite", "terminal_bench_1_5", "terminal_bench_2"]
UNIFORM = Policy.model_validate({"order": {"kind": "uniform"}, "coverage": {"rule": "none"}, "decision": {"boundary": "betting-wor"}})
PRIMARY = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "betting": {"design": "stratified"}})
"""The coverage-aware order and its stratified process (the primary policy's betting design before top-up)."""


def _wrong_quantiles(pairs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (source, policy, rule, threshold), block in pairs.groupby(["source", "policy", "rule", "threshold"], sort=False):
        rates = block["wrong_rate"].to_numpy()
        rows.append(
            {
                "source": source,
                "policy": policy,
                "rule": rule,
                "δ": f"{100 * threshold:g} pp",
                "pairs": len(rates),
                "median": f"{100 * np.median(rates):.1f}%",
                "90th pct": f"{100 * np.percentile(rates, 90):.1f}%",
                "99th pct": f"{100 * np.percentile(rates, 99):.1f}%",
                "max": f"{100 * rates.max():.1f}%",
                "pairs > a + 2 SE": int((rates > block["bound"].to_numpy() + 1e-12).sum()),
                "a + 2 SE": f"{100 * block['bound'].iloc[0]:.2f}%",
            }
        )
    return pd.DataFrame(rows)


def _worst(pairs: pd.DataFrame, rule: str, k: int = 5) -> pd.DataFrame:
    part = pairs[(pairs["rule"] == rule) & (pairs["threshold"] == 0.0)]
    top = part.sort_values("wrong_rate", ascending=False, kind="stable").groupby("source", sort=False).head(k)
    return pd.DataFrame(
        {
            "source": top["source"],
            "tested": top["tested"],
            "baseline": top["baseline"],
            "Δ_full": top["delta_full"].map(lambda v: f"{100 * v:+.1f} pp"),
            "wrong": top["wrong_rate"].map(lambda v: f"{100 * v:.1f}%"),
            "promote / reject / unresolved": [f"{p} / {r} / {u}" for p, r, u in zip(top["promote"], top["reject"], top["unresolved"], strict=True)],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=500)
    parser.add_argument("--stratified-pairs", type=int, default=60)
    parser.add_argument("--stratified-orders", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--doc", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "live_looks.md")
    args = parser.parse_args()
    started = time.perf_counter()
    uniform, stratified, strategies = [], [], []
    ceilings: list[dict[str, object]] = []
    for name in RECORDS:
        source = prepare_source(read_outcomes(records_path(name)), name)
        t0 = time.perf_counter()
        uniform.append(replay_source_looks(source, UNIFORM, n_orders=args.orders, n_jobs=args.jobs, policy_name="uniform"))
        rng = np.random.default_rng(0)
        chosen = sorted(rng.choice(len(source.pairs), min(args.stratified_pairs, len(source.pairs)), replace=False))
        sub = dataclasses.replace(source, pairs=[source.pairs[i] for i in chosen])
        stratified.append(
            replay_source_looks(sub, PRIMARY, thresholds=[0.0], n_orders=args.stratified_orders, n_jobs=args.jobs, policy_name="coverage-aware")
        )
        if name == "swebench_verified":
            for strategy in ("max", "horizon", "agrapa", "plug-in"):
                strategies.append(
                    replay_source_looks(
                        source, UNIFORM, thresholds=[0.0], n_orders=args.orders, rules=["betting-wor"], strategy=strategy, n_jobs=args.jobs,
                        policy_name=f"uniform, {strategy} bet",
                    )
                )
        ceiling = {"source": name, "10 %": one_look_ceiling(source, args.orders, 0.1), "20 %": one_look_ceiling(source, args.orders, 0.2)}
        ceilings.append({k: v if isinstance(v, str) else ("—" if math.isnan(v) else f"{100 * v:.1f}%") for k, v in ceiling.items()})
        print(f"{name}: {len(source.pairs)} pairs in {time.perf_counter() - t0:.0f} s", flush=True)
    u_pairs = pd.concat([r.pairs for r in uniform], ignore_index=True)
    u_summary = pd.concat([r.summary for r in uniform], ignore_index=True)
    u_curve = pd.concat([r.curve for r in uniform], ignore_index=True)
    s_pairs = pd.concat([r.pairs for r in stratified], ignore_index=True)
    s_summary = pd.concat([r.summary for r in stratified], ignore_index=True)
    k_summary = pd.concat([u_summary[(u_summary["source"] == "swebench_verified") & (u_summary["rule"] == "betting-wor") & (u_summary["threshold"] == 0.0)]]
                          + [r.summary for r in strategies], ignore_index=True)  # fmt: skip
    k_summary.loc[0, "policy"] = "uniform, mixture bet (default)"
    figure = args.doc.with_name("live_looks_resolved.png")
    plot_live(u_curve, figure)
    verified = u_summary[(u_summary["source"] == "swebench_verified") & (u_summary["threshold"] == 0.0)].set_index("rule")
    bet, fix = verified.loc["betting-wor"], verified.loc["fixed-budget"]
    bound = args.orders
    elapsed = time.perf_counter() - started
    lines = [
        "# Live looks: the betting boundary against the fixed-budget rule under repeated looks",
        "",
        f"Produced by `python -m experiments.live_report --orders {args.orders} --stratified-orders {args.stratified_orders}` "
        f"({elapsed / 60:.0f} min on the shared 2-core machine) from every record in "
        "`../shared/data/records`. Do not edit by hand.",
        "",
        "Each directed pair of a completed record is replayed along task orders with a **look after every task**; the run stops",
        "at the first promote or reject. Two rules:",
        "",
        "* **betting-wor** — the anytime-valid paired betting boundary (`stopwise.compare.betting_boundary`; default bet",
        "  `auto`: under uniform orders the *mixture*, the average of the capitals of the max(aGRAPA, plug-in) bet (c = 0.6)",
        "  and of the max(aGRAPA, horizon-tuned plug-in) bet (h = 0.1, c = 0.7); the stratified process bets max(aGRAPA,",
        "  plug-in)): valid at every look, per action, at level a = 0.05.",
        "* **fixed-budget** — the paper's primary rule (exact bootstrap tails, a = 0.05) *re-declared at every look*",
        "  (looks every 5 % of the tasks): the only way to stop early with a fixed-budget rule. It is valid for one look only.",
        "",
        "A decision is **wrong** when it is the opposite of the complete record's truth, defined as in the budget-grid replay",
        "(ParEvalLayer section IV-A): the pair is positive iff Δ_full > δ on the complete shared task set; a promote of a",
        "non-positive pair or a reject of a positive pair is wrong. The betting guarantee is per pair: wrong rate ≤ a, checked",
        f"against a + 2 SE with SE = sqrt(a(1 − a)/K) over the K orders ({100 * (0.05 + 2 * math.sqrt(0.0475 / bound)):.2f} % at K = {bound}).",
        "*Resolved by b* is the share of (pair, order) runs with a final action once b of the tasks are observed (pairs",
        "weighted equally); stopping-time quartiles pool every run and count an unresolved run as using all tasks.",
        "",
        f"## Issue 9 targets on swebench_verified (uniform orders, 0 pp, {args.orders} orders)",
        "",
        "`python -m benchmarks.live_replay` gives the same figures at 500 orders for the betting boundary, with its timing.",
        "",
        f"* every pair's wrong-decision rate ≤ a + 2 SE: **{'met' if bet['pairs_over_bound'] == 0 else 'NOT met'}** — "
        f"{bet['pairs_over_bound']} of {bet['pairs']} pairs above the bound; mean {100 * bet['mean_wrong_rate']:.2f} %, "
        f"max {100 * bet['max_wrong_rate']:.1f} % (fixed-budget re-declared at every look: {fix['pairs_over_bound']} pairs above, "
        f"max {100 * fix['max_wrong_rate']:.1f} %).",
        f"* resolved by 20 % of the tasks: **{100 * bet['resolved_20']:.1f} %** (target ≥ 66 %: "
        f"{'met' if bet['resolved_20'] >= 0.66 else 'NOT met'}; stretch ≥ 75 %: {'met' if bet['resolved_20'] >= 0.75 else 'not met'}); "
        f"by 10 %: {100 * bet['resolved_10']:.1f} %. The fixed-budget rule re-declared at every look resolves "
        f"{100 * fix['resolved_20']:.1f} % by 20 %, without a guarantee.",
        f"* the ceiling: a rule valid at every look that has resolved a run by b N tasks has, in particular, taken a level-a "
        f"decision at the single look b N, so no such rule can resolve more than the most powerful one-look test at b N. "
        f"For win/tie/loss differences that is (up to the finite-population correction) the randomized sign test on the "
        f"discordant tasks, each direction at level a: on the same orders it resolves {ceilings[0]['20 %']} by 20 % and "
        f"{ceilings[0]['10 %']} by 10 % on swebench_verified. The stretch target of 75 % lies at this ceiling, so no "
        "anytime-valid rule can reach it; the betting boundary's shortfall from the ceiling is the price of being valid at "
        "every look rather than at one.",
        "",
        "## All records, uniform orders (pooled process), all directed pairs",
        "",
        markdown_table(summary_table(u_summary)),
        "",
        "![resolved by budget](live_looks_resolved.png)",
        "",
        "## Per-pair wrong-decision rates (distribution over directed pairs)",
        "",
        markdown_table(_wrong_quantiles(u_pairs)),
        "",
        "## Betting strategies on swebench_verified (0 pp, uniform orders)",
        "",
        "Any predictable bet keeps the guarantee, and so does the average of several capital processes (itself a test",
        "supermartingale, at full a: no alpha is split). `max` bets the larger of the aGRAPA (Kelly) bet and the predictable",
        "plug-in bet sqrt(2 log(1/a) / (σ̂² t log(1 + t))) of Waudby-Smith & Ramdas (2023); `horizon` replaces the plug-in's",
        "time scale by the horizon H = 0.1 N up to H (the fixed-n plug-in of the same paper, tuned to n = H) and by",
        "t log(1 + t) / log(1 + H) after it; the default `mixture` averages the two capitals.",
        "",
        markdown_table(summary_table(k_summary)),
        "",
        "### How the default bet was chosen (not on this record)",
        "",
        "The bet was chosen before this page was produced, on swebench_lite and swebench_verified_bashonly (100 uniform",
        "orders, 0 pp; share of runs resolved by 10 / 20 / 50 % of the tasks), never on swebench_verified's replay outcomes:",
        "",
        "| bet | swebench_lite | swebench_verified_bashonly |",
        "|---|---|---|",
        "| max(aGRAPA, plug-in), c = 0.6 (previous default) | 25.8 / 46.5 / 67.0 % | 45.6 / 61.7 / 78.8 % |",
        "| max(aGRAPA, horizon plug-in), h = 0.1, c = 0.7 | 28.1 / 48.0 / 66.1 % | 47.9 / 62.8 / 77.3 % |",
        "| same with a constant bet after H | 28.1 / 48.2 / 66.7 % | 47.9 / 63.6 / 76.5 % |",
        "| **mixture of the first two (default)** | **28.0 / 47.4 / 66.7 %** | **47.3 / 62.4 / 78.4 %** |",
        "| mixture of horizon bets at h = 0.05 and 0.2 | 27.9 / 47.8 / 66.5 % | 46.9 / 62.5 / 78.3 % |",
        "",
        "Also tried at 20 %: aGRAPA alone 41.0 % and plug-in alone 43.5 % (lite); an average over a grid of 10 constant bets",
        "(dKelly) 43.9 %; online Newton step 39.8 %; the mixture of aGRAPA and plug-in capitals 42.1 %; the constant Kelly",
        "bet known in hindsight 42.6 % (lite) and 59.7 % (bashonly). For the horizon bet, c = 0.8 resolves more by 10 % and",
        "about as many by 20 % (+0.6 pp lite, -1.0 pp bashonly), c = 0.9-0.95 fewer by 20 %; variance priors of 0.25",
        "instead of 1 change little. A horizon-tuned bet moves resolution earlier at the",
        "price of later looks; averaging it with the previous default keeps most of the early gain and almost all of the",
        "later resolution. The one-look sign-test ceilings by 10 % / 20 %:",
        "",
        markdown_table(pd.DataFrame(ceilings)),
        "",
        f"## Coverage-aware order with the coverage rule: stratified process ({args.stratified_pairs} random pairs per record, "
        f"{args.stratified_orders} orders, 0 pp)",
        "",
        "Under the coverage-aware order the pooled process is not valid when group means differ; the stratified process",
        "(per-group empirical-Bernstein factors, infimum over the group means by an exact knapsack) is, but it is",
        "conservative: it resolves later than the pooled process under uniform orders. Where the loss comes from, on a",
        "typical swebench_lite pair (Δ = +12 pp) after 20 % of the tasks (median log-capital over orders): pooled betting",
        "3.6; per-group empirical-Bernstein factors evaluated at the true group means 1.7 (the EB factor's quadratic penalty",
        "and its bet cap of 1/2); after the knapsack infimum over the null 0.5, because the per-group coefficients",
        "C_g / w_g differ across groups (15-30: small groups are drawn in lumps by the coverage-aware order) and the",
        "infimum moves the unseen mass of the groups with the largest coefficient. Its default bet stays max(aGRAPA,",
        "plug-in): on swebench_verified_bashonly (coverage-aware orders, 117 pairs x 50 orders) the mixture, an average",
        "with a second process of smaller bets (c = 0.4) or the Bernstein-Kelly bet Δ / (σ² + 2Δ) resolved no more by 20 %",
        "(35.3 % for max; 34.4 %, 34.1 %, 35.3 %), and on swebench_lite scaling each draw's bet by its group's sampling",
        "share (to even out C_g / w_g) resolved fewer (11.5 % against 15.1 %).",
        "",
        markdown_table(summary_table(s_summary)),
        "",
        markdown_table(_wrong_quantiles(s_pairs)),
        "",
        "## Worst pairs of the fixed-budget rule re-declared at every look (uniform orders, 0 pp)",
        "",
        markdown_table(_worst(u_pairs, "fixed-budget")),
        "",
        "## Reproduce",
        "",
        "```",
        "python -m experiments.live_report            # this page",
        "stopwise replay ../shared/data/records/swebench_verified/outcomes.csv --looks every --policies betting-uniform \\",
        "    --thresholds 0 --jobs 2 -o out/live       # the same replay for one record, with per-pair tables",
        "python -m experiments.betting_null_simulation  # the null simulation of issue 9",
        "```",
        "",
    ]
    args.doc.write_text("\n".join(lines))
    print(f"wrote {args.doc} and {figure} in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
