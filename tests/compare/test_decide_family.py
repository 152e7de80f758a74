"""``stopwise.compare.decide_family``: the family record, its engines, and agreement with single-pair decisions."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import stopwise
from stopwise.compare import closed_e_test, decide, decide_family, e_bh, input_digest, order_universe, task_order
from stopwise.errors import ComparisonError, PolicyError
from stopwise.records import FamilyRecord, Policy, TaskUniverse, outcome_columns, parse_policy, synthetic_benchmark


def _rates(rates: dict[str, float], n: int) -> stopwise.OutcomeColumns:
    return outcome_columns([{"system": s, "task": f"t{i:03d}", "outcome": int(i < r * n)} for s, r in rates.items() for i in range(n)])


def _policy(**family: object) -> Policy:
    return Policy.model_validate({"family": family})


def test_a_complete_record_names_the_best_the_tiers_and_the_rank_intervals() -> None:
    record = decide_family(_rates({"A": 0.9, "B": 0.6, "C": 0.58, "D": 0.2}, 300), complete=True)
    assert record.estimand == "task-distribution" and record.evidence == "e-value" and record.final
    assert record.best == "A" and [t.systems for t in record.tiers] == [["A"], ["B", "C"], ["D"]]
    assert [(r.system, r.rank, r.rank_low, r.rank_high) for r in record.ranks] == [("A", 1, 1, 1), ("B", 2, 2, 3), ("C", 3, 2, 3), ("D", 4, 4, 4)]
    assert record.pair("A", "B").action == "promote" and record.pair("B", "A").action == "reject"
    assert record.pair("B", "C").action == "abstain" and not record.pair("B", "C").equivalent
    assert record.status == "needs-more-tasks" and record.needed == []  # a complete record: nothing more to run
    assert "FWER 5 %" in record.claim and "task distribution" in record.claim
    assert record.n_hypotheses == 12 and record.n_claims == 5
    assert record.input_sha256 == input_digest(_rates({"A": 0.9, "B": 0.6, "C": 0.58, "D": 0.2}, 300), ("A", "B", "C", "D"))


def test_the_record_round_trips_through_json_with_infinite_e_values() -> None:
    rows = _rates({"A": 1.0, "B": 0.0}, 50)
    universe = TaskUniverse([f"t{i:03d}" for i in range(50)])
    record = decide_family(rows, policy=Policy.model_validate({"decision": {"boundary": "betting-wor"}}), universe=universe)
    assert record.pair("A", "B").e_promote == math.inf  # every task observed: "A beats B" is certain on these tasks
    text = record.model_dump_json()
    assert '"Infinity"' in text
    again = FamilyRecord.model_validate(json.loads(text))
    assert again == record and again.digest() == record.digest()
    assert decide_family(rows, policy=Policy.model_validate({"decision": {"boundary": "betting-wor"}}), universe=universe).digest() == record.digest()


def _planned(seed: int = 0, n_tasks: int = 240, systems: int = 5) -> tuple[pd.DataFrame, TaskUniverse, Policy]:
    frame = synthetic_benchmark(n_tasks, systems, rng=seed)
    policy = Policy.model_validate({"order": {"kind": "uniform", "seed": seed}, "coverage": {"rule": "none"}, "decision": {"boundary": "betting-wor"}})
    universe = order_universe(task_order(frame.drop_duplicates("task")[["task", "group"]], policy))
    return frame, universe, policy


@pytest.mark.parametrize("fraction", [0.1, 0.25, 0.6])
def test_uncontrolled_family_pairs_take_the_single_pair_decisions(fraction: float) -> None:
    frame, universe, policy = _planned()
    assert universe.tasks is not None
    seen = outcome_columns(frame[frame["task"].isin(universe.tasks[: int(fraction * universe.n_tasks)])])
    record = decide_family(seen, policy=policy.model_copy(update={"family": policy.family.model_copy(update={"control": "none"})}), universe=universe)
    for pair in record.pairs:
        single = decide(seen, pair.tested, pair.baseline, policy, universe=universe, forecast=False)
        assert pair.action == single.action, (pair.tested, pair.baseline)
        assert pair.e_promote is not None and single.r_promote is not None  # p = 1 / max over looks of K >= 1 / K at the look
        assert pair.e_promote <= 1.0 / single.r_promote * (1 + 1e-9) if single.r_promote > 0 else pair.e_promote == math.inf
    assert record.evidence == "e-process" and record.look == int(fraction * universe.n_tasks)


def test_fwer_claims_contain_bonferroni_and_fdr_claims_are_e_bh_of_the_reported_e_values() -> None:
    frame, universe, policy = _planned(seed=1, systems=6)
    assert universe.tasks is not None
    seen = outcome_columns(frame[frame["task"].isin(universe.tasks[:90])])
    fwer = decide_family(seen, policy=policy, universe=universe)
    m = fwer.n_hypotheses
    for pair in fwer.pairs:  # Bonferroni at M/a on the running maximum is weaker than the closure
        if pair.e_promote is not None and pair.e_promote >= m / 0.05:
            assert pair.action == "promote"
    final = np.log([p.e_promote for p in fwer.pairs])
    assert (closed_e_test(final, 0.05) <= (np.array([p.action == "promote" for p in fwer.pairs]))).all()  # closure now: claimed
    fdr = decide_family(seen, policy=policy.model_copy(update={"family": policy.family.model_copy(update={"control": "fdr", "publication": 0.5})}), universe=universe)
    claimed = np.array([p.action == "promote" for p in fdr.pairs])
    assert np.array_equal(e_bh(np.log([p.e_promote for p in fdr.pairs]), 0.05), claimed)  # the stopped processes' e-BH set
    assert fdr.n_claims >= fwer.n_claims and fdr.publication_look == 120


def test_a_live_family_reports_what_it_still_needs_and_becomes_final_at_the_limit() -> None:
    rows = _rates({"A": 0.95, "B": 0.5, "C": 0.48}, 400)
    universe = TaskUniverse([f"t{i:03d}" for i in np.random.default_rng(0).permutation(400)])
    policy = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "coverage": {"rule": "none"}, "budget": {"limit": 0.5}})
    assert universe.tasks is not None
    early = decide_family(outcome_columns(rows.to_frame()[rows.to_frame()["task"].isin(universe.tasks[:100])]), policy=policy, universe=universe)
    assert early.pair("A", "B").action == "promote" and not early.final
    assert early.needed == ["B", "C"] and early.status == "needs-more-tasks"  # A is separated from both
    late = decide_family(rows, policy=policy, universe=universe)
    assert late.final and late.look == 200 and late.needed == [] and late.pair("B", "C").action == "abstain"


def test_the_top_up_design_waits_for_the_top_up_tasks() -> None:
    tasks = pd.DataFrame({"task": [f"t{i:03d}" for i in range(200)], "group": ["tiny"] * 3 + ["big"] * 197})
    rows = [{"system": s, "task": t, "group": g, "outcome": int(s == "A" or (s == "B" and i % 2 == 0))}
            for i, (t, g) in enumerate(zip(tasks["task"], tasks["group"], strict=True)) for s in ("A", "B", "C")]
    frame = pd.DataFrame(rows)
    policy = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "family": {"control": "none"}})  # coverage rule, top-up
    universe = order_universe(task_order(tasks, policy))
    assert universe.tasks is not None and universe.stamp is not None and universe.stamp.kind == "uniform"
    first_tiny = min(int(i) for i in universe.positions(["t000", "t001", "t002"]))
    assert first_tiny >= 8  # the prefix below (A beats C on every task) crosses before any task of the tiny group
    prefix = outcome_columns(frame[frame["task"].isin(universe.tasks[:first_tiny])])
    record = decide_family(prefix, policy=policy, universe=universe)
    single = decide(prefix, "A", "C", policy, universe=universe, forecast=False)
    pair = record.pair("A", "C")
    assert single.action == "continue" and single.top_up and pair.action == "continue" and pair.top_up == single.top_up
    assert "A" in record.needed and "C" in record.needed and not record.final
    done = outcome_columns(frame[frame["task"].isin([*universe.tasks[:first_tiny], *single.top_up])])
    assert decide_family(done, policy=policy, universe=universe).pair("A", "C").action == "promote"
    assert decide(done, "A", "C", policy, universe=universe, forecast=False).action == "promote"


def test_fixed_budget_families_use_the_tails_at_the_limit() -> None:
    frame = synthetic_benchmark(200, 4, rng=2)
    policy = Policy.model_validate({"budget": {"limit": 0.5}, "coverage": {"rule": "none"}, "family": {"control": "none"}})
    universe = TaskUniverse.from_counts(200)
    first = outcome_columns(frame[frame["task"].isin(sorted(frame["task"].unique())[:60])])
    before = decide_family(first, policy=policy, universe=universe)
    assert before.n_claims == 0 and not before.final and {p.action for p in before.pairs} == {"continue"}
    half = outcome_columns(frame[frame["task"].isin(sorted(frame["task"].unique())[:100])])
    record = decide_family(half, policy=policy, universe=universe)
    assert record.evidence == "p-value" and record.final
    for pair in record.pairs:  # at delta = 0 the claim "B beats A" is (B, A)'s promote: its p-value is decide's R_promote of (B, A)
        single = decide(half, pair.tested, pair.baseline, policy, universe=universe, forecast=False)
        mirror = decide(half, pair.baseline, pair.tested, policy, universe=universe, forecast=False)
        assert math.isclose(pair.p_promote or 0, single.r_promote or 0) and math.isclose(pair.p_reject or 0, mirror.r_promote or 0)
        if single.action == "promote":
            assert pair.action == "promote"
    holm = decide_family(half, policy=policy.model_copy(update={"family": policy.family.model_copy(update={"control": "fwer"})}), universe=universe)
    assert holm.n_claims <= record.n_claims and holm.method.startswith("Holm")


def test_baseline_and_best_families() -> None:
    rows = _rates({"prod": 0.5, "up": 0.9, "same": 0.5, "down": 0.1}, 300)
    baseline = decide_family(rows, policy=_policy(kind="baseline", baseline="prod"), complete=True)
    assert [(p.tested, p.baseline, p.action) for p in baseline.pairs] == [("down", "prod", "reject"), ("same", "prod", "abstain"), ("up", "prod", "promote")]
    assert baseline.tiers == [] and "1 of 3 candidates beat prod" in baseline.claim
    best = decide_family(rows, policy=_policy(kind="best"), complete=True)
    assert best.best == "up" and best.status == "answered" and best.claim.startswith("up is best of these 4")


def test_equivalence_is_claimed_apart_from_not_separated() -> None:
    rows = _rates({"A": 0.5, "B": 0.5, "C": 0.9}, 2000)
    record = decide_family(rows, policy=_policy(equivalence=0.1), complete=True)
    assert record.pair("A", "B").equivalent and record.pair("A", "B").action == "abstain"
    assert record.tiers[-1].systems == ["A", "B"] and record.tiers[-1].equivalent
    few = decide_family(_rates({"A": 0.5, "B": 0.5, "C": 0.9}, 40), policy=_policy(equivalence=0.1), complete=True)
    assert not few.pair("A", "B").equivalent and not few.tiers[-1].equivalent  # not separated, not shown equivalent


def test_a_frame_and_a_subset_of_systems() -> None:
    rows = _rates({"A": 0.9, "B": 0.6, "C": 0.3}, 100)
    record = decide_family(rows.to_frame(), ["C", "A"], complete=True)
    assert record.systems == ["A", "C"] and len(record.pairs) == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "needs the planned tasks"),
        ({"systems": ["A"], "complete": True}, "at least 2 systems"),
        ({"systems": ["A", "Z"], "complete": True}, "have no outcome rows"),
        ({"policy": _policy(kind="baseline", baseline="Z"), "complete": True}, "baseline 'Z'"),
        ({"policy": Policy.model_validate({"decision": {"boundary": "betting-wor"}}), "universe": TaskUniverse.from_counts(10)}, "planned task order"),
        ({"policy": Policy.model_validate({"tail_method": "none"}), "universe": TaskUniverse.from_counts(10)}, "needs tails"),
        ({"policy": Policy.model_validate({"budget": {"measure": "cost_usd", "limit": 5.0}}), "universe": TaskUniverse.from_counts(10)}, "counted in tasks"),
        ({"policy": Policy.model_validate({"decision": {"boundary": "betting-wor"}, "budget": {"limit": 0.5}, "family": {"control": "fdr"}}),
          "universe": TaskUniverse([f"t{i:03d}" for i in range(10)])}, "after the budget limit"),
    ],
)
def test_what_a_family_cannot_honour_is_refused(kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ComparisonError, match=message):
        decide_family(_rates({"A": 0.9, "B": 0.6}, 10), **kwargs)


def test_a_best_family_under_fdr_is_refused_by_the_policy() -> None:
    with pytest.raises(PolicyError, match="family-wise statement"):
        parse_policy('[family]\nkind = "best"\ncontrol = "fdr"')
