"""Racing a family of k systems live in Inspect AI: each system stops once its comparisons are decided (issue 32).

:class:`FamilyRace` is the state every system's manager shares: the ledger (a family evaluation,
:meth:`stopwise.ledger.Ledger.register_family`), the planned universe, the latest family look. Inspect calls each
system's ``EarlyStopping`` manager at four points:

* ``start_task`` fixes the planned universe (the first task's sample ids in the order Inspect runs them, or the
  universe given), registers the family with its policy in the ledger (idempotent: every task and every process
  registers the same), and checks that later tasks bring the same sample ids;
* ``complete_sample`` appends the sample's outcome row (as ``stopwise ingest`` reads it from the log) and takes a
  family look (:meth:`stopwise.ledger.Ledger.decide_family`) once every system has an outcome in the ledger;
* ``schedule_sample`` returns ``EarlyStop`` for a system that the latest look does not list in ``needed`` (a
  candidate beaten by the control, an arm eliminated from best-of-k, a system all of whose pairs are decided;
  every system once the family's question is answered or the look is final), and for samples planned beyond a
  task-count budget; a look older than ``refresh`` seconds is taken again first (outcomes of other processes);
* ``complete_task`` returns the latest family record and this system's counts as the log's metadata.

The ledger is the only shared state: one worker process per system on one ledger (SQLite or PostgreSQL) races the
same family, each taking its looks from every process's outcomes. A look is a pure function of the stored events,
so the record in the last log and ``stopwise ledger decide --family`` (or ``decide_family`` on ``ledger export``)
agree. Stopping a system whose pairs are all decided leaves every undecided pair with both systems running: the
betting capitals of a pair advance on the pair's own observed prefix of the planned order, valid at every look.

With ``pace``, a system that has stored ``pace`` outcome events more than the slowest other system still needed
and running waits before its next sample (the progress read from the ledger, so across processes too), unless
that system stored nothing for :data:`PACE_STALL_S` seconds.

An errored sample of a task that tolerates errors (Inspect calls no ``complete_sample`` for it) is appended as a
``pending`` event flagged ``error``, as for a pair (:mod:`stopwise.inspect._errors`); the family waits for missing
outcomes (the system's prefix stops at the errored task). Not done here (the paired manager does it): the top-up
design's waiting tasks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from stopwise._logs import score_audit_flags, score_outcome, score_predicted
from stopwise._version import __version__
from stopwise.compare import budget_task_count
from stopwise.errors import InputError, StopwiseError
from stopwise.inspect._errors import missing_samples, register_hooks, watch_errors
from stopwise.inspect._family_spec import FamilySpec
from stopwise.inspect._ledger import LedgerArgument, open_ledger_argument
from stopwise.inspect._misuse import family_task_per_model
from stopwise.records import FamilyRecord, TaskUniverse

if TYPE_CHECKING:
    from inspect_ai.dataset import Sample
    from inspect_ai.log import EvalSpec
    from inspect_ai.scorer import SampleScore
    from inspect_ai.util import EarlyStop

__all__ = ["FamilyRace", "SystemRaceStopping", "family_early_stopping"]

_log = logging.getLogger("stopwise.inspect")

PACE_POLL_S = 0.05
"""How often a paced system reads the ledger's progress while it waits."""
PACE_STALL_S = 30.0
"""Pacing stops waiting for a system that stored no outcome for this long (Inspect tells nothing of a failed task)."""


@dataclass
class _Lane:
    """One system's task in this process: what it did."""

    system: str
    started: bool = False
    done: bool = False
    eval_id: str = ""
    completed: int = 0
    accepted: int = 0
    duplicates: int = 0
    conflicts: int = 0
    unscored: int = 0
    stopped: int = 0
    stopped_at: int | None = None
    """Samples this system had completed (in this process) when its first sample was skipped as not needed."""


class FamilyRace:
    """The state of a family race shared by its systems' managers: ledger, planned universe, latest family look.

    Parameters
    ----------
    ledger : str, path or Ledger
        A database URL (opened in ``create`` mode) or an opened :class:`~stopwise.ledger.Ledger`.
    spec : FamilySpec or str
        What is raced; or the evaluation id, with the other fields of :class:`FamilySpec` as keywords.

    Attributes
    ----------
    record : FamilyRecord or None
        The latest family look (None before every system has an outcome in the ledger).
    looks : int
        Family looks taken by this process.
    error : str or None
        Why the race stopped in this process (a ledger failure), or None.
    """

    def __init__(self, ledger: LedgerArgument, spec: FamilySpec | str, /, **fields: Any) -> None:
        self.spec = FamilySpec.of(spec, **fields)
        self.ledger, self.ledger_name = open_ledger_argument(ledger)
        self.evaluation = self.spec.evaluation
        self.policy = self.spec.policy
        self.record: FamilyRecord | None = None
        self.outcome_seq = 0
        """The ledger's outcome high-water mark of the latest look: ``Ledger.decide_family(evaluation, upto=...)``
        gives its record again."""
        self.looks = 0
        self.error: str | None = None
        register_hooks()  # before the run starts: the hook lists its tasks (a Task run once per model is refused)
        self.planned: list[str] = []
        self._position: dict[str, int] = {}
        self._allowed = 0
        self._universe: TaskUniverse | None = None
        self._lanes = {system: _Lane(system) for system in self.spec.systems}
        self._looked_at = float("-inf")
        self._lock = threading.Lock()
        self._progress: dict[str, int] = {}
        self._moved_at: dict[str, float] = {}

    def __repr__(self) -> str:
        return f"FamilyRace({self.evaluation!r}, systems={list(self.spec.systems)!r})"

    @property
    def universe(self) -> TaskUniverse | None:
        """The planned universe registered in the ledger (None before the first ``start_task``)."""
        return self._universe

    @property
    def budget_tasks(self) -> int:
        """How many planned tasks (in planned order) the policy's budget allows."""
        return self._allowed

    def lane(self, system: str) -> _Lane:
        """The counts of ``system`` in this process."""
        if system not in self._lanes:
            raise InputError(f"{system!r} is not a system of family {self.evaluation!r} ({', '.join(self._lanes)})")
        return self._lanes[system]

    def stops(self, system: str) -> bool:
        """Whether the latest look stops ``system`` (not ``needed``: decided, answered or final)."""
        record = self.record
        return record is not None and system not in record.needed

    # -- start ---------------------------------------------------------------------------------------

    def start(self, system: str, spec: EvalSpec, samples: list[Sample], *, routed: bool = False) -> None:
        """Start ``system``'s task: fix (first task) or check the planned universe and register the family.

        ``routed``: the call comes from ``family_model_early_stopping``'s manager; otherwise a run holding this task
        once per model is refused before any sample (:func:`stopwise.inspect._misuse.family_task_per_model`).
        """
        lane = self.lane(system)
        if not routed:
            family_task_per_model(self, system, spec)
        label = f"task {getattr(spec, 'task', '?')!r} (system {system!r})"
        if any(s.id is None for s in samples):
            raise InputError(f"{label}: every sample needs an id (the planned universe is the list of sample ids)")
        ids = [str(s.id) for s in samples]
        with self._lock:
            if self._universe is None:
                given = self.spec.universe
                if given is None and len(set(ids)) != len(ids):
                    raise InputError(f"{label}: sample ids must be unique as text (e.g. 1 and '1' collide)")
                universe = given if given is not None else TaskUniverse(ids, source=label)
                self.planned = [str(t) for t in universe.tasks]  # type: ignore[union-attr]
                self._position = {task: i for i, task in enumerate(self.planned)}
                limit, n = self.policy.budget.limit, len(self.planned)
                fraction = self.policy.budget.measure == "task_fraction"
                self._allowed = (budget_task_count(n, min(limit, 1.0)) if n else 0) if fraction else min(n, int(limit))
                self.ledger.register_family(self.evaluation, policy=self.policy, universe=universe, systems=self.spec.systems)
                self._universe = universe
            outside = sorted(set(ids) - set(self._position))
            if outside:
                raise InputError(
                    f"{label}: runs samples outside the planned universe of family {self.evaluation!r}: "
                    + ", ".join(outside[:5]) + (" ..." if len(outside) > 5 else "") + "; every system must run the same dataset"
                )
            lane.started, lane.done, lane.eval_id = True, False, str(getattr(spec, "eval_id", "") or "")
            self._notify(system, "started")
            watch_errors(self, system, spec)  # errored samples reach no complete_sample: Inspect's hook
            self._look(force=True)  # a re-run of a race the ledger has decided stops at once

    # -- schedule ----------------------------------------------------------------------------------

    def ahead(self, system: str) -> bool:
        """Whether ``system`` should wait: ``pace`` stored events ahead of the slowest other system still needed.

        The others counted are the systems the latest look needs (all before the first look) whose latest worker
        notice is ``started`` and that stored an outcome in the last :data:`PACE_STALL_S` seconds.
        """
        pace = self.spec.pace
        if pace is None or self.error is not None or self.stops(system):
            return False
        with self._lock:
            try:
                progress = self.ledger.progress(self.evaluation)
                states: dict[str, str] = {}
                for notice in self.ledger.notices(self.evaluation):
                    states[str(notice.system)] = str(notice.state)
            except Exception as exc:  # a read that fails here fails at the next schedule too, where it is recorded
                _log.warning("stopwise: pacing could not read the ledger: %s", exc)
                return False
            now = time.monotonic()
            for name in self.spec.systems:
                if progress.get(name, 0) != self._progress.get(name) or name not in self._moved_at:
                    self._moved_at[name] = now
            self._progress = dict(progress)
            needed = self.spec.systems if self.record is None else self.record.needed
            others = [
                progress.get(name, 0) for name in needed
                if name != system and states.get(name) == "started" and now - self._moved_at[name] <= PACE_STALL_S
            ]
        return bool(others) and progress.get(system, 0) - min(others) >= pace

    def schedule(self, system: str, sample_id: str | int, epoch: int) -> EarlyStop | None:
        """``EarlyStop`` when the latest look stops ``system``, or the sample lies beyond the budget; else None."""
        from inspect_ai.util import EarlyStop

        lane = self.lane(system)
        with self._lock:
            self._look(force=False)
            reason, metadata = self._stop_reason(system, sample_id)
            if reason is None:
                return None
            lane.stopped += 1
            if lane.stopped_at is None and metadata["action"] == "decided":
                lane.stopped_at = lane.completed
            return EarlyStop(id=sample_id, epoch=epoch, reason=reason, metadata={**metadata, "evaluation": self.evaluation})

    def _stop_reason(self, system: str, sample_id: str | int) -> tuple[str | None, dict[str, Any]]:
        if self.error is not None:
            return f"stopwise {self.error}", {"action": "error"}
        record = self.record
        if record is not None and system not in record.needed:
            why = (
                "the family's question is answered" if record.answered else
                "the look is final" if record.final else
                "every comparison of this system the family asks for is decided"
            )
            return f"stopwise family: {why} ({record.claim})", {
                "action": "decided", "status": record.status, "look": record.look, "best": record.best,
                "needed": list(record.needed),
            }
        position = self._position.get(str(sample_id))
        if position is not None and position >= self._allowed:
            return (
                f"stopwise budget: planned task {position + 1} of {len(self.planned)} is beyond the policy's budget of "
                f"{self._allowed} tasks"
            ), {"action": "budget", "position": position}
        return None, {}

    # -- complete ----------------------------------------------------------------------------------

    def complete(self, system: str, sample_id: str | int, epoch: int, scores: Mapping[str, SampleScore]) -> None:
        """Append the sample's outcome row to the ledger and take a family look."""
        lane = self.lane(system)
        outcome, problem = self._outcome(scores)
        if problem is not None:
            status, flags = "pending", "unscored"
        else:
            score = scores[self.spec.scorer_name or next(iter(scores))].score
            predicted = score_predicted(score)
            status = "predicted" if predicted else "final"
            flags = "predicted" if predicted else ";".join(score_audit_flags(score))
        row: dict[str, Any] = {
            "system": system, "task": str(sample_id), "outcome": outcome, "attempt": int(epoch) - 1,
            "status": status, "source": f"inspect:{lane.eval_id}",
        }
        if flags:
            row["flags"] = flags
        with self._lock:
            if not self._append(lane, row):
                return
            if problem is not None:
                lane.unscored += 1
                _log.warning("stopwise: %s sample %s: %s", system, sample_id, problem)
                return
            self._look(force=True)

    def system_of(self, system: str) -> str:
        """The system's name (the errored-sample hook's call, :mod:`stopwise.inspect._errors`)."""
        return system

    def errored(self, system: str, task: str, epoch: int, note: Callable[[], None]) -> None:
        """``system``'s run of ``task`` errored: ``note`` it and append it as a ``pending`` event flagged ``error``."""
        lane = self.lane(system)
        row = {"system": system, "task": task, "outcome": None, "attempt": int(epoch) - 1, "status": "pending",
               "source": f"inspect:{lane.eval_id}", "flags": "error"}
        with self._lock:
            note()
            self._append(lane, row)

    def task_failed(self, system: str, reason: str) -> None:
        """``system``'s task is failing (Inspect fails it at an errored sample): the ledger's notice says so.

        The other systems race on: their looks count only the tasks every system ran, so the family's record
        stops advancing, and ``stopwise ledger decide --family`` shows where it stood.
        """
        _log.warning("stopwise: system %r of family %r: %s", system, self.evaluation, reason)
        self._notify(system, "failed", reason)

    def _append(self, lane: _Lane, row: dict[str, Any]) -> bool:
        """Append ``row`` for ``lane`` and count it; False when the race has stopped or the ledger failed (lock held)."""
        lane.completed += 1
        if self.error is not None:
            return False
        try:
            result = self.ledger.append(self.evaluation, [row])
        except Exception as exc:  # the ledger is unusable: stop the race, keep the Inspect log
            self._fail("append", exc)
            return False
        lane.accepted += result.accepted
        lane.duplicates += result.duplicates
        lane.conflicts += result.conflicts
        return True

    def _outcome(self, scores: Mapping[str, SampleScore]) -> tuple[float | None, str | None]:
        if not scores:
            return None, "no score"
        name = self.spec.scorer_name or next(iter(scores))
        if name not in scores:
            return None, f"no score from scorer {name!r} (scores: {', '.join(scores)})"
        value = scores[name].score.value
        key = self.spec.scorer_key
        if isinstance(value, dict):
            if key is None or key not in value:
                return None, f"scorer {name!r} gives a dict; pick a key with scorer='{name}:KEY'"
            value = value[key]
        outcome, problem = score_outcome(value)
        if problem is not None:
            return None, f"scorer {name!r} value {value!r} {problem}"
        return (None, f"scorer {name!r} gave no value") if outcome is None else (outcome, None)

    # -- looks ---------------------------------------------------------------------------------------

    def _look(self, *, force: bool) -> None:
        """Take a family look from the ledger (``force``, or the last is older than ``refresh``); called with the lock."""
        if self.error is not None or self._universe is None:
            return
        if not force and time.monotonic() - self._looked_at < self.spec.refresh:
            return
        self._looked_at = time.monotonic()
        try:
            progress = self.ledger.progress(self.evaluation)
            if any(progress.get(system, 0) == 0 for system in self.spec.systems):
                return  # a family look needs an outcome of every system
            high_water = self.ledger.high_water(self.evaluation)  # the look's events: reproducible with upto
            self.record = self.ledger.decide_family(self.evaluation, upto=high_water)
            self.outcome_seq = high_water
        except Exception as exc:
            self._fail("look", exc)
            return
        self.looks += 1

    def _fail(self, call: str, exc: Exception) -> None:
        self.error = f"ledger {call} failed: {type(exc).__name__}: {str(exc)[:400]}"
        _log.error("stopwise: %s; family %r stops (scored samples stay in the Inspect log)", self.error, self.evaluation)
        for lane in self._lanes.values():
            if lane.started and not lane.done:
                self._notify(lane.system, "failed", self.error)

    def _notify(self, system: str, state: str, message: str = "") -> None:
        try:  # best effort: the workers' states are for `stopwise watch` and the other processes' logs
            self.ledger.notify(self.evaluation, system=system, state=state, message=message)  # type: ignore[arg-type]
        except Exception as exc:
            _log.warning("stopwise: could not record %r %s in the ledger: %s", system, state, exc)

    # -- finish ----------------------------------------------------------------------------------------

    def finish(self, system: str) -> dict[str, Any]:
        """The log's early-stopping metadata of ``system``: the latest family record and this system's counts."""
        lane = self.lane(system)
        with self._lock:
            self._look(force=True)
            lane.done = True
            if self.error is None:
                self._notify(system, "finished")
            record = self.record
            summary = {
                "stopwise_version": __version__,
                "evaluation": self.evaluation,
                "ledger": self.ledger_name,
                "system": system,
                "systems": list(self.spec.systems),
                "planned_tasks": len(self.planned),
                "budget_tasks": self._allowed,
                "completed": lane.completed,
                "appended": {"accepted": lane.accepted, "duplicates": lane.duplicates, "conflicts": lane.conflicts,
                             "unscored": lane.unscored},
                "stopped": lane.stopped,
                "stopped_after": lane.stopped_at,
                "errored": missing_samples(self, system),
                "notes": _error_notes(missing_samples(self, system)),
                "looks": self.looks,
                "error": self.error,
                "status": None if record is None else record.status,
                "best": None if record is None else record.best,
                "needed": None if record is None else list(record.needed),
                "tiers": None if record is None else [tier.systems for tier in record.tiers],
                "record": None if record is None else record.model_dump(mode="json"),
                "record_sha256": None if record is None else record.digest(),
                "outcome_seq": self.outcome_seq,
            }
        closing = self._fail_closed(system, lane.completed, lane.stopped)
        if closing is not None:
            _log.error("%s", closing)
            raise StopwiseError(closing)
        return summary

    def _fail_closed(self, system: str, completed: int, stopped: int) -> str | None:
        """Why ``system``'s log ends in error: the ledger failed before the family's question was settled.

        Its samples were then no longer scheduled (nor any other system's), so a log ending in success would read as
        a finished race; ``eval_set`` retries a task whose log ends in error (issue 37, as the paired managers do).
        """
        record = self.record
        if self.error is None or (record is not None and (record.answered or record.final)):
            return None
        return (
            f"stopwise: {self.error}; system {system!r} ran {completed} sample(s) and skipped {stopped} (family "
            f"{self.evaluation!r}, not settled): no later sample of any system was scheduled (fail closed); run the "
            "tasks again once the ledger works (eval_set retries them): the outcomes stored so far are kept in the "
            "ledger and not stored twice"
        )


def _error_notes(errored: list[dict[str, Any]]) -> list[str]:
    """The log's note on a system's errored samples (what the family does with them)."""
    if not errored:
        return []
    tasks = list(dict.fromkeys(e["task"] for e in errored))
    shown = ", ".join(tasks[:20]) + (f", ... ({len(tasks)} in all)" if len(tasks) > 20 else "")
    return [
        f"{len(errored)} sample(s) errored and are missing outcomes (pending in the ledger, flag error): {shown}; the "
        "family waits for missing outcomes: this system's prefix of the planned order stops at the first of them"
    ]


class SystemRaceStopping:
    """Inspect ``EarlyStopping`` manager of one system of a :class:`FamilyRace` (``Task(..., early_stopping=...)``)."""

    def __init__(self, race: FamilyRace, system: str, *, routed: bool = False) -> None:
        race.lane(system)  # a system of the family
        self.race = race
        self.system = system
        self.routed = routed  # called by family_model_early_stopping's manager, which routes the models

    def __repr__(self) -> str:
        return f"SystemRaceStopping({self.race.evaluation!r}, {self.system!r})"

    async def start_task(self, task: EvalSpec, samples: list[Sample], epochs: int) -> str:
        """Fix or check the planned universe and register the family; returns the manager name."""
        await anyio.to_thread.run_sync(lambda: self.race.start(self.system, task, samples, routed=self.routed))
        return f"stopwise ({self.race.evaluation}: family system {self.system})"

    async def schedule_sample(self, id: str | int, epoch: int) -> EarlyStop | None:
        """``EarlyStop`` once the family no longer needs this system, or the sample lies beyond the budget.

        While this system is ``pace`` events ahead of the slowest other system still needed, it waits first.
        """
        while await anyio.to_thread.run_sync(self.race.ahead, self.system):
            await anyio.sleep(PACE_POLL_S)
        return await anyio.to_thread.run_sync(self.race.schedule, self.system, id, epoch)

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, SampleScore]) -> None:
        """Append the sample's outcome to the ledger and take a family look."""
        await anyio.to_thread.run_sync(self.race.complete, self.system, id, epoch, scores)

    async def complete_task(self) -> dict[str, Any]:
        """The latest family record and this system's counts, as the log's early-stopping metadata."""
        return await anyio.to_thread.run_sync(self.race.finish, self.system)


def family_early_stopping(ledger: LedgerArgument, spec: FamilySpec | str, /, **fields: Any) -> dict[str, SystemRaceStopping]:
    """One Inspect early-stopping manager per system of a family race, sharing one ledger.

    Give each system's Task its manager (``Task(..., early_stopping=managers[system])``) and run the tasks together
    (``eval([...], max_tasks=k)``), or run one worker process per system, each building the race on the same ledger
    and using its own system's manager.

    Parameters
    ----------
    ledger : str, path or Ledger
        A database URL (``"sqlite:///ledger.db"``, ``"postgresql+psycopg://..."``) or an opened ledger.
    spec : FamilySpec or str
        What is raced; or the evaluation id, with the other fields of :class:`FamilySpec` as keywords.

    Returns
    -------
    dict
        ``{system: SystemRaceStopping}``; ``manager.race`` is their shared :class:`FamilyRace`.

    Examples
    --------
    >>> from stopwise.inspect import family_early_stopping
    >>> managers = family_early_stopping("sqlite:///:memory:", "race", systems=["A", "B", "C"])
    >>> sorted(managers), managers["A"].race is managers["C"].race
    (['A', 'B', 'C'], True)
    """
    race = FamilyRace(ledger, spec, **fields)
    return {system: SystemRaceStopping(race, system) for system in race.spec.systems}
