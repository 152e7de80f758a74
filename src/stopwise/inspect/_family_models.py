"""One manager for ``eval(task, model=[A, B, C, ...])``: a family race in Inspect's own idiom for comparing models.

As for a pair (:mod:`stopwise.inspect._models`), Inspect runs the one Task once per model, each run in its own
context with its model active, and ``get_model()`` returns that model: :class:`ModelFamilyStopping` routes each
of the manager's calls to the system whose model is active.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stopwise.errors import InputError
from stopwise.inspect._family import FamilyRace, SystemRaceStopping
from stopwise.inspect._family_spec import FamilySpec
from stopwise.inspect._ledger import LedgerArgument
from stopwise.inspect._models import _model_name

if TYPE_CHECKING:
    from inspect_ai.dataset import Sample
    from inspect_ai.log import EvalSpec
    from inspect_ai.scorer import SampleScore
    from inspect_ai.util import EarlyStop

__all__ = ["ModelFamilyStopping", "family_model_early_stopping"]


class ModelFamilyStopping:
    """The ``EarlyStopping`` manager of one Task run for k models: each call goes to the active model's system.

    Build it with :func:`family_model_early_stopping`.

    Attributes
    ----------
    race : FamilyRace
        The shared state (ledger, planned universe, latest family look).
    models : dict
        ``{system: model}``: a Model object (matched by identity) or a name (matched with ``str(model)``).
    """

    def __init__(self, race: FamilyRace, models: Mapping[str, Any]) -> None:
        self.race = race
        self.models = dict(models)
        self.managers = {system: SystemRaceStopping(race, system, routed=True) for system in self.models}

    def __repr__(self) -> str:
        return f"ModelFamilyStopping({self.race.evaluation!r}, {list(self.models)!r})"

    def system(self) -> str:
        """The system of the model Inspect is running now."""
        from inspect_ai.model import Model, get_model

        active = get_model()
        found = [s for s, m in self.models.items() if (active is m if isinstance(m, Model) else str(active) == m)]
        if len(found) != 1:
            raise InputError(
                f"family {self.race.evaluation!r}: Inspect runs model {str(active)!r}, which is "
                + ("more than one" if found else "none")
                + f" of the family's models ({', '.join(self.models)}); eval(task, model=[...]) must run exactly these"
                " (pass the Model objects when their names are the same)"
            )
        return found[0]

    async def start_task(self, task: EvalSpec, samples: list[Sample], epochs: int) -> str:
        """``start_task`` of the active model's system."""
        return await self.managers[self.system()].start_task(task, samples, epochs)

    async def schedule_sample(self, id: str | int, epoch: int) -> EarlyStop | None:
        """``schedule_sample`` of the active model's system."""
        return await self.managers[self.system()].schedule_sample(id, epoch)

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, SampleScore]) -> None:
        """``complete_sample`` of the active model's system."""
        await self.managers[self.system()].complete_sample(id, epoch, scores)

    async def complete_task(self) -> dict[str, Any]:
        """``complete_task`` of the active model's system."""
        return await self.managers[self.system()].complete_task()


def family_model_early_stopping(
    ledger: LedgerArgument, spec: FamilySpec | str, /, models: Mapping[str, Any], **fields: Any
) -> ModelFamilyStopping:
    """One early-stopping manager for ``eval(task, model=[...])`` racing a family of models.

    Parameters
    ----------
    ledger : str, path or Ledger
        A database URL or an opened :class:`~stopwise.ledger.Ledger`.
    spec : FamilySpec or str
        What is raced (its ``systems`` must be the keys of ``models``); or the evaluation id, with the other fields
        of :class:`FamilySpec` (but ``systems``, taken from ``models``) as keywords.
    models : mapping
        ``{system name in the rows: model}``: Model objects (needed when several share one name, as
        ``mockllm/model`` does) or model names (``"openai/gpt-4o"``).

    Returns
    -------
    ModelFamilyStopping

    Examples
    --------
    >>> from stopwise.inspect import family_model_early_stopping
    >>> manager = family_model_early_stopping(
    ...     "sqlite:///:memory:", "race", models={"gpt": "openai/gpt-4o", "mini": "openai/gpt-4o-mini", "o3": "openai/o3"})
    >>> manager.race.spec.systems
    ('gpt', 'mini', 'o3')

    Then ``eval(Task(..., early_stopping=manager), model=["openai/gpt-4o", "openai/gpt-4o-mini", "openai/o3"],
    max_tasks=3)``.
    """
    if not isinstance(models, Mapping) or len(models) < 2:
        raise InputError(f"`models` must map at least 2 system names to models; got {models!r}")
    for model in models.values():
        _model_name(model)
    objects = [m for m in models.values() if not isinstance(m, str)]
    if len({id(m) for m in objects}) != len(objects):
        raise InputError("`models` gives one Model object to two systems")
    if isinstance(spec, FamilySpec):
        if fields:
            raise InputError(f"give a FamilySpec or the evaluation id with keywords, not both; got a FamilySpec and {', '.join(fields)}")
        if set(spec.systems) != set(models):
            raise InputError(f"the FamilySpec's systems {list(spec.systems)} are not the keys of `models` {list(models)}")
        race = FamilyRace(ledger, spec)
    else:
        if "systems" in fields:
            raise InputError("`systems` are the keys of `models`; do not give them twice")
        race = FamilyRace(ledger, spec, systems=list(models), **fields)
    return ModelFamilyStopping(race, {system: models[system] for system in race.spec.systems})
