"""Shared helpers of the early-outcome benchmarks: where ../shared/data is, and reading its trajectories."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
