"""The decision routine (Fig. 2), record contents and exclusions.

The paper's routine: every decision here is under the paper's primary policy (:meth:`Policy.paper`, the bootstrap tail on
a coverage-aware order); ``Policy()`` has the exact-wor test since issue 35 (tests/compare/test_exact_wor.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stopwise import (
    ComparisonError,
    DecisionRecord,
    Policy,
    TaskUniverse,
    __version__,
    decide,
    outcome_columns,
    pair_outcomes,
    read_outcomes,
    tail_probabilities,
)
from stopwise._vocabulary import exclusion_code
from stopwise.compare._decide import _decide_iv
from stopwise.compare._record import decision_warnings
from stopwise.compare._state import limit_look, look_state, paired_outcomes
from stopwise.records import (
    EXCLUSION_CODES,
    EXCLUSION_REASONS,
    WARNING_CODES,
    DecisionWarning,
    Exclusion,
)


def rows_from(tested: list[float], baseline: list[float], groups: list[str] | None = None, **extra: list) -> pd.DataFrame:
    n = len(tested)
    groups = groups or ["g"] * n
    records = []
    for i in range(n):
        for system, values in (("A", tested), ("B", baseline)):
            row = {"system": system, "task": f"t{i:03d}", "outcome": values[i], "group": groups[i]}
            for key, column in extra.items():
                row[key] = column[i]
            records.append(row)
    return outcome_columns(records).to_frame()


def policy(**settings: object) -> Policy:
    """The paper's primary policy with ``settings``."""
    return Policy.paper(**settings)


PAPER = Policy.paper()


def universe_of(rows: pd.DataFrame) -> TaskUniverse:
    """Every task of the rows, in name order, with its group: the planned tasks of these tests."""
    tasks = rows.drop_duplicates("task").sort_values("task")
    return TaskUniverse(tasks["task"].tolist(), tasks["group"].tolist())


# 40 tasks: A wins 14, B wins 2 -> delta_hat = 0.3, clearly positive
STRONG_A = [1.0] * 14 + [0.0] * 2 + [1.0] * 12 + [0.0] * 12
STRONG_B = [0.0] * 14 + [1.0] * 2 + [1.0] * 12 + [0.0] * 12
# 40 tasks: A wins 3, B wins 2 -> delta_hat = 0.025, not decisive
CLOSE_A = [1.0] * 3 + [0.0] * 2 + [1.0] * 10 + [0.0] * 25
CLOSE_B = [0.0] * 3 + [1.0] * 2 + [1.0] * 10 + [0.0] * 25


def test_promote_at_limit() -> None:
    record = decide(rows_from(STRONG_A, STRONG_B), "A", "B", PAPER, complete=True)
    assert record.action == "promote"
    assert record.delta_hat == pytest.approx(0.3)
    expected = tail_probabilities(np.array(STRONG_A) - np.array(STRONG_B), 0.0)
    assert record.r_promote == pytest.approx(expected.r_promote, abs=1e-15) and record.r_promote <= 0.05
    assert record.budget.at_limit and record.n_observed == record.n_shared == 40


def test_reject_at_limit() -> None:
    record = decide(rows_from(STRONG_B, STRONG_A), "A", "B", PAPER, complete=True)
    assert record.action == "reject"
    assert record.delta_hat == pytest.approx(-0.3) and record.r_reject is not None and record.r_reject <= 0.05


def test_reject_when_margin_does_not_exceed_a_positive_threshold() -> None:
    record = decide(rows_from(STRONG_A, STRONG_B), "A", "B", policy(threshold=0.6), complete=True)
    assert record.action == "reject" and record.r_reject is not None and record.r_reject <= 0.05


def test_abstain_at_limit_when_tails_are_wide() -> None:
    up = decide(rows_from(CLOSE_A, CLOSE_B), "A", "B", PAPER, complete=True)
    assert up.action == "abstain" and up.delta_hat is not None and up.delta_hat > 0
    assert up.r_promote is not None and up.r_promote > 0.05
    down = decide(rows_from(CLOSE_B, CLOSE_A), "A", "B", PAPER, complete=True)
    assert down.action == "abstain" and down.r_reject is not None and down.r_reject > 0.05
    assert "tail on the observed side exceeds a" in down.reason


def test_continue_while_budget_remains() -> None:
    rows = _pending_after(rows_from(STRONG_A, STRONG_B), 30)
    record = decide(rows, "A", "B", policy(budget={"limit": 0.9}), universe=universe_of(rows))
    assert record.action == "continue" and not record.budget.at_limit and record.budget.used == 0.75
    assert decide(rows, "A", "B", policy(budget={"limit": 0.9}), budget_used=0.9).action == "promote"
    assert record.r_promote is not None  # the tails are computed and recorded (Fig. 2 step 2)


def _pending_after(rows: pd.DataFrame, k: int) -> pd.DataFrame:
    rows = rows.copy()
    late = rows["task"] >= f"t{k:03d}"
    rows.loc[late, "status"] = "pending"
    rows.loc[late, "outcome"] = np.nan
    return rows


def test_coverage_failure_continues_then_abstains() -> None:
    groups = ["big"] * 30 + ["small"] * 10
    rows = _pending_after(rows_from(STRONG_A, STRONG_B, groups), 20)  # the first 20 tasks are all "big"
    early = decide(rows, "A", "B", policy(budget={"limit": 0.9}), universe=universe_of(rows))
    assert early.action == "continue" and early.coverage.missing_groups == ["small"]
    assert early.r_promote is None and "coverage missing" in early.reason
    assert early.budget.used == pytest.approx(0.5)
    late = decide(rows, "A", "B", policy(budget={"limit": 0.5}), universe=universe_of(rows))
    assert late.action == "abstain" and late.budget.at_limit
    assert [(g.group, g.required, g.seen) for g in late.coverage.groups] == [("big", 15, 20), ("small", 5, 0)]
    excluded = {e.reason: (e.rows, e.tasks) for e in late.excluded}
    assert excluded == {"status pending (policy uses final)": (40, 20)}


def test_impossible_coverage_abstains_at_limit() -> None:
    groups = [f"g{i}" for i in range(10)] * 4
    rows = _pending_after(rows_from(STRONG_A, STRONG_B, groups), 5)
    record = decide(rows, "A", "B", policy(budget={"limit": 0.1}), universe=universe_of(rows))
    assert not record.coverage.possible
    assert record.action == "abstain" and "impossible" in record.reason


def test_coverage_rule_none_decides_without_coverage() -> None:
    groups = ["big"] * 30 + ["small"] * 10
    rows = _pending_after(rows_from(STRONG_A, STRONG_B, groups), 20)
    record = decide(rows, "A", "B", policy(coverage={"rule": "none"}, budget={"limit": 0.5}), universe=universe_of(rows))
    assert record.action == "promote" and not record.coverage.satisfied


def test_forced_variant_decides_by_the_margin_alone() -> None:
    forced = policy(tail_method="none")
    assert decide(rows_from(CLOSE_A, CLOSE_B), "A", "B", forced, complete=True).action == "promote"
    assert decide(rows_from(CLOSE_B, CLOSE_A), "A", "B", forced, complete=True).action == "reject"
    record = decide(rows_from(CLOSE_A, CLOSE_B), "A", "B", forced, complete=True)
    assert record.r_promote is None and record.tail_method.startswith("none")


def test_threshold_comparison_is_exact_on_the_lattice() -> None:
    # delta_hat = 29/100 exactly; 0.29 * 100 is 28.999999999999996 in floating point
    a = [1.0] * 29 + [0.0] * 71
    b = [0.0] * 100
    record = decide(rows_from(a, b), "A", "B", policy(threshold=0.29, tail_method="none"), complete=True)
    assert record.action == "reject"  # 0.29 does not exceed 0.29


def test_nothing_observed() -> None:
    rows = _pending_after(rows_from(STRONG_A, STRONG_B), 0)
    record = decide(rows, "A", "B", policy(budget={"limit": 0.5}), budget_used=0.0)
    assert record.action == "continue" and record.delta_hat is None and record.n_observed == 0


def test_exclusions_are_counted_never_silent() -> None:
    rows = outcome_columns(
        [
            {"system": "A", "task": "t1", "outcome": 1},
            {"system": "B", "task": "t1", "outcome": 0},
            {"system": "A", "task": "t1", "outcome": 1},  # identical duplicate of row 1
            {"system": "A", "task": "t2", "outcome": 1},  # t2 not run by B
            {"system": "A", "task": "t3", "outcome": 1},
            {"system": "B", "task": "t3", "outcome": None, "status": "pending"},
            {"system": "A", "task": "t4", "outcome": 0, "status": "predicted"},
            {"system": "B", "task": "t4", "outcome": 1},
            {"system": "C", "task": "t1", "outcome": 1},  # another system: not part of this comparison
        ]
    )
    record = decide(rows, "A", "B")
    assert record.n_shared == 3 and record.n_observed == 1
    excluded = {e.reason: (e.rows, e.tasks) for e in record.excluded}
    assert excluded == {
        "identical duplicate of another row": (1, 1),
        "task not shared by both systems": (1, 1),
        "status pending (policy uses final)": (1, 1),
        "status predicted (policy uses final)": (1, 1),
        "partner system has no usable outcome on the task yet": (2, 2),
    }
    with_predicted = decide(rows, "A", "B", policy(statuses=["final", "predicted"]))
    assert with_predicted.n_observed == 2


def test_attempts_are_averaged_before_pairing() -> None:
    rows = outcome_columns(
        [{"system": "A", "task": "t1", "outcome": o, "attempt": i} for i, o in enumerate([1, 1, 0])]
        + [{"system": "B", "task": "t1", "outcome": o, "attempt": i} for i, o in enumerate([1, 0])]
        + [{"system": "A", "task": "t2", "outcome": 1}, {"system": "B", "task": "t2", "outcome": 0}]
    )
    paired = pair_outcomes(rows, "A", "B")
    assert paired.differences.tolist() == pytest.approx([2 / 3 - 1 / 2, 1.0])
    assert paired.tested_attempts.tolist() == [3, 1] and paired.lattice == 6


def test_units_group_tasks_for_resampling() -> None:
    n = 30
    rows = rows_from([1.0] * 20 + [0.0] * 10, [0.0] * 30, unit=[f"u{i // 10}" for i in range(n)])
    paired = pair_outcomes(rows, "A", "B")
    assert len(np.unique(paired.units)) == 3
    record = decide(rows, "A", "B", PAPER, complete=True)
    assert "grouped units" in record.tail_method
    # three units with differences (10, 10, 0): only draws without the first two units stay <= 0
    assert record.r_promote == pytest.approx((1 / 3) ** 3, abs=0.03)


def test_cost_budget() -> None:
    rows = rows_from(STRONG_A, STRONG_B, cost_usd=[0.5] * 40)
    record = decide(rows, "A", "B", policy(budget={"measure": "cost_usd", "limit": 100.0}), complete=True)
    assert record.budget.used == pytest.approx(20.0) and record.budget.at_limit  # every task observed
    # without a universe (or complete=True) spending 20 of 100 is not the limit: continue
    assert decide(rows, "A", "B", policy(budget={"measure": "cost_usd", "limit": 100.0})).action == "continue"
    pair = decide(rows, "A", "B", policy(budget={"measure": "cost_usd", "limit": 100.0, "scope": "pair"}))
    assert pair.budget.used == pytest.approx(40.0)
    no_cost = rows_from(STRONG_A, STRONG_B)
    with pytest.raises(ComparisonError, match="needs cost_usd on every observed row of 'A'"):
        decide(no_cost, "A", "B", policy(budget={"measure": "cost_usd", "limit": 1.0}))


def test_record_is_stamped_and_deterministic() -> None:
    rows = rows_from(STRONG_A, STRONG_B)
    chosen = policy(tail_method="bootstrap", seed=4)
    first, again = decide(rows, "A", "B", chosen, complete=True), decide(rows, "A", "B", chosen, complete=True)
    assert first.model_copy(update={"decided_at": None}) == again.model_copy(update={"decided_at": None})
    assert first.digest() == again.digest() and first.decided_at is not None and first.decided_at.utcoffset() is not None
    assert first.policy_sha256 == chosen.sha256() and first.stopwise_version == __version__
    assert decide(rows.iloc[::-1].reset_index(drop=True), "A", "B", chosen, complete=True).input_sha256 == first.input_sha256
    text = first.model_dump_json()
    assert DecisionRecord.model_validate(json.loads(text)) == first


@pytest.mark.parametrize(
    ("tested", "baseline", "message"),
    [("A", "A", "must be different"), ("Z", "B", "tested system 'Z' is absent"), ("A", "Q", "baseline system 'Q' is absent")],
)
def test_comparison_errors(tested: str, baseline: str, message: str) -> None:
    with pytest.raises(ComparisonError, match=message):
        decide(rows_from(STRONG_A, STRONG_B), tested, baseline)


@pytest.mark.data
def test_real_comparison_on_swebench_verified(shared_data: Path) -> None:
    rows = read_outcomes(shared_data / "records" / "swebench_verified" / "outcomes.csv")
    tested, baseline = "20241029_OpenHands-CodeAct-2.1-sonnet-20241022", "20231010_rag_claude2"
    record = decide(rows, tested, baseline, complete=True)
    wide = rows.to_frame().pivot(index="task", columns="system", values="outcome")
    expected = (wide[tested] - wide[baseline]).mean()
    assert record.delta_hat == pytest.approx(expected, abs=1e-12)
    assert record.n_shared == 500 and record.action == "promote"
    assert len(record.coverage.groups) == 12 and record.coverage.satisfied


# ---- _decide_iv: every argument validated and normalised before any work ----------------------------------------

BETTING = {"decision": {"boundary": "betting-wor"}}
STRONG_ROWS = rows_from(STRONG_A, STRONG_B)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"policy": "policy.toml"}, "`policy` must be a stopwise.Policy (see stopwise.load_policy) or None; got str"),
        (
            {"universe": ["t000"]},
            "`universe` must be a stopwise.TaskUniverse (see stopwise.read_task_universe) or None; got list",
        ),
        (
            {"policy": BETTING},
            "the betting-wor boundary needs the planned task order, but no task universe was given: pass the `stopwise order` "
            "output or a tasks file (universe=read_task_universe(...), --tasks FILE)",
        ),
        (
            {"policy": BETTING, "universe": TaskUniverse.from_counts(40)},
            "the betting-wor boundary needs the planned task order, but a task universe from counts only was given: pass the "
            "`stopwise order` output or a tasks file (universe=read_task_universe(...), --tasks FILE)",
        ),
        (
            {"rows": [{"system": "A", "task": "t", "outcome": 1}]},
            "outcome rows must be stopwise.OutcomeColumns (see stopwise.read_outcomes and stopwise.outcome_columns) or a "
            "pandas DataFrame; got list",
        ),
        ({"tested": 1}, "`tested` must be a system name (str); got int"),
        ({"baseline": None}, "`baseline` must be a system name (str); got NoneType"),
        ({"baseline": "A"}, "tested and baseline must be different systems; both are 'A'"),
        ({"tested": "Z"}, "tested system 'Z' is absent from the outcome rows; systems present: A, B"),
        ({"baseline": "Q"}, "baseline system 'Q' is absent from the outcome rows; systems present: A, B"),
        ({"budget_used": "0.5"}, "budget used must be a number; got '0.5'"),
        ({"budget_used": True}, "budget used must be a number; got True"),
        ({"budget_used": float("nan")}, "budget used must be a finite number >= 0; got nan"),
        ({"budget_used": -0.1}, "budget used must be a finite number >= 0; got -0.1"),
        (
            {"budget_used": 1.5},
            "budget used 1.5 exceeds the policy's budget limit 1 (task_fraction); the limit ends the evaluation, so a larger "
            "value is a mistake (check the measure and the unit)",
        ),
        ({"rng": "seed"}, "decide: `rng` must be a non-negative integer, a numpy Generator or None; got 'seed'."),
        ({"rng": -1}, "decide: `rng` must be a non-negative integer, a numpy Generator or None; got -1."),
        ({"rng": False}, "decide: `rng` must be a non-negative integer, a numpy Generator or None; got False."),
        ({"rng": 0.5}, "decide: `rng` must be a non-negative integer, a numpy Generator or None; got 0.5."),
    ],
)
def test_decide_iv_refuses_each_bad_argument_with_its_rule(arguments: dict, message: str) -> None:
    given = {"rows": STRONG_ROWS, "tested": "A", "baseline": "B", "policy": None, "universe": None, "budget_used": None,
             "complete": False, "rng": None} | arguments
    if isinstance(given["policy"], dict):
        given["policy"] = policy(**given["policy"])
    with pytest.raises(ComparisonError) as direct:
        _decide_iv(**given)
    assert str(direct.value) == message
    with pytest.raises(ComparisonError) as public:  # decide refuses the same way, before pairing anything
        decide(given.pop("rows"), given.pop("tested"), given.pop("baseline"), given.pop("policy"), **given)
    assert str(public.value) == message


def test_decide_iv_normalises_the_arguments() -> None:
    rows = pd.concat([STRONG_ROWS, outcome_columns([{"system": "C", "task": "t000", "outcome": 1}]).to_frame()], ignore_index=True)
    iv = _decide_iv(rows, "A", "B", None, None, np.int64(1), True, 7)
    assert iv.policy == Policy() and iv.boundary == "fixed-budget" and not iv.anytime
    assert set(iv.rows.codes("system")[1].tolist()) == {"A", "B"}  # the other systems' rows are dropped
    assert isinstance(iv.budget_used, float) and iv.budget_used == 1.0
    assert iv.complete and iv.known
    assert iv.rng.random() == np.random.default_rng(7).random()
    default = _decide_iv(rows, "A", "B", None, universe_of(STRONG_ROWS), None, True, None)
    assert not default.complete  # a given universe makes `complete` moot
    assert default.budget_used is None
    assert default.rng.random() == np.random.default_rng(Policy().seed).random()
    generator = np.random.default_rng(3)
    assert _decide_iv(rows, "A", "B", None, None, None, False, generator).rng is generator


# ---- exclusion codes: made from a code, matched by it, stored as the same text -----------------------------------


def test_every_exclusion_code_of_a_real_decision_round_trips_to_its_reason() -> None:
    made = [
        {"system": "A", "task": "t1", "outcome": 1, "group": "g"},
        {"system": "B", "task": "t1", "outcome": 0, "group": "g"},
        {"system": "A", "task": "t1", "outcome": 1, "group": "g"},  # duplicate
        {"system": "A", "task": "t2", "outcome": 1, "group": "g"},  # not shared / outside the universe
        {"system": "A", "task": "t3", "outcome": 1, "group": "g"},
        {"system": "B", "task": "t3", "outcome": None, "status": "pending", "group": "g"},  # status; no partner
        {"system": "A", "task": "t4", "outcome": 1, "group": "g", "flags": "error"},  # flag; no partner
        {"system": "B", "task": "t4", "outcome": 1, "group": "g"},
    ]
    rows = outcome_columns(made)
    excluding = policy(flags={"exclude": ["error"]})
    inferred = decide(rows, "A", "B", excluding)
    planned = decide(rows, "A", "B", excluding, universe=TaskUniverse(["t1", "t3", "t4"], ["g"] * 3))
    one_task = policy(budget={"measure": "task_count", "limit": 1})  # t1 and t4 observed: t4 lies past the limit
    past = decide(rows, "A", "B", one_task, universe=TaskUniverse(["t1", "t3", "t4"], ["g"] * 3))
    errored = outcome_columns([*made[:2], made[4], {**made[5], "flags": "error"}])  # t3: the baseline's run errored
    skipping = policy(decision={"boundary": "betting-wor", "missing": "exclude"})
    skipped = decide(errored, "A", "B", skipping, universe=TaskUniverse(["t1", "t3", "t4"], ["g"] * 3))
    fields = {"status": {"status": "pending", "statuses": "final"}, "flag": {"flag": "error"}}
    seen = set()
    for record in (inferred, planned, past, skipped):
        for e in record.excluded:
            assert e.code is not None
            assert e == Exclusion.from_code(e.code, rows=e.rows, tasks=e.tasks, **fields.get(e.code, {}))
            assert e.reason == EXCLUSION_REASONS[e.code].format(**fields.get(e.code, {}))
            assert "code" not in e.model_dump()
            seen.add(e.code)
    assert seen == set(EXCLUSION_CODES)
    assert {e.code for e in inferred.excluded} == {"duplicate", "status", "flag", "not-shared", "no-partner"}
    assert [(e.code, e.rows) for e in planned.excluded if e.code == "outside-universe"] == [("outside-universe", 1)]
    assert planned.universe is not None and planned.universe.outside_rows == 1
    assert [(e.code, e.rows, e.tasks) for e in past.excluded if e.code == "beyond-limit"] == [("beyond-limit", 4, 2)]  # t3 and t4, two rows each
    assert past.n_observed == 1 and past.budget.used == 1.0
    assert json.loads(planned.model_dump_json())["excluded"][-2] == {
        "reason": "task outside the planned task universe", "rows": 1, "tasks": 1
    }


def test_exclusion_code_of_other_wordings() -> None:
    assert Exclusion(reason="status pending", rows=1, tasks=1).code == "status"  # the replay's shorter wording
    assert Exclusion(reason="left out by hand", rows=1, tasks=1).code is None
    assert [exclusion_code(EXCLUSION_REASONS[c]) for c in EXCLUSION_CODES] == list(EXCLUSION_CODES)


# ---- warning codes: each guard of a real look, in the record's order --------------------------------------------


def warning_codes(rows: pd.DataFrame, the_policy: Policy | None = None, **arguments: object) -> list[str]:
    """The codes of the warnings decide writes for these rows; their messages are the record's warnings."""
    the_policy = PAPER if the_policy is None else the_policy
    iv = _decide_iv(rows, "A", "B", the_policy, arguments.get("universe"), arguments.get("budget_used"),
                    bool(arguments.get("complete", False)), None)
    paired, past = limit_look(iv, paired_outcomes(iv))
    state = look_state(iv, paired)
    warnings = decision_warnings(state, state.rule.look(state), past)
    assert all(isinstance(w, DecisionWarning) and w.code in WARNING_CODES for w in warnings)
    assert [w.message for w in warnings] == decide(rows, "A", "B", the_policy, **arguments).warnings
    return [w.code for w in warnings]


def test_warning_codes_of_real_looks() -> None:
    strong, planned = STRONG_ROWS, universe_of(STRONG_ROWS)
    assert warning_codes(strong, universe=planned) == []
    assert warning_codes(strong) == ["no-universe"]
    assert warning_codes(strong, universe=TaskUniverse(planned.tasks.tolist())) == ["no-groups"]
    assert warning_codes(strong, universe=planned, budget_used=0.5) == ["budget-below-limit"]
    assert warning_codes(strong, universe=TaskUniverse(planned.tasks[:30].tolist(), ["g"] * 30)) == ["outside-universe"]
    few = rows_from(STRONG_A[:10], STRONG_B[:10])
    assert warning_codes(few, universe=universe_of(few)) == ["few-observed"]
    early = _pending_after(rows_from([1.0] * 40, [0.0] * 40), 20)
    assert warning_codes(early, universe=universe_of(early)) == ["one-sided"]
    gap = strong[~((strong["system"] == "B") & (strong["task"] == "t000"))]
    # a universe built in Python carries no order stamp: the betting boundary flags its provenance
    assert warning_codes(gap, policy(**BETTING), universe=planned) == ["waiting", "order-provenance"]
    forged = planned.with_stamp("coverage-aware", 0)  # stamped, but not the seed-0 draw of its tasks
    with pytest.raises(ComparisonError, match="not the 'coverage-aware' draw of seed 0"):
        decide(gap, "A", "B", policy(**BETTING), universe=forged)
    lenient = policy(**BETTING, betting={"order_check": "warn"})  # refuses too (issue 33: its fallback is retired)
    with pytest.raises(ComparisonError, match='order_check = "warn" no longer decides'):
        decide(gap, "A", "B", lenient, universe=forged)
    assert warning_codes(gap, policy(**BETTING), universe=TaskUniverse(planned.tasks[:30].tolist(), ["g"] * 30)) == [
        "outside-universe", "waiting", "order-provenance"
    ]
