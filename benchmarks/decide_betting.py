"""One decide-path call of the betting boundary after the rows are loaded (issue 9 target: < 5 ms).

A swebench_verified pair half-way through a live run: the first 250 of the 500 planned tasks in a
coverage-aware order. Times :func:`stopwise.compare.betting_boundary` as decide calls it (pooled
and stratified over the 12 planned groups, with and without the confidence bounds), and the whole
:func:`stopwise.decide` with ``[decision] boundary = "betting-wor"`` and the planned universe, side by
side with ``decide`` under the fixed-budget rule (exact tails) as the baseline. Median of repeated
calls; the machine has 2 cores shared with other sessions, so figures are under contention.

Usage: python -m benchmarks.decide_betting [--repeat 50]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np

from benchmarks._data import records_path
from stopwise import OutcomeColumns, Policy, TaskUniverse, decide
from stopwise.compare import betting_boundary, coverage_aware_orders
from stopwise.records import read_outcomes


def _median_ms(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and process CPU milliseconds of one call."""
    call()
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return float(np.median(wall) * 1e3), float(np.median(cpu) * 1e3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    rows = read_outcomes(records_path("swebench_verified")).to_frame()
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
    loaded = OutcomeColumns.from_frame(live)
    arrays = {name: loaded.column(name) for name in loaded.columns}

    def fresh() -> OutcomeColumns:
        return OutcomeColumns(**arrays)  # nothing cached: the factorisation is paid by every call

    cases["decide(), betting-wor policy + universe"] = lambda: decide(fresh(), tested, baseline, betting, universe=universe)
    cases["decide(), fixed-budget policy + universe (baseline)"] = lambda: decide(fresh(), tested, baseline, Policy(), universe=universe)
    cases["decide(), betting-wor, rows as a pandas frame"] = lambda: decide(live, tested, baseline, betting, universe=universe)
    load = os.getloadavg()[0]
    results = {label: _median_ms(call, args.repeat) for label, call in cases.items()}
    width = max(map(len, results))
    print(f"  {'':<{width}}      wall       CPU   (load average {load:.1f} before, {os.getloadavg()[0]:.1f} after)")
    for label, (ms, cpu) in results.items():
        target = "  (target < 5 ms: " + ("met" if ms < 5 else "NOT met") + ")" if "p-values only" in label or "betting-wor policy +" in label else ""
        print(f"  {label:<{width}}  {ms:8.2f} ms {cpu:6.2f} ms{target}")
    ratio = results["decide(), betting-wor policy + universe"][0] / results["decide(), fixed-budget policy + universe (baseline)"][0]
    print(f"  decide with betting-wor / decide with fixed-budget: {ratio:.2f}x")
    record = decide(fresh(), tested, baseline, betting, universe=universe)
    print(f"  decide says: {record.action} ({record.reason}); method {record.tail_method if hasattr(record, 'tail_method') else ''}")


if __name__ == "__main__":
    main()
