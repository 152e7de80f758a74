"""The family record: what one look at a family of systems claims, under which error control, about which estimand.

A family record is to :func:`stopwise.compare.decide_family` what :class:`stopwise.DecisionRecord` is to
:func:`stopwise.decide`: every claim of the look (each ordered pair's action, the ranks with their simultaneous
intervals, the tiers, the best system), the evidence behind each (e-values or p-values), the control that shares
one error level a across all of them, the estimand the claims are about, and the digests that trace it to its
policy and rows. Serialise with ``record.model_dump_json()``; an e-value of a null that the observed tasks
make impossible is infinite and written ``"Infinity"``.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stopwise._vocabulary import Boundary, Estimand, FamilyControl, FamilyKind
from stopwise.records._decision import Action, Exclusion, UniverseState

__all__ = ["FamilyPair", "FamilyRecord", "FamilyTier", "SystemRank"]

FamilyEvidence = Literal["e-process", "e-value", "p-value"]
FamilyStatus = Literal["answered", "needs-more-tasks"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="strings")


class FamilyPair(_Record):
    """One ordered pair of the family: the family's action on it and the evidence for each of its claims."""

    tested: str
    """System A."""
    baseline: str
    """System B."""
    action: Action
    """``promote``: the family claims "A beats B by more than delta"; ``reject``: it claims "A does not beat B by more
    than delta" (at delta = 0: B beats A); ``continue``: no claim yet and tasks remain; ``abstain``: no claim and no
    task remains (the budget limit, the publication look, or a complete record)."""
    claimed_at: int | None = None
    """The look (tasks of the planned order observed; N on a complete record) at which the claim was first made;
    None without a claim."""
    e_promote: float | None = None
    """The e-value against "A does not beat B by more than delta" (H0: mean <= delta) at the look: the betting capital
    of the promote test (``e-process``) or the one-look mixture e-value (``e-value``); None under the fixed-budget
    boundary (``p-value``) or when the claim is not in the family (``kind = "best"`` has no reject claims)."""
    e_reject: float | None = None
    """The e-value against "A beats B by more than delta" (H0: mean >= delta) at the look."""
    p_promote: float | None = None
    """Under the fixed-budget boundary: the tail R_promote at the budget limit (the policy's tail method)."""
    p_reject: float | None = None
    """Under the fixed-budget boundary: the tail R_reject at the budget limit."""
    delta_hat: float | None = None
    """Observed mean paired difference A - B on the pair's judged tasks (None when none is judged)."""
    n: int = 0
    """Tasks judged for the pair: the longest observed prefix of the planned order (betting), the observed tasks
    (fixed-budget) or every task of a complete record."""
    low: float | None = None
    """Lower end of the pair's interval for the mean difference A - B (the record's ``interval_*`` fields say which
    interval); None when none is computed."""
    high: float | None = None
    """Upper end of that interval."""
    equivalent: bool = False
    """The family claims "A and B are within +/- delta_eq of each other" (``equivalence > 0``), under its control.
    False means only that this claim is not made: it is not the same as "not yet separated"."""
    e_equivalent: float | None = None
    """The e-value of the equivalence claim: the smaller of the two one-sided tests' (mean <= -delta_eq and mean >=
    +delta_eq); None when equivalence is not asked or under the fixed-budget boundary."""
    p_equivalent: float | None = None
    """Under the fixed-budget boundary: the larger of the two one-sided tails of the equivalence claim."""
    top_up: list[str] | None = None
    """The top-up design (``continue``): a claim on this pair is made by the control but waits for these tasks of the
    planned order to bring coverage (both systems must run them; their outcomes cannot undo it); None otherwise."""


class SystemRank(_Record):
    """A system's place in the family: its observed mean, its rank and the simultaneous rank interval."""

    system: str
    """The system."""
    mean: float | None
    """Mean outcome on the family's judged tasks (None when none is judged)."""
    rank: int
    """1 + the number of systems with a higher mean (ties share a rank)."""
    rank_low: int
    """Best rank the claims allow: 1 + the systems claimed to beat this one (at delta = 0, under family-wise control,
    transitively)."""
    rank_high: int
    """Worst rank the claims allow: k - the systems this one is claimed to beat. All the intervals of a record hold
    together with probability at least 1 - a (Mogstad, Romano, Shaikh & Wilhelm 2024)."""
    tier: int
    """The 1-based tier of the system (0 under ``kind = "baseline"``, which has no tiers)."""


class FamilyTier(_Record):
    """Consecutive systems (by observed mean) that no claim of the family separates."""

    systems: list[str]
    """The members, best observed mean first."""
    equivalent: bool = False
    """Every pair of members is also claimed equivalent within +/- delta_eq (a tier of one is never "equivalent");
    False means they are only not separated."""


class FamilyRecord(_Record):
    """One look at a family of systems: every claim, its evidence and the control across them.

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare import decide_family
    >>> rows = stopwise.outcome_columns(
    ...     [{"system": s, "task": f"t{i}", "outcome": int(i < n)} for s, n in (("A", 180), ("B", 60), ("C", 55)) for i in range(200)])
    >>> record = decide_family(rows, complete=True)
    >>> record.control, record.estimand, [t.systems for t in record.tiers]
    ('fwer', 'task-distribution', [['A'], ['B', 'C']])
    """

    version: Literal[1] = 1
    """Version of this record's schema."""
    kind: FamilyKind
    """The family's question: ``all-pairs``, ``baseline`` or ``best``."""
    baseline: str | None = None
    """Under ``kind = "baseline"``: the system the candidates are compared with."""
    control: FamilyControl
    """``fwer``, ``fdr`` or ``none`` (uncontrolled: each pair at a on its own)."""
    level: float
    """a, the family's error level (the policy's ``tail_cutoff``)."""
    threshold: float
    """delta: "beats" means by more than this."""
    equivalence: float = 0.0
    """delta_eq of the equivalence claims (0: none asked)."""
    estimand: Estimand
    """``planned-tasks`` or ``task-distribution``: what every claim is about."""
    estimand_note: str
    """The estimand in words, with what it assumes."""
    boundary: Boundary
    """The policy's boundary. On a complete record (``task-distribution``) the claims rest on one-look e-values
    whatever the boundary."""
    evidence: FamilyEvidence
    """``e-process`` (the betting capitals, valid at every look), ``e-value`` (one look: a complete record) or
    ``p-value`` (the fixed-budget tails at the budget limit)."""
    method: str
    """How the claims were made, in words: the control's procedure and the evidence."""
    systems: list[str]
    """The family's systems, sorted."""
    n_hypotheses: int
    """M: the distinct claims the family may make (one-sided and equivalence claims); the control counts them all."""
    n_claims: int
    """How many of them the family makes at this look."""
    n_planned: int
    """N: the planned tasks (a universe's), or the tasks of the complete record."""
    look: int
    """Tasks judged at this look: the longest prefix of the planned order observed for every system (N on a
    complete record; the budget limit's tasks under the fixed-budget boundary)."""
    publication_look: int | None = None
    """Under ``control = "fdr"`` with the betting boundary: the look after which the family's claims are final."""
    final: bool
    """No later look can add a claim: a complete record, the budget limit, or the publication look."""
    status: FamilyStatus
    """``answered``: the family's question is settled (every pair separated or equivalent; every candidate separated
    from the baseline; a best system named); ``needs-more-tasks`` otherwise."""
    best: str | None = None
    """The system the family claims beats every other (family-wise control only, transitively), or None."""
    pairs: list[FamilyPair]
    """The family's ordered pairs with their actions and evidence (every ordered pair; under ``kind = "baseline"``
    each (candidate, baseline))."""
    ranks: list[SystemRank]
    """Every system's rank and simultaneous rank interval, best observed mean first."""
    tiers: list[FamilyTier]
    """Consecutive groups no claim separates, best first (empty under ``kind = "baseline"``)."""
    needed: list[str]
    """Systems whose further outcomes can still change a claim the family asks for: a live evaluation may stop
    scheduling the others (empty when the record is final or answered)."""
    interval_level: float
    """Two-sided coverage of each pair's interval ``[low, high]``, ``1 - 2 a'``: a' = a / (k (k - 1)) under
    ``fwer`` (all the intervals hold together with probability 1 - a), a R / M under ``fdr`` (the e-BY adjustment
    for the R claimed pairs), a under ``none`` (per pair)."""
    interval_method: str
    """How the intervals were computed."""
    claim: str = ""
    """The family's claim in one sentence, naming the estimand and the control. Not part of :meth:`digest`."""
    warnings: list[str] = Field(default_factory=list)
    """What the reader should know: tasks left out, treatments the family does not apply, uncontrolled claims."""
    excluded: list[Exclusion] = Field(default_factory=list)
    """Rows of the family's systems left out, by reason."""
    policy_sha256: str
    """sha256 of the policy's canonical JSON."""
    input_sha256: str
    """sha256 of the family's outcome rows in canonical form (:func:`stopwise.compare.input_digest`)."""
    stopwise_version: str
    """The library version that wrote the record."""
    universe: UniverseState | None = None
    """The task universe judged against (``complete-record`` for a complete record)."""
    decided_at: datetime | None = None
    """UTC time of the look. Not part of :meth:`digest`."""

    @property
    def answered(self) -> bool:
        """The family's question is settled (``status == "answered"``)."""
        return self.status == "answered"

    def pair(self, tested: str, baseline: str) -> FamilyPair:
        """The family's ordered pair (tested, baseline).

        Raises
        ------
        KeyError
            The pair is not in the family.
        """
        for pair in self.pairs:
            if pair.tested == tested and pair.baseline == baseline:
                return pair
        raise KeyError(f"({tested!r}, {baseline!r}) is not a pair of this family")

    def digest(self) -> str:
        """sha256 of the record's canonical JSON without ``decided_at`` and the derived ``claim`` sentence."""
        text = self.model_dump_json(exclude={"decided_at", "claim"})
        return hashlib.sha256(text.encode()).hexdigest()
