"""The online monitor: feed a live run one step at a time and learn when it may halt."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stopwise._params import Interval, check_params
from stopwise.early._halting import Verdict, halt_decision, halt_reason
from stopwise.early._reference import GoldSolution, as_gold
from stopwise.errors import InputError
from stopwise.records import Step, Trajectory

__all__ = ["OnlineMonitor", "RunMonitoring", "monitor_run"]

_THRESHOLD = Interval(float, 0, 1, closed="right", allow_none=True)


class OnlineMonitor:
    """Watch one run of a task and say, after each step, whether it may halt.

    Each :meth:`observe` updates the running feature state with the new step only (its cost does not grow
    with the run's length), scores both calibrated heads on one thread and applies the halting rule.
    Once a run has halted the decision is final: later calls return the same halt verdict unchanged.

    Parameters
    ----------
    model : EarlyOutcomeModel
        A fitted model.
    task_text : str
        The task prompt of the run.
    gold : GoldSolution, str or mapping, optional
        The task's reference solution, for a model trained with one.
    success_threshold, failure_threshold : float or None, optional
        Override the model's thresholds (``None`` keeps the model's :attr:`~EarlyOutcomeModel.thresholds_`;
        to disable a head, build the model with that threshold set to ``None``).
    guard : bool, default True
        Apply the model's unfamiliar-run guard: a head crossing its threshold on a prefix unlike the runs the
        thresholds were validated on does not halt the run; the verdict says ``held`` and why.

    Attributes
    ----------
    step : int
        Steps observed so far.
    verdict : Verdict or None
        The most recent verdict.
    halted : bool
        Whether the run has halted.

    Examples
    --------
    >>> from stopwise.early import DualHeadClassifier, EarlyOutcomeModel
    >>> from stopwise.records import Step, Trajectory
    >>> def run(i, ok):
    ...     obs = "done" if ok else "[isError] failed"
    ...     return Trajectory(agent=f"a{i % 3}", task=f"t{i % 8}", outcome=int(ok), task_text="update the page",
    ...                       steps=[Step(action="update_page()", tool="update_page", observation=obs)] * 12)
    >>> model = EarlyOutcomeModel(n_components=4, min_df=1, classifier=DualHeadClassifier(min_child_samples=5, n_estimators=10),
    ...                           guard_quantile=None)  # 48 toy runs validate no threshold: the guard would hold every halt
    >>> model = model.fit([run(i, i % 2 == 0) for i in range(48)])
    >>> monitor = model.monitor("update the page")
    >>> verdict = monitor.observe(Step(action="update_page()", tool="update_page", observation="[isError] failed"))
    >>> verdict.action, verdict.reason.split(":")[0]
    ('halt', 'failure head')
    """

    def __init__(
        self,
        model: Any,
        task_text: str,
        *,
        gold: GoldSolution | str | Mapping[str, Any] | None = None,
        success_threshold: float | None = None,
        failure_threshold: float | None = None,
        guard: bool = True,
    ) -> None:
        model.check_fitted()
        check_params(
            "OnlineMonitor",
            {"success_threshold": success_threshold, "failure_threshold": failure_threshold},
            {"success_threshold": _THRESHOLD, "failure_threshold": _THRESHOLD},
        )
        if not isinstance(task_text, str):
            raise InputError(f"OnlineMonitor: `task_text` must be text; got {type(task_text).__name__}")
        self.model = model
        s, f = model._effective_thresholds()
        self.success_threshold = s if success_threshold is None else success_threshold
        self.failure_threshold = f if failure_threshold is None else failure_threshold
        self._guard = getattr(model, "guard_", None) if guard else None
        self._stream = model.featurizer_.stream(task_text, gold=as_gold(gold) if gold is not None else None)
        self._columns = model.columns_
        self._classifier = model.classifier_
        self.step = 0
        self.verdict: Verdict | None = None

    @property
    def halted(self) -> bool:
        """Whether the run has halted."""
        return self.verdict is not None and self.verdict.halted

    @property
    def last_category(self) -> str | None:
        """Recognised category of the last observed step."""
        return self._stream.last_category

    def initial(self) -> Verdict:
        """The verdict before any step (k = 0): from the task prompt alone.

        It halts only for a model whose ``min_halt_step`` is 0, and does not change the monitor's state.
        """
        if self.step > 0:
            raise InputError("OnlineMonitor.initial: the run has already started; the verdict before any step is gone")
        x = self._stream.initial()
        return self._verdict(0, x, self.model.min_halt_step == 0)

    def _verdict(self, step: int, x: Any, may_halt: bool) -> Verdict:
        p_success, p_failure = self._classifier.predict_one(x[self._columns])
        predicted, head = (None, None)
        if may_halt:
            predicted, head = halt_decision(p_success, p_failure, self.success_threshold, self.failure_threshold)
        if predicted is None:
            return Verdict(step, "continue", None, None, p_success, p_failure)
        reason = halt_reason(head, p_success, p_failure, self.success_threshold, self.failure_threshold)
        held = None
        if self._guard is not None:
            threshold = self.success_threshold if head == "success" else self.failure_threshold
            held = self._guard.check(x, self._stream.coverage) or self.model._unvalidated(head, threshold)
        if held is not None:
            return Verdict(step, "continue", None, None, p_success, p_failure, f"held: {held}; the {reason} would have halted it", True)
        return Verdict(step, "halt", predicted, head, p_success, p_failure, reason)  # type: ignore[arg-type]

    def observe(self, step: Step | Mapping[str, Any]) -> Verdict:
        """Add one step; return ``continue`` or ``halt`` with the predicted outcome and both probabilities.

        Parameters
        ----------
        step : Step or mapping
            The step (``action``, ``observation``, ``tool``, ``tokens_in``, ``tokens_out``).
        """
        if self.verdict is not None and self.verdict.halted:
            return self.verdict
        if not isinstance(step, Step):
            if not isinstance(step, Mapping):
                raise InputError(f"OnlineMonitor.observe: `step` must be a Step or a mapping; got {type(step).__name__}")
            try:
                step = Step.model_validate(dict(step))
            except Exception as exc:
                raise InputError(f"OnlineMonitor.observe: `step` breaks the step contract: {exc}") from None
        x = self._stream.update(step)
        self.step += 1
        self.verdict = self._verdict(self.step, x, self.step >= self.model.min_halt_step)
        return self.verdict


@dataclass(frozen=True)
class RunMonitoring:
    """A finished run replayed step by step through an :class:`OnlineMonitor`, and the outcome row it yields.

    Attributes
    ----------
    agent, task : str
    attempt : int
    n_steps : int
        Steps of the run.
    verdicts : list of Verdict
        The monitor's verdict after each observed step (it stops at the halt).
    halted : bool
        Whether the run halted before its last step (a halt at the last step saves nothing and counts as a full run).
    outcome : float or None
        The run's recorded final outcome, if any.
    held : int
        Steps at which a head crossed its threshold but the guard held the run.
    row : dict or None
        The outcome-ledger row: ``status = "predicted"`` for an early halt, ``"final"`` for a full run with an
        outcome; ``None`` for a full run without one (it has no outcome to record — see ``reason``).
    reason : str
        Why the run ended as it did: the halting head and probability, or the last guard hold, or a full run.
    """

    agent: str
    task: str
    attempt: int
    n_steps: int
    verdicts: list[Verdict]
    halted: bool
    outcome: float | None
    held: int
    row: dict[str, Any] | None
    reason: str

    @property
    def predicted(self) -> int | None:
        """The predicted outcome of an early halt, else ``None``."""
        return self.verdicts[-1].predicted if self.halted else None

    @property
    def halt_step(self) -> int | None:
        """The step of an early halt, else ``None``."""
        return self.verdicts[-1].step if self.halted else None

    def as_dict(self, *, steps: bool = False) -> dict[str, Any]:
        """JSON-ready summary (with every verdict when ``steps``)."""
        out: dict[str, Any] = {
            "agent": self.agent, "task": self.task, "attempt": self.attempt, "n_steps": self.n_steps,
            "halted": self.halted, "halt_step": self.halt_step, "predicted": self.predicted, "outcome": self.outcome,
            "held_steps": self.held, "reason": self.reason, "row": self.row,
        }
        if steps:
            out["verdicts"] = [v.as_dict() for v in self.verdicts]
        return out


def monitor_run(
    model: Any,
    run: Trajectory,
    *,
    gold: GoldSolution | str | Mapping[str, Any] | None = None,
    success_threshold: float | None = None,
    failure_threshold: float | None = None,
    guard: bool = True,
    source: str = "stopwise.early",
) -> RunMonitoring:
    """Replay one finished run through a fresh monitor and build its outcome row.

    Examples
    --------
    >>> from stopwise.early import DualHeadClassifier, EarlyOutcomeModel, monitor_run
    >>> from stopwise.records import Step, Trajectory
    >>> def run(i, ok):
    ...     obs = "done" if ok else "[isError] failed"
    ...     return Trajectory(agent=f"a{i % 3}", task=f"t{i % 8}", outcome=int(ok), task_text="update the page",
    ...                       steps=[Step(action="update_page()", tool="update_page", observation=obs)] * 12)
    >>> model = EarlyOutcomeModel(n_components=4, min_df=1, classifier=DualHeadClassifier(min_child_samples=5, n_estimators=10),
    ...                           guard_quantile=None)  # 48 toy runs validate no threshold: the guard would hold every halt
    >>> model = model.fit([run(i, i % 2 == 0) for i in range(48)])
    >>> result = monitor_run(model, run(1, False))
    >>> result.halted, result.halt_step, result.row["status"], result.row["outcome"]
    (True, 1, 'predicted', 0.0)
    """
    if not isinstance(run, Trajectory):
        raise InputError(f"monitor_run: `run` must be a Trajectory; got {type(run).__name__}")
    monitor = OnlineMonitor(
        model, run.task_text, gold=gold, success_threshold=success_threshold, failure_threshold=failure_threshold, guard=guard
    )
    verdicts: list[Verdict] = []
    for step in run.steps:
        verdicts.append(monitor.observe(step))
        if verdicts[-1].halted:
            break
    n = len(run.steps)
    halted = bool(verdicts) and verdicts[-1].halted and verdicts[-1].step < n
    held = [v for v in verdicts if v.held]
    row: dict[str, Any] | None
    if halted:
        row = verdicts[-1].outcome_row(system=run.agent, task=run.task, attempt=run.attempt, source=source)
        reason = verdicts[-1].reason
    else:
        reason = f"ran to completion ({n} steps)" + (f"; {held[-1].reason}" if held else "")
        if run.outcome is None:
            row = None
            reason += "; no outcome recorded, so no outcome row"
        else:
            row = {
                "system": run.agent, "task": run.task, "outcome": float(run.outcome), "group": "", "attempt": run.attempt,
                "status": "final", "source": f"{source}:full-run",
            }
    return RunMonitoring(run.agent, run.task, run.attempt, n, verdicts, halted, run.outcome, len(held), row, reason)
