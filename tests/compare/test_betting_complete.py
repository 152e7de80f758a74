"""Issue 37: at a complete record (every planned task observed) the betting boundary gives the certain answer.

With all N planned tasks seen, the population mean difference is known exactly: "not above the threshold" is
certain when it is at most delta (reject), "above" when it exceeds delta (promote), as the fixed-budget rule
says on the same data. Before the fix, a mean exactly at delta (all ties; delta = -1 with every task A = 0,
B = 1; all 0.5; averaged attempts with mean 0) abstained "the boundary was not crossed".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stopwise import Policy, decide, outcome_columns
from stopwise.compare import order_universe, task_order

N = 24


def _universe(groups: int, policy: Policy):  # type: ignore[no-untyped-def]
    frame = pd.DataFrame({"task": [f"t{i:02d}" for i in range(N)], "group": [f"g{i % groups}" for i in range(N)]})
    return order_universe(task_order(frame, policy))


def _rows(a: list[float] | list[list[float]], b: list[float] | list[list[float]]):  # type: ignore[no-untyped-def]
    """Rows of A and B on the N tasks; a task's value a list: one row per attempt."""
    rows = []
    for system, values in (("A", a), ("B", b)):
        for i, value in enumerate(values):
            for attempt, v in enumerate(value if isinstance(value, list) else [value]):
                rows.append({"system": system, "task": f"t{i:02d}", "attempt": attempt, "outcome": float(v)})
    return outcome_columns(rows)


CASES = {
    # name: (A, B, delta, the exact mean difference)
    "all ties": ([1.0] * N, [1.0] * N, 0.0, 0.0),
    "delta -1, A = 0, B = 1": ([0.0] * N, [1.0] * N, -1.0, -1.0),
    "all 0.5": ([0.5] * N, [0.5] * N, 0.0, 0.0),
    "0.5 above at delta 0.5": ([1.0] * N, [0.5] * N, 0.5, 0.5),
    "averaged attempts, mean 0": ([[1.0, 0.0] if i % 2 else [1.0, 1.0] for i in range(N)],
                                  [[0.0, 1.0] if i % 2 else [1.0, 1.0] for i in range(N)], 0.0, 0.0),
    "balanced signs, mean 0": ([float(i % 2) for i in range(N)], [float(1 - i % 2) for i in range(N)], 0.0, 0.0),
    "one above": ([1.0] + [0.0] * (N - 1), [0.0] * N, 0.0, 1.0 / N),
    "one below": ([0.0] * N, [1.0] + [0.0] * (N - 1), 0.0, -1.0 / N),
}


@pytest.mark.parametrize("groups", [1, 3], ids=["pooled", "top-up"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_complete_record_gets_the_certain_answer(case: str, groups: int) -> None:
    a, b, delta, mean = CASES[case]
    betting = Policy(threshold=delta, decision={"boundary": "betting-wor"})
    universe = _universe(groups, betting)
    rows = _rows(a, b)
    record = decide(rows, "A", "B", betting, universe=universe)
    expected = "promote" if mean > delta else "reject"
    assert record.action == expected, (record.action, record.reason)
    assert record.n_observed == N
    assert record.delta_hat == pytest.approx(mean, abs=1e-12)
    if mean == delta:  # both betting tests unsettled: the certain answer's own words
        assert "every one of the" in record.reason and "known exactly" in record.reason, record.reason
    p = record.r_promote if expected == "promote" else record.r_reject
    assert p == 0.0
    if record.interval is not None:  # the record's interval holds the exact mean and lies on the answer's side
        assert record.interval.low <= mean + 1e-12 and mean - 1e-12 <= record.interval.high
        assert (record.interval.low >= delta) if expected == "promote" else (record.interval.high <= delta)
    fixed = decide(rows, "A", "B", Policy(threshold=delta), universe=universe)
    if fixed.action in ("promote", "reject"):  # the fixed-budget rule gives the same answer when it gives one
        assert fixed.action == expected


def test_one_task_short_of_complete_still_abstains_or_continues_at_delta() -> None:
    """One planned task unseen: the mean is not known exactly, the certain answer is not given."""
    betting = Policy(decision={"boundary": "betting-wor"})
    universe = _universe(1, betting)
    seen = list(universe.tasks[: N - 1])
    rows = outcome_columns([{"system": s, "task": t, "outcome": 1.0} for t in seen for s in ("A", "B")])
    record = decide(rows, "A", "B", betting, universe=universe)
    assert record.action in ("continue", "abstain") and "known exactly" not in record.reason
    assert np.isfinite(record.r_reject) and record.r_reject > betting.tail_cutoff
