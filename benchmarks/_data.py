"""Where benchmarks find ../shared/data (override with STOPWISE_SHARED_DATA)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

SHARED_DATA = Path(os.environ.get("STOPWISE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def records_path(name: str) -> Path:
    """The outcomes.csv of a shared record; exits with a clear message when it is missing."""
    path = SHARED_DATA / "records" / name / "outcomes.csv"
    if not path.exists():
        sys.exit(f"missing {path}: put ../shared/data beside the project or set STOPWISE_SHARED_DATA")
    return path
