"""Live-look replay: a look after every task (or every k tasks), the first final action and its time.

Each directed pair of a completed record is replayed along K task orders (the same orders as the
budget-grid replay, :func:`stopwise.replay.pair_orders`); at every look the rule sees the outcomes
of the prefix so far and the run stops at the first promote or reject. Two rules are replayed:

* ``betting-wor`` — the anytime-valid betting boundary (:func:`stopwise.compare.betting_paths`):
  promote at the first look at which the promote capital has reached 1/a, reject likewise. With the
  coverage rule and the policy's ``[betting] design = "top-up"`` (the default) the top-up design
  (:mod:`stopwise.compare._topup`): the pooled process on uniformly random orders pi (the orders of the
  policy with ``[order] kind = "uniform"``, the same seed), and the run stops when the top-up after the
  crossing look ends (:func:`stopwise.compare._topup.top_up_ends`, a (K, N) table per plan, so every
  (pair, order, look) stays an array computation). Otherwise, under a uniform order the pooled process
  is used; under any other order the stratified (per-group) process over the pair's task groups.
* ``fixed-budget`` — the paper's primary rule re-declared at every look (the only way to stop early
  with a fixed-budget rule): at each look the prefix is treated as the budget limit and the routine
  of Fig. 2 runs with exact bootstrap tails (paired normal tails where the pair's lattice is too fine
  for exact tails). It is valid for one look; repeated looks inflate its errors.

Both rules need the coverage rule to hold at the look when the policy enforces it (every coverage rule but
``none``: ``proportional``, ``tolerant``, ``every-group``). A decision is wrong when it is the opposite of the completed record's truth,
defined as in the budget-grid replay (ParEvalLayer section IV-A): the pair is positive iff
Delta_full > delta on the complete shared task set, so a promote of a non-positive pair or a reject
of a positive pair is wrong. The per-pair guarantee of the betting rule is ``wrong rate <= a``; over
K orders the rate is compared with ``a + 2 SE``, ``SE = sqrt(a (1 - a) / K)``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stopwise._version import __version__
from stopwise._vocabulary import LIVE_RULES
from stopwise.compare import (
    PROMOTE,
    REJECT,
    betting_paths,
    coverage_enforced,
    exact_tails_from_counts,
    exceeds_threshold,
    in_order_ends,
    lattice_threshold,
    normal_tails_from_moments,
    required_counts,
    resolve_strategy,
    routine_actions,
    top_up_ends,
)
from stopwise.errors import ArgumentError
from stopwise.records import Policy
from stopwise.replay._checks import check_replay_args
from stopwise.replay._engine import REPLAY_EXACT_MAX_SUPPORT, Orders
from stopwise.replay._settings import LiveReplaySettings
from stopwise.replay._source import ReplayPair, ReplaySource

__all__ = ["LIVE_RULES", "LiveReplay", "live_looks", "replay_looks", "replay_source_looks"]

CURVE_BUDGETS = np.round(np.arange(1, 101) / 100, 2)
"""Budget fractions of the resolved-by-budget curve."""
_NONE = -1


def live_looks(n_tasks: int, every: int | str = "every") -> np.ndarray:
    """Observed task counts at which a look happens (1-based, always ending at N).

    Parameters
    ----------
    n_tasks : int
        N.
    every : int or "every"
        A look after every task, or after every k tasks.

    Examples
    --------
    >>> from stopwise.replay import live_looks
    >>> live_looks(10, 4).tolist(), live_looks(3).tolist()
    ([4, 8, 10], [1, 2, 3])
    """
    step = 1 if every == "every" else every
    if isinstance(step, str) or int(step) != step or step < 1:
        raise ArgumentError(f"looks must be 'every' or a positive integer; got {every!r}")
    looks = np.arange(int(step), n_tasks + 1, int(step))
    if len(looks) == 0 or looks[-1] != n_tasks:
        looks = np.r_[looks, n_tasks]
    return looks.astype(np.int64)


@dataclass(frozen=True)
class _Stops:
    """First final action of every (pair, order): action code (PROMOTE, REJECT or -1) and look count."""

    action: np.ndarray
    stop: np.ndarray


def _coverage_gate(groups: np.ndarray, orders: np.ndarray, policy: Policy) -> np.ndarray:
    """(K, N) bool: the prefix of length k+1 of each order meets the policy's coverage rule."""
    _, codes = np.unique(groups, return_inverse=True)
    sizes = np.bincount(codes)
    n = len(groups)
    k = np.arange(1, n + 1)
    required = required_counts(sizes, k, rule=policy.coverage.rule, slack=policy.coverage.slack)
    possible = required.sum(axis=1) <= k
    ordered = codes[orders]
    ok = np.broadcast_to(possible, orders.shape).copy()
    for g in range(len(sizes)):
        ok &= np.cumsum(ordered == g, axis=1) >= required[None, :, g]
    return ok


_BLOCKS = (0.1, 0.25, 0.5, 1.0)
"""Prefix lengths (fractions of N) after which runs already stopped are dropped from the batch."""


@dataclass(frozen=True)
class _BettingPlan:
    """What every betting replay of one plan (pairs sharing their task orders) and threshold shares.

    Attributes
    ----------
    orders : numpy.ndarray
        (K, N) task orders, positions into each pair's shared tasks.
    threshold : float
        delta.
    codes, sizes : numpy.ndarray or None
        (K, N) group code of each ordered task and the (G,) group sizes: the stratified process; None
        for the pooled one.
    gate : numpy.ndarray or None
        (K, N) whether the prefix of length k+1 meets the coverage rule; None when it is not enforced.
    looks : numpy.ndarray
        Observed task counts at which a look happens.
    alpha : float
        The cutoff a: a test crosses when its capital reaches 1/a.
    strategy : str
        Betting strategy (see :func:`stopwise.compare.betting_paths`).
    """

    orders: np.ndarray
    threshold: float
    codes: np.ndarray | None
    sizes: np.ndarray | None
    gate: np.ndarray | None
    looks: np.ndarray
    alpha: float
    strategy: str


def _betting_stops(differences: np.ndarray, rows: np.ndarray, plan: _BettingPlan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """First betting action and look of each row, and whether both tests crossed first at that look.

    Row r replays pair ``rows[r, 0]`` (a row of ``differences``, (P, N)) along order ``rows[r, 1]`` (a
    row of ``plan.orders``, (K, N); ``plan.codes`` and ``plan.gate`` are (K, N) per order). A row that has not
    stopped by the look at N takes the certain answer there, as ``decide`` does (the mean is then known exactly:
    reject when it is at most delta, else promote). The boundary
    at a look depends only on the prefix, so rows are processed on growing prefixes (:data:`_BLOCKS`),
    gathering only the prefix, and rows that have stopped are dropped before the next, longer prefix.
    """
    orders, codes, gate, looks, alpha = plan.orders, plan.codes, plan.gate, plan.looks, plan.alpha
    n_tasks = orders.shape[1]
    n_rows = rows.shape[0]
    action = np.full(n_rows, _NONE, dtype=np.int64)
    stop = np.full(n_rows, _NONE, dtype=np.int64)
    tie = np.zeros(n_rows, dtype=bool)
    active = np.arange(n_rows)
    level = np.log(1.0 / alpha)
    done = 0
    for fraction in _BLOCKS:
        end = n_tasks if fraction >= 1.0 else max(1, math.ceil(fraction * n_tasks))
        inside = looks[(looks > done) & (looks <= end)]
        if len(inside) == 0 or len(active) == 0:
            continue
        order_rows = rows[active, 1]
        prefix = orders[order_rows, :end]
        paths = betting_paths(
            np.take_along_axis(differences[rows[active, 0]], prefix, axis=1),
            plan.threshold,
            population_size=n_tasks,
            group_codes=None if codes is None else codes[order_rows, :end],
            group_sizes=plan.sizes,
            strategy=plan.strategy,
            alpha=alpha,
        )
        if gate is None:
            ok_p = paths.log_promote[:, inside - 1] >= level
            ok_r = paths.log_reject[:, inside - 1] >= level
        else:
            ok_p, ok_r = paths.crossed(alpha)
            sub_gate = gate[order_rows, :end]
            ok_p = (ok_p & sub_gate)[:, inside - 1]
            ok_r = (ok_r & sub_gate)[:, inside - 1]
        hit_p, hit_r = ok_p.any(axis=1), ok_r.any(axis=1)
        at_p = np.where(hit_p, inside[np.argmax(ok_p, axis=1)], _NONE)
        at_r = np.where(hit_r, inside[np.argmax(ok_r, axis=1)], _NONE)
        promote_first = hit_p & (~hit_r | (at_p <= at_r))
        action[active] = np.where(promote_first, PROMOTE, np.where(hit_r, REJECT, _NONE))
        stop[active] = np.where(promote_first, at_p, np.where(hit_r, at_r, _NONE))
        tie[active] = hit_p & hit_r & (at_p == at_r)
        active = active[~(hit_p | hit_r)]
        done = end
    if len(active) and n_tasks in looks:  # the complete record: the mean is known exactly, its answer certain
        total = differences[rows[active, 0]].sum(axis=1)
        above = total > n_tasks * plan.threshold + 1e-9 * n_tasks
        action[active] = np.where(above, PROMOTE, REJECT)
        stop[active] = n_tasks
    return action, stop, tie


class _FixedTails:
    """Exact bootstrap R_promote of lattice-count rows, computed once per distinct row for all thresholds."""

    def __init__(self, thresholds: np.ndarray) -> None:
        self.thresholds = thresholds
        self.cache: dict[int, dict[bytes, np.ndarray]] = {}

    def r_promote(self, counts: np.ndarray, lattice: int) -> np.ndarray:
        """R_promote of each count row and threshold, shape ``counts.shape[:-1] + (n_thresholds,)``."""
        flat = np.ascontiguousarray(counts.reshape(-1, counts.shape[-1]).astype(np.int32))
        keys = flat.view(np.dtype((np.void, flat.itemsize * flat.shape[1]))).ravel()
        unique, inverse = np.unique(keys, return_inverse=True)
        table = self.cache.setdefault(lattice, {})
        missing = [i for i, key in enumerate(unique) if key.tobytes() not in table]
        if missing:
            rows = np.frombuffer(b"".join(unique[i].tobytes() for i in missing), dtype=np.int32).reshape(len(missing), -1)
            values = np.full((len(missing), len(self.thresholds)), np.nan)
            nonempty = rows.sum(axis=1) > 0
            if nonempty.any():
                values[nonempty] = exact_tails_from_counts(rows[nonempty], lattice, self.thresholds).reshape(-1, len(self.thresholds))
            for i, value in zip(missing, values, strict=True):
                table[unique[i].tobytes()] = value
        looked = np.stack([table[key.tobytes()] for key in unique])
        return looked[inverse.ravel()].reshape((*counts.shape[:-1], len(self.thresholds)))


def _fixed_stops(
    pair: ReplayPair,
    orders: np.ndarray,
    gate: np.ndarray | None,
    looks: np.ndarray,
    alpha: float,
    tails: _FixedTails,
) -> tuple[list[_Stops], str]:
    """First final action of the fixed-budget rule re-declared at each look, for every threshold."""
    thresholds = tails.thresholds
    values = pair.differences[orders]
    k = looks.astype(float)
    n = pair.n_shared
    lattice = pair.lattice
    if lattice and 2 * n * lattice + 1 <= REPLAY_EXACT_MAX_SUPPORT:
        units = np.rint(values * lattice).astype(np.int64) + lattice
        counts = np.stack([np.cumsum(units == j, axis=1)[:, looks - 1] for j in range(2 * lattice + 1)], axis=-1)
        total_units = counts @ np.arange(-lattice, lattice + 1)
        exceeds = total_units[..., None] > lattice_threshold(looks[:, None], lattice, thresholds)[None, :, :]
        r_promote = tails.r_promote(counts, lattice)
        r_reject = 1.0 - r_promote
        method = f"exact (lattice 1/{lattice})"
    else:
        total = np.cumsum(values, axis=1)[:, looks - 1]
        squares = np.cumsum(values**2, axis=1)[:, looks - 1]
        exceeds = (total / k)[..., None] > thresholds
        r_promote, r_reject = normal_tails_from_moments(total, squares, np.broadcast_to(k, total.shape), thresholds)
        method = "paired normal (lattice too fine for exact tails)"
    covered = np.ones(exceeds.shape[:2], dtype=bool) if gate is None else gate[:, looks - 1]
    actions = routine_actions(covered[..., None], True, exceeds, r_promote, r_reject, tail_cutoff=alpha)
    result = []
    for t in range(len(thresholds)):
        act = actions[:, :, t]
        final = (act == PROMOTE) | (act == REJECT)
        hit = final.any(axis=1)
        first = np.argmax(final, axis=1)
        result.append(_Stops(np.where(hit, act[np.arange(len(first)), first], _NONE), np.where(hit, looks[first], _NONE)))
    return result, method


@dataclass(frozen=True)
class LiveReplay:
    """The outcome of a live-look replay.

    Attributes
    ----------
    pairs : pandas.DataFrame
        One row per (source, policy, rule, threshold, directed pair): ``n_shared``, ``delta_full``,
        ``positive``, ``orders``, ``promote``, ``reject``, ``unresolved`` (orders with no final
        action by N), ``wrong`` and ``wrong_rate`` (final actions opposite to the complete record's
        truth), ``bound`` (a + 2 SE), ``stop_q25``, ``stop_q50``, ``stop_q75`` (fraction of tasks used;
        1 when unresolved), ``resolved_10``, ``resolved_20`` (share of orders with a final action by
        10 % and 20 % of the tasks), ``method``.
    curve : pandas.DataFrame
        Resolved-by-budget curve: per (source, policy, rule, threshold, budget) the mean over pairs of the
        share of orders resolved by that budget (``resolved``) and of wrong decisions taken by then.
    summary : pandas.DataFrame
        Per (source, policy, rule, threshold): pairs, positives, mean and maximum wrong rate, pairs above
        a + 2 SE, share resolved by 10 % and 20 %, stopping-time quartiles over all runs.
    settings : LiveReplaySettings
        Policy, thresholds, orders, looks, strategy and version (``live_settings.json``: its ``to_dict()``).
    """

    pairs: pd.DataFrame
    curve: pd.DataFrame
    summary: pd.DataFrame
    settings: LiveReplaySettings

    def write(self, directory: str | Path, *, force: bool = False) -> list[Path]:
        """Write the live-look tables into a new directory, atomically; return the written paths.

        ``live_pairs.csv``, ``live_summary.{csv,json,md}``, ``live_curve.csv`` and ``live_settings.json``
        (the charts: ``stopwise report DIRECTORY``, :func:`stopwise.report.replay_report`). ``directory`` may
        be new or empty; an earlier stopwise output directory is replaced only with ``force``, any other one
        never (:func:`stopwise._atomic.write_directory`).
        """
        from stopwise._atomic import write_directory

        return write_directory(directory, self._fill, force=force)

    def _fill(self, out: Path) -> list[Path]:
        from stopwise.replay._report import markdown_table

        texts = {f"{name}.csv": table.to_csv(index=False) for name, table in (("live_pairs", self.pairs), ("live_summary", self.summary), ("live_curve", self.curve))}
        texts["live_summary.json"] = self.summary.to_json(orient="records", indent=1)
        texts["live_summary.md"] = "# Live-look replay\n\n" + markdown_table(summary_table(self.summary)) + "\n"
        texts["live_settings.json"] = json.dumps(self.settings.to_dict(), indent=1, sort_keys=True)
        for name, text in texts.items():
            (out / name).write_text(text, encoding="utf-8")
        return [out / name for name in texts]


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary in readable units (percent), for Markdown and the console."""
    shown = pd.DataFrame(
        {
            "source": summary["source"],
            "policy": summary["policy"],
            "rule": summary["rule"],
            "δ": summary["threshold"].map(lambda v: f"{100 * v:g} pp"),
            "pairs": summary["pairs"],
            "mean wrong": summary["mean_wrong_rate"].map(lambda v: f"{100 * v:.2f}%"),
            "max wrong": summary["max_wrong_rate"].map(lambda v: f"{100 * v:.1f}%"),
            "pairs > a+2SE": summary["pairs_over_bound"],
            "resolved by 10%": summary["resolved_10"].map(lambda v: f"{100 * v:.1f}%"),
            "resolved by 20%": summary["resolved_20"].map(lambda v: f"{100 * v:.1f}%"),
            "unresolved at N": summary["unresolved"].map(lambda v: f"{100 * v:.1f}%"),
            "stop q25/q50/q75": [
                f"{100 * a:.0f}/{100 * b:.0f}/{100 * c:.0f}%"
                for a, b, c in zip(summary["stop_q25"], summary["stop_q50"], summary["stop_q75"], strict=True)
            ],
        }
    )
    return shown


def _pair_row(stops: _Stops, pair: ReplayPair, positive: bool, alpha: float) -> dict[str, Any]:
    n_orders = len(stops.action)
    n = pair.n_shared
    resolved = stops.action != _NONE
    wrong = (stops.action == PROMOTE) if not positive else (stops.action == REJECT)
    fraction = np.where(resolved, stops.stop / n, 1.0)
    q25, q50, q75 = np.percentile(fraction, [25, 50, 75])
    return {
        "n_shared": n,
        "delta_full": float(pair.differences.mean()),
        "positive": positive,
        "orders": n_orders,
        "promote": int((stops.action == PROMOTE).sum()),
        "reject": int((stops.action == REJECT).sum()),
        "unresolved": int((~resolved).sum()),
        "wrong": int(wrong.sum()),
        "wrong_rate": float(wrong.mean()),
        "bound": alpha + 2 * math.sqrt(alpha * (1 - alpha) / n_orders),
        "stop_q25": float(q25),
        "stop_q50": float(q50),
        "stop_q75": float(q75),
        "resolved_10": float((resolved & (stops.stop <= math.ceil(0.1 * n - 1e-9))).mean()),
        "resolved_20": float((resolved & (stops.stop <= math.ceil(0.2 * n - 1e-9))).mean()),
    }


def replay_source_looks(
    source: ReplaySource,
    policy: Policy | None = None,
    *,
    thresholds: Sequence[float] = (0.0, 0.05, 0.10),
    n_orders: int = 500,
    looks: int | str = "every",
    fixed_looks: int | str | None = None,
    rules: Sequence[str] = LIVE_RULES,
    strategy: str = "auto",
    batch_rows: int = 4096,
    n_jobs: int = 1,
    policy_name: str = "policy",
    progress: Callable[[int], None] | None = None,
    in_order: bool = False,
) -> LiveReplay:
    """Replay every directed pair of a source with a look after every task (or every k tasks).

    Parameters
    ----------
    source : ReplaySource
        The completed record (:func:`stopwise.replay.prepare_source`).
    policy : Policy, optional
        Order kind and seed, coverage rule and the cutoff a (the betting rule's alpha); default:
        ``Policy()`` (uniform order, coverage rule on; ``Policy.paper()`` has the coverage-aware order).
    thresholds : sequence of float, optional
        delta values.
    n_orders : int, optional
        K task orders per pair.
    looks : int or "every", optional
        Looks of the betting rule: after every task, or every k tasks.
    fixed_looks : int or "every", optional
        Looks of the fixed-budget rule (default: every ceil(N / 20) tasks, i.e. every 5 % of the
        tasks; exact tails at every task cost one convolution per distinct count row).
    rules : sequence of str, optional
        Which of :data:`LIVE_RULES` to replay.
    strategy : str, optional
        Betting strategy (``auto``, ``mixture``, ``max``, ``horizon``, ``agrapa`` or ``plug-in``; see
        :func:`stopwise.compare.betting_paths`; ``auto`` is ``mixture`` under uniform orders and ``max`` with
        the stratified process).
    batch_rows : int, optional
        Rows (pair x order) per vectorised batch of the betting rule; bounds memory at about
        ``batch_rows * N * 100`` bytes per thread (:func:`stopwise.compare.betting_paths` computes at
        most a few hundred rows at a time).
    n_jobs : int, optional
        Threads for the betting batches.
    policy_name : str, optional
        Label of the policy in the tables.
    progress : callable, optional
        Called with the number of pairs done.
    in_order : bool, optional
        Under the top-up design: the evaluation runs the planned order pi and never skips to the top-up tasks (a
        harness that ignores ``stopwise next``), so the action comes when some prefix and its top-up have been run
        in order (:func:`stopwise.compare.in_order_ends`); default: the top-up tasks run as soon as a test crosses
        (the design, :func:`stopwise.compare.top_up_ends`).

    Returns
    -------
    LiveReplay

    Examples
    --------
    >>> from stopwise import Policy
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.replay import prepare_source, replay_source_looks
    >>> source = prepare_source(synthetic_benchmark(200, 3, rng=0), "synthetic")
    >>> live = replay_source_looks(source, Policy(), thresholds=[0.0], n_orders=20, rules=["betting-wor"])
    >>> row = live.summary.iloc[0]
    >>> row["rule"], int(row["pairs"]), bool(row["max_wrong_rate"] <= 0.05 + 2 * (0.05 * 0.95 / 20) ** 0.5)
    ('betting-wor', 6, True)
    """
    policy = policy if policy is not None else Policy()
    check_replay_args(
        "replay_source_looks", thresholds=thresholds, n_orders=n_orders, looks=looks, fixed_looks=fixed_looks, rules=rules, strategy=strategy,
        batch_rows=batch_rows, n_jobs=n_jobs,
    )
    thresholds_arr = np.asarray(thresholds, dtype=float)
    if policy.order.kind not in ("uniform", "coverage-aware"):
        raise ArgumentError(f"the live replay supports uniform and coverage-aware orders; the policy has {policy.order.kind!r}")
    alpha = policy.tail_cutoff
    enforce = coverage_enforced(policy.coverage.rule)
    top_up = enforce and policy.betting.design == "top-up" and "betting-wor" in rules
    stratified = policy.order.kind != "uniform" and not top_up
    used = resolve_strategy(strategy, stratified)  # an unknown name is an ArgumentError here, before any work
    orders_of = Orders(source, policy, n_orders)
    # the top-up design runs the betting rule on uniform orders pi (the same draws as a uniform policy's)
    uniform_of = Orders(source, policy.model_copy(update={"order": policy.order.model_copy(update={"kind": "uniform"})}), n_orders)
    plans: dict[int, tuple[np.ndarray, list[ReplayPair]]] = {}
    for pair in source.pairs:
        orders = orders_of.for_pair(pair)
        plans.setdefault(id(orders), (orders, []))[1].append(pair)
    rows: list[dict[str, Any]] = []
    curves: list[pd.DataFrame] = []
    tails = _FixedTails(thresholds_arr)
    pool = ThreadPoolExecutor(max_workers=n_jobs) if n_jobs > 1 else None
    try:
        for orders, pairs in plans.values():
            n = pairs[0].n_shared
            groups = source.groups[pairs[0].tasks]
            gate = _coverage_gate(groups, orders, policy) if enforce else None
            labels, codes_task = np.unique(groups, return_inverse=True)
            codes = codes_task[orders] if stratified else None
            sizes = np.bincount(codes_task, minlength=len(labels)) if stratified else None
            bet_looks = live_looks(n, looks)
            pi = uniform_of.for_pair(pairs[0]) if top_up else orders
            ending = in_order_ends if in_order else top_up_ends
            sizes_all = np.bincount(codes_task, minlength=len(labels))
            ends = ending(codes_task[pi], sizes_all, rule=policy.coverage.rule, slack=policy.coverage.slack) if top_up else None
            fix_looks = live_looks(n, fixed_looks if fixed_looks is not None else max(1, math.ceil(n / 20)))
            fixed = [_fixed_stops(pair, orders, gate, fix_looks, alpha, tails) for pair in pairs] if "fixed-budget" in rules else []
            for t_index, threshold in enumerate(thresholds_arr):
                positive = [exceeds_threshold(p.differences, p.lattice, float(threshold)) for p in pairs]
                for rule in rules:
                    if rule == "betting-wor" and ends is not None:
                        plan = _BettingPlan(pi, float(threshold), None, None, None, bet_looks, alpha, strategy)
                        stops: list[_Stops] = [_topped_up(run, ends) for run in _run_betting(pairs, plan, batch_rows, pool)]
                        how = "top-up run in planned order" if in_order else "coverage by top-up"
                        methods = [f"betting-wor ({used}, pooled on uniform orders, {how})"] * len(pairs)
                    elif rule == "betting-wor":
                        plan = _BettingPlan(orders, float(threshold), codes, sizes, gate, bet_looks, alpha, strategy)
                        stops = _run_betting(pairs, plan, batch_rows, pool)
                        methods = [f"betting-wor ({used}, {'stratified' if stratified else 'pooled'})"] * len(pairs)
                    else:
                        stops = [runs[t_index] for runs, _ in fixed]
                        methods = [f"fixed-budget, re-declared at every look ({method})" for _, method in fixed]
                    for pair, pos, run, method in zip(pairs, positive, stops, methods, strict=True):
                        tested, baseline = source.pair_label(pair)
                        row = {"source": source.name, "policy": policy_name, "rule": rule, "threshold": float(threshold), "tested": tested, "baseline": baseline}
                        row.update(_pair_row(run, pair, pos, alpha))
                        row["method"] = method
                        rows.append(row)
                    curves.append(_curve(source.name, policy_name, rule, float(threshold), pairs, positive, stops))
            if progress is not None:
                progress(len(pairs))
    finally:
        if pool is not None:
            pool.shutdown()
    table = pd.DataFrame(rows)
    curve = _aggregate_curve(pd.concat(curves, ignore_index=True))
    settings = LiveReplaySettings(
        stopwise_version=__version__,
        policy=json.loads(policy.canonical_json()),
        policy_sha256=policy.sha256(),
        thresholds=tuple(float(t) for t in thresholds_arr),
        n_orders=int(n_orders),
        looks=looks,
        fixed_looks=fixed_looks if fixed_looks is not None else "every 5% of tasks",
        rules=tuple(rules),
        strategy=strategy,
        truth="positive iff Delta_full > delta on the complete shared task set",
    )
    return LiveReplay(pairs=table, curve=curve, summary=summarize_live(table, curve), settings=settings)


def _topped_up(run: _Stops, ends: np.ndarray) -> _Stops:
    """A pooled run's stops moved to the end of the top-up after the crossing look (``ends``: (K, N), per order)."""
    resolved = run.action != _NONE
    at = np.where(resolved, run.stop, 1) - 1
    return _Stops(run.action, np.where(resolved, ends[np.arange(len(at)), at], _NONE))


def _run_betting(pairs: list[ReplayPair], plan: _BettingPlan, batch_rows: int, pool: ThreadPoolExecutor | None) -> list[_Stops]:
    """First betting actions of every (pair, order), in batches of whole pairs.

    At delta = 0 under the pooled process without a coverage gate, the pair (B, A) is the mirror image of
    (A, B) on the same orders: D is negated, so B's promote capital is exactly (bit for bit) A's reject
    capital and vice versa. Only one of the two is replayed; the other's action is the opposite, at the
    same look (a look where both tests first cross together is a promote for both, as in the replay). A pair
    whose mean difference is 0 is replayed both ways: at N the certain answer is reject for both.
    """
    mirror_of: dict[int, int] = {}
    if plan.threshold == 0.0 and plan.codes is None and plan.gate is None:
        index = {(p.tested, p.baseline): i for i, p in enumerate(pairs)}
        sources: set[int] = set()
        for i, p in enumerate(pairs):
            j = index.get((p.baseline, p.tested))
            if j is not None and j not in mirror_of and i not in sources:
                q = pairs[j]
                at_zero = abs(float(np.sum(p.differences))) <= 1e-9 * len(p.differences)  # both reject at N: no mirror
                if not at_zero and np.array_equal(q.tasks, p.tasks) and np.array_equal(q.differences, -p.differences):
                    mirror_of[i] = j  # pair i is replayed as the mirror of pair j
                    sources.add(j)
    replayed = [i for i in range(len(pairs)) if i not in mirror_of]
    action, stop, tie = _replay_pairs([pairs[i] for i in replayed], plan, batch_rows, pool)
    position = np.empty(len(pairs), dtype=np.int64)
    position[replayed] = np.arange(len(replayed))
    mirrored = np.zeros(len(pairs), dtype=bool)
    if mirror_of:
        mirrored[list(mirror_of)] = True
        position[list(mirror_of)] = position[list(mirror_of.values())]
    action, stop, tie = action[position], stop[position], tie[position]
    flipped = np.where(action == PROMOTE, REJECT, np.where(action == REJECT, PROMOTE, _NONE))
    action = np.where(mirrored[:, None], np.where(tie, PROMOTE, flipped), action)
    return [_Stops(a, s) for a, s in zip(action, stop, strict=True)]


def _replay_pairs(
    pairs: list[ReplayPair], plan: _BettingPlan, batch_rows: int, pool: ThreadPoolExecutor | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P, K) first actions, looks and ties of every (pair, order), in batches of whole pairs."""
    n_orders = plan.orders.shape[0]
    if not pairs:
        empty = np.zeros((0, n_orders), dtype=np.int64)
        return empty, empty.copy(), empty.astype(bool)
    per_batch = max(1, batch_rows // n_orders)

    def run(start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        chunk = pairs[start : start + per_batch]
        differences = np.stack([p.differences for p in chunk])
        # row r of the batch: pair r // K along order r % K
        rows = np.stack(np.divmod(np.arange(len(chunk) * n_orders), n_orders), axis=1)
        # the rows of several pairs share one call (per-call overhead, not memory, limits small calls)
        parts = [_betting_stops(differences, rows[lo : lo + batch_rows], plan) for lo in range(0, rows.shape[0], batch_rows)]
        return tuple(np.concatenate([part[k] for part in parts]) for k in range(3))  # type: ignore[return-value]

    starts = range(0, len(pairs), per_batch)
    results = list(pool.map(run, starts)) if pool is not None else [run(s) for s in starts]
    action, stop, tie = (np.concatenate([r[k] for r in results]).reshape(len(pairs), n_orders) for k in range(3))
    return action, stop, tie


def _curve(source: str, policy: str, rule: str, threshold: float, pairs: list[ReplayPair], positive: list[bool], stops: list[_Stops]) -> pd.DataFrame:
    """Per pair and budget: share of orders resolved, and wrong, by that budget."""
    n = np.array([p.n_shared for p in pairs])
    limit = np.ceil(CURVE_BUDGETS[None, :] * n[:, None] - 1e-9)
    action = np.stack([s.action for s in stops])
    stop = np.stack([s.stop for s in stops])
    resolved = action != _NONE
    wrong = np.where(np.array(positive)[:, None], action == REJECT, action == PROMOTE)
    by = resolved[:, :, None] & (stop[:, :, None] <= limit[:, None, :])
    return pd.DataFrame(
        {
            "source": source,
            "policy": policy,
            "rule": rule,
            "threshold": threshold,
            "budget": np.tile(CURVE_BUDGETS, len(pairs)),
            "resolved": by.mean(axis=1).ravel(),
            "wrong": (by & wrong[:, :, None]).mean(axis=1).ravel(),
        }
    )


def _aggregate_curve(per_pair: pd.DataFrame) -> pd.DataFrame:
    return per_pair.groupby(["source", "policy", "rule", "threshold", "budget"], sort=False, as_index=False)[["resolved", "wrong"]].mean()


def summarize_live(pairs: pd.DataFrame, curve: pd.DataFrame) -> pd.DataFrame:
    """Per (source, rule, threshold) summary of per-pair live-replay rows and the resolved curve.

    Stopping-time quartiles pool every (pair, order) run (pairs weighted equally, unresolved runs
    counted as using all tasks), read from the resolved-by-budget curve at 1 % resolution.
    """
    rows = []
    for (source, policy, rule, threshold), block in pairs.groupby(["source", "policy", "rule", "threshold"], sort=False):
        part = curve[
            (curve["source"] == source) & (curve["policy"] == policy) & (curve["rule"] == rule) & (curve["threshold"] == threshold)
        ].sort_values("budget")

        def quantile(q: float, part: pd.DataFrame = part) -> float:
            reached = part.loc[part["resolved"] >= q - 1e-12, "budget"]
            return float(reached.iloc[0]) if len(reached) else 1.0

        rows.append(
            {
                "source": source,
                "policy": policy,
                "rule": rule,
                "threshold": threshold,
                "pairs": len(block),
                "positives": int(block["positive"].sum()),
                "orders": int(block["orders"].iloc[0]),
                "mean_wrong_rate": float(block["wrong_rate"].mean()),
                "max_wrong_rate": float(block["wrong_rate"].max()),
                "pairs_over_bound": int((block["wrong_rate"] > block["bound"] + 1e-12).sum()),
                "resolved_10": float(block["resolved_10"].mean()),
                "resolved_20": float(block["resolved_20"].mean()),
                "unresolved": float((block["unresolved"] / block["orders"]).mean()),
                "stop_q25": quantile(0.25),
                "stop_q50": quantile(0.50),
                "stop_q75": quantile(0.75),
            }
        )
    return pd.DataFrame(rows)


def replay_looks(
    records: Mapping[str, pd.DataFrame],
    policy: Policy | None = None,
    *,
    policies: Sequence[str] | None = ("primary",),
    thresholds: Sequence[float] = (0.0, 0.05, 0.10),
    n_orders: int = 500,
    looks: int | str = "every",
    fixed_looks: int | str | None = None,
    rules: Sequence[str] = LIVE_RULES,
    strategy: str = "auto",
    min_coverage: float = 0.95,
    min_shared: int = 1,
    batch_rows: int = 4096,
    n_jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> LiveReplay:
    """Live-look replay of several completed records under one or more named policies.

    The sources are prepared as for :func:`stopwise.replay.replay_grid` and each is replayed with
    :func:`replay_source_looks`; named policies come from :data:`stopwise.replay.STANDARD_POLICIES`
    (those with a uniform or coverage-aware order).

    Parameters
    ----------
    records : mapping of str to pandas.DataFrame
        Source name -> validated outcome rows of a completed record.
    policy : Policy, optional
        Base policy (default: ``Policy()``).
    policies : sequence of str, optional
        Named variants (``None``: the base policy as given, named ``policy``).
    thresholds, n_orders, looks, fixed_looks, rules, strategy, batch_rows, n_jobs : optional
        As in :func:`replay_source_looks`.
    min_coverage, min_shared : optional
        Source filters (see :func:`stopwise.replay.prepare_source`).
    progress : callable, optional
        ``progress(advance, total)`` as pairs finish.

    Returns
    -------
    LiveReplay

    Examples
    --------
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.replay import replay_looks
    >>> live = replay_looks({"synthetic": synthetic_benchmark(100, 3, rng=0)}, thresholds=[0.0], n_orders=10, looks=5)
    >>> sorted(live.summary["rule"]), live.settings.looks
    (['betting-wor', 'fixed-budget'], 5)
    """
    from stopwise.replay._policies import comparison_policies
    from stopwise.replay._source import prepare_source

    check_replay_args(
        "replay_looks", thresholds=thresholds, n_orders=n_orders, looks=looks, fixed_looks=fixed_looks, rules=rules, strategy=strategy,
        min_coverage=min_coverage, min_shared=min_shared, batch_rows=batch_rows, n_jobs=n_jobs,
    )
    base = policy if policy is not None else Policy()
    chosen = {"policy": base} if policies is None else comparison_policies(base, list(policies))
    sources = [
        prepare_source(
            rows, name, statuses=base.statuses, group_column=base.coverage.group_column, min_coverage=min_coverage, min_shared=min_shared
        )
        for name, rows in records.items()
    ]
    total = sum(len(source.pairs) for source in sources) * len(chosen)
    advance = (lambda done: progress(done, total)) if progress is not None else None
    parts = [
        replay_source_looks(
            source,
            variant,
            thresholds=thresholds,
            n_orders=n_orders,
            looks=looks,
            fixed_looks=fixed_looks,
            rules=rules,
            strategy=strategy,
            batch_rows=batch_rows,
            n_jobs=n_jobs,
            policy_name=name,
            progress=advance,
        )
        for source in sources
        for name, variant in chosen.items()
    ]
    pairs = pd.concat([p.pairs for p in parts], ignore_index=True)
    curve = pd.concat([p.curve for p in parts], ignore_index=True)
    settings = dataclasses.replace(
        parts[0].settings,
        policy=None,
        policy_sha256=None,
        policies={name: {"sha256": p.sha256(), "policy": json.loads(p.canonical_json())} for name, p in chosen.items()},
        sources=tuple(s.name for s in sources),
        min_coverage=float(min_coverage),
        min_shared=int(min_shared),
    )
    return LiveReplay(pairs=pairs, curve=curve, summary=summarize_live(pairs, curve), settings=settings)
