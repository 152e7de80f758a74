"""Property-based checks of the finality building blocks (derandomized: the same examples every run)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from stopwise.errors import EffectsRecordError
from stopwise.finality import OpenEffectsRecord, Probe, ScoredRun, check_runs, example_argument
from stopwise.finality._bound import bound_label

T0 = datetime(2026, 1, 1, tzinfo=UTC)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(derandomize=True, database=None)
@given(a=unit, b=unit, pass_at=st.floats(min_value=0.01, max_value=1.0))
def test_a_bound_fixes_the_label_iff_every_value_in_it_agrees(a: float, b: float, pass_at: float) -> None:
    low, high = min(a, b), max(a, b)
    values = [low, high, (low + high) / 2, *[v for v in (pass_at,) if low <= v <= high]]
    labels = {"pass" if v >= pass_at else "fail" for v in values}
    expected = labels.pop() if len(labels) == 1 else None
    assert bound_label((low, high), pass_at) == expected


STATUSES = st.sampled_from(["pending", "terminal", "cancelled", "removed", "unknown"])


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(steps=st.lists(st.tuples(st.integers(0, 50), STATUSES, st.booleans()), max_size=8), at=st.integers(-5, 500))
def test_status_at_is_the_latest_system_answer(steps: list[tuple[int, str, bool]], at: int) -> None:
    record = OpenEffectsRecord().open("h", kind="operation", run="A", at=T0)
    clock = 0
    history: list[tuple[int, str]] = []
    for gap, status, system in steps:
        clock += gap
        probe = Probe(
            at=T0 + timedelta(milliseconds=clock),
            attempt="observe",
            query="q",
            status=status,  # type: ignore[arg-type]
            source="system" if system else "agent",
        )
        try:
            record = record.update("h", probe)
        except EffectsRecordError:
            continue  # a settled effect does not reopen: the probe was refused, the record unchanged
        if system:
            history.append((clock, status))
    moment = T0 + timedelta(milliseconds=at)
    expected = [s for c, s in history if c <= at]
    assert record.entry("h").status_at(moment) == (expected[-1] if expected else "unknown")
    assert record.entry("h").status == (history[-1][1] if history else "unknown")


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(envs=st.lists(st.sampled_from(["", "e1", "e2", "e3"]), min_size=1, max_size=12))
def test_grouped_units_are_exactly_the_shared_environments(envs: list[str]) -> None:
    runs = [ScoredRun(run=f"r{i}", system="A", task=f"t{i}", outcome=1, environment=e) for i, e in enumerate(envs)]
    checks = check_runs(example_argument("grouped-analysis"), runs)
    for check, env in zip(checks, envs, strict=True):
        shared = env and envs.count(env) > 1
        assert check.unit == ("grouped" if shared else "separate")
        assert check.unit_size == (envs.count(env) if shared else 1)
        if shared:
            assert check.unit_id == f"unit:r{envs.index(env)}"
