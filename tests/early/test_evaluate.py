"""Leave-one-out evaluation: protocol, metrics recomputed independently from the saved predictions, outcome rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stopwise.early import (
    DualHeadClassifier,
    EarlyEvaluation,
    EarlyOutcomeModel,
    TfidfLogisticModel,
    early_metrics,
    leave_one_out,
)
from stopwise.errors import InputError, ValidationError
from stopwise.records import Trajectory, read_trajectories

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


# --------------------------------------------------------------------------- independent reference
def _halts(runs: pd.DataFrame, pred: pd.DataFrame, s: float | None, f: float | None) -> dict[int, tuple[int, int]]:
    """Plain loops over the saved rows: run -> (halt step, predicted outcome)."""
    out = {}
    for run, rows in pred.groupby("run"):
        T = int(runs.loc[runs["run"] == run, "n_steps"].iloc[0])
        rows = rows.sort_values("k")
        for k, ps, pf in zip(rows["k"], rows["p_success"], rows["p_failure"], strict=True):
            if k < 1 or k >= T:
                continue
            s_hit = s is not None and ps >= s
            f_hit = f is not None and pf >= f
            if s_hit and f_hit:
                out[int(run)] = (int(k), 1 if (ps - s) > (pf - f) else 0)  # type: ignore[operator]
                break
            if s_hit or f_hit:
                out[int(run)] = (int(k), 1 if s_hit else 0)
                break
    return out


def _char_costs(run: Trajectory) -> tuple[list[float], list[float]]:
    """Per-step input (context) and output characters, written out longhand."""
    ins, outs, context = [], [], len(run.task_text)
    for step in run.steps:
        ins.append(float(context))
        outs.append(float(len(step.action)))
        context += len(step.action) + len(step.observation)
    return ins, outs


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra = pd.Series(a).rank(method="average").to_numpy()
    rb = pd.Series(b).rank(method="average").to_numpy()
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def _check_against_reference(evaluation: EarlyEvaluation, folder: Path, trajectories: list[Trajectory], settings: list) -> int:
    runs = pd.read_csv(folder / "runs.csv", dtype={"agent": str, "task": str})
    pred = pd.read_csv(folder / "predictions.csv.gz")
    loaded = EarlyEvaluation.load(folder)
    by_key = {(r.agent, r.task, r.attempt): r for r in trajectories}
    n_halted_total = 0
    for s, f in settings:
        m = evaluation.metrics(s, f)
        m_loaded = loaded.metrics(s, f)
        halts = _halts(runs, pred, s, f)
        n = len(runs)
        outcome = dict(zip(runs["run"], runs["outcome"], strict=True))
        success = [r for r, (_, p) in halts.items() if p == 1]
        failure = [r for r, (_, p) in halts.items() if p == 0]
        n_halted_total += len(halts)
        executed = {int(r): halts[r][0] if r in halts else int(t) for r, t in zip(runs["run"], runs["n_steps"], strict=True)}
        # costs recomputed from the original trajectories, not from the saved cumulative columns
        cost_in = cost_out = full_in = full_out = 0.0
        for row in runs.itertuples(index=False):
            ins, outs = _char_costs(by_key[(row.agent, row.task, row.attempt)])
            cost_in += sum(ins[: executed[row.run]])
            cost_out += sum(outs[: executed[row.run]])
            full_in += sum(ins)
            full_out += sum(outs)
        early = {r: (halts[r][1] if r in halts else outcome[r]) for r in runs["run"]}
        table = runs.assign(early=runs["run"].map(early)).groupby("agent").agg(full=("outcome", "mean"), early=("early", "mean"))
        expected = {
            "coverage": len(halts) / n,
            "accuracy": np.mean([halts[r][1] == outcome[r] for r in halts]) if halts else np.nan,
            "success_coverage": len(success) / n,
            "success_precision": np.mean([outcome[r] == 1 for r in success]) if success else np.nan,
            "failure_coverage": len(failure) / n,
            "failure_precision": np.mean([outcome[r] == 0 for r in failure]) if failure else np.nan,
            "delta_steps": sum(executed.values()) / runs["n_steps"].sum() - 1,
            "delta_tokens_in": cost_in / full_in - 1,
            "delta_tokens_out": cost_out / full_out - 1,
            "delta_abs_pass1": float((table["early"] - table["full"]).abs().mean()),
            "spearman_rho": _spearman(table["full"].to_numpy(), table["early"].to_numpy()),
        }
        for name, value in expected.items():
            for got in (getattr(m, name), getattr(m_loaded, name)):
                if np.isnan(value):
                    assert np.isnan(got), (s, f, name)
                else:
                    assert got == pytest.approx(value, abs=1e-12), (s, f, name)
        per_agent = m.per_agent.set_index("agent")
        np.testing.assert_allclose(per_agent.loc[table.index, "delta_pass1"], table["early"] - table["full"], rtol=0, atol=1e-12)
        rows = evaluation.outcome_rows(s, f)
        assert (rows["status"] == "predicted").sum() == len(halts)
        assert set(rows["status"]) <= {"predicted", "final"}
    return n_halted_total


@pytest.mark.slow  # real runs at full scale; the same protocol and reference check run on synthetic runs in the default lane (below)
def test_leave_one_agent_out_on_shared_data(shared_data: Path, tmp_path: Path) -> None:
    """A slice of the shared MCPMark runs (the github service: two agents, disjoint from the other services)."""
    everything = read_trajectories(shared_data / "trajectories" / "mcpmark" / "trajectories.jsonl.gz")
    github = [r for r in everything if r.meta.get("service") == "github"]
    assert len(github) == 184
    model = EarlyOutcomeModel(n_components=16, classifier=DualHeadClassifier(n_estimators=300))
    evaluation = leave_one_out(github, model, by="agent", within="service", source="mcpmark/github")
    folder = evaluation.save(tmp_path / "eval")
    # the protocol: each fold trains on the other agent's runs of >= 10 steps only
    for fold in evaluation.folds.itertuples(index=False):
        others = [r for r in github if r.agent != fold.held_out and len(r.steps) >= 10]
        assert fold.n_train_runs == len(others)
    assert evaluation.runs.shape[0] == 184 and evaluation.predictions.shape[0] == sum(len(r.steps) + 1 for r in github)
    assert evaluation.token_source == "characters"
    settings = [(0.6, 0.6), (None, 0.7), (0.7, None), (0.9, 0.9), (0.97, 0.97)]
    assert _check_against_reference(evaluation, folder, github, settings) > 0  # some runs halted: the check is not vacuous


def test_synthetic_variants_sweep_and_outcome_rows(runs: list[Trajectory], small_params: dict, tmp_path: Path) -> None:
    models = {
        "lightgbm": EarlyOutcomeModel(**small_params),
        "dense_lr": EarlyOutcomeModel(**{**small_params, "classifier": DualHeadClassifier(backbone="logistic")}),
        "no_text": EarlyOutcomeModel(**small_params, exclude=("textual",)),
        "tfidf_lr": TfidfLogisticModel(min_df=2, min_steps=5),
    }
    evaluation = leave_one_out(runs, models, by="agent")
    assert evaluation.variants == list(models)
    assert set(evaluation.folds["held_out"]) == {f"agent-{a}" for a in range(4)}
    folder = evaluation.save(tmp_path / "e")
    settings = [(0.7, 0.7), (None, 0.6), (0.6, None)]
    for name in models:
        sub = EarlyEvaluation(
            evaluation.runs, evaluation.predictions[evaluation.predictions["variant"] == name], evaluation.folds,
            "agent", None, None, 1, evaluation.token_source,
        )
        sub_folder = sub.save(tmp_path / name)
        _check_against_reference(sub, sub_folder, runs, settings)
    sweep = EarlyEvaluation.load(folder).sweep(variant="lightgbm")
    assert sweep.shape[0] == 18 and list(sweep["mode"][:3]) == ["success-only", "failure-only", "dual"]
    with pytest.raises(InputError, match="several variants"):
        evaluation.metrics(0.9, 0.9)
    off = evaluation.metrics(None, None, variant="lightgbm")
    assert off.coverage == 0 and off.delta_steps == 0 and off.delta_abs_pass1 == 0


def test_within_and_exclude_same(runs: list[Trajectory], small_params: dict) -> None:
    model = EarlyOutcomeModel(**small_params)
    within = leave_one_out(runs, model, by="agent", within="service")
    # services svc-0 = agents 0, 2 and svc-1 = agents 1, 3: each fold trains on the one other agent of its service
    assert within.folds["n_train_runs"].tolist() == [12, 12, 12, 12]
    assert sorted(within.runs["stratum"].unique()) == ["svc-0", "svc-1"]
    # no same model in training: holding out agent-0 (model m0) drops agent-1 (also m0) from training
    no_same = leave_one_out(runs, model, by="agent", exclude_same="model")
    assert no_same.folds["n_train_runs"].tolist() == [24, 24, 24, 24]
    by_model = leave_one_out(runs, model, by="model")
    assert by_model.folds["n_train_runs"].tolist() == [24, 24]


def test_protocol_errors_name_the_problem(runs: list[Trajectory], small_params: dict) -> None:
    model = EarlyOutcomeModel(**small_params)
    with pytest.raises(ValidationError, match=r"row 1, field 'meta.team': must be present"):
        leave_one_out(runs, model, by="team")
    with pytest.raises(InputError, match="needs at least 2 values within service"):
        leave_one_out([r for r in runs if r.agent in ("agent-0", "agent-1")], model, by="agent", within="service")
    with pytest.raises(InputError, match="no training runs left"):  # svc-0 holds both models
        leave_one_out(runs, model, by="service", exclude_same="model")
    with pytest.raises(InputError, match="`models` must be"):
        leave_one_out(runs, {})


def test_early_metrics_by_hand() -> None:
    """Three agents, four runs: every number below is worked out on paper."""
    runs = pd.DataFrame(
        {
            "run": [0, 1, 2, 3], "agent": ["A", "A", "B", "C"], "outcome": [1, 0, 0, 1], "n_steps": [4, 4, 2, 2],
            "total_in": [10.0, 10.0, 4.0, 4.0], "total_out": [4.0, 4.0, 2.0, 2.0],
        }
    )
    rows = []
    p = {0: [(0.5, 0.5), (0.5, 0.5), (0.96, 0.0), (0.5, 0.5), (0.5, 0.5)],  # success halt at k=2 (right)
         1: [(0.5, 0.5), (0.97, 0.1), (0.5, 0.5), (0.5, 0.5), (0.5, 0.5)],  # success halt at k=1 (wrong)
         2: [(0.5, 0.5), (0.0, 0.99), (0.5, 0.5)],  # failure halt at k=1 (right)
         3: [(0.5, 0.5), (0.5, 0.5), (0.99, 0.0)]}  # crossing only at k=T: not halted
    cum_in = {4: [0, 1, 3, 6, 10], 2: [0, 1, 4]}
    cum_out = {4: [0, 1, 2, 3, 4], 2: [0, 1, 2]}
    for run, probs in p.items():
        T = len(probs) - 1
        for k, (ps, pf) in enumerate(probs):
            rows.append({"run": run, "k": k, "p_success": ps, "p_failure": pf, "cum_in": cum_in[T][k], "cum_out": cum_out[T][k]})
    m = early_metrics(runs, pd.DataFrame(rows), 0.95, 0.95)
    assert m.coverage == 0.75 and m.accuracy == pytest.approx(2 / 3)
    # the crossing head's probability at the halt (the confidence of the stored prediction); none for run 3
    np.testing.assert_array_equal(m.halts["probability"].to_numpy(), [0.96, 0.97, 0.99, np.nan])
    assert m.success_coverage == 0.5 and m.success_precision == 0.5
    assert m.failure_coverage == 0.25 and m.failure_precision == 1.0
    assert m.delta_steps == pytest.approx((2 + 1 + 1 + 2) / 12 - 1)
    assert m.delta_tokens_in == pytest.approx((3 + 1 + 1 + 4) / 28 - 1)
    assert m.delta_tokens_out == pytest.approx((2 + 1 + 1 + 2) / 12 - 1)
    agents = m.per_agent.set_index("agent")
    assert agents.loc["A", "pass1_full"] == 0.5 and agents.loc["A", "pass1_early"] == 1.0
    assert agents["delta_pass1"].tolist() == [0.5, 0.0, 0.0]
    assert m.delta_abs_pass1 == pytest.approx(0.5 / 3)
    # full ranks: C 1, A 2, B 3; early: A and C tie at 1.0 (rank 1), B 3
    assert agents["rank_full"].tolist() == [2, 3, 1] and agents["rank_early"].tolist() == [1, 3, 1]
    assert agents["delta_rank"].tolist() == [1, 0, 0]
    assert m.unchanged_rank_share == pytest.approx(2 / 3)
    assert m.spearman_rho == pytest.approx(_spearman(np.array([0.5, 0.0, 1.0]), np.array([1.0, 0.0, 1.0])))
