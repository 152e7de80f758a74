"""One manager for ``eval(task, model=[tested, baseline])``: Inspect's own idiom for comparing two models.

``eval(task, model=[A, B])`` runs one Task object once per model, so both runs call the same
``EarlyStopping`` manager, and its four calls (``start_task``, ``schedule_sample``,
``complete_sample``, ``complete_task``) do not name the model. But Inspect runs each task in its own
context with the task's model active (``init_task_context`` sets it before ``start_task``, and the
samples, their scheduling and their scoring run inside it), and ``get_model()`` with no argument
returns that active model. :class:`ModelPairEarlyStopping` routes each call to the system whose
model is active, and the pair is one :class:`~stopwise.inspect.PairedComparison`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stopwise.errors import InputError
from stopwise.inspect._ledger import LedgerArgument
from stopwise.inspect._manager import PairedComparison, Role, SystemEarlyStopping
from stopwise.inspect._spec import PairedSpec

if TYPE_CHECKING:
    from inspect_ai.dataset import Sample
    from inspect_ai.log import EvalSpec
    from inspect_ai.scorer import SampleScore
    from inspect_ai.util import EarlyStop

__all__ = ["ModelPairEarlyStopping", "paired_model_early_stopping"]


def _model_name(model: Any) -> str:
    if isinstance(model, str):
        if not model.strip():
            raise InputError("a model name must be non-empty, e.g. 'openai/gpt-4o'")
        return model.strip()
    from inspect_ai.model import Model

    if not isinstance(model, Model):
        raise InputError(f"a model must be a name ('openai/gpt-4o') or an inspect_ai Model; got {type(model).__name__}")
    return str(model)


class ModelPairEarlyStopping:
    """The ``EarlyStopping`` manager of one Task run for two models: each call goes to the active model's system.

    Build it with :func:`paired_model_early_stopping`.

    Attributes
    ----------
    comparison : PairedComparison
        The shared state (ledger, planned universe, decision).
    models : dict
        ``{"tested": model, "baseline": model}``: a Model object (matched by identity) or a name
        (matched with ``str(model)``, e.g. ``"openai/gpt-4o"``).
    """

    def __init__(self, comparison: PairedComparison, tested: Any, baseline: Any) -> None:
        self.comparison = comparison
        self.models: dict[Role, Any] = {"tested": tested, "baseline": baseline}
        self.managers: dict[Role, SystemEarlyStopping] = {
            role: SystemEarlyStopping(comparison, role, routed=True) for role in ("tested", "baseline")
        }

    def __repr__(self) -> str:
        names = {role: _model_name(model) for role, model in self.models.items()}
        return f"ModelPairEarlyStopping({self.comparison.evaluation!r}, tested={names['tested']!r}, baseline={names['baseline']!r})"

    def role(self) -> Role:
        """The role of the model Inspect is running now (``get_model()`` inside a task is its model)."""
        from inspect_ai.model import Model, get_model

        active = get_model()
        roles = [role for role, model in self.models.items()
                 if (active is model if isinstance(model, Model) else str(active) == model)]
        if len(roles) != 1:
            wanted = ", ".join(f"{role} {_model_name(m)!r}" for role, m in self.models.items())
            raise InputError(
                f"evaluation {self.comparison.evaluation!r}: Inspect runs model {str(active)!r}, which is "
                + ("both" if roles else "neither")
                + f" of the paired models ({wanted}); eval(task, model=[tested, baseline]) must run exactly these two"
                " (pass the Model objects when their names are the same)"
            )
        return roles[0]

    async def start_task(self, task: EvalSpec, samples: list[Sample], epochs: int) -> str:
        """``start_task`` of the active model's system."""
        return await self.managers[self.role()].start_task(task, samples, epochs)

    async def schedule_sample(self, id: str | int, epoch: int) -> EarlyStop | None:
        """``schedule_sample`` of the active model's system."""
        return await self.managers[self.role()].schedule_sample(id, epoch)

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, SampleScore]) -> None:
        """``complete_sample`` of the active model's system."""
        await self.managers[self.role()].complete_sample(id, epoch, scores)

    async def complete_task(self) -> dict[str, Any]:
        """``complete_task`` of the active model's system."""
        return await self.managers[self.role()].complete_task()


def paired_model_early_stopping(
    ledger: LedgerArgument,
    spec: PairedSpec | str,
    /,
    *,
    tested: Any,
    baseline: Any,
    systems: tuple[str, str] | None = None,
    **fields: Any,
) -> ModelPairEarlyStopping:
    """One early-stopping manager for ``eval(task, model=[tested, baseline])``.

    Parameters
    ----------
    ledger
        As for :func:`paired_early_stopping`.
    spec : PairedSpec or str
        What is compared, its ``tested`` and ``baseline`` the system names of the two models' rows; or
        the evaluation id, with the other fields of :class:`PairedSpec` (but ``tested`` and
        ``baseline``, which name the models here) as keywords.
    tested, baseline : str or inspect_ai.model.Model
        The two models, as given to ``eval(..., model=[...])``: names (``"openai/gpt-4o"``) or the
        Model objects (matched by identity; needed when the two names are the same, e.g. two
        ``mockllm/model`` or one model with two configurations).
    systems : (str, str), optional
        With an evaluation id: the system names of the tested and baseline rows in the ledger
        (default: the model names).
    **fields
        With an evaluation id: ``policy``, ``universe``, ``group``, ``scorer``, ``refresh``, ``pace``.

    Returns
    -------
    ModelPairEarlyStopping

    Raises
    ------
    InputError
        A model that is neither a name nor a Model, two models with one system name, or ``systems``
        beside a PairedSpec (which names the systems).

    Examples
    --------
    >>> from stopwise.inspect import paired_model_early_stopping
    >>> manager = paired_model_early_stopping(
    ...     "sqlite:///:memory:", "demo", tested="openai/gpt-4o", baseline="openai/gpt-4o-mini")
    >>> manager.comparison.tested, manager.comparison.baseline
    ('openai/gpt-4o', 'openai/gpt-4o-mini')

    Then ``eval(Task(..., early_stopping=manager), model=["openai/gpt-4o", "openai/gpt-4o-mini"], max_tasks=2)``.
    """
    names = (_model_name(tested), _model_name(baseline)) if systems is None else systems
    if not isinstance(names, tuple | list) or len(names) != 2:
        raise InputError(f"`systems` must be two system names (tested, baseline); got {systems!r}")
    if not isinstance(tested, str) and not isinstance(baseline, str) and tested is baseline:
        raise InputError("`tested` and `baseline` are the same Model object")
    if isinstance(spec, PairedSpec):
        if systems is not None:
            raise InputError("`systems` names the rows' systems; a PairedSpec names them already (its tested and baseline)")
        comparison = PairedComparison(ledger, spec, **fields)
    elif names[0] == names[1]:
        raise InputError(
            f"the tested and baseline models have one name, {names[0]!r}: give the system names of their rows "
            "with systems=(tested_name, baseline_name) (and the Model objects as tested and baseline)"
        )
    else:
        comparison = PairedComparison(ledger, spec, tested=str(names[0]), baseline=str(names[1]), **fields)
    return ModelPairEarlyStopping(comparison, tested, baseline)
