"""Per-step cost of the online monitor at step 100 of real trajectories, beside recomputing from scratch.

For every shared trajectory with at least 100 steps, the monitor observes steps 1..99; then step 100 is
observed ``--repeats`` times, each time from a copy of the state after step 99, and timed. Reported: median
and p99 of (feature update + both heads) per observation, the split between features and heads, and the
same statistics over every step of those trajectories. Beside it, in the same run, the from-scratch cost:
featurizing the 100-step prefix anew (tokenising every step again) and scoring it. The issue's targets are
median < 1 ms and p99 < 5 ms at step 100.

Run: ``.venv/bin/python -m benchmarks.early_monitor_speed [--model out/early_model] [--repeats 200] [--quick]``
(without ``--model`` a model with the paper's defaults is trained on all shared runs first, ~1 minute).
"""

from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.early_common import DATASETS, load, quick_params, quick_runs, saved_or_trained_model, timing_stats
from stopwise.early import DualHeadClassifier, EarlyOutcomeModel, OnlineMonitor
from stopwise.records import Trajectory

STEP = 100


def _snapshot(monitor: OnlineMonitor) -> OnlineMonitor:
    """Copy the monitor's running state, sharing the (read-only) fitted model."""
    model = monitor.model
    memo: dict[int, Any] = {id(model): model, id(model.featurizer_): model.featurizer_, id(model.classifier_): model.classifier_}
    for block in model.featurizer_.blocks_.values():
        memo[id(block)] = block
    return copy.deepcopy(monitor, memo)


def measure_monitor(model: EarlyOutcomeModel, runs: list[Trajectory], repeats: int = 200, probe_rounds: int = 500) -> dict[str, Any]:
    """Time the monitor at step 100 of every run with >= 100 steps, beside recomputation from scratch."""
    long_runs = [r for r in runs if len(r.steps) >= STEP]
    featurizer, classifier, columns = model.featurizer_, model.classifier_, model.columns_
    at_step: list[float] = []
    features_part: list[float] = []
    heads_part: list[float] = []
    every_step: list[float] = []
    step_index: list[int] = []
    scratch: list[float] = []
    for run in long_runs:
        # every step of the run, one observation each
        monitor = model.monitor(run.task_text, success_threshold=1.0, failure_threshold=1.0)
        for k, step in enumerate(run.steps, start=1):
            t0 = time.perf_counter()
            monitor.observe(step)
            every_step.append(time.perf_counter() - t0)
            step_index.append(k)
        # step 100 observed repeatedly from the state after step 99
        monitor = model.monitor(run.task_text, success_threshold=1.0, failure_threshold=1.0)
        for step in run.steps[: STEP - 1]:
            monitor.observe(step)
        target = run.steps[STEP - 1]
        for _ in range(repeats):
            copy_ = _snapshot(monitor)
            t0 = time.perf_counter()
            copy_.observe(target)
            at_step.append(time.perf_counter() - t0)
        for _ in range(repeats):
            stream = _snapshot(monitor)._stream
            t0 = time.perf_counter()
            x = stream.update(target)
            t1 = time.perf_counter()
            classifier.predict_one(x[columns])
            t2 = time.perf_counter()
            features_part.append(t1 - t0)
            heads_part.append(t2 - t1)
        # from scratch: featurize the whole 100-step prefix anew and score its last row
        prefix = run.model_copy(update={"steps": run.steps[:STEP]})
        for _ in range(max(3, repeats // 20)):
            t0 = time.perf_counter()
            rows = featurizer.transform([prefix])[0]
            classifier.predict_one(rows[-1][columns])
            scratch.append(time.perf_counter() - t0)
    # the heads' cost grows with the boosting rounds kept; probe heads that keep many more rounds
    rng = np.random.default_rng(0)
    probe_x = rng.normal(size=(4000, columns.shape[0]))
    probe_y = (probe_x[:, 0] + rng.normal(size=4000) > 0).astype(int)
    probe = DualHeadClassifier(n_estimators=probe_rounds, early_stopping_rounds=10 * probe_rounds, min_child_samples=20, random_state=0)
    probe.fit(probe_x, probe_y, groups=np.arange(4000) // 40)
    probe_times = []
    for _ in range(2000):
        row = probe_x[int(rng.integers(4000))]
        t0 = time.perf_counter()
        probe.predict_one(row)
        probe_times.append(time.perf_counter() - t0)
    index = np.asarray(step_index)
    cost = np.asarray(every_step)
    by_position = {
        f"{lo}-{hi}": float(np.median(cost[(index >= lo) & (index <= hi)]) * 1e3)
        for lo, hi in ((1, 25), (26, 50), (51, 100), (101, 150), (151, 250))
        if ((index >= lo) & (index <= hi)).any()
    }
    return {
        "by_position_median_ms": by_position,
        "n_runs": len(long_runs),
        "features": int(columns.shape[0]),
        "rounds": (classifier.best_iterations_["success"], classifier.best_iterations_["failure"]),
        "at_step": at_step,
        "features_part": features_part,
        "heads_part": heads_part,
        "every_step": every_step,
        "scratch": scratch,
        "probe_rounds": (probe.best_iterations_["success"], probe.best_iterations_["failure"]),
        "probe": probe_times,
    }


def summary(values: list[float]) -> dict[str, float]:
    """Median, p99 and max in milliseconds."""
    a = np.asarray(values) * 1e3
    return {"median_ms": float(np.median(a)), "p99_ms": float(np.percentile(a, 99)), "max_ms": float(a.max()), "n": int(a.shape[0])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="a saved model (default: train one on all shared runs)")
    parser.add_argument("--repeats", type=int, default=200, help="timed observations of step 100 per trajectory")
    parser.add_argument("--probe-rounds", type=int, default=500, help="boosting rounds of the heads-cost probe")
    parser.add_argument("--quick", action="store_true", help="a small model on a sample of the runs, 10 repeats, 50-round probe")
    args = parser.parse_args()
    runs: list[Trajectory] = [run for name in DATASETS for run in load(name)]
    if args.quick:
        runs, args.repeats, args.probe_rounds = quick_runs(runs, STEP), min(args.repeats, 10), min(args.probe_rounds, 50)
    params = quick_params() if args.quick else {}
    model = saved_or_trained_model(args.model, runs, "small, --quick" if args.quick else "paper defaults", **params)
    r = measure_monitor(model, runs, args.repeats, args.probe_rounds)
    print(f"{r['n_runs']} trajectories with >= {STEP} steps; model has {r['features']} features, rounds {r['rounds']}")
    print(f"monitor, observe(step {STEP}) incl. both heads : {timing_stats(r['at_step'])}")
    print(f"  of which feature update           : {timing_stats(r['features_part'])}")
    print(f"  of which both heads (1 thread)    : {timing_stats(r['heads_part'])}")
    print(f"monitor, every step of these runs   : {timing_stats(r['every_step'])}")
    print("  median by step position           : " + ", ".join(f"steps {k}: {v:.3f} ms" for k, v in r["by_position_median_ms"].items()))
    print(f"from scratch at step {STEP} (re-featurize prefix + heads): {timing_stats(r['scratch'])}")
    print(f"both heads with {r['probe_rounds'][0]}+{r['probe_rounds'][1]} rounds (probe, same width): {timing_stats(r['probe'])}")
    print(f"ratio from-scratch / incremental (medians): {np.median(r['scratch']) / np.median(r['at_step']):.0f}x")
    med, p99 = np.median(r["at_step"]) * 1e3, np.percentile(r["at_step"], 99) * 1e3
    print(f"targets: median < 1 ms -> {'OK' if med < 1 else 'MISSED'}; p99 < 5 ms -> {'OK' if p99 < 5 else 'MISSED'}")


if __name__ == "__main__":
    main()
