"""The vocabulary of the records: each set of allowed words once, as a ``Literal`` and its tuple.

The tuples are derived from the aliases (:func:`typing.get_args`), so a word is added in one place. It sits on
the bottom floor (``docs/architecture.md``) because every package speaks it: records, compare, ingest, replay,
ledger and the CLI import it from here; :mod:`stopwise.records` exports the words a user matches on (actions,
statuses, exclusion and warning codes, the worker states of the ledger's notices).

Examples
--------
>>> from stopwise._vocabulary import STATUSES, TAIL_METHODS
>>> STATUSES, TAIL_METHODS[-1]
(('final', 'pending', 'predicted'), 'none')
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "ACTIONS",
    "BETTING_DESIGNS",
    "BOUNDARIES",
    "COMPUTED_TAIL_METHODS",
    "COVERAGE_RULES",
    "DEFAULT_BUDGETS",
    "INGEST_FORMATS",
    "LIVE_RULES",
    "STATUSES",
    "STRATEGIES",
    "TAIL_METHODS",
    "WORKER_STATES",
    "Action",
    "BettingDesign",
    "Boundary",
    "ComputedTailMethod",
    "CoverageRule",
    "IngestFormat",
    "LiveRule",
    "Status",
    "Strategy",
    "TailMethod",
    "WorkerState",
]

Status = Literal["final", "pending", "predicted"]
STATUSES: tuple[Status, ...] = get_args(Status)
"""Allowed values of ``status``: a final label, an unresolved one, or an early prediction."""

ComputedTailMethod = Literal["exact", "bootstrap", "normal", "serfling", "exact-wor"]
COMPUTED_TAIL_METHODS: tuple[ComputedTailMethod, ...] = get_args(ComputedTailMethod)
"""Tail methods that compute tail probabilities."""

TailMethod = Literal[ComputedTailMethod, "none"]
TAIL_METHODS: tuple[TailMethod, ...] = get_args(TailMethod)
"""A policy's tail methods: the computed ones, or ``none`` (decide by the observed margin)."""

CoverageRule = Literal["proportional", "tolerant", "every-group", "none"]
COVERAGE_RULES: tuple[CoverageRule, ...] = get_args(CoverageRule)
"""Coverage rules: ``proportional`` (paper eq. 4), ``tolerant`` (eq. 4's quota less ``slack`` hypergeometric
standard deviations, at least one task per group: the default with the betting boundary), ``every-group``
(one task of every group) or ``none`` (recorded, not enforced); see :mod:`stopwise.compare._coverage`."""

Boundary = Literal["fixed-budget", "betting-wor"]
BOUNDARIES: tuple[Boundary, ...] = get_args(Boundary)
"""Decision boundaries: the paper's one-look fixed-budget rule, or the betting sequence.

Each is a module of :mod:`stopwise.compare._boundaries` named after it (dashes as underscores)."""

BettingDesign = Literal["top-up", "stratified"]
BETTING_DESIGNS: tuple[BettingDesign, ...] = get_args(BettingDesign)
"""Live designs of the ``betting-wor`` boundary (``[betting] design``); each is a module
``stopwise.compare._boundaries.betting_wor_<design>``."""

Action = Literal["promote", "reject", "continue", "abstain"]
ACTIONS: tuple[Action, ...] = get_args(Action)
"""The four actions, in exit-code order (promote 0, reject 1, continue 2, abstain 3)."""

Strategy = Literal["auto", "mixture", "max", "horizon", "agrapa", "plug-in"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
"""Betting strategies: ``auto`` (default: ``mixture`` for the pooled process, ``max`` for the stratified
one), ``mixture`` (the average of the ``max`` and ``horizon`` capitals), ``max`` (the larger of the aGRAPA
and plug-in bets), ``horizon`` (the larger of the aGRAPA and the horizon-tuned plug-in bets), ``agrapa``
and the predictable ``plug-in`` baseline."""

LiveRule = Literal["betting-wor", "fixed-budget"]
LIVE_RULES: tuple[LiveRule, ...] = get_args(LiveRule)
"""The rules a live-look replay compares."""

WorkerState = Literal["started", "failed", "finished"]
WORKER_STATES: tuple[WorkerState, ...] = get_args(WorkerState)
"""States of a live worker (one system's task) that the ledger's notices record: ``started`` (scheduling
samples), ``failed`` (stopped by an error; its partner stops too) and ``finished`` (its task ended)."""

IngestFormat = Literal["swebench", "inspect", "tau2", "harbor", "hal"]
INGEST_FORMATS: tuple[IngestFormat, ...] = get_args(IngestFormat)
"""Harness formats :func:`~stopwise.ingest.ingest` reads, in the order detection tries them."""

DEFAULT_BUDGETS: tuple[float, ...] = tuple(k / 100 for k in range(5, 100, 5))
"""The replay's budget fractions, 5 % to 95 % in 5-point steps (``stopwise.replay.DEFAULT_BUDGETS`` is
the same as a NumPy array)."""

__all__ += [  # the action codes, exclusion and warning codes (decide's vocabulary)
    "ACTION_CODE",
    "EXCLUSION_CODES",
    "EXCLUSION_REASONS",
    "WARNING_CODES",
    "ExclusionCode",
    "WarningCode",
    "exclusion_code",
    "exclusion_reason",
]

ACTION_CODE: dict[Action, int] = {action: code for code, action in enumerate(ACTIONS)}
"""Each action's integer code, its place in :data:`ACTIONS` (the ``stopwise decide`` exit code)."""

ExclusionCode = Literal["duplicate", "status", "flag", "not-shared", "outside-universe", "no-partner", "beyond-limit", "missing"]
EXCLUSION_CODES: tuple[ExclusionCode, ...] = get_args(ExclusionCode)
"""Why outcome rows were left out of a decision (:attr:`stopwise.records.Exclusion.code`)."""

EXCLUSION_REASONS: dict[ExclusionCode, str] = {
    "duplicate": "identical duplicate of another row",
    "status": "status {status} (policy uses {statuses})",
    "flag": "flag {flag} (policy excludes it)",
    "not-shared": "task not shared by both systems",
    "outside-universe": "task outside the planned task universe",
    "missing": "task whose outcome is missing, left out of the planned universe (policy missing = exclude; its rows are counted under their status or as no-partner)",
    "no-partner": "partner system has no usable outcome on the task yet",
    "beyond-limit": "task beyond the budget limit in the planned order (policy past_limit = at-limit)",
}
"""The reason text of each exclusion code, as records store it (``str.format`` fields in braces).

The record keeps the text (its JSON is unchanged); the code is read back from it by
:func:`exclusion_code`."""

_REASON_HEADS: tuple[tuple[str, ExclusionCode], ...] = tuple(
    (text.partition("{")[0], code) for code, text in EXCLUSION_REASONS.items() if "{" in text
)


def exclusion_reason(code: ExclusionCode, **fields: str) -> str:
    """The reason text of an exclusion code, its fields filled in.

    Examples
    --------
    >>> from stopwise._vocabulary import exclusion_reason
    >>> exclusion_reason("flag", flag="error")
    'flag error (policy excludes it)'
    """
    return EXCLUSION_REASONS[code].format(**fields)


def exclusion_code(reason: str) -> ExclusionCode | None:
    """The code of an exclusion reason: the entry of :data:`EXCLUSION_REASONS` it was made from.

    A reason without fields matches its text exactly; one with fields matches by the text before
    the first field (``status ``, ``flag ``), so a caller's own wording of a left-out status
    (the replay's ``status pending``) keeps its code. None for a reason no entry makes (an
    exclusion built by hand).

    Examples
    --------
    >>> from stopwise._vocabulary import exclusion_code
    >>> exclusion_code("task outside the planned task universe"), exclusion_code("status pending (policy uses final)")
    ('outside-universe', 'status')
    """
    for code, text in EXCLUSION_REASONS.items():
        if reason == text:
            return code
    for head, code in _REASON_HEADS:
        if reason.startswith(head):
            return code
    return None


WarningCode = Literal[
    "no-groups", "budget-below-limit", "no-universe", "outside-universe", "waiting", "few-observed", "one-sided",
    "order-provenance",
    "past-limit", "rare-discordance", "unweighted-estimate", "exact-wor-fallback", "not-random-sample",
    "audit-draw", "missing", "halting-break-even", "bounded-treatment",
]
WARNING_CODES: tuple[WarningCode, ...] = get_args(WarningCode)
"""The guards a decision may warn about (:class:`stopwise.records.DecisionWarning`), in the order a record lists them:

``no-groups`` the task universe gives no groups (coverage over one group); ``budget-below-limit`` every
planned task is observed but the budget used given is below the limit; ``no-universe`` N and the
groups are inferred from the rows; ``outside-universe`` rows on tasks outside the universe were
excluded; ``waiting`` observed tasks wait beyond the longest observed prefix of the planned order;
``few-observed`` fewer paired tasks than the tail method wants; ``one-sided`` every observed
difference on one side of the threshold before the budget limit; ``order-provenance`` the betting
boundary's planned order is not a verified seeded random permutation of the kind its guarantee needs;
then the one-look codes of issue 21 (``past-limit``, ``rare-discordance``, ``unweighted-estimate``,
``exact-wor-fallback``, ``not-random-sample``: see ``ISSUE21_WARNINGS`` below); then ``audit-draw`` (issue 22):
under ``[decision] predicted = "prediction-powered"`` the rows' ``audited`` flags disagree with the
pre-registered audit draw of ``[early] audit_seed`` (:func:`stopwise.records.audit_draw`), on which the
treatment's guarantee rests; last ``missing`` (issue 20):
planned tasks whose outcome is missing for a system (errored or unscored) and how the betting boundary treated
them (``[decision] missing``); ``halting-break-even`` (issue 34): under a prediction-powered treatment the rows'
halting share and mean audit probability put joined halting on the losing side of the break-even of
``docs/joint-replay.md`` (even a halt that saved its whole run would not pay for the extra tasks the boundary needs);
``bounded-treatment`` (issue 34): ``predicted = "bounded"`` rests on the halting model's certified wrong-halt rate,
valid only on its calibration distribution."""

PastLimit = Literal["at-limit", "refuse"]
PAST_LIMITS: tuple[PastLimit, ...] = get_args(PastLimit)
"""What ``decide`` does with a look beyond the budget limit (``[decision] past_limit``): decide on the
tasks up to the limit in the planned order and say so (``at-limit``), or refuse the look."""

ISSUE21_WARNINGS = """The warning codes added with issue 21 (the end of :data:`WARNING_CODES`), in the order a record lists them:

``past-limit`` the rows reach past the budget limit and the look was taken at the limit (the rows
beyond it excluded, code ``beyond-limit``); ``rare-discordance`` the paper's fixed-budget rule took a
final action on fewer than :data:`RARE_DISCORDANCE` discordant tasks (the message gives the exact
without-replacement p-value of the sample, the measured risk); ``unweighted-estimate`` under a
group-driven order the unweighted mean and the group-weighted (stratified) mean lie on different sides
of the threshold; ``exact-wor-fallback`` the ``exact-wor`` test was asked for but the differences are
not 0/±1 (or the enumeration is too large), so the Serfling bound was used; ``not-random-sample`` the
``exact-wor`` test assumes a simple random sample of the planned tasks, which a group-driven order is not.
"""

RARE_DISCORDANCE = 10
"""Fewest discordant tasks (non-zero differences) on which the paper's rule acts without a
``rare-discordance`` warning.

Chosen by exact enumeration (N = 500, n = 20, 50, 100, 150, 250, delta = 0, a = 0.05; see
``docs/guide.md``, "One look at the limit"): on every sample with at least 10 discordant tasks where the bootstrap rule
acts, the exact without-replacement p-value of its action is at most 0.07 (1.4 a); below 10 it
reaches 0.96 (no discordant task), 0.26 (one), 0.10 (two, five, eight)."""

__all__ += ["PAST_LIMITS", "RARE_DISCORDANCE", "PastLimit"]


PredictedTreatment = Literal["exclude", "prediction-powered", "prediction-powered-tuned", "bounded"]
PREDICTED_TREATMENTS: tuple[PredictedTreatment, ...] = get_args(PredictedTreatment)
"""How rows whose outcome is a prediction (``status = "predicted"``, a run halted early) enter a decision
(``[decision] predicted``): ``exclude`` (the default: only the policy's ``statuses`` count, as before
issue 22) or ``prediction-powered`` (each halted run's prediction plus the audit correction:
:mod:`stopwise.compare._predicted`) or ``prediction-powered-tuned`` (issue 34: the same estimator with the audit
probability recorded per run, bets capped by the design's worst case and the centre's bound at 0.005:
:mod:`stopwise.compare._tuned`) or ``bounded`` (predictions taken as outcomes, the margin widened by twice the
halting model's certified wrong-halt rate ``[early] halt_error_bound``: valid only on the halting model's calibration
distribution, and labelled so: :mod:`stopwise.compare._bounded`)."""

AuditRule = Literal["uniform", "active"]
AUDIT_RULES: tuple[AuditRule, ...] = get_args(AuditRule)
"""How a halted run's audit probability is set (``[early] audit_rule``): ``uniform`` (rho for every run) or
``active`` (a pre-registered function of the prediction and the halting model's confidence, mean rho:
:class:`stopwise.compare._tuned.ActiveAudits`; needs ``predicted = "prediction-powered-tuned"``)."""
AuditCoupling = Literal["independent", "antithetic"]
AUDIT_COUPLINGS: tuple[AuditCoupling, ...] = get_args(AuditCoupling)
"""How the two runs of a task draw their audits (``[early] audit_coupling``): ``independent`` uniforms, or
``antithetic`` (issue 34): one uniform w per task, the tested system's run w and the other's 1 - w
(:func:`stopwise.records.audit_draw`; needs ``predicted = "prediction-powered-tuned"``)."""
AUDIT_PROBABILITY_FLAG = "audit-p"
"""Prefix of the flag ``audit-p:<pi>`` a halted run's row carries: the probability it was audited with."""

__all__ += ["AUDIT_COUPLINGS", "AUDIT_PROBABILITY_FLAG", "AUDIT_RULES", "AuditCoupling", "AuditRule"]

PredictedCentre = Literal["worst-case", "audited-bound"]
PREDICTED_CENTRES: tuple[PredictedCentre, ...] = get_args(PredictedCentre)
"""Where the prediction-powered boundary centres on the past predicted rows (``[decision] predicted_centre``):
``worst-case`` (every unaudited prediction at its adverse extreme: sure) or ``audited-bound`` (at most the
audits' time-uniform upper bound of them wrong, at a share of the cutoff: :mod:`stopwise.compare._audit_bound`)."""

PREDICTED_FLAG = "predicted"
"""Flag of a row whose outcome is the prediction of a run halted early (``status = "predicted"``)."""
AUDITED_FLAG = "audited"
"""Flag of a row of a run drawn for audit: never halted, its outcome is the true one (``status = "final"``)."""
WOULD_HALT_FLAGS: tuple[str, str] = ("would-halt:0", "would-halt:1")
"""Flags of an audited run the monitor would have halted, by the outcome it would have stored (0, 1)."""

__all__ += ["AUDITED_FLAG", "PREDICTED_CENTRES", "PREDICTED_FLAG", "PREDICTED_TREATMENTS", "WOULD_HALT_FLAGS", "PredictedCentre", "PredictedTreatment"]

MissingTreatment = Literal["worst-case", "wait", "exclude"]
MISSING_TREATMENTS: tuple[MissingTreatment, ...] = get_args(MissingTreatment)
"""What the ``betting-wor`` boundary does with a planned task whose outcome is missing for one or both systems
(``[decision] missing``; :mod:`stopwise.compare._missing`): count the missing difference at its worst case for each
test (``worst-case``, the default: valid whatever caused the error), stop the observed prefix there until a retry
brings the outcome (``wait``, the behaviour before the setting), or leave the task out of the planned universe with
the exclusion counted (``exclude``: valid only when errors are independent of the outcomes)."""

MISSING_FLAGS: tuple[str, ...] = ("error", "unscored")
"""The flags that mark a row as a run that ended without an outcome (an errored or unscored sample, as
``stopwise ingest`` and the Inspect manager write them): a system's task is *missing* when it has such a row and
no usable outcome."""

__all__ += ["MISSING_FLAGS", "MISSING_TREATMENTS", "MissingTreatment"]

FamilyKind = Literal["all-pairs", "baseline", "best"]
FAMILY_KINDS: tuple[FamilyKind, ...] = get_args(FamilyKind)
"""The questions a family of systems asks (``[family] kind``; :func:`stopwise.compare.decide_family`):
``all-pairs`` (every ordered pair: which gaps are real, a leaderboard), ``baseline`` (k candidates against
one baseline system: which of them beat it) and ``best`` (which system beats every other)."""

FamilyControl = Literal["fwer", "fdr", "none"]
FAMILY_CONTROLS: tuple[FamilyControl, ...] = get_args(FamilyControl)
"""How a family's claims share one error level a (``[family] control``): ``fwer`` (the probability of any
false claim is at most a, at every look), ``fdr`` (the expected share of false claims among the claims is at
most a: e-BH) or ``none`` (each pair at a on its own: no guarantee for the family, printed as uncontrolled)."""

Estimand = Literal["planned-tasks", "task-distribution"]
ESTIMANDS: tuple[Estimand, ...] = get_args(Estimand)
"""What a family record's claims are about: ``planned-tasks`` (the mean over the N planned tasks, the finite
population a task universe names) or ``task-distribution`` (the mean over the benchmark's task distribution,
the record's tasks taken as a sample of it, and over new runs of each system)."""

__all__ += ["ESTIMANDS", "FAMILY_CONTROLS", "FAMILY_KINDS", "Estimand", "FamilyControl", "FamilyKind"]
