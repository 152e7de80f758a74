"""Shared helpers of the early-outcome benchmarks: where ../shared/data is, and reading its trajectories."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from stopwise.records import Trajectory, read_trajectories

SHARED_DATA = Path(os.environ.get("STOPWISE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
DATASETS = ("mcpmark", "toolathlon")


def trajectory_path(name: str) -> Path:
    """The trajectories.jsonl.gz of a shared trajectory set; exits with a clear message when it is missing."""
    path = SHARED_DATA / "trajectories" / name / "trajectories.jsonl.gz"
    if not path.exists():
        sys.exit(f"missing {path}: put ../shared/data beside the project or set STOPWISE_SHARED_DATA")
    return path


def load(name: str) -> list[Trajectory]:
    """Every run of a shared trajectory set."""
    return read_trajectories(trajectory_path(name))


QUICK_RUNS = 120
"""Runs sampled (seeded) for a ``--quick`` model, beside every run long enough for the step-100 timings."""


def quick_runs(runs: list[Trajectory], min_steps: int = 100, *, rng: int = 0) -> list[Trajectory]:
    """A seeded sample of :data:`QUICK_RUNS` runs plus every run of at least ``min_steps`` steps (``--quick``)."""
    long = [i for i, run in enumerate(runs) if len(run.steps) >= min_steps]
    rest = np.setdiff1d(np.arange(len(runs)), long)
    picked = np.random.default_rng(rng).choice(rest, min(QUICK_RUNS, len(rest)), replace=False)
    return [runs[i] for i in sorted([*long, *picked.tolist()])]


def quick_params() -> dict[str, Any]:
    """A small model for ``--quick`` (4 SVD components, <= 60 trees per head, one thread, no cross-fitted calibration)."""
    from stopwise.early import DualHeadClassifier

    classifier = DualHeadClassifier(min_child_samples=20, n_estimators=60, early_stopping_rounds=20, n_jobs=1)
    return {"n_components": 4, "min_df": 2, "calibration_folds": None, "classifier": classifier}


def timing_stats(seconds: list[float]) -> str:
    """Median, p99 and max of timings given in seconds, printed in milliseconds."""
    a = np.asarray(seconds) * 1e3
    return f"median {np.median(a):.3f} ms, p99 {np.percentile(a, 99):.3f} ms, max {a.max():.3f} ms (n={a.shape[0]})"


def saved_or_trained_model(path: Path | None, runs: list[Trajectory], label: str = "paper defaults", **params: Any) -> Any:
    """The model saved at ``path``, or one trained on ``runs`` with ``params`` (LightGBM's UserWarnings silenced)."""
    from stopwise.early import EarlyOutcomeModel, load_model

    if path is not None:
        return load_model(path)
    print(f"training a model on all shared runs ({label}) ...")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return EarlyOutcomeModel(**params).fit(runs)
