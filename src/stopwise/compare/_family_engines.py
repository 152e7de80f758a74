"""The evidence of a family at one look, by estimand and boundary: three engines behind :func:`decide_family`.

* ``betting`` -- the planned tasks (a task universe with its order) under ``betting-wor``: every evidence row's
  betting capital on its observed prefix of the planned order (:mod:`stopwise.compare._family_betting`), the
  controls applied look by look (claims accumulate under ``fwer``; e-BH on stopped processes under ``fdr``).
* ``one-look`` -- a complete record (``complete=True``): the task distribution, one look at every task, the
  order-free mixture e-values of :mod:`stopwise.compare._sample_evalue`.
* ``tails`` -- the planned tasks under ``fixed-budget``: the policy's tails at the budget limit as p-values, Holm
  or Benjamini–Yekutieli; nothing before the limit.

Each engine returns an :class:`Evidence`: the claim look of every hypothesis, the pairs' estimates and intervals,
the rank claims (all ordered pairs at delta = 0, family-wise at a, closed transitively) and the look's state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from stopwise.compare import tail_probabilities
from stopwise.compare._coverage import coverage_enforced, coverage_from_sizes, required_counts
from stopwise.compare._family_betting import family_bounds, family_paths, prefix_differences, prefix_lengths
from stopwise.compare._family_hypotheses import AT_LEAST, AT_MOST, FamilyHypotheses
from stopwise.compare._multiple import claim_looks, p_value_claims
from stopwise.compare._ranks import transitive_claims
from stopwise.compare._sample_evalue import mixture_bounds, mixture_log_evalues
from stopwise.compare._topup import top_up_tasks
from stopwise.records import Policy

__all__ = ["Evidence", "OutcomeTable", "betting_evidence", "one_look_evidence", "tails_evidence"]


@dataclass(frozen=True)
class OutcomeTable:
    """The family's outcomes, one column per task: the planned order (a universe) or the complete record's tasks."""

    outcomes: np.ndarray
    """(k, T) each system's outcome (attempts averaged; NaN where it has none)."""
    tasks: np.ndarray
    """(T,) the task of each column."""
    groups: np.ndarray
    """(T,) each task's coverage group."""
    n_planned: int
    """N: the universe's planned tasks, or T on a complete record."""
    group_labels: np.ndarray
    """The planned group labels, sorted."""
    group_sizes: np.ndarray
    """n_g of each label."""
    ordered: bool
    """The columns are the planned order (a universe with task names)."""
    uniform: bool = False
    """The planned order is a verified uniformly random permutation (the pooled process applies)."""

    @property
    def observed(self) -> np.ndarray:
        """(k, T) where each system has an outcome."""
        return np.isfinite(self.outcomes)


@dataclass(frozen=True)
class Evidence:
    """What an engine made of the family's outcomes at this look."""

    kind: str
    """``e-process``, ``e-value`` or ``p-value``."""
    claims: np.ndarray
    """(M,) the look index at which each hypothesis is claimed (-1: not claimed)."""
    values: np.ndarray
    """(M,) each hypothesis's evidence at the look: log e-value (e engines) or p-value (``p-value``)."""
    look_tasks: np.ndarray
    """(T,) tasks observed at each look index (the claim looks' meaning)."""
    pair_n: np.ndarray
    """(P,) tasks judged for each family pair."""
    pair_delta: np.ndarray
    """(P,) each family pair's observed mean difference (NaN when none is judged)."""
    low: np.ndarray | None
    """(P,) lower ends of the pairs' intervals (None: no interval)."""
    high: np.ndarray | None
    """(P,) upper ends."""
    rank_beats: np.ndarray
    """(k, k) "row beats column" at delta = 0, family-wise at a, transitively closed."""
    means: np.ndarray
    """(k,) each system's mean on the family's judged tasks (NaN when none)."""
    look: int
    """Tasks judged for every system at this look."""
    final: bool
    """No later look can add a claim."""
    publication_look: int | None = None
    """The publication look (``fdr`` under the betting boundary)."""
    interval_method: str = ""
    """How the intervals were computed."""
    notes: list[str] = field(default_factory=list)
    """Warnings of the engine."""
    pending: dict[int, list[int]] = field(default_factory=dict)
    """Hypotheses rejected but not yet claimed (the top-up design) -> the planned positions of the top-up tasks
    their claim waits for."""


def interval_alpha(control: str, alpha: float, n_systems: int, n_claims: int, n_hypotheses: int) -> float:
    """A' of each end of each pair's interval: per pair, simultaneous (all ordered pairs) or the e-BY adjustment."""
    if control == "none":
        return alpha
    if control == "fwer":
        return alpha / (n_systems * (n_systems - 1))
    return alpha * max(n_claims, 1) / n_hypotheses


def _unordered(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct unordered pairs (i < j) of the family's ordered pairs, the index of each ordered pair's, its sign."""
    low, high = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    keys, index = np.unique(np.stack([low, high], axis=1), axis=0, return_inverse=True)
    return keys, index.ravel(), np.where(pairs[:, 0] < pairs[:, 1], 1.0, -1.0)


def _oriented(values: np.ndarray, index: np.ndarray, sign: np.ndarray) -> np.ndarray:
    return values[index] * sign


def _oriented_bounds(low: np.ndarray, high: np.ndarray, index: np.ndarray, sign: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ordered pairs' (low, high) from their unordered pairs' (a reversed pair's interval is the negation)."""
    flip = sign < 0
    return np.where(flip, -high[index], low[index]), np.where(flip, -low[index], high[index])


def beats_from_claims(hypotheses: FamilyHypotheses, claimed: np.ndarray) -> np.ndarray:
    """(k, k) "row beats column" from claimed hypotheses: ``mean(A - B) > value >= 0``, or ``< value <= 0`` (B beats A)."""
    k = hypotheses.n_systems
    beats = np.zeros((k, k), dtype=bool)
    a, b, kind, value = (hypotheses.nulls[:, c] for c in range(4))
    a, b = a.astype(int), b.astype(int)
    up = claimed & (kind == AT_MOST) & (value >= 0)
    down = claimed & (kind == AT_LEAST) & (value <= 0)
    beats[a[up], b[up]] = True
    beats[b[down], a[down]] = True
    return beats


def _coverage_gate(table: OutcomeTable, looks: int, policy: Policy) -> np.ndarray | None:
    """(T,) whether the planned order's first t tasks meet the coverage rule, for t = 1..T (None: not enforced)."""
    if not coverage_enforced(policy.coverage.rule) or looks == 0:
        return None
    codes = np.searchsorted(table.group_labels, table.groups[:looks].astype(str))
    counts = np.cumsum(codes[:, None] == np.arange(len(table.group_labels))[None, :], axis=0)
    need = required_counts(table.group_sizes, np.arange(1, looks + 1), rule=policy.coverage.rule, slack=policy.coverage.slack)
    return (counts >= need).all(axis=1) & (need.sum(axis=1) <= np.arange(1, looks + 1))


def _task_cap(policy: Policy, n_planned: int) -> int:
    """The budget limit in tasks (the family supports the task measures only; checked by ``decide_family``)."""
    limit = policy.budget.limit
    if policy.budget.measure == "task_count":
        return min(n_planned, int(limit))
    return min(n_planned, math.ceil(limit * n_planned - 1e-9))


def _common_means(outcomes: np.ndarray, looks: int) -> np.ndarray:
    """Each system's mean on the longest prefix every system has observed (NaN when it is empty)."""
    seen = np.isfinite(outcomes[:, :looks]).all(axis=0)
    common = int(np.argmin(seen)) if not seen.all() else looks
    return outcomes[:, :common].mean(axis=1) if common else np.full(outcomes.shape[0], np.nan)


def betting_evidence(table: OutcomeTable, hypotheses: FamilyHypotheses, ranks: FamilyHypotheses, policy: Policy) -> Evidence:
    """The ``betting`` engine (see the module docstring)."""
    alpha, control = policy.tail_cutoff, policy.family.control
    n_pop = table.n_planned
    cap = _task_cap(policy, n_pop)
    publication = math.ceil(policy.family.publication * n_pop - 1e-9) if control == "fdr" else None
    if publication is not None:
        cap = min(cap, publication)
    rows, thresholds, where = _union_rows(hypotheses, ranks)
    lengths = prefix_lengths(table.observed, rows, cap)
    looks = int(lengths.max()) if len(lengths) else 0
    stratified = not table.uniform and len(table.group_labels) > 1
    codes = np.searchsorted(table.group_labels, table.groups[:looks].astype(str)) if stratified else None
    process = {"group_codes": codes, "group_sizes": table.group_sizes if stratified else None}
    paths = family_paths(table.outcomes[:, :looks], rows, thresholds, lengths, population_size=n_pop, alpha=alpha, **process)
    top_up = table.uniform and coverage_enforced(policy.coverage.rule) and policy.betting.design == "top-up"
    gate = None if top_up else _coverage_gate(table, looks, policy)
    main = hypotheses.log_e(paths.log_promote[where[0]], paths.log_reject[where[0]])
    claims = _claims(main, alpha, control, gate, hypotheses.opposite)
    rank_log_e = ranks.log_e(paths.log_promote[where[1]], paths.log_reject[where[1]])
    rank_claims = _claims(rank_log_e, alpha, "fwer", gate, ranks.opposite)
    pending: dict[int, list[int]] = {}
    if top_up:
        claims, pending = _topped_up(table, hypotheses, claims, policy)
        rank_claims, _ = _topped_up(table, ranks, rank_claims, policy)
    values = _values_at_look(main, claims if control == "fdr" else None)
    keys, index, sign = _unordered(hypotheses.pairs)
    unordered_lengths = prefix_lengths(table.observed, keys, cap)
    differences = prefix_differences(table.outcomes[:, :looks], keys, unordered_lengths)
    sums = differences.sum(axis=1)
    a_prime = interval_alpha(control, alpha, hypotheses.n_systems, int((claims >= 0).sum()), hypotheses.n_hypotheses)
    low, high = family_bounds(differences, unordered_lengths, np.full(len(keys), a_prime), population_size=n_pop, bet_alpha=alpha, **process)
    pair_n = unordered_lengths[index]
    delta = np.where(pair_n > 0, _oriented(sums / np.maximum(unordered_lengths, 1), index, sign), np.nan)
    low, high = _oriented_bounds(low, high, index, sign)
    return Evidence(
        kind="e-process",
        claims=claims,
        values=values,
        look_tasks=np.arange(1, looks + 1),
        pair_n=pair_n,
        pair_delta=delta,
        low=low,
        high=high,
        rank_beats=transitive_claims(beats_from_claims(ranks, rank_claims >= 0)),
        means=_common_means(table.outcomes, looks),
        look=int(lengths.min()) if len(lengths) else 0,
        final=bool(len(lengths) and (lengths >= cap).all()) and not pending,
        publication_look=publication,
        pending=pending,
        notes=[_coverage_note(policy, top_up)] if coverage_enforced(policy.coverage.rule) else [],
        interval_method="anytime-valid confidence sequence of each pair's betting test (the process of decide; 0.01 grid, rounded outward)",
    )


def _union_rows(*families: FamilyHypotheses) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The distinct evidence rows of several families, and where each family's rows are among them."""
    index: dict[tuple[int, int, float], int] = {}
    where = []
    for family in families:
        keys = zip(family.rows[:, 0].tolist(), family.rows[:, 1].tolist(), family.thresholds.tolist(), strict=True)
        where.append(np.array([index.setdefault(key, len(index)) for key in keys], dtype=np.int64))
    ordered = sorted(index, key=index.__getitem__)
    rows = np.array([(a, b) for a, b, _ in ordered], dtype=np.int64).reshape(-1, 2)
    return rows, np.array([m0 for _, _, m0 in ordered], dtype=float), where


def _coverage_note(policy: Policy, top_up: bool) -> str:
    if top_up:
        return "coverage by top-up: a claim the control makes at look tau waits until the pair has run the top-up tasks of tau"
    return "coverage by the planned order: a claim waits for the first look at which the order's prefix meets the coverage rule"


def _topped_up(
    table: OutcomeTable, family: FamilyHypotheses, claims: np.ndarray, policy: Policy
) -> tuple[np.ndarray, dict[int, list[int]]]:
    """The top-up design: a hypothesis rejected at look tau is claimed once its pair has run the top-up of tau.

    The top-up (:func:`stopwise.compare.top_up_tasks`) is the fewest tasks of the planned order that bring the
    first tau tasks to coverage: a function of tau and the planned groups only, so the claim, as a single pair's
    action, rests on the pooled crossing alone. Returns the claims announced and the pending ones with their tasks.
    """
    codes = np.searchsorted(table.group_labels, table.groups.astype(str))
    planned = np.arange(len(codes))
    rule, slack = policy.coverage.rule, policy.coverage.slack
    observed = table.observed
    cache: dict[int, np.ndarray] = {}
    announced, pending = claims.copy(), {}
    for h in np.flatnonzero(claims >= 0):
        tau = int(claims[h]) + 1
        if tau not in cache:
            cache[tau] = top_up_tasks(codes, planned < tau, table.group_sizes, rule=rule, slack=slack)
        tasks = cache[tau]
        a, b = int(family.nulls[h, 0]), int(family.nulls[h, 1])
        missing = tasks[~(observed[a, tasks] & observed[b, tasks])]
        if len(missing):
            announced[h] = -1
            pending[int(h)] = missing.tolist()
    return announced, pending


def _claims(log_e: np.ndarray, alpha: float, control: str, gate: np.ndarray | None, opposite: np.ndarray) -> np.ndarray:
    """Claim looks along (M, T) paths (none without a look)."""
    if log_e.shape[-1] == 0:
        return np.full(log_e.shape[0], -1, dtype=np.int64)
    return claim_looks(log_e, alpha, control, gate=gate, opposite=opposite)


def _values_at_look(log_e: np.ndarray, stopped: np.ndarray | None) -> np.ndarray:
    """Each hypothesis's log e-value at the last look; under ``fdr`` a claimed one's at its claim (where e-BH stopped it)."""
    if log_e.shape[-1] == 0:
        return np.zeros(log_e.shape[0])
    last = log_e[:, -1]
    if stopped is None:
        return last
    at = np.take_along_axis(log_e, np.maximum(stopped, 0)[:, None], axis=1)[:, 0]
    return np.where(stopped >= 0, at, last)


def one_look_evidence(table: OutcomeTable, hypotheses: FamilyHypotheses, ranks: FamilyHypotheses, policy: Policy) -> Evidence:
    """The ``one-look`` engine: a complete record, the task distribution (see the module docstring)."""
    alpha, control = policy.tail_cutoff, policy.family.control
    outcomes = table.outcomes
    n = outcomes.shape[1]

    def log_e(family: FamilyHypotheses) -> np.ndarray:
        up, down = mixture_log_evalues(outcomes[family.rows[:, 0]] - outcomes[family.rows[:, 1]], family.thresholds)
        return family.log_e(up, down)[:, None]

    main = log_e(hypotheses)
    claims = claim_looks(main, alpha, control, opposite=hypotheses.opposite)
    rank_claims = claim_looks(log_e(ranks), alpha, "fwer", opposite=ranks.opposite)
    keys, index, sign = _unordered(hypotheses.pairs)
    differences = outcomes[keys[:, 0]] - outcomes[keys[:, 1]]
    a_prime = interval_alpha(control, alpha, hypotheses.n_systems, int((claims >= 0).sum()), hypotheses.n_hypotheses)
    low, high = _oriented_bounds(*mixture_bounds(differences, a_prime), index, sign)
    return Evidence(
        kind="e-value",
        claims=claims,
        values=main[:, 0],
        look_tasks=np.array([n]),
        pair_n=np.full(len(hypotheses.pairs), n),
        pair_delta=_oriented(differences.mean(axis=1), index, sign),
        low=low,
        high=high,
        rank_beats=transitive_claims(beats_from_claims(ranks, rank_claims >= 0)),
        means=outcomes.mean(axis=1),
        look=n,
        final=True,
        interval_method="inverted one-look mixture e-values of the task distribution's mean (bisection)",
    )


def _tail_p_values(
    table: OutcomeTable, family: FamilyHypotheses, policy: Policy, rng: np.random.Generator, mirror: bool
) -> tuple[np.ndarray, ...]:
    """Each evidence row's p-values (promote side, reject side) at the budget limit, and its observed tasks; p = 1 before it.

    The promote side is R_promote = P*(mean* <= m0). With ``mirror`` (a row that carries both directions at delta = 0)
    the reject side is the reversed pair's R_promote, P*(mean* >= m0), as ``decide`` computes it for (B, A); otherwise
    it is R_reject = P*(mean* > m0), as ``decide`` computes it for (A, B).
    """
    observed = table.observed
    cap = _task_cap(policy, table.n_planned)
    n_rows = len(family.rows)
    p_up, p_down, n = np.ones(n_rows), np.ones(n_rows), np.zeros(n_rows, dtype=np.int64)
    for r, ((a, b), m0) in enumerate(zip(family.rows.tolist(), family.thresholds.tolist(), strict=True)):
        both = observed[a] & observed[b]
        n[r] = int(both.sum())
        coverage = coverage_from_sizes(
            table.group_labels, table.group_sizes, table.groups[both].astype(str), rule=policy.coverage.rule, slack=policy.coverage.slack
        )
        if n[r] < cap or (coverage_enforced(policy.coverage.rule) and not coverage.satisfied):
            continue
        assert policy.tail_method != "none"  # decide_family refuses a fixed-budget family without tails
        d = table.outcomes[a, both] - table.outcomes[b, both]
        options = {"method": policy.tail_method, "n_resamples": policy.bootstrap_resamples, "rng": rng, "population_size": table.n_planned}
        tails = tail_probabilities(d, m0, **options)  # type: ignore[arg-type]
        p_up[r] = tails.r_promote
        p_down[r] = tail_probabilities(-d, -m0, **options).r_promote if mirror else tails.r_reject  # type: ignore[arg-type]
    return p_up, p_down, n


def tails_evidence(
    table: OutcomeTable, hypotheses: FamilyHypotheses, ranks: FamilyHypotheses, policy: Policy, rng: np.random.Generator
) -> Evidence:
    """The ``tails`` engine: the fixed-budget rule's one look at the budget limit (see the module docstring)."""
    alpha, control = policy.tail_cutoff, policy.family.control
    cap = _task_cap(policy, table.n_planned)
    shared = policy.threshold == 0 and policy.family.kind != "baseline"
    up, down, n = _tail_p_values(table, hypotheses, policy, rng, shared)
    # a p-value is the e-engines' evidence with the order reversed: the equivalence claim takes the larger of two
    p = -hypotheses.log_e(-up, -down)
    at_limit = bool((n >= cap).all())
    claimed = p_value_claims(p, alpha, control) & at_limit
    claims = _keep_smaller(np.where(claimed, 0, -1), p, hypotheses.opposite)
    rank_up, rank_down, _ = (up, down, n) if shared and policy.family.equivalence == 0 else _tail_p_values(table, ranks, policy, rng, True)
    rank_p = -ranks.log_e(-rank_up, -rank_down)
    rank_claims = _keep_smaller(np.where(p_value_claims(rank_p, alpha, "fwer") & at_limit, 0, -1), rank_p, ranks.opposite)
    keys, index, sign = _unordered(hypotheses.pairs)
    observed = table.observed
    both = observed[keys[:, 0]] & observed[keys[:, 1]]
    sums = np.where(both, table.outcomes[keys[:, 0]] - table.outcomes[keys[:, 1]], 0.0).sum(axis=1)
    counts = both.sum(axis=1)
    seen_by_all = observed.all(axis=0)
    means = table.outcomes[:, seen_by_all].mean(axis=1) if seen_by_all.any() else np.full(len(observed), np.nan)
    return Evidence(
        kind="p-value",
        claims=claims,
        values=p,
        look_tasks=np.array([cap]),
        pair_n=counts[index],
        pair_delta=np.where(counts[index] > 0, _oriented(sums / np.maximum(counts, 1), index, sign), np.nan),
        low=None,
        high=None,
        rank_beats=transitive_claims(beats_from_claims(ranks, rank_claims >= 0)),
        means=means,
        look=int(seen_by_all.sum()),
        final=at_limit,
        interval_method="none: the fixed-budget family reports no simultaneous interval (the tails are one-look p-values)",
    )


def _keep_smaller(claims: np.ndarray, p: np.ndarray, opposite: np.ndarray) -> np.ndarray:
    """Of two contradicting claims at one look, keep the one with the smaller p-value."""
    has = opposite >= 0
    other = np.where(has, opposite, 0)
    drop = has & (claims >= 0) & (claims[other] >= 0) & ((p > p[other]) | ((p == p[other]) & (np.arange(len(p)) > other)))
    return np.where(drop, -1, claims)
