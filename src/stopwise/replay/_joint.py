"""The whole-evaluation replay: within-task halting and the across-task betting boundary, alone and joined.

A completed benchmark with trajectories is replayed as a live evaluation of a pair of agents: the tasks arrive
in a seeded uniformly random order; every run is monitored by a halting model that never saw the two agents
(the held-out predictions of :func:`stopwise.early.leave_one_out`, turned into halts by the thresholds); a
seeded random share rho of the runs is audited (never halted, its would-halt verdict recorded); and the paired
betting boundary (:func:`stopwise.compare.betting_paths`, pooled process without replacement over the pair's
N shared tasks) is consulted after every task. Four modes spend agent steps differently:

* ``full`` -- every run to its end, the decision at N: the complete record, so its decision is the truth;
* ``across-task`` -- every run to its end, the boundary after every task, stop at the first crossing
  (never crossing: the complete record at N decides);
* ``within-task`` -- every task, runs halted unless audited, one decision at N with the
  prediction-powered treatment (``[decision] predicted = "prediction-powered"``);
* ``joined`` -- runs halted unless audited and the boundary after every task on the prediction-powered
  task differences, stop at the first crossing;
* ``joined tuned`` -- the same with active audits and the power-tuned boundary (issue 34,
  :mod:`stopwise.replay._joint_tuned`: ``predicted = "prediction-powered-tuned"``, ``audit_rule = "active"``).

The within-task and joined modes decide as ``stopwise decide`` does under ``[decision] predicted =
"prediction-powered"`` (:mod:`stopwise.compare._predicted`, Angelopoulos et al. 2023; Zrnic & Candes 2024): a
run the monitor would halt counts with ``yhat + (audited / rho) (y - yhat)`` (``yhat`` its predicted 0/1
outcome), any other run with y; the pooled without-replacement boundary runs on the range ``max(1, 2/rho - 1)``
and its centre takes the past predicted rows as the policy's ``[decision] predicted_centre`` says (default
``audited-bound``: at most the audits' time-uniform bound of them wrong; ``worst-case``: all at their adverse
extreme; :mod:`stopwise.compare._audit_bound`). Order k draws its audits as a live evaluation
with ``[early] audit_seed = seed + k`` would (:func:`stopwise.records.audit_draw` of each run's system, task and
attempt below rho). Three extra modes carry no guarantee and are labelled invalid: ``joined naive`` (the
boundary on the prediction-powered differences as if they were the tasks' fixed values: the noisy past sums
enter the centre as exact), ``within-task as truth`` and ``joined as truth`` (predicted outcomes taken as the
truth).

A decision is wrong when it is the opposite of the complete record's truth: the pair is positive iff the
full-data difference (attempts averaged per task) exceeds delta. Spending is the share of all agent steps
(and tokens, where every step records them) of both agents on the N tasks that was spent until the decision,
or until the end when no decision came.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from stopwise.compare import AuditTallies, betting_paths, powered_paths, powered_scale
from stopwise.errors import ArgumentError
from stopwise.records import Policy, outcome_columns
from stopwise.replay._joint_audits import audit_draws
from stopwise.replay._joint_tuned import tuned_mode

__all__ = ["JOINT_MODES", "REPLAY_POLICY", "JointReplay", "joint_halts", "joint_rows", "replay_joint"]

JOINT_MODES: tuple[str, ...] = (
    "full", "across-task", "within-task", "joined", "joined tuned", "joined naive", "within-task as truth", "joined as truth",
)
"""The replayed modes; the last three carry no guarantee (``joined naive``: the boundary on the prediction-powered
differences as if they were the tasks' fixed values; ``as truth``: predicted outcomes taken as the truth)."""
_VALID = {"full": True, "across-task": True, "within-task": True, "joined": True, "joined tuned": True, "joined naive": False,
          "within-task as truth": False, "joined as truth": False}
_TABLE_COLUMNS = ("agent", "task", "attempt", "outcome", "n_steps", "halt_step", "predicted", "halt_tokens", "total_tokens")
_OPTIONAL_COLUMNS = ("halt_probability",)
"""Kept when present: the crossing head's probability at the halt (the active audit rule's confidence)."""
_PPI = "prediction-powered"


def joint_halts(evaluation: Any, success_threshold: float | None = 0.95, failure_threshold: float | None = 0.95, *,
                variant: str | None = None) -> pd.DataFrame:
    """The run table of the replay: every held-out run's length, outcome and where its monitor halts it.

    Parameters
    ----------
    evaluation : EarlyEvaluation
        Held-out per-prefix predictions (:func:`stopwise.early.leave_one_out`), e.g. folds that hold out a
        service or pool so the compared agents never trained the model that monitors them.
    success_threshold, failure_threshold : float or None
        The halting thresholds (``None`` turns a head off).
    variant : str, optional
        The model variant of an evaluation holding several.

    Returns
    -------
    pandas.DataFrame
        One row per run: ``agent``, ``task``, ``attempt``, ``outcome``, ``n_steps``, ``halt_step`` and
        ``predicted`` (NaN when the monitor never halts the run before its last step), ``halt_probability`` (the
        crossing head's probability at the halt, the confidence the active audit rule reads), ``halt_tokens`` and
        ``total_tokens`` (input + output tokens spent until the halt and by the whole run; NaN unless every
        step records tokens).

    Examples
    --------
    >>> from stopwise.early import DualHeadClassifier, EarlyOutcomeModel, leave_one_out
    >>> from stopwise.replay import joint_halts, synthetic_trajectories
    >>> runs = synthetic_trajectories(40, 4, rng=0)
    >>> small = EarlyOutcomeModel(n_components=4, min_df=2, min_steps=5, classifier=DualHeadClassifier(n_estimators=30))
    >>> table = joint_halts(leave_one_out(runs, small, by="agent", exclude_same="pool"), 0.9, 0.9)
    >>> table.shape, int(table["halt_step"].notna().sum()) > 0
    ((160, 10), True)
    """
    metrics = evaluation.metrics(success_threshold, failure_threshold, variant=variant)
    runs = evaluation.runs.sort_values("run").reset_index(drop=True)
    halts = metrics.halts.set_index("run").loc[runs["run"]]
    table = runs[["agent", "task", "attempt", "outcome", "n_steps"]].copy()
    table["halt_step"] = halts["halt_step"].to_numpy(dtype=float)
    table["predicted"] = halts["predicted"].to_numpy(dtype=float)
    table["halt_probability"] = halts["probability"].to_numpy(dtype=float)
    if evaluation.token_source == "tokens":
        table["halt_tokens"] = np.where(np.isnan(table["halt_step"]), np.nan, halts["executed_cost"].to_numpy(dtype=float))
        table["total_tokens"] = (runs["total_in"] + runs["total_out"]).to_numpy(dtype=float)
    else:
        table["halt_tokens"] = np.nan
        table["total_tokens"] = np.nan
    return table


def _table_iv(table: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise ArgumentError(f"`table` must be the run table of joint_halts (a DataFrame); got {type(table).__name__}")
    missing = [c for c in _TABLE_COLUMNS if c not in table.columns]
    if missing:
        raise ArgumentError(f"`table` lacks column(s) {', '.join(missing)}; build it with joint_halts")
    kept = [*_TABLE_COLUMNS, *(c for c in _OPTIONAL_COLUMNS if c in table.columns)]
    out = table.loc[:, kept].reset_index(drop=True)
    y = out["outcome"].to_numpy(dtype=float)
    if not np.isin(y, (0.0, 1.0)).all():
        bad = int(np.flatnonzero(~np.isin(y, (0.0, 1.0)))[0])
        raise ArgumentError(f"`table` row {bad}: `outcome` must be 0 or 1; got {y[bad]!r}")
    halted = out["halt_step"].notna().to_numpy()
    yhat = out["predicted"].to_numpy(dtype=float)
    if not np.isin(yhat[halted], (0.0, 1.0)).all():
        raise ArgumentError("`table`: every halted run needs `predicted` 0 or 1")
    if (out["halt_step"][halted] >= out["n_steps"][halted]).any() or (out["n_steps"] < 1).any():
        raise ArgumentError("`table`: `n_steps` must be >= 1 and a halt must come before the run's last step")
    return out


def joint_rows(table: pd.DataFrame, audited: Sequence[bool] | np.ndarray, *, source: str = "stopwise.replay:joint") -> pd.DataFrame:
    """The outcome rows a live evaluation records for the runs of ``table`` under one audit draw.

    A run the monitor halts and the draw does not audit becomes ``status = "predicted"`` with its predicted
    outcome and flag ``predicted``; an audited run keeps ``status = "final"`` and its true outcome, flagged
    ``audited``, and, when the monitor would have halted it, ``would-halt:f`` with the prediction f (0 or 1) it
    would have stored; any other run is a plain final row.

    Examples
    --------
    >>> import pandas as pd
    >>> from stopwise.replay import joint_rows
    >>> table = pd.DataFrame({"agent": ["A", "A", "B"], "task": ["t1", "t2", "t1"], "attempt": 1,
    ...                       "outcome": [1, 0, 0], "n_steps": 10, "halt_step": [3, None, 4],
    ...                       "predicted": [1, None, 1], "halt_tokens": None, "total_tokens": None})
    >>> joint_rows(table, [False, True, True])[["status", "outcome", "flags"]].values.tolist()
    [['predicted', 1.0, 'predicted'], ['final', 0.0, 'audited'], ['final', 0.0, 'audited;would-halt:1']]
    """
    t = _table_iv(table)
    audit = np.asarray(audited, dtype=bool)
    if audit.shape != (t.shape[0],):
        raise ArgumentError(f"`audited` must hold one flag per run ({t.shape[0]}); got shape {audit.shape}")
    would = t["halt_step"].notna().to_numpy()
    predicted = would & ~audit
    guess = np.where(would, t["predicted"].to_numpy(dtype=float), 0.0).astype(int)
    would_flag = np.array(["audited;would-halt:0", "audited;would-halt:1"])[guess]
    flags = np.where(predicted, "predicted", np.where(audit, np.where(would, would_flag, "audited"), ""))
    rows = pd.DataFrame(
        {
            "system": t["agent"].astype(str), "task": t["task"].astype(str),
            "outcome": np.where(predicted, t["predicted"].to_numpy(dtype=float), t["outcome"].to_numpy(dtype=float)),
            "group": "", "attempt": t["attempt"].astype(int), "status": np.where(predicted, "predicted", "final"),
            "source": source, "flags": flags,
        }
    )
    return outcome_columns(rows.to_dict("records")).to_frame()


@dataclass(frozen=True)
class _Pair:
    """One pair's runs (flat) and how they sum per task."""

    tested: str
    baseline: str
    tasks: np.ndarray
    runs: pd.DataFrame
    weight: np.ndarray  # (R,): +1/attempts for the tested agent's runs, -1/attempts for the baseline's
    starts: np.ndarray  # (T,): where each task's runs start (``runs`` are grouped by task, in ``tasks`` order)
    truth: float

    def per_task(self, values: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
        """Sum of ``values`` (times ``weight``, per run) over each task's runs, in table order: (R,) -> (T,), (K, R) -> (K, T)."""
        terms = values if weight is None else values * weight
        if terms.shape[-1] == 2 * len(self.starts):  # one run of each agent on every task: add the two (faster than reduceat)
            return terms[..., 0::2] + terms[..., 1::2]
        return np.add.reduceat(terms, self.starts, axis=-1)


def _pair(table: pd.DataFrame, tested: str, baseline: str) -> _Pair:
    shared = np.intersect1d(table.loc[table["agent"] == tested, "task"].astype(str), table.loc[table["agent"] == baseline, "task"].astype(str))
    if shared.shape[0] < 2:
        raise ArgumentError(f"pair {tested!r} vs {baseline!r}: needs at least 2 shared tasks; got {shared.shape[0]}")
    runs = table[table["agent"].isin([tested, baseline]) & table["task"].astype(str).isin(shared)]
    col = np.searchsorted(shared, runs["task"].astype(str).to_numpy())
    by_task = np.argsort(col, kind="stable")  # grouped by task, in table order within a task
    runs, col = runs.iloc[by_task].reset_index(drop=True), col[by_task]
    sign = np.where(runs["agent"].to_numpy() == tested, 1.0, -1.0)
    counts = pd.Series(1, index=pd.MultiIndex.from_arrays([runs["agent"], col])).groupby(level=[0, 1]).transform("size")
    starts = np.searchsorted(col, np.arange(shared.shape[0]))
    pair = _Pair(tested, baseline, shared, runs, sign / counts.to_numpy(), starts, 0.0)
    truth = float(pair.per_task(runs["outcome"].to_numpy(dtype=float), pair.weight).mean())
    return replace(pair, truth=truth)


@dataclass
class JointReplay:
    """Result of :func:`replay_joint`.

    Attributes
    ----------
    summary : pandas.DataFrame
        One row per pair and mode: ``tested``, ``baseline``, ``n_tasks``, ``delta_full`` (the complete record's
        difference), ``positive`` (its truth: ``delta_full > delta``), ``mode``, ``valid`` (the mode's decisions
        carry the guarantee), ``decided`` (share of orders with a final action), ``wrong`` (share of orders
        with a wrong final action) and ``wrong_se`` (its standard error), ``step_share`` (mean share of the
        complete record's agent steps spent until the decision), ``token_share`` (the same for tokens; NaN
        unless every step records them), ``tasks_share`` (mean share of tasks observed).
    orders : pandas.DataFrame
        One row per pair, mode and order: ``action`` (``promote``, ``reject`` or ``none``), ``wrong``,
        ``tasks``, ``step_share``, ``token_share``.
    settings : dict
        n_orders, audit fraction rho, delta, alpha, seed, audit seed, treatment of predicted rows and the centre
        (``predicted_centre``), halting figures.
    task_orders : dict of (str, str) to numpy.ndarray
        Per pair, the (K, N) task names in the order each replayed evaluation ran them (order k drew its audits
        with audit seed ``settings["audit_seed"] + k``).
    """

    summary: pd.DataFrame
    orders: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)
    task_orders: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class _Boundary:
    """The boundary settings: delta, the cutoff a, and rho (the audit probability)."""

    delta: float
    alpha: float
    rho: float
    centre: str = "worst-case"
    """``[decision] predicted_centre``: the past predicted rows at their worst case, or within the audited bound."""


def _stops(promote: np.ndarray, reject: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Action (+1 promote, -1 reject, 0 none) and observed task count of each row's first crossing, from (K, N) crossings."""
    n = promote.shape[1]
    at_p = np.where(promote.any(axis=1), np.argmax(promote, axis=1), n)
    at_r = np.where(reject.any(axis=1), np.argmax(reject, axis=1), n)
    action = np.where(at_p < at_r, 1, np.where(at_r < at_p, -1, 0))
    return action, np.where(action == 0, n, np.minimum(at_p, at_r) + 1)


def _first_stop(values: np.ndarray, scale: float, b: _Boundary) -> tuple[np.ndarray, np.ndarray]:
    """First crossing of the betting boundary on (K, N) task differences in look order, taken as the tasks' values."""
    paths = betting_paths(np.clip(values / scale, -1.0, 1.0), b.delta / scale, population_size=values.shape[1], alpha=b.alpha)
    return _stops(*paths.crossed(b.alpha))


def _powered_crossings(values: np.ndarray, low: np.ndarray, high: np.ndarray, audit: tuple[np.ndarray, np.ndarray, np.ndarray],
                       b: _Boundary) -> tuple[np.ndarray, np.ndarray]:
    """(K, N) crossings of the prediction-powered boundary (``[decision] predicted = "prediction-powered"``), all orders at once.

    ``values`` are the (K, N) prediction-powered differences in look order, ``low`` / ``high`` the bounds of the
    true differences the rows allow, ``audit`` the (K, N) tallies P_i and audited wrong weights of the
    audited-bound centre (:func:`stopwise.compare.powered_paths`: row k is ``powered_boundary`` on order k).
    """
    paths = powered_paths(values, low, high, b.delta, population_size=values.shape[1], alpha=b.alpha, scale=powered_scale(b.rho),
                          centre=b.centre, audit=AuditTallies(*audit), audit_fraction=b.rho)
    return paths.crossed(b.alpha)


def _at_the_end(crossed: np.ndarray) -> np.ndarray:
    """The crossings as read by one look after the N-th task: the last column kept, every earlier look cleared."""
    out = np.zeros_like(crossed)
    out[:, -1] = crossed[:, -1]
    return out


def _running_cost(per_task: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """(K, N): the cost of each order's first 1, ..., N tasks; ``per_task`` is (T,) or (K, T)."""
    return np.cumsum(np.take_along_axis(np.broadcast_to(per_task, orders.shape), orders, axis=1), axis=1)


def _spent(running: np.ndarray, tasks: np.ndarray, total: float) -> np.ndarray:
    """Share of ``total`` spent on the first ``tasks`` tasks of each order (``running``: :func:`_running_cost`)."""
    return running[np.arange(running.shape[0]), tasks - 1] / total if total > 0 else np.full(running.shape[0], np.nan)


def _pair_modes(pair: _Pair, orders: np.ndarray, draws: np.ndarray, b: _Boundary) -> dict[str, dict[str, np.ndarray]]:
    """Every mode's action, observed tasks, step share and token share along K orders for one pair (``draws``: audit uniforms)."""
    runs = pair.runs
    audit = draws < b.rho
    k, n_tasks = orders.shape
    y = runs["outcome"].to_numpy(dtype=float)
    n = runs["n_steps"].to_numpy(dtype=float)
    would = runs["halt_step"].notna().to_numpy()
    h = np.where(would, runs["halt_step"].to_numpy(dtype=float), n)
    yhat = np.where(would, runs["predicted"].to_numpy(dtype=float), y)
    tok_full = runs["total_tokens"].to_numpy(dtype=float)
    has_tokens = bool(np.isfinite(tok_full).all())
    tok_halt = np.where(would, runs["halt_tokens"].to_numpy(dtype=float), tok_full)
    halted_now = would[None, :] & ~audit
    steps_now = _running_cost(pair.per_task(np.where(halted_now, h, n)), orders)
    tokens_now = _running_cost(pair.per_task(np.where(halted_now, tok_halt, tok_full)), orders) if has_tokens else None
    full_steps, total_steps = _running_cost(pair.per_task(n), orders), float(n.sum())
    full_tokens = _running_cost(pair.per_task(tok_full), orders) if has_tokens else None
    total_tokens = float(tok_full.sum()) if has_tokens else 0.0
    truth_action = 1 if pair.truth > b.delta else -1
    ordered = lambda d: np.take_along_axis(np.broadcast_to(d, orders.shape), orders, axis=1)  # noqa: E731
    true_d = ordered(pair.per_task(y, pair.weight))
    ppi = pair.per_task(np.where(would[None, :], yhat[None, :] + audit / b.rho * (y - yhat)[None, :], y[None, :]), pair.weight)
    as_truth = pair.per_task(np.where(halted_now, yhat[None, :], y[None, :]), pair.weight)
    tested = (runs["agent"] == pair.tested).to_numpy()[None, :]
    low = ordered(pair.per_task(np.where(halted_now, np.where(tested, 0.0, 1.0), y[None, :]), pair.weight))  # predicted rows at their worst
    high = ordered(pair.per_task(np.where(halted_now, np.where(tested, 1.0, 0.0), y[None, :]), pair.weight))
    wrong = (would & (yhat != y))[None, :] & audit  # audited runs the monitor would have halted wrongly
    adverse_low = np.where(tested, yhat == 1.0, yhat == 0.0)  # a wrong prediction here lowers the true difference
    size = np.abs(pair.weight)
    ordered_ppi, ordered_as_truth = ordered(ppi), ordered(as_truth)
    tallies = (ordered_as_truth, ordered(pair.per_task(wrong & adverse_low, size)), ordered(pair.per_task(wrong & ~adverse_low, size)))
    scale = powered_scale(b.rho)
    out: dict[str, dict[str, np.ndarray]] = {}

    def mode(name: str, action: np.ndarray, tasks: np.ndarray, steps: np.ndarray, tokens: np.ndarray | None) -> None:
        out[name] = {
            "action": action, "tasks": tasks, "step_share": _spent(steps, tasks, total_steps),
            "token_share": _spent(tokens, tasks, total_tokens) if tokens is not None else np.full(k, np.nan),
        }

    everything = np.full(k, n_tasks)
    mode("full", np.full(k, truth_action), everything, full_steps, full_tokens)
    action, tasks = _first_stop(true_d, 1.0, b)
    mode("across-task", np.where(action == 0, truth_action, action), tasks, full_steps, full_tokens)
    promote, reject = _powered_crossings(ordered_ppi, low, high, tallies, b)
    action, _ = _stops(_at_the_end(promote), _at_the_end(reject))
    mode("within-task", action, everything, steps_now, tokens_now)
    action, tasks = _stops(promote, reject)
    mode("joined", action, tasks, steps_now, tokens_now)
    promote, reject, halted_tuned, _ = tuned_mode(pair, orders, draws, b.rho, b.delta, b.alpha, ordered)
    action, tasks = _stops(promote, reject)
    steps_tuned = _running_cost(pair.per_task(np.where(halted_tuned, h, n)), orders)
    tokens_tuned = _running_cost(pair.per_task(np.where(halted_tuned, tok_halt, tok_full)), orders) if has_tokens else None
    mode("joined tuned", action, tasks, steps_tuned, tokens_tuned)
    action, tasks = _first_stop(ordered_ppi, scale, b)
    mode("joined naive", action, tasks, steps_now, tokens_now)
    by_mean = np.where(as_truth.mean(axis=1) > b.delta, 1, -1)
    mode("within-task as truth", by_mean, everything, steps_now, tokens_now)
    action, tasks = _first_stop(ordered_as_truth, 1.0, b)
    mode("joined as truth", np.where(action == 0, by_mean, action), tasks, steps_now, tokens_now)
    return out


REPLAY_POLICY = Policy.model_validate(
    {
        "order": {"kind": "uniform"}, "coverage": {"rule": "none"},
        "decision": {"boundary": "betting-wor", "predicted": _PPI}, "early": {"audit_fraction": 0.5},
    }
)
"""The default policy of :func:`replay_joint`: delta = 0, a = 0.05, the betting boundary on uniform orders without
the coverage rule, predicted rows prediction-powered, rho = 0.5."""


def _policy_iv(policy: Policy | None, audit_fraction: float | None) -> tuple[Policy, float]:
    """The policy (checked: the replay's boundary, order and treatment) and rho."""
    policy = REPLAY_POLICY if policy is None else policy
    if not isinstance(policy, Policy):
        raise ArgumentError(f"`policy` must be a Policy; got {type(policy).__name__}")
    needs = {
        "[decision] boundary": (policy.decision.boundary, "betting-wor"),
        "[decision] predicted": (policy.decision.predicted, _PPI),
        "[order] kind": (policy.order.kind, "uniform"),
        "[coverage] rule": (policy.coverage.rule, "none"),
    }
    for name, (value, wanted) in needs.items():
        if value != wanted:
            raise ArgumentError(
                f"`policy`: the whole-evaluation replay decides with {name} = {wanted!r} (the pooled betting boundary on "
                f"uniform orders, predicted rows prediction-powered); got {value!r}"
            )
    rho = policy.early.audit_fraction if audit_fraction is None else audit_fraction
    if isinstance(rho, bool) or not isinstance(rho, int | float) or not 0.0 < rho <= 1.0:
        raise ArgumentError(f"`audit_fraction` (or the policy's [early] audit_fraction) must be in (0, 1]; got {rho!r}")
    return policy, float(rho)


def _audits(runs: pd.DataFrame, seed: int, n_orders: int) -> np.ndarray:
    """(K, R): run r's audit uniform in order k, drawn as a live evaluation with ``[early] audit_seed = seed + k`` draws it.

    Only the runs the monitor would halt are drawn (inf for the others: never audited): an audit changes nothing else.
    Run r is audited when its uniform is below its audit probability (rho, or the active rule's pi).
    """
    would = runs["halt_step"].notna().to_numpy()
    halting = runs[would]
    keys = list(zip(halting["agent"].astype(str).tolist(), halting["task"].astype(str).tolist(), halting["attempt"].astype(int).tolist(), strict=True))
    draws = np.full((n_orders, runs.shape[0]), np.inf)
    draws[:, would] = audit_draws(seed, n_orders, keys)
    return draws


def _replay_joint_iv(
    table: pd.DataFrame, pairs: Sequence[tuple[str, str]] | None, policy: Policy | None, audit_fraction: float | None, n_orders: int
) -> tuple[pd.DataFrame, list[tuple[str, str]], Policy, float]:
    t = _table_iv(table)
    policy, rho = _policy_iv(policy, audit_fraction)
    if isinstance(n_orders, bool) or int(n_orders) != n_orders or n_orders < 1:
        raise ArgumentError(f"`n_orders` must be a positive integer; got {n_orders!r}")
    agents = sorted(set(t["agent"].astype(str)))
    if pairs is None:
        tasks = {a: set(t.loc[t["agent"] == a, "task"].astype(str)) for a in agents}
        pairs = [(a, b) for i, a in enumerate(agents) for b in agents[i + 1:] if len(tasks[a] & tasks[b]) >= 2]
    checked = []
    for pair in pairs:
        if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(agents):
            raise ArgumentError(f"`pairs`: each pair must name two different agents of the table; got {pair!r}")
        checked.append((str(pair[0]), str(pair[1])))
    if not checked:
        raise ArgumentError("no pair of agents shares at least 2 tasks; nothing to replay")
    return t, checked, policy, rho


def replay_joint(
    table: pd.DataFrame,
    pairs: Sequence[tuple[str, str]] | None = None,
    *,
    policy: Policy | None = None,
    audit_fraction: float | None = None,
    n_orders: int = 200,
    rng: int = 0,
) -> JointReplay:
    """Replay live evaluations of each pair end to end under the four modes (see the module docstring).

    Parameters
    ----------
    table : pandas.DataFrame
        The run table (:func:`joint_halts`): one row per run with its halt, if any.
    pairs : sequence of (tested, baseline), optional
        The pairs to replay (default: every pair of agents sharing at least two tasks, agents sorted).
    policy : Policy, optional
        delta (``threshold``), the cutoff a (``tail_cutoff``), rho (``[early] audit_fraction``) and the audit
        seed (``[early] audit_seed``); it must name the replay's decision: ``[decision] boundary = "betting-wor"``,
        ``predicted = "prediction-powered"``, ``[order] kind = "uniform"``, ``[coverage] rule = "none"``
        (default :data:`REPLAY_POLICY`).
    audit_fraction : float, optional
        rho, the probability that a run is audited (never halted); overrides the policy's.
    n_orders : int, default 200
        K, the seeded task orders per pair; order k draws its audits with audit seed ``audit_seed + k``.
    rng : int, default 0
        Seed of the task orders (pair i uses the stream ``(rng, i)``).

    Returns
    -------
    JointReplay

    Examples
    --------
    >>> import pandas as pd
    >>> from stopwise.replay import replay_joint
    >>> table = pd.DataFrame({"agent": ["A"] * 40 + ["B"] * 40, "task": [f"t{i}" for i in range(40)] * 2,
    ...                       "attempt": 1, "outcome": [1] * 40 + [0] * 40, "n_steps": 10,
    ...                       "halt_step": 2.0, "predicted": [1.0] * 40 + [0.0] * 40,
    ...                       "halt_tokens": float("nan"), "total_tokens": float("nan")})
    >>> r = replay_joint(table, audit_fraction=0.5, n_orders=20).summary.set_index("mode")
    >>> float(r.loc["full", "step_share"]), bool(r.loc["within-task", "step_share"] < 1), float(r.loc["joined", "wrong"])
    (1.0, True, 0.0)
    """
    t, checked, policy, rho = _replay_joint_iv(table, pairs, policy, audit_fraction, n_orders)
    b = _Boundary(float(policy.threshold), float(policy.tail_cutoff), rho, policy.decision.predicted_centre)
    summary: list[dict[str, Any]] = []
    per_order: list[pd.DataFrame] = []
    task_orders: dict[tuple[str, str], np.ndarray] = {}
    for i, (tested, baseline) in enumerate(checked):
        pair = _pair(t, tested, baseline)
        orders = np.argsort(np.random.default_rng([int(rng), i]).random((int(n_orders), pair.tasks.shape[0])), axis=1)
        audit = _audits(pair.runs, policy.early.audit_seed, int(n_orders))
        task_orders[(tested, baseline)] = pair.tasks[orders]
        positive = pair.truth > b.delta
        for name, m in _pair_modes(pair, orders, audit, b).items():
            wrong = (m["action"] == 1) & ~positive | (m["action"] == -1) & positive
            p = float(wrong.mean())
            summary.append(
                {
                    "tested": tested, "baseline": baseline, "n_tasks": int(pair.tasks.shape[0]), "delta_full": pair.truth,
                    "positive": positive, "mode": name, "valid": _VALID[name], "decided": float((m["action"] != 0).mean()),
                    "wrong": p, "wrong_se": float(np.sqrt(p * (1 - p) / n_orders)), "step_share": float(m["step_share"].mean()),
                    "token_share": float(m["token_share"].mean()), "tasks_share": float(m["tasks"].mean() / pair.tasks.shape[0]),
                }
            )
            per_order.append(
                pd.DataFrame(
                    {
                        "tested": tested, "baseline": baseline, "mode": name, "order": np.arange(n_orders),
                        "action": np.array(["reject", "none", "promote"])[m["action"] + 1], "wrong": wrong,
                        "tasks": m["tasks"], "step_share": m["step_share"], "token_share": m["token_share"],
                    }
                )
            )
    settings = {
        "n_orders": int(n_orders), "audit_fraction": rho, "delta": b.delta, "alpha": b.alpha, "seed": int(rng),
        "audit_seed": int(policy.early.audit_seed), "predicted": policy.decision.predicted,
        "predicted_centre": policy.decision.predicted_centre,
        "halted_share": float(t["halt_step"].notna().mean()),
        "halt_accuracy": float((t["predicted"] == t["outcome"])[t["halt_step"].notna()].mean()) if t["halt_step"].notna().any() else float("nan"),
    }
    return JointReplay(pd.DataFrame(summary), pd.concat(per_order, ignore_index=True), settings, task_orders)
