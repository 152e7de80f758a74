"""``stopwise.replay.replay_family``: the family replay agrees with ``decide_family`` look by look, and its rates."""

from __future__ import annotations

import numpy as np
import pytest

from stopwise.compare import decide_family
from stopwise.errors import ComparisonError
from stopwise.records import Policy, TaskUniverse, outcome_columns, synthetic_benchmark
from stopwise.replay import family_claim_runs, family_error_rates, pair_orders, prepare_source, replay_family

UNIFORM = Policy.model_validate({"order": {"kind": "uniform"}, "coverage": {"rule": "none"}, "decision": {"boundary": "betting-wor"}})


@pytest.mark.parametrize("control", ["none", "fdr", "fwer"])
def test_the_replay_claims_are_decide_familys_at_every_budget(control: str) -> None:
    frame = synthetic_benchmark(150, 4, rng=3)
    source = prepare_source(frame, "synthetic")
    orders = pair_orders(source, source.pairs[0], UNIFORM, 3)
    tasks = source.tasks[source.pairs[0].tasks]
    policy = UNIFORM.model_copy(update={"family": UNIFORM.family.model_copy(update={"control": control})})
    from stopwise.compare import family_hypotheses

    hypotheses = family_hypotheses(len(source.systems))
    runs = family_claim_runs(source.outcomes[:, source.pairs[0].tasks][:, orders].transpose(1, 0, 2), hypotheses, population_size=150, controls=[control])
    for r, order in enumerate(orders):
        universe = TaskUniverse(tasks[order].tolist())  # no groups: the pooled process on this order
        for looks in (15, 40, 150):
            seen = outcome_columns(frame[frame["task"].isin(tasks[order][:looks])])
            publication = policy.model_copy(update={"family": policy.family.model_copy(update={"publication": looks / 150})})
            record = decide_family(seen, policy=publication if control == "fdr" else policy, universe=universe)
            claimed = {(p.tested, p.baseline) for p in record.pairs if p.action == "promote"}
            by_replay = {(str(source.systems[a]), str(source.systems[b])) for (a, b), h in zip(hypotheses.pairs.tolist(), hypotheses.promote, strict=True)
                         if 0 <= runs[control][r, h] < looks}  # fmt: skip
            assert claimed == by_replay, (control, r, looks)


def test_replay_family_reports_the_controls_by_budget() -> None:
    source = prepare_source(synthetic_benchmark(200, 5, rng=0), "synthetic")
    result = replay_family(source, n_orders=40, budgets=[0.2, 1.0])
    summary = result.summary.set_index(["control", "budget"])
    assert set(summary.index.get_level_values(0)) == {"none", "fdr", "fwer", "bonferroni"}
    assert int(summary["hypotheses"].iloc[0]) == 20 and (summary["orders"] == 40).all()
    for control in ("none", "fdr", "fwer", "bonferroni"):  # at N every gap is settled: every true claim made, none false
        assert summary.loc[(control, 1.0), "power"] == 1.0 and summary.loc[(control, 1.0), "fdr"] == 0.0
    assert summary.loc[("fwer", 0.2), "claims"] >= summary.loc[("bonferroni", 0.2), "claims"]
    assert summary.loc[("none", 0.2), "claims"] >= summary.loc[("fdr", 0.2), "claims"] >= summary.loc[("fwer", 0.2), "claims"]
    assert (summary.loc["fwer", "fwer"] <= summary.loc["fwer", "bound"]).all()
    assert "FWER" in result.table().columns and result.settings["process"] == "pooled"


def test_the_coverage_rule_delays_claims_by_the_top_up() -> None:
    source = prepare_source(synthetic_benchmark(200, 3, rng=1), "synthetic")
    top_up = Policy.model_validate({"order": {"kind": "uniform"}, "decision": {"boundary": "betting-wor"}})
    plain = replay_family(source, n_orders=30, budgets=[0.1, 0.3]).summary.set_index(["control", "budget"])
    delayed = replay_family(source, top_up, n_orders=30, budgets=[0.1, 0.3]).summary.set_index(["control", "budget"])
    assert (delayed["claims"] <= plain["claims"] + 1e-12).all()
    stratified = replay_family(source, Policy.paper(decision={"boundary": "betting-wor"}), n_orders=10, budgets=[0.3])  # coverage-aware
    assert stratified.settings["process"] == "stratified"


def test_family_error_rates_counts_false_claims_by_each_look() -> None:
    claims = np.array([[0, 4, -1], [1, -1, 2], [-1, -1, -1]])
    null = np.array([False, True, False])
    rates = family_error_rates(claims, null, [1, 5])
    assert np.allclose(rates["claims"], [1 / 3, 4 / 3])
    assert rates["fwer"].tolist() == [0.0, 1 / 3] and np.allclose(rates["fdr"], [0.0, 1 / 6])
    assert np.allclose(rates["power"], [1 / 6, 1 / 2])


def test_systems_on_different_tasks_are_refused() -> None:
    frame = synthetic_benchmark(100, 3, rng=0)
    frame = frame[~((frame["system"] == "system-01") & (frame["task"] == frame["task"].iloc[0]))]
    with pytest.raises(ComparisonError, match="same tasks"):
        replay_family(prepare_source(frame, "gappy", min_coverage=0.9), n_orders=5)
