"""decide() with the task universe as an input: the reproducer, budgets, frames, guards, the betting boundary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stopwise import (
    ComparisonError,
    Policy,
    TaskUniverse,
    ValidationError,
    decide,
    outcome_columns,
    read_outcomes,
    tail_probabilities,
)
from stopwise.compare import MIN_OBSERVED


def rows_from(tested: list[float], baseline: list[float], groups: list[str] | None = None, prefix: str = "t") -> pd.DataFrame:
    groups = groups or ["g"] * len(tested)
    return outcome_columns(
        [
            {"system": s, "task": f"{prefix}{i:03d}", "outcome": v[i], "group": groups[i]}
            for i in range(len(tested))
            for s, v in (("A", tested), ("B", baseline))
        ]
    ).to_frame()


def planned(n: int, groups: list[str] | None = None, prefix: str = "t") -> TaskUniverse:
    return TaskUniverse([f"{prefix}{i:03d}" for i in range(n)], groups)


VERIFIED = ("20241029_OpenHands-CodeAct-2.1-sonnet-20241022", "20231010_rag_claude2")


@pytest.mark.data
def test_first_60_tasks_of_a_record_are_not_the_whole_benchmark(shared_data: Path) -> None:
    # The reproducer used the first 60 of 510 tasks; the stored record closest to it is SWE-bench
    # Verified with 500 tasks in 12 repositories. Its first 60 tasks in name order (38 django, 22 astropy)
    # form a file with no pending rows for the other 440.
    rows = read_outcomes(shared_data / "records" / "swebench_verified" / "outcomes.csv").to_frame()
    tasks = rows.drop_duplicates("task").sort_values("task")
    first = rows[rows["task"].isin(set(tasks["task"].head(60)))]
    tested, baseline = VERIFIED

    record = decide(first, tested, baseline)
    assert record.action == "continue" and "no task universe given" in record.reason
    assert not record.budget.at_limit and record.universe is None and record.n_shared == 60
    assert any("no task universe" in w for w in record.warnings)
    # an explicit budget fraction below the limit is not overridden by "every row is observed"
    assert decide(first, tested, baseline, budget_used=0.1).action == "continue"

    universe = TaskUniverse(tasks["task"].tolist(), tasks["group"].tolist())
    record = decide(first, tested, baseline, universe=universe)
    assert record.action == "continue" and record.n_shared == 500 and record.budget.used == pytest.approx(60 / 500)
    assert len(record.coverage.groups) == 12 and not record.coverage.satisfied
    assert len(record.coverage.missing_groups) == 10  # 10 of the 12 planned groups have no task yet
    assert "coverage missing" in record.reason
    assert record.universe is not None and (record.universe.n_tasks, record.universe.sha256) == (500, universe.sha256())
    # at the limit (the caller says so), the missing groups still forbid a final action
    assert decide(first, tested, baseline, universe=universe, budget_used=1.0).action == "abstain"

    # no pair of the 60-task file gets a final action without the universe (the issue counted 49 of 132)
    systems = sorted(rows["system"].unique())[::3]
    actions = {decide(first, a, b).action for a in systems for b in systems if a != b}
    assert actions == {"continue"}


def test_coverage_from_counts_judges_the_planned_groups() -> None:
    rows = rows_from([1.0] * 30, [0.0] * 30, ["easy"] * 30)
    universe = TaskUniverse.from_counts(100, {"easy": 50, "hard": 30, "odd": 20})
    record = decide(rows, "A", "B", Policy(coverage={"rule": "proportional"}), universe=universe, budget_used=1.0)
    assert record.action == "abstain" and record.coverage.missing_groups == ["hard", "odd"]
    assert [(g.group, g.size, g.required, g.seen) for g in record.coverage.groups] == [
        ("easy", 50, 15, 30),
        ("hard", 30, 9, 0),
        ("odd", 20, 6, 0),
    ]
    assert record.universe is not None and record.universe.source == "counts" and not record.universe.ordered
    with pytest.raises(ComparisonError, match="group 'easy' of the rows is not a planned group"):
        decide(rows, "A", "B", universe=TaskUniverse.from_counts(100, {"a": 50, "b": 50}))
    with pytest.raises(ComparisonError, match=r"group 'easy' of the rows is not a planned group \('Easy', 'hard'\); did you mean 'Easy'\?"):
        decide(rows, "A", "B", universe=TaskUniverse.from_counts(100, {"Easy": 50, "hard": 50}))
    with pytest.raises(ComparisonError, match="the rows name 30 tasks but the task universe plans 20"):
        decide(rows, "A", "B", universe=TaskUniverse.from_counts(20))
    with pytest.raises(ComparisonError, match="30 tasks of group 'easy' but the task universe plans 10"):
        decide(rows, "A", "B", universe=TaskUniverse.from_counts(40, {"easy": 10, "hard": 30}))


def test_rows_outside_the_universe_are_excluded_and_counted() -> None:
    rows = rows_from([1.0] * 30, [0.0] * 30)
    universe = planned(25)  # t025..t029 are not planned
    record = decide(rows, "A", "B", universe=universe)
    assert record.n_shared == 25 and record.n_observed == 25 and record.action == "promote"
    assert {e.reason: (e.rows, e.tasks) for e in record.excluded} == {"task outside the planned task universe": (10, 5)}
    assert record.universe is not None and record.universe.outside_rows == 10
    assert any("outside the planned task universe" in w for w in record.warnings)


def test_planned_groups_win_and_conflicts_are_errors() -> None:
    rows = rows_from([1.0] * 4, [0.0] * 4, ["", "", "a", "b"])
    record = decide(rows, "A", "B", Policy(coverage={"rule": "none"}), universe=planned(8, ["a", "b"] * 4))
    assert [(g.group, g.size, g.seen) for g in record.coverage.groups] == [("a", 4, 2), ("b", 4, 2)]
    with pytest.raises(ComparisonError, match="task 't002' has group 'a' in the rows but 'b' in the planned task universe"):
        decide(rows, "A", "B", universe=planned(4, ["a", "a", "b", "b"]))


def test_complete_flag_is_for_finished_records() -> None:
    rows = rows_from([1.0] * 40, [0.0] * 40)
    assert decide(rows, "A", "B").action == "continue"
    record = decide(rows, "A", "B", complete=True)
    assert record.action == "promote" and record.budget.at_limit
    assert record.universe is not None and record.universe.source == "complete-record" and record.universe.n_tasks == 40
    pending = rows.copy()
    pending.loc[pending["task"] >= "t030", ["status", "outcome"]] = ["pending", np.nan]
    half = decide(pending, "A", "B", complete=True)
    assert half.action == "continue" and half.budget.used == pytest.approx(0.75)
    # a universe given wins over the flag
    assert decide(rows, "A", "B", universe=planned(400), complete=True).n_shared == 400


@pytest.mark.parametrize(
    ("used", "message"),
    [
        (-0.1, "budget used must be a finite number >= 0; got -0.1"),
        (float("nan"), "finite number >= 0"),
        (float("inf"), "finite number >= 0"),
        (5.0, "budget used 5 exceeds the policy's budget limit 1 (task_fraction)"),
        (0.6, "budget used 0.6 exceeds the policy's budget limit 0.5"),
        ("0.3", "must be a number"),
    ],
)
def test_budget_used_is_validated(used: object, message: str) -> None:
    rows = rows_from([1.0] * 40, [0.0] * 40)
    chosen = Policy(budget={"limit": 0.5}) if used == 0.6 else Policy()
    with pytest.raises(ComparisonError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decide(rows, "A", "B", chosen, universe=planned(40), budget_used=used)  # type: ignore[arg-type]


def test_explicit_budget_used_is_never_overridden() -> None:
    rows = rows_from([1.0] * 40, [0.0] * 40)
    record = decide(rows, "A", "B", universe=planned(40), budget_used=0.1)
    assert record.action == "continue" and record.budget.used == 0.1 and not record.budget.at_limit
    assert any("below the limit" in w for w in record.warnings)
    assert decide(rows, "A", "B", universe=planned(40), budget_used=1.0).action == "promote"


def test_frames_from_python_are_validated_like_files() -> None:
    three = pd.DataFrame({"system": ["A", "B"], "task": ["t", "t"], "score": [1, 0]})
    with pytest.raises(ValidationError) as info:
        decide(three, "A", "B")
    assert "field 'outcome'" in str(info.value) and "field 'score'" in str(info.value)
    assert "<DataFrame passed to decide>" in str(info.value)
    bad = rows_from([1.0, 0.0], [0.0, 0.0])
    bad.loc[0, "outcome"] = 1.5  # canonical columns, broken value: the fast path must not let it through
    with pytest.raises(ValidationError, match=r"row 1, field 'outcome': must be a number in \[0, 1\]; got 1\.5"):
        decide(bad, "A", "B")
    raw = pd.DataFrame({"system": ["A", "B"] * 20, "task": np.repeat([f"t{i}" for i in range(20)], 2), "outcome": [1, 0] * 20})
    assert decide(raw, "A", "B", complete=True).action == "promote"  # a plain frame is accepted once validated


PAPER = Policy.paper()


def test_two_task_file_and_one_signed_differences_continue_with_budget_left() -> None:
    two = rows_from([1.0, 1.0], [0.0, 0.0])  # the paper's rule (its bootstrap tail is 0 on one-signed differences)
    # the issue: a 2-task file got PROMOTE with R_promote = 0
    for record in (decide(two, "A", "B", PAPER), decide(two, "A", "B", PAPER, universe=planned(300))):
        assert record.action == "continue"
        assert any("all 2 observed differences are above the threshold" in w for w in record.warnings)
    covered = decide(two, "A", "B", PAPER, universe=planned(300))
    assert covered.r_promote is not None and covered.r_promote < 1e-12  # the tail really is 0: only the limit would make it usable
    assert any(f"below {MIN_OBSERVED['exact']}" in w for w in covered.warnings)
    finished = decide(two, "A", "B", PAPER, complete=True)  # a complete 2-task record: final, with the small-n warning
    assert finished.action == "promote" and any("only 2 paired tasks" in w for w in finished.warnings)
    # every difference <= 0: R_reject is exactly 0 at any n, but with budget left the fixed-budget rule continues
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2, 60).astype(float)
    b = np.maximum(a, rng.integers(0, 2, 60)).astype(float)
    rows = rows_from(a.tolist(), b.tolist())
    record = decide(rows, "A", "B", PAPER, universe=planned(300))
    reference = tail_probabilities(a - b, 0.0)
    assert reference.r_reject < 1e-12 and record.r_reject is not None and record.r_reject < 1e-12  # 0 up to rounding
    assert record.action == "continue" and any("at or below the threshold" in w for w in record.warnings)


def test_normal_method_warns_below_its_minimum() -> None:
    rows = rows_from([1.0] * 20 + [0.0] * 5, [0.0] * 20 + [1.0] * 5)
    record = decide(rows, "A", "B", Policy(tail_method="normal"), complete=True)
    assert any("normal tails are unreliable below 30" in w for w in record.warnings)
    assert not any("unreliable" in w for w in decide(rows, "A", "B", complete=True).warnings)  # exact: 25 >= 20


def test_decided_at_is_utc_and_outside_the_digest() -> None:
    rows = rows_from([1.0] * 40, [0.0] * 40)
    first, second = decide(rows, "A", "B", complete=True), decide(rows, "A", "B", complete=True)
    assert first.decided_at is not None and first.decided_at.utcoffset().total_seconds() == 0
    assert first.digest() == second.digest()
    assert first.model_copy(update={"decided_at": None}).digest() == first.digest()
    assert '"decided_at"' in first.model_dump_json()


# ---------------------------------------------------------------- the betting boundary in decide


BETTING = Policy(decision={"boundary": "betting-wor"})


def boundary_on(d: list[float] | np.ndarray, population_size: int):  # type: ignore[no-untyped-def]
    """The pooled boundary computed directly on what ``decide`` should judge: an independent reading of the record's p-values."""
    from stopwise.compare import betting_boundary

    return betting_boundary(np.asarray(d, dtype=float), 0.0, population_size=population_size, alpha=0.05)


def test_betting_runs_the_pooled_process_and_refuses_the_retired_stratified_one() -> None:
    """A uniform order (with the coverage rule: the top-up design) and a universe built in Python (with a warning) get
    the pooled process; a coverage-aware order of several groups and the stratified design are refused (issue 33).

    Shown by the record: its method names the process, and its p-values are those of the pooled boundary computed
    directly on the judged tasks."""
    import pandas as pd

    from stopwise.compare import order_universe, task_order

    rows = rows_from([1.0] * 10, [0.0] * 10, ["a", "b"] * 5)
    frame = pd.DataFrame({"task": [f"t{i:03d}" for i in range(100)], "group": ["a", "b"] * 50})
    for kind, design, refused in (
        ("coverage-aware", "top-up", True), ("uniform", "stratified", True), ("uniform", "top-up", False), (None, "top-up", False)
    ):
        policy = Policy(decision={"boundary": "betting-wor"}, order={"kind": kind or "uniform"}, betting={"design": design})
        drawn = Policy(order={"kind": kind or "uniform"})  # the fixed-budget policy's order of that kind
        universe = planned(100, ["a", "b"] * 50) if kind is None else order_universe(task_order(frame, drawn))
        first = set(universe.tasks[:10].tolist())  # the observed rows: the order's first 10 tasks
        seen = outcome_columns(
            [{"system": s, "task": t, "outcome": v, "group": g} for t, g in zip(frame["task"], frame["group"], strict=True)
             if t in first for s, v in (("A", 1.0), ("B", 0.0))]
        ).to_frame()  # fmt: skip
        if refused:
            with pytest.raises(ComparisonError, match="stratified process is retired"):
                decide(seen, "A", "B", policy, universe=universe)
            continue
        record = decide(seen if kind is not None else rows, "A", "B", policy, universe=universe)
        direct = boundary_on(np.ones(10), 100)
        assert record.tail_method.endswith("pooled on a uniform order, coverage by top-up)"), (kind, design, record.tail_method)
        assert (record.r_promote, record.r_reject) == (direct.p_promote, direct.p_reject)
        assert any("assumes a uniformly random permutation" in w for w in record.warnings) == (kind is None)


def test_betting_uses_the_longest_observed_prefix_of_the_planned_order() -> None:
    """The boundary judges the observed prefix of the planned order (30 wins of N = 100); the two observed tasks
    behind the gap at position 31 (losses) wait: the record's mean, p-values and action are the prefix's."""
    order = [f"p{i:02d}" for i in range(40)]
    universe = TaskUniverse(order + [f"u{i}" for i in range(60)])  # N = 100, no groups: the pooled process
    observed = {**{f"p{i:02d}": (1.0, 0.0) for i in range(30)}, "p31": (0.0, 1.0), "p32": (0.0, 1.0)}  # p30 is missing
    rows = outcome_columns([{"system": s, "task": t, "outcome": v[j]} for t, v in observed.items() for j, s in enumerate("AB")]).to_frame()
    record = decide(rows, "A", "B", BETTING, universe=universe)
    direct = boundary_on(np.ones(30), 100)
    assert record.n_observed == 32 and record.waiting == 2 and record.delta_hat == 1.0  # the prefix's mean, not 28 / 32
    assert (record.r_promote, record.r_reject) == (direct.p_promote, direct.p_reject) and direct.p_promote <= 0.05
    assert record.action == "promote" and "betting-wor boundary crossed" in record.reason
    assert not record.budget.at_limit and record.boundary == "betting-wor" and record.tail_method == direct.method
    assert any("2 observed task(s) lie beyond the longest observed prefix" in w for w in record.warnings)
    # the judged tasks are the prefix's whatever follows it: the rows behind the gap leave the p-values unchanged
    fewer = decide(rows[~rows["task"].isin(["p31", "p32"])], "A", "B", BETTING, universe=universe)
    assert (fewer.r_promote, fewer.r_reject, fewer.waiting) == (record.r_promote, record.r_reject, 0)


def test_betting_actions_at_any_look_and_at_the_limit() -> None:
    """A crossing acts at any look (here a reject after 10 of 100 tasks); no crossing continues, or abstains at the
    limit; coverage is judged on the prefix, so without a "b" task nothing acts, whatever the boundary would say."""
    universe = planned(100, ["a", "b"] * 50)  # built in Python, no stamp: the pooled process, with a warning
    losses = decide(rows_from([0.0] * 10, [1.0] * 10, ["a", "b"] * 5), "A", "B", BETTING, universe=universe)
    direct = boundary_on(-np.ones(10), 100)
    assert (losses.r_promote, losses.r_reject) == (direct.p_promote, direct.p_reject) and direct.p_reject <= 0.05
    assert losses.action == "reject" and not losses.budget.at_limit and losses.tail_method.startswith(direct.method[:-1])
    ties = rows_from([1.0, 0.0] * 5, [1.0, 0.0] * 5, ["a", "b"] * 5)
    assert decide(ties, "A", "B", BETTING, universe=universe).action == "continue"
    at_limit = decide(ties, "A", "B", BETTING, universe=universe, budget_used=1.0)
    assert at_limit.action == "abstain" and "betting-wor boundary was not crossed" in at_limit.reason
    direct = boundary_on(np.zeros(10), 100)
    assert (at_limit.r_promote, at_limit.r_reject) == (direct.p_promote, direct.p_reject) == (1.0, 1.0)
    # crossed on a prefix short of coverage (no "b" task): the action waits for the top-up of the crossing look tau,
    # computed here from the pooled boundary's own crossing and the tolerant rule's fewest top-up tasks
    from stopwise.compare._topup import top_up_tasks

    only_a = rows_from([1.0] * 10, [0.0] * 10, ["a"] * 10)
    record = decide(only_a, "A", "B", BETTING, universe=planned(100, ["a"] * 10 + ["b"] * 90))
    crossing = boundary_on(np.ones(10), 100).log_capital_promote >= np.log(1 / 0.05)
    tau = int(np.argmax(crossing)) + 1
    assert crossing.any() and tau < 10
    codes = np.r_[np.zeros(10, dtype=int), np.ones(90, dtype=int)]
    expected = [f"t{i:03d}" for i in top_up_tasks(codes, np.arange(100) < tau, np.array([10, 90]), rule="tolerant", slack=2.0)]
    assert expected and all(task >= "t010" for task in expected)  # b tasks only: the a tasks of the prefix are in
    assert record.action == "continue" and record.top_up == expected and record.coverage.missing_groups == ["b"]


def test_betting_needs_the_planned_order() -> None:
    rows = rows_from([1.0] * 10, [0.0] * 10)
    with pytest.raises(ComparisonError, match="betting-wor boundary needs the planned task order, but a task universe from counts"):
        decide(rows, "A", "B", BETTING, universe=TaskUniverse.from_counts(100))
    with pytest.raises(ComparisonError, match="but no task universe was given"):
        decide(rows, "A", "B", BETTING, complete=True)


def test_betting_decide_matches_the_boundary_on_the_prefix_and_stops_early() -> None:
    from stopwise.compare import betting_boundary

    rng = np.random.default_rng(3)
    n_planned, seen = 400, 80
    groups = ["a", "b", "c", "d"] * (n_planned // 4)
    universe = planned(n_planned, groups)
    a = (rng.random(seen) < 0.9).astype(float)
    b = (rng.random(seen) < 0.3).astype(float)
    rows = rows_from(a.tolist(), b.tolist(), groups[:seen])
    record = decide(rows, "A", "B", BETTING, universe=universe)
    direct = betting_boundary(a - b, 0.0, population_size=n_planned, alpha=0.05)
    assert record.r_promote == pytest.approx(direct.p_promote, abs=0) and record.r_reject == pytest.approx(direct.p_reject, abs=0)
    assert record.action == "promote" and not record.budget.at_limit  # 80 of 400 tasks: an early, anytime-valid stop
    assert record.tail_method.startswith(direct.method[:-1]) and record.boundary == "betting-wor"
    # the fixed-budget rule on the same look continues: it is valid only at the limit
    assert decide(rows, "A", "B", universe=universe).action == "continue"


def test_input_digest_ignores_row_order_and_sees_every_value() -> None:
    from stopwise.compare import input_digest

    rows = outcome_columns(
        [
            {"system": "A", "task": "t1", "outcome": 1, "source": "run-1"},
            {"system": "A", "task": "t1", "outcome": 1, "source": "run-2", "attempt": 1},
            {"system": "B", "task": "t1", "outcome": 0, "cost_usd": 0.5},
            {"system": "B", "task": "t2", "outcome": None, "status": "pending", "unit": "u"},
            {"system": "C", "task": "t1", "outcome": 1},
        ]
    ).to_frame()
    digest = input_digest(rows, ("A", "B"))
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert input_digest(rows.iloc[rng.permutation(len(rows))].reset_index(drop=True), ("B", "A")) == digest
    assert input_digest(rows[rows["system"] != "C"], ("A", "B")) == digest  # other systems' rows do not count
    for column, value in (("source", "run-3"), ("cost_usd", 0.25), ("group", "g"), ("unit", "v"), ("outcome", 0.0)):
        changed = rows.copy()
        changed.loc[0, column] = value
        assert input_digest(changed, ("A", "B")) != digest, column
