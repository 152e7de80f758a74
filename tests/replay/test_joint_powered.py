"""The whole-evaluation replay's prediction-powered modes, computed for every order at once, against the boundary
of each order computed on its own from the rows a live evaluation would hold; and the replay's audit draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stopwise import Policy
from stopwise.compare import AuditTallies, pair_outcomes, powered_boundary, powered_scale
from stopwise.compare._predicted import powered_pairs
from stopwise.records import OutcomeColumns, audit_draw, read_trajectories
from stopwise.replay import JointReplay, joint_rows, replay_joint
from stopwise.replay._joint_audits import audit_draws


def _table(n: int, seed: int, *, attempts_b: int = 1, accuracy: float = 0.9, gap: float = 0.25) -> pd.DataFrame:
    """Agent A (one attempt) against B (``attempts_b`` attempts) on n tasks: 70 % of runs halted, ``accuracy`` right."""
    rng = np.random.default_rng(seed)
    parts = []
    for agent, p, attempts in (("A", 0.5 + gap, 1), ("B", 0.5, attempts_b)):
        for attempt in range(1, attempts + 1):
            y = (rng.random(n) < p).astype(float)
            steps = rng.integers(8, 30, n).astype(float)
            halted = rng.random(n) < 0.7
            halt = np.where(halted, np.floor(steps * rng.uniform(0.1, 0.9, n)), np.nan)
            parts.append(pd.DataFrame({
                "agent": agent, "task": [f"t{i:03d}" for i in range(n)], "attempt": attempt, "outcome": y, "n_steps": steps,
                "halt_step": halt, "predicted": np.where(halted, np.where(rng.random(n) < accuracy, y, 1 - y), np.nan),
                "halt_tokens": np.nan, "total_tokens": np.nan,
            }))  # fmt: skip
    return pd.concat(parts, ignore_index=True)


def _policy(rho: float, centre: str, threshold: float = 0.0) -> Policy:
    return Policy.model_validate({
        "threshold": threshold, "order": {"kind": "uniform"}, "coverage": {"rule": "none"},
        "decision": {"boundary": "betting-wor", "predicted": "prediction-powered", "predicted_centre": centre},
        "early": {"audit_fraction": rho},
    })  # fmt: skip


def _each_order_alone(table: pd.DataFrame, result: JointReplay, pair: tuple[str, str], policy: Policy) -> pd.DataFrame:
    """Per order: the joined mode's (action, tasks) and the within-task action, from powered_boundary on that order alone.

    Order k's rows are those a live evaluation with audit seed ``audit_seed + k`` holds (joint_rows of the public audit
    draw); powered_pairs pairs them as ``decide`` does (attempts averaged), in the order the replay ran the tasks.
    """
    tested, baseline = pair
    runs = table[table["agent"].isin(pair)]
    rho, a = policy.early.audit_fraction, policy.tail_cutoff
    level = np.log(1.0 / a)
    out = []
    for k, order in enumerate(result.task_orders[pair]):
        seed = policy.early.audit_seed + k
        audited = [audit_draw(seed, s, t, n) < rho for s, t, n in zip(runs["agent"], runs["task"], runs["attempt"], strict=True)]
        rows = joint_rows(runs, audited)
        p = powered_pairs(OutcomeColumns.from_frame(rows), tested, rho, lambda r: pair_outcomes(r, tested, baseline, statuses=("final", "predicted")))
        at = np.searchsorted(p.paired.tasks, order)  # the pairing's tasks are sorted; the replay ran them in ``order``
        assert p.audit is not None and np.array_equal(p.paired.tasks[at], order)
        bound = powered_boundary(
            p.paired.differences[at], p.low[at], p.high[at], policy.threshold, population_size=len(order), alpha=a, scale=powered_scale(rho),
            centre=policy.decision.predicted_centre, audit=AuditTallies(p.audit.point[at], p.audit.wrong_low[at], p.audit.wrong_high[at]),
            audit_fraction=rho,
        )  # fmt: skip
        first = [np.flatnonzero(np.maximum.accumulate(log) >= level) for log in (bound.log_capital_promote, bound.log_capital_reject)]
        at_p, at_r = (int(f[0]) if len(f) else len(order) for f in first)
        joined = "promote" if at_p < at_r else "reject" if at_r < at_p else "none"
        within = "promote" if bound.promote and not bound.reject else "reject" if bound.reject and not bound.promote else "none"
        out.append({"joined": joined, "tasks": min(at_p, at_r) + 1 if joined != "none" else len(order), "within-task": within})
    return pd.DataFrame(out)


def _check(table: pd.DataFrame, policy: Policy, n_orders: int, rng: int = 0) -> dict[str, int]:
    result = replay_joint(table, policy=policy, n_orders=n_orders, rng=rng)
    counts = {"promote": 0, "reject": 0, "none": 0}
    for pair in result.task_orders:
        orders = result.orders[(result.orders["tested"] == pair[0]) & (result.orders["baseline"] == pair[1])]
        joined = orders[orders["mode"] == "joined"].reset_index(drop=True)
        within = orders[orders["mode"] == "within-task"].reset_index(drop=True)
        alone = _each_order_alone(table, result, pair, policy)
        assert joined["action"].tolist() == alone["joined"].tolist()
        assert joined["tasks"].tolist() == alone["tasks"].tolist()
        assert within["action"].tolist() == alone["within-task"].tolist()
        for action, count in joined["action"].value_counts().items():
            counts[str(action)] += int(count)
    return counts


@pytest.mark.parametrize(
    ("rho", "centre", "threshold", "attempts_b"),
    [(0.5, "audited-bound", 0.0, 1), (0.2, "audited-bound", -0.2, 1), (0.35, "worst-case", -0.1, 1), (0.5, "audited-bound", 0.0, 2),
     (1.0, "audited-bound", 0.0, 1), (0.7, "audited-bound", 0.45, 1)],
)  # fmt: skip
def test_every_order_stops_where_its_own_boundary_does(rho: float, centre: str, threshold: float, attempts_b: int) -> None:
    counts = _check(_table(60, seed=int(100 * rho) + attempts_b, attempts_b=attempts_b), _policy(rho, centre, threshold), n_orders=25)
    # the comparison covers orders that stop as well as orders that never do
    assert counts["promote"] + counts["reject"] > 0, counts
    if threshold > 0.3:
        assert counts["reject"] > 0, counts  # above the pair's difference: the reject side acts


def _real_table(runs: list, seed: int) -> pd.DataFrame:
    """The run table of real trajectories under a seeded stand-in monitor: 60 % of runs halted at a uniform step
    before their end, the prediction right with probability 0.8 (real outcomes, run lengths and attempts)."""
    rng = np.random.default_rng(seed)
    n = len(runs)
    y = np.array([float(r.outcome) for r in runs])
    steps = np.array([float(len(r.steps)) for r in runs])
    halted = (rng.random(n) < 0.6) & (steps > 1)
    halt = np.where(halted, np.floor(rng.random(n) * (steps - 1)), np.nan)
    return pd.DataFrame({
        "agent": [r.agent for r in runs], "task": [r.task for r in runs], "attempt": [r.attempt for r in runs], "outcome": y,
        "n_steps": steps, "halt_step": halt, "predicted": np.where(halted, np.where(rng.random(n) < 0.8, y, 1 - y), np.nan),
        "halt_tokens": np.nan, "total_tokens": np.nan,
    })  # fmt: skip


@pytest.mark.data
def test_every_order_stops_where_its_own_boundary_does_on_shared_trajectories(shared_data: Path) -> None:
    """MCPMark's postgres service: three agents, 21 tasks, four attempts per task but for four (agent, task) cells with
    three, two or one (the weights 1/3, 1/2 and 1 beside 1/4), every pair of agents."""
    everything = read_trajectories(shared_data / "trajectories" / "mcpmark" / "trajectories.jsonl.gz")
    table = _real_table([r for r in everything if r.meta.get("service") == "postgres"], seed=8)
    attempts = table.groupby(["agent", "task"]).size()
    assert len(attempts) == 63 and set(attempts) == {1, 2, 3, 4} and table["halt_step"].notna().mean() > 0.5
    counts = {"promote": 0, "reject": 0, "none": 0}
    for rho, centre, threshold in ((0.35, "worst-case", -0.4), (0.7, "audited-bound", 0.3)):
        for action, count in _check(table, _policy(rho, centre, threshold), n_orders=12, rng=3).items():
            counts[action] += count
    assert counts["promote"] > 0 and counts["reject"] > 0 and counts["none"] > 0, counts


def test_the_audit_draws_are_audit_draw_of_each_run() -> None:
    keys = [("A", "t1", 1), ("B", "t1", 1), ("agent é", "task/ü 2", 0), ("A", "t\x1f", 3), ("", "", 12)]
    draws = audit_draws(40, 3, keys)
    expected = [[audit_draw(40 + k, s, t, a) for s, t, a in keys] for k in range(3)]
    assert np.array_equal(draws, np.array(expected))
    assert audit_draws(40, 3, list(keys)) is draws and not draws.flags.writeable  # kept for the next replay, read-only
    assert audit_draws(7, 0, keys).shape == (0, 5) and audit_draws(7, 2, []).shape == (2, 0)
