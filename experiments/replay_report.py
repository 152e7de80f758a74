"""Reproduce the ParEvalLayer evaluation on every record in ../shared/data/records.

Writes ``docs/replay_reproduction.md`` (our Table I and Table II beside the paper's, the
section V-B and V-C checks) and the figures ``docs/replay/*.png``; the per-pair decision records and
summaries of every run go to ``--out`` (default ``out/replay_report``, not committed).

Run: ``.venv/bin/python -m experiments.replay_report [--orders 500] [--out out/replay_report]``
(about ten minutes on a 2-core machine with the default 500 orders).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from benchmarks._data import records_path

from experiments._figures import plot_unresolved
from stopwise import Policy, read_outcomes
from stopwise.replay import ReplayResult, replay_grid, table_two
from stopwise.replay._report import markdown_table

REPO = Path(__file__).resolve().parents[1]
TASK_SOURCES = ["swebench_lite", "swebench_verified", "swebench_verified_bashonly", "terminal_bench_2", "terminal_bench_1_5"]
POLICIES = ["primary", "forced-uniform", "forced-group-aware", "paired-normal", "serfling", "neyman"]

PAPER_TABLE_ONE = pd.DataFrame(
    [
        ("SWE-bench Lite", "552 (276)", 300, 275, 199, 154),
        ("SWE-bench Verified", "156 (78)", 496, 77, 60, 54),
        ("AppWorld", "306 (153)", 585, 153, 128, 108),
        ("OSWorld-Verified", "56 (28)", 359, 28, 27, 21),
        ("tau-bench", "12 (6)", 278, 6, 5, 2),
    ],
    columns=["Source (paper)", "Pairs", "Task units", "Pos. 0 pp", "Pos. 5 pp", "Pos. 10 pp"],
)
PAPER_TABLE_TWO = pd.DataFrame(
    [
        ("AppWorld", "15%", "15%", "15%", "20.60% [17.17, 23.86]"),
        ("OSWorld-Verified", "20%", "20%", "30%", "23.61% [16.19, 31.03]"),
        ("tau-bench", "25%", "30%", "35%", "23.35% [7.25, 43.84]"),
        ("SWE-bench Verified", "90%", "90%", "90%", "24.22% [20.36, 28.33]"),
        ("SWE-bench Lite", "none by 95%", "55%", "35%", "27.25% [24.35, 30.29]"),
    ],
    columns=["Source (paper)", "0 pp", "5 pp", "10 pp", "0 pp unresolved interval"],
)


def _pct(value: float) -> str:
    return "—" if not np.isfinite(value) else f"{100 * value:.2f}%"


def _row(summary: pd.DataFrame, **where: object) -> pd.Series:
    mask = np.ones(len(summary), dtype=bool)
    for column, value in where.items():
        mask &= np.isclose(summary[column], value) if isinstance(value, float) else (summary[column] == value).to_numpy()
    rows = summary[mask]
    if len(rows) != 1:
        raise LookupError(f"{len(rows)} summary rows for {where}")
    return rows.iloc[0]


def _run(label: str, records: dict[str, pd.DataFrame], out: Path, **kwargs: object) -> ReplayResult:
    start = time.perf_counter()
    kwargs.setdefault("policy", Policy.paper())  # a reproduction: the paper's primary policy (Policy() is exact-wor since issue 35)
    result = replay_grid(records, **kwargs)  # type: ignore[arg-type]
    result.write(out / label, force=True)  # the benchmark replaces its own earlier output
    print(f"{label}: {int(result.cases['orders'].sum()):,} decisions in {time.perf_counter() - start:.1f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=500)
    parser.add_argument("--out", type=Path, default=REPO / "out" / "replay_report")
    args = parser.parse_args()
    docs = REPO / "docs"
    figures = docs / "replay"
    figures.mkdir(parents=True, exist_ok=True)
    records = {name: read_outcomes(records_path(name)).to_frame() for name in TASK_SOURCES}
    k = args.orders
    bash = records["swebench_verified_bashonly"]
    costed = bash.groupby("system")["cost_usd"].apply(lambda c: bool(c.notna().all()))
    bash_costed = bash[bash["system"].isin(costed[costed].index)].reset_index(drop=True)

    swe = {n: records[n] for n in ("swebench_lite", "swebench_verified")}
    main_run = _run("swebench_policies", swe, args.out, policies=POLICIES, n_orders=k)
    others = _run(
        "other_sources",
        {n: records[n] for n in ("swebench_verified_bashonly", "terminal_bench_2", "terminal_bench_1_5")},
        args.out,
        policies=["primary", "forced-uniform", "paired-normal"],
        n_orders=k,
    )
    cost = _run(
        "bashonly_cost_first",
        {"swebench_verified_bashonly": bash_costed},
        args.out,
        policies=["forced-cost-first", "forced-uniform", "primary"],
        n_orders=k,
    )
    cost_budget = _run(
        "bashonly_cost_budget",
        {"swebench_verified_bashonly": bash_costed},
        args.out,
        policy=Policy.paper(budget={"measure": "cost_usd"}),
        policies=["primary"],
        n_orders=k,
    )
    tb = {"terminal_bench_1_5": records["terminal_bench_1_5"]}
    tb_tested = _run("tb15_elapsed_tested", tb, args.out, policy=Policy.paper(budget={"measure": "elapsed_s", "scope": "tested"}), n_orders=k)
    tb_pair = _run("tb15_elapsed_pair", tb, args.out, policy=Policy.paper(budget={"measure": "elapsed_s", "scope": "pair"}), n_orders=k)
    cutoffs = {
        a: _run(f"cutoff_{a:g}", swe | {"terminal_bench_2": records["terminal_bench_2"]}, args.out, policy=Policy.paper(tail_cutoff=a), n_orders=k)
        for a in (0.02, 0.10)
    }
    subsets = {}
    for name, size in (("swebench_verified", 13), ("swebench_lite", 24)):
        rows = records[name]
        rate = rows.groupby("system")["outcome"].mean().sort_values()
        chosen = {"latest": sorted(rows["system"].unique())[-size:], "strongest": list(rate.index[-size:])}
        for label, systems in chosen.items():
            subsets[f"{name} ({label} {size})"] = rows[rows["system"].isin(systems)].reset_index(drop=True)
    subset_run = _run("system_subsets", subsets, args.out, n_orders=k)
    mc = {
        b: _run(
            f"bootstrap_B{b}",
            {"terminal_bench_2": records["terminal_bench_2"], "swebench_verified": records["swebench_verified"]},
            args.out,
            policy=Policy.paper(bootstrap_resamples=b),
            policies=["bootstrap-mc"],
            n_orders=min(k, 100),
        )
        for b in (100, 200, 500)
    }

    primary = pd.concat([main_run.sufficiency, others.sufficiency], ignore_index=True)
    summary = pd.concat([main_run.summary, others.summary], ignore_index=True)
    plot_unresolved(summary[summary["policy"] == "primary"], figures / "unresolved_primary.png")
    plot_unresolved(main_run.summary[main_run.summary["source"] == "swebench_lite"], figures / "unresolved_swebench_lite_policies.png")
    tb_summary = pd.concat(
        [
            others.summary[others.summary["source"] == "terminal_bench_1_5"].assign(source="TB 1.5 task fraction"),
            tb_tested.summary.assign(source="TB 1.5 tested elapsed"),
            tb_pair.summary.assign(source="TB 1.5 pair elapsed"),
        ]
    )
    plot_unresolved(tb_summary[tb_summary["policy"] == "primary"], figures / "unresolved_terminal_bench_time.png")

    sources = pd.concat([main_run.sources, others.sources], ignore_index=True)
    lines = [
        "# Reproducing the ParEvalLayer evaluation",
        "",
        "Generated by `.venv/bin/python -m experiments.replay_report"
        + (f" --orders {k}" if k != 500 else "")
        + f"` (stopwise {main_run.settings.stopwise_version}; {k} task orders per directed pair; budgets 5 %-95 % in"
        " 5-point steps; thresholds 0, 5 and 10 pp; targets alpha = gamma = 5 %, eta = 25 %; tail cutoff a = 0.05 unless"
        " stated). The per-pair decision records behind every number are written to `out/replay_report/*/cases.parquet`.",
        "",
        "**Tail method.** The paper draws B = 200 bootstrap resamples per decision; we compute the bootstrap's B -> infinity",
        "limit exactly (`exact`), which removes resampling noise. A Monte-Carlo check with B = 100, 200 and 500 is below.",
        "",
        "**Task orders.** Orders are drawn once per shared task set and policy seed and reused by every directed pair with",
        "that task set (all pairs of a source here), so each order plays the role of one pre-registered run order.",
        "",
        "## Table I — sources",
        "",
        "Ours (directed pairs with the unordered count in brackets, median shared tasks, completed-record positives):",
        "",
        markdown_table(
            pd.DataFrame(
                {
                    "Source": sources["source"],
                    "Systems": sources["systems"],
                    "Pairs": [f"{p} ({u})" for p, u in zip(sources["pairs"], sources["unordered_pairs"], strict=True)],
                    "Task units": sources["median_overlap"].map(lambda v: f"{v:g}"),
                    "Pos. 0 pp": sources["positives_0"],
                    "Pos. 5 pp": sources["positives_0.05"],
                    "Pos. 10 pp": sources["positives_0.1"],
                    "Groups": sources["groups"],
                    "Cost": sources["cost"].map({True: "yes", False: "no"}),
                    "Elapsed": sources["elapsed"].map({True: "yes", False: "no"}),
                }
            )
        ),
        "",
        "The paper's:",
        "",
        markdown_table(PAPER_TABLE_ONE),
        "",
        "## Table II — minimum sufficient budgets under the primary policy",
        "",
        "Ours:",
        "",
        markdown_table(table_two(primary, "primary")),
        "",
        "The paper's:",
        "",
        markdown_table(PAPER_TABLE_TWO),
        "",
        "![Unresolved comparisons at 0 pp, primary policy](replay/unresolved_primary.png)",
        "",
        "### Comparison policies (SWE-bench)",
        "",
    ]
    for name in POLICIES[1:]:
        lines += [f"**{name}**", "", markdown_table(table_two(main_run.sufficiency, name)), ""]
    lines += ["![SWE-bench Lite, every policy](replay/unresolved_swebench_lite_policies.png)", ""]

    lite_uniform = _row(main_run.summary, source="swebench_lite", policy="forced-uniform", threshold=0.0, budget=0.25)
    verified_uniform = _row(main_run.summary, source="swebench_verified", policy="forced-uniform", threshold=0.0, budget=0.25)
    lite_25 = _row(main_run.summary, source="swebench_lite", policy="primary", threshold=0.0, budget=0.25)
    verified_25 = _row(main_run.summary, source="swebench_verified", policy="primary", threshold=0.0, budget=0.25)
    lines += [
        "## Section V-B — partial scores hide reporting conditions",
        "",
        f"- Uniform forced evaluation at 25 % budget: coverage failure {_pct(lite_uniform['coverage_failure'])} on SWE-bench Lite"
        f" and {_pct(verified_uniform['coverage_failure'])} on SWE-bench Verified (paper: 99.96 % on Lite and AppWorld);"
        f" its false promotions / rejections are {_pct(lite_uniform['fpr_cond'])} / {_pct(lite_uniform['frr_cond'])} on Lite.",
        f"- Primary policy at 25 % budget, 0 pp: SWE-bench Lite meets error and coverage targets"
        f" (FPR {_pct(lite_25['fpr_cond'])}, FRR {_pct(lite_25['frr_cond'])}) but leaves {_pct(lite_25['unresolved'])} unresolved"
        f" (paper: 55.92 %); SWE-bench Verified leaves {_pct(verified_25['unresolved'])} unresolved (paper: 93.64 %).",
    ]
    cost_rows = []
    for threshold in (0.0, 0.05, 0.10):
        first = _row(cost.summary, policy="forced-cost-first", threshold=threshold, budget=0.25)
        uniform = _row(cost.summary, policy="forced-uniform", threshold=threshold, budget=0.25)
        cases = cost.cases[(cost.cases["policy"] == "forced-cost-first") & np.isclose(cost.cases["threshold"], threshold) & np.isclose(cost.cases["budget"], 0.25)]
        wrong_pos = cases[cases["positive"] & (cases["false_rejections"] > 0)]
        cost_rows.append(
            {
                "threshold": f"{100 * threshold:g} pp",
                "tested cost used (cost-first)": _pct(first["tested_cost_fraction"]),
                "tested cost used (uniform)": _pct(uniform["tested_cost_fraction"]),
                "coverage failure (cost-first)": _pct(first["coverage_failure"]),
                "FPR / FRR (cost-first)": f"{_pct(first['fpr_cond'])} / {_pct(first['frr_cond'])}",
                "FPR / FRR (uniform)": f"{_pct(uniform['fpr_cond'])} / {_pct(uniform['frr_cond'])}",
                "positive pairs with a false rejection": f"{len(wrong_pos)} of {int(first['positives'])}",
            }
        )
    lines += [
        "",
        "Cost ordering (the paper's tau-bench check, here on SWE-bench Verified bash-only, the one source with per-task USD"
        " cost; the 3 of 27 systems without cost are left out of this check, leaving 24 systems and 552 directed pairs):",
        "",
        markdown_table(pd.DataFrame(cost_rows)),
        "",
        "Paper (tau-bench, 12 pairs): cost-aware forced evaluation at 25 % uses 11.51 % of tested-system cost, has 100 % coverage"
        " failure and false rejections in 4 of 5 positive 5 pp cases and 2 of 2 positive 10 pp cases.",
        "",
        "## Section V-C — resource and decision-rule checks",
        "",
    ]
    tb_rows = []
    for label, run in (("task fraction", others), ("tested elapsed", tb_tested), ("pair elapsed", tb_pair)):
        at95 = _row(run.summary, source="terminal_bench_1_5", policy="primary", threshold=0.0, budget=0.95)
        minimum = run.sufficiency[(run.sufficiency["source"] == "terminal_bench_1_5") & (run.sufficiency["policy"] == "primary") & (run.sufficiency["threshold"] == 0.0)]
        best = minimum["min_sufficient_budget"].iloc[0]
        tb_rows.append(
            {
                "budget measure": label,
                "min sufficient (0 pp)": f"{best:.0%}" if np.isfinite(best) else "none by 95%",
                "FPR at 95%": _pct(at95["fpr_cond"]),
                "FRR at 95%": _pct(at95["frr_cond"]),
                "unresolved at 95%": _pct(at95["unresolved"]),
                "tested elapsed used at 95%": _pct(at95["tested_elapsed_fraction"]),
            }
        )
    lines += [
        "Terminal-Bench 1.5 (Terminus-2 with 16 LLMs, 74 tasks, medium/hard groups, elapsed seconds per trial; attempts averaged):",
        "",
        markdown_table(pd.DataFrame(tb_rows)),
        "",
        "Paper (Terminal-Bench 2.0, 72 pairs): no budget by task fraction, tested or pair elapsed time meets the targets by 95 %;"
        " false promotions 0.44-0.62 %, false rejections 0 %, unresolved 36.10-36.31 % at 95 %.",
        "",
        "![Terminal-Bench 1.5 by budget measure](replay/unresolved_terminal_bench_time.png)",
        "",
        "Tail cutoff a (primary policy, minimum sufficient budget at 0 / 5 / 10 pp):",
        "",
    ]
    cutoff_rows = []
    for source in ("swebench_lite", "swebench_verified", "terminal_bench_2"):
        row = {"source": source}
        by_cutoff: list[tuple[float, ReplayResult | None]] = [(0.02, cutoffs[0.02]), (0.05, None), (0.10, cutoffs[0.10])]
        for a, cutoff_run in by_cutoff:
            table = primary if cutoff_run is None else cutoff_run.sufficiency
            part = table[(table["source"] == source) & (table["policy"] == "primary")].sort_values("threshold")
            row[f"a = {a:g}"] = " / ".join(f"{v:.0%}" if np.isfinite(v) else "none" for v in part["min_sufficient_budget"])
        cutoff_rows.append(row)
    lines += [
        markdown_table(pd.DataFrame(cutoff_rows)),
        "",
        "Paper: AppWorld moves from 25 % (a = 0.02) to 15 % (0.05) to 10 % (0.10); SWE-bench Verified stays a high-budget case.",
        "",
    ]
    lines += [
        "## Which systems: the selection drives the budget",
        "",
        "The paper used 13 SWE-bench Verified and 24 Lite systems; our snapshots hold 36 and 42. Keeping the 13 (24)"
        " alphabetically latest submissions, or the 13 (24) with the highest resolve rate, gives:",
        "",
        markdown_table(table_two(subset_run.sufficiency, "primary")),
        "",
        markdown_table(subset_run.sources[["source", "pairs", "positives_0", "positives_0.05", "positives_0.1"]]),
        "",
    ]
    spans = []
    errors = []
    for source in ("terminal_bench_2", "swebench_verified"):
        for threshold in (0.0, 0.05, 0.10):
            values = np.array(
                [
                    mc[b].summary[(mc[b].summary["source"] == source) & np.isclose(mc[b].summary["threshold"], threshold)].sort_values("budget")["unresolved"].to_numpy()
                    for b in (100, 200, 500)
                ]
            )
            spans.append({"source": source, "threshold": f"{100 * threshold:g} pp", "widest span across B (pp)": f"{100 * (values.max(0) - values.min(0)).max():.2f}"})
        for low in (0.05, 0.25):
            worst = max(
                float(np.nanmax(mc[b].summary.loc[(mc[b].summary["source"] == source) & (mc[b].summary["budget"] >= low - 1e-9), ["fpr_cond", "frr_cond"]].to_numpy()))
                for b in (100, 200, 500)
            )
            errors.append({"source": source, "budgets": f">= {low:.0%}", "largest FPR_cond or FRR_cond over B, thresholds, budgets": _pct(worst)})
    lines += [
        f"Monte-Carlo bootstrap with B = 100, 200 and 500 ({min(k, 100)} orders per pair): the widest difference in unresolved"
        " rate between the three B at any budget, and the largest conditional decision error:",
        "",
        markdown_table(pd.DataFrame(spans)),
        "",
        markdown_table(pd.DataFrame(errors)),
        "",
        "Paper: the widest 5th-95th percentile span across B in {100, 200, 500} is 1.61 pp; the largest conditional decision"
        " error is 1.40 %.",
        "",
    ]
    cost_table = table_two(cost_budget.sufficiency, "primary")
    lines += [
        "Budget measured by the tested system's USD cost on SWE-bench Verified bash-only (coverage-aware order, primary policy):",
        "",
        markdown_table(cost_table),
        "",
    ]
    notes = REPO / "docs" / "replay_reproduction_notes.md"
    if notes.exists():
        lines += [notes.read_text()]
    (docs / "replay_reproduction.md").write_text("\n".join(lines))
    print(f"wrote {docs / 'replay_reproduction.md'}")


if __name__ == "__main__":
    main()
