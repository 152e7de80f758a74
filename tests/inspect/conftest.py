"""Fixtures for the Inspect integration tests: a real ledger that decides on cue (the example script is ``tests/conftest.py``'s).

The tests run real Inspect evaluations with ``mockllm/model`` (no network). ``CueLedger`` is a real
SQLite ledger (every registration, append and decision is stored) whose decisions come on cue, in
the tests of the manager's mechanics (what is skipped, what is appended, what is logged); the
end-to-end tests use the plain ledger and the real ``decide``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import skip_without

from stopwise.ledger import Ledger, LedgerLook
from stopwise.records import DecisionRecord, OutcomeColumns

skip_without("inspect_ai", "pip install -e '.[test]'")


@pytest.fixture(autouse=True)
def _inspect_log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "inspect-logs"))


class CueLook(LedgerLook):
    """A look whose decision is the ledger's cue on the real one (the record appended to the chain)."""

    def __init__(self, ledger: CueLedger, look: LedgerLook) -> None:
        super().__init__(ledger.store, look.registration, look.events)
        self.ledger = ledger

    def decide(self) -> DecisionRecord:
        return self.ledger.cue(super().decide(), self.events.rows)


class CueLedger(Ledger):
    """A real SQLite ledger that decides on cue: ``continue`` until ``decide_after`` tasks have final outcomes of
    both systems, then ``promote``.

    Each look takes the real decision (:func:`stopwise.decide` on the stored events) and :meth:`cue` replaces
    its action and reason; that record goes into the chain (it does not verify: the cue is not the statistics).
    The tests control when the comparison is decided, independently of the statistics. ``looks`` counts the
    decisions asked for.
    """

    def __init__(self, url: str | os.PathLike[str], decide_after: int | None = None) -> None:
        super().__init__(url)
        self.decide_after = decide_after
        self.looks = 0

    @staticmethod
    def paired_tasks(rows: OutcomeColumns) -> set[str]:
        """Tasks with a final outcome of both systems."""
        final = rows.to_frame().query("status == 'final'")
        counts = final.groupby("task")["system"].nunique()
        return set(counts[counts == 2].index)

    def cue(self, record: DecisionRecord, rows: OutcomeColumns) -> DecisionRecord:
        """The record to append instead of ``record``, decided on ``rows`` (override for other cues)."""
        pairs = len(self.paired_tasks(rows))
        if self.decide_after is None or pairs < self.decide_after:
            return record.model_copy(update={"action": "continue", "reason": f"cue: {pairs} pairs"})
        return record.model_copy(update={"action": "promote", "reason": f"cue: decided at {pairs} pairs"})

    def look(self, evaluation: str) -> LedgerLook:
        return CueLook(self, super().look(evaluation))

    def decide(self, evaluation: str, *, record: bool = True) -> DecisionRecord:
        self.looks += 1
        return super().decide(evaluation, record=record)

    def rows(self, system: str | None = None) -> list[dict[str, Any]]:
        """The stored outcome rows (of ``system``), as mappings."""
        if "ev" not in self.evaluations():
            return []
        return [r for r in self.outcomes("ev").to_dict("records") if system is None or r["system"] == system]


_ledgers = itertools.count()


@pytest.fixture
def cue_ledger(tmp_path: Path) -> Iterator[Callable[..., CueLedger]]:
    """``cue_ledger(decide_after=None, cls=CueLedger)``: a new ``cls`` on a fresh SQLite file (closed after the test)."""
    opened: list[CueLedger] = []

    def make(decide_after: int | None = None, cls: type[CueLedger] = CueLedger) -> CueLedger:
        ledger = cls(tmp_path / f"cue-{next(_ledgers)}.db", decide_after)
        opened.append(ledger)
        return ledger

    yield make
    for ledger in opened:
        ledger.close()


@pytest.fixture
def cue_ledger_class() -> type[CueLedger]:
    """The CueLedger class, to subclass with other cues (test modules cannot import conftest under --import-mode=importlib)."""
    return CueLedger
