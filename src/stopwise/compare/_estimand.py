"""What a decision record's interval and action are about (issue 35): one estimand per claim.

The tail method fixes the basis of the test, and the interval inverts the same test, so both name one estimand:

* ``planned-tasks`` -- ``exact-wor``, ``serfling``, ``betting-wor`` (and tail method ``none``): the mean difference over
  the N planned tasks with these runs, the observed tasks a sample drawn without replacement; exact at n = N;
* ``task-distribution`` -- ``exact``, ``bootstrap``, ``normal``: the mean over the benchmark's task distribution, the
  tasks a sample of it (the bootstrap resamples tasks with replacement); never exact.

Where tasks have several attempts, the rerun component estimates how far new runs would move the difference: each
task's outcome variance per system, ``m (1 - m) k / (k - 1)`` from its k attempts averaging m (unbiased for 0/1
outcomes, an upper bound's estimate for scores in [0, 1]), pooled per system over the tasks with two or more attempts
for the tasks with one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from stopwise.records import DifferenceInterval, Estimand, EstimandState

if TYPE_CHECKING:
    from stopwise.compare._state import DecideState

__all__ = ["TASK_DISTRIBUTION_METHODS", "estimand_of", "estimand_text", "rerun_component"]

TASK_DISTRIBUTION_METHODS = ("exact", "bootstrap", "normal")
"""Tail methods whose tests treat the observed tasks as a sample of the benchmark's task distribution."""


def estimand_text(kind: Estimand, n_planned: int) -> str:
    """The estimand in the words of the claim sentence.

    Examples
    --------
    >>> from stopwise.compare._estimand import estimand_text
    >>> estimand_text("planned-tasks", 500)
    'these 500 planned tasks with these runs'
    """
    if kind == "planned-tasks":
        return f"these {n_planned} planned tasks with these runs"
    return f"the benchmark's task distribution (these {n_planned} tasks taken as a sample of it)"


def _task_variances(means: np.ndarray, attempts: np.ndarray) -> np.ndarray | None:
    """Per-task outcome variance of one system from its attempts; None when no task has two attempts."""
    many = attempts >= 2
    if not many.any():
        return None
    k = np.maximum(attempts, 2)
    variance = np.where(many, means * (1.0 - means) * k / (k - 1), np.nan)
    return np.where(many, variance, float(np.nanmean(variance)))


def rerun_component(
    tested: np.ndarray, baseline: np.ndarray, tested_attempts: np.ndarray, baseline_attempts: np.ndarray
) -> tuple[float | None, float | None]:
    """(SD of a new one-attempt-per-task mean difference, SD of this mean difference) around the expected one.

    Both are estimates from within-task attempt variance; (None, None) when no task has two attempts of both systems.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._estimand import rerun_component
    >>> one, mean = rerun_component(np.full(4, 0.5), np.zeros(4), np.full(4, 2), np.full(4, 2))
    >>> round(one, 3), round(mean, 3)  # sqrt(4 * 0.5) / 4 and sqrt(4 * 0.25) / 4
    (0.354, 0.25)
    """
    var_a = _task_variances(np.asarray(tested, dtype=float), np.asarray(tested_attempts))
    var_b = _task_variances(np.asarray(baseline, dtype=float), np.asarray(baseline_attempts))
    if var_a is None or var_b is None or len(var_a) == 0:
        return None, None
    n = len(var_a)
    one_run = float(np.sqrt(np.sum(var_a + var_b))) / n
    averaged = (
        float(np.sqrt(np.sum(var_a / np.maximum(tested_attempts, 1) + var_b / np.maximum(baseline_attempts, 1)))) / n
    )
    return one_run, averaged


def estimand_of(state: DecideState, interval: DifferenceInterval | None = None) -> EstimandState:
    """The estimand of the look's test and interval, with the rerun component of its judged tasks.

    An interval that replaced the paper's tail at rare discordance by the exact-wor interval is about the planned tasks.
    """
    policy, paired = state.policy, state.paired
    fixed = policy.decision.boundary == "fixed-budget"
    exact = interval is not None and interval.method.startswith("rare discordance")
    sampled = fixed and policy.tail_method in TASK_DISTRIBUTION_METHODS and not exact
    kind: Estimand = "task-distribution" if sampled else "planned-tasks"
    # the rerun component of the observed pairs (under a missing-task treatment the judged sequence holds fills)
    k_a, k_b = paired.tested_attempts, paired.baseline_attempts
    one_run, averaged = rerun_component(paired.tested_outcomes, paired.baseline_outcomes, k_a, k_b)
    attempts = float(np.mean(np.r_[k_a, k_b])) if len(k_a) else 1.0
    return EstimandState(
        kind=kind,
        text=estimand_text(kind, paired.n_shared),
        attempts=round(attempts, 6),
        rerun_sd=one_run,
        mean_sd=averaged,
    )
