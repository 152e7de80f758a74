"""Replay of families: the realised family-wise error, false-discovery proportion and power, by budget.

A completed record is replayed as a family: every system runs the same task order (the per-pair live replay's
seeded orders, :func:`stopwise.replay.pair_orders`: one order per replication, shared by all pairs, as a live
family runs one planned order), every evidence row's betting capital is computed along it
(:func:`stopwise.compare.betting_paths`), and each control (:func:`stopwise.compare.claim_looks`) makes its
claims look by look:

* ``none`` -- each claim at 1/a on its own (a leaderboard assembled from per-pair records);
* ``fdr`` -- e-BH on the processes stopped as they enter its set; its claims by budget b are the set published
  at the publication look b (the set only grows, so one pass gives every b);
* ``fwer`` -- closed e-testing at every look, claims accumulating;
* ``bonferroni`` -- for reference, each claim at M/a on its running maximum (Ville's bound, Bonferroni).

A claim is false when its null holds on the complete record (the truth of the per-pair replays: "A beats B by
more than delta" is false when Delta_full <= delta). Per budget b, over the K orders: the family-wise error rate
(share of orders with at least one false claim by b tasks), the false discovery rate (mean false-discovery
proportion, 0 without a claim) and the power (mean share of the false nulls claimed by b). The guarantees to check
against: FWER <= a for ``fwer`` at every b, FDR <= a for ``fdr`` at each publication look b, with
``SE = sqrt(a (1 - a) / K)``.

:func:`family_claim_runs` is the kernel: it takes outcomes already in look order (R replications, k systems,
T looks), so the simulations of seeded families (new populations per replication) use it too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from stopwise._version import __version__
from stopwise.compare import (
    FamilyHypotheses,
    betting_paths,
    budget_task_count,
    claim_looks,
    coverage_enforced,
    family_hypotheses,
    top_up_ends,
)
from stopwise.errors import ArgumentError, ComparisonError
from stopwise.records import Policy
from stopwise.replay._engine import pair_orders
from stopwise.replay._live import _coverage_gate
from stopwise.replay._source import ReplaySource

__all__ = ["FAMILY_REPLAY_CONTROLS", "FamilyReplay", "family_claim_runs", "family_error_rates", "replay_family"]

FAMILY_REPLAY_CONTROLS: tuple[str, ...] = ("none", "fdr", "fwer", "bonferroni")
"""The controls a family replay compares: the policy's three and Bonferroni on Ville's bound for reference."""
FAMILY_BUDGETS: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
"""The default budgets (fractions of the tasks) of the family replay's table."""


def _claims_of(log_e: np.ndarray, control: str, alpha: float, opposite: np.ndarray, gate: np.ndarray | None) -> np.ndarray:
    if control == "bonferroni":
        return claim_looks(log_e, alpha / log_e.shape[-2], "none", opposite=opposite, gate=gate)
    return claim_looks(log_e, alpha, control, opposite=opposite, gate=gate)


def family_claim_runs(
    ordered: np.ndarray,
    hypotheses: FamilyHypotheses,
    *,
    population_size: int,
    alpha: float = 0.05,
    controls: Sequence[str] = FAMILY_REPLAY_CONTROLS,
    group_codes: np.ndarray | None = None,
    group_sizes: np.ndarray | None = None,
    gate: np.ndarray | None = None,
    announce: np.ndarray | None = None,
    batch: int = 8,
) -> dict[str, np.ndarray]:
    """The look at which each control first claims each hypothesis, in every replication.

    Parameters
    ----------
    ordered : numpy.ndarray, shape (R, k, T)
        Each replication's outcomes of the k systems in its look order (T looks, at most N).
    hypotheses : FamilyHypotheses
        The family (:func:`stopwise.compare.family_hypotheses`).
    population_size : int
        N, the tasks each replication's order runs through.
    alpha : float
        The family's level a.
    controls : sequence of str
        Among :data:`FAMILY_REPLAY_CONTROLS`.
    group_codes : numpy.ndarray of int, shape (R, T), optional
        Each replication's group codes in look order, with ``group_sizes``: the stratified process (orders that are
        not uniformly random); None: the pooled process.
    group_sizes : numpy.ndarray of int, optional
        n_g of each group.
    gate : numpy.ndarray of bool, shape (R, T), optional
        Looks whose prefix meets the coverage rule (a rejection waits for the next one); None: no gate.
    announce : numpy.ndarray of int, shape (R, T), optional
        The look index at which a rejection at each look is announced (the end of its top-up; -1: never); None: at
        once.
    batch : int
        Replications per vectorised step (memory about ``batch x rows x T x 60`` bytes).

    Returns
    -------
    dict of str to numpy.ndarray of int, shape (R, M)
        0-based claim look per control (-1: no claim).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import family_hypotheses
    >>> from stopwise.replay import family_claim_runs
    >>> ordered = np.stack([np.ones((3, 200)), np.zeros((3, 200))], axis=1)  # A always solves, B never
    >>> runs = family_claim_runs(ordered, family_hypotheses(2), population_size=200, controls=["fwer"])
    >>> runs["fwer"].tolist()  # "A beats B" at look index 7 (8 tasks) in every replication, "B beats A" never
    [[7, -1], [7, -1], [7, -1]]
    """
    unknown = [c for c in controls if c not in FAMILY_REPLAY_CONTROLS]
    if unknown or not controls:
        raise ArgumentError(f"`controls` must be among {', '.join(FAMILY_REPLAY_CONTROLS)}; got {list(controls)!r}")
    values = np.asarray(ordered, dtype=float)
    n_rep, _, looks = values.shape
    a, b = hypotheses.rows[:, 0], hypotheses.rows[:, 1]
    out = {c: np.full((n_rep, hypotheses.n_hypotheses), -1, dtype=np.int64) for c in controls}
    for lo in range(0, n_rep, max(1, int(batch))):
        part = slice(lo, min(lo + max(1, int(batch)), n_rep))
        block = values[part]
        differences = (block[:, a] - block[:, b]).reshape(-1, looks)
        codes = None if group_codes is None else np.repeat(group_codes[part], len(a), axis=0)
        paths = betting_paths(
            differences, np.tile(hypotheses.thresholds, block.shape[0]), population_size=population_size,
            group_codes=codes, group_sizes=group_sizes, alpha=alpha,
        )  # fmt: skip
        shape = (block.shape[0], len(a), looks)
        log_e = hypotheses.log_e(paths.log_promote.reshape(shape), paths.log_reject.reshape(shape))
        for control in controls:
            first = _claims_of(log_e, control, alpha, hypotheses.opposite, None if gate is None else gate[part])
            if announce is not None:
                first = np.where(first >= 0, np.take_along_axis(announce[part], np.maximum(first, 0), axis=1), -1)
            out[control][part] = first
    return out


def family_error_rates(claims: np.ndarray, null_true: np.ndarray, looks: Sequence[int]) -> pd.DataFrame:
    """Per look count: claims, power, family-wise error rate and false discovery rate over the replications.

    Parameters
    ----------
    claims : numpy.ndarray of int, shape (R, M)
        0-based claim looks (-1: none), e.g. one control of :func:`family_claim_runs`.
    null_true : numpy.ndarray of bool, shape (M,) or (R, M)
        Whether each hypothesis's null holds (per replication when populations differ).
    looks : sequence of int
        Tasks observed: a claim counts by ``n`` tasks when its look index is below n.

    Returns
    -------
    pandas.DataFrame
        One row per look count: ``looks``, ``claims`` (mean count), ``power`` (mean share of the false nulls
        claimed; NaN without false nulls), ``fwer`` (share of replications with a false claim), ``fwer_se``,
        ``fdr`` (mean false-discovery proportion), ``fdr_se``.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.replay import family_error_rates
    >>> claims = np.array([[0, -1, 5], [2, 3, -1]])
    >>> family_error_rates(claims, np.array([False, True, False]), [4])[["claims", "power", "fwer", "fdr"]].round(3).values.tolist()
    [[1.5, 0.5, 0.5, 0.25]]
    """
    nulls = np.broadcast_to(np.asarray(null_true, dtype=bool), claims.shape)
    positives = (~nulls).sum(axis=1)
    rows = []
    for n in looks:
        made = (claims >= 0) & (claims < n)
        false = (made & nulls).sum(axis=1)
        count = made.sum(axis=1)
        fdp = np.where(count > 0, false / np.maximum(count, 1), 0.0)
        power = np.where(positives > 0, (made & ~nulls).sum(axis=1) / np.maximum(positives, 1), np.nan)
        fwer = float((false > 0).mean())
        k = len(claims)
        rows.append({
            "looks": int(n), "claims": float(count.mean()), "power": float(np.nanmean(power)) if np.isfinite(power).any() else math.nan,
            "fwer": fwer, "fwer_se": math.sqrt(fwer * (1 - fwer) / k), "fdr": float(fdp.mean()), "fdr_se": float(fdp.std(ddof=1) / math.sqrt(k)) if k > 1 else 0.0,
        })  # fmt: skip
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class FamilyReplay:
    """The outcome of a family replay.

    Attributes
    ----------
    summary : pandas.DataFrame
        One row per (source, control, budget): ``source``, ``control``, ``threshold``, ``budget``, ``looks``,
        ``orders``, ``hypotheses`` (M), ``positives`` (false nulls), ``claims``, ``power``, ``fwer``, ``fwer_se``,
        ``fdr``, ``fdr_se``, ``bound`` (a + 2 sqrt(a (1 - a) / K)).
    settings : dict
        Policy digest, family, orders, budgets, process, seconds and the version.
    """

    summary: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """The summary in readable units (percent) for Markdown and the console."""
        shown = self.summary
        return pd.DataFrame({
            "source": shown["source"], "control": shown["control"], "budget": shown["budget"].map(lambda v: f"{100 * v:g} %"),
            "claims": shown["claims"].map(lambda v: f"{v:.1f}"), "power": shown["power"].map(lambda v: f"{100 * v:.1f} %"),
            "FWER": [f"{100 * f:.1f} % ± {100 * s:.1f}" for f, s in zip(shown["fwer"], shown["fwer_se"], strict=True)],
            "FDR": [f"{100 * f:.2f} % ± {100 * s:.2f}" for f, s in zip(shown["fdr"], shown["fdr_se"], strict=True)],
        })  # fmt: skip


def _family_orders(source: ReplaySource, policy: Policy, n_orders: int) -> tuple[np.ndarray, np.ndarray]:
    """The shared orders (every pair's replay orders, which a family needs equal) and the common tasks."""
    if not source.pairs:
        raise ComparisonError(f"{source.name}: no directed pair to replay")
    tasks = source.pairs[0].tasks
    if any(not np.array_equal(pair.tasks, tasks) for pair in source.pairs):
        raise ComparisonError(
            f"{source.name}: the family replay needs every system on the same tasks (one order shared by all pairs); "
            "the kept systems' task sets differ: raise min_coverage or drop the systems with missing tasks"
        )
    return pair_orders(source, source.pairs[0], policy, n_orders), tasks


def _process(source: ReplaySource, tasks: np.ndarray, orders: np.ndarray, policy: Policy) -> dict[str, Any]:
    """The process and announcement of the policy's design on these orders (see :func:`family_claim_runs`)."""
    labels, codes = np.unique(source.groups[tasks], return_inverse=True)
    sizes = np.bincount(codes, minlength=len(labels))
    coverage = coverage_enforced(policy.coverage.rule)
    if policy.order.kind == "uniform":
        if coverage and policy.betting.design == "top-up":
            return {"process": "pooled, coverage by top-up", "announce": top_up_ends(codes[orders], sizes, rule=policy.coverage.rule, slack=policy.coverage.slack) - 1}
        if coverage:
            return {"process": "pooled, coverage gate", "announce": None, "gate": _coverage_gate(source.groups[tasks], orders, policy)}
        return {"process": "pooled", "announce": None}
    if policy.order.kind != "coverage-aware":
        raise ArgumentError(f"the family replay supports uniform and coverage-aware orders; the policy has {policy.order.kind!r}")
    gate = _coverage_gate(source.groups[tasks], orders, policy) if coverage else None
    return {"process": "stratified", "announce": None, "gate": gate, "group_codes": codes[orders], "group_sizes": sizes}


def replay_family(
    source: ReplaySource,
    policy: Policy | None = None,
    *,
    n_orders: int = 100,
    budgets: Sequence[float] = FAMILY_BUDGETS,
    controls: Sequence[str] = FAMILY_REPLAY_CONTROLS,
    batch_orders: int = 8,
    progress: Callable[[int, int], None] | None = None,
) -> FamilyReplay:
    """Replay a completed record as one family under each control (see the module docstring).

    Parameters
    ----------
    source : ReplaySource
        The completed record (:func:`stopwise.replay.prepare_source`); every kept system on the same tasks.
    policy : Policy, optional
        Its ``[family]`` kind, threshold, equivalence, level, order kind and seed, coverage rule and design
        (default: ``Policy()`` -- a uniform order -- with no coverage rule, the per-pair replay's pooled design).
    n_orders : int
        K, the shared orders (the per-pair replay's seeded orders of the policy).
    budgets : sequence of float
        Fractions of the tasks at which the errors and power are read (the publication looks of ``fdr``).
    controls : sequence of str
        Among :data:`FAMILY_REPLAY_CONTROLS`.
    batch_orders : int
        Orders per vectorised step (bounds memory: about ``batch_orders x M x T x 40`` bytes).
    progress : callable, optional
        ``progress(done, total)`` in orders.

    Examples
    --------
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.replay import prepare_source, replay_family
    >>> result = replay_family(prepare_source(synthetic_benchmark(200, 4, rng=0), "synthetic"), n_orders=20, budgets=[0.5])
    >>> sorted(result.summary["control"]), int(result.summary["hypotheses"].iloc[0])
    (['bonferroni', 'fdr', 'fwer', 'none'], 12)
    """
    policy = policy if policy is not None else Policy.model_validate({"order": {"kind": "uniform"}, "coverage": {"rule": "none"}})
    if int(n_orders) != n_orders or n_orders < 1:
        raise ArgumentError(f"`n_orders` must be a positive integer; got {n_orders!r}")
    if not budgets or any(not 0.0 < b <= 1.0 for b in budgets):
        raise ArgumentError(f"`budgets` must be fractions in (0, 1]; got {list(budgets)!r}")
    orders, tasks = _family_orders(source, policy, int(n_orders))
    n_tasks, family = len(tasks), policy.family
    systems = list(map(str, source.systems))
    baseline = systems.index(family.baseline) if family.kind == "baseline" else None
    hypotheses = family_hypotheses(len(systems), family.kind, baseline=baseline, threshold=policy.threshold, equivalence=family.equivalence)
    outcomes = source.outcomes[:, tasks]
    means = outcomes.mean(axis=1)
    null_true = hypotheses.null_holds(means[:, None] - means[None, :])
    looks = [budget_task_count(n_tasks, b) for b in budgets]
    horizon = max(looks)
    design = _process(source, tasks, orders, policy)
    runs: dict[str, list[np.ndarray]] = {c: [] for c in controls}
    step = max(1, int(batch_orders))
    for lo in range(0, len(orders), step):
        chunk = orders[lo : lo + step, :horizon]
        announce = None if design["announce"] is None else design["announce"][lo : lo + step, :horizon]
        if announce is not None:
            announce = np.where(announce < horizon, announce, -1)
        codes, gate = design.get("group_codes"), design.get("gate")
        found = family_claim_runs(
            outcomes[:, chunk].transpose(1, 0, 2), hypotheses, population_size=n_tasks, alpha=policy.tail_cutoff, controls=controls,
            group_codes=None if codes is None else codes[lo : lo + step, :horizon], group_sizes=design.get("group_sizes"),
            gate=None if gate is None else gate[lo : lo + step, :horizon], announce=announce, batch=step,
        )  # fmt: skip
        for control in controls:
            runs[control].append(found[control])
        if progress is not None:
            progress(min(lo + step, len(orders)), len(orders))
    bound = policy.tail_cutoff + 2 * math.sqrt(policy.tail_cutoff * (1 - policy.tail_cutoff) / len(orders))
    parts = []
    for control in controls:
        rates = family_error_rates(np.concatenate(runs[control]), null_true, looks)
        rates.insert(0, "budget", [float(b) for b in budgets])
        rates.insert(0, "threshold", policy.threshold)
        rates.insert(0, "control", control)
        rates.insert(0, "source", source.name)
        rates["orders"], rates["hypotheses"], rates["positives"], rates["bound"] = len(orders), hypotheses.n_hypotheses, int((~null_true).sum()), bound
        parts.append(rates)
    settings = {
        "stopwise_version": __version__, "policy_sha256": policy.sha256(), "family": family.model_dump(), "threshold": policy.threshold,
        "alpha": policy.tail_cutoff, "n_orders": int(n_orders), "budgets": [float(b) for b in budgets], "process": design["process"],
        "truth": "a claim is false when its null holds on the complete record (Delta_full of the common tasks)",
    }  # fmt: skip
    return FamilyReplay(summary=pd.concat(parts, ignore_index=True), settings=settings)
