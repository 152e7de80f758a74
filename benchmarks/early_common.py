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
