"""Errored samples of a paired Inspect run become ``pending`` events in the ledger (issue 20).

Inspect calls no ``EarlyStopping.complete_sample`` for a sample that raised (inspect_ai 0.3.x: the
sample's scores are None, so the early-stopping hook is skipped); it does call the global
``Hooks.on_sample_end`` with the logged sample, its ``error`` included. :func:`watch_errors` registers
one process-wide hook (``ErrorHook``, registered the first time a paired task starts) and routes the
errored samples of each started task, by Inspect's eval id, to the :class:`PairedComparison` that
started it. :func:`record_error` appends the sample as the row ``stopwise ingest`` writes for it
(``status = "pending"``, no outcome, flag ``error``, the epoch's attempt), keeps the error message for the
log's metadata and takes a look, so that under ``[decision] missing = "worst-case"`` or ``"exclude"``
(:mod:`stopwise.compare._missing`) the boundary moves past the errored task instead of waiting for it.

Samples that finish without a usable score but without an error still reach ``complete_sample`` and are
appended there (flag ``unscored``).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any, Protocol

import anyio.to_thread

from stopwise.records import Policy

__all__ = ["ErrorSink", "error_notes", "missing_samples", "record_error", "record_failure", "run_task_names", "watch_errors"]

_log = logging.getLogger("stopwise.inspect")

_MESSAGE_CHARS = 300
"""How much of an error message the log's metadata keeps per sample."""
_SHOWN = 20
"""Errored tasks a note names before ``...``."""

class ErrorSink(Protocol):
    """What records a task's errored samples: a paired comparison (by role) or a family race (by system)."""

    policy: Policy

    def system_of(self, role: Any) -> str:
        """The system name of ``role``."""

    def errored(self, role: Any, task: str, epoch: int, note: Callable[[], None]) -> None:
        """Append ``role``'s errored run of ``task`` (calling ``note`` under its lock)."""

    def task_failed(self, role: Any, reason: str) -> None:
        """``role``'s task is failing (Inspect fails it at an errored sample): say so to the others."""


_routes: dict[str, tuple[weakref.ref[ErrorSink], Any, bool]] = {}
"""Inspect eval id -> (comparison, role, tolerates errors) of every paired or family task started in this process."""
_errors: weakref.WeakKeyDictionary[ErrorSink, dict[str, list[dict[str, Any]]]] = weakref.WeakKeyDictionary()
"""The errored samples each comparison recorded, by role (for the log's metadata)."""
_runs: dict[str, list[str]] = {}
"""Inspect run id -> the names of the tasks the run holds (its ``on_run_start``): a partner that has not started may
still start in a run of several tasks (``eval(tasks)`` with ``max_tasks=1``), not in a run of one; one Task run for
several models (``eval(task, model=[A, B])``) is there once per model."""
_guard = threading.Lock()
_hook: list[Any] = []


def _register_hook() -> None:
    """Register ``ErrorHook`` with Inspect once per process (Inspect keeps one instance for the process's life)."""
    with _guard:
        if _hook:
            return
        try:
            from inspect_ai.hooks import Hooks, RunStart, SampleEnd, hooks
        except ImportError:  # an Inspect without hooks: errored samples are not recorded (the log still has them)
            _log.warning("stopwise: this inspect_ai has no hooks; errored samples are not recorded in the ledger")
            _hook.append(None)
            return

        @hooks(name="stopwise_errors", description="stopwise: errored samples of paired tasks become pending ledger events")
        class ErrorHook(Hooks):
            """Routes each errored sample of a paired task to its comparison (see :mod:`stopwise.inspect._errors`)."""

            def enabled(self) -> bool:
                return True

            async def on_run_start(self, data: RunStart) -> None:
                with _guard:
                    _runs[data.run_id] = [str(name) for name in data.task_names]

            async def on_sample_end(self, data: SampleEnd) -> None:
                route = _routes.get(data.eval_id)
                sample = data.sample
                if route is None or sample.error is None:
                    return
                comparison = route[0]()
                if comparison is None:
                    return
                message = str(getattr(sample.error, "message", sample.error))
                if not route[2]:  # Inspect fails this task at this error: its partner must stop too
                    await anyio.to_thread.run_sync(record_failure, comparison, route[1], sample.id, sample.epoch, message)
                    return
                await anyio.to_thread.run_sync(record_error, comparison, route[1], sample.id, sample.epoch, message)

        _hook.append(ErrorHook)


def register_hooks() -> None:
    """Register the process's hook before a run starts (a comparison is built before ``eval``): it counts each run's tasks."""
    _register_hook()


def run_tasks(run_id: str) -> int | None:
    """How many tasks the Inspect run ``run_id`` holds (None: unknown, its start was not seen)."""
    names = _runs.get(run_id)
    return None if names is None else len(names)


def run_task_names(run_id: str) -> list[str] | None:
    """The names of the tasks the Inspect run ``run_id`` holds, one per task and model (None: its start was not seen)."""
    names = _runs.get(run_id)
    return None if names is None else list(names)


def tolerates_errors(spec: Any) -> bool:
    """Whether the task keeps running after a sample error: ``fail_on_error`` False or a threshold, or ``continue_on_fail``.

    Inspect's default (``fail_on_error`` None or True) fails the task at its first sample error: nothing more is
    scheduled, and ``eval_retry`` runs the sample again, whose outcome would then conflict with a ``pending`` row of
    the same attempt. So errors are recorded only for a task that tolerates them.
    """
    config = getattr(spec, "config", None)
    fail_on_error = getattr(config, "fail_on_error", None)
    return (fail_on_error is not None and fail_on_error is not True) or getattr(config, "continue_on_fail", None) is True


def watch_errors(comparison: ErrorSink, role: Any, spec: Any) -> None:
    """Route the errored samples of the task ``spec`` (Inspect's eval spec) to ``comparison`` (called by ``start_task``).

    A task that :func:`tolerates_errors` has each errored sample recorded (:func:`record_error`); any other
    ends at its first error (Inspect's default ``fail_on_error``), which fails the task: :func:`record_failure`.
    Inspect calls no ``EarlyStopping`` method and no ``on_task_end`` hook for a task that fails (inspect_ai
    0.3.x), so the errored sample's ``on_sample_end`` is the one signal that the task is failing.
    """
    eval_id = str(getattr(spec, "eval_id", "") or "")
    if not eval_id:
        return
    _register_hook()
    with _guard:
        _routes[eval_id] = (weakref.ref(comparison), role, tolerates_errors(spec))


def record_failure(comparison: ErrorSink, role: Any, sample_id: str | int, epoch: int, message: str) -> None:
    """``role``'s task fails at this errored sample (Inspect's default ``fail_on_error``): stop its partner too.

    The partner, in this process or (through the ledger's worker notices) in another, schedules no more
    sample and its log names this failure (``task_failed`` of :class:`stopwise.inspect.PairedComparison`).
    """
    reason = f"its task failed: sample {sample_id} (epoch {epoch}) errored: {message[:_MESSAGE_CHARS]}"
    _log.warning("stopwise: %s %s", comparison.system_of(role), reason)
    comparison.task_failed(role, reason)


def record_error(comparison: ErrorSink, role: Any, sample_id: str | int, epoch: int, message: str) -> None:
    """Append an errored sample as a ``pending`` event flagged ``error`` and take a look (in a worker thread).

    The row is the one ``stopwise ingest`` reads from the log for the sample (so the ledger and the log agree).
    A ledger failure stops the evaluation as any other does. Under the ``betting-wor`` boundary with
    ``[decision] missing`` other than ``wait`` a look is taken when the partner has reported on the task (its
    outcome or its own errored run), since the errored task may complete the prefix; the task counts as reported
    for this system, so the partner's later outcome of it takes a look too (:meth:`PairedComparison.errored`).
    """
    task = str(sample_id)
    _log.warning("stopwise: %s sample %s (epoch %s) errored: %s", comparison.system_of(role), task, epoch,
                 message[:_MESSAGE_CHARS])
    entry = {"task": task, "epoch": int(epoch), "error": message[:_MESSAGE_CHARS]}
    comparison.errored(role, task, epoch, lambda: _errors.setdefault(comparison, {}).setdefault(role, []).append(entry))


def missing_samples(comparison: ErrorSink, role: Any) -> list[dict[str, Any]]:
    """The errored samples of ``role`` recorded so far: task, epoch and the error message (for the log's metadata)."""
    return list(_errors.get(comparison, {}).get(role, []))


def error_notes(comparison: ErrorSink, role: Any) -> list[str]:
    """The log's note on the errored samples of ``role``: which tasks, and what the boundary does with them."""
    errored = missing_samples(comparison, role)
    if not errored:
        return []
    tasks = list(dict.fromkeys(e["task"] for e in errored))
    shown = ", ".join(tasks[:_SHOWN]) + (f", ... ({len(tasks)} in all)" if len(tasks) > _SHOWN else "")
    decision = comparison.policy.decision
    if decision.boundary != "betting-wor":
        what = "the fixed-budget rule judges the other tasks"
    else:
        what = {
            "worst-case": "the betting boundary counts each at its worst case for each test",
            "wait": "the betting boundary waits for a retry at the first of them",
            "exclude": "the betting boundary leaves them out of the planned universe",
        }[decision.missing]
    return [
        f"{len(errored)} sample(s) errored and are missing outcomes (pending in the ledger, flag error): {shown}; "
        f"{what} ([decision] missing = {decision.missing!r}; errors: see `errored`)"
    ]
