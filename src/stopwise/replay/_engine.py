"""The replay engine: every directed pair x task order x budget x threshold, as arrays.

Pairs that share task orders and prefix lengths form a plan; the counts of every prefix (lattice
values, groups, spending) are one matrix product of a prefix-membership matrix with per-task columns
of all the plan's pairs. Exact bootstrap tails are computed once per distinct count row across all
pairs of a policy and looked up; no Python loop runs per decision.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from stopwise._vocabulary import DEFAULT_BUDGETS as BUDGET_FRACTIONS
from stopwise.compare import (
    ABSTAIN,
    PROMOTE,
    REJECT,
    budget_task_count,
    cost_first_orders,
    coverage_aware_orders,
    coverage_enforced,
    exact_tails_from_counts,
    exact_wor_tails_from_counts,
    exceeds_threshold,
    lattice_threshold,
    neyman_from_draws,
    normal_tails_from_moments,
    required_counts,
    routine_actions,
    serfling_tails_from_moments,
    stratified_draws,
    uniform_orders,
)
from stopwise.errors import ComparisonError
from stopwise.records import ACTIONS, Policy
from stopwise.replay._checks import check_replay_args
from stopwise.replay._source import ReplayPair, ReplaySource

__all__ = ["CASE_COLUMNS", "DEFAULT_BUDGETS", "REPLAY_EXACT_MAX_SUPPORT", "PolicyReplay", "pair_orders", "replay_source_grid"]

DEFAULT_BUDGETS = np.array(BUDGET_FRACTIONS)
"""The paper's budget grid: 5 % to 95 % in 5-point steps (:data:`stopwise._vocabulary.DEFAULT_BUDGETS` as an array)."""
REPLAY_EXACT_MAX_SUPPORT = 1 << 13
"""Largest bootstrap-sum support 2 N L + 1 for which the replay computes exact tails; pairs on a
finer lattice use the Monte-Carlo bootstrap (with common random resampling counts, as a GEMM)."""

ProgressCallback = Callable[[int], None]


@dataclass(frozen=True)
class PolicyReplay:
    """Replay of one policy on one source.

    Attributes
    ----------
    cases : pandas.DataFrame
        One record per (pair, budget, threshold): action counts over the K orders and the counts
        the metrics are made of (see :func:`stopwise.replay.summarize`).
    decisions : pandas.DataFrame or None
        One row per (pair, order, budget, threshold) when requested.
    """

    cases: pd.DataFrame
    decisions: pd.DataFrame | None


def _stream(*parts: int) -> np.random.Generator:
    return np.random.default_rng([int(p) & 0xFFFFFFFF for p in parts])


def _digest(values: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(values).tobytes())


class Orders:
    """Task orders of a policy, cached by what they depend on."""

    def __init__(self, source: ReplaySource, policy: Policy, n_orders: int) -> None:
        self.source = source
        self.kind = policy.order.kind
        self.seed = policy.order.seed
        self.n_orders = n_orders
        self._shared: dict[int, np.ndarray] = {}
        self._draws: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def for_pair(self, pair: ReplayPair) -> np.ndarray:
        universe = _digest(pair.tasks)
        groups = self.source.groups[pair.tasks]
        if self.kind in ("uniform", "coverage-aware"):
            if universe not in self._shared:
                rng = _stream(self.seed, universe)
                if self.kind == "uniform":
                    self._shared[universe] = uniform_orders(pair.n_shared, self.n_orders, rng=rng)
                else:
                    self._shared[universe] = coverage_aware_orders(groups, self.n_orders, rng=rng)
            return self._shared[universe]
        if self.kind == "cost-first":
            cost = self.source.cost[pair.tested, pair.tasks]
            if not np.isfinite(cost).all():
                raise ComparisonError(
                    f"{self.source.name}: the cost-first order needs cost_usd of {self.source.systems[pair.tested]!r} "
                    f"on every shared task; {int((~np.isfinite(cost)).sum())} lack it"
                )
            key = universe ^ (pair.tested << 20)
            if key not in self._shared:
                self._shared[key] = cost_first_orders(cost, self.n_orders, rng=_stream(self.seed, universe, pair.tested))
            return self._shared[key]
        _, codes = np.unique(groups, return_inverse=True)
        sizes = np.bincount(codes)
        sigma = np.sqrt(np.maximum(np.bincount(codes, pair.differences**2) / sizes - (np.bincount(codes, pair.differences) / sizes) ** 2, 0.0))
        weights = sizes * sigma
        if weights.sum() == 0:
            weights = sizes.astype(float)
        if universe not in self._draws:
            self._draws[universe] = stratified_draws(codes, self.n_orders, rng=_stream(self.seed, universe))
        u, rank = self._draws[universe]
        return neyman_from_draws(codes, u, rank, weights)


def pair_orders(source: ReplaySource, pair: ReplayPair, policy: Policy, n_orders: int) -> np.ndarray:
    """The K task orders the replay uses for a pair, as positions into ``pair.tasks``.

    Orders depend on the policy's order kind and seed and on the pair's shared task set (and, for
    ``cost-first`` and ``neyman``, on the pair's own costs or differences), never on the threshold.

    Examples
    --------
    >>> from stopwise import Policy
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.replay import pair_orders, prepare_source
    >>> source = prepare_source(synthetic_benchmark(30, 2, rng=0), "synthetic")
    >>> pair_orders(source, source.pairs[0], Policy(), 3).shape
    (3, 30)
    """
    return Orders(source, policy, n_orders).for_pair(pair)


def _resource_prefix_lengths(
    source: ReplaySource, pair: ReplayPair, orders: np.ndarray, budgets: np.ndarray, measure: str, scope: str
) -> np.ndarray:
    """Observed task count k of every (order, budget) when the budget is a share of cost or time."""
    field = source.cost if measure == "cost_usd" else source.elapsed
    spend = field[pair.tested, pair.tasks].copy()
    if scope == "pair":
        spend = spend + field[pair.baseline, pair.tasks]
    if not np.isfinite(spend).all():
        tested, baseline = source.pair_label(pair)
        who = f"{tested!r}" + (f" and {baseline!r}" if scope == "pair" else "")
        raise ComparisonError(
            f"{source.name}: budget measure {measure} needs {measure} on every shared task of {who}; "
            f"{int((~np.isfinite(spend)).sum())} task(s) lack it"
        )
    cumulative = np.cumsum(spend[orders], axis=1)
    limits = budgets[None, :] * cumulative[:, -1:]
    return (cumulative[:, :, None] <= limits[:, None, :] * (1 + 1e-12)).sum(axis=1)


@dataclass
class _Plan:
    """Pairs that share task orders and prefix lengths, so their prefix sums share one matrix."""

    orders: np.ndarray
    k: np.ndarray
    pairs: list[ReplayPair]

    def prefix_sums(self) -> Callable[[np.ndarray], np.ndarray]:
        """A function mapping per-task columns (N, C) to their sums over every prefix (K, B, C).

        Plans shared by many pairs multiply by a membership matrix (P[(r, b), i] = 1 when task i
        lies in the prefix of order r at budget b), read once per batch of columns; a plan of one
        pair accumulates along its orders instead.
        """
        n_orders, n = self.orders.shape
        shape = self.k.shape
        if len(self.pairs) > 1:
            rank = np.empty_like(self.orders)
            np.put_along_axis(rank, self.orders, np.broadcast_to(np.arange(n), self.orders.shape), axis=1)
            membership = (rank[:, None, :] < self.k[:, :, None]).reshape(-1, n).astype(np.float32)

            def by_membership(columns: np.ndarray) -> np.ndarray:
                matrix = membership if columns.dtype == np.float32 else membership.astype(columns.dtype)
                return (matrix @ columns).reshape((*shape, columns.shape[1]))

            return by_membership
        rows = np.arange(n_orders)[:, None]

        def by_accumulation(columns: np.ndarray) -> np.ndarray:
            cumulative = np.zeros((n_orders, n + 1, columns.shape[1]), dtype=columns.dtype)
            np.cumsum(columns[self.orders], axis=1, out=cumulative[:, 1:, :])
            return cumulative[rows, self.k, :]

        return by_accumulation


def _plans(
    source: ReplaySource, policy: Policy, n_orders: int, budgets: np.ndarray, measure: str, scope: str
) -> list[_Plan]:
    orders_of = Orders(source, policy, n_orders)
    plans: dict[int, _Plan] = {}
    result: list[_Plan] = []
    for pair in source.pairs:
        orders = orders_of.for_pair(pair)
        if measure in ("task_fraction", "task_count"):
            key = id(orders)
            if key not in plans:
                k = np.array([budget_task_count(pair.n_shared, float(b)) for b in budgets])
                plans[key] = _Plan(orders, np.broadcast_to(k, (n_orders, len(budgets))).copy(), [])
                result.append(plans[key])
            plans[key].pairs.append(pair)
        else:
            result.append(_Plan(orders, _resource_prefix_lengths(source, pair, orders, budgets, measure, scope), [pair]))
    return result


def _coverage(groups: np.ndarray, prefix_sums: Callable[[np.ndarray], np.ndarray], k: np.ndarray, policy: Policy) -> np.ndarray:
    """Whether each prefix (order, budget) meets the policy's coverage rule (possible and satisfied)."""
    labels, codes = np.unique(groups, return_inverse=True)
    sizes = np.bincount(codes)
    onehot = np.zeros((len(groups), len(labels)), dtype=np.float32)
    onehot[np.arange(len(groups)), codes] = 1.0
    seen = np.rint(prefix_sums(onehot))
    required = required_counts(sizes, k, rule=policy.coverage.rule, slack=policy.coverage.slack)
    return (required.sum(axis=-1) <= k) & (seen >= required).all(axis=-1) & (k > 0)


@dataclass
class _PairWork:
    """Everything one pair contributes, before the exact tails are looked up."""

    pair: ReplayPair
    k: np.ndarray
    covered: np.ndarray
    exceeds: np.ndarray
    delta_hat: np.ndarray
    tail_method: str
    cost_fraction: np.ndarray
    elapsed_fraction: np.ndarray
    r_promote: np.ndarray | None = None
    r_reject: np.ndarray | None = None
    counts: np.ndarray | None = None
    monte_carlo: bool = False


def _spent(field: np.ndarray, pairs: list[ReplayPair], prefix_sums: Callable[[np.ndarray], np.ndarray], n_budgets: int) -> np.ndarray:
    """Mean over orders of each pair's tested-system spending share inside each prefix; NaN when absent."""
    spend = np.stack([field[p.tested, p.tasks] for p in pairs], axis=1)
    usable = np.isfinite(spend).all(axis=0) & (np.nansum(spend, axis=0) > 0)
    if not usable.any():
        return np.full((len(pairs), n_budgets), np.nan)
    share = np.where(usable, np.nan_to_num(spend) / np.where(usable, np.nansum(spend, axis=0), 1.0), 0.0)
    used = prefix_sums(share).mean(axis=0)
    return np.where(usable[None, :], used, np.nan).T


_GEMM_COLUMNS = 512


def _prefix_counts(prefix_sums: Callable[[np.ndarray], np.ndarray], pairs: list[ReplayPair]) -> list[np.ndarray | None]:
    """Lattice counts (K, B, 2L + 1) of every lattice pair.

    Pairs are batched so that the plan's prefix sums run once per batch of columns.
    """
    result: list[np.ndarray | None] = [None] * len(pairs)
    batch: list[tuple[int, np.ndarray]] = []

    def flush() -> None:
        if not batch:
            return
        stacked = np.concatenate([onehot for _, onehot in batch], axis=1)
        products = np.rint(prefix_sums(stacked)).astype(np.int32)
        start = 0
        for index, onehot in batch:
            width = onehot.shape[1]
            result[index] = products[:, :, start : start + width]
            start += width
        batch.clear()

    used = 0
    for index, pair in enumerate(pairs):
        if not pair.lattice:
            continue
        width = 2 * pair.lattice + 1
        onehot = np.zeros((pair.n_shared, width), dtype=np.float32)
        onehot[np.arange(pair.n_shared), np.rint(pair.differences * pair.lattice).astype(np.int64) + pair.lattice] = 1.0
        if used + width > _GEMM_COLUMNS:
            flush()
            used = 0
        batch.append((index, onehot))
        used += width
    flush()
    return result


def _plan_work(
    source: ReplaySource,
    plan: _Plan,
    policy: Policy,
    thresholds: np.ndarray,
) -> list[_PairWork]:
    """Prefix statistics of every pair of a plan (see :meth:`_Plan.prefix_sums`)."""
    prefix_sums = plan.prefix_sums()
    k = plan.k
    covered = _coverage(source.groups[plan.pairs[0].tasks], prefix_sums, k, policy)
    cost = _spent(source.cost, plan.pairs, prefix_sums, k.shape[1])
    elapsed = _spent(source.elapsed, plan.pairs, prefix_sums, k.shape[1])
    lattice_counts = _prefix_counts(prefix_sums, plan.pairs)
    off_lattice = [i for i, pair in enumerate(plan.pairs) if not pair.lattice]
    moments: dict[int, np.ndarray] = {}
    if off_lattice:
        columns = np.concatenate([np.stack([plan.pairs[i].differences, plan.pairs[i].differences ** 2], axis=1) for i in off_lattice], axis=1)
        products = prefix_sums(columns)
        moments = {i: products[:, :, 2 * j : 2 * j + 2] for j, i in enumerate(off_lattice)}
    work = []
    for index, pair in enumerate(plan.pairs):
        counts = lattice_counts[index]
        if counts is not None:
            lattice = pair.lattice
            support = np.arange(-lattice, lattice + 1)
            total_units = counts @ support
            total = total_units / lattice
            squares = (counts @ (support.astype(float) ** 2)) / lattice**2
            exceeds = total_units[..., None] > lattice_threshold(k[..., None], lattice, thresholds)
        else:
            total, squares = moments[index][..., 0], moments[index][..., 1]
            with np.errstate(invalid="ignore", divide="ignore"):
                exceeds = (total / k)[..., None] > thresholds
        with np.errstate(invalid="ignore", divide="ignore"):
            delta_hat = total / k
        item = _PairWork(pair, k, covered, exceeds, delta_hat, policy.tail_method, cost[index], elapsed[index])
        _tails(item, policy, counts, total, squares, thresholds)
        work.append(item)
    sampled = [item for item in work if item.monte_carlo]
    if sampled:
        _monte_carlo_tails(sampled, plan.orders, k, thresholds, policy.bootstrap_resamples, (policy.seed, _digest(plan.pairs[0].tasks)))
    return work


def _tails(
    item: _PairWork,
    policy: Policy,
    counts: np.ndarray | None,
    total: np.ndarray,
    squares: np.ndarray,
    thresholds: np.ndarray,
) -> None:
    """Fill the pair's tails (or its lattice counts, for the exact method resolved later)."""
    pair, k = item.pair, item.k
    method = policy.tail_method
    kf = k.astype(float)
    exact_ok = counts is not None and 2 * pair.n_shared * pair.lattice + 1 <= REPLAY_EXACT_MAX_SUPPORT
    if method == "none":
        item.tail_method = "none (forced: observed mean only)"
    elif method == "exact" and exact_ok:
        item.counts = counts
        item.tail_method = f"exact (lattice 1/{pair.lattice})"
    elif method in ("exact", "bootstrap"):
        item.monte_carlo = True  # resolved for the whole plan at once by _monte_carlo_tails
        fallback = "; exact unavailable: lattice too fine" if method == "exact" else ""
        item.tail_method = f"bootstrap (B={policy.bootstrap_resamples}{fallback})"
    elif method == "normal":
        item.r_promote, item.r_reject = normal_tails_from_moments(total, squares, kf, thresholds)
        item.tail_method = "paired normal"
    elif method == "exact-wor" and counts is not None and pair.lattice == 1:  # one cached table per (k, delta)
        r_promote, r_reject = exact_wor_tails_from_counts(counts[..., 2], counts[..., 0], k, pair.n_shared, thresholds)
        item.r_promote, item.r_reject = np.nan_to_num(r_promote, nan=1.0), np.nan_to_num(r_reject, nan=1.0)
        item.tail_method = f"exact-wor (N={pair.n_shared})"
    elif method == "exact-wor":  # not 0/1 differences: decide's fallback, the Serfling bound
        item.r_promote, item.r_reject = serfling_tails_from_moments(total, kf, pair.n_shared, thresholds)
        item.tail_method = f"serfling (N={pair.n_shared}; exact-wor unavailable: differences not 0/1)"
    else:
        item.r_promote, item.r_reject = serfling_tails_from_moments(total, kf, pair.n_shared, thresholds)
        item.tail_method = f"serfling (N={pair.n_shared})"


@functools.lru_cache(maxsize=512)
def _resample_counts(length: int, n_resamples: int, seed_parts: tuple[int, ...]) -> np.ndarray:
    """How often each of ``length`` positions is drawn in each of B resamples with replacement."""
    draws = _stream(*seed_parts, length).integers(0, length, size=(n_resamples, length))
    offsets = np.arange(n_resamples)[:, None] * length
    counts = np.bincount((draws + offsets).ravel(), minlength=n_resamples * length).reshape(n_resamples, length).astype(float)
    counts.setflags(write=False)
    return counts


_MONTE_CARLO_BATCH = 1 << 22


def _monte_carlo_tails(
    items: list[_PairWork],
    orders: np.ndarray,
    k: np.ndarray,
    thresholds: np.ndarray,
    n_resamples: int,
    seed_parts: tuple[int, ...],
) -> None:
    """Monte-Carlo R_promote of every prefix of every pair of a plan.

    For each prefix length, B resamples of the prefix positions (with replacement) are drawn once
    and shared by every order and pair of the plan (common random numbers); the resampled sums of
    all pairs are one matrix product of their prefix values with the resampling counts.
    """
    values = [np.rint(item.pair.differences * item.pair.lattice) if item.pair.lattice else item.pair.differences for item in items]
    for item in items:
        item.r_promote = np.full((*k.shape, len(thresholds)), np.nan)
    for length in np.unique(k[k > 0]):
        length = int(length)
        weights = _resample_counts(length, n_resamples, seed_parts)
        order_index, budget_index = np.nonzero(k == length)
        prefixes = orders[order_index, :length]
        per_batch = max(1, _MONTE_CARLO_BATCH // (len(order_index) * length))
        for start in range(0, len(items), per_batch):
            chunk = range(start, min(start + per_batch, len(items)))
            stacked = np.concatenate([values[i][prefixes] for i in chunk], axis=0)
            sums = (stacked @ weights.T).reshape(len(chunk), len(order_index), n_resamples)
            for offset, i in enumerate(chunk):
                lattice = items[i].pair.lattice
                if lattice:
                    below = np.rint(sums[offset])[:, :, None] <= lattice_threshold(length, lattice, thresholds)[None, None, :]
                else:
                    below = sums[offset][:, :, None] <= thresholds[None, None, :] * length + 1e-12 * length
                items[i].r_promote[order_index, budget_index] = below.mean(axis=1)  # type: ignore[index]
    for item in items:
        assert item.r_promote is not None
        item.r_reject = 1.0 - item.r_promote


def replay_source_grid(
    source: ReplaySource,
    policy: Policy,
    *,
    policy_name: str = "policy",
    thresholds: Sequence[float] = (0.0, 0.05, 0.10),
    budgets: Sequence[float] = tuple(DEFAULT_BUDGETS),
    n_orders: int = 500,
    measure: str | None = None,
    scope: str | None = None,
    keep_decisions: bool = False,
    progress: ProgressCallback | None = None,
) -> PolicyReplay:
    """Replay one policy over every directed pair of a source.

    At each budget b of the grid the policy sees only the prefix of each task order that fits
    in b (a task fraction, or a fraction of the pair's completed cost or elapsed time) and treats
    b as its budget limit; promote and reject are checked against the completed-record decision
    (promote iff Delta_full > delta).

    Parameters
    ----------
    source : ReplaySource
        The completed record (:func:`stopwise.replay.prepare_source`).
    policy : Policy
        Tail method and cutoff, coverage rule, order kind and seeds; its threshold is replaced by
        each of ``thresholds``.
    policy_name : str, optional
        Label of the policy in the records.
    thresholds : sequence of float, optional
        delta values (the paper: 0, 5 and 10 percentage points).
    budgets : sequence of float, optional
        Budget fractions in (0, 1].
    n_orders : int, optional
        K, task orders per pair (seeded, shared across thresholds and across policies with the same order).
    measure, scope : str, optional
        Budget measure (``task_fraction``, ``cost_usd``, ``elapsed_s``) and scope (``tested``,
        ``pair``); default from ``policy.budget``.
    keep_decisions : bool, optional
        Also return one row per decision (memory grows with pairs x orders x budgets).
    progress : callable, optional
        Called with the number of pairs done since the last call.

    Returns
    -------
    PolicyReplay

    Examples
    --------
    >>> from stopwise import Policy
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.replay import prepare_source, replay_source_grid
    >>> source = prepare_source(synthetic_benchmark(100, 3, rng=0), "synthetic")
    >>> run = replay_source_grid(source, Policy.paper(), thresholds=[0.0], budgets=[0.5, 1.0], n_orders=20)
    >>> run.cases[["tested", "baseline", "budget", "promote", "reject", "abstain"]].head(2)
          tested   baseline  budget  promote  reject  abstain
    0  system-01  system-02     0.5        0      20        0
    1  system-01  system-02     1.0        0      20        0
    """
    check_replay_args("replay_source_grid", thresholds=thresholds, budgets=budgets, n_orders=n_orders, measure=measure, scope=scope)
    thresholds_arr = np.asarray(thresholds, dtype=float)
    budgets_arr = np.asarray(budgets, dtype=float)
    measure = measure or policy.budget.measure
    scope = scope or policy.budget.scope
    work: list[_PairWork] = []
    for plan in _plans(source, policy, n_orders, budgets_arr, measure, scope):
        work.extend(_plan_work(source, plan, policy, thresholds_arr))
        if progress is not None:
            progress(len(plan.pairs))
    _resolve_exact(work, thresholds_arr)
    return _assemble(source, policy_name, policy, work, thresholds_arr, budgets_arr, n_orders, keep_decisions)


def _row_keys(counts: np.ndarray) -> np.ndarray:
    """Integer ids of count rows, equal for equal rows across every pair of a lattice."""
    flat = np.ascontiguousarray(counts.reshape(-1, counts.shape[-1]).astype(np.int64))
    base = int(flat.max()) + 1
    if float(base) ** flat.shape[1] < 2.0**62:
        return flat @ (base ** np.arange(flat.shape[1], dtype=np.int64))
    _, inverse = np.unique(flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel(), return_inverse=True)
    return inverse.astype(np.int64)


def _resolve_exact(work: list[_PairWork], thresholds: np.ndarray) -> None:
    """Compute exact tails once per distinct lattice-count row across all pairs, then look them up."""
    by_lattice: dict[int, list[_PairWork]] = {}
    for item in work:
        if item.counts is not None:
            by_lattice.setdefault(item.pair.lattice, []).append(item)
    for lattice, items in by_lattice.items():
        counts = np.concatenate([item.counts.reshape(-1, 2 * lattice + 1) for item in items])  # type: ignore[union-attr]
        _, first, inverse = np.unique(_row_keys(counts), return_index=True, return_inverse=True)
        tails = exact_tails_from_counts(counts[first], lattice, thresholds)
        start = 0
        for item in items:
            size = item.k.size
            item.r_promote = tails[inverse[start : start + size]].reshape((*item.k.shape, len(thresholds)))
            item.r_reject = 1.0 - item.r_promote
            item.counts = None
            start += size


CASE_COLUMNS = (
    "source",
    "policy",
    "threshold",
    "tested",
    "baseline",
    "budget",
    "n_shared",
    "delta_full",
    "positive",
    "orders",
    "promote",
    "reject",
    "abstain",
    "false_promotions",
    "false_rejections",
    "coverage_failures",
    "mean_observed",
    "tested_cost_fraction",
    "tested_elapsed_fraction",
    "tail_method",
)
"""Columns of the per-pair decision records (one row per pair, threshold and budget)."""


def _assemble(
    source: ReplaySource,
    policy_name: str,
    policy: Policy,
    work: list[_PairWork],
    thresholds: np.ndarray,
    budgets: np.ndarray,
    n_orders: int,
    keep_decisions: bool,
) -> PolicyReplay:
    forced = policy.tail_method == "none"
    enforce = coverage_enforced(policy.coverage.rule)
    columns: dict[str, list[np.ndarray]] = {name: [] for name in CASE_COLUMNS}
    decision_frames: list[pd.DataFrame] = []
    n_t, n_b = len(thresholds), len(budgets)
    for item in work:
        pair = item.pair
        tested, baseline = source.pair_label(pair)
        gate = (item.k > 0) & (item.covered | (not enforce))
        r_promote = item.r_promote if item.r_promote is not None else np.ones(item.exceeds.shape)
        r_reject = item.r_reject if item.r_reject is not None else np.ones(item.exceeds.shape)
        actions = routine_actions(
            gate[..., None], True, item.exceeds, r_promote, r_reject, tail_cutoff=policy.tail_cutoff, forced=forced
        )
        positive = np.array([exceeds_threshold(pair.differences, pair.lattice, float(t)) for t in thresholds])
        promote = (actions == PROMOTE).sum(axis=0).T  # thresholds x budgets
        reject = (actions == REJECT).sum(axis=0).T
        final = (actions == PROMOTE) | (actions == REJECT)
        uncovered = (final & ~item.covered[..., None]).sum(axis=0).T
        shape = (n_t, n_b)
        columns["source"].append(np.full(shape, source.name, dtype=object))
        columns["policy"].append(np.full(shape, policy_name, dtype=object))
        columns["threshold"].append(np.broadcast_to(thresholds[:, None], shape))
        columns["tested"].append(np.full(shape, tested, dtype=object))
        columns["baseline"].append(np.full(shape, baseline, dtype=object))
        columns["budget"].append(np.broadcast_to(budgets[None, :], shape))
        columns["n_shared"].append(np.full(shape, pair.n_shared))
        columns["delta_full"].append(np.full(shape, float(pair.differences.mean())))
        columns["positive"].append(np.broadcast_to(positive[:, None], shape))
        columns["orders"].append(np.full(shape, n_orders))
        columns["promote"].append(promote)
        columns["reject"].append(reject)
        columns["abstain"].append((actions == ABSTAIN).sum(axis=0).T)
        columns["false_promotions"].append(np.where(positive[:, None], 0, promote))
        columns["false_rejections"].append(np.where(positive[:, None], reject, 0))
        columns["coverage_failures"].append(uncovered)
        columns["mean_observed"].append(np.broadcast_to(item.k.mean(axis=0)[None, :], shape))
        columns["tested_cost_fraction"].append(np.broadcast_to(item.cost_fraction[None, :], shape))
        columns["tested_elapsed_fraction"].append(np.broadcast_to(item.elapsed_fraction[None, :], shape))
        columns["tail_method"].append(np.full(shape, item.tail_method, dtype=object))
        if keep_decisions:
            decision_frames.append(_decision_rows(source.name, policy_name, tested, baseline, item, actions, r_promote, r_reject, thresholds, budgets))
    cases = pd.DataFrame({name: np.concatenate([c.ravel() for c in parts]) if parts else [] for name, parts in columns.items()})
    decisions = pd.concat(decision_frames, ignore_index=True) if decision_frames else None
    return PolicyReplay(cases=cases, decisions=decisions)


def _decision_rows(
    source: str,
    policy_name: str,
    tested: str,
    baseline: str,
    item: _PairWork,
    actions: np.ndarray,
    r_promote: np.ndarray,
    r_reject: np.ndarray,
    thresholds: np.ndarray,
    budgets: np.ndarray,
) -> pd.DataFrame:
    n_orders, n_budgets, n_thresholds = actions.shape
    order, budget, threshold = np.meshgrid(np.arange(n_orders), np.arange(n_budgets), np.arange(n_thresholds), indexing="ij")
    computed = item.r_promote is not None
    return pd.DataFrame(
        {
            "source": source,
            "policy": policy_name,
            "tested": tested,
            "baseline": baseline,
            "threshold": thresholds[threshold.ravel()],
            "budget": budgets[budget.ravel()],
            "order": order.ravel(),
            "n_observed": np.broadcast_to(item.k[..., None], actions.shape).ravel(),
            "delta_hat": np.broadcast_to(item.delta_hat[..., None], actions.shape).ravel(),
            "r_promote": r_promote.ravel() if computed else np.nan,
            "r_reject": r_reject.ravel() if computed else np.nan,
            "coverage_ok": np.broadcast_to(item.covered[..., None], actions.shape).ravel(),
            "action": pd.Categorical.from_codes(actions.ravel(), list(ACTIONS)),
        }
    )
