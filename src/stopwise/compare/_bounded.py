r"""Predicted outcomes taken as outcomes, the margin widened by the certified wrong-halt rate (``predicted = "bounded"``).

Valid only on the halting model's calibration distribution: read this before choosing it.

A halting model trained with ``stopwise early train --max-halt-error eps`` carries a Learn-then-Test certificate:
on runs drawn like its calibration runs, its wrong-halt rate is at most eps with confidence 1 - d (the certificate's
own level; :mod:`stopwise.early._risk`). ``[decision] predicted = "bounded"`` takes that certificate at its word
(``[early] halt_error_bound = eps``, written into the policy before the run) and needs no audit.

The argument
------------
With every halted run's prediction f taken as its outcome, the task's recorded difference P_i and its true
difference D_i differ only through the wrong predictions: D_i >= P_i - e_i, e_i the weight of the task's wrong
predictions that favour the tested system (its run predicted 1, the baseline's predicted 0; a run weighs 1 / its
system's attempts on the task), and D_i <= P_i + e'_i with the other wrong predictions. If each system's wrong halts
number at most eps times its halted runs, and so at most eps N over the N planned tasks, then
sum_i (e_i + e'_i) <= 2 eps N, and

    mean(D) >= mean(P) - 2 eps,      mean(D) <= mean(P) + 2 eps.

So "mean(P) > delta + 2 eps" implies "mean(D) > delta", and "mean(P) < delta - 2 eps" implies "mean(D) < delta":
the betting-wor boundary (Waudby-Smith & Ramdas 2020) on the recorded differences P at the threshold delta + 2 eps
(promote) and delta - 2 eps (reject) errs with probability at most a + d *when the certificate holds for these runs*.
The margin 2 eps is the worst case of either system's halting every run (:func:`bounded_margin`); it is fixed
before the data. It assumes each system runs the same number of attempts on every task (one, typically): a wrong
run weighs 1 / its task's attempts, so wrong runs gathered on tasks with fewer attempts than the mean could move
the mean by more than eps per system.

What it does not cover
----------------------
The certificate is about runs like the calibration runs. A new agent, a new task set or a prompt change can make the
halting model wrong more often, and nothing here checks it: with 30 % of the tested system's halts wrong in its
favour the bounded decision promotes a system that is no better (``tests/compare/test_bounded.py`` shows it), which
``prediction-powered`` and ``prediction-powered-tuned`` do not, at the price of audits. The record therefore carries
the treatment, eps and the margin in its predicted-rows note, a ``bounded-treatment`` warning, and its claim says
the assumption.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from stopwise.compare._betting import BettingBoundary
from stopwise.compare._pairing import PairedOutcomes, _rows_on_tasks
from stopwise.compare._predicted import PoweredPairs, _row_kinds, powered_boundary, powered_interval
from stopwise.errors import ComparisonError
from stopwise.records import DifferenceInterval, OutcomeColumns, Policy

__all__ = ["bounded_boundary", "bounded_interval", "bounded_margin", "bounded_note", "bounded_pairs", "bounded_warning"]


def bounded_margin(epsilon: float) -> float:
    """2 eps: the most the certified wrong-halt rate eps can move the mean difference (module docstring).

    Examples
    --------
    >>> from stopwise.compare._bounded import bounded_margin
    >>> bounded_margin(0.05)
    0.1
    """
    if not 0.0 < epsilon < 0.5:
        raise ComparisonError(
            f'[decision] predicted = "bounded" needs [early] halt_error_bound, the halting model\'s certified wrong-halt rate, '
            f"in (0, 0.5); got {epsilon:g}"
        )
    return 2.0 * float(epsilon)


def bounded_pairs(
    rows: OutcomeColumns, policy: Policy, pair: Callable[[OutcomeColumns], PairedOutcomes]
) -> PoweredPairs:
    """The recorded differences P_i (every prediction taken as its outcome; audited rows at their true outcome).

    ``low = high = P``: the betting process centres on the recorded past sum, as on true outcomes; the margin
    carries the wrong predictions. ``pair`` pairs outcome rows as the decision does (statuses including ``predicted``).
    """
    bounded_margin(policy.early.halt_error_bound)
    kinds = _row_kinds(rows)
    paired = pair(rows)
    used = int(((kinds.predicted | kinds.corrected) & _rows_on_tasks(rows, paired.tasks)).sum())
    d = paired.differences
    return PoweredPairs(paired=paired, low=d, high=d, scale=1.0, used=used, audit=None)


def bounded_boundary(
    values: np.ndarray, threshold: float, epsilon: float, *, population_size: int, alpha: float
) -> BettingBoundary:
    """The betting-wor boundary on the recorded differences, promote at delta + 2 eps and reject at delta - 2 eps.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._bounded import bounded_boundary
    >>> d = np.r_[np.ones(30), np.zeros(20)]
    >>> b = bounded_boundary(d, 0.0, 0.05, population_size=300, alpha=0.05)
    >>> b.promote, b.reject, b.threshold
    (True, False, 0.0)
    """
    x = np.asarray(values, dtype=float).ravel()
    margin = bounded_margin(epsilon)
    n_pop, level = int(population_size), float(alpha)
    up = powered_boundary(x, x, x, float(threshold) + margin, population_size=n_pop, alpha=level, scale=1.0)
    down = powered_boundary(x, x, x, float(threshold) - margin, population_size=n_pop, alpha=level, scale=1.0)
    method = (
        f"betting-wor (mixture, predictions as outcomes, bounded: promote at delta + {margin:g}, reject at delta - {margin:g}, "
        f"2 x the certified wrong-halt rate {epsilon:g}; valid only on the halting model's calibration distribution)"
    )
    return BettingBoundary(
        up.p_promote, down.p_reject, up.promote, down.reject, up.n, up.population_size, float(threshold), float(alpha),
        up.lower, down.upper, up.logical_lower, down.logical_upper, up.log_capital_promote, down.log_capital_reject, method,
    )  # fmt: skip


def bounded_interval(values: np.ndarray, epsilon: float, *, population_size: int, alpha: float) -> DifferenceInterval:
    """The confidence sequence of the recorded mean difference, widened by 2 eps at each end (clipped to [-1, 1]).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._bounded import bounded_interval
    >>> d = np.random.default_rng(1).permutation(np.r_[np.ones(30), np.zeros(60), -np.ones(10)])
    >>> ci = bounded_interval(d, 0.05, population_size=500, alpha=0.05)
    >>> ci.kind, -1.0 < ci.low < 0.2 < ci.high < 1.0
    ('anytime-valid', True)
    """
    x = np.asarray(values, dtype=float).ravel()
    margin = bounded_margin(epsilon)
    ci = powered_interval(x, x, x, population_size=int(population_size), alpha=float(alpha), scale=1.0)
    return ci.model_copy(
        update={
            "low": max(-1.0, ci.low - margin),
            "high": min(1.0, ci.high + margin),
            "method": f"{ci.method}, widened by {margin:g} at each end (bounded: 2 x the certified wrong-halt rate {epsilon:g})",
        }
    )


def bounded_note(epsilon: float) -> str:
    """The record's sentence on the bounded treatment."""
    margin = bounded_margin(epsilon)
    return (
        f"predicted outcomes taken as outcomes, the margin widened by {margin:g} (2 x the halting model's certified wrong-halt "
        f"rate {epsilon:g}): valid only if that certificate holds on these runs, i.e. only on the halting model's calibration "
        "distribution; no audit checks it"
    )


def bounded_warning(epsilon: float) -> str:
    """The record's (and the console's) warning under ``predicted = "bounded"``."""
    return (
        f'predicted = "bounded": the decision assumes the halting model\'s wrong-halt rate is at most {epsilon:g} on these runs '
        f"(its certificate holds only on its calibration distribution; a new agent or task set can break it, and then this "
        'decision can be wrong at any rate); use predicted = "prediction-powered-tuned" with audits for a guarantee that '
        "does not rest on the halting model"
    )
