"""One decide-path call of the betting boundary after the rows are loaded (issue 9 target: < 5 ms).

A swebench_verified pair half-way through a live run: the first 250 of the 500 planned tasks in a
coverage-aware order. Times :func:`stopwise.compare.betting_boundary` as decide calls it (pooled
and stratified over the 12 planned groups, with and without the confidence bounds), and the whole
:func:`stopwise.decide` with ``[decision] boundary = "betting-wor"`` and the planned universe, side by
side with ``decide`` under the fixed-budget rule (exact tails) as the baseline. Median of repeated
calls; the machine has 2 cores shared with other sessions, so figures are under contention.

Usage: python benchmarks/decide_betting.py [--repeat 50]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from _data import records_path
from stopwise import Policy, TaskUniverse, decide
from stopwise.compare import betting_boundary, coverage_aware_orders
from stopwise.records import read_outcomes


def _median_ms(call: Callable[[], object], repeat: int) -> float:
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    rows = read_outcomes(records_path("swebench_verified"))
    tested, baseline = "20240620_sweagent_claude3.5sonnet", "20231010_rag_claude2"
    systems = set(rows["system"])
    if tested not in systems or baseline not in systems:
        tested, baseline = sorted(systems)[:2]
    tasks = rows[["task", "group"]].drop_duplicates("task").sort_values("task")
    order = coverage_aware_orders(tasks["group"].to_numpy(dtype=str), 1, rng=0)[0]
    planned = tasks.iloc[order]
    universe = TaskUniverse(planned["task"].tolist(), planned["group"].tolist())
    seen = set(planned["task"].iloc[:250])
    live = rows[rows["system"].isin([tested, baseline]) & rows["task"].isin(seen)]
    wide = live.pivot_table(index="task", columns="system", values="outcome", aggfunc="mean").reindex(planned["task"].iloc[:250])
    d = (wide[tested] - wide[baseline]).to_numpy()
    groups = planned["group"].iloc[:250].to_numpy(dtype=str)
    sizes = universe.group_sizes
    print(f"{tested} vs {baseline}: 250 of 500 planned tasks observed (coverage-aware order, 12 groups); median of {args.repeat} calls")
    cases = {
        "betting_boundary, pooled, p-values only": lambda: betting_boundary(d, 0.0, population_size=500, alpha=0.05, confidence_bounds=False),
        "betting_boundary, stratified, p-values only": lambda: betting_boundary(
            d, 0.0, population_size=500, alpha=0.05, groups=groups, group_sizes=sizes, confidence_bounds=False
        ),
        "betting_boundary, pooled, with confidence bounds": lambda: betting_boundary(d, 0.0, population_size=500, alpha=0.05),
        "betting_boundary, stratified, with confidence bounds": lambda: betting_boundary(
            d, 0.0, population_size=500, alpha=0.05, groups=groups, group_sizes=sizes
        ),
    }
    betting = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
    cases["decide(), betting-wor policy + universe"] = lambda: decide(live, tested, baseline, betting, universe=universe)
    cases["decide(), fixed-budget policy + universe (baseline)"] = lambda: decide(live, tested, baseline, Policy(), universe=universe)
    results = {label: _median_ms(call, args.repeat) for label, call in cases.items()}
    width = max(map(len, results))
    for label, ms in results.items():
        target = "  (target < 5 ms: " + ("met" if ms < 5 else "NOT met") + ")" if "p-values only" in label or "betting-wor policy" in label else ""
        print(f"  {label:<{width}}  {ms:8.2f} ms{target}")
    ratio = results["decide(), betting-wor policy + universe"] / results["decide(), fixed-budget policy + universe (baseline)"]
    print(f"  decide with betting-wor / decide with fixed-budget: {ratio:.2f}x")
    record = decide(live, tested, baseline, betting, universe=universe)
    print(f"  decide says: {record.action} ({record.reason}); method {record.tail_method if hasattr(record, 'tail_method') else ''}")


if __name__ == "__main__":
    main()
