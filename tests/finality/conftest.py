"""Shared fixtures of the finality tests: one full replay per test session."""

from __future__ import annotations

import pytest

from stopwise.finality import ControlledReplay, run_controlled_replay


@pytest.fixture(scope="session")
def replay() -> ControlledReplay:
    """The paper's full replay (200 trials x 8 conditions) against a real local service, run once."""
    return run_controlled_replay()
