"""The prefix gate: no sample runs more than ``window`` places past a task of the run that has not come (issue 35, item 5)."""

from __future__ import annotations

import numpy as np
import pytest

from stopwise.inspect._prefix import WINDOW, PrefixGate


def _order(n: int) -> list[str]:
    return [f"t{i:03d}" for i in range(n)]


def test_in_order_arrivals_never_skip() -> None:
    gate = PrefixGate(_order(200))
    assert all(gate.arrive(t) is None for t in _order(200))
    assert gate.skipped == [] and gate.missing() is None


def test_a_late_task_holds_every_sample_past_the_window() -> None:
    order = _order(100)
    gate = PrefixGate(order, have=order[:5], window=WINDOW)  # a retry: the first 5 are reused
    late = order[5]
    came = [t for t in order[6:] if gate.arrive(t) is None]  # every later sample comes first
    # places 7 .. 6 + WINDOW run (each at most WINDOW places past place 6), none further
    assert came == order[6 : 6 + WINDOW]
    first = gate.arrive(order[6 + WINDOW])
    assert first is not None and (first.task, first.place, first.sample_place) == (late, 6, 7 + WINDOW)
    assert gate.arrive(late) is None  # the late one runs when it comes
    # the samples skipped stay missing: the first of them now holds the rest
    assert gate.missing() == order[6 + WINDOW]
    assert gate.arrive(order[-1]) is not None


def test_reused_and_completed_tasks_are_not_waited_for() -> None:
    order = _order(60)
    gate = PrefixGate(order, have=[order[0]], window=3)
    gate.done(order[1])  # a reused prior record reaches complete_sample without schedule_sample
    assert gate.arrive(order[5]) is None  # 3 places past order[2], the first missing
    assert gate.arrive(order[6]) is not None
    assert gate.arrive("added-during-run") is None  # not in the order: never skipped


def test_arrivals_shuffled_within_the_window_never_skip() -> None:
    # Inspect reads up to 25 prior records at once: arrivals permuted within blocks of WINDOW never skip
    rng = np.random.default_rng(35)
    order = _order(240)
    for _ in range(20):
        arrivals = [t for block in range(0, 240, WINDOW) for t in rng.permutation(order[block : block + WINDOW])]
        gate = PrefixGate(order)
        assert [t for t in arrivals if gate.arrive(str(t)) is not None] == []


def test_the_window_is_positive() -> None:
    with pytest.raises(ValueError, match="window"):
        PrefixGate(_order(3), window=0)
