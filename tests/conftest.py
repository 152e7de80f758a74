"""Shared fixtures: where ../shared/data lives, and how a test that needs it behaves without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("STOPWISE_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_path(*parts: str) -> Path:
    """Path under ../shared/data; fails under CI=true and skips elsewhere when it is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        message = f"shared data missing: {path} (expected ../shared/data beside the project)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def shared_data() -> Path:
    """The ../shared/data folder (see :func:`shared_path`)."""
    return shared_path()
