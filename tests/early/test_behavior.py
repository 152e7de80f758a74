"""Feedback signals and behavioral features, checked against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stopwise.early._behavior import BEHAVIOR_FEATURES, BEHAVIOR_GROUPS, BehaviorState, describe_step
from stopwise.early._feedback import read_feedback
from stopwise.records import Step


@pytest.mark.parametrize(
    ("observation", "passed", "failed"),
    [
        ("==== 3 passed, 2 failed, 1 error in 0.5s ====", 3, 3),
        ("collected 4 items\n\n==== 4 passed in 0.1s ====", 4, 0),
        ("Ran 5 tests in 0.01s\n\nFAILED (failures=2, errors=1)", 2, 3),
        ("Ran 5 tests in 0.01s\n\nOK", 5, 0),
        ("nothing to see", None, None),
    ],
)
def test_test_summaries(observation: str, passed: int | None, failed: int | None) -> None:
    s = read_feedback(observation)
    assert (s.tests_passed, s.tests_failed) == (passed, failed)


@pytest.mark.parametrize(
    ("observation", "tool_error", "errors"),
    [
        ("[isError] 'str' object has no attribute 'get'", True, set()),
        ("[error] Security violation", True, set()),
        ('{"status":400,"object":"error","message":"bad"}', True, set()),
        ('{"success": false, "data": null}', True, set()),
        ("Error: syntax error at or near SELECT", True, {"syntax"}),
        ("Traceback (most recent call last):\n  File x\nModuleNotFoundError: No module named 'q'", True, {"traceback", "import"}),
        ("Error: Tool call 'apply_migration' timed out after 60 seconds", True, {"timeout"}),
        ("bash: ./x: Permission denied", False, {"permission"}),
        ("cat: a.txt: No such file or directory", False, {"not_found"}),
        ('{"rows": [{"a": 1}]}', False, set()),
    ],
)
def test_error_signals(observation: str, tool_error: bool, errors: set[str]) -> None:
    s = read_feedback(observation)
    assert s.tool_error is tool_error
    assert set(s.errors) == errors


def test_test_counts_only_count_on_runs() -> None:
    """'3 passed' inside a listing read by a view tool is not a test result."""
    view = describe_step(Step(action='read_file({"path": "log"})', tool="read_file", observation="3 passed, 1 failed"))
    run = describe_step(Step(action='bash({"command": "pytest"})', tool="bash", observation="3 passed, 1 failed"))
    assert (view.tests_passed, view.tests_failed) == (None, None)
    assert (run.tests_passed, run.tests_failed) == (3, 1)


def _value(x: np.ndarray, name: str) -> float:
    return float(x[BEHAVIOR_FEATURES.index(name)])


def test_feature_names_are_unique_and_grouped() -> None:
    assert len(set(BEHAVIOR_FEATURES)) == len(BEHAVIOR_FEATURES)
    assert sum(len(v) for v in BEHAVIOR_GROUPS.values()) == len(BEHAVIOR_FEATURES)


def test_hand_computed_prefix() -> None:
    steps = [
        Step(action='Look.\nread_file({"path": "a.py"})', tool="read_file", observation="x = 1"),  # 1 view
        Step(action='read_file({"path": "a.py"})', tool="read_file", observation="x = 1"),  # 2 view, repeat
        Step(action='bash({"command": "pytest -q"})', tool="bash", observation="2 passed, 3 failed"),  # 3 test
        Step(action='edit_file({"path": "a.py"})', tool="edit_file", observation="[isError] denied"),  # 4 edit, error
        Step(action='bash({"command": "pytest -q"})', tool="bash", observation="4 passed, 1 failed"),  # 5 test
        Step(action="submit()", tool="submit", observation="submitted"),  # 6 submit
        Step(action='edit_file({"path": "b.py"})', tool="edit_file", observation="ok"),  # 7 edit after submit
    ]
    state = BehaviorState("Fix a.py")
    rows = [state.initial()] + [state.update(s) for s in steps]
    x0, x3, x7 = rows[0], rows[3], rows[7]
    # empty prefix
    assert _value(x0, "n_steps") == 0 and math.isnan(_value(x0, "first_edit")) and _value(x0, "has_edit") == 0
    assert _value(x0, "chars_task") == len("Fix a.py")
    # after step 3
    assert _value(x3, "n_view") == 2 and _value(x3, "n_test") == 1
    assert _value(x3, "repeat_actions") == 1 and _value(x3, "max_action_repeat") == 2 and _value(x3, "repeat_views") == 1
    assert _value(x3, "read_streak") == 0 and _value(x3, "max_read_streak") == 2
    assert _value(x3, "no_edit_streak") == 3
    assert _value(x3, "latest_fail_count") == 3 and _value(x3, "best_fail_count") == 3 and math.isnan(_value(x3, "fail_trend_down"))
    assert _value(x3, "last_test_fail") == 1 and _value(x3, "first_test") == 3 and _value(x3, "since_test") == 0
    assert _value(x3, "reasoning_step_share") == pytest.approx(1 / 3)
    # after step 7
    assert _value(x7, "n_edits") == 2 and _value(x7, "n_edit_create") == 0  # edit_file has no create verb: replace
    assert _value(x7, "n_edit_replace") == 2
    assert _value(x7, "first_edit") == 4 and _value(x7, "since_edit") == 0
    assert _value(x7, "first_error") == 4 and _value(x7, "since_error") == 3 and _value(x7, "n_errors") == 1
    assert _value(x7, "latest_fail_count") == 1 and _value(x7, "best_fail_count") == 1 and _value(x7, "fail_trend_down") == 1
    assert _value(x7, "submit_without_test") == 0 and _value(x7, "edits_after_submit") == 1
    assert _value(x7, "first_submit") == 6 and _value(x7, "since_submit") == 1
    assert _value(x7, "reads_per_edit") == pytest.approx(2 / 3)
    assert _value(x7, "edits_per_test") == pytest.approx(2 / 3)
    assert _value(x7, "error_rate") == pytest.approx(1 / 7)
    assert _value(x7, "n_distinct_tools") == 4 and _value(x7, "n_tool_calls") == 7
    assert _value(x7, "chars_feedback") == sum(len(s.observation) for s in steps)
    assert _value(x7, "seen_tool_error") == 1 and _value(x7, "seen_test_fail") == 1 and _value(x7, "seen_all_passed") == 0


def test_submit_without_test() -> None:
    state = BehaviorState("")
    state.update(Step(action='edit_file({"path": "a"})', tool="edit_file", observation="ok"))
    x = state.update(Step(action="claim_done()", tool="claim_done", observation=""))
    assert _value(x, "submit_without_test") == 1


def test_update_cost_does_not_depend_on_history() -> None:
    """The state keeps counters, not the steps: its size is bounded by distinct actions, not steps."""
    state = BehaviorState("")
    step = Step(action='read_file({"path": "a"})', tool="read_file", observation="x")
    for _ in range(500):
        state.update(step)
    assert len(state.signatures) == 1 and state.k == 500
