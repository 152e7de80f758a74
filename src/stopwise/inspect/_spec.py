"""What a paired comparison is, given once: :class:`PairedSpec` (evaluation, systems, policy, universe, ...).

The four ways to build the Inspect managers (:func:`~stopwise.inspect.paired_early_stopping`,
:func:`~stopwise.inspect.paired_model_early_stopping`, :func:`~stopwise.inspect.paired_manager` and
:class:`~stopwise.inspect.PairedComparison`) take a ledger and one ``PairedSpec``, or, as before, the
evaluation id and the spec's fields as keywords (:meth:`PairedSpec.of` builds the spec from them).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stopwise.errors import InputError, PolicyError
from stopwise.records import Policy, TaskUniverse, load_policy

__all__ = ["PairedSpec"]


@dataclass(frozen=True)
class PairedSpec:
    """A paired comparison of two systems in a live Inspect evaluation (validated when built).

    ``policy`` may also be given as a policy file (read when the spec is built) and ``universe`` as
    a list of sample ids; the spec holds the :class:`~stopwise.records.Policy` and the
    :class:`~stopwise.records.TaskUniverse`.

    Raises
    ------
    InputError
        An empty evaluation id or system name, equal systems, a bad group, scorer, refresh or pace, or
        a universe that does not list its tasks.
    PolicyError
        A policy that cannot be read, or a cost or time budget (Inspect's calls carry neither).

    Examples
    --------
    >>> from stopwise.inspect import PairedSpec
    >>> spec = PairedSpec("demo", tested="agent-v2", baseline="agent-v1", universe=["q1", "q2"])
    >>> spec.policy.decision.boundary, spec.universe.tasks.tolist(), spec.pace
    ('fixed-budget', ['q1', 'q2'], 2)
    >>> PairedSpec("demo", tested="A", baseline="A")
    Traceback (most recent call last):
    ...
    stopwise.errors.InputError: `tested` and `baseline` must differ; both are 'A'
    """

    evaluation: str
    """The evaluation's id in the ledger (registered at the first ``start_task``)."""
    tested: str
    """The tested system's name in the outcome rows."""
    baseline: str
    """The baseline system's name in the outcome rows."""
    policy: Policy = field(default_factory=Policy)
    """The comparison policy, locked in the ledger at registration; its budget must be measured in tasks
    (``task_fraction`` or ``task_count``): the manager sees no cost or time. Default: ``Policy()``, the exact-wor one-look test on a uniform order."""
    universe: TaskUniverse | None = None
    """The planned task universe, listing its tasks (sample ids) in planned order; None: the sample ids of the
    first task to start, in the order Inspect runs them."""
    group: str | None = None
    """The sample metadata key holding each sample's coverage group (None: no groups)."""
    scorer: str | None = None
    """``NAME`` or ``NAME:KEY`` of the scorer whose value is the outcome (None: the first scorer)."""
    refresh: float = 1.0
    """Seconds between reads of the ledger's decision chain before a sample is scheduled: how long a process
    may schedule samples after another one decided."""
    pace: int | None = 2
    """The faster system waits while it has completed ``pace`` samples more than the other (in this process) or
    stored ``pace`` outcome events more (a partner in another process); None: no pacing."""

    partner_wait: float | None = 30.0
    """Seconds a system holds its next sample for a partner that is down before it stops (fail closed): a partner
    whose task failed (``eval_set`` retries a failed task at once: it goes on with the retry), a partner in another
    process that never started (held once ``pace`` samples ahead), or one that stored nothing for this long (at
    least 30 s) while this one waited for it. None: stop at once when the partner fails, and run alone when it never
    starts (the systems run one after the other)."""

    def __post_init__(self) -> None:
        for name, value in _paired_spec_iv(self).items():
            object.__setattr__(self, name, value)

    @property
    def scorer_name(self) -> str:
        """The scorer's name ("" for the first scorer)."""
        return (self.scorer or "").partition(":")[0]

    @property
    def scorer_key(self) -> str | None:
        """The key of a scorer whose value is a dict (``NAME:KEY``), else None."""
        return (self.scorer or "").partition(":")[2] or None

    @classmethod
    def of(cls, spec: PairedSpec | str, **fields: Any) -> PairedSpec:
        """``spec`` itself, or the spec of evaluation ``spec`` with ``fields`` (the keyword form of the constructors).

        Examples
        --------
        >>> from stopwise.inspect import PairedSpec
        >>> PairedSpec.of("demo", tested="A", baseline="B").tested
        'A'
        >>> PairedSpec.of("demo", tested="A", baseline="B", budget=3)
        Traceback (most recent call last):
        ...
        stopwise.errors.InputError: unknown argument `budget`; a paired comparison takes tested, baseline, policy, universe, group, scorer, refresh, pace, partner_wait
        """
        if isinstance(spec, PairedSpec):
            if fields:
                raise InputError(
                    f"give a PairedSpec or the evaluation id with keywords, not both; got a PairedSpec and {', '.join(fields)}"
                )
            return spec
        known = [f.name for f in dataclasses.fields(cls) if f.name != "evaluation"]
        unknown = [name for name in fields if name not in known]
        if unknown:
            raise InputError(f"unknown argument `{unknown[0]}`; a paired comparison takes {', '.join(known)}")
        missing = [name for name in ("tested", "baseline") if name not in fields]
        if missing:
            raise InputError(f"`{missing[0]}` is required: the name of the {missing[0]} system in the outcome rows")
        fields = {name: value for name, value in fields.items() if not (name == "policy" and value is None)}
        return cls(spec, **fields)


def _policy_iv(policy: object) -> Policy:
    if policy is None:
        return Policy()
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, str | os.PathLike):
        return load_policy(policy)
    raise PolicyError(f"`policy` must be a Policy, a policy file or None; got {type(policy).__name__}")


def _universe_iv(universe: object) -> TaskUniverse | None:
    """The planned universe as a TaskUniverse that lists its tasks (sample ids)."""
    if universe is None:
        return None
    if not isinstance(universe, TaskUniverse):
        if isinstance(universe, str) or not isinstance(universe, Sequence | np.ndarray):
            raise InputError(f"`universe` must be a TaskUniverse or a list of task ids; got {type(universe).__name__}")
        universe = TaskUniverse([str(t) for t in universe], source="universe")
    if universe.tasks is None:
        raise InputError(
            "`universe` must list the planned tasks (sample ids) in planned order; a universe built from counts "
            "cannot tell which sample is which"
        )
    return universe


def _paired_spec_iv(spec: PairedSpec) -> dict[str, Any]:
    """Check every field of ``spec``; the normalised policy and universe."""
    if not isinstance(spec.evaluation, str) or not spec.evaluation.strip():
        raise InputError(f"`evaluation` must be a non-empty id; got {spec.evaluation!r}")
    for name, value in (("tested", spec.tested), ("baseline", spec.baseline)):
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"`{name}` must be a non-empty system name; got {value!r}")
    if spec.tested == spec.baseline:
        raise InputError(f"`tested` and `baseline` must differ; both are {spec.tested!r}")
    if spec.group is not None and (not isinstance(spec.group, str) or not spec.group):
        raise InputError(f"`group` must name a sample metadata key; got {spec.group!r}")
    if spec.scorer is not None and (not isinstance(spec.scorer, str) or not spec.scorer.strip()):
        raise InputError(f"`scorer` must be NAME or NAME:KEY; got {spec.scorer!r}")
    refresh = spec.refresh
    if isinstance(refresh, bool) or not isinstance(refresh, int | float) or not 0 <= refresh < float("inf"):
        raise InputError(f"`refresh` must be a number of seconds >= 0; got {refresh!r}")
    pace = spec.pace
    if pace is not None and (isinstance(pace, bool) or not isinstance(pace, int) or pace < 1):
        raise InputError(f"`pace` must be a number of samples >= 1 or None; got {pace!r}")
    wait = spec.partner_wait
    if wait is not None and (isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < float("inf")):
        raise InputError(f"`partner_wait` must be a number of seconds >= 0 or None; got {wait!r}")
    policy = _policy_iv(spec.policy)
    if policy.budget.measure not in ("task_fraction", "task_count"):
        raise PolicyError(
            f"budget measure {policy.budget.measure!r} cannot be used live: Inspect's early-stopping "
            "calls carry scores but no cost or time; use task_fraction or task_count"
        )
    scorer = None if spec.scorer is None else spec.scorer.strip()
    return {"policy": policy, "universe": _universe_iv(spec.universe), "scorer": scorer, "refresh": float(refresh),
            "partner_wait": None if wait is None else float(wait)}
