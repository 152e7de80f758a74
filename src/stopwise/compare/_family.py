"""Deciding a family of systems together: one error level across every claim (issue 32).

:func:`decide` guarantees each directed pair on its own: a leaderboard assembled from per-pair records makes many
claims, and on swebench_verified's 1,260 ordered pairs the chance that some "A beats B" is false passes 50 % by a
tenth of the tasks. :func:`decide_family` decides the whole family at once under the policy's ``[family]`` section:
the claims (:mod:`stopwise.compare._family_hypotheses`), their evidence by estimand and boundary
(:mod:`stopwise.compare._family_engines`), the control (:mod:`stopwise.compare._multiple`), the ranks and tiers
(:mod:`stopwise.compare._ranks`) and the record (:class:`stopwise.records.FamilyRecord`).

What each control needs (checked in :func:`_decide_family_iv`):

* ``betting-wor`` (the planned tasks, any look): the planned order (an ordered task universe) shared by every
  system; ``fwer`` and ``none`` are valid at every look, claims accumulating; ``fdr`` is valid at whichever look the
  evaluation stops and final at the publication look (``[family] publication``), which must not lie after the
  budget limit. The budget is counted in tasks (``task_fraction`` or ``task_count``).
* ``fixed-budget`` (the planned tasks, one look): a universe (names or counts) and the budget limit; before the
  limit nothing is claimed; the tails must be computed (``tail_method != "none"``).
* a complete record (``complete=True`` without a universe): one look at every task, about the task distribution.

A live evaluation calls :func:`decide_family` at each look on the rows so far (a ledger's, for instance) and stops
scheduling the systems not in the record's ``needed``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np

from stopwise._version import __version__
from stopwise.compare import OutcomeCells, check_betting_order, input_digest, order_check, outcome_cells
from stopwise.compare._family_engines import (
    Evidence,
    OutcomeTable,
    beats_from_claims,
    betting_evidence,
    interval_alpha,
    one_look_evidence,
    tails_evidence,
)
from stopwise.compare._family_hypotheses import FamilyHypotheses, family_hypotheses
from stopwise.compare._family_text import estimand_note, family_claim, method_text
from stopwise.compare._ranks import best_system, observed_ranks, rank_intervals, tiers, transitive_claims
from stopwise.errors import ComparisonError
from stopwise.records import (
    Estimand,
    Exclusion,
    FamilyPair,
    FamilyRecord,
    FamilyTier,
    OutcomeColumns,
    Policy,
    SystemRank,
    TaskUniverse,
    UniverseState,
    outcome_columns,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["decide_family"]


@dataclasses.dataclass(frozen=True)
class _FamilyInputs:
    """The arguments of :func:`decide_family`, validated by :func:`_decide_family_iv`."""

    rows: OutcomeColumns
    """Validated rows of the family's systems only."""
    systems: tuple[str, ...]
    """The family's systems, sorted."""
    policy: Policy
    """The policy (its ``[family]`` section chooses the question and the control)."""
    universe: TaskUniverse | None
    """The planned tasks; None on a complete record."""
    rng: np.random.Generator
    """Generator of Monte-Carlo tails (fixed-budget with ``tail_method = "bootstrap"``)."""

    @property
    def engine(self) -> str:
        """``one-look`` (a complete record), ``betting`` or ``tails`` (the planned tasks under each boundary)."""
        if self.universe is None:
            return "one-look"
        return "betting" if self.policy.decision.boundary == "betting-wor" else "tails"

    @property
    def baseline_index(self) -> int | None:
        """Index of the baseline system under ``kind = "baseline"``."""
        family = self.policy.family
        return self.systems.index(family.baseline) if family.kind == "baseline" else None


def _systems_iv(rows: OutcomeColumns, systems: Sequence[str] | None, policy: Policy) -> tuple[str, ...]:
    present = [str(s) for s in rows.codes("system")[1]]
    if systems is None:
        chosen = sorted(present)
    else:
        if isinstance(systems, str) or not all(isinstance(s, str) for s in systems):
            raise ComparisonError(f"`systems` must be a list of system names (str); got {systems!r}")
        chosen = sorted(systems)
        if len(set(chosen)) != len(chosen):
            raise ComparisonError(f"`systems` names a system twice: {sorted({s for s in chosen if chosen.count(s) > 1})}")
        absent = [s for s in chosen if s not in present]
        if absent:
            raise ComparisonError(f"system(s) {absent[:5]} have no outcome rows; the rows hold {sorted(present)[:10]}")
    if len(chosen) < 2:
        raise ComparisonError(f"a family needs at least 2 systems; got {len(chosen)} ({chosen})")
    baseline = policy.family.baseline
    if policy.family.kind == "baseline" and baseline not in chosen:
        raise ComparisonError(f"the family's baseline {baseline!r} ([family] baseline) is not among its systems {chosen[:10]}")
    return tuple(chosen)


def _policy_iv(policy: Policy, universe: TaskUniverse | None, complete: bool) -> None:
    """Refuse what the family's controls cannot honour (see the module docstring)."""
    if universe is None and not complete:
        raise ComparisonError(
            "a family needs the planned tasks (universe=read_task_universe(...), --tasks) or a complete record "
            "(complete=True, --complete): without either the tasks with rows cannot be taken as the whole benchmark"
        )
    if universe is None:
        return
    if policy.decision.predicted != "exclude":
        raise ComparisonError('a family does not take prediction-powered rows ([decision] predicted = "prediction-powered"); decide those pairs one by one')
    if policy.budget.measure not in ("task_fraction", "task_count"):
        raise ComparisonError(f"a family's budget is counted in tasks (task_fraction or task_count); the policy measures {policy.budget.measure}")
    if policy.decision.boundary == "fixed-budget":
        if policy.tail_method == "none":
            raise ComparisonError('a fixed-budget family needs tails (p-values) to control its errors; tail_method = "none" computes none')
        return
    if not universe.ordered:
        raise ComparisonError(
            "the betting-wor boundary needs the planned task order, but a task universe from counts only was given: pass "
            "the `stopwise order` output or a tasks file (universe=read_task_universe(...), --tasks FILE)"
        )
    check_betting_order(policy, universe)
    family = policy.family
    if family.control == "fdr" and family.publication > policy.budget.limit * (1 + 1e-12) and policy.budget.measure == "task_fraction":
        raise ComparisonError(
            f"the fdr family's publication look ({family.publication:g} of the planned tasks) lies after the budget limit "
            f"({policy.budget.limit:g}): set [family] publication at or before the limit"
        )


def _decide_family_iv(
    rows: pd.DataFrame | OutcomeColumns,
    systems: Sequence[str] | None,
    policy: Policy | None,
    universe: TaskUniverse | None,
    complete: bool,
    rng: object,
) -> _FamilyInputs:
    """Validate and normalise every argument of :func:`decide_family` (policy and universe before the rows)."""
    if policy is None:
        policy = Policy()
    if not isinstance(policy, Policy):
        raise ComparisonError(f"`policy` must be a stopwise.Policy (see stopwise.load_policy) or None; got {type(policy).__name__}")
    if universe is not None and not isinstance(universe, TaskUniverse):
        raise ComparisonError(f"`universe` must be a stopwise.TaskUniverse or None; got {type(universe).__name__}")
    _policy_iv(policy, universe, bool(complete))
    if isinstance(rows, OutcomeColumns):
        checked = rows
    elif type(rows).__name__ == "DataFrame":
        checked = outcome_columns(rows)
    else:
        raise ComparisonError(f"outcome rows must be stopwise.OutcomeColumns or a pandas DataFrame; got {type(rows).__name__}")
    chosen = _systems_iv(checked, systems, policy)
    codes, labels = checked.codes("system")
    keep = np.isin(labels, chosen)
    if not keep.all():
        checked = checked.take(keep[codes])
    if isinstance(rng, np.random.Generator):
        generator = rng
    elif rng is None or (isinstance(rng, Integral) and not isinstance(rng, bool) and int(rng) >= 0):
        generator = np.random.default_rng(policy.seed if rng is None else int(rng))
    else:
        raise ComparisonError(f"`rng` must be a numpy.random.Generator, an integer seed >= 0 or None; got {rng!r}")
    return _FamilyInputs(rows=checked, systems=chosen, policy=policy, universe=universe, rng=generator)


@dataclasses.dataclass(frozen=True)
class _Table:
    """The outcome table and what building it left out."""

    table: OutcomeTable
    universe: UniverseState
    excluded: list[Exclusion]
    notes: list[str]


def _complete_table(iv: _FamilyInputs, cells: OutcomeCells) -> _Table:
    """A complete record: the tasks every system has an outcome on."""
    common = cells.usable.all(axis=0)
    if not common.any():
        raise ComparisonError(f"the {len(iv.systems)} systems share no task with an outcome for every one; nothing to compare")
    notes = []
    left = int((~common).sum())
    if left:
        notes.append(f"{left} task(s) lack an outcome for some system and are left out: the family judges the {int(common.sum())} tasks every system has")
    tasks, groups = cells.tasks[common], cells.groups[common].astype(str)
    labels, sizes = np.unique(groups, return_counts=True)
    inferred = TaskUniverse(tasks.tolist(), groups.tolist())
    state = UniverseState(source="complete-record", n_tasks=int(common.sum()), sha256=inferred.sha256(), ordered=False)
    table = OutcomeTable(cells.outcome[:, common], tasks, groups, int(common.sum()), labels, sizes, ordered=False)
    return _Table(table, state, [], notes)


def _planned_table(iv: _FamilyInputs, cells: OutcomeCells) -> _Table:
    """A task universe: the outcomes in planned order (named tasks) or as observed (counts only)."""
    universe = iv.universe
    assert universe is not None
    sizes_of = universe.group_sizes
    labels = np.array(sorted(sizes_of), dtype=str)
    sizes = np.array([sizes_of[g] for g in labels], dtype=np.int64)
    excluded, notes = [], []
    outside = 0
    if universe.ordered:
        positions = universe.positions(cells.tasks)
        row_positions = universe.positions(iv.rows.task)
        outside = int((row_positions < 0).sum())
        if outside:
            excluded.append(Exclusion.from_code("outside-universe", rows=outside, tasks=int((positions < 0).sum())))
        outcomes = np.full((len(iv.systems), universe.n_tasks), np.nan)
        inside = positions >= 0
        outcomes[:, positions[inside]] = cells.outcome[:, inside]
        groups, tasks = universe.groups, universe.tasks
        problem = order_check(universe, ("uniform",))
        uniform = problem is None or not universe.has_groups
        if not uniform and iv.engine == "betting":  # a universe built in Python without a stamp (check_betting_order
            # refused every other unverified order): taken as uniform, as decide does (the stratified process is retired)
            uniform = True
            notes.append(f"{problem}; the betting-wor guarantee assumes a uniformly random permutation drawn before any outcome")
    else:
        outcomes, tasks, uniform = cells.outcome, cells.tasks, False
        if outcomes.shape[1] > universe.n_tasks:
            raise ComparisonError(f"the rows hold {outcomes.shape[1]} tasks but the planned universe has only {universe.n_tasks}")
        groups = cells.groups.astype(str) if universe.has_groups else np.full(len(tasks), "")
        unknown = sorted(set(groups.tolist()) - set(labels.tolist()))
        if unknown:
            raise ComparisonError(f"the rows' group(s) {unknown[:3]} are not among the planned groups {labels[:5].tolist()}")
    assert groups is not None and tasks is not None
    state = UniverseState(
        source="tasks" if universe.ordered else "counts", n_tasks=universe.n_tasks, sha256=universe.sha256(), ordered=universe.ordered, outside_rows=outside
    )
    table = OutcomeTable(outcomes, np.asarray(tasks, dtype=str), np.asarray(groups, dtype=str), universe.n_tasks, labels, sizes, ordered=universe.ordered, uniform=uniform)
    return _Table(table, state, excluded, notes)


def _policy_notes(iv: _FamilyInputs) -> list[str]:
    """What the family does differently from a single pair's decision under this policy."""
    policy, notes = iv.policy, []
    if policy.family.control == "none":
        notes.append("uncontrolled family: each pair is judged at a on its own, so the chance that some claim is false is not bounded")
    if iv.engine == "one-look" and policy.decision.boundary == "betting-wor":
        notes.append("a complete record settles every planned-task gap; the claims are about the task distribution (one-look e-values), not the boundary's")
    if iv.engine == "betting":
        if policy.decision.missing != "wait":
            notes.append(f"the family waits for missing outcomes (a system's prefix stops at them); [decision] missing = {policy.decision.missing!r} applies to single pairs")
    return notes


def _decided(hypotheses: FamilyHypotheses, evidence: Evidence, control: str) -> tuple[np.ndarray, np.ndarray]:
    """Each family pair decided (a claim, an equivalence or, family-wise, a transitive consequence), and the beats matrix."""
    claimed = evidence.claims >= 0
    beats = beats_from_claims(hypotheses, claimed)
    if control == "fwer":
        beats = transitive_claims(beats)
    a, b = hypotheses.pairs[:, 0], hypotheses.pairs[:, 1]
    decided = np.zeros(len(hypotheses.pairs), dtype=bool)
    for index in (hypotheses.promote, hypotheses.reject, hypotheses.equivalent):
        decided |= (index >= 0) & claimed[np.maximum(index, 0)]
    if control == "fwer" and hypotheses.reject.min() >= 0:  # the reject claims too follow from a transitive "B beats A"
        decided |= beats[a, b] | beats[b, a]
    elif control == "fwer":
        decided |= beats[a, b]
    return decided, beats


def _status(iv: _FamilyInputs, hypotheses: FamilyHypotheses, decided: np.ndarray, beats: np.ndarray, final: bool) -> tuple[str, list[str]]:
    """Whether the family's question is answered, and the systems whose outcomes can still change a claim it asks for.

    ``best``: the systems no claim beats (a beaten system is out of the race: the best, once named, beats it
    through the chain of claims above it); otherwise the systems of the pairs not yet decided.
    """
    kind = iv.policy.family.kind
    answered = best_system(beats) is not None if kind == "best" else bool(decided.all())
    if answered or final:
        return ("answered" if answered else "needs-more-tasks"), []
    if kind == "best":
        return "needs-more-tasks", [iv.systems[s] for s in np.flatnonzero(~beats.any(axis=0))]
    return "needs-more-tasks", sorted({iv.systems[i] for i in np.unique(hypotheses.pairs[~decided])})


def _evidence_value(evidence: Evidence, hypothesis: int, p_value: bool) -> float | None:
    """A hypothesis's e-value (or p-value, as asked) at the look; None when it is not in the family or of the other kind."""
    is_p = evidence.kind == "p-value"
    if hypothesis < 0 or p_value != is_p:
        return None
    value = float(evidence.values[hypothesis])
    return value if is_p else float(np.exp(value))


def _pairs(iv: _FamilyInputs, table: OutcomeTable, hypotheses: FamilyHypotheses, evidence: Evidence) -> list[FamilyPair]:
    """The family's ordered pairs with their actions and evidence."""
    claims, looks, final = evidence.claims, evidence.look_tasks, evidence.final
    out = []
    for p, (a, b) in enumerate(hypotheses.pairs.tolist()):
        up, down, eq = int(hypotheses.promote[p]), int(hypotheses.reject[p]), int(hypotheses.equivalent[p])
        made = [(int(claims[h]), name) for name, h in (("promote", up), ("reject", down)) if h >= 0 and claims[h] >= 0]
        action = min(made)[1] if made else ("abstain" if final else "continue")
        delta = evidence.pair_delta[p]
        waits = sorted({t for h in (up, down, eq) if h >= 0 for t in evidence.pending.get(h, [])})
        out.append(FamilyPair(
            tested=iv.systems[a], baseline=iv.systems[b], action=action,  # type: ignore[arg-type]
            claimed_at=int(looks[min(made)[0]]) if made else None,
            e_promote=_evidence_value(evidence, up, False), e_reject=_evidence_value(evidence, down, False),
            p_promote=_evidence_value(evidence, up, True), p_reject=_evidence_value(evidence, down, True),
            delta_hat=None if math.isnan(delta) else float(delta), n=int(evidence.pair_n[p]),
            low=None if evidence.low is None else float(evidence.low[p]), high=None if evidence.high is None else float(evidence.high[p]),
            equivalent=bool(eq >= 0 and claims[eq] >= 0),
            e_equivalent=_evidence_value(evidence, eq, False), p_equivalent=_evidence_value(evidence, eq, True),
            top_up=[str(table.tasks[t]) for t in waits] if waits and action == "continue" else None,
        ))  # fmt: skip
    return out


def _ranks(iv: _FamilyInputs, evidence: Evidence, beats: np.ndarray) -> tuple[list[SystemRank], list[list[int]]]:
    """Ranks (simultaneous intervals from the rank claims) and tiers (from the family's own claims)."""
    means = evidence.means
    order = np.lexsort((np.arange(len(means)), -np.where(np.isnan(means), -np.inf, means)))
    groups = [] if iv.policy.family.kind == "baseline" else tiers(beats, order)
    tier_of = {s: t + 1 for t, group in enumerate(groups) for s in group}
    low, high = rank_intervals(evidence.rank_beats)
    rank = observed_ranks(means)
    ranks = [
        SystemRank(system=iv.systems[s], mean=None if math.isnan(means[s]) else float(means[s]), rank=int(rank[s]),
                   rank_low=int(low[s]), rank_high=int(high[s]), tier=tier_of.get(int(s), 0))
        for s in order
    ]  # fmt: skip
    return ranks, groups


def _family_record(iv: _FamilyInputs, built: _Table, hypotheses: FamilyHypotheses, evidence: Evidence) -> FamilyRecord:
    """The family record of the look, with its claim sentence."""
    policy, family = iv.policy, iv.policy.family
    decided, beats = _decided(hypotheses, evidence, family.control)
    best = best_system(beats) if family.control != "fdr" else None
    status, needed = _status(iv, hypotheses, decided, beats, evidence.final)
    pairs = _pairs(iv, built.table, hypotheses, evidence)
    ranks, groups = _ranks(iv, evidence, beats)
    by_pair = {(p.tested, p.baseline): p for p in pairs}
    tier_list = [
        FamilyTier(systems=[iv.systems[s] for s in g],
                   equivalent=len(g) > 1 and all(by_pair[(iv.systems[x], iv.systems[y])].equivalent for x in g for y in g if x != y))
        for g in groups
    ]  # fmt: skip
    estimand: Estimand = "task-distribution" if iv.engine == "one-look" else "planned-tasks"
    n_claims = int((evidence.claims >= 0).sum())
    a_prime = interval_alpha(family.control, policy.tail_cutoff, len(iv.systems), n_claims, hypotheses.n_hypotheses)
    record = FamilyRecord(
        kind=family.kind, baseline=family.baseline or None, control=family.control, level=policy.tail_cutoff,
        threshold=policy.threshold, equivalence=family.equivalence, estimand=estimand,
        estimand_note=estimand_note(estimand, built.table.n_planned), boundary=policy.decision.boundary,
        evidence=evidence.kind,  # type: ignore[arg-type]
        method=method_text(family.control, evidence.kind, hypotheses.n_hypotheses, policy.tail_cutoff),
        systems=list(iv.systems), n_hypotheses=hypotheses.n_hypotheses, n_claims=n_claims, n_planned=built.table.n_planned,
        look=evidence.look, publication_look=evidence.publication_look, final=evidence.final, status=status,  # type: ignore[arg-type]
        best=None if best is None else iv.systems[best], pairs=pairs, ranks=ranks, tiers=tier_list, needed=needed,
        interval_level=round(1.0 - 2.0 * a_prime, 15), interval_method=evidence.interval_method,
        warnings=[*built.notes, *_policy_notes(iv), *evidence.notes], excluded=built.excluded,
        policy_sha256=policy.sha256(), input_sha256=input_digest(iv.rows, iv.systems), stopwise_version=__version__,
        universe=built.universe, decided_at=datetime.now(UTC),
    )  # fmt: skip
    return record.model_copy(update={"claim": family_claim(record)})


def decide_family(
    rows: pd.DataFrame | OutcomeColumns,
    systems: list[str] | tuple[str, ...] | None = None,
    policy: Policy | None = None,
    *,
    universe: TaskUniverse | None = None,
    complete: bool = False,
    rng: np.random.Generator | int | None = None,
) -> FamilyRecord:
    """Decide a family of systems at one look, under one error level across all its claims.

    The policy's ``[family]`` section chooses the question (``kind``: every ordered pair, candidates against a
    baseline, or the best system), the control (``fwer``, ``fdr`` or ``none``), the publication look of ``fdr``
    and the equivalence margin; its ``tail_cutoff`` is the family's level and its ``threshold`` delta.

    * With ``universe`` (the planned tasks) the claims are about the mean over those tasks: under ``betting-wor``
      from every pair's betting capital on the shared planned order, valid at every look (a live evaluation calls
      this at each look and stops scheduling the systems not in ``needed``); under ``fixed-budget`` from the tails
      at the budget limit.
    * With ``complete=True`` and no universe (a finished record) the claims are about the benchmark's task
      distribution (the tasks as a sample, runs as draws), from order-free one-look e-values: on these tasks every
      non-zero gap is already certain, which is not what a leaderboard reader asks.

    Parameters
    ----------
    rows : OutcomeColumns or pandas.DataFrame
        Outcome rows (:func:`stopwise.read_outcomes`, :func:`stopwise.outcome_columns`); a frame is validated.
    systems : sequence of str, optional
        The family's systems (default: every system in the rows); at least two.
    policy : Policy, optional
        The policy (default: ``Policy()``, whose family is every ordered pair at FWER 5 %).
    universe : TaskUniverse, optional
        The planned tasks (ordered under ``betting-wor``).
    complete : bool, optional
        The rows are a finished record and no universe is given: the task-distribution estimand.
    rng : numpy.random.Generator or int, optional
        Generator of Monte-Carlo tails (fixed-budget ``bootstrap``); default ``policy.seed``.

    Returns
    -------
    FamilyRecord

    Raises
    ------
    ComparisonError
        Neither a universe nor ``complete``; a system absent or the baseline not in the family; a policy whose
        boundary, budget or treatment the family cannot honour (see the module docstring).

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare import decide_family
    >>> rates = {"A": 0.9, "B": 0.6, "C": 0.58, "D": 0.2}
    >>> rows = stopwise.outcome_columns(
    ...     [{"system": s, "task": f"t{i}", "outcome": int(i < r * 300)} for s, r in rates.items() for i in range(300)])
    >>> record = decide_family(rows, complete=True)
    >>> record.best, [t.systems for t in record.tiers], record.status
    ('A', [['A'], ['B', 'C'], ['D']], 'needs-more-tasks')
    >>> [(r.system, r.rank_low, r.rank_high) for r in record.ranks]
    [('A', 1, 1), ('B', 2, 3), ('C', 2, 3), ('D', 4, 4)]
    """
    iv = _decide_family_iv(rows, systems, policy, universe, complete, rng)
    chosen = iv.policy
    cells = outcome_cells(
        iv.rows, systems=iv.systems, statuses=chosen.statuses, group_column=chosen.coverage.group_column,
        exclude_flags=chosen.flags.exclude, count_flags=chosen.flags.count,
    )  # fmt: skip
    order = [list(cells.systems).index(s) for s in iv.systems]
    cells = dataclasses.replace(cells, outcome=cells.outcome[order], attempts=cells.attempts[order], systems=np.asarray(iv.systems))
    built = _complete_table(iv, cells) if iv.engine == "one-look" else _planned_table(iv, cells)
    built = dataclasses.replace(built, excluded=[*cells.excluded, *built.excluded])
    family = chosen.family
    hypotheses = family_hypotheses(
        len(iv.systems), family.kind, baseline=iv.baseline_index, threshold=chosen.threshold, equivalence=family.equivalence
    )
    ranks = family_hypotheses(len(iv.systems))
    if iv.engine == "one-look":
        evidence = one_look_evidence(built.table, hypotheses, ranks, chosen)
    elif iv.engine == "betting":
        evidence = betting_evidence(built.table, hypotheses, ranks, chosen)
    else:
        evidence = tails_evidence(built.table, hypotheses, ranks, chosen, iv.rng)
    return _family_record(iv, built, hypotheses, evidence)
