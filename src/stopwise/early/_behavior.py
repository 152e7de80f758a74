"""Behavioral prefix features (the paper's Table II, behavioral family), updated one step at a time.

:class:`BehaviorState` holds running counters only; :meth:`BehaviorState.update` reads one step,
costs time proportional to that step's text (never to the number of earlier steps) and returns the
feature vector of the prefix ending at that step. Nothing here reads ``meta``, the outcome, or any
step after the current one.

Groups (see :data:`BEHAVIOR_GROUPS`):

- ``activity``: cumulative volume and per-category counts;
- ``last_step``: properties of the most recent step;
- ``timing``: first occurrence, occurred flag and steps since the last occurrence of key events;
- ``pattern``: rhythm ratios, repeats and streaks, submit-without-test, reasoning volume and overlap;
- ``status``: error types and test outcomes seen so far, latest and best failure counts, trend.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass

import numpy as np

from stopwise.early._categories import CATEGORIES, CHANNELS, EDITS, READS, RUNS, categorize_action, split_action
from stopwise.early._feedback import ERROR_KINDS, read_feedback
from stopwise.records import Step

__all__ = ["BEHAVIOR_FEATURES", "BEHAVIOR_GROUPS", "BehaviorState", "StepInfo", "describe_step"]

_NAN = math.nan
_WORD = re.compile(r"\w\w+")
_LONG_OBSERVATION = 10_000
EVENTS: tuple[str, ...] = ("edit", "test", "code_run", "submit", "error", "traceback", "read")
"""Events whose timing is tracked."""

_ACTIVITY = [
    "n_steps",
    "n_actions",
    "n_observations",
    "n_tool_calls",
    "n_distinct_tools",
    "chars_action",
    "chars_feedback",
    "chars_reasoning",
    "chars_task",
    *[f"n_{c}" for c in CATEGORIES],
    "n_edits",
    "n_code_runs",
    "n_errors",
    "n_tracebacks",
    "n_empty_observations",
    "n_long_observations",
]
_LAST = [
    "last_category",
    "last_channel",
    "last_n_calls",
    "last_has_output",
    "last_tool_error",
    "last_traceback",
    "last_test_pass",
    "last_test_fail",
    "last_action_chars",
    "last_observation_chars",
    "last_reasoning_chars",
    "last_is_repeat",
]
_TIMING = [f"{kind}_{e}" for e in EVENTS for kind in ("first", "has", "since")]
_PATTERN = [
    "reads_per_edit",
    "edits_per_test",
    "run_share",
    "error_rate",
    "submit_rate",
    "mean_action_chars",
    "mean_observation_chars",
    "mean_reasoning_chars",
    "repeat_actions",
    "repeat_rate",
    "max_action_repeat",
    "repeat_searches",
    "repeat_views",
    "no_edit_streak",
    "max_no_edit_streak",
    "read_streak",
    "max_read_streak",
    "error_streak",
    "max_error_streak",
    "same_tool_streak",
    "max_same_tool_streak",
    "submit_without_test",
    "edits_after_submit",
    "reasoning_step_share",
    "reasoning_overlap_last",
    "reasoning_overlap_mean",
    "distinct_tool_share",
    "message_share",
    "observation_growth",
]
_STATUS = [
    *[f"seen_{e}" for e in ERROR_KINDS],
    "seen_tool_error",
    "seen_test_pass",
    "seen_test_fail",
    "seen_all_passed",
    "latest_fail_count",
    "best_fail_count",
    "fail_trend_down",
    "n_test_summaries",
]

BEHAVIOR_GROUPS: dict[str, tuple[str, ...]] = {
    "activity": tuple(_ACTIVITY),
    "last_step": tuple(_LAST),
    "timing": tuple(_TIMING),
    "pattern": tuple(_PATTERN),
    "status": tuple(_STATUS),
}
"""Behavioral feature names by group, in feature order."""

BEHAVIOR_FEATURES: tuple[str, ...] = tuple(name for names in BEHAVIOR_GROUPS.values() for name in names)
"""Every behavioral feature name, in feature order."""

_CATEGORY_CODE = {c: i for i, c in enumerate(CATEGORIES)}
_CHANNEL_CODE = {c: i for i, c in enumerate(CHANNELS)}
_N = len(BEHAVIOR_FEATURES)


@dataclass(frozen=True)
class StepInfo:
    """What the rules read from one step (category, text sizes, feedback signals)."""

    category: str
    channel: str
    n_calls: int
    tool: str | None
    signature: int
    action_chars: int
    observation_chars: int
    reasoning_chars: int
    reasoning_overlap: float
    has_action: bool
    has_output: bool
    tool_error: bool
    errors: frozenset[str]
    tests_passed: int | None
    tests_failed: int | None


def _signature(tool: str | None, text: str) -> int:
    digest = hashlib.blake2b(f"{tool}\x00{text}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def describe_step(step: Step) -> StepInfo:
    """Read the rule-based properties of one step.

    Examples
    --------
    >>> from stopwise.records import Step
    >>> info = describe_step(Step(action="python -m pytest", tool="bash", observation="2 failed, 3 passed"))
    >>> (info.category, info.tests_failed, info.tests_passed)
    ('test', 2, 3)
    """
    action = step.action
    observation = step.observation
    tool = step.tool or None
    has_output = bool(observation.strip())
    category = categorize_action(action, tool, has_output=has_output)
    reasoning, call = split_action(action, tool)
    if reasoning and call:
        a = set(_WORD.findall(reasoning.lower()))
        b = set(_WORD.findall(call.lower()))
        union = len(a | b)
        overlap = len(a & b) / union if union else 0.0
    else:
        overlap = 0.0
    signals = read_feedback(observation)
    test_counts = category.category in RUNS
    return StepInfo(
        category=category.category,
        channel=category.channel,
        n_calls=category.n_calls,
        tool=tool,
        signature=_signature(tool, call if tool else action),
        action_chars=len(action),
        observation_chars=len(observation),
        reasoning_chars=len(reasoning) if tool else 0,
        reasoning_overlap=overlap,
        has_action=bool(action.strip()),
        has_output=has_output,
        tool_error=signals.tool_error,
        errors=signals.errors,
        tests_passed=signals.tests_passed if test_counts else None,
        tests_failed=signals.tests_failed if test_counts else None,
    )


def _event_flags(info: StepInfo) -> tuple[bool, ...]:
    c = info.category
    return (
        c in EDITS,
        c == "test",
        c in RUNS,
        c == "submit",
        info.tool_error,
        "traceback" in info.errors,
        c in READS,
    )


class BehaviorState:
    """Running behavioral features of a growing prefix.

    Parameters
    ----------
    task_text : str
        The task prompt (only its length is used here).

    Examples
    --------
    >>> from stopwise.records import Step
    >>> state = BehaviorState("Fix the bug.")
    >>> x = state.update(Step(action="cat a.py", tool="bash", observation="print(1)"))
    >>> int(x[BEHAVIOR_FEATURES.index("n_view")])
    1
    """

    def __init__(self, task_text: str = "") -> None:
        self.k = 0
        self.task_chars = len(task_text)
        self.category_counts = dict.fromkeys(CATEGORIES, 0)
        self.n_actions = 0
        self.n_observations = 0
        self.n_tool_calls = 0
        self.tools: set[str] = set()
        self.chars_action = 0
        self.chars_feedback = 0
        self.chars_reasoning = 0
        self.n_errors = 0
        self.n_tracebacks = 0
        self.n_empty = 0
        self.n_long = 0
        self.first = [-1] * len(EVENTS)
        self.last = [-1] * len(EVENTS)
        self.signatures: dict[int, int] = {}
        self.repeat_actions = 0
        self.max_repeat = 0
        self.repeat_searches = 0
        self.repeat_views = 0
        self.no_edit_streak = 0
        self.max_no_edit_streak = 0
        self.read_streak = 0
        self.max_read_streak = 0
        self.error_streak = 0
        self.max_error_streak = 0
        self.same_tool_streak = 0
        self.max_same_tool_streak = 0
        self.previous_tool: str | None = None
        self.submitted = False
        self.submit_without_test = 0
        self.edits_after_submit = 0
        self.reasoning_steps = 0
        self.overlap_sum = 0.0
        self.seen_errors = dict.fromkeys(ERROR_KINDS, 0)
        self.seen_tool_error = 0
        self.seen_pass = 0
        self.seen_fail = 0
        self.seen_all_passed = 0
        self.latest_fail = _NAN
        self.previous_fail = _NAN
        self.best_fail = _NAN
        self.n_summaries = 0
        self.info: StepInfo | None = None
        self.is_repeat = False

    def initial(self) -> np.ndarray:
        """Feature vector of the empty prefix (k = 0)."""
        return self._vector()

    def update(self, step: Step, info: StepInfo | None = None) -> np.ndarray:
        """Add one step and return the features of the prefix ending there."""
        info = describe_step(step) if info is None else info
        self.k += 1
        k = self.k
        c = info.category
        self.category_counts[c] += 1
        self.n_actions += info.has_action
        self.n_observations += info.has_output
        if info.tool is not None and info.tool != "__user__":
            self.n_tool_calls += 1
            self.tools.add(info.tool)
        self.chars_action += info.action_chars
        self.chars_feedback += info.observation_chars
        self.chars_reasoning += info.reasoning_chars
        self.n_errors += info.tool_error
        self.n_tracebacks += "traceback" in info.errors
        self.n_empty += not info.has_output
        self.n_long += info.observation_chars > _LONG_OBSERVATION
        for i, flag in enumerate(_event_flags(info)):
            if flag:
                if self.first[i] < 0:
                    self.first[i] = k
                self.last[i] = k
        seen = self.signatures.get(info.signature, 0) + 1
        self.signatures[info.signature] = seen
        self.is_repeat = seen > 1
        if self.is_repeat:
            self.repeat_actions += 1
            self.repeat_searches += c == "search"
            self.repeat_views += c == "view"
        self.max_repeat = max(self.max_repeat, seen)
        self.no_edit_streak = 0 if c in EDITS else self.no_edit_streak + 1
        self.max_no_edit_streak = max(self.max_no_edit_streak, self.no_edit_streak)
        self.read_streak = self.read_streak + 1 if c in READS else 0
        self.max_read_streak = max(self.max_read_streak, self.read_streak)
        self.error_streak = self.error_streak + 1 if info.tool_error else 0
        self.max_error_streak = max(self.max_error_streak, self.error_streak)
        same = info.tool is not None and info.tool == self.previous_tool
        self.same_tool_streak = self.same_tool_streak + 1 if same else 1
        self.max_same_tool_streak = max(self.max_same_tool_streak, self.same_tool_streak)
        self.previous_tool = info.tool
        if c == "submit":
            if not self.submitted and self.category_counts["test"] == 0:
                self.submit_without_test = 1
            self.submitted = True
        elif c in EDITS and self.submitted:
            self.edits_after_submit += 1
        self.reasoning_steps += info.reasoning_chars > 0
        self.overlap_sum += info.reasoning_overlap
        for kind in info.errors:
            self.seen_errors[kind] = 1
        self.seen_tool_error |= info.tool_error
        if info.tests_passed is not None or info.tests_failed is not None:
            passed = info.tests_passed or 0
            failed = info.tests_failed or 0
            self.n_summaries += 1
            self.seen_pass |= passed > 0
            self.seen_fail |= failed > 0
            self.seen_all_passed |= passed > 0 and failed == 0
            self.previous_fail = self.latest_fail
            self.latest_fail = float(failed)
            self.best_fail = float(failed) if math.isnan(self.best_fail) else min(self.best_fail, float(failed))
        self.info = info
        return self._vector()

    def _vector(self) -> np.ndarray:
        """The behavioral features after the latest step, in the order of the feature list."""
        values = [*self._volume_values(), *self._last_step_values(), *self._position_values(), *self._rate_values(), *self._test_values()]
        out = np.asarray(values, dtype=np.float64)
        if out.shape[0] != _N:  # pragma: no cover - guards the feature list against drift
            raise RuntimeError(f"behavioral vector has {out.shape[0]} values, expected {_N}")
        return out

    def _edits_and_runs(self) -> tuple[int, int]:
        counts = self.category_counts
        n_edits = counts["edit_create"] + counts["edit_replace"] + counts["edit_insert"] + counts["edit_delete"]
        return n_edits, counts["test"] + counts["python"] + counts["cli"]

    def _volume_values(self) -> list[float]:
        """Counts and sizes so far: steps, actions, characters, categories, errors."""
        counts = self.category_counts
        n_edits, n_runs = self._edits_and_runs()
        return [
            self.k,
            self.n_actions,
            self.n_observations,
            self.n_tool_calls,
            len(self.tools),
            self.chars_action,
            self.chars_feedback,
            self.chars_reasoning,
            self.task_chars,
            *[counts[c] for c in CATEGORIES],
            n_edits,
            n_runs,
            self.n_errors,
            self.n_tracebacks,
            self.n_empty,
            self.n_long,
        ]

    def _last_step_values(self) -> list[float]:
        """What the latest step was (NaN before the first step)."""
        info = self.info
        if info is None:
            return [_NAN] * len(_LAST)
        test_pass = info.tests_passed is not None and (info.tests_passed or 0) > 0 and not info.tests_failed
        test_fail = bool(info.tests_failed)
        return [
            _CATEGORY_CODE[info.category],
            _CHANNEL_CODE[info.channel],
            info.n_calls,
            info.has_output,
            info.tool_error,
            "traceback" in info.errors,
            test_pass,
            test_fail,
            info.action_chars,
            info.observation_chars,
            info.reasoning_chars,
            self.is_repeat,
        ]

    def _position_values(self) -> list[float]:
        """Per tracked event: the step it first happened, whether it happened, steps since it last happened."""
        values: list[float] = []
        for first, last in zip(self.first, self.last, strict=True):
            if first < 0:
                values += [_NAN, 0.0, _NAN]
            else:
                values += [first, 1.0, self.k - last]
        return values

    def _rate_values(self) -> list[float]:
        """Ratios, per-step rates, repeats and streaks."""
        k, counts, info = self.k, self.category_counts, self.info
        n_edits, n_runs = self._edits_and_runs()
        per_step = 1.0 / k if k else 0.0
        return [
            (counts["view"] + counts["search"]) / (n_edits + 1),
            n_edits / (counts["test"] + 1),
            n_runs / (self.n_tool_calls + 1),
            self.n_errors * per_step,
            counts["submit"] * per_step,
            self.chars_action * per_step,
            self.chars_feedback * per_step,
            self.chars_reasoning * per_step,
            self.repeat_actions,
            self.repeat_actions * per_step,
            self.max_repeat,
            self.repeat_searches,
            self.repeat_views,
            self.no_edit_streak,
            self.max_no_edit_streak,
            self.read_streak,
            self.max_read_streak,
            self.error_streak,
            self.max_error_streak,
            self.same_tool_streak if k else 0,
            self.max_same_tool_streak,
            self.submit_without_test,
            self.edits_after_submit,
            self.reasoning_steps * per_step,
            info.reasoning_overlap if info is not None else _NAN,
            self.overlap_sum * per_step,
            len(self.tools) / (self.n_tool_calls + 1),
            counts["message"] * per_step,
            (info.observation_chars / (self.chars_feedback * per_step + 1.0)) if info is not None else _NAN,
        ]

    def _test_values(self) -> list[float]:
        """Errors seen and what the test summaries said."""
        fail_trend = (
            float(self.latest_fail < self.previous_fail)
            if not (math.isnan(self.latest_fail) or math.isnan(self.previous_fail))
            else _NAN
        )
        return [
            *[self.seen_errors[e] for e in ERROR_KINDS],
            self.seen_tool_error,
            self.seen_pass,
            self.seen_fail,
            self.seen_all_passed,
            self.latest_fail,
            self.best_fail,
            fail_trend,
            self.n_summaries,
        ]
