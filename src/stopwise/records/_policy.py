"""The comparison policy: every choice fixed before a comparison starts.

A policy is a TOML document (see :data:`DEFAULT_POLICY_TOML`, written by ``stopwise policy init``).
Its canonical JSON (sorted keys, no spaces, defaults filled in) is hashed with sha256; the
digest is stamped on every decision record so a record can be traced to the exact policy.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, Strict, field_validator, model_validator

from stopwise._canonical import canonical_json
from stopwise._files import read_text
from stopwise._limits import check_structure
from stopwise._vocabulary import (
    STATUSES,
    AuditCoupling,
    AuditRule,
    BettingDesign,
    Boundary,
    CoverageRule,
    FamilyControl,
    FamilyKind,
    MissingTreatment,
    PastLimit,
    PredictedCentre,
    PredictedTreatment,
    Status,
    TailMethod,
)
from stopwise.errors import PolicyError

__all__ = [
    "DEFAULT_POLICY_TOML",
    "PAPER_POLICY_TOML",
    "BettingPolicy",
    "BudgetPolicy",
    "CoveragePolicy",
    "DecisionPolicy",
    "EarlyPolicy",
    "FamilyPolicy",
    "FlagPolicy",
    "OrderPolicy",
    "Policy",
    "Targets",
    "load_policy",
    "parse_policy",
]

MAX_BOOTSTRAP_RESAMPLES = 100_000
"""Largest ``bootstrap_resamples`` a policy may ask for (bounds the time and memory of one decision)."""

OrderKind = Literal["uniform", "coverage-aware", "cost-first", "neyman"]
BudgetMeasure = Literal["task_fraction", "task_count", "cost_usd", "elapsed_s"]

# Strict scalars: a TOML ``true`` is not a seed and the text "0.05" is not a number. Integers are
# accepted where a float is asked for; NaN and infinities are refused (allow_inf_nan=False below).
StrictInt = Annotated[int, Strict()]
StrictFloat = Annotated[float, Strict()]
StrictStr = Annotated[str, Strict()]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


COVERAGE_DEFAULT_SLACK = 2.0
"""s of the ``tolerant`` coverage rule (:data:`stopwise.compare._coverage.COVERAGE_SLACK`)."""


class CoveragePolicy(_Section):
    """How task-group coverage is required before a final action."""

    rule: CoverageRule = "proportional"
    """``proportional``: r_g = max{1, min{n_g, floor(k n_g / N)}} tasks of every group (paper eq. 4);
    ``tolerant``: the same quota less ``slack`` hypergeometric standard deviations of the group's count,
    at least one task per group (a uniformly random prefix meets it up to sampling noise);
    ``every-group``: one task of every group; ``none``: final actions do not wait for coverage (coverage is
    still recorded). Default: ``tolerant`` with ``[decision] boundary = "betting-wor"`` (issue 33) or a
    ``uniform`` order (the default), ``proportional`` (the paper's) with the fixed-budget rule on another order
    (the paper's ``coverage-aware``); a policy that names the rule keeps it."""
    slack: StrictFloat = Field(default=COVERAGE_DEFAULT_SLACK, ge=0.0, le=10.0)
    """s of the ``tolerant`` rule, in hypergeometric standard deviations (0 is the proportional rule). Left out
    of the canonical JSON under the other rules, where it plays no part."""
    group_column: Literal["group", "source", "unit"] = "group"
    """Outcome column that holds the stratum of each task (a text column of the outcome contract)."""


class OrderPolicy(_Section):
    """The order in which tasks are run (fixed before the run)."""

    kind: OrderKind = "uniform"
    """``uniform`` random (the default since issue 35: the sample the ``exact-wor`` test assumes), ``coverage-aware``
    (every prefix meets the coverage rule when possible; the paper's, :meth:`Policy.paper`), ``cost-first`` (cheapest
    tested-system tasks first) or ``neyman`` (group shares by n_g sigma_g)."""
    seed: StrictInt = Field(default=0, ge=0)
    """Seed of the random order."""


class BudgetPolicy(_Section):
    """What the budget measures and where it ends."""

    measure: BudgetMeasure = "task_fraction"
    """``task_fraction`` of the shared tasks, ``task_count``, ``cost_usd`` or ``elapsed_s``."""
    limit: StrictFloat = Field(default=1.0, gt=0)
    """The budget limit in the measure's unit (a fraction in (0, 1] for ``task_fraction``, an
    integer >= 1 for ``task_count``)."""
    scope: Literal["tested", "pair"] = "tested"
    """For cost and time: count the tested system's spending only, or both systems'."""

    @field_validator("limit")
    @classmethod
    def _fraction_at_most_one(cls, value: float, info: pydantic.ValidationInfo) -> float:
        measure = info.data.get("measure", "task_fraction")
        if measure == "task_fraction" and value > 1.0:
            raise ValueError("a task_fraction limit must be in (0, 1]")
        if measure == "task_count" and (value < 1 or value != int(value)):
            raise ValueError("a task_count limit must be a whole number of tasks >= 1")
        return value


class Targets(_Section):
    """Sufficiency targets of a budget (paper eqs. 7-10)."""

    alpha: StrictFloat = Field(default=0.05, ge=0, le=1)
    """Decision-error target: FPR_cond and FRR_cond must not exceed it."""
    gamma: StrictFloat = Field(default=0.05, ge=0, le=1)
    """Coverage-failure target: final actions before coverage holds, at most this share."""
    eta: StrictFloat = Field(default=0.25, ge=0, le=1)
    """Unresolved target: continue plus abstain, at most this share."""


class DecisionPolicy(_Section):
    """Which boundary turns the outcomes seen so far into a final action."""

    boundary: Boundary = "fixed-budget"
    """``fixed-budget``: the paper's primary rule, valid for one look at the budget limit fixed in
    advance (before the limit it continues). ``betting-wor``: an anytime-valid paired betting
    confidence sequence over the N planned tasks sampled without replacement (Waudby-Smith &
    Ramdas), valid at every look; it needs a task universe with its planned order."""
    past_limit: PastLimit = "at-limit"
    """A look whose rows reach past the budget limit (more tasks, cost or time than the limit):
    ``at-limit`` decides on the tasks up to the limit in the planned order -- the look the policy
    planned -- excludes the rest (exclusion ``beyond-limit``) and warns (``past-limit``); it needs
    the planned order (a tasks file) and refuses the look without one. ``refuse`` always refuses
    it. Either way no final action is taken silently past the limit. Left out of the canonical
    JSON while it is the default, so earlier policies keep their sha256."""
    predicted: PredictedTreatment = "exclude"
    """How rows whose outcome is a prediction (``status = "predicted"``: runs halted early by
    :class:`stopwise.inspect.LiveHalting` or ``stopwise early``) enter the decision. ``exclude``: as
    before, only the policy's ``statuses`` are used (with ``"predicted"`` listed there, predictions count as
    if they were true outcomes: no account of the halting error). ``prediction-powered``: every halted
    run counts with its prediction plus the audit correction (the audited runs of ``[early]
    audit_fraction``), valid whatever the halting model's accuracy (:mod:`stopwise.compare._predicted`;
    betting-wor boundary only). Left out of the canonical JSON while it is the default."""
    predicted_centre: PredictedCentre = "audited-bound"
    """Under ``predicted = "prediction-powered"``, how the boundary's centre takes the past predicted rows:
    ``worst-case`` (each unaudited prediction at its adverse extreme; sure) or ``audited-bound`` (at most the
    audits' time-uniform upper bound of them wrong, holding with probability 1 - a/5; the betting test then
    runs at 4a/5, so each action's error stays at most a: :mod:`stopwise.compare._audit_bound`). The default
    (chosen on the whole-evaluation replay, ``docs/joint-replay.md``). Left out of the canonical JSON under
    ``predicted = "exclude"`` (where it plays no part) and at ``worst-case`` (the centre before this choice
    existed, so a policy that names it keeps its digest); a prediction-powered policy without it now
    reads ``audited-bound`` and its digest says so."""
    missing: MissingTreatment = "worst-case"
    """A planned task whose outcome is missing for one or both systems (a row flagged ``error`` or
    ``unscored`` and no usable outcome: an errored or unscored sample), under ``betting-wor``:
    ``worst-case`` counts it in the planned order at its worst case for each test (the lowest
    difference the pair can take for the promote test, the highest for the reject test), valid
    whatever caused the error, so a run decides despite a few persistent errors; ``wait`` stops the
    observed prefix at it until a retry brings its outcome (valid; a persistent error freezes the
    decision); ``exclude`` leaves it out of the planned universe, the exclusion counted (valid only
    when errors are independent of the outcomes). The record lists the missing tasks
    (:mod:`stopwise.compare._missing`). The fixed-budget rule judges the observed tasks only, as
    before. Left out of the canonical JSON while it is the default, so earlier policies keep their sha256."""


# -- the betting boundary's live design and order check (issue 21) ------------------------------------
OrderCheck = Literal["refuse", "warn"]


class BettingPolicy(_Section):
    """How the ``betting-wor`` boundary meets the coverage rule, and how it checks the planned order.

    Left out of the canonical JSON while it is the default, so policies written before it keep their sha256.
    """

    design: BettingDesign = "top-up"
    """With the coverage rule in force: ``top-up`` runs a uniformly random permutation pi of the planned
    tasks, tests with the pooled process on pi's observed prefix and, once it crosses, runs the fewest
    further tasks that bring the observed set to coverage before the action (``stopwise order`` writes pi);
    ``stratified`` (the coverage-aware order and the per-group process) is retired (issue 33): ``decide`` and
    ``stopwise order`` refuse it (the value still parses, so policies that name it keep loading and say why).
    Without the coverage rule the design does not apply."""
    order_check: OrderCheck = "refuse"
    """A planned order that is not a seeded uniformly random permutation (``cost-first``, ``neyman``, an edited or
    hand-written tasks file) is refused. ``warn`` used to decide on it with the stratified process and a warning;
    that process is retired (issue 33), so ``warn`` refuses too (only a universe built in Python without a stamp
    is decided, with a warning, whatever this says)."""


class EarlyPolicy(_Section):
    """Live within-task halting: the pre-registered audit draw (issue 22).

    Left out of the canonical JSON while it is the default, so policies written before it keep their sha256.
    """

    audit_fraction: StrictFloat = Field(default=0.0, ge=0.0, le=1.0)
    """rho: the share of runs drawn for audit. An audited run is never halted (its true outcome is
    observed) and the monitor records the prediction it would have made; run (system, task, attempt) is
    audited iff :func:`stopwise.records.audit_draw` of ``audit_seed`` and the run is below rho."""
    audit_seed: StrictInt = Field(default=0, ge=0)
    """Seed of the audit draw (fix it before the evaluation starts)."""
    audit_rule: AuditRule = "uniform"
    """``uniform``: every halted run audited with probability rho. ``active`` (issue 34): a pre-registered function of
    the prediction and the halting model's confidence (:class:`stopwise.compare._tuned.ActiveAudits`, mean rho,
    predictions favouring the tested system audited at about ``audit_favour`` rho); each halted run's row records
    its probability (flag ``audit-p:<pi>``). Needs ``[decision] predicted = "prediction-powered-tuned"``."""
    audit_favour: StrictFloat = Field(default=1.5, ge=1.0, lt=2.0)
    """Under ``active``: the multiplier of rho for predictions favouring the tested system (the others get 2 - it)."""
    audit_coupling: AuditCoupling = "independent"
    """``independent``: each run its own audit uniform. ``antithetic`` (issue 34): one uniform w per task and attempt,
    the tested system's run audited iff w < pi and every other's iff 1 - w < pi (:func:`stopwise.records.audit_draw`),
    which narrows the tuned boundary's range (:mod:`stopwise.compare._tuned`). Needs ``[decision] predicted =
    "prediction-powered-tuned"``. Left out of the canonical JSON at ``independent``."""
    halt_error_bound: StrictFloat = Field(default=0.0, ge=0.0, lt=0.5)
    """eps: the wrong-halt rate the halting model is certified for on its calibration runs (``stopwise early train
    --max-halt-error``). Read only by ``[decision] predicted = "bounded"``, which widens the margin by 2 eps and is
    valid only on the calibration distribution. Left out of the canonical JSON at 0."""


class FamilyPolicy(_Section):
    """A family of systems decided together (issue 32): which claims it makes and how their errors share one level.

    Read by :func:`stopwise.compare.decide_family` and ``stopwise leaderboard``; a single-pair decision ignores it.
    The family's level is the policy's ``tail_cutoff`` a and its threshold the policy's delta. Left out of the
    canonical JSON while it is the default, so policies written before it keep their sha256.
    """

    kind: FamilyKind = "all-pairs"
    """``all-pairs``: every ordered pair (A, B) of the systems, "A beats B by more than delta" (a leaderboard);
    ``baseline``: each candidate against the system named by ``baseline`` ("beats it" or "does not");
    ``best``: which system beats every other (a family-wise statement: ``control = "fdr"`` is refused)."""
    baseline: StrictStr = ""
    """The system every candidate is compared with under ``kind = "baseline"`` (required there, refused otherwise)."""
    control: FamilyControl = "fwer"
    """``fwer``: the probability of any false claim in the family is at most a, at every look (closed testing of the
    pairs' e-processes, at least as strong as Bonferroni on Ville's bound); ``fdr``: the expected share of false
    claims among the claims is at most a (e-BH on the e-processes, each stopped when it first enters the e-BH set,
    so a claim is never withdrawn); ``none``: each pair at a on its own, the family uncontrolled (today's per-pair
    guarantee, printed as such)."""
    publication: StrictFloat = Field(default=1.0, gt=0.0, le=1.0)
    """Under ``control = "fdr"``, the publication look: the share of the planned tasks after which the family's e-BH
    set is final (no claim is added later). Before it the set grows look by look and is valid at whichever look the
    evaluation stops by a rule that uses only the outcomes seen. Under the fixed-budget boundary the one look is the
    budget limit and this setting is not used."""
    equivalence: StrictFloat = Field(default=0.0, ge=0.0, lt=1.0)
    """delta_eq > 0: also test, for each pair, that the systems are equivalent within +/- delta_eq (two one-sided
    tests, each at the family's control); 0: no equivalence claims. "Equivalent" is a claim of its own, never
    the same as "not yet separated"."""

    @model_validator(mode="after")
    def _baseline_matches_kind(self) -> FamilyPolicy:
        if self.kind == "baseline" and not self.baseline:
            raise ValueError('kind = "baseline" needs `baseline`, the system every candidate is compared with')
        if self.kind != "baseline" and self.baseline:
            raise ValueError(f'`baseline` is used only with kind = "baseline"; the family kind is {self.kind!r}')
        if self.kind == "best" and self.control == "fdr":
            raise ValueError('"A is best" is a family-wise statement: kind = "best" needs control = "fwer" (or "none", uncontrolled)')
        return self


FlagToken = Annotated[str, Strict(), Field(pattern=r"^[^\s;]+$")]


class FlagPolicy(_Section):
    """What a decision does with rows by their ``flags`` (``error``, ``empty_patch``, ``limit:<type>``)."""

    exclude: tuple[FlagToken, ...] = ()
    """Rows carrying any of these flags are left out of the decision and counted in its
    exclusions (reason ``flag <f> (policy excludes it)``)."""
    count: tuple[FlagToken, ...] = ("error",)
    """Rows used by the decision that carry these flags are counted in the record's ``flagged``
    (default ``error``: a harness error scored 0 never enters a decision unseen)."""

    @field_validator("exclude", "count")
    @classmethod
    def _sorted(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted(set(value)))


PAPER_FIELDS: dict[str, Any] = {"tail_method": "exact", "order": {"kind": "coverage-aware"}}
"""Where the paper's primary policy (:meth:`Policy.paper`, :data:`PAPER_POLICY_TOML`) differs from ``Policy()``."""


class Policy(_Section):
    """A comparison policy chosen in advance (ParEvalLayer section III).

    ``Policy()`` is the policy ``stopwise policy init`` writes (:data:`DEFAULT_POLICY_TOML`): the paper's rule with the
    ``exact-wor`` one-look test on a ``uniform`` order, which keeps level a at every n, and the ``tolerant`` coverage
    rule, which a uniformly random prefix meets up to sampling noise (issue 35). The paper's primary
    policy as published (the ``exact`` bootstrap tail on a ``coverage-aware`` order, ``policy init --preset paper``) is
    :meth:`Policy.paper`, for reproduction.

    Examples
    --------
    >>> from stopwise import Policy
    >>> p = Policy(threshold=0.05)
    >>> p.tail_cutoff, p.tail_method, p.order.kind, p.coverage.rule, len(p.sha256())
    (0.05, 'exact-wor', 'uniform', 'tolerant', 64)
    >>> Policy.paper(threshold=0.05).tail_method, Policy.paper().order.kind, Policy.paper().coverage.rule
    ('exact', 'coverage-aware', 'proportional')
    """

    version: Literal[1] = 1
    """Policy schema version."""
    threshold: StrictFloat = Field(default=0.0, ge=-1.0, lt=1.0)
    """Improvement threshold delta: promote means the tested system beats the baseline by more than this."""
    tail_cutoff: StrictFloat = Field(default=0.05, gt=0.0, lt=1.0)
    """Bootstrap tail cutoff a: a final action needs its tail probability at or below it."""
    tail_method: TailMethod = "exact-wor"
    """The one-look test (default ``exact-wor`` since issue 35; the paper's is ``exact``). ``exact`` bootstrap (B -> infinity, Monte-Carlo fallback off the lattice), Monte-Carlo
    ``bootstrap``, paired ``normal`` test, ``serfling`` finite-population bound, ``exact-wor`` (the
    exact one-look test for 0/1 outcomes sampled without replacement from the N planned tasks:
    :mod:`stopwise.compare._wor_exact`), or ``none`` (forced: decide by the observed margin alone)."""
    bootstrap_resamples: StrictInt = Field(default=200, ge=1, le=MAX_BOOTSTRAP_RESAMPLES)
    """B, the number of Monte-Carlo resamples (the paper uses 200; at most 100,000)."""
    seed: StrictInt = Field(default=0, ge=0)
    """Seed of every random choice of a decision (Monte-Carlo resampling)."""
    statuses: tuple[Status, ...] = ("final",)
    """Outcome statuses a decision may use; rows of other statuses are excluded and counted."""
    coverage: CoveragePolicy = CoveragePolicy()
    order: OrderPolicy = OrderPolicy()
    budget: BudgetPolicy = BudgetPolicy()
    targets: Targets = Targets()
    flags: FlagPolicy = FlagPolicy()
    """Rows excluded or counted by flag. Left out of the canonical JSON while it is the default,
    so policies written before it keep their sha256."""
    decision: DecisionPolicy = DecisionPolicy()
    """The boundary (added with the task universe; a policy without ``[decision]`` gets the
    fixed-budget rule, so old policy files stay valid, but the canonical JSON of every policy now
    holds ``decision`` and its sha256 differs from the one stamped by earlier versions)."""
    betting: BettingPolicy = BettingPolicy()
    """The betting boundary's live design and order check; left out of the canonical JSON at its default."""
    early: EarlyPolicy = EarlyPolicy()
    """Live halting's audit draw; left out of the canonical JSON at its default."""
    family: FamilyPolicy = FamilyPolicy()
    """How a family of systems is decided together (``decide_family``, ``stopwise leaderboard``); left out of the
    canonical JSON at its default."""

    @model_validator(mode="before")
    @classmethod
    def _coverage_default(cls, data: object) -> object:
        """An unnamed coverage rule is ``tolerant`` on a uniform order or under the betting boundary, else ``proportional``.

        A uniformly random prefix rarely meets the proportional quota exactly (issues 33, 35); the paper's
        fixed-budget rule on its coverage-aware order keeps the paper's rule.
        """
        if not isinstance(data, dict):
            return data
        decision, order = data.get("decision"), data.get("order")
        boundary = decision.get("boundary") if isinstance(decision, dict) else getattr(decision, "boundary", None)
        kind = order.get("kind", "uniform") if isinstance(order, dict) else getattr(order, "kind", "uniform")
        if boundary != "betting-wor" and kind != "uniform":
            return data
        coverage = data.get("coverage")
        if coverage is None:
            return {**data, "coverage": {"rule": "tolerant"}}
        if isinstance(coverage, dict) and "rule" not in coverage:
            return {**data, "coverage": {**coverage, "rule": "tolerant"}}
        if isinstance(coverage, CoveragePolicy) and "rule" not in coverage.model_fields_set:
            return {**data, "coverage": {**coverage.model_dump(exclude_unset=True), "rule": "tolerant"}}
        return data

    @classmethod
    def paper(cls, **fields: Any) -> Policy:
        """The paper's primary policy (ParEvalLayer; ``stopwise policy init --preset paper``), ``fields`` overriding it.

        The paper's policy differs from ``Policy()`` in its one-look test and order only: the ``exact`` bootstrap tail
        (the tasks as a sample of the task distribution; with fewer than 10 discordant tasks it does not keep level a)
        on a ``coverage-aware`` order. ``fields`` are validated as in ``Policy(**fields)``; an ``order`` given without
        a ``kind`` keeps the paper's.

        Parameters
        ----------
        **fields
            Policy fields (sections as dicts or section models) to set instead of the paper's.

        Returns
        -------
        Policy
            Equal to ``parse_policy(PAPER_POLICY_TOML)`` when no field is given.

        Examples
        --------
        >>> from stopwise import Policy
        >>> p = Policy.paper(threshold=0.05, order={"seed": 3})
        >>> p.tail_method, p.order.kind, p.order.seed, p.threshold
        ('exact', 'coverage-aware', 3, 0.05)
        """
        order = fields.get("order")
        if isinstance(order, OrderPolicy):
            order = order.model_dump(exclude_unset=True)
        order = {**PAPER_FIELDS["order"], **(order if isinstance(order, dict) else {})}
        return cls.model_validate({**PAPER_FIELDS, **fields, "order": order})

    @field_validator("statuses")
    @classmethod
    def _statuses_nonempty(cls, value: tuple[Status, ...]) -> tuple[Status, ...]:
        if not value:
            raise ValueError("must list at least one of " + ", ".join(STATUSES))
        return tuple(sorted(set(value), key=STATUSES.index))

    def canonical_json(self) -> str:
        """The policy as canonical JSON: sorted keys, no whitespace, every default filled in."""
        data = self.model_dump(mode="json")
        if self.coverage.rule != "tolerant":  # issue 33: the slack plays no part, and old policies keep their digests
            del data["coverage"]["slack"]
        if self.flags == FlagPolicy():
            del data["flags"]
        if self.betting == BettingPolicy():
            del data["betting"]
        if self.decision.past_limit == "at-limit":  # added with issue 21: the default keeps old digests
            del data["decision"]["past_limit"]
        if self.decision.predicted == "exclude":  # issue 22, as above
            del data["decision"]["predicted"]
        if self.decision.predicted == "exclude" or self.decision.predicted_centre == "worst-case":  # as above
            del data["decision"]["predicted_centre"]
        if self.early == EarlyPolicy():
            del data["early"]
        else:  # added with issue 34 (antithetic audits, the bounded treatment): the defaults keep old digests
            if self.early.halt_error_bound == 0.0:
                del data["early"]["halt_error_bound"]
            if self.early.audit_coupling == "independent":
                del data["early"]["audit_coupling"]
        if self.family == FamilyPolicy():  # issue 32: the default keeps old digests
            del data["family"]
        if self.decision.missing == "worst-case":  # added with issue 20: the default keeps old digests
            del data["decision"]["missing"]
        return canonical_json(data)

    def sha256(self) -> str:
        """sha256 hex digest of :meth:`canonical_json`; stamped on every decision record."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()


PAPER_POLICY_TOML = """\
# stopwise comparison policy: fix every choice before the run starts.
# Every decision record carries the sha256 of this policy's canonical JSON.
# Attempts (repeated runs, Inspect epochs: attempt = epoch - 1) are averaged per (system, task) before pairing;
# a live Inspect manager looks as soon as both systems have one attempt of a task and does not wait for the
# other attempts, which enter the later looks (docs/inspect.md, "Epochs").
version = 1

# delta: promote means "the tested system beats the baseline by MORE than this"
# (0.0 asks only whether it scores higher; 0.05 asks for 5 percentage points).
threshold = 0.0

# a: a final action needs its bootstrap tail at or below this cutoff.
tail_cutoff = 0.05

# exact     - the bootstrap's B -> infinity limit, computed exactly for 0/1 outcomes and
#             averages of k attempts (Monte-Carlo fallback for other outcomes; the record says so)
# bootstrap - Monte-Carlo bootstrap with bootstrap_resamples draws, seeded by seed
# normal    - paired normal test;  serfling - Serfling finite-population bound
# exact-wor - exact one-look test for 0/1 outcomes under sampling without replacement of the N
#             planned tasks (level a at any n; Serfling bound for averages of several attempts)
# none      - forced: decide by the observed margin alone (a comparison policy, not for reports)
tail_method = "exact"
bootstrap_resamples = 200
seed = 0

# Outcome statuses a decision may use; other rows are excluded and counted in the record.
statuses = ["final"]

[coverage]
# proportional: before a final action, every task group g needs
#   r_g = max(1, min(n_g, floor(k * n_g / N))) observed tasks (k observed of N shared).
# tolerant:     the same quota less `slack` hypergeometric standard deviations of the group's count in a
#               random k-subset, at least one task per group (a random prefix meets it up to sampling noise)
# every-group:  one observed task of every group
# none:         do not wait for coverage (coverage is still recorded).
# Left unset, the rule is "tolerant" with boundary = "betting-wor" or a uniform order, and "proportional"
# (the paper's) with the fixed-budget rule on another order; uncomment to choose one.
# rule = "tolerant"
# slack = 2.0
group_column = "group"

[order]
# uniform | coverage-aware | cost-first | neyman
kind = "coverage-aware"
seed = 0

[budget]
# task_fraction | task_count | cost_usd | elapsed_s; the limit is in that unit.
measure = "task_fraction"
limit = 1.0
# for cost_usd and elapsed_s: count the tested system only ("tested") or both ("pair")
scope = "tested"

[decision]
# fixed-budget - the paper's primary rule: a final action only at the budget limit fixed above
#                (one look); before it, continue.
# betting-wor  - anytime-valid betting confidence sequence over the planned tasks (sampled
#                without replacement): may promote or reject at ANY look once the boundary is
#                crossed and coverage holds. Needs the planned task order (decide --tasks).
boundary = "fixed-budget"
# A look whose rows reach past the budget limit: "at-limit" decides on the tasks up to the limit in
# the planned order (needs decide --tasks) and says so in the record; "refuse" refuses the look.
past_limit = "at-limit"
# Rows whose outcome is a prediction (status "predicted": runs halted early):
# exclude            - only the statuses listed above are used (the default)
# prediction-powered - each halted run counts with its prediction plus the audit correction from the
#                      audited runs ([early] audit_fraction > 0; betting-wor only): valid whatever the
#                      halting model's accuracy
predicted = "exclude"
# Under prediction-powered, the past predicted rows in the boundary's centre:
# worst-case    - every unaudited prediction at its adverse extreme (sure)
# audited-bound - at most the audits' time-uniform bound of them wrong (a/5 of the cutoff spent on the bound)
predicted_centre = "audited-bound"
# A planned task whose outcome is missing for a system (an errored or unscored run), betting-wor only:
# "worst-case" counts it at its worst case for each test (valid whatever caused the error; the run
# decides despite a few persistent errors), "wait" waits for a retry (a persistent error blocks the
# decision), "exclude" leaves it out (valid only when errors are independent of the outcomes).
missing = "worst-case"

[early]
# live halting: the share of runs drawn for audit (never halted; their prediction is still recorded)
# and the seed of the draw, fixed before the run
audit_fraction = 0.0
audit_seed = 0

[betting]
# with betting-wor and the coverage rule:
# top-up     - run a uniformly random permutation of the planned tasks (stopwise order writes it); once
#              the boundary is crossed, run the fewest further tasks that meet coverage (stopwise next
#              names them first), then act
# (stratified, the coverage-aware order with a per-group boundary, is retired: it resolved far later)
design = "top-up"
# a planned order that is not a seeded uniformly random permutation (cost-first, a hand-written tasks
# file) is refused ("warn" used to decide on it with the retired stratified process; it refuses too)
order_check = "refuse"

[family]
# A family of systems decided together (stopwise leaderboard; decide_family in Python); `stopwise decide`
# ignores this section. The family's level is tail_cutoff and its threshold the threshold above.
# all-pairs - every ordered pair: "A beats B by more than threshold" (a leaderboard)
# baseline  - each candidate against the system named by baseline = "..." below
# best      - which system beats every other (needs control = "fwer", or "none")
kind = "all-pairs"
# baseline = "production"
# fwer - the chance of ANY false claim in the family is at most tail_cutoff, at every look
# fdr  - the expected share of false claims among the claims is at most tail_cutoff (e-BH)
# none - each pair at tail_cutoff on its own: no family guarantee (printed as uncontrolled)
control = "fwer"
# fdr only: the share of the planned tasks after which the family's claims are final
publication = 1.0
# > 0: also claim "equivalent within +/- equivalence" for pairs (two one-sided tests); 0 = off
equivalence = 0.0

[flags]
# Rows carrying any of the "exclude" flags are left out and counted in the record's exclusions;
# rows used that carry a "count" flag are counted in the record's "flagged". Flags are short
# tokens written by ingest: error, empty_patch, unscored, limit:<type>, exception:<type>, ...
exclude = []
count = ["error"]

[targets]
# a budget is sufficient when false promotions and false rejections are at most alpha,
# final actions before coverage at most gamma, and unresolved comparisons at most eta.
alpha = 0.05
gamma = 0.05
eta = 0.25
"""
"""The paper's primary policy, commented (``stopwise policy init --preset paper``): for reproducing ParEvalLayer. Its
``exact`` tail is the bootstrap's and treats the tasks as a sample of the task distribution; with fewer than 10
discordant tasks it does not keep level a, and the record then says so and carries the exact-wor interval (issue 35)."""


DEFAULT_POLICY_TOML = (
    PAPER_POLICY_TOML.replace('tail_method = "exact"\n', 'tail_method = "exact-wor"\n')
    .replace('kind = "coverage-aware"\n', 'kind = "uniform"\n')
    .replace("its bootstrap tail at or below", "its tail (one-look p-value) at or below")
    .replace(
        "# exact     - the bootstrap",
        "# exact-wor is the default of new policies: it keeps level a at every n for 0/1 outcomes; the paper's rule\n"
        "# is `stopwise policy init --preset paper` (exact, coverage-aware order).\n# exact     - the bootstrap",
    )
)
"""The commented policy ``stopwise policy init`` writes (issue 35): the paper's rule with a one-look test that keeps its
level, ``exact-wor`` (exact under sampling the N planned tasks without replacement) on a ``uniform`` planned order
(the test's random sample); otherwise the paper's primary policy (delta = 0, a = 0.05, alpha = gamma = 0.05, eta = 0.25).
``Policy()`` is this policy; the paper's primary one is :meth:`Policy.paper` (:data:`PAPER_POLICY_TOML`)."""


def _policy_error(source: str, exc: pydantic.ValidationError) -> PolicyError:
    lines = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(document)"
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown setting (check its spelling and section)"
        value = err.get("input")
        shown = "" if err["type"] in ("missing",) or isinstance(value, dict) else f"; got {value!r}"
        lines.append(f"{source}, field '{field}': {message}{shown}")
    return PolicyError(f"{len(lines)} problem{'s' if len(lines) != 1 else ''} in the policy:\n  " + "\n  ".join(lines))


def parse_policy(text: str, *, source: str = "<policy>") -> Policy:
    r"""Parse and validate a policy from TOML text.

    Raises
    ------
    PolicyError
        The text is not TOML or breaks the schema (field, rule and value named).

    Examples
    --------
    >>> from stopwise.records import parse_policy
    >>> parse_policy("threshold = 0.05\n[budget]\nlimit = 0.5").budget.limit
    0.5
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{source}: not valid TOML: {exc}") from exc
    except RecursionError:
        raise PolicyError(f"{source}: nested too deeply to parse (a policy is a few flat tables)") from None
    check_structure(data, source)
    try:
        return Policy.model_validate(data)
    except pydantic.ValidationError as exc:
        raise _policy_error(source, exc) from exc


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Read a policy TOML file; see :func:`parse_policy`."""
    file = Path(path)
    text = read_text(file, "policy file (write one with `stopwise policy init`)")
    return parse_policy(text, source=str(file))
