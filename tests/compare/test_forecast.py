"""The remaining-tasks forecast of ``continue`` records (issue 24)."""

from __future__ import annotations

import numpy as np

import stopwise
from stopwise.compare._forecast import limit_in_tasks, remaining_forecast
from stopwise.records import Policy

BETTING = Policy.model_validate({"decision": {"boundary": "betting-wor"}})


def _rows(n_seen: int, big_n: int = 400) -> tuple[stopwise.OutcomeColumns, stopwise.TaskUniverse]:
    rng = np.random.default_rng(5)
    tasks = [f"t{i:03d}" for i in range(big_n)]
    b = rng.random(big_n) < 0.4
    a = np.where(rng.random(big_n) < 0.15, 1, b.astype(int))
    rows = [{"system": "A", "task": t, "outcome": int(x)} for t, x in zip(tasks[:n_seen], a, strict=False)]
    rows += [{"system": "B", "task": t, "outcome": int(x)} for t, x in zip(tasks[:n_seen], b, strict=False)]
    return stopwise.outcome_columns(rows), stopwise.TaskUniverse(tasks)


def test_a_continue_record_carries_a_seeded_forecast() -> None:
    rows, universe = _rows(20)
    record = stopwise.decide(rows, "A", "B", BETTING, universe=universe)
    assert record.action == "continue"
    f = record.forecast
    assert f is not None and f.n_simulations == 200 and f.seed == BETTING.seed
    assert 0 <= f.low <= f.median <= f.high <= 400 - 20 and 0 <= f.decided_share <= 1
    again = stopwise.decide(rows, "A", "B", BETTING, universe=universe)
    assert again.forecast == f  # seeded: the same look gives the same forecast
    assert record.claim.startswith("Not decided on these 400 planned tasks with these runs: needs about")
    assert stopwise.decide(rows, "A", "B", BETTING, universe=universe, forecast=False).forecast is None


def test_final_records_carry_no_forecast() -> None:
    rows, universe = _rows(400)
    record = stopwise.decide(rows, "A", "B", BETTING, universe=universe)
    assert record.action in ("promote", "reject", "abstain") and record.forecast is None


def test_fixed_budget_forecast_counts_to_the_limit() -> None:
    rows, universe = _rows(40)
    half = Policy.model_validate({"budget": {"limit": 0.5}})
    record = stopwise.decide(rows, "A", "B", half, universe=universe)
    assert record.action == "continue" and record.interval is None  # no interval before the planned look
    f = record.forecast
    assert f is not None and f.median == f.low == f.high == 200 - 40
    assert "acts at the budget limit, 160 more tasks away" in record.claim


def test_the_forecast_moves_with_the_evidence() -> None:
    rng = np.random.default_rng(0)
    strong = rng.choice([1.0, 0.0, -1.0], p=[0.35, 0.6, 0.05], size=40)
    weak = rng.choice([1.0, 0.0, -1.0], p=[0.12, 0.8, 0.08], size=40)
    f_strong = remaining_forecast(strong, policy=BETTING, population_size=500, limit_tasks=500)
    f_weak = remaining_forecast(weak, policy=BETTING, population_size=500, limit_tasks=500)
    assert f_strong is not None and f_weak is not None
    assert f_strong.median < f_weak.median


def test_limit_in_tasks() -> None:
    assert limit_in_tasks(Policy.model_validate({"budget": {"limit": 0.25}}), 10, 500, 0.02) == 125
    count = Policy.model_validate({"budget": {"measure": "task_count", "limit": 80}})
    assert limit_in_tasks(count, 10, 500, 10) == 80
    cost = Policy.model_validate({"budget": {"measure": "cost_usd", "limit": 100}})
    assert limit_in_tasks(cost, 10, 500, 5.0) == 200  # 0.5 USD a task so far


def test_a_crossed_top_up_look_forecasts_exactly_its_top_up_tasks() -> None:
    import re

    import pandas as pd

    from stopwise.compare._plan import order_universe, task_order
    from stopwise.records import outcome_columns

    groups = ["big"] * 180 + ["small"] * 12 + ["tiny"] * 8
    tasks = pd.DataFrame({"task": [f"t{i:03d}" for i in range(200)], "group": groups})
    policy = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
    universe = order_universe(task_order(tasks, policy))
    assert universe.tasks is not None and universe.groups is not None
    first = list(zip(universe.tasks[:8].tolist(), universe.groups[:8].tolist(), strict=True))
    rows = outcome_columns(
        [{"system": "A", "task": t, "outcome": 1, "group": g} for t, g in first]
        + [{"system": "B", "task": t, "outcome": 0, "group": g} for t, g in first]
    )
    record = stopwise.decide(rows, "A", "B", policy, universe=universe)
    waiting = re.search(r"run the (\d+) top-up task", record.reason)
    assert record.action == "continue" and waiting is not None, record.reason
    assert record.forecast is not None and record.forecast.n_simulations == 0
    assert record.forecast.median == record.forecast.low == record.forecast.high == int(waiting.group(1))
    assert "waits for the" in record.claim


def test_the_forecast_adds_the_top_up_of_each_simulated_crossing() -> None:
    """Issue 33: under the top-up design a completion crossing at look t stops at top_up_ends(pi)[t - 1]: with one
    group (nothing to top up) the forecast is the plain one; with a rare group far down pi it moves later."""
    from stopwise.compare import top_up_ends
    from stopwise.compare._forecast import TopUpPlan

    rng = np.random.default_rng(7)
    d = rng.choice([1.0, 0.0, -1.0], p=[0.3, 0.55, 0.15], size=40)
    betting = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
    plain = remaining_forecast(d, policy=betting, population_size=400, limit_tasks=400)
    one_group = TopUpPlan(np.zeros(400, dtype=np.int64), np.array([400]), "tolerant", 2.0)
    assert remaining_forecast(d, policy=betting, population_size=400, limit_tasks=400, top_up=one_group) == plain
    codes = np.zeros(400, dtype=np.int64)
    codes[[350, 360, 370]] = 1  # a group of 3 whose first task lies at position 351 of pi
    rare = TopUpPlan(codes, np.array([397, 3]), "tolerant", 2.0)
    ends = rare.ends()
    assert np.array_equal(ends, top_up_ends(codes[None, :], np.array([397, 3]), rule="tolerant")[0]) and ends[39] == 41
    topped = remaining_forecast(d, policy=betting, population_size=400, limit_tasks=400, top_up=rare)
    assert plain is not None and topped is not None
    # every completion that decides needs exactly one more task (the rare group's first) than without the top-up
    assert topped.median == plain.median + 1 and topped.low == plain.low + 1 and topped.decided_share == plain.decided_share
    # a top-up that would end past the budget limit does not decide
    tight = remaining_forecast(d, policy=betting, population_size=400, limit_tasks=60, top_up=rare)
    loose = remaining_forecast(d, policy=betting, population_size=400, limit_tasks=60)
    assert tight is not None and loose is not None and tight.decided_share <= loose.decided_share
