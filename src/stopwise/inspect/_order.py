"""The pre-registered task order of a live Inspect evaluation: the policy's order over the dataset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from stopwise.compare import order_universe, task_order
from stopwise.errors import InputError
from stopwise.records import Policy, TaskUniverse

if TYPE_CHECKING:
    from inspect_ai.dataset import Dataset, MemoryDataset

__all__ = ["planned_order"]


def planned_order(
    dataset: Dataset | list[Any],
    policy: Policy | None = None,
    *,
    group: str | None = None,
    universe: TaskUniverse | None = None,
) -> tuple[MemoryDataset, TaskUniverse]:
    """The dataset in its pre-registered order, and the planned universe to register.

    The order is drawn by :func:`stopwise.compare.task_order` from the policy's ``[order]`` section
    (``kind``: coverage-aware by default, or uniform; ``seed``), over the sample ids and their
    groups, so anyone holding the policy and the dataset can draw the same order again. With
    ``universe`` given (e.g. read from a ``stopwise order`` file), the dataset is put in that order.

    Parameters
    ----------
    dataset : inspect_ai Dataset or list of Sample
        The samples (each with an id).
    policy : Policy, optional
        The comparison policy (default: ``Policy()``, the exact-wor one-look test on a uniform order).
    group : str, optional
        Sample metadata key of the coverage group (none: one group).
    universe : TaskUniverse, optional
        A planned universe that lists the tasks; overrides the policy's order.

    Returns
    -------
    (MemoryDataset, TaskUniverse)
        The samples in planned order, and the universe to pass to :func:`paired_early_stopping`.

    Raises
    ------
    InputError
        A sample without an id or group, duplicate ids, or samples and universe that differ.

    Examples
    --------
    >>> from inspect_ai.dataset import Sample
    >>> from stopwise.inspect import planned_order
    >>> samples = [Sample(id=f"q{i}", input="?", metadata={"g": "ab"[i % 2]}) for i in range(6)]
    >>> ordered, universe = planned_order(samples, group="g")
    >>> [s.id for s in ordered] == universe.tasks.tolist(), universe.group_sizes
    (True, {'a': 3, 'b': 3})
    """
    from inspect_ai.dataset import MemoryDataset

    samples = list(dataset)
    if any(s.id is None for s in samples):
        raise InputError("every sample needs an id: the planned universe is the list of sample ids")
    ids = [str(s.id) for s in samples]
    if len(set(ids)) != len(ids):
        raise InputError("sample ids must be unique as text (e.g. 1 and '1' collide)")
    if universe is None:
        frame = pd.DataFrame({"task": ids})
        if group is not None:
            labels = [(s.metadata or {}).get(group) for s in samples]
            lacking = [i for i, g in zip(ids, labels, strict=True) if g is None]
            if lacking:
                raise InputError(f"samples lack metadata[{group!r}] (the coverage group): " + ", ".join(map(str, lacking[:5])))
            policy = policy if policy is not None else Policy()
            frame[policy.coverage.group_column] = [str(g) for g in labels]
        universe = order_universe(task_order(frame, policy))
    if universe.tasks is None:
        raise InputError("`universe` must list the planned tasks (sample ids) in planned order")
    planned = [str(t) for t in universe.tasks]
    if set(planned) != set(ids):
        missing, extra = sorted(set(planned) - set(ids)), sorted(set(ids) - set(planned))
        raise InputError(
            "the samples and the planned universe differ: "
            + (f"planned but not in the dataset: {', '.join(missing[:5])}; " if missing else "")
            + (f"in the dataset but not planned: {', '.join(extra[:5])}" if extra else "")
        )
    by_id = dict(zip(ids, samples, strict=True))
    name = getattr(dataset, "name", None)
    return MemoryDataset([by_id[t] for t in planned], name=name), universe
