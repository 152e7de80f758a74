"""How many more tasks a continuing comparison is likely to need: a seeded predictive replay (issue 24).

Model. The observed paired differences take a few distinct values (win / tie / loss for 0/1 outcomes,
always including -1, 0 and 1 then). Their shares in the unobserved tasks are drawn from the Dirichlet
posterior ``Dirichlet(counts + 1/2)`` on the observed counts (Jeffreys prior), one draw per simulated
completion, and the unobserved tasks' differences are then drawn i.i.d. from those shares, in look order,
up to the budget limit. The record's own boundary is run on each completion look by look:

* ``betting-wor``: the pooled betting capital (:func:`stopwise.compare.betting_paths`, vectorised over the
  completions) on the observed prefix followed by the simulated tasks; a completion crosses at the first
  look t past the current one where either test reaches 1/a. Under the top-up design (issue 33) its action
  comes when the crossing's top-up ends: ``top_up_ends(pi)[t - 1]`` tasks, from the planned order's groups and
  the policy's coverage rule (:class:`TopUpPlan`; the tasks the top-up adds are the planned order's, known in
  advance), as for an evaluation that runs the top-up as soon as it is named (``stopwise next``); a top-up that
  would end past the budget limit does not decide. Without it the action comes at the crossing (the stratified
  process is replayed with the pooled one: a forecast, not a guarantee).
* ``fixed-budget``: the rule acts only at the budget limit, so every completion ends there; it decides when
  the policy's tails of the completed sample are at most a on the observed side (``decided_share``).

The remaining tasks of a completion are counted from the current look to its decision, or to the budget
limit when it does not decide; :class:`stopwise.records.RemainingForecast` keeps their median and 10th /
90th percentiles and the share that decides. With the default 200 completions of a 500-task benchmark it
takes about 10-60 ms.

Bounded work. A forecast draws at most :data:`FORECAST_MAX_DRAWS` simulated task outcomes (completions x
remaining tasks), in blocks of completions of at most :data:`_BLOCK_DRAWS` outcomes (the blocks draw the same
random stream as one array), so its memory does not grow with the planned tasks: past the cap it simulates
fewer completions (the forecast's ``n_simulations`` says how many), and when fewer than
:data:`FORECAST_MIN_SIMULATIONS` fit (more than 500,000 remaining tasks with the defaults) the record carries
no forecast.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from stopwise.compare._betting import betting_paths
from stopwise.compare._coverage import COVERAGE_SLACK
from stopwise.compare._tails import tail_probabilities
from stopwise.compare._topup import top_up_ends
from stopwise.compare._wor_exact import exact_wor_tails_from_counts
from stopwise.records import CoverageRule, Policy, RemainingForecast

__all__ = [
    "FORECAST_MAX_DRAWS",
    "FORECAST_MIN_SIMULATIONS",
    "FORECAST_SIMULATIONS",
    "TopUpPlan",
    "limit_in_tasks",
    "remaining_forecast",
]

FORECAST_SIMULATIONS = 200
"""Completions simulated for a betting-wor forecast (a fixed-budget one uses a quarter of them: its tails cost more)."""
FORECAST_MAX_DRAWS = 10_000_000
"""Simulated task outcomes one forecast draws at most (completions x remaining tasks); past it, fewer completions."""
FORECAST_MIN_SIMULATIONS = 20
"""Fewest completions a forecast is given with; when fewer fit in :data:`FORECAST_MAX_DRAWS` there is none."""
_BLOCK_DRAWS = 1_000_000
"""Simulated task outcomes held at once (a block of completions): bounds the forecast's memory."""


@dataclass(frozen=True)
class TopUpPlan:
    """The planned order's groups and the coverage rule: what the forecast needs to add a crossing's top-up."""

    codes: np.ndarray
    """Group code of each planned task, in the planned order pi (shape (N,))."""
    sizes: np.ndarray
    """n_g of each group (shape (G,))."""
    rule: CoverageRule = "proportional"
    """The policy's coverage rule."""
    slack: float = COVERAGE_SLACK
    """The ``tolerant`` rule's slack."""

    def ends(self) -> np.ndarray:
        """``ends[t - 1]``: the task count at which the top-up after a crossing at look t ends (:func:`top_up_ends`)."""
        return top_up_ends(self.codes[None, :], self.sizes, rule=self.rule, slack=self.slack)[0]


def limit_in_tasks(policy: Policy, n_observed: int, population_size: int, used: float) -> int:
    """The budget limit as a number of tasks: exact for task measures, extrapolated from the spend so far for cost and time."""
    limit, measure = policy.budget.limit, policy.budget.measure
    if measure == "task_fraction":
        tasks = math.ceil(limit * population_size - 1e-9)
    elif measure == "task_count":
        tasks = math.ceil(limit - 1e-9)
    elif used > 0 and n_observed > 0:
        tasks = math.floor(n_observed * limit / used + 1e-9)
    else:
        tasks = population_size
    return int(min(max(tasks, n_observed), population_size))


def _completion_blocks(
    differences: np.ndarray, remaining: int, n_simulations: int, rng: np.random.Generator
) -> Iterator[np.ndarray]:
    """Blocks of rows of the ``(n_simulations, remaining)`` simulated differences of the unobserved tasks.

    The Dirichlet-multinomial model; at most :data:`_BLOCK_DRAWS` values a block, in simulation order.
    """
    support = np.unique(np.r_[differences, [-1.0, 0.0, 1.0]] if np.isin(differences, (-1.0, 0.0, 1.0)).all() else differences)
    counts = np.array([np.count_nonzero(differences == v) for v in support], dtype=float)
    shares = rng.dirichlet(counts + 0.5, size=n_simulations)
    cumulative = np.cumsum(shares, axis=1)
    cumulative[:, -1] = 1.0
    rows = max(1, _BLOCK_DRAWS // max(remaining, 1))
    for start in range(0, n_simulations, rows):
        block = cumulative[start : start + rows]
        draws = rng.random((len(block), remaining))  # the same stream as one (n_simulations, remaining) draw
        index = np.stack([np.searchsorted(block[s], draws[s], side="right") for s in range(len(block))])
        yield support[np.minimum(index, len(support) - 1)]


def _simulations(wanted: int, remaining: int) -> int:
    """Completions to simulate: ``wanted``, or as many as :data:`FORECAST_MAX_DRAWS` allows (0: no forecast)."""
    fit = min(wanted, FORECAST_MAX_DRAWS // remaining)
    return fit if fit >= min(wanted, FORECAST_MIN_SIMULATIONS) else 0


def _summary(remaining: np.ndarray, decided: np.ndarray, n_simulations: int, seed: int) -> RemainingForecast:
    low, median, high = np.percentile(remaining, [10, 50, 90])
    return RemainingForecast(
        median=float(median), low=float(low), high=float(high), decided_share=float(decided.mean()), n_simulations=n_simulations, seed=seed
    )


def remaining_forecast(
    differences: np.ndarray,
    *,
    policy: Policy,
    population_size: int,
    limit_tasks: int,
    n_simulations: int = FORECAST_SIMULATIONS,
    seed: int = 0,
    top_up: TopUpPlan | None = None,
) -> RemainingForecast | None:
    """The predictive distribution of the tasks still needed by a ``continue`` look (see the module docstring).

    Parameters
    ----------
    differences : numpy.ndarray
        The judged differences so far, in look order (the betting boundary's observed prefix).
    policy : Policy
        The record's policy (boundary, threshold, a, tail method).
    population_size : int
        N, the planned tasks.
    limit_tasks : int
        The budget limit in tasks (:func:`limit_in_tasks`).
    n_simulations, seed : int
        Completions simulated and the seed of their generator.
    top_up : TopUpPlan, optional
        Under the betting boundary's top-up design: the planned order's groups and the coverage rule, so that each
        completion's action waits for its crossing's top-up (default: the action at the crossing).

    Returns
    -------
    RemainingForecast or None
        None when nothing is observed yet, the limit is already reached, or fewer than
        :data:`FORECAST_MIN_SIMULATIONS` completions fit in :data:`FORECAST_MAX_DRAWS`.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise import Policy
    >>> from stopwise.compare._forecast import remaining_forecast
    >>> rng = np.random.default_rng(0)
    >>> d = rng.choice([1.0, 0.0, -1.0], p=[0.25, 0.65, 0.10], size=60)
    >>> betting = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
    >>> f = remaining_forecast(d, policy=betting, population_size=500, limit_tasks=500)
    >>> 0 < f.median < 440, f.decided_share > 0.5, f.n_simulations
    (True, True, 200)
    """
    d = np.asarray(differences, dtype=float)
    n = len(d)
    remaining = int(limit_tasks) - n
    if n == 0 or remaining <= 0:
        return None
    rng = np.random.default_rng(seed)
    a, threshold = policy.tail_cutoff, policy.threshold
    if policy.decision.boundary == "betting-wor":
        n_sims = _simulations(n_simulations, remaining)
        if n_sims == 0:
            return None
        first_parts, decided_parts = [], []
        for future in _completion_blocks(d, remaining, n_sims, rng):
            x = np.concatenate([np.broadcast_to(d, (len(future), n)), future], axis=1)
            paths = betting_paths(x, threshold, population_size=population_size, alpha=a)
            level = math.log(1.0 / a)
            crossed = (np.maximum.accumulate(paths.log_promote, axis=1) >= level) | (np.maximum.accumulate(paths.log_reject, axis=1) >= level)
            crossed = crossed[:, n - 1 :]  # from the current look on
            decided_block = np.asarray(crossed.any(axis=1), dtype=bool)
            first_parts.append(np.where(decided_block, np.argmax(crossed, axis=1), remaining))
            decided_parts.append(decided_block)
        first, decided = np.concatenate(first_parts), np.concatenate(decided_parts)
        if top_up is not None:  # the action waits for the crossing look's top-up (the planned order's own tasks)
            ends = top_up.ends()
            stop = ends[np.minimum(n - 1 + first, len(ends) - 1)] - n
            decided &= stop <= remaining
            first = np.where(decided, stop, remaining)
        return _summary(first.astype(float), decided, n_sims, seed)
    n_sims = _simulations(max(1, n_simulations // 4), remaining)
    if n_sims == 0:
        return None
    blocks = _completion_blocks(d, remaining, n_sims, rng)
    method = policy.tail_method
    if method == "exact-wor" and np.isin(d, (-1.0, 0.0, 1.0)).all() and limit_tasks < population_size:
        wins_parts, losses_parts, above_parts = [], [], []
        for future in blocks:
            full = np.concatenate([np.broadcast_to(d, (len(future), n)), future], axis=1)
            wins_parts.append((full > 0).sum(axis=1))
            losses_parts.append((full < 0).sum(axis=1))
            above_parts.append(full.mean(axis=1) > threshold)
        wins, losses, above = np.concatenate(wins_parts), np.concatenate(losses_parts), np.concatenate(above_parts)
        p_promote, p_reject = exact_wor_tails_from_counts(wins, losses, np.full(n_sims, limit_tasks), population_size, np.full(n_sims, threshold))
        decided = np.asarray(np.where(above, p_promote, p_reject) <= a, dtype=bool)
        return _summary(np.full(n_sims, float(remaining)), decided, n_sims, seed)
    decided = np.zeros(n_sims, dtype=bool)
    s = 0
    for future in blocks:
        for row in future:
            full = np.r_[d, row]
            if method == "none":
                decided[s] = True
            else:
                tails = tail_probabilities(
                    full, threshold, method=method, n_resamples=policy.bootstrap_resamples, rng=np.random.default_rng(seed + s),
                    population_size=population_size,
                )
                tested_above = float(full.mean()) > threshold
                decided[s] = (tails.r_promote if tested_above else tails.r_reject) <= a
            s += 1
    return _summary(np.full(n_sims, float(remaining)), decided, n_sims, seed)
