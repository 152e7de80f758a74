"""Halt running Inspect samples as soon as their outcome is predictable (issue 22, live within-task halting).

:class:`LiveHalting` runs an :class:`~stopwise.early.EarlyOutcomeModel` monitor on a sample's messages
before every model call and, when a head crosses its threshold (and the unfamiliar-run guard lets it),
ends the sample with a custom limit. The sample is then scored with the predicted outcome.

**Why a hook, not an agent wrapper.** An agent (or solver) wrapper sees the conversation only when the
wrapped agent starts and returns: whatever loop runs inside (``react()``, ``basic_agent()``, a custom
``generate(tool_calls="loop")``) calls the model many times without the wrapper seeing a single step.
Inspect's ``Hooks.on_before_model_generate`` is called before *every* model call of every solver or
agent, with the whole conversation about to be sent (``BeforeModelGenerate.input``), and Inspect's hook
dispatcher lets exactly one exception through: ``LimitExceededError`` (``inspect_ai/hooks/_hooks.py``,
``_emit_to_all``), so that limits can be enforced from hooks. The sample's runner catches it like any
other limit: it records ``EvalSample.limit = {type: "custom", limit, reason}``, keeps the state reached
and runs the scorers (the sample is completed, not errored). So the hook works for any agent unchanged.

Hooks are process-global (``@hooks`` registers one instance for the life of the process), so one
dispatcher hook is registered the first time a :class:`LiveHalting` is built (it stays registered, and
disabled while no halter is open), and each ``LiveHalting``
acts only on the tasks passed through :meth:`LiveHalting.task`: that call marks the task's metadata with
the halter's token, and the dispatcher learns the task's ``eval_id`` in ``on_task_start``. Other tasks
(and other evaluations in the same process) are never touched; with no halter alive the hook reports
itself disabled.

**The monitored conversation and its steps.** Steps are read from the messages exactly as ``stopwise
ingest --trajectories`` reads an Inspect log (:func:`steps_from_inspect` calls the reader's own
``message_steps``): one step per assistant message, its action the
text and tool calls (``name(arguments-json)``), its observation every tool/user message up to the next
assistant message. Before a model call every assistant message already in the conversation is a complete
step (the next message is the one being generated), so the monitor observes exactly those. Each sample
keeps its monitor (keyed by the sample's ``Store``, held weakly: it goes when the sample ends) and the
number of messages it has read: a call costs the conversion of the new messages and one feature update
per new step, never a recompute. A call whose messages do not extend the monitored conversation (a
sub-agent's or a model-graded scorer's own conversation, or a compacted history) is not monitored and
cannot halt. Token counts are not features of the model and Inspect's messages carry none, so steps have
``tokens_in = tokens_out = None`` here as in the ingested trajectories.

The hook never halts before the first step (a model whose ``min_halt_step`` is 0 halts from step 1 here),
and a sample that an agent keeps calling the model for after the halt (an agent that catches limits) is
halted again at every call.

**What a halted sample records.** ``limit = {type: "custom", limit: threshold, reason: "stopwise: outcome
predicted: ..."}``, and every scorer of the task (wrapped by :meth:`LiveHalting.task`, keeping its name
and metrics) returns the predicted outcome (``C`` / ``I`` by default) with ``metadata = {"predicted":
True, "probability", "p_success", "p_failure", "head", "step", "threshold", "model_digest"}``. Samples
that were not halted are scored by the task's own scorers, unchanged. ``stopwise ingest`` and the paired
manager turn a score with ``metadata["predicted"]`` into a ``status = "predicted"`` row flagged
``predicted``.

**Audits.** With ``audit_fraction = rho > 0`` (the policy's ``[early] audit_fraction`` and ``audit_seed``)
a pre-registered share of runs is never halted: run (system, sample id, epoch - 1) is audited iff
:func:`stopwise.records.audit_draw` of the seed and the run is below rho (a hash fixed before the run,
independent of every outcome). An audited run is still monitored; when a head crosses, the halter records
what it would have predicted (in :attr:`LiveHalting.audits` and the sample's store) and lets the run go
on. Its score is the task's own (the true outcome) with ``metadata = {"audited": True, "audit_fraction",
"audit_seed"}`` and, if it would have been halted, ``"would_halt": f`` (the prediction) with the
probability, step and model digest. ``stopwise ingest`` and the paired manager turn that into a
``status = "final"`` row flagged ``audited`` (and ``would-halt:f``): the rows the prediction-powered
decision (``[decision] predicted = "prediction-powered"``) corrects the predictions with.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import uuid
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stopwise._logs import message_steps, text_of
from stopwise.errors import InputError
from stopwise.records import Step, audit_draw, is_audited

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.model import ChatMessage

__all__ = ["HALT_KEY", "LiveHalting", "model_digest", "steps_from_inspect", "task_text_from_inspect"]

_log = logging.getLogger("stopwise.inspect")

HALT_KEY = "stopwise_halting"
"""Task-metadata key marking a task for a halter, and the sample-store key holding a halted sample's verdict."""


def _as_dict(message: Any) -> Any:
    if isinstance(message, Mapping):
        return message
    return message.model_dump(mode="json")


def steps_from_inspect(messages: Sequence[ChatMessage | Mapping[str, Any]]) -> list[Step]:
    r"""Trajectory steps of Inspect messages, exactly as ``stopwise ingest --trajectories`` reads a log's.

    One step per assistant message: the action is its text and tool calls (``name(arguments-json)``), the
    tool is the first call's function, the observation is every tool / user message up to the next
    assistant message. Messages before the first assistant message (system prompt, task) are not steps.

    Examples
    --------
    >>> from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    >>> from inspect_ai.tool import ToolCall
    >>> call = ToolCall(id="c1", function="read_file", arguments={"path": "a.py"})
    >>> steps = steps_from_inspect([ChatMessageUser(content="fix a.py"),
    ...                             ChatMessageAssistant(content="Reading.", tool_calls=[call]),
    ...                             ChatMessageTool(content="[isError] denied", tool_call_id="c1")])
    >>> steps[0].action, steps[0].tool, steps[0].observation
    ('Reading.\nread_file({"path": "a.py"})', 'read_file', '[isError] denied')
    """
    return message_steps([_as_dict(m) for m in messages])


def task_text_from_inspect(messages: Sequence[ChatMessage | Mapping[str, Any]]) -> str:
    """The task prompt: the text of the first user message (as ``stopwise ingest`` reads a sample's input)."""
    for message in messages:
        m = _as_dict(message)
        if m.get("role") == "user":
            return text_of(m.get("content"))
    return ""


def model_digest(path: str | os.PathLike[str]) -> str:
    """sha256 of a saved model's ``manifest.json`` (which holds the sha256 of every other file of the model)."""
    return hashlib.sha256((Path(path) / "manifest.json").read_bytes()).hexdigest()


class _SampleMonitor:
    """The monitor of one sample's conversation and how many of its messages have been read."""

    __slots__ = ("audited", "last", "monitor", "read", "skipped")

    def __init__(self, monitor: Any) -> None:
        self.monitor = monitor
        self.audited = False
        self.read = 0
        self.last: Any = None
        self.skipped = 0

    def advance(self, messages: Sequence[Any]) -> Any:
        """Observe the steps completed since the last call; the latest verdict (None: this call is not monitored)."""
        n = len(messages)
        if n < self.read or (
            self.read and messages[self.read - 1] is not self.last and messages[self.read - 1] != self.last
        ):
            self.skipped += 1
            return None
        if n == self.read:
            return self.monitor.verdict
        # the new messages start at an assistant message (or hold the prompt on the first call)
        new = messages[self.read :]
        verdict = self.monitor.verdict
        for step in steps_from_inspect(new):
            verdict = self.monitor.observe(step)
            if verdict.halted:
                break
        self.read = n
        self.last = messages[-1]
        return verdict


class LiveHalting:
    """Halt the samples of the given Inspect tasks as soon as an early-outcome model predicts their outcome.

    Parameters
    ----------
    model : EarlyOutcomeModel or path
        A fitted model, or the directory of a saved one (``stopwise early train``).
    success_threshold, failure_threshold : float or None, optional
        Override the model's thresholds (as :class:`~stopwise.early.OnlineMonitor`).
    guard : bool, default True
        Apply the model's unfamiliar-run guard: a run unlike the validation runs is never halted.
    values : (correct, incorrect), default ("C", "I")
        The score values given to a sample halted with a predicted success / failure.
    audit_fraction : float, default 0
        rho in [0, 1]: the pre-registered share of runs drawn for audit (never halted; see the module docstring).
    audit_seed : int, default 0
        Seed of the audit draw.
    audit_rule : {"uniform", "active"}, default "uniform"
        ``active`` (issue 34): a run is audited, when a head crosses, with the probability
        :class:`stopwise.compare.ActiveAudits` gives its prediction and the head's probability (mean rho =
        ``audit_fraction``; predictions favouring ``tested`` audited at about ``audit_favour`` rho): drawn from the same
        seeded uniform (``audit_draw < pi``) and recorded in the score's metadata (``audit_probability``), so the rows carry
        ``audit-p:<pi>``. A run no head halts is never audited. Decide with ``predicted = "prediction-powered-tuned"``.
    audit_favour : float, default 1.5
        The active rule's multiplier of rho for favouring predictions.
    tested : str, optional
        The tested system's name in the audit key (``task(..., system=...)``); required by ``active``.
    audit_coupling : {"independent", "antithetic"}, default "independent"
        Under ``active``: ``antithetic`` draws one uniform w per task and epoch, the ``tested`` system's run w and
        every other system's 1 - w (:func:`stopwise.records.audit_draw`; ``[early] audit_coupling`` of the policy).

    Attributes
    ----------
    digest : str
        sha256 of the model's ``manifest.json`` (for an in-memory model, of the manifest it saves to).
    errors : list of str
        Failures of the monitor inside a model call (the sample then runs on unhalted; each is also logged).
    halts : list of dict
        One entry per halted sample, recorded when it is scored: ``sample``, ``epoch`` and the score's metadata
        (``task`` — the Inspect task's name —, ``outcome``, ``step``, ``probability``, ...).
    audits : list of dict
        One entry per audited sample the monitor would have halted, recorded when the head crosses: ``system``,
        ``sample``, ``epoch`` and the prediction it would have stored (``outcome``, ``step``, ``probability``, ...).

    Examples
    --------
    ``halting.task(task)`` returns the task to run (its scorers wrapped, its metadata marked)::

        halting = LiveHalting("runs/model")
        eval([halting.task(my_task)], model="openai/gpt-4o")
    """

    def __init__(
        self,
        model: Any,
        *,
        success_threshold: float | None = None,
        failure_threshold: float | None = None,
        guard: bool = True,
        values: tuple[Any, Any] = ("C", "I"),
        audit_fraction: float = 0.0,
        audit_seed: int = 0,
        audit_rule: str = "uniform",
        audit_favour: float = 1.5,
        tested: str | None = None,
        audit_coupling: str = "independent",
    ) -> None:
        from stopwise.early import EarlyOutcomeModel, load_model

        if isinstance(model, str | os.PathLike):
            self.digest = model_digest(model)
            model = load_model(model)
        elif isinstance(model, EarlyOutcomeModel):
            model.check_fitted()
            with tempfile.TemporaryDirectory() as tmp:
                self.digest = model_digest(model.save(Path(tmp) / "model"))
        else:
            raise InputError(
                f"LiveHalting: `model` must be an EarlyOutcomeModel or a saved model's directory; got {type(model).__name__}"
            )
        if not (isinstance(values, tuple) and len(values) == 2):
            raise InputError(f"LiveHalting: `values` must be a (correct, incorrect) pair; got {values!r}")
        if (
            isinstance(audit_fraction, bool)
            or not isinstance(audit_fraction, int | float)
            or not 0.0 <= audit_fraction <= 1.0
        ):
            raise InputError(f"LiveHalting: `audit_fraction` must be a number in [0, 1]; got {audit_fraction!r}")
        if isinstance(audit_seed, bool) or not isinstance(audit_seed, int) or audit_seed < 0:
            raise InputError(f"LiveHalting: `audit_seed` must be an integer >= 0; got {audit_seed!r}")
        if audit_rule not in ("uniform", "active"):
            raise InputError(f"LiveHalting: `audit_rule` must be 'uniform' or 'active'; got {audit_rule!r}")
        self._rule = None
        if audit_rule == "active":
            from stopwise.compare import ActiveAudits

            if not 0.0 < audit_fraction < 1.0 or not isinstance(tested, str):
                raise InputError(
                    f"LiveHalting: audit_rule = 'active' needs `audit_fraction` in (0, 1) and `tested` (a system name); got {audit_fraction!r}, {tested!r}"
                )
            try:
                self._rule = ActiveAudits(float(audit_fraction), favour=float(audit_favour), coupling=audit_coupling)
            except ValueError as exc:
                raise InputError(f"LiveHalting: {exc}") from None
        elif audit_coupling != "independent":
            raise InputError(f"LiveHalting: `audit_coupling` {audit_coupling!r} needs audit_rule = 'active'")
        self.audit_coupling = audit_coupling
        self.audit_rule = audit_rule
        self.tested = tested
        self.model = model
        self.values = values
        self.audit_fraction = float(audit_fraction)
        self.audit_seed = audit_seed
        self.audits: list[dict[str, Any]] = []
        self._systems: dict[str, str] = {}  # Inspect task name -> the system name of the audit key
        self._monitor_args = {
            "success_threshold": success_threshold,
            "failure_threshold": failure_threshold,
            "guard": guard,
        }
        model.monitor("", **self._monitor_args)  # check the thresholds now, not inside a running sample
        self.token = uuid.uuid4().hex
        self.halts: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._scored: set[str] = set()
        self._samples: dict[int, _SampleMonitor] = {}  # by id() of the sample's Store (unhashable), dropped with it
        _dispatcher().halters[self.token] = self

    def close(self) -> None:
        """Stop acting (the tasks already marked run unhalted from now on)."""
        _dispatcher().halters.pop(self.token, None)

    def __enter__(self) -> LiveHalting:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def task(self, task: Task, *, system: str | None = None) -> Task:
        """The task with this halter attached: metadata marked, every scorer wrapped to score halted samples.

        ``system`` names the system in the audit draw's key (default: the task's name); give the name its outcome
        rows carry (the paired manager's system name, ``stopwise ingest --system``) so that anyone can redraw the
        audits from the rows. Modifies ``task`` in place (as Inspect's ``task_with``) and returns it.
        """
        from inspect_ai import task_with

        self._systems[task.name] = task.name if system is None else str(system)
        metadata = {**(task.metadata or {}), HALT_KEY: self.token}
        if not task.scorer:
            return task_with(task, metadata=metadata)
        return task_with(
            task, metadata=metadata, scorer=[self._scorer(s, self._systems[task.name]) for s in task.scorer]
        )

    # -- the hook's work ---------------------------------------------------------------------------

    def before_generate(self, messages: Sequence[Any], task: str | None = None) -> None:
        """Observe the conversation about to be sent; raise ``LimitExceededError`` when the run may halt."""
        from inspect_ai.util import LimitExceededError, store

        sample_store = store()
        key = id(sample_store)
        state = self._samples.get(key)
        if state is None:
            state = _SampleMonitor(self.model.monitor(task_text_from_inspect(messages), **self._monitor_args))
            self._samples[key] = state
            weakref.finalize(sample_store, self._samples.pop, key, None)
        verdict = state.advance(messages)
        if verdict is None or not verdict.halted or state.audited:
            return
        head_p = verdict.p_success if verdict.head == "success" else verdict.p_failure
        threshold = state.monitor.success_threshold if verdict.head == "success" else state.monitor.failure_threshold
        record = {
            "predicted": True,
            "task": task,
            "outcome": int(verdict.predicted),
            "probability": float(head_p),
            "p_success": float(verdict.p_success),
            "p_failure": float(verdict.p_failure),
            "head": verdict.head,
            "step": int(verdict.step),
            "threshold": float(threshold),
            "reason": verdict.reason,
            "model_digest": self.digest,
        }
        run = self._audit_key(task)
        if (
            run is not None and self._rule is not None
        ):  # active audits: the probability from the prediction and the head's
            favours = (run[0] == self.tested) == (int(verdict.predicted) == 1)
            record["audit_probability"] = float(self._rule.probability([favours], [float(head_p)])[0])
            draw = audit_draw(self.audit_seed, *run, tested=self.tested, coupling=self.audit_coupling)
            drawn = draw < record["audit_probability"]
        else:
            drawn = run is not None and is_audited(self.audit_fraction, self.audit_seed, *run)
        if run is not None and drawn:
            state.audited = True  # never halted: record what it would have predicted and let it run on
            record = {**record, "predicted": False, "would_halt": record["outcome"], "audited": True}
            sample_store.set(HALT_KEY, record)
            self.audits.append({"system": run[0], "sample": run[1], "epoch": run[2] + 1, **record})
            return
        sample_store.set(HALT_KEY, record)
        word = "CORRECT" if verdict.predicted == 1 else "INCORRECT"
        raise LimitExceededError(
            "custom",
            value=float(head_p),
            limit=float(threshold),
            message=f"stopwise: outcome predicted: {word} (p={head_p:.2f}) after {verdict.step} steps; {verdict.reason}",
        )

    def _audit_key(self, task: str | None) -> tuple[str, str, int] | None:
        """(system, task, attempt) of the running sample for the audit draw; None without audits."""
        if self.audit_fraction <= 0.0:
            return None
        from inspect_ai.log._samples import sample_active

        active = sample_active()
        if active is None:  # pragma: no cover - a model call outside a sample is not monitored
            return None
        name = task or active.task
        return self._systems.get(name, name), str(active.sample.id), int(active.epoch) - 1

    def _audit_metadata(self, state: Any, system: str) -> dict[str, Any] | None:
        """The score metadata of an audited sample (None: not audited); the would-halt prediction when there is one."""
        if self.audit_fraction <= 0.0:
            return None
        if self._rule is not None:  # active: audited iff the crossing drew it (recorded in the store)
            halted = state.store.get(HALT_KEY)
            if not (isinstance(halted, dict) and halted.get("audited")):
                return None
        elif not is_audited(self.audit_fraction, self.audit_seed, system, str(state.sample_id), int(state.epoch) - 1):
            return None
        meta: dict[str, Any] = {"audited": True, "audit_fraction": self.audit_fraction, "audit_seed": self.audit_seed}
        record = state.store.get(HALT_KEY)
        if isinstance(record, dict) and record.get("audited"):
            meta.update({k: v for k, v in record.items() if k not in ("reason", "predicted", "outcome", "audited")})
        return meta

    def _scorer(self, inner: Any, system: str) -> Any:
        from inspect_ai._util.registry import registry_info, registry_params, set_registry_info, set_registry_params
        from inspect_ai.scorer import Score

        halts, scored = self.halts, self._scored
        correct, incorrect = self.values

        async def score(state: Any, target: Any) -> Any:
            record = state.store.get(HALT_KEY)
            if not isinstance(record, dict) or not record.get("predicted"):
                result = await inner(state, target)
                audit = self._audit_metadata(state, system)
                if audit is None or result is None:
                    return result
                return result.model_copy(update={"metadata": {**(result.metadata or {}), **audit}})
            if state.uuid not in scored:  # one entry per sample, however many scorers the task has
                scored.add(state.uuid)
                halts.append({"sample": state.sample_id, "epoch": state.epoch, **record})
            return Score(
                value=correct if record["outcome"] == 1 else incorrect,
                explanation=f"predicted by stopwise at step {record['step']}: {record['reason']}",
                metadata={k: v for k, v in record.items() if k != "reason"},
            )

        # the wrapper is the task's scorer under the same name, metrics and arguments (it registers nothing)
        set_registry_info(score, registry_info(inner))
        set_registry_params(score, registry_params(inner))
        return score


# -- the one process-wide hook ---------------------------------------------------------------------

_DISPATCHER: Any = None


def _dispatcher() -> Any:
    """The registered dispatcher hook (registered on first use: hooks live as long as the process)."""
    global _DISPATCHER
    if _DISPATCHER is not None:
        return _DISPATCHER
    from inspect_ai.hooks import Hooks, hooks

    class StopwiseHalting(Hooks):
        """Route each model call of a marked task to its LiveHalting; nothing else is touched."""

        def __init__(self) -> None:
            global _DISPATCHER
            self.halters: dict[str, LiveHalting] = {}
            self.by_eval: dict[str, LiveHalting] = {}
            _DISPATCHER = self  # @hooks builds the one instance

        def enabled(self) -> bool:
            return bool(self.halters)

        async def on_task_start(self, data: Any) -> None:
            token = (data.spec.metadata or {}).get(HALT_KEY)
            halter = self.halters.get(token) if isinstance(token, str) else None
            if halter is not None:
                self.by_eval[data.eval_id] = halter

        async def on_task_end(self, data: Any) -> None:
            self.by_eval.pop(data.eval_id, None)

        async def on_before_model_generate(self, data: Any) -> None:
            halter = self.by_eval.get(data.eval_id) if data.eval_id is not None else None
            if halter is None or halter.token not in self.halters:
                return
            from inspect_ai.util import LimitExceededError

            try:
                halter.before_generate(data.input, data.task_name)
            except LimitExceededError:
                raise
            except Exception as exc:  # Inspect would log a warning and go on: say it loudly, keep it on the halter
                message = f"{type(exc).__name__}: {str(exc)[:300]}"
                halter.errors.append(message)
                _log.error(
                    "stopwise halting failed for a model call of task %r (the sample runs on unhalted): %s",
                    data.task_name,
                    message,
                )

    hooks(name="stopwise_halting", description="stopwise: halt samples whose outcome is predictable")(StopwiseHalting)
    return _DISPATCHER
