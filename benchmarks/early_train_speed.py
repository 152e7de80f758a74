"""Time training an EarlyOutcomeModel (paper defaults) on all shared trajectories.

Run: ``.venv/bin/python -m benchmarks.early_train_speed [--out out/early_model] [--quick]`` (``--quick``: a small model
on a seeded sample of the runs, in seconds: a check that the benchmark runs, not its figure). Prints the wall time of
reading, of fitting (featurizer + both heads, early stopping and calibration) and the training volume; the
issue's target is under five minutes.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

from benchmarks.early_common import DATASETS, load, quick_params, quick_runs
from stopwise.early import DualHeadClassifier, EarlyOutcomeModel


def measure_training(n_jobs: int = 1, *, quick: bool = False) -> tuple[EarlyOutcomeModel, dict[str, float | int]]:
    """Fit a paper-default model on every shared run (``quick``: a small one on a sample); return it and the figures."""
    started = time.perf_counter()
    runs = [run for name in DATASETS for run in load(name)]
    read_s = time.perf_counter() - started
    if quick:
        runs = quick_runs(runs)
    model = EarlyOutcomeModel(**quick_params()) if quick else EarlyOutcomeModel(classifier=DualHeadClassifier(n_jobs=n_jobs))
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.fit(runs)
    fit_s = time.perf_counter() - started
    heads = model.classifier_
    return model, {
        "runs": len(runs),
        "steps": sum(len(r.steps) for r in runs),
        "read_s": read_s,
        "fit_s": fit_s,
        "train_runs": model.n_train_runs_,
        "prefixes": model.n_train_prefixes_,
        "features": len(model.features_),
        "rounds_success": heads.best_iterations_["success"],
        "rounds_failure": heads.best_iterations_["failure"],
        "validation_tasks": len(heads.validation_groups_),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="also save the trained model here")
    parser.add_argument("--n-jobs", type=int, default=1, help="LightGBM threads (1 is fastest on 2 cores)")
    parser.add_argument("--quick", action="store_true", help="a small model on a seeded sample of the runs: seconds")
    args = parser.parse_args()
    model, f = measure_training(args.n_jobs, quick=args.quick)
    print(f"runs read: {f['runs']} ({f['steps']} steps) in {f['read_s']:.1f} s")
    print(f"training runs (>= {model.min_steps} steps): {f['train_runs']}, prefixes: {f['prefixes']}, features: {f['features']}")
    print(f"boosting rounds kept: success {f['rounds_success']}, failure {f['rounds_failure']}; validation tasks: {f['validation_tasks']}")
    print(f"fit wall time: {f['fit_s']:.1f} s (target < 300 s) -> {'OK' if f['fit_s'] < 300 else 'TOO SLOW'}")
    if args.out is not None:
        model.save(args.out)
        print(f"saved to {args.out}")


if __name__ == "__main__":
    main()
