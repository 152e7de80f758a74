"""Fixtures for the Inspect integration tests: an in-memory ledger (the example script is ``tests/conftest.py``'s).

The tests run real Inspect evaluations with ``mockllm/model`` (no network). ``FakeLedger`` stands
in for :mod:`stopwise.ledger` only in the tests of the manager's mechanics (what is skipped, what
is appended, what is logged); the end-to-end tests use the real ledger and the real ``decide``.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from tests.conftest import skip_without

import stopwise

skip_without("inspect_ai", "pip install -e '.[test]'")


@pytest.fixture(autouse=True)
def _inspect_log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "inspect-logs"))


class FakeLedger:
    """In-memory ledger for the manager's mechanics: stores rows, counts looks, decides on cue.

    ``decide`` computes a real decision record from the rows so far but reports ``continue`` until
    ``decide_after`` tasks have outcomes of both systems, then ``promote``: the tests control when
    the comparison is decided, independently of the statistics.
    """

    def __init__(self, decide_after: int | None = None) -> None:
        self.decide_after = decide_after
        self.rows: list[dict[str, Any]] = []
        self.registered: list[dict[str, Any]] = []
        self.looks = 0
        self.history: list[stopwise.DecisionRecord] = []

    def register(self, evaluation: str, *, policy: Any, universe: Any, tested: str, baseline: str) -> None:
        self.registered.append(
            {"evaluation": evaluation, "policy": policy, "universe": universe, "tested": tested, "baseline": baseline}
        )

    def append(self, evaluation: str, rows: list[dict[str, Any]]) -> SimpleNamespace:
        frame = stopwise.outcome_columns(rows).to_frame()  # the contract the real ledger checks
        self.rows.extend(frame.to_dict("records"))
        return SimpleNamespace(accepted=len(frame), duplicates=0, conflicts=0)

    def frame(self) -> pd.DataFrame:
        return stopwise.outcome_columns(self.rows).to_frame()

    def pairs(self) -> int:
        final = self.frame().query("status == 'final'")
        return int((final.groupby("task")["system"].nunique() == 2).sum())

    def decide(self, evaluation: str) -> stopwise.DecisionRecord:
        self.looks += 1
        spec = self.registered[0]
        record = stopwise.decide(self.frame(), spec["tested"], spec["baseline"], spec["policy"])
        pairs = self.pairs()
        if self.decide_after is None or pairs < self.decide_after:
            record = record.model_copy(update={"action": "continue", "reason": f"fake ledger: {pairs} pairs"})
        else:
            record = record.model_copy(update={"action": "promote", "reason": f"fake ledger: decided at {pairs} pairs"})
        self.history.append(record)
        return record

    def decisions(self, evaluation: str, *, after: int = 0) -> list[stopwise.DecisionRecord]:
        return list(self.history)[after:]

    def final_tasks(self, evaluation: str, system: str, tasks: list[str]) -> set[str]:
        return {r["task"] for r in self.rows if r["system"] == system and r["status"] == "final"} & set(tasks)


@pytest.fixture
def fake_ledger() -> type[FakeLedger]:
    """The FakeLedger class (test modules cannot import conftest under --import-mode=importlib)."""
    return FakeLedger
