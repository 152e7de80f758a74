"""One decide-path call of the betting boundary after the rows are loaded (issue 31 target: decide < 5 ms median).

A swebench_verified pair half-way through a live run: the first 250 of the 500 planned tasks in a seeded
uniformly random order (12 groups; the top-up design, the default since issue 33 retired the stratified process and
the coverage-aware orders it ran on). Times :func:`stopwise.compare.betting_boundary` (pooled, and stratified as
called directly, with and without the confidence bounds) and the whole
:func:`stopwise.decide` with ``[decision] boundary = "betting-wor"`` and the planned universe, beside ``decide``
under the fixed-budget rule (exact tails). Each figure is measured on the current code and, in a subprocess of
the same run, on the baseline commit's ``src`` (:mod:`benchmarks._baseline`, ``e974111``: before issue 31), and
printed side by side with their ratio. Median of repeated calls, wall and process CPU; the machine has 2 cores
shared with other sessions, so the load average is printed and figures under load scale with it.

Usage: python -m benchmarks.decide_betting [--repeat 50] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchmarks._baseline import BASELINE_REF, measure_side_by_side, paper_policy, strip_measure_flag
from benchmarks._data import records_path

TARGET_MS = 5.0
DECIDE = "decide(), betting-wor policy + universe"


def _median_ms(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and process CPU milliseconds of one call (after one warm-up call)."""
    call()
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return float(np.median(wall) * 1e3), float(np.median(cpu) * 1e3)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """The figures of this ``stopwise`` (current or baseline): per case, median wall and CPU ms; and the decision."""
    from stopwise import OutcomeColumns, TaskUniverse, decide
    from stopwise.compare import betting_boundary
    from stopwise.records import read_outcomes

    rows = read_outcomes(records_path("swebench_verified")).to_frame()
    tested, baseline = "20240620_sweagent_claude3.5sonnet", "20231010_rag_claude2"
    systems = set(rows["system"])
    if tested not in systems or baseline not in systems:
        tested, baseline = sorted(systems)[:2]
    tasks = rows[["task", "group"]].drop_duplicates("task").sort_values("task")
    order = np.random.default_rng(0).permutation(len(tasks))  # uniform (an unstamped order: decide warns, as it should)
    planned = tasks.iloc[order]
    universe = TaskUniverse(planned["task"].tolist(), planned["group"].tolist())
    seen = set(planned["task"].iloc[:250])
    live = rows[rows["system"].isin([tested, baseline]) & rows["task"].isin(seen)]
    wide = live.pivot_table(index="task", columns="system", values="outcome", aggfunc="mean").reindex(planned["task"].iloc[:250])
    d = (wide[tested] - wide[baseline]).to_numpy()
    groups = planned["group"].iloc[:250].to_numpy(dtype=str)
    sizes = universe.group_sizes
    betting = paper_policy(decision={"boundary": "betting-wor"})
    loaded = OutcomeColumns.from_frame(live)
    arrays = {name: loaded.column(name) for name in loaded.columns}

    def fresh() -> OutcomeColumns:
        return OutcomeColumns(**arrays)  # nothing cached: the factorisation is paid by every call

    cases: dict[str, Callable[[], object]] = {
        "betting_boundary, pooled, p-values only": lambda: betting_boundary(d, 0.0, population_size=500, alpha=0.05, confidence_bounds=False),
        "betting_boundary, stratified, p-values only": lambda: betting_boundary(
            d, 0.0, population_size=500, alpha=0.05, groups=groups, group_sizes=sizes, confidence_bounds=False
        ),
        "betting_boundary, pooled, with confidence bounds": lambda: betting_boundary(d, 0.0, population_size=500, alpha=0.05),
        "betting_boundary, stratified, with confidence bounds": lambda: betting_boundary(
            d, 0.0, population_size=500, alpha=0.05, groups=groups, group_sizes=sizes
        ),
        DECIDE: lambda: decide(fresh(), tested, baseline, betting, universe=universe),
        "decide(), fixed-budget policy + universe": lambda: decide(fresh(), tested, baseline, paper_policy(), universe=universe),
    }
    if not args.quick:
        cases["decide(), betting-wor, rows as a pandas frame"] = lambda: decide(live, tested, baseline, betting, universe=universe)
    figures: dict[str, Any] = {label: _median_ms(call, args.repeat) for label, call in cases.items()}
    record = decide(fresh(), tested, baseline, betting, universe=universe)
    figures["record"] = [record.action, record.r_promote, record.r_reject, record.interval.low, record.interval.high]  # type: ignore[union-attr]
    figures["pair"] = f"{tested} vs {baseline}"
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per case (the median is printed)")
    parser.add_argument("--quick", action="store_true", help="5 calls per case, fewer cases: seconds, for CI")
    args = parser.parse_args(strip_measure_flag(argv))
    if args.quick:
        args.repeat = min(args.repeat, 5)
    load = os.getloadavg()[0]
    current, base = measure_side_by_side("benchmarks.decide_betting", measure, args, argv)
    print(f"{current['pair']}: 250 of 500 planned tasks observed (seeded uniform order, 12 groups); median of {args.repeat} calls")
    labels = [k for k in current if isinstance(current[k], list | tuple) and len(current[k]) == 2 and k in base]
    width = max(map(len, labels))
    print(f"  {'':<{width}}   current wall (CPU)    baseline {BASELINE_REF} wall (CPU)   ratio   (load average {load:.1f} before, {os.getloadavg()[0]:.1f} after)")
    for label in labels:
        (ms, cpu), (base_ms, base_cpu) = current[label], base[label]
        target = f"  target < {TARGET_MS:g} ms: {'met' if ms < TARGET_MS else 'NOT met'}" if label == DECIDE else ""
        print(f"  {label:<{width}}  {ms:8.2f} ms ({cpu:6.2f})   {base_ms:8.2f} ms ({base_cpu:6.2f})   {base_ms / ms:5.1f}x{target}")
    same = f"the same in both versions: {current['record']}" if current["record"] == base["record"] else (
        f"current {current['record']}, baseline {base['record']} (the baseline ran the retired stratified process on 12 groups)"
    )
    print(f"  decide's record (action, r_promote, r_reject, interval): {same}")


if __name__ == "__main__":
    main()
