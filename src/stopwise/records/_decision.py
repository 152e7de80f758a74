"""The decision record: what one look at one comparison decided, and everything needed to audit it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stopwise.records._vocabulary import (
    ACTIONS,
    Action,
    Boundary,
    CoverageRule,
    ExclusionCode,
    WarningCode,
    exclusion_code,
    exclusion_reason,
)

__all__ = [
    "ACTIONS",
    "Action",
    "BudgetState",
    "CoverageState",
    "DecisionRecord",
    "DecisionWarning",
    "Exclusion",
    "FlagCount",
    "GroupCoverage",
    "TailProvenance",
    "UniverseState",
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GroupCoverage(_Record):
    """Coverage of one task group (stratum)."""

    group: str
    """The group label ("" when the rows give none)."""
    size: int
    """n_g: shared tasks of the group."""
    required: int
    """r_g: observed tasks the coverage rule requires before a final action."""
    seen: int
    """Observed tasks of the group."""


class CoverageState(_Record):
    """Task-group coverage of the observed tasks (paper section III-D)."""

    rule: CoverageRule
    """The policy's coverage rule; with ``none`` the counts are recorded but not enforced."""
    satisfied: bool
    """Every group has at least its required count observed (and the requirement is possible)."""
    possible: bool
    """The requirement can be met with the observed count: sum of r_g <= k."""
    groups: list[GroupCoverage]
    """Per-group sizes, required and seen counts, in group-label order."""
    missing_groups: list[str]
    """Groups whose seen count is below the required count."""


class BudgetState(_Record):
    """Where the comparison stands against its budget."""

    measure: str
    """What the budget measures (task_fraction, task_count, cost_usd, elapsed_s)."""
    used: float
    """Budget used so far, in the measure's unit."""
    limit: float
    """The policy's budget limit, in the measure's unit."""
    at_limit: bool
    """True when the budget is exhausted or every shared task has been observed."""


class Exclusion(_Record):
    """Rows of the two systems left out of the decision, with the reason.

    Made from a code (:meth:`from_code`) and matched by it (:attr:`code`); the record stores the
    reason text only, so its JSON is what it was before the codes.

    Examples
    --------
    >>> from stopwise.records import Exclusion
    >>> e = Exclusion.from_code("outside-universe", rows=3, tasks=2)
    >>> e.reason, e.code
    ('task outside the planned task universe', 'outside-universe')
    """

    reason: str
    """Why the rows were left out (the text of :data:`stopwise.records.EXCLUSION_REASONS`)."""
    rows: int
    """How many outcome rows."""
    tasks: int
    """How many distinct tasks they concern."""

    @classmethod
    def from_code(cls, code: ExclusionCode, *, rows: int, tasks: int, **fields: str) -> Exclusion:
        """The exclusion of ``code``, its reason text filled in with ``fields`` (``status``, ``flag``, ...)."""
        return cls(reason=exclusion_reason(code, **fields), rows=rows, tasks=tasks)

    @property
    def code(self) -> ExclusionCode | None:
        """The reason's code (:data:`stopwise.records.EXCLUSION_CODES`), read back from its text.

        None for a reason no code makes (an exclusion built by hand). Not stored in the record's JSON.
        """
        return exclusion_code(self.reason)


@dataclass(frozen=True)
class DecisionWarning:
    """One guard a decision warns about; the record stores its :attr:`message`.

    Examples
    --------
    >>> from stopwise.records import DecisionWarning
    >>> DecisionWarning("waiting", "2 observed task(s) wait").code
    'waiting'
    """

    code: WarningCode
    """Which guard (:data:`stopwise.records.WARNING_CODES`)."""
    message: str
    """The warning in words, as :attr:`DecisionRecord.warnings` lists it."""


class FlagCount(_Record):
    """Rows used by a decision that carry one flag the policy counts."""

    flag: str
    """The flag (``error``, ``limit:token``, ...)."""
    rows: int
    """How many outcome rows of the two systems used by the decision carry it."""
    tasks: int
    """How many distinct tasks they concern."""


class TailProvenance(_Record):
    """How the tails of a decision were computed, as fields (``tail_method`` says it in words)."""

    method: str
    """The method actually used: exact, exact-grid, bootstrap, normal, serfling or betting-wor."""
    resamples: int | None = None
    """B of a Monte-Carlo bootstrap (None otherwise)."""
    lattice: int = 0
    """L with every difference a multiple of 1/L (0 when there is none)."""
    fallback: bool = False
    """The policy's method was not used as asked."""
    why: str | None = None
    """Why it fell back (grouped units, differences off the lattice)."""


class UniverseState(_Record):
    """The task universe a decision was judged against."""

    source: Literal["tasks", "counts", "complete-record"]
    """``tasks``: planned tasks given (order output or tasks file); ``counts``: N and group sizes
    only; ``complete-record``: no universe given, the caller declared the record complete
    (``complete=True``) and every shared task is observed, so the shared tasks are the universe."""
    n_tasks: int
    """N, the number of planned tasks."""
    sha256: str
    """sha256 of the universe's canonical JSON (:meth:`stopwise.TaskUniverse.sha256`)."""
    ordered: bool
    """Whether the planned order (task names) is known."""
    outside_rows: int = 0
    """Outcome rows of the two systems on tasks outside the universe (excluded and counted)."""


class DecisionRecord(_Record):
    """One decision about one ordered comparison at one look.

    Aggregates (replay tables, figures) are computed from these records, never beside them.
    Serialise with ``record.model_dump_json()``.
    """

    schema_version: Literal[1, 2] = 2
    """Version of this record's schema (2 adds the universe, boundary, warnings and timestamp)."""
    tested: str
    """The tested system A."""
    baseline: str
    """The baseline (comparison) system B."""
    action: Action
    """promote, reject, continue or abstain."""
    reason: str
    """Which branch of the decision routine produced the action, in words."""
    threshold: float
    """delta, the required improvement."""
    tail_cutoff: float
    """a, the tail cutoff a final action needs."""
    n_shared: int
    """N: the comparison's task universe (the planned tasks when a universe is given; otherwise
    the tasks with rows of both systems)."""
    n_observed: int
    """|S_b|: shared tasks observed with usable outcomes for both systems."""
    delta_hat: float | None
    """The observed mean paired difference (None when nothing is observed)."""
    r_promote: float | None
    """P*(mean* <= delta): evidence against promotion (None when not computed)."""
    r_reject: float | None
    """P*(mean* > delta): evidence against rejection (None when not computed)."""
    tail_method: str
    """The method that produced the tails, e.g. ``exact (lattice 1/1)`` or ``bootstrap (B=200, seed=0)``."""
    tail: TailProvenance | None = None
    """The tails' provenance as fields (None when no tails were computed)."""
    budget: BudgetState
    coverage: CoverageState
    excluded: list[Exclusion] = Field(default_factory=list)
    """Rows of the two systems not used, by reason; nothing is dropped silently (match them by
    :attr:`Exclusion.code`, not by text)."""
    flagged: list[FlagCount] = Field(default_factory=list)
    """Rows used that carry a flag the policy counts (``[flags] count``); flags with no row are left out."""
    policy_sha256: str
    """sha256 of the policy's canonical JSON."""
    input_sha256: str
    """sha256 of the two systems' outcome rows in canonical form."""
    stopwise_version: str
    """The library version that wrote the record."""
    boundary: Boundary = "fixed-budget"
    """The policy's boundary that produced the tails and the action."""
    universe: UniverseState | None = None
    """The task universe used (None: none given and the record not declared complete)."""
    waiting: int = 0
    """Paired tasks observed beyond the longest observed prefix of the planned order (betting
    boundary only): they wait until the tasks before them are observed."""
    warnings: list[str] = Field(default_factory=list)
    """Guards: few observations for the tail method, one-signed differences early, and the like; the
    messages of the look's :class:`DecisionWarning` s (codes :data:`stopwise.records.WARNING_CODES`), in that order."""
    decided_at: datetime | None = None
    """UTC time of the decision. Not part of any digest; two records of the same look differ only here."""

    def digest(self) -> str:
        """sha256 of the record's canonical JSON without ``decided_at`` (equal for equal decisions).

        Examples
        --------
        >>> import stopwise
        >>> rows = stopwise.outcome_columns([{"system": s, "task": "t", "outcome": 1} for s in "AB"])
        >>> first, again = (stopwise.decide(rows, "A", "B", complete=True) for _ in range(2))
        >>> first.digest() == again.digest()
        True
        """
        text = self.model_dump_json(exclude={"decided_at"} | {k for k in ("flagged", "tail") if not getattr(self, k)})
        return hashlib.sha256(text.encode()).hexdigest()
