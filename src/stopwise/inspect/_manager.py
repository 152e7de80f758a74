"""A paired early-stopping manager for Inspect AI: stop both systems once the comparison is decided.

Inspect calls an ``EarlyStopping`` manager (``inspect_ai.util``) at four points of a task:
``start_task`` (the samples about to run), ``schedule_sample`` (before a sample starts: return an
``EarlyStop`` to skip it), ``complete_sample`` (its scores) and ``complete_task`` (metadata for the
log). None of these calls names the model, so a paired comparison is two Task objects, one per
system, each with its own manager. :func:`paired_early_stopping` builds the two managers around one
shared :class:`PairedComparison`, which holds the ledger (``eval(task, model=[A, B])`` runs one Task
object for both models: :mod:`stopwise.inspect._models` routes its one manager's calls by the
active model; :mod:`stopwise.inspect._registry` keeps one comparison per ledger and evaluation for
task files run by ``inspect eval``):

* ``start_task`` fixes the planned task universe (the dataset's sample ids in the order Inspect
  will run them, or the universe given) and registers the evaluation with its policy in the ledger;
  the second task must bring the same sample ids;
* ``complete_sample`` turns the scored sample into an outcome row (score -> outcome by
  :func:`stopwise._logs.score_outcome`; epoch e -> attempt e - 1), appends it to the
  ledger and, when the row completes a pair (both systems have an outcome of the task), asks the
  ledger for a decision;
* ``schedule_sample`` returns ``EarlyStop`` for every later sample of both systems once the
  decision is final (promote, reject or abstain), for every sample but the top-up tasks while a
  crossed boundary waits for them (the top-up design: the record's ``top_up``; nothing else is
  needed before the action), and for samples planned beyond a task-count
  budget limit;
* ``complete_task`` returns the latest decision record (and the counts of what was appended and
  skipped) as the log's early-stopping metadata.

The ledger is the single source of pairing state: whether a pair is complete (the partner's final
outcome of the task) and whether the comparison is decided (its decision chain) are read from the
ledger, not from this process's memory, so a worker process per system on one ledger, a retried
eval in a new process or a task run again all see one comparison. The first final decision in the
chain stays the decision. A process reads the chain after each append and, before scheduling a
sample, when its last read is older than ``refresh`` seconds.

Samples already running when the decision is taken finish and are appended (nothing is lost);
the decision is not re-taken for them. Every call runs in a worker thread
(``anyio.to_thread.run_sync``), so a ledger transaction or a look never holds the event loop that
drives the samples in flight; the faster system waits while it is ``pace`` samples ahead of the
slower (in this process by the samples completed, across processes by the events each stored in
the ledger). If the ledger fails (the database is unreachable, full or locked for too long), no later sample of
either system is scheduled (``EarlyStop`` with the error as reason) and the error is in the log's
metadata: the samples already scored stay in the Inspect logs, and the evaluation does not go on
without its audit trail. A task refused at start or a ledger failure also stops the partner's
scheduling, in this process or, through the workers' notices in the ledger
(:mod:`stopwise.inspect._partner`), in another.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.to_thread

from stopwise._logs import score_audit_flags, score_outcome, score_predicted, score_probability_flags
from stopwise._version import __version__
from stopwise.compare import budget_task_count
from stopwise.errors import InputError, StopwiseError
from stopwise.inspect._closing import REFUSED, end_notes, fail_closed, partner_down
from stopwise.inspect._errors import error_notes, missing_samples, register_hooks, watch_errors
from stopwise.inspect._ledger import LedgerArgument, open_ledger_argument
from stopwise.inspect._misuse import one_task_per_model
from stopwise.inspect._partner import PACE_LEDGER_POLL_S, PartnerWatch
from stopwise.inspect._prefix import Late, PrefixGate, order_stop, recorded_tasks
from stopwise.inspect._spec import PairedSpec
from stopwise.records import ACTIONS, DecisionRecord, TaskUniverse

if TYPE_CHECKING:
    from inspect_ai.dataset import Sample
    from inspect_ai.log import EvalSpec
    from inspect_ai.scorer import SampleScore
    from inspect_ai.util import EarlyStop

__all__ = ["PairedComparison", "SystemEarlyStopping", "paired_early_stopping"]

_log = logging.getLogger("stopwise.inspect")

Role = Literal["tested", "baseline"]
_FINAL = tuple(a for a in ACTIONS if a != "continue")
_PARTNER: dict[Role, Role] = {"tested": "baseline", "baseline": "tested"}
_LATE = 8
"""How many planned positions past a task another may complete before the task counts as run out of order."""
_PACE_POLL_S = 0.005
_PACE_STALL_S = 30.0
"""Pacing stops holding a system once its partner has completed no sample for this long: Inspect tells
the manager nothing when a task fails (no ``complete_task``), and the partner may have failed."""


@dataclass
class _Counts:
    accepted: int = 0
    duplicates: int = 0
    conflicts: int = 0
    unscored: int = 0
    in_doubt: int = 0
    """Appends whose call failed: a commit can reach the ledger and its reply be lost with the connection."""
    stopped: int = 0
    completed: int = 0


@dataclass
class _Side:
    system: str
    started: bool = False
    done: bool = False
    ending: bool = False  # its task has run all its samples (Inspect called complete_task): none completes any more
    eval_id: str = ""
    model: str = ""
    run: str = ""
    task_id: str = ""
    progress_at: float = 0.0  # time.monotonic() of the last start or completed sample
    furthest: int = -1  # the furthest planned position completed
    late: list[str] = field(default_factory=list)  # tasks completed after one planned _LATE positions further
    counts: _Counts = field(default_factory=_Counts)
    gate: PrefixGate | None = None  # no sample runs far ahead of a task of this run that has not come yet


class PairedComparison:
    """The state two paired managers share: ledger, evaluation, planned universe and latest decision.

    Built by :func:`paired_early_stopping`; read it after the run for the decision
    (``comparison.decision``) and the counts.

    Parameters
    ----------
    ledger : str, path or Ledger
        A database URL (opened in ``create`` mode) or an opened :class:`~stopwise.ledger.Ledger`.
    spec : PairedSpec or str
        What is compared; or the evaluation id, with the other fields of :class:`PairedSpec` as keywords.

    Attributes
    ----------
    spec : PairedSpec
        What is compared.
    ledger : Ledger
        The opened ledger.
    evaluation : str
        The ledger's evaluation id.
    tested, baseline : str
        The two systems (system names in the ledger rows).
    policy : Policy
        The comparison policy (locked in the ledger at registration).
    decision : DecisionRecord or None
        The latest decision taken from the ledger (None before the first complete pair).
    planned : list of str
        The planned task ids in planned order (set by the first ``start_task``).
    """

    def __init__(self, ledger: LedgerArgument, spec: PairedSpec | str, /, **fields: Any) -> None:
        self.spec = PairedSpec.of(spec, **fields)
        """What is compared (evaluation, systems, policy, universe, group, scorer, refresh, pace)."""
        spec = self.spec
        self.pace = spec.pace
        self.policy = spec.policy
        self.ledger, self.ledger_name = open_ledger_argument(ledger)
        self.evaluation = spec.evaluation
        self.tested = spec.tested
        self.baseline = spec.baseline
        self.group = spec.group
        self.scorer, self.key = spec.scorer_name, spec.scorer_key
        self.decision: DecisionRecord | None = None
        self.error: str | None = None
        self.looks = 0
        self.planned: list[str] = []
        self._planned_groups: list[str] | None = None
        self._position: dict[str, int] = {}
        self._group_of: dict[str, str] = {}
        self._given = spec.universe
        self._order_notes: list[str] = []
        self._universe: TaskUniverse | None = self._given
        self._allowed = 0
        self._registered = False
        self._sides: dict[Role, _Side] = {"tested": _Side(spec.tested), "baseline": _Side(spec.baseline)}
        # Tasks known to have a final outcome of each system: a cache of what the ledger holds (it
        # only grows), filled by this process's appends and by reading the ledger.
        self._seen: dict[Role, set[str]] = {"tested": set(), "baseline": set()}
        self._refresh = spec.refresh
        self._decision_seq = 0  # the last decision link read from the ledger
        self._synced_at = float("-inf")
        self._lock = threading.Lock()
        # the other worker, when it runs in another process: its state (failed?) and progress, from the ledger
        self.partners = PartnerWatch(self.ledger, spec.evaluation)
        self._failed: dict[Role, str] = {}  # a task of this process that failed (at start or a sample), with the reason
        self._abandoned: dict[Role, str] = {}  # a role that gave up waiting for its partner (down): why; it skips the rest
        self._waiting_since: dict[Role, float] = {}  # since when a role holds its next sample for a partner that is down
        self._notices_at = float("-inf")
        self._misused: dict[Role, str] = {}  # a role whose manager a second task (model) started on: why
        register_hooks()  # before the run starts: the hook counts its tasks

    # -- state -----------------------------------------------------------------------------------

    @property
    def final(self) -> bool:
        """True once the latest decision is promote, reject or abstain."""
        return self.decision is not None and self.decision.action in _FINAL

    @property
    def ended(self) -> bool:
        """True once both tasks of this comparison ended (Inspect called ``complete_task`` for each)."""
        return all(side.started and side.done for side in self._sides.values())

    @property
    def universe(self) -> TaskUniverse | None:
        """The planned task universe registered in the ledger (None before the first ``start_task``)."""
        return self._universe if self._registered else None

    @property
    def budget_tasks(self) -> int:
        """How many planned tasks (in planned order) the policy's budget allows."""
        return self._allowed

    def _plan(self, ids: list[str], groups: list[str] | None, label: str) -> None:
        """Fix the planned universe at the first start_task; check the second brings the same tasks."""
        if self._registered:
            if set(ids) - set(self._position):
                extra = sorted(set(ids) - set(self._position))
                raise InputError(
                    f"{label}: runs samples outside the planned universe of evaluation {self.evaluation!r}: "
                    + ", ".join(extra[:5])
                    + (" ..." if len(extra) > 5 else "")
                    + "; both tasks must run the same dataset"
                )
            self._note_order(ids, self.planned, label)
            if self._given is None and set(ids) != set(self._position):
                missing = sorted(set(self._position) - set(ids))
                raise InputError(
                    f"{label}: runs {len(ids)} samples but the paired task planned {len(self._position)}; missing "
                    + ", ".join(missing[:5])
                    + "; both tasks must run the same samples (same dataset, limit and shuffle seed)"
                )
            return
        if self._given is not None:
            universe = self._given
            planned = [str(t) for t in universe.tasks]  # type: ignore[union-attr]
            planned_groups = [str(g) for g in universe.groups] if universe.has_groups else None  # type: ignore[union-attr]
            outside = sorted(set(ids) - set(planned))
            if outside:
                raise InputError(
                    f"{label}: sample ids not in the given universe: " + ", ".join(outside[:5])
                    + (" ..." if len(outside) > 5 else "")
                )
            self._note_order(ids, planned, label)
        else:
            if len(set(ids)) != len(ids):
                raise InputError(f"{label}: sample ids must be unique as text (e.g. 1 and '1' collide)")
            universe = TaskUniverse(ids, groups, source=label)
            planned, planned_groups = ids, groups
        self.planned = list(planned)
        self._planned_groups = planned_groups
        self._position = {task: i for i, task in enumerate(planned)}
        if planned_groups is not None:
            self._group_of = dict(zip(planned, planned_groups, strict=True))
        elif groups is not None:
            self._group_of = dict(zip(ids, groups, strict=True))
        n = len(planned)
        limit = self.policy.budget.limit
        if self.policy.budget.measure == "task_fraction":
            self._allowed = budget_task_count(n, min(limit, 1.0)) if n else 0
        else:
            self._allowed = min(n, int(limit))
        self._universe = universe
        self.ledger.register(
            self.evaluation, policy=self.policy, universe=universe, tested=self.tested, baseline=self.baseline
        )
        self._registered = True
        # A re-run (or a resumed run) of an evaluation the ledger has already decided stops at once.
        self._sync()

    # -- the ledger is the single source of pairing state -----------------------------------------

    def _sync(self) -> None:
        """Read the decision links appended since the last read (by any process) from the ledger.

        The first final decision in the chain is the comparison's decision and stays so (a look
        taken concurrently by another process before it saw that decision cannot undo it); before
        it, the latest link is the current decision.
        """
        self._synced_at = time.monotonic()
        for link in self.ledger.decisions(self.evaluation, after=self._decision_seq):
            self._decision_seq = link.sequence
            if not self.final:
                self.decision = link.record
        self.partners.refresh()

    def ahead(self, role: Role) -> bool:
        """Whether ``role`` should wait before its next sample (it is ``pace`` samples ahead of its partner).

        It waits when it has completed ``pace`` samples more than its partner, which runs in this
        process, has not finished and has completed a sample in the last ``_PACE_STALL_S`` seconds
        (a failed task is never waited for), and nothing is decided.
        Lock-free reads of counters (the caller polls on the event loop, holding no worker thread).
        Pacing only holds the faster system, never both: the slower one always proceeds.
        """
        if self.pace is None or self.error is not None or self.final or not self._partner_live(role):
            return False
        return self._sides[role].counts.completed - self._sides[_PARTNER[role]].counts.completed >= self.pace

    def awaits_top_up(self, role: Role) -> bool:
        """Whether ``role``'s task, ending, should wait for its partner's top-up samples (lock-free, on the event loop).

        While a crossed boundary waits for its top-up tasks, every other sample is skipped, so one system may run
        out of samples while its partner (in this process) still runs a top-up task that brings the action.
        Its log then waits for that action instead of carrying the waiting record, as long as the partner
        has not finished and has completed a sample in the last ``_PACE_STALL_S`` seconds.
        """
        decision = self.decision
        if self.error is not None or self.final or decision is None or not decision.top_up:
            return False
        return self._partner_live(role)

    def _partner_live(self, role: Role) -> bool:
        """Whether ``role``'s partner runs samples here: started, not ending, and completed one in the last ``_PACE_STALL_S`` s.

        A partner whose task is ending (:meth:`ending`) completes no sample any more: pacing never waits
        for it to catch up, and a task ending never waits for its top-up samples. Inspect tells the
        manager nothing when a task fails: a partner stalled that long may have failed.
        """
        partner = self._sides[_PARTNER[role]]
        return (
            partner.started
            and _PARTNER[role] not in self._failed
            and not partner.done
            and not partner.ending
            and time.monotonic() - partner.progress_at <= _PACE_STALL_S
        )

    def ending(self, role: Role) -> None:
        """``role``'s task has run all its samples (Inspect called ``complete_task``): it completes none any more.

        Its partner then neither waits for it to catch up (pacing) nor, ending too, for its top-up samples:
        without this, a partner held by pacing and this task waiting for that partner's top-up sample
        waited for each other until one of them looked stalled (``_PACE_STALL_S``).
        """
        self._sides[role].ending = True

    def _stale(self) -> bool:
        return time.monotonic() - self._synced_at >= self._refresh

    def _pair_complete(self, role: Role, task: str) -> bool:
        """Whether the partner system has a final outcome of ``task`` (in any process), read from the ledger."""
        partner = _PARTNER[role]
        if task in self._seen[partner]:
            return True
        if task in self.ledger.final_tasks(self.evaluation, self._sides[partner].system, [task]):
            self._seen[partner].add(task)
            return True
        return False

    # -- the four calls, for one side ----------------------------------------------------------

    def start(self, role: Role, spec: EvalSpec, samples: list[Sample], epochs: int, *, routed: bool = False) -> None:
        """Start ``role``'s task; a task refused here (e.g. other sample ids) is recorded so its partner stops too.

        ``routed``: the call comes from a manager that routes the tasks of several models (``paired_model_early_stopping``);
        otherwise a run holding this task once per model is refused at once (:func:`stopwise.inspect._misuse.one_task_per_model`).
        """
        try:
            if not routed:
                one_task_per_model(self, role, spec)
            self._start(role, spec, samples, epochs)
        except Exception as exc:
            with self._lock:
                self._failed[role] = f"{REFUSED}: {exc}"
                self.partners.announce(self._sides[role].system, "failed", self._failed[role])
            raise
        with self._lock:
            self._failed.pop(role, None)
            self._abandoned.pop(role, None)
            self._waiting_since.pop(role, None)
            self.partners.announce(self._sides[role].system, "started")

    def _start(self, role: Role, spec: EvalSpec, samples: list[Sample], epochs: int) -> None:
        side = self._sides[role]
        label = f"task {spec.task!r} ({role} {side.system!r})"
        with self._lock:
            model = str(getattr(spec, "model", "") or "")
            run = str(getattr(spec, "run_id", "") or "")
            task_id = str(getattr(spec, "task_id", "") or "")
            if side.started and model == side.model and (task_id == side.task_id or run != side.run):
                # the same task started again with the same model: eval_set retrying it after an error (same
                # run and task id, a new eval id; Inspect calls no complete_task for the failed attempt) or a
                # later run (a re-run of the script): a new log. Another task of the same run on this manager
                # is eval(task, model=[A, B]) (one task id per model) or one manager given to two Tasks: refused.
                side.started, side.done, side.ending, side.counts = False, False, False, _Counts()
                side.furthest, side.late = -1, []
                self._misused.pop(role, None)
            if side.started:
                self._misused[role] = (
                    f"{label}: a second task (model {model!r}) started on this system's manager: eval(task, model=[A, B]) "
                    "reuses one Task for both models; give that Task the manager of paired_model_early_stopping, or build "
                    "one Task per system, each with its own manager from paired_early_stopping"
                )
                raise InputError(
                    f"{label}: this manager already started a task; eval(task, model=[A, B]) reuses one Task for "
                    "both models: give that Task the manager of paired_model_early_stopping, or build one Task per "
                    "system, each with its own manager from paired_early_stopping"
                )
            ids = [str(s.id) for s in samples]
            if any(s.id is None for s in samples):
                raise InputError(f"{label}: every sample needs an id (the planned universe is the list of sample ids)")
            groups = None
            if self.group is not None:
                lacking = [str(s.id) for s in samples if (s.metadata or {}).get(self.group) is None]
                if lacking:
                    raise InputError(
                        f"{label}: samples lack metadata[{self.group!r}] (the coverage group): "
                        + ", ".join(lacking[:5])
                    )
                groups = [str((s.metadata or {})[self.group]) for s in samples]
            self._check_scorer(spec, label)
            self._plan(ids, groups, label)
            side.gate = PrefixGate(ids, recorded_tasks(self.ledger, self.evaluation, side.system))
            side.started = True
            side.model, side.run, side.task_id = model, run, task_id
            side.progress_at = time.monotonic()
            side.eval_id = str(getattr(spec, "eval_id", "") or "")
            watch_errors(self, role, spec)  # errored samples reach no complete_sample: Inspect's hook

    def arrive(self, role: Role, sample_id: str | int) -> Late | None:
        """``role``'s sample reached ``schedule_sample``: None, or the missing task it came too far ahead of (skip it).

        See :mod:`stopwise.inspect._prefix`: in a retry Inspect may start the sample that errored after many later
        ones; none of them runs more than ``WINDOW`` places past it. Called before any pacing wait, in the order
        the samples got their slots.
        """
        gate = self._sides[role].gate
        if gate is None:
            return None
        with self._lock:
            return gate.arrive(str(sample_id))

    def _note_order(self, ids: list[str], planned: list[str], label: str) -> None:
        position = {task: i for i, task in enumerate(planned)}
        runs = [position[t] for t in ids if t in position]
        if runs != sorted(runs):
            self._order_notes.append(
                f"{label}: Inspect runs the samples in another order than the planned universe; decisions "
                "stay valid but may come later (give Inspect the dataset in planned order: planned_order)"
            )

    def _check_scorer(self, spec: EvalSpec, label: str) -> None:
        names = [s.name for s in (getattr(spec, "scorers", None) or [])]
        if self.scorer and names and self.scorer not in names:
            raise InputError(f"{label}: has no scorer {self.scorer!r}; its scorers are {', '.join(names)}")

    def schedule(self, role: Role, sample_id: str | int, epoch: int, late: Late | None = None) -> EarlyStop | None:
        from inspect_ai.util import EarlyStop

        with self._lock:
            if self.error is None and not self.final and self._stale():
                try:  # another process may have decided (or this one, from a sample just completed)
                    self._sync()
                except Exception as exc:
                    self._fail("read", None, exc)
            stop = self._stop_reason(role, sample_id)
            gate = self._sides[role].gate
            top_up = () if self.decision is None else self.decision.top_up or ()
            if stop is None and late is not None and gate is not None and str(sample_id) not in top_up:
                gate.skip(late)  # a top-up task the action waits for runs out of order by design
                stop = order_stop(late)
            if stop is None:
                return None
            self._sides[role].counts.stopped += 1
            reason, metadata = stop
            return EarlyStop(id=sample_id, epoch=epoch, reason=reason, metadata={**metadata, "evaluation": self.evaluation})

    def _stop_reason(self, role: Role, sample_id: str | int) -> tuple[str, dict[str, Any]] | None:
        """Why ``role``'s sample is not run (its skip reason and metadata), or None to run it."""
        if self.error is not None:
            return f"stopwise {self.error}", {"action": "error"}
        if self.final:
            assert self.decision is not None
            decision = self.decision
            return f"stopwise {decision.action}: {decision.reason}", {
                "action": decision.action, "look": self.looks, "n_observed": decision.n_observed, "delta_hat": decision.delta_hat,
            }
        misused = self._misused.get(role)
        if misused is not None:  # the first task on the manager stops too: what it runs is not paired
            return f"stopwise refused: {misused}", {"action": "refused"}
        abandoned = self._abandoned.get(role)
        if abandoned is not None:
            return f"stopwise partner failed: {abandoned}", {"action": "partner_failed"}
        top_up = None if self.decision is None else self.decision.top_up
        if top_up and str(sample_id) not in top_up:  # crossed: the action waits for these tasks alone
            shown = ", ".join(top_up[:5]) + (f", ... ({len(top_up)} in all)" if len(top_up) > 5 else "")
            return (
                f"stopwise top-up: the boundary is crossed and the action waits only for the top-up task(s) that bring "
                f"coverage ({shown}); this task is not among them"
            ), {"action": "top-up", "top_up": list(top_up), "look": self.looks}
        position = self._position.get(str(sample_id))
        if position is not None and position >= self._allowed:
            return (
                f"stopwise budget: planned task {position + 1} of {len(self.planned)} is beyond the policy's budget of "
                f"{self._allowed} tasks"
            ), {"action": "budget", "position": position}
        return None

    def _outcome(self, scores: Mapping[str, SampleScore]) -> tuple[float | None, str | None]:
        if not scores:
            return None, "no score"
        name = self.scorer or next(iter(scores))
        if name not in scores:
            return None, f"no score from scorer {name!r} (scores: {', '.join(scores)})"
        value = scores[name].score.value
        if isinstance(value, dict):
            if self.key is None or self.key not in value:
                return None, f"scorer {name!r} gives a dict; pick a key with scorer='{name}:KEY'"
            value = value[self.key]
        outcome, problem = score_outcome(value)
        if problem is not None:
            return None, f"scorer {name!r} value {value!r} {problem}"
        if outcome is None:
            return None, f"scorer {name!r} gave no value"
        return outcome, None

    def complete(self, role: Role, sample_id: str | int, epoch: int, scores: Mapping[str, SampleScore]) -> None:
        side = self._sides[role]
        task = str(sample_id)
        outcome, problem = self._outcome(scores)
        score = None if problem is not None else scores[self.scorer or next(iter(scores))].score
        flags: str | None
        if score is None:
            status, flags = "pending", "unscored"  # as `stopwise ingest` flags an unscored sample of the log
        elif score_predicted(score):  # a sample halted by stopwise.inspect.LiveHalting: its predicted outcome
            status, flags = "predicted", ";".join(["predicted", *score_probability_flags(score)])  # as `stopwise ingest` flags it
        else:  # an audited run of LiveHalting: flags audited (and would-halt:f)
            status, flags = "final", ";".join(score_audit_flags(score)) or None
        row = self._row(side, task, epoch, outcome, status, flags)
        with self._lock:
            side.counts.completed += 1
            side.progress_at = time.monotonic()
            self._track_order(side, task)
            if side.gate is not None:  # a reused prior record comes here without schedule_sample
                side.gate.done(task)
            if self.error is not None:
                return
            accepted = self._append(side, task, row)
            if accepted is None:
                return
            self.partners.stored(side.system, accepted)
            if problem is not None:
                side.counts.unscored += 1
                return
            self._reported(role, task)

    def _track_order(self, side: _Side, task: str) -> None:
        """Note a task completed after one planned ``_LATE`` positions further (a retry runs an errored sample late)."""
        position = self._position.get(task, -1)
        if 0 <= position < side.furthest - _LATE:
            side.late.append(task)
        side.furthest = max(side.furthest, position)

    def system_of(self, role: Role) -> str:
        """The system name of ``role``."""
        return self._sides[role].system

    def errored(self, role: Role, task: str, epoch: int, note: Callable[[], None]) -> None:
        """``role``'s run of ``task`` errored: ``note`` it, append it as a ``pending`` event flagged ``error``, look.

        Called by :func:`stopwise.inspect._errors.record_error` (Inspect calls no ``complete_sample`` for an
        errored sample). Under the ``betting-wor`` boundary with ``[decision] missing`` other than ``wait``
        the task counts as reported for this system, and a look is taken once the partner has reported on it.
        """
        side = self._sides[role]
        row = self._row(side, task, epoch, None, "pending", "error")
        with self._lock:
            note()
            side.counts.completed += 1
            if self.error is not None or self._append(side, task, row) is None:
                return
            # the task is reported for this system: the partner's outcome of it completes what the boundary can judge
            decision = self.policy.decision
            if decision.boundary != "betting-wor" or decision.missing == "wait":
                self._seen[role].add(task)
                return
            self._reported(role, task)  # looks once the partner has reported on the task too

    def _row(self, side: _Side, task: str, epoch: int, outcome: float | None, status: str, flags: str | None) -> dict[str, Any]:
        """The outcome row ``stopwise ingest`` writes for ``side``'s run of ``task`` (the ledger validates it)."""
        row: dict[str, Any] = {
            "system": side.system,
            "task": task,
            "outcome": outcome,
            "attempt": int(epoch) - 1,
            "status": status,
            "source": f"inspect:{side.eval_id}",
        }
        if flags:
            row["flags"] = flags
        if task in self._group_of:
            row["group"] = self._group_of[task]
        return row

    def _append(self, side: _Side, task: str, row: dict[str, Any]) -> int | None:
        """Append ``row`` and count it in ``side``'s counts: the events accepted, or None if the ledger failed.

        A failure is recorded (:meth:`_fail`): no later sample is scheduled. Called with the lock held.
        """
        try:
            result = self.ledger.append(self.evaluation, [row])
        except Exception as exc:  # the ledger is unusable: stop the evaluation, keep the Inspect log
            side.counts.in_doubt += 1  # a lost connection leaves the commit's fate unknown to this process
            self._fail("append", task, exc)
            return None
        side.counts.accepted += result.accepted
        side.counts.duplicates += result.duplicates
        side.counts.conflicts += result.conflicts
        return result.accepted

    def _reported(self, role: Role, task: str) -> None:
        """``role`` has reported on ``task`` (an outcome or an errored run): look when that completes a pair.

        The ledger, not this process, knows whether the pair is complete and whether another process has
        decided already. Called with the lock held.
        """
        self._seen[role].add(task)
        try:
            self._sync()
            paired = not self.final and self._pair_complete(role, task)
        except Exception as exc:
            self._fail("read", task, exc)
            return
        if paired:
            self._look()

    def _look(self) -> None:
        try:
            record = self.ledger.decide(self.evaluation)
        except Exception as exc:
            self._fail("decide", None, exc)
            return
        self.looks += 1
        if not self.final:
            self.decision = record

    def _fail(self, call: str, task: str | None, exc: Exception) -> None:
        """Record a ledger failure: no later sample is scheduled, the log says why, and the partner is told."""
        where = f" (task {task})" if task is not None else ""
        self.error = f"ledger {call} failed{where}: {type(exc).__name__}: {str(exc)[:400]}"
        _log.error("stopwise: %s; evaluation %r stops (scored samples stay in the Inspect log)", self.error, self.evaluation)
        for side in self._sides.values():  # best effort: a worker of the partner in another process reads it
            if side.started:
                self.partners.announce(side.system, "failed", self.error)

    def _partner_failure(self, role: Role) -> str | None:
        """Why the partner of ``role`` failed (in this process, or its worker elsewhere per the ledger), or None."""
        partner = _PARTNER[role]
        system = self._sides[partner].system
        reason = self._failed.get(partner) or self.partners.failure(system, since=self._sides[role].system)
        return None if reason is None else f"{partner} system {system!r}: {reason}"

    def task_failed(self, role: Role, reason: str) -> None:
        """``role``'s task is failing (Inspect fails it at an errored sample): its partner stops and says why.

        Called from Inspect's ``on_sample_end`` hook (:func:`stopwise.inspect._errors.record_failure`): Inspect
        calls neither ``complete_task`` nor ``on_task_end`` for a task that fails. The partner in this process
        reads ``_failed``, one in another process the ``failed`` notice in the ledger. A retry of the task
        (``eval_set``, ``eval_retry``) starts it again, which clears the failure.
        """
        with self._lock:
            if role in self._failed:  # the samples in flight, cancelled with the task, error too: the first names it
                return
            self._failed[role] = reason
            self.partners.announce(self._sides[role].system, "failed", reason)

    def may_hold(self, role: Role) -> bool:
        """Whether ``role`` may have to wait for its partner: one in another process, or one here that failed (lock-free)."""
        partner = _PARTNER[role]
        return (
            self.error is None
            and not self.final
            and role not in self._abandoned
            and (not self._sides[partner].started or partner in self._failed)
        )

    def hold(self, role: Role) -> bool:
        """Whether ``role`` should wait before its next sample for its partner (in a worker thread, polled).

        It waits while it is ``pace`` events ahead of a running partner in another process (pacing through
        the ledger), and while its partner is down (:meth:`_partner_down`): failed (a retry may start it
        again), never started in another process once this one is ``pace`` samples in, or stalled. After
        ``partner_wait`` seconds down it gives up: every later sample is skipped and its log ends in error.
        """
        now = time.monotonic()
        with self._lock:
            if not self.may_hold(role):
                return False
            try:
                why, paced, waited = partner_down(self, role, now)
            except Exception as exc:  # a read that fails here fails at the next schedule too, where it is recorded
                _log.warning("stopwise: could not read the partner's state in the ledger: %s", exc)
                return False
            if why is None:
                self._waiting_since.pop(role, None)
                return paced
            wait = self.spec.partner_wait
            since = self._waiting_since.setdefault(role, now)
            if wait is not None and not waited and now - since < wait:
                return True
            self._abandoned[role] = why if wait is None or waited else f"{why}; waited {wait:g} s for it"
            _log.error("stopwise: %s system %r stops scheduling: %s", role, self._sides[role].system, self._abandoned[role])
            return False

    def _adopt_first_final(self) -> None:
        """Take the ledger's first promote/reject record as the decision, the one ``export --upto-decision`` reproduces.

        Another process may have stored its own final look just before this process's.
        """
        if self.final:
            first = self.ledger.first_decision(self.evaluation)
            if first is not None:
                self.decision = first.record

    def finish(self, role: Role) -> dict[str, Any]:
        side = self._sides[role]
        partner = self._sides[_PARTNER[role]]
        with self._lock:
            notes = list(self._order_notes) + error_notes(self, role)
            if side.late:  # the betting boundary judges the planned prefix: a late task holds it back
                notes.append(
                    f"Inspect ran {len(side.late)} planned task(s) after tasks planned more than {_LATE} positions later "
                    f"({', '.join(side.late[:5])}{' ...' if len(side.late) > 5 else ''}; e.g. a retry re-runs an errored "
                    "sample late): decisions stay valid but may come later, since the boundary waits for the planned prefix"
                )
            side.done = True
            if self.error is None:
                try:  # the log carries the latest decision in the ledger, whoever took it
                    self._sync()
                    self._adopt_first_final()
                except Exception as exc:
                    self._fail("read", None, exc)
            partner_failed = self._abandoned.get(role) or self._partner_failure(role)
            partner_running = (partner.started and not partner.done) or (
                not partner.started and self.partners.state(partner.system) == "started"
            )
            notes += end_notes(self, role, partner_failed, partner_running)
            skipped = [] if side.gate is None else side.gate.skipped
            if self.error is None:
                self.partners.announce(side.system, "finished")
            closing = fail_closed(self, role, partner_failed)
            if closing is not None and skipped and role not in self._failed:  # its partner stops too: both run again
                self._failed[role] = f"its task skipped samples to keep the planned order: {closing}"
                self.partners.announce(side.system, "failed", self._failed[role])
            summary = {
                "stopwise_version": __version__,
                "evaluation": self.evaluation,
                "ledger": self.ledger_name,
                "system": side.system,
                "role": role,
                "tested": self.tested,
                "baseline": self.baseline,
                "planned_tasks": len(self.planned),
                "budget_tasks": self._allowed,
                "completed": side.counts.completed,
                "appended": {
                    "accepted": side.counts.accepted,
                    "duplicates": side.counts.duplicates,
                    "conflicts": side.counts.conflicts,
                    "unscored": side.counts.unscored,
                    "in_doubt": side.counts.in_doubt,
                },
                "stopped": side.counts.stopped,
                "errored": missing_samples(self, role),
                "looks": self.looks,
                "ledger_decisions": self._decision_seq,
                "action": None if self.decision is None else self.decision.action,
                **viewer_fields(self.decision),
                "error": self.error,
                "decision": None if self.decision is None else self.decision.model_dump(mode="json"),
                "notes": notes,
            }
        if closing is not None:
            _log.error("stopwise: %s", closing)
            raise StopwiseError(closing)
        return summary

class SystemEarlyStopping:
    """Inspect ``EarlyStopping`` manager bound to one system of a paired comparison.

    Build two with :func:`paired_early_stopping` and give each to the Task of its system
    (``Task(..., early_stopping=manager)``).
    """

    def __init__(self, comparison: PairedComparison, role: Role, *, routed: bool = False) -> None:
        if role not in _PARTNER:
            raise InputError(f"`role` must be 'tested' or 'baseline'; got {role!r}")
        self.comparison = comparison
        self.role: Role = role
        self.routed = routed  # called by a manager that routes the tasks of several models (ModelPairEarlyStopping)
        self.system = comparison.tested if role == "tested" else comparison.baseline

    def __repr__(self) -> str:
        return f"SystemEarlyStopping({self.comparison.evaluation!r}, {self.role}={self.system!r})"

    # Every call runs in a worker thread (Inspect runs on anyio): a ledger transaction or a look
    # (~20 ms of CPU) never holds the event loop that drives the other samples in flight.

    async def start_task(self, task: EvalSpec, samples: list[Sample], epochs: int) -> str:
        """Fix the planned universe (first task) or check it (second), register; returns the manager name."""
        await anyio.to_thread.run_sync(lambda: self.comparison.start(self.role, task, samples, epochs, routed=self.routed))
        return f"stopwise ({self.comparison.evaluation}: {self.role} {self.system})"

    async def schedule_sample(self, id: str | int, epoch: int) -> EarlyStop | None:
        """``EarlyStop`` once the comparison is decided or the sample lies beyond the budget, else None.

        While this system is ``pace`` samples ahead of its partner, it waits first, so that neither
        system runs far past the decision: in this process by the samples completed, across
        processes by the outcome events each system stored in the ledger.
        """
        late = self.comparison.arrive(self.role, id)  # first: the order in which Inspect gave the slots
        while late is None and self.comparison.ahead(self.role):
            await anyio.sleep(_PACE_POLL_S)
        while late is None and self.comparison.may_hold(self.role) and await anyio.to_thread.run_sync(self.comparison.hold, self.role):
            await anyio.sleep(PACE_LEDGER_POLL_S)
        return await anyio.to_thread.run_sync(self.comparison.schedule, self.role, id, epoch, late)

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, SampleScore]) -> None:
        """Append the sample's outcome to the ledger; decide when it completes a pair."""
        await anyio.to_thread.run_sync(self.comparison.complete, self.role, id, epoch, scores)

    async def complete_task(self) -> dict[str, Any]:
        """The latest decision record and the counts, as the log's early-stopping metadata.

        When the boundary is crossed and waits for top-up tasks its partner is running here, the task waits
        for that action first (:meth:`PairedComparison.awaits_top_up`), so both logs carry it; the partner is
        told that this task runs no more samples (:meth:`PairedComparison.ending`), so that it is not paced.
        """
        self.comparison.ending(self.role)
        while self.comparison.awaits_top_up(self.role):
            await anyio.sleep(_PACE_POLL_S)
        return await anyio.to_thread.run_sync(self.comparison.finish, self.role)


def viewer_fields(decision: DecisionRecord | None) -> dict[str, Any]:
    """What Inspect's viewer shows of a decision at the top of the early-stopping metadata.

    The claim sentence, the interval (low, high, level, kind, in outcome units), the record's ledger position
    and the reason. The same values are in ``decision`` (the whole record); these are the ones a reader quotes.
    """
    if decision is None:
        return {"claim": None, "interval": None, "ledger_position": None, "reason": None}
    interval = decision.interval
    return {
        "claim": decision.claim,
        "interval": None if interval is None else {k: getattr(interval, k) for k in ("low", "high", "level", "kind")},
        "ledger_position": None if decision.ledger is None else decision.ledger.model_dump(mode="json"),
        "reason": decision.reason,
    }


def paired_early_stopping(
    ledger: LedgerArgument, spec: PairedSpec | str, /, **fields: Any
) -> tuple[SystemEarlyStopping, SystemEarlyStopping]:
    """Two Inspect early-stopping managers, for the tested and the baseline system, sharing one ledger.

    Parameters
    ----------
    ledger : str, path or Ledger
        A database URL for :func:`stopwise.ledger.open_ledger` (``"sqlite:///ledger.db"``,
        ``"postgresql+psycopg://..."``), opened in ``create`` mode, or an opened
        :class:`~stopwise.ledger.Ledger`.
    spec : PairedSpec or str
        What is compared (:class:`PairedSpec`: the evaluation id in the ledger, the two system names,
        the policy, the planned universe, the group key, the scorer, refresh and pace); or the
        evaluation id, with the other fields of the spec as keywords.
    **fields
        With an evaluation id: ``tested`` and ``baseline`` (required), ``policy``, ``universe``,
        ``group``, ``scorer``, ``refresh``, ``pace`` (see :class:`PairedSpec`).

    Returns
    -------
    (SystemEarlyStopping, SystemEarlyStopping)
        The tested system's manager and the baseline's; ``manager.comparison`` is their shared
        :class:`PairedComparison`.

    Raises
    ------
    InputError
        Empty or equal system names, a bad ledger, evaluation, group or scorer, an unknown keyword.
    PolicyError
        A policy that cannot be read, or a cost or time budget.

    Notes
    -----
    Use a policy with ``[decision] boundary = "betting-wor"`` to stop as soon as the anytime-valid
    boundary is crossed; with the fixed-budget boundary the decision comes at the budget limit. The
    pairing state lives in the ledger: a worker process per system on one ledger, or a retried eval
    in a new process, sees the pairs and the decision of the others (``refresh`` bounds how long a
    process may schedule samples after another one decided). With ``pace``, a partner in another
    process (a worker per system, or ``inspect eval`` of two tasks of one file) is paced by the
    outcome events each system has stored in the ledger, read every 50 ms while waiting.

    Examples
    --------
    >>> from stopwise.inspect import PairedSpec, paired_early_stopping
    >>> tested, baseline = paired_early_stopping(
    ...     "sqlite:///:memory:", "demo", tested="A", baseline="B")
    >>> tested.system, baseline.system, tested.comparison is baseline.comparison
    ('A', 'B', True)
    >>> spec = PairedSpec("demo", tested="A", baseline="B", pace=None)
    >>> paired_early_stopping("sqlite:///:memory:", spec)[0].comparison.spec == spec
    True
    """
    comparison = PairedComparison(ledger, spec, **fields)
    return SystemEarlyStopping(comparison, "tested"), SystemEarlyStopping(comparison, "baseline")
