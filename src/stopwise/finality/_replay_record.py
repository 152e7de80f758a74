"""The controlled replay's record: schedule, table lines, per-trial observations, per-condition results."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal, NamedTuple

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from stopwise.errors import InputError
from stopwise.finality._check import RunCheck, ScoredRun
from stopwise.finality._effects import OpenEffectsRecord
from stopwise.finality._rows import finality_rows
from stopwise.records import write_outcomes

__all__ = [
    "REPLAY_CONDITIONS",
    "Condition",
    "ConditionResult",
    "ConditionSummary",
    "DelayedWriteReplay",
    "ReplayCount",
    "ReplaySchedule",
    "TrialObservation",
]

Condition = Literal["snapshot", "terminal", "cancel", "shared", "namespaced", "reset", "b-before-a", "grouped"]
REPLAY_CONDITIONS: tuple[Condition, ...] = (
    "snapshot",
    "terminal",
    "cancel",
    "shared",
    "namespaced",
    "reset",
    "b-before-a",
    "grouped",
)
"""The replay's conditions, in table order."""

TITLES: dict[Condition, str] = {
    "snapshot": "snapshot scoring",
    "terminal": "terminal reconciliation",
    "cancel": "verified cancellation",
    "shared": "shared state",
    "namespaced": "per-run namespaces",
    "reset": "verified reset",
    "b-before-a": "B before A",
    "grouped": "grouped analysis",
}
ARGUMENTS: dict[Condition, str] = {
    "snapshot": "async-no-reconciliation",
    "terminal": "terminal-reconciliation",
    "cancel": "verified-cancellation",
    "shared": "shared-state",
    "namespaced": "namespaced-runs",
    "reset": "verified-reset",
    "b-before-a": "b-before-a",
    "grouped": "grouped-analysis",
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class Spec(NamedTuple):
    trial: str
    identifier: int
    delay_ms: int
    repetition: int


class ReplaySchedule(_Model):
    """The frozen schedule: identifiers x delays x repetitions, one trial each.

    Examples
    --------
    >>> from stopwise.finality import ReplaySchedule
    >>> s = ReplaySchedule()
    >>> s.n_trials, tuple(s.trials()[0])
    (200, ('k1-d0-r0', 1, 0, 0))
    """

    identifiers: tuple[int, ...] = (1, 2, 3, 4, 5)
    """Item identifiers k (the paper: 1-5)."""
    delays_ms: tuple[int, ...] = (0, 25, 100, 250)
    """Delays of run A's write in milliseconds (the paper: 0, 25, 100, 250)."""
    repetitions: int = Field(default=10, ge=1, le=100)
    """Repetitions of every (identifier, delay) (the paper: 10)."""

    @field_validator("identifiers")
    @classmethod
    def _identifiers(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or len(set(value)) != len(value) or min(value) < 1 or len(value) > 100:
            raise ValueError("must be 1 to 100 distinct integers >= 1")
        return value

    @field_validator("delays_ms")
    @classmethod
    def _delays(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or len(set(value)) != len(value) or min(value) < 0 or max(value) > 5000:
            raise ValueError("must be distinct integers from 0 to 5000 (milliseconds)")
        positive = [d for d in value if d > 0]
        if positive and min(positive) < 15:
            raise ValueError("nonzero delays must be at least 15 ms, so the endpoint can come before the write lands")
        return value

    @property
    def n_trials(self) -> int:
        """Trials per condition."""
        return len(self.identifiers) * len(self.delays_ms) * self.repetitions

    def trials(self) -> list[Spec]:
        """Every trial as ``(trial id, identifier, delay_ms, repetition)``, in schedule order."""
        return [
            Spec(f"k{k}-d{d}-r{r}", k, d, r)
            for r in range(self.repetitions)
            for d in self.delays_ms
            for k in self.identifiers
        ]


class ReplayCount(_Model):
    """One line of the replay table: a measured count beside the count the design implies."""

    condition: str
    """The condition, in words."""
    measure: str
    """What was counted."""
    count: int
    """The measured count (from the service's answers)."""
    of: int
    """Out of how many."""
    expected: int
    """The count the schedule's design implies (the paper's count for the default schedule)."""
    paper: str | None
    """The paper's figure ("50/200"), shown only for the default schedule."""

    @property
    def matches(self) -> bool:
        """Whether the measured count equals the expected one."""
        return self.count == self.expected


class TrialObservation(_Model):
    """What one trial of one condition observed."""

    trial: str
    """Trial id ``k<identifier>-d<delay>-r<repetition>``."""
    identifier: int
    """Item identifier k."""
    delay_ms: int
    """Delay of run A's write."""
    repetition: int
    """Repetition number."""
    a_endpoint: Literal["pending", "applied", "cancelled"]
    """A's write as the service reported it at A's endpoint assessment."""
    scores: dict[str, float]
    """Score of each run ("A", "B") under the condition's scoring basis."""
    exposed: bool | None
    """Whether the item B was scored on held A's write (None where B is isolated by design)."""
    cancelled: bool | None
    """Cancel condition: whether A's write was cancelled, verified by a later query."""
    lag_ms: float | None
    """Service-clock time from A's write being accepted to the last step that had to precede its delay."""
    late: bool
    """The lag reached a nonzero delay: the schedule was not honoured (a machine too slow or too busy)."""
    attempts: int
    """Attempts made: a trial whose timing broke the schedule is rerun in fresh namespaces (up to a limit)."""


class ConditionSummary(_Model):
    """Counts of one condition, and what the completion checker made of its runs."""

    condition: Condition
    """Condition key."""
    title: str
    """Condition in words."""
    argument: str
    """Name of the completion argument the runs were checked against."""
    trials: int
    """Trials run."""
    successes: dict[str, int]
    """Runs scoring 1, per run role ("A", "B")."""
    exposed: int | None
    """Trials whose run B was scored on A's write (None where not measured)."""
    labels: dict[str, int]
    """Checked runs per label status (final, unresolved, bounded)."""
    rows: int
    """Outcome rows (one per run)."""
    units: int
    """Analysis units the checker formed from those rows."""
    late_trials: int
    """Trials whose timing did not honour the schedule (after their reruns)."""
    rerun_trials: int
    """Trials rerun because an attempt's timing did not honour the schedule."""


class ConditionResult(_Model):
    """Everything one condition produced: observations, runs, record, checks."""

    summary: ConditionSummary
    """The counts."""
    trials: list[TrialObservation]
    """One observation per trial, in schedule order."""
    runs: list[ScoredRun]
    """The scored runs, A and B of every trial."""
    record: OpenEffectsRecord
    """The open-effects record of every trial, built through the lifecycle API from the service's answers."""
    checks: list[RunCheck]
    """The completion checker's verdict on every run."""

    def outcome_rows(self) -> pd.DataFrame:
        """Outcome rows of the checked runs (:func:`finality_rows`): systems "A" and "B", one task per trial."""
        return finality_rows(self.checks)


class DelayedWriteReplay(_Model):
    """The record of the controlled delayed-write replay (``ControlledReplay`` before 0.1): the schedule, the table, and each condition's evidence."""

    version: Literal[1] = 1
    """Version of this record's schema."""
    schedule: ReplaySchedule
    """The schedule replayed."""
    counts: list[ReplayCount]
    """The replay table."""
    conditions: list[ConditionResult]
    """Per condition: summary, observations, runs, open-effects record, checks."""
    requests: int
    """HTTP requests made to the service."""
    late_trials: int
    """Trials (all conditions) whose timing did not honour the schedule even after reruns; 0 on a healthy machine."""
    rerun_trials: int
    """Trials (all conditions) rerun because a first attempt's timing did not honour the schedule."""
    elapsed_s: float
    """Wall-clock time of the whole replay, service start to stop."""
    stopwise_version: str
    """The library version that ran the replay."""

    @property
    def matches(self) -> bool:
        """Whether every measured count equals its expected count."""
        return all(c.matches for c in self.counts)

    def condition(self, name: str) -> ConditionResult:
        """The result of one condition.

        Raises
        ------
        InputError
            ``name`` was not replayed.
        """
        for result in self.conditions:
            if result.summary.condition == name:
                return result
        raise InputError(
            f"condition must be one of {', '.join(c.summary.condition for c in self.conditions)}; got {name!r}"
        )

    def summary(self) -> dict[str, Any]:
        """The record without per-trial evidence: schedule, table, condition summaries, timing."""
        return {
            "version": self.version,
            "schedule": self.schedule.model_dump(mode="json"),
            "counts": [c.model_dump(mode="json") | {"matches": c.matches} for c in self.counts],
            "conditions": [c.summary.model_dump(mode="json") for c in self.conditions],
            "matches": self.matches,
            "requests": self.requests,
            "late_trials": self.late_trials,
            "rerun_trials": self.rerun_trials,
            "elapsed_s": self.elapsed_s,
            "stopwise_version": self.stopwise_version,
        }

    def write(self, directory: str | os.PathLike[str], *, force: bool = False) -> list[Path]:
        """Write the record and its evidence into a new directory, atomically.

        Files: ``replay.json`` (:meth:`summary`), and per condition ``<condition>.effects.json``
        (the open-effects record), ``<condition>.checks.jsonl`` (one completion check per run) and
        ``<condition>.outcomes.csv`` (outcome rows for :func:`stopwise.compare.decide`).
        ``directory`` may be new or empty; an earlier stopwise output directory is replaced only with
        ``force``, any other one never (:func:`stopwise._atomic.write_directory`).

        Returns
        -------
        list of pathlib.Path
            The files written.
        """
        from stopwise._atomic import write_directory

        return write_directory(directory, self._fill, force=force)

    def _fill(self, folder: Path) -> list[Path]:
        written = [folder / "replay.json"]
        written[0].write_text(json.dumps(self.summary(), indent=2) + "\n", encoding="utf-8")
        for result in self.conditions:
            name = result.summary.condition
            effects = folder / f"{name}.effects.json"
            effects.write_text(result.record.to_json() + "\n", encoding="utf-8")
            checks = folder / f"{name}.checks.jsonl"
            checks.write_text("".join(c.model_dump_json() + "\n" for c in result.checks), encoding="utf-8")
            rows = write_outcomes(result.outcome_rows(), folder / f"{name}.outcomes.csv")
            written += [effects, checks, rows]
        return written

    def to_text(self) -> str:
        """The replay table as plain text."""
        header = ("condition", "measure", "measured", "expected", "paper")
        lines = [
            (c.condition, c.measure, f"{c.count}/{c.of}", f"{c.expected}/{c.of}", c.paper or "-") for c in self.counts
        ]
        widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]
        out = [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [header, *lines]
        ]
        out.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(out)
