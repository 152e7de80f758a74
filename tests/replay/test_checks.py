"""Every public replay function checks its arguments up front against the declared constraints (stopwise._params)."""

from __future__ import annotations

from typing import Any

import pytest

from stopwise.errors import ArgumentError
from stopwise.records import synthetic_benchmark
from stopwise.replay import prepare_source, replay_grid, replay_looks, replay_source_grid, replay_source_looks


@pytest.fixture(scope="module")
def records() -> dict[str, Any]:
    return {"s": synthetic_benchmark(40, 3, rng=0)}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n_orders": 0}, "replay_grid: `n_orders` must be an integer from 1 to 100,000; got 0."),
        ({"n_orders": 2.5}, "`n_orders` must be an integer from 1 to 100,000; got 2.5."),
        ({"thresholds": []}, "replay_grid: `thresholds` must be a non-empty list of numbers in [-1, 1); got []."),
        ({"thresholds": [float("nan")]}, "`thresholds` must be a non-empty list of numbers in [-1, 1)"),
        ({"budgets": [0, 0.5]}, "replay_grid: `budgets` must be a non-empty list of fractions in (0, 1]; got [0, 0.5]."),
        ({"measure": "tokens"}, "replay_grid: `measure` must be one of None, 'task_fraction', 'task_count', 'cost_usd', 'elapsed_s'; got 'tokens'."),
        ({"scope": "both"}, "replay_grid: `scope` must be one of None, 'tested', 'pair'; got 'both'."),
        ({"min_coverage": 1.5}, "replay_grid: `min_coverage` must be a number in [0, 1]; got 1.5."),
        ({"min_shared": 0}, "replay_grid: `min_shared` must be an integer >= 1; got 0."),
    ],
)
def test_replay_refuses_a_bad_argument_naming_it(records: dict[str, Any], options: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        replay_grid(records, **options)
    assert message in str(caught.value) and isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"looks": 0}, "replay_looks: `looks` must be 'every' or a positive integer; got 0."),
        ({"fixed_looks": "often"}, "replay_looks: `fixed_looks` must be 'every', a positive integer or None; got 'often'."),
        ({"rules": []}, "replay_looks: `rules` must be a non-empty subset of betting-wor, fixed-budget; got []."),
        ({"rules": ["betting"]}, "`rules` must be a non-empty subset of betting-wor, fixed-budget; got ['betting']."),
        ({"strategy": "yolo"}, "replay_looks: `strategy` must be one of 'auto', 'mixture', 'max', 'horizon', 'agrapa', 'plug-in'; got 'yolo'."),
        ({"batch_rows": 0}, "replay_looks: `batch_rows` must be an integer >= 1; got 0."),
        ({"n_jobs": 0}, "replay_looks: `n_jobs` must be an integer >= 1; got 0."),
        ({"min_shared": -1}, "replay_looks: `min_shared` must be an integer >= 1; got -1."),
    ],
)
def test_live_replay_refuses_a_bad_argument_naming_it(records: dict[str, Any], options: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        replay_looks(records, **options)
    assert message in str(caught.value)


def test_the_single_source_functions_check_theirs(records: dict[str, Any]) -> None:
    with pytest.raises(ArgumentError, match=r"prepare_source: `min_coverage` must be a number in \[0, 1\]; got -0.1\."):
        prepare_source(records["s"], "s", min_coverage=-0.1)
    source = prepare_source(records["s"], "s")
    from stopwise.records import Policy

    with pytest.raises(ArgumentError, match=r"replay_source_grid: `budgets` must be a non-empty list of fractions in \(0, 1\]"):
        replay_source_grid(source, Policy(), budgets=[1.5])
    with pytest.raises(ArgumentError, match=r"replay_source_looks: `looks` must be 'every' or a positive integer; got 'often'\."):
        replay_source_looks(source, looks="often")
