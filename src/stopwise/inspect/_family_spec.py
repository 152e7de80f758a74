"""What a live family race is, given once: :class:`FamilySpec` (evaluation, k systems, policy, universe, ...)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from stopwise.errors import InputError, PolicyError
from stopwise.inspect._spec import _policy_iv, _universe_iv  # the paired spec's rules for policy and universe
from stopwise.records import Policy, TaskUniverse

__all__ = ["FamilySpec"]


@dataclass(frozen=True)
class FamilySpec:
    """A family of k systems raced in a live Inspect evaluation (validated when built).

    The policy's ``[family]`` section chooses the question (every ordered pair, candidates against a baseline, or
    the best system) and the control; each system stops scheduling samples once no claim the family asks for can
    change with its outcomes (the family record's ``needed``). ``policy`` may be a policy file, ``universe`` a list
    of sample ids.

    Raises
    ------
    InputError
        An empty evaluation id, fewer than 2 systems or a system named twice, the policy's baseline not among the
        systems, a bad scorer or refresh, or a universe that does not list its tasks.
    PolicyError
        A policy that cannot be read, or a cost or time budget (Inspect's calls carry neither).

    Examples
    --------
    >>> from stopwise.inspect import FamilySpec
    >>> spec = FamilySpec("race", systems=["C", "A", "B"], universe=["q1", "q2"])
    >>> spec.systems, spec.policy.family.kind, spec.universe.n_tasks
    (('A', 'B', 'C'), 'all-pairs', 2)
    >>> FamilySpec("race", systems=["A", "A"])
    Traceback (most recent call last):
    ...
    stopwise.errors.InputError: `systems` must name at least 2 different systems; got ['A', 'A']
    """

    evaluation: str
    """The evaluation's id in the ledger (registered as a family at the first ``start_task``)."""
    systems: tuple[str, ...]
    """The family's systems (their names in the outcome rows), sorted when the spec is built."""
    policy: Policy = field(default_factory=Policy)
    """The family policy (its ``[family]`` section and decision settings), locked in the ledger at registration;
    its budget must be counted in tasks. Default: ``Policy()`` (every ordered pair at FWER 5 %)."""
    universe: TaskUniverse | None = None
    """The planned task universe, listing its sample ids in planned order; None: the sample ids of the first task
    to start, in the order Inspect runs them."""
    scorer: str | None = None
    """``NAME`` or ``NAME:KEY`` of the scorer whose value is the outcome (None: the first scorer)."""
    refresh: float = 1.0
    """Seconds between family looks taken before a sample is scheduled (a look is also taken after each outcome
    this process appends): how long a system may schedule samples after another process's outcomes decided it."""
    pace: int | None = 2
    """A system waits while it has stored ``pace`` outcome events more than the slowest other system still needed
    and running (in any process, read from the ledger), so that no system runs far past the look that stops it;
    None: no pacing."""

    def __post_init__(self) -> None:
        for name, value in _family_spec_iv(self).items():
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
    def of(cls, spec: FamilySpec | str, **fields: Any) -> FamilySpec:
        """``spec`` itself, or the spec of evaluation ``spec`` with ``fields`` (the keyword form of the constructors)."""
        if isinstance(spec, FamilySpec):
            if fields:
                raise InputError(f"give a FamilySpec or the evaluation id with keywords, not both; got a FamilySpec and {', '.join(fields)}")
            return spec
        known = [f.name for f in dataclasses.fields(cls) if f.name != "evaluation"]
        unknown = [name for name in fields if name not in known]
        if unknown:
            raise InputError(f"unknown argument `{unknown[0]}`; a family race takes {', '.join(known)}")
        if "systems" not in fields:
            raise InputError("`systems` is required: the names of the family's systems in the outcome rows")
        fields = {name: value for name, value in fields.items() if not (name == "policy" and value is None)}
        return cls(spec, **fields)


def _family_spec_iv(spec: FamilySpec) -> dict[str, Any]:
    """Check every field of ``spec``; the normalised systems, policy, universe, scorer and refresh."""
    if not isinstance(spec.evaluation, str) or not spec.evaluation.strip():
        raise InputError(f"`evaluation` must be a non-empty id; got {spec.evaluation!r}")
    systems = spec.systems
    if isinstance(systems, str) or not isinstance(systems, Sequence):
        raise InputError(f"`systems` must be a list of system names; got {systems!r}")
    names = [s.strip() if isinstance(s, str) else s for s in systems]
    if not all(isinstance(s, str) and s and not s.startswith("[") for s in names):
        raise InputError(f"`systems` must be non-empty system names (not starting with '['); got {list(systems)!r}")
    if len(set(names)) < 2 or len(set(names)) != len(names):
        raise InputError(f"`systems` must name at least 2 different systems; got {list(systems)!r}")
    if spec.scorer is not None and (not isinstance(spec.scorer, str) or not spec.scorer.strip()):
        raise InputError(f"`scorer` must be NAME or NAME:KEY; got {spec.scorer!r}")
    refresh = spec.refresh
    if isinstance(refresh, bool) or not isinstance(refresh, int | float) or not 0 <= refresh < float("inf"):
        raise InputError(f"`refresh` must be a number of seconds >= 0; got {refresh!r}")
    pace = spec.pace
    if pace is not None and (isinstance(pace, bool) or not isinstance(pace, int) or pace < 1):
        raise InputError(f"`pace` must be a number of samples >= 1 or None; got {pace!r}")
    policy = _policy_iv(spec.policy)
    if policy.budget.measure not in ("task_fraction", "task_count"):
        raise PolicyError(
            f"budget measure {policy.budget.measure!r} cannot be used live: Inspect's early-stopping calls carry scores "
            "but no cost or time; use task_fraction or task_count"
        )
    family = policy.family
    if family.kind == "baseline" and family.baseline not in names:
        raise InputError(f"the policy's [family] baseline {family.baseline!r} is not among the systems {sorted(names)}")
    return {
        "systems": tuple(sorted(names)), "policy": policy, "universe": _universe_iv(spec.universe),
        "scorer": None if spec.scorer is None else spec.scorer.strip(), "refresh": float(refresh),
    }

