"""The decision record: what one look at one comparison decided, and everything needed to audit it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from stopwise._vocabulary import (
    ACTIONS,
    Action,
    Boundary,
    CoverageRule,
    Estimand,
    ExclusionCode,
    MissingTreatment,
    PredictedTreatment,
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
    "DifferenceInterval",
    "EstimandState",
    "Exclusion",
    "FlagCount",
    "GroupCoverage",
    "LedgerPosition",
    "MissingState",
    "PredictedState",
    "RemainingForecast",
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
    slack: float | None = None
    """The ``tolerant`` rule's slack s, in hypergeometric standard deviations (None for the other rules, and then
    left out of the JSON, so records of the other rules keep their bytes and digests)."""
    satisfied: bool
    """Every group has at least its required count observed (and the requirement is possible)."""
    possible: bool
    """The requirement can be met with the observed count: sum of r_g <= k."""
    groups: list[GroupCoverage]
    """Per-group sizes, required and seen counts, in group-label order."""
    missing_groups: list[str]
    """Groups whose seen count is below the required count, as far as the action waits on them. Under the betting
    boundary's top-up design the action waits first for the crossing, then for its top-up tasks: a crossed look lists
    the groups of the top-up tasks it waits for (its ``groups`` required at the size of the set the action rests on),
    and a look before the crossing lists none, though the observed prefix may be below its quota (``satisfied`` false):
    the evaluation runs the planned order, and the crossing names its top-up (issue 35)."""

    @property
    def deferred(self) -> bool:
        """Not satisfied, but no group is waited for yet: the top-up design before its boundary crosses.

        Examples
        --------
        >>> from stopwise.records import CoverageState
        >>> from stopwise.records import GroupCoverage
        >>> groups = [GroupCoverage(group="a", size=10, required=1, seen=0)]
        >>> CoverageState(rule="tolerant", satisfied=False, possible=True, groups=groups, missing_groups=[]).deferred
        True
        """
        return bool(self.groups) and not self.satisfied and not self.missing_groups

    @model_serializer(mode="wrap")
    def _without_slack(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """Leave ``slack`` out of the JSON while None (records of the rules without one serialise as before)."""
        data = handler(self)
        if isinstance(data, dict) and data.get("slack", 0) is None:
            del data["slack"]
        return data


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


class DifferenceInterval(_Record):
    """An interval for the mean paired difference over the planned tasks, matching the record's boundary.

    Each end is a one-sided level-``1 - a`` bound: the boundary's two one-sided tests at the tail cutoff a,
    inverted over the threshold. Promote at a threshold delta means delta lies below ``low`` (the
    promote test rejects ``mean <= delta``), reject means delta lies at or above ``high``. The two ends
    together cover the mean with probability at least ``level = 1 - 2a`` (0.90 at a = 0.05).
    """

    low: float
    """Lower bound on the mean paired difference (tested - baseline) over the planned tasks, in outcome units, in [-1, 1]."""
    high: float
    """Upper bound, in outcome units, in [-1, 1]."""
    level: float
    """Two-sided coverage, ``1 - 2a`` (each end a one-sided level ``1 - a`` bound)."""
    kind: Literal["anytime-valid", "one-look"]
    """``anytime-valid``: the betting confidence sequence, valid at every look (``betting-wor``);
    ``one-look``: valid at the planned look only (the fixed-budget rule)."""
    method: str
    """How it was computed, in words."""

    @model_validator(mode="after")
    def _no_negative_zero(self) -> DifferenceInterval:
        """An end of -0.0 is stored as 0.0 (issue 35: it printed as "+0.0" or "-0.0" and read as a sign)."""
        for name in ("low", "high"):
            if getattr(self, name) == 0.0:
                object.__setattr__(self, name, 0.0)
        return self


class EstimandState(_Record):
    """What a record's interval and action are about (issue 35): one estimand per claim.

    The boundary's test and its interval rest on one basis. ``planned-tasks``: the mean difference over these N
    planned tasks with these runs, the observed tasks a sample drawn without replacement from them (``exact-wor``,
    ``serfling``, ``betting-wor``, tail method ``none``); exact when every planned task is observed. ``task-distribution``:
    the mean difference over the benchmark's task distribution, the tasks a sample of it (the bootstrap and normal
    tails: ``exact``, ``bootstrap``, ``normal``); never exact, however many tasks are observed. Where tasks have
    several attempts, the rerun component says how far new runs would move the observed difference.
    """

    kind: Estimand
    """``planned-tasks`` (finite population: these tasks with these runs) or ``task-distribution`` (tasks as a sample)."""
    text: str
    """The estimand in words, as the claim sentence names it."""
    attempts: float
    """Mean usable attempts per judged task and system (1 when every task has one run)."""
    rerun_sd: float | None = None
    """Estimated SD of the mean difference of new runs with one attempt per task around the systems' expected
    difference on these tasks (within-task attempt variance m (1 - m) k / (k - 1) per task and system, pooled per
    system for tasks with one attempt); None when no judged task has two attempts of both systems. An estimate."""
    mean_sd: float | None = None
    """Estimated SD of this record's mean difference (attempts averaged) around the systems' expected difference on
    these tasks: the rerun component of the observed difference itself. None as :attr:`rerun_sd`. An estimate."""


class RemainingForecast(_Record):
    """How many more tasks a ``continue`` record is likely to need before a decision (a seeded predictive replay).

    Completions of the unobserved tasks are drawn from a Dirichlet posterior on the observed win/tie/loss
    (distinct difference) counts and the record's own boundary is run on each, look by look; see
    :mod:`stopwise.compare._forecast`.
    """

    median: float
    """Median remaining tasks to a decision (promote or reject) among the completions that decide."""
    low: float
    """10th percentile of the remaining tasks among the completions that decide."""
    high: float
    """90th percentile."""
    decided_share: float
    """Share of the simulated completions that decide before the budget limit (the rest abstain)."""
    n_simulations: int
    """Completions simulated; 0 when the count is exact: under the top-up design a crossed boundary waits only
    for its top-up tasks, and median = low = high is their number."""
    seed: int
    """Seed of the replay."""


class MissingState(_Record):
    """Planned tasks whose outcome is missing for a system (errored or unscored), and what the boundary did with them.

    A system's task is missing when it has a row flagged ``error`` or ``unscored`` and no usable outcome
    (:data:`stopwise._vocabulary.MISSING_FLAGS`); a task that a system has not run yet is not missing.
    Under ``worst-case`` the record's ``n_observed`` counts the real pairs only, while ``delta_hat``, ``waiting``,
    ``coverage`` and the budget used are those of the judged sequence with the missing differences at their lowest
    (at their highest for a reject); the interval takes its low end from the first and its high end from the second.
    """

    treatment: MissingTreatment
    """The policy's ``[decision] missing``: ``worst-case``, ``wait`` or ``exclude``."""
    tasks: list[str]
    """The missing tasks, in planned order."""
    tested: int
    """How many of them miss the tested system's outcome."""
    baseline: int
    """How many miss the baseline's outcome (a task missing both counts in both)."""
    judged: int = 0
    """How many of them the boundary read: counted at their worst case (``worst-case``) or skipped within the
    judged prefix (``exclude``); 0 under ``wait``."""



class PredictedState(_Record):
    """How rows whose outcome is a prediction entered the decision (issue 22, ``[decision] predicted``)."""

    treatment: PredictedTreatment
    """``exclude`` (only the policy's statuses count) or ``prediction-powered``."""
    audit_fraction: float
    """rho of the policy's audit draw (``[early] audit_fraction``)."""
    predicted_rows: int
    """Rows of the two systems with ``status = "predicted"`` (runs halted early, outcome predicted)."""
    audited_rows: int
    """Rows flagged ``audited`` (runs drawn for audit, run to their end)."""
    corrected_rows: int
    """Audited rows the monitor would have halted (flag ``would-halt:0`` / ``would-halt:1``): under
    ``prediction-powered`` each corrects its prediction f to f + (Y - f) / rho."""
    used_rows: int
    """Predicted and corrected rows that entered the decision (on its observed tasks)."""
    note: str
    """What the treatment guarantees, in words."""


class LedgerPosition(_Record):
    """Where in a ledger a decision was taken (set by :meth:`stopwise.ledger.Ledger.decide`, hashed into its chain).

    ``stopwise ledger export --upto-decision K`` writes exactly the events the decision saw, so that
    :func:`stopwise.decide` on them gives the same record; ``ledger verify`` checks every field against
    the stored events and the chain.
    """

    outcome_seq: int
    """The event sequence number the decision was taken at: it saw exactly the evaluation's events with
    sequence <= this (sequence numbers increase but may skip, e.g. a number taken by a refused duplicate)."""
    n_events: int
    """How many of the evaluation's events that is."""
    decision: int | None = None
    """Chain sequence of the evaluation's first promote or reject record (this one or an earlier one); None
    while nothing is decided."""
    after_decision: int = 0
    """Events among ``n_events`` stored after that first final decision (e.g. samples that were in flight
    when it was taken); they are marked ``after_decision`` in a full ``ledger export``."""


_OMITTED_WHEN_UNSET = ("predicted", "ledger", "missing", "top_up", "estimand")
"""Optional record sections left out of the JSON while None (records without them serialise as before 0.1)."""


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
    interval: DifferenceInterval | None = None
    """An interval for the mean paired difference matching the boundary (None when nothing is observed or
    the tails are not computed). Derived from the record's data; not part of :meth:`digest`."""
    claim: str = ""
    """One sentence saying what the record supports ("A beats B by more than ..."). Not part of :meth:`digest`."""
    forecast: RemainingForecast | None = None
    """For ``continue``: the predictive distribution of the remaining tasks to a decision (None otherwise, or
    when turned off). Not part of :meth:`digest`."""
    top_up: list[str] | None = None
    """The top-up design, crossed but short of coverage (``continue``): the top-up tasks the action waits for, in
    planned order. Only they are needed before the action (a live evaluation may skip every other task); None
    otherwise (left out of the JSON and the digest)."""
    missing: MissingState | None = None
    """Planned tasks whose outcome is missing for a system (errored or unscored) and their treatment (betting-wor
    only; None when there is none). Left out of the JSON and the digest when None, so records without missing
    tasks keep their bytes and digests."""
    predicted: PredictedState | None = None
    """How predicted outcomes (runs halted early) entered the decision; None when the rows hold no predicted or
    audited row and the policy keeps the default ``exclude`` (then the key is left out of the JSON, so records and
    digests of evaluations without halting are unchanged)."""
    estimand: EstimandState | None = None
    """What the interval and action are about (issue 35; None in records written before it, and then left out of the
    JSON). Derived from the policy and the rows; not part of :meth:`digest`."""
    ledger: LedgerPosition | None = None
    """The ledger position the decision was taken at, for records a ledger took (None, and left out of the
    JSON, otherwise). Provenance, not part of :meth:`digest`: ``decide`` on the exported events gives the same digest."""

    @model_serializer(mode="wrap")
    def _without_unset_optional(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """Leave the optional sections added after 0.1 out of the JSON when unset (records serialise as before)."""
        data = handler(self)
        if isinstance(data, dict):
            for key in _OMITTED_WHEN_UNSET:
                if data.get(key, 0) is None:
                    del data[key]
        return data

    @model_validator(mode="before")
    @classmethod
    def _planned_alias(cls, data: object) -> object:
        """Accept ``n_planned`` for ``n_shared`` when loading (the name that says what it holds)."""
        if isinstance(data, dict) and "n_planned" in data:
            data = dict(data)
            planned = data.pop("n_planned")
            data.setdefault("n_shared", planned)
        return data

    @property
    def n_planned(self) -> int:
        """N, the planned tasks the claim is about: the documented name of :attr:`n_shared` (which stays for one release)."""
        return self.n_shared

    @property
    def p_promote(self) -> float | None:
        """Under ``betting-wor``: the anytime-valid p-value of promotion (the name of :attr:`r_promote` there); None otherwise."""
        return self.r_promote if self.boundary == "betting-wor" else None

    @property
    def p_reject(self) -> float | None:
        """Under ``betting-wor``: the anytime-valid p-value of rejection (the name of :attr:`r_reject` there); None otherwise."""
        return self.r_reject if self.boundary == "betting-wor" else None

    def digest(self) -> str:
        """sha256 of the record's canonical JSON without ``decided_at`` (equal for equal decisions).

        The ledger position ``ledger`` is left out (the same decision taken again from an export has none),
        and so are the derived summaries ``interval``, ``claim``, ``estimand`` and ``forecast``: they are functions
        of the fields the digest covers (and the forecast of a seed), so a decision keeps its digest
        when their wording or the forecast's simulation count changes, and digests written before them still match.

        Examples
        --------
        >>> import stopwise
        >>> rows = stopwise.outcome_columns([{"system": s, "task": "t", "outcome": 1} for s in "AB"])
        >>> first, again = (stopwise.decide(rows, "A", "B", complete=True) for _ in range(2))
        >>> first.digest() == again.digest()
        True
        """
        text = self.model_dump_json(exclude={"decided_at", "interval", "claim", "forecast", "ledger", "estimand"} | {k for k in ("flagged", "tail") if not getattr(self, k)})
        return hashlib.sha256(text.encode()).hexdigest()
