"""stopwise as an installed Inspect extension: ``inspect eval stopwise/compare -T task=tasks.py@my_task --model A,B``.

Installing ``stopwise[inspect]`` declares this module under ``[project.entry-points.inspect_ai]``, so Inspect
imports it at start-up: it registers the task ``stopwise/compare`` and the hook ``stopwise/stopwise`` (and the
halting dispatcher, disabled while no :class:`~stopwise.inspect.LiveHalting` is open). Nothing else happens
until stopwise is enabled (:mod:`stopwise.inspect._settings`: ``[tool.stopwise]``, ``STOPWISE_*``,
``--metadata stopwise_*``, ``-T``): a disabled hook is never called, and the task file is not changed.

**Why a task, not only a hook.** Inspect's hooks receive no ``Task``; skipping samples needs the task's
``early_stopping``. ``stopwise/compare`` loads the user's unmodified task (``-T task=FILE@NAME`` or a
registered name; every other ``-T`` argument that is not a stopwise setting goes to it) and, when enabled,
returns it with ``task_with(early_stopping=...)``: one manager for the models of ``--model tested,baseline``
(:class:`~stopwise.inspect.ModelPairEarlyStopping`: each call goes to the active model's system). Not enabled,
it returns the task itself. The manager reads the eval's ``--metadata`` when the task starts, so metadata can
change any setting of an enabled run (or turn it off: the log then records ``{"enabled": false}``). With the
``halting`` setting (a saved early-outcome model) the task is also given to a
:class:`~stopwise.inspect.LiveHalting`, whose hook halts its samples once their outcome is predicted.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stopwise.errors import InputError
from stopwise.inspect._models import ModelPairEarlyStopping, paired_model_early_stopping
from stopwise.inspect._order import planned_order
from stopwise.inspect._settings import FIELDS, ExtensionSettings, find_pyproject, settings_from
from stopwise.records import Policy, TaskUniverse

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.log import EvalSpec
    from inspect_ai.scorer import SampleScore
    from inspect_ai.util import EarlyStop

__all__ = ["ConfiguredEarlyStopping", "compare_task", "halting_only", "hooks_enabled", "project_settings"]

_log = logging.getLogger("stopwise.inspect")

MARK = "stopwise_extension"
"""Task metadata key marking a task wrapped by ``stopwise/compare`` (the hook warns about configured tasks without it)."""


def project_settings(task_args: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None) -> ExtensionSettings:
    """The settings of this process: ``[tool.stopwise]`` of the nearest pyproject.toml, ``STOPWISE_*``, then the rest."""
    return settings_from(find_pyproject(), os.environ, metadata, task_args)


_ENABLED: dict[tuple[str, tuple[str | None, ...]], tuple[tuple[str, int] | None, bool]] = {}
_VARIABLES = tuple(f"STOPWISE_{name.upper()}" for name in FIELDS)


def _pyproject_stamp(path: Path | None) -> tuple[str, int] | None:
    try:
        return None if path is None else (str(path), path.stat().st_mtime_ns)
    except OSError:
        return None


def hooks_enabled() -> bool:
    """Whether stopwise is enabled in this working directory and environment (the hook's ``enabled()``).

    Inspect asks at every hook event (dozens per sample), so the answer is kept per working directory and
    ``STOPWISE_*`` variables, and read again only when the ``pyproject.toml`` it came from changes.
    """
    key = (os.getcwd(), tuple(map(os.environ.get, _VARIABLES)))
    known = _ENABLED.get(key)
    if known is not None and (known[0] is None or _pyproject_stamp(Path(known[0][0])) == known[0]):
        return known[1]
    path = find_pyproject()
    stamp = _pyproject_stamp(path)
    try:
        enabled = settings_from(path, os.environ).enabled
    except InputError as exc:
        _log.error("stopwise: %s (stopwise is off for this run)", exc)
        enabled = False
    _ENABLED[key] = (stamp, enabled)
    return enabled


class ConfiguredEarlyStopping:
    """The ``EarlyStopping`` manager ``stopwise/compare`` attaches: built from the settings when the task starts.

    Parameters
    ----------
    task_args : dict
        The stopwise settings given as ``-T`` arguments (they override every other source).
    name : str
        The wrapped task's name (the default evaluation id).
    universe : TaskUniverse, optional
        The planned universe (the dataset's pre-registered order).
    """

    def __init__(self, task_args: dict[str, Any], name: str, universe: TaskUniverse | None = None) -> None:
        self.task_args = task_args
        self.name = name
        self.universe = universe
        self.settings: ExtensionSettings | None = None
        self.manager: ModelPairEarlyStopping | None = None
        self._lock = threading.Lock()

    def _build(self, spec: EvalSpec) -> None:
        with self._lock:
            if self.settings is not None:
                return
            settings = project_settings(self.task_args, dict(spec.metadata or {}))
            if settings.enabled:
                missing = [name for name in ("tested", "baseline") if getattr(settings, name) is None]
                if missing:
                    raise InputError(
                        f"stopwise/compare: `{missing[0]}` is not set: give the {missing[0]} model's name as Inspect "
                        f"names it (e.g. tested = \"openai/gpt-4o\" in [tool.stopwise], STOPWISE_{missing[0].upper()}=..., "
                        f"or -T {missing[0]}=...)"
                    )
                fields: dict[str, Any] = {k: getattr(settings, k) for k in ("policy", "group", "scorer", "pace", "refresh")}
                fields["universe"] = self.universe
                self.manager = paired_model_early_stopping(
                    settings.ledger, settings.evaluation or self.name,  # type: ignore[arg-type]
                    tested=settings.tested, baseline=settings.baseline, **fields,
                )
            self.settings = settings

    async def start_task(self, task: EvalSpec, samples: list[Sample], epochs: int) -> str:
        """Resolve the settings (with the eval's metadata) once, then start the active model's system."""
        import anyio.to_thread

        await anyio.to_thread.run_sync(self._build, task)
        if self.manager is None:
            return "stopwise (not enabled)"
        return await self.manager.start_task(task, samples, epochs)

    async def schedule_sample(self, id: str | int, epoch: int) -> EarlyStop | None:
        """As :meth:`ModelPairEarlyStopping.schedule_sample` (None when not enabled)."""
        return None if self.manager is None else await self.manager.schedule_sample(id, epoch)

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, SampleScore]) -> None:
        """As :meth:`ModelPairEarlyStopping.complete_sample`."""
        if self.manager is not None:
            await self.manager.complete_sample(id, epoch, scores)

    async def complete_task(self) -> dict[str, Any]:
        """The decision summary, with the settings it ran under."""
        if self.manager is None or self.settings is None:
            return {"enabled": False}
        summary = await self.manager.complete_task()
        return {**summary, "settings": self.settings.public(), "sources": dict(self.settings.sources)}


def _load_user_task(task: str, args: dict[str, Any]) -> Task:
    from inspect_ai import Task
    from inspect_ai._eval.loader import load_tasks  # Inspect's own loader of `inspect eval TASK` (no public one)

    if not isinstance(task, str) or not task.strip():
        raise InputError("stopwise/compare: `-T task=FILE@NAME` (or a registered task name) is required")
    loaded = load_tasks([task.strip()], args)
    if len(loaded) != 1 or not isinstance(loaded[0], Task):
        raise InputError(f"stopwise/compare: -T task={task!r} names {len(loaded)} tasks; name exactly one (FILE@NAME)")
    return loaded[0]


def compare_task(task: str, **args: Any) -> Task:
    """The user's task, with stopwise's early stopping when enabled (the body of ``stopwise/compare``).

    Parameters
    ----------
    task : str
        The task to run, as ``inspect eval`` takes it: ``tasks.py@my_task`` or a registered name.
    **args
        Stopwise settings (``ledger``, ``tested``, ``baseline``, ``policy``, ...: see
        :mod:`stopwise.inspect._settings`); every other argument is passed to the task.

    Returns
    -------
    Task
        The task itself when stopwise is not enabled; else ``task_with(task, early_stopping=...)``.
    """
    from inspect_ai import task_with

    ours = {k: v for k, v in args.items() if k in FIELDS and v is not None}
    theirs = {k: v for k, v in args.items() if k not in FIELDS}
    user = _load_user_task(task, theirs)
    settings = project_settings(ours)
    if not settings.enabled:
        return user if settings.halting is None or settings.switch is False else halting_only(user, settings)
    if user.early_stopping is not None:
        raise InputError(f"stopwise/compare: task {user.name!r} has its own early_stopping manager; remove it or run it directly")
    # the samples in the policy's pre-registered order ([order] kind and seed): anyone holding the policy and the
    # dataset draws it again, and the betting boundary's stamp checks it
    dataset, universe = planned_order(user.dataset, _policy(settings.policy), group=settings.group)
    if settings.halting is not None:  # within-sample halting: the dispatcher hook acts on the tasks the halter marks
        from stopwise.inspect._halting import LiveHalting

        user = LiveHalting(settings.halting).task(user)
    manager = ConfiguredEarlyStopping(ours, user.name, universe)
    return task_with(user, dataset=dataset, early_stopping=manager, metadata={**(user.metadata or {}), MARK: True})


def halting_only(user: Task, settings: ExtensionSettings) -> Task:
    """The task with halting alone (``halting`` set, no ledger): no comparison, samples halted when predicted."""
    from stopwise.inspect._halting import LiveHalting

    return LiveHalting(settings.halting).task(user)


def _policy(path: str | None) -> Policy:
    from stopwise.records import load_policy

    return Policy() if path is None else load_policy(path)


def _register() -> None:
    """Register ``stopwise/compare`` and the hooks with Inspect (the entry point's import)."""
    from inspect_ai import task
    from inspect_ai.hooks import Hooks, TaskEnd, TaskStart, hooks

    from stopwise.inspect._halting import _dispatcher

    _dispatcher()  # the halting hook: registered now, enabled only while a LiveHalting is open

    @task(name="compare")
    def compare(task: str = "", **args: Any) -> Any:
        """A paired comparison of --model tested,baseline on the task ``-T task=FILE@NAME``, stopped when decided."""
        return compare_task(task, **args)

    class StopwiseHooks(Hooks):
        """Enabled when stopwise is configured; says when a task runs without the wrapper that can stop it."""

        def enabled(self) -> bool:
            return hooks_enabled()

        async def on_task_start(self, data: TaskStart) -> None:
            if not (data.spec.metadata or {}).get(MARK) and (data.spec.task_registry_name or "") != "stopwise/compare":
                _log.warning(
                    "stopwise is configured but task %r runs without its early stopping (inspect eval stopwise/compare "
                    "-T task=FILE@%s --model TESTED,BASELINE runs it with)", data.spec.task, data.spec.task,
                )

        async def on_task_end(self, data: TaskEnd) -> None:
            summary = data.log.results.early_stopping if data.log.results else None
            meta = summary.metadata if summary is not None else {}
            if meta.get("claim"):
                _log.warning("stopwise %s (%s): %s", meta.get("action"), meta.get("system"), meta["claim"])

    hooks(name="stopwise", description="stopwise: stop a paired comparison once decided")(StopwiseHooks)


_register()
