"""One system's paired manager on one Task run for several models (``eval(task, model=[A, B])``): refused at start.

Inspect runs that one Task once per model, so its one manager -- made by ``paired_early_stopping`` for one
system -- would store every model's outcomes under that system's name. ``start_task`` does not name the other
models, but Inspect's ``on_run_start`` hook lists the run's tasks, one entry per task and model
(:func:`stopwise.inspect._errors.run_task_names`): a task name there more than once is this misuse (or two
Tasks of one name, which the refusal asks to name apart). Each model's ``start_task`` is refused, before any
sample runs, so both logs say why and name the managers to use instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stopwise.errors import InputError
from stopwise.inspect._errors import run_task_names

if TYPE_CHECKING:
    from stopwise.inspect._family import FamilyRace
    from stopwise.inspect._manager import PairedComparison, Role

__all__ = ["family_task_per_model", "one_task_per_model"]


def one_task_per_model(comparison: PairedComparison, role: Role, spec: Any) -> None:
    """Refuse ``role``'s task when the run holds it once per model (see the module); record why for its partner.

    Parameters
    ----------
    comparison : PairedComparison
        The comparison whose manager of ``role`` Inspect calls.
    role : {"tested", "baseline"}
        The system of that manager.
    spec : inspect_ai.log.EvalSpec
        The task's eval spec (its ``task`` name and ``run_id``).

    Raises
    ------
    InputError
        The run holds this task's name more than once.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from stopwise.inspect import paired_early_stopping
    >>> from stopwise.inspect._misuse import one_task_per_model
    >>> tested, _ = paired_early_stopping("sqlite:///:memory:", "demo", tested="A", baseline="B")
    >>> one_task_per_model(tested.comparison, "tested", SimpleNamespace(task="arith", run_id="unseen"))  # run not seen: no check
    """
    name = str(getattr(spec, "task", "") or "")
    names = run_task_names(str(getattr(spec, "run_id", "") or "")) or []
    if names.count(name) < 2:
        return
    system = comparison.system_of(role)
    why = (
        f"task {name!r} ({role} {system!r}): this run holds {names.count(name)} tasks named {name!r} on the manager of "
        f"one system: eval(task, model=[A, B]) runs one Task once per model, so every model's outcomes would be "
        f"stored as system {system!r}; so no model runs it. For two models give the Task the manager of "
        "paired_model_early_stopping(ledger, evaluation, tested=A, baseline=B) (family_model_early_stopping for "
        "more than two); or build one Task per system, each with its own name and its own manager from "
        "paired_early_stopping"
    )
    with comparison._lock:
        comparison._misused[role] = why
    raise InputError(why)


def family_task_per_model(race: FamilyRace, system: str, spec: Any) -> None:
    """Refuse ``system``'s task when the run holds it once per model (see the module).

    That is one system's manager of a family race on ``eval(task, model=[...])``; the manager of
    ``family_model_early_stopping`` routes the models instead.

    Raises
    ------
    InputError
        The run holds this task's name more than once.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from stopwise.inspect import family_early_stopping
    >>> from stopwise.inspect._misuse import family_task_per_model
    >>> race = family_early_stopping("sqlite:///:memory:", "race", systems=["A", "B"])["A"].race
    >>> family_task_per_model(race, "A", SimpleNamespace(task="arith", run_id="unseen"))  # run not seen: no check
    """
    name = str(getattr(spec, "task", "") or "")
    names = run_task_names(str(getattr(spec, "run_id", "") or "")) or []
    if names.count(name) < 2:
        return
    raise InputError(
        f"task {name!r} (system {system!r} of family {race.evaluation!r}): this run holds {names.count(name)} tasks named "
        f"{name!r} on the manager of one system: eval(task, model=[...]) runs one Task once per model, so every "
        f"model's outcomes would be stored as system {system!r}; so no model runs it. For several models give the Task "
        "the manager of family_model_early_stopping(ledger, evaluation, models={name: model, ...}); or build one Task "
        "per system, each with its own name and its own manager from family_early_stopping"
    )
