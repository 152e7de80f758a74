"""The whole-evaluation replay: spending and decisions checked against hand computations, the rows' contract,
the guarantee of the prediction-powered mode under badly wrong predictions, and a slice of the shared data."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stopwise import Policy
from stopwise.compare import betting_paths
from stopwise.early import DualHeadClassifier, EarlyOutcomeModel, leave_one_out
from stopwise.errors import ArgumentError
from stopwise.records import TaskUniverse, audit_draw, read_trajectories
from stopwise.replay import JOINT_MODES, joint_halts, joint_rows, replay_joint, synthetic_trajectories

SMALL = {"n_components": 4, "min_df": 2, "min_steps": 5, "classifier": DualHeadClassifier(min_child_samples=20, n_estimators=40)}
NAN = float("nan")


def _table(a: list[int], b: list[int], *, n_steps: int | list[int] = 10, halt: float = NAN, pred_a: float = NAN,
           pred_b: float = NAN, tokens: bool = False) -> pd.DataFrame:
    """One attempt per task of agents A and B; every run of an agent halts at ``halt`` with the same prediction."""
    n = len(a)
    steps = np.broadcast_to(np.asarray(n_steps, dtype=float), (2 * n,)) if np.ndim(n_steps) == 0 else np.r_[n_steps, n_steps].astype(float)
    return pd.DataFrame(
        {
            "agent": ["A"] * n + ["B"] * n, "task": [f"t{i:03d}" for i in range(n)] * 2, "attempt": 1,
            "outcome": np.r_[a, b].astype(float), "n_steps": steps, "halt_step": halt,
            "predicted": np.r_[np.full(n, pred_a), np.full(n, pred_b)],
            "halt_tokens": 100.0 * halt if tokens else NAN, "total_tokens": 100.0 * steps if tokens else NAN,
        }
    )


def _policy(**fields: object) -> Policy:
    """The replay's policy (uniform orders, no coverage rule, betting-wor, prediction-powered, rho = 0.5) with ``fields`` replaced."""
    base: dict[str, object] = {
        "order": {"kind": "uniform"}, "coverage": {"rule": "none"},
        "decision": {"boundary": "betting-wor", "predicted": "prediction-powered"}, "early": {"audit_fraction": 0.5},
    }
    return Policy.model_validate({**base, **fields})


def _crossing(n: int, value: float, scale: float, alpha: float = 0.05, threshold: float = 0.0) -> int:
    """Observed task count at which a run of constant differences first crosses (an independent call)."""
    promote, _ = betting_paths(np.full((1, n), value / scale), threshold / scale, population_size=n, alpha=alpha).crossed(alpha)
    return int(np.argmax(promote[0])) + 1


def test_spending_of_a_tiny_benchmark_by_hand() -> None:
    n, rho, k_orders = 40, 0.5, 400
    table = _table([1] * n, [0] * n, n_steps=10, halt=2.0, pred_a=1.0, pred_b=0.0, tokens=True)
    result = replay_joint(table, audit_fraction=rho, n_orders=k_orders, rng=3)
    s = result.summary.set_index("mode")
    assert list(s.index) == list(JOINT_MODES)
    assert (s["wrong"] == 0).all() and (s["decided"] == 1).all() and s["delta_full"].eq(1.0).all()
    assert s.loc["full", "step_share"] == 1.0 and s.loc["full", "token_share"] == 1.0
    # every task has difference +1 and equal steps: across-task stops at the boundary's crossing, whatever the order
    k_across = _crossing(n, 1.0, 1.0)
    across = result.orders[result.orders["mode"] == "across-task"]
    assert (across["tasks"] == k_across).all()
    np.testing.assert_allclose(across["step_share"], k_across / n, rtol=0, atol=1e-12)
    # right predictions: the prediction-powered differences are the true ones, on the range 2/rho - 1 = 3
    assert (result.orders.loc[result.orders["mode"] == "joined naive", "tasks"] == _crossing(n, 1.0, 2 / rho - 1)).all()
    # the joined mode's spending by hand: a run costs 10 steps when order k's audit draw (seed k) audits it, else 2
    joined = result.orders[result.orders["mode"] == "joined"].reset_index(drop=True)
    order = result.task_orders[("A", "B")]
    for k in range(0, k_orders, 37):
        prefix = order[k, : joined.loc[k, "tasks"]]
        steps = sum(10 if audit_draw(k, agent, task, 1) < rho else 2 for agent in "AB" for task in prefix)
        assert joined.loc[k, "step_share"] == pytest.approx(steps / (2 * n * 10), abs=1e-12)
    per_run = (rho * 10 + (1 - rho) * 2) / 10  # the expected share of a run
    within = result.orders[result.orders["mode"] == "within-task"]
    assert within["step_share"].mean() == pytest.approx(per_run, abs=4 * np.sqrt(rho * (1 - rho)) * 0.8 / np.sqrt(2 * n * k_orders))
    np.testing.assert_allclose(within["token_share"], within["step_share"], rtol=0, atol=1e-12)  # 100 tokens a step


def test_the_full_record_decides_and_audit_everything_spends_everything() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 30), rng.integers(0, 2, 30)
    table = _table(list(a), list(b), n_steps=list(rng.integers(3, 20, 30)), halt=1.0, pred_a=0.0, pred_b=1.0)
    s = replay_joint(table, audit_fraction=1.0, n_orders=20).summary.set_index("mode")
    assert s.loc["full", "delta_full"] == pytest.approx((a - b).mean(), abs=1e-12)
    assert s.loc["full", "positive"] == bool((a - b).mean() > 0)
    for mode in ("full", "within-task", "within-task as truth"):
        assert s.loc[mode, "step_share"] == pytest.approx(1.0, abs=1e-12)  # rho = 1: nothing halts
    assert s.loc["within-task as truth", "wrong"] == 0.0  # with every run audited, the predictions never enter


def test_prediction_powered_keeps_its_guarantee_where_predictions_as_truth_fail() -> None:
    """Equal agents (not positive at delta = 0), and a monitor that predicts success for A and failure for B on every run."""
    rng = np.random.default_rng(11)
    n, k_orders, alpha = 80, 600, 0.05
    y = rng.integers(0, 2, n)
    table = _table(list(y), list(rng.permutation(y)), n_steps=12, halt=3.0, pred_a=1.0, pred_b=0.0)
    s = replay_joint(table, audit_fraction=0.4, n_orders=k_orders, rng=5).summary.set_index("mode")
    assert s.loc["full", "delta_full"] == 0.0 and not s.loc["full", "positive"]
    bound = alpha + 2 * np.sqrt(alpha * (1 - alpha) / k_orders)
    assert s.loc["joined", "wrong"] <= bound and s.loc["within-task", "wrong"] <= bound
    assert s.loc["joined as truth", "wrong"] > 0.9 and s.loc["within-task as truth", "wrong"] == 1.0
    # the boundary on prediction-powered differences taken as fixed values ignores the audit noise: invalid
    assert s.loc["joined naive", "wrong"] > 0.3
    # the same monitor and audits on a clearly positive pair: the prediction-powered boundary does decide
    clear = _table([1] * n, list(rng.integers(0, 2, n) * (rng.random(n) < 0.2)), n_steps=12, halt=3.0, pred_a=1.0, pred_b=0.0)
    c = replay_joint(clear, audit_fraction=0.4, n_orders=100, rng=5).summary.set_index("mode")
    assert c.loc["joined", "positive"] and c.loc["joined", "decided"] > 0.5 and c.loc["joined", "wrong"] == 0.0


def test_rows_follow_the_contract() -> None:
    table = _table([1, 0, 1], [0, 0, 1], halt=4.0, pred_a=1.0, pred_b=0.0)
    table.loc[[1, 4], ["halt_step", "predicted"]] = NAN  # A on t001 and B on t001 run to their end
    audited = np.array([False, True, True, False, False, True])
    rows = joint_rows(table, audited)
    assert rows["status"].tolist() == ["predicted", "final", "final", "predicted", "final", "final"]
    # an audited run the monitor would have halted carries the prediction it would have stored (A: 1, B: 0)
    assert rows["flags"].tolist() == ["predicted", "audited", "audited;would-halt:1", "predicted", "", "audited;would-halt:0"]
    assert rows["outcome"].tolist() == [1.0, 0.0, 1.0, 0.0, 0.0, 1.0]  # predicted rows carry the prediction, the rest the truth


def test_bad_input_is_named() -> None:
    table = _table([1, 0], [0, 1])
    with pytest.raises(ArgumentError, match=r"\[decision\] boundary = 'betting-wor'.*got 'fixed-budget'"):
        replay_joint(table, policy=Policy())
    with pytest.raises(ArgumentError, match=r"\[decision\] predicted = 'prediction-powered'.*got 'exclude'"):
        replay_joint(table, policy=_policy(decision={"boundary": "betting-wor"}))
    with pytest.raises(ArgumentError, match=r"audit_fraction.*must be in \(0, 1\]; got 0.0"):
        replay_joint(table, policy=_policy(early={"audit_fraction": 0.0}))
    with pytest.raises(ArgumentError, match="audit_fraction"):
        replay_joint(table, audit_fraction=1.5)
    with pytest.raises(ArgumentError, match="lacks column"):
        replay_joint(table.drop(columns="halt_step"), audit_fraction=0.5)
    with pytest.raises(ArgumentError, match="pairs"):
        replay_joint(table, [("A", "C")], audit_fraction=0.5)
    bad = table.copy()
    bad.loc[0, "outcome"] = 0.5
    with pytest.raises(ArgumentError, match="row 0: `outcome`"):
        replay_joint(bad, audit_fraction=0.5)
    with pytest.raises(ArgumentError, match="one flag per run"):
        joint_rows(table, [True])


def test_synthetic_benchmark_end_to_end() -> None:
    runs = synthetic_trajectories(24, 4, rng=2)
    assert len(runs) == 96 and {r.meta["pool"] for r in runs if r.agent in ("agent-1", "agent-3")} == {"pool-a"}
    assert all(s.tokens_in is not None for r in runs for s in r.steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        evaluation = leave_one_out(runs, EarlyOutcomeModel(**SMALL), by="pool")
    table = joint_halts(evaluation, 0.9, 0.9)
    # the run table agrees with the trajectories and with the evaluation's own halts
    by_run = {(r.agent, r.task): r for r in runs}
    assert [len(by_run[(a, t)].steps) for a, t in zip(table["agent"], table["task"], strict=True)] == table["n_steps"].tolist()
    halts = evaluation.metrics(0.9, 0.9).halts
    assert table["halt_step"].notna().sum() == halts["halt_step"].notna().sum() > 0
    first = table[table["halt_step"].notna()].iloc[0]
    run = by_run[(first["agent"], first["task"])]
    k = int(first["halt_step"])
    spent = sum(s.tokens_in + s.tokens_out for s in run.steps[:k])  # type: ignore[operator]
    assert first["halt_tokens"] == spent and first["total_tokens"] == sum(s.tokens_in + s.tokens_out for s in run.steps)  # type: ignore[operator]
    result = replay_joint(table, [("agent-3", "agent-1"), ("agent-4", "agent-2")], audit_fraction=0.5, n_orders=30)
    s = result.summary
    assert s.shape[0] == 2 * len(JOINT_MODES)
    assert (s.loc[s["mode"] == "full", "step_share"] == 1.0).all()
    assert ((s["step_share"] > 0) & (s["step_share"] <= 1) & (s["token_share"] > 0) & (s["token_share"] <= 1)).all()
    assert result.settings["halted_share"] == pytest.approx(table["halt_step"].notna().mean())
    # the same seed gives the same replay
    again = replay_joint(table, [("agent-3", "agent-1"), ("agent-4", "agent-2")], audit_fraction=0.5, n_orders=30)
    pd.testing.assert_frame_equal(result.orders, again.orders)


def test_synthetic_failing_runs_may_be_longer() -> None:
    """``max_failed_steps``: failing runs take up to that many steps, passing ones stay within ``max_steps``; the
    default (and ``max_failed_steps = max_steps``) draws exactly the runs drawn before the option existed."""
    plain = synthetic_trajectories(30, 2, rng=4)
    same = synthetic_trajectories(30, 2, rng=4, max_failed_steps=40)
    assert [(r.task, r.outcome, len(r.steps)) for r in plain] == [(r.task, r.outcome, len(r.steps)) for r in same]
    assert [s.action for s in plain[5].steps] == [s.action for s in same[5].steps]
    long = synthetic_trajectories(200, 2, rng=4, max_failed_steps=100)
    failed = [len(r.steps) for r in long if r.outcome == 0]
    passed = [len(r.steps) for r in long if r.outcome == 1]
    assert max(passed) <= 40 and 40 < max(failed) <= 100 and min(failed) >= 12
    # uniform on 12..100: mean 56 (SE of the mean of ~200 draws about 1.8)
    assert np.mean(failed) == pytest.approx(56.0, abs=6.0)
    for bad in (11, 2.5, True):
        with pytest.raises(ArgumentError, match="max_failed_steps"):
            synthetic_trajectories(10, 2, max_failed_steps=bad)


def test_shared_data_slice(shared_data: Path) -> None:
    """MCPMark github and notion, 6 tasks each: each service's runs are monitored by a model trained on the other."""
    everything = read_trajectories(shared_data / "trajectories" / "mcpmark" / "trajectories.jsonl.gz")
    keep = {s: sorted({r.task for r in everything if r.meta.get("service") == s})[:6] for s in ("github", "notion")}
    runs = [r for r in everything if r.task in keep.get(str(r.meta.get("service")), [])]
    assert len(runs) == 2 * 2 * 6 * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        evaluation = leave_one_out(runs, EarlyOutcomeModel(**SMALL), by="service")
    table = joint_halts(evaluation, 0.8, 0.8)
    assert table["total_tokens"].isna().all()  # per-step tokens are not recorded in MCPMark
    result = replay_joint(table, audit_fraction=0.5, n_orders=20)
    s = result.summary
    pairs = set(zip(s["tested"], s["baseline"], strict=True))
    assert len(pairs) == 2 and all(t.split("+")[1].split(":")[0] == b.split("+")[1].split(":")[0] for t, b in pairs)
    for (tested, baseline), rows in s.groupby(["tested", "baseline"]):
        per_task = pd.DataFrame([(r.agent, r.task, r.outcome) for r in runs], columns=["a", "t", "y"]).groupby(["a", "t"])["y"].mean()
        expected = (per_task[tested] - per_task[baseline]).mean()  # attempts averaged, then tasks
        assert rows["delta_full"].iloc[0] == pytest.approx(expected, abs=1e-12)
        assert rows.set_index("mode").loc["full", "step_share"] == 1.0
    assert ((s["step_share"] > 0) & (s["step_share"] <= 1 + 1e-12)).all() and s["token_share"].isna().all()


def test_policy_supplies_delta_and_alpha() -> None:
    n = 30
    table = _table([1] * n, [0] * n, halt=2.0, pred_a=1.0, pred_b=0.0)
    policy = _policy(threshold=0.5, tail_cutoff=0.01)
    result = replay_joint(table, policy=policy, audit_fraction=0.5, n_orders=10)
    s = result.summary.set_index("mode")
    assert s.loc["full", "positive"] and result.settings["delta"] == 0.5 and result.settings["alpha"] == 0.01
    promote, _ = betting_paths(np.ones((1, n)), 0.5, population_size=n, alpha=0.01).crossed(0.01)
    across = result.orders[result.orders["mode"] == "across-task"]
    assert (across["tasks"] == int(np.argmax(promote[0])) + 1).all()


def test_the_joined_mode_decides_as_stopwise_decide_on_the_live_rows() -> None:
    """At the look where the replay stops, ``decide`` with predicted = "prediction-powered" on the rows a live
    evaluation would hold (joint_rows, the order's audit draw) acts; one task earlier it continues; an order the
    replay leaves undecided ends in abstain. Both centres (the worst case leaves orders undecided here; the
    audited bound decides them all)."""
    rng = np.random.default_rng(4)
    n, rho = 60, 0.5
    a = (rng.random(n) < 0.85).astype(int)
    b = (rng.random(n) < 0.2).astype(int)
    table = _table(list(a), list(b), n_steps=8, halt=2.0)
    table["predicted"] = np.where(rng.random(2 * n) < 0.9, table["outcome"], 1 - table["outcome"])  # 10 % wrong halts
    checked = {"decided": 0, "none": 0}
    for centre in ("worst-case", "audited-bound"):
        policy = _policy(early={"audit_fraction": rho}, decision={"boundary": "betting-wor", "predicted": "prediction-powered", "predicted_centre": centre})
        result = replay_joint(table, policy=policy, n_orders=40, rng=1)
        joined = result.orders[result.orders["mode"] == "joined"].reset_index(drop=True)
        for k in range(40):
            audited = np.array([audit_draw(k, s, t, 1) < rho for s, t in zip(table["agent"], table["task"], strict=True)])
            rows = joint_rows(table, audited)
            order = result.task_orders[("A", "B")][k]
            universe = TaskUniverse(list(order))
            stop = int(joined.loc[k, "tasks"])
            action = stopwise_decide(rows[rows["task"].isin(order[:stop])], policy, universe)
            if joined.loc[k, "action"] == "none":
                checked["none"] += 1
                assert stop == n and action == "abstain"  # every task run, no final action
            else:
                checked["decided"] += 1
                assert action == joined.loc[k, "action"]
                assert stopwise_decide(rows[rows["task"].isin(order[: stop - 1])], policy, universe) == "continue"
    assert checked["decided"] >= 10 and checked["none"] >= 1, checked  # both cases checked


def stopwise_decide(rows: pd.DataFrame, policy: Policy, universe: TaskUniverse) -> str:
    from stopwise import decide

    return str(decide(rows, "A", "B", policy, universe=universe).action)


def test_the_tuned_mode_reads_the_recorded_confidence() -> None:
    """Issue 34: the active rule's pi of each would-halt run from its recorded head probability (``halt_probability``),
    the reference 0.95 without it: the mode's mean pi equals the rule applied here by hand (tolerance 1e-12)."""
    from stopwise.compare import ActiveAudits
    from stopwise.replay._joint import _pair
    from stopwise.replay._joint_tuned import tuned_mode

    rng = np.random.default_rng(5)
    n = 40
    table = _table(list(rng.integers(0, 2, n)), list(rng.integers(0, 2, n)), halt=3.0, pred_a=1.0, pred_b=1.0)
    confidence = 0.9 + 0.1 * rng.random(2 * n)
    rule = ActiveAudits(0.3)
    favours = np.r_[np.ones(n, bool), np.zeros(n, bool)]  # A predicted 1 favours A; B predicted 1 does not
    orders = np.argsort(rng.random((3, n)), axis=1)
    draws = rng.random((3, 2 * n))

    def mean_pi(t: pd.DataFrame) -> float:
        pair = _pair(t, "A", "B")
        return tuned_mode(pair, orders, draws, 0.3, 0.0, 0.05, lambda v: v[..., orders] if v.ndim == 1 else np.take_along_axis(v, orders, axis=-1))[3]

    assert mean_pi(table) == pytest.approx(float(rule.probability(favours, np.full(2 * n, 0.95)).mean()), abs=1e-12)
    recorded = table.assign(halt_probability=confidence)
    assert mean_pi(recorded) == pytest.approx(float(rule.probability(favours, confidence).mean()), abs=1e-12)
    assert mean_pi(recorded) != pytest.approx(mean_pi(table), abs=1e-6)
