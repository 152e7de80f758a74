"""The joint replay's ``joined tuned`` mode: the power-tuned boundary with active audits (issue 34).

The same runs, halts and seeded audit uniforms as the other modes; a run the monitor would halt is audited when its
uniform is below pi, the probability the active rule (:class:`stopwise.compare.ActiveAudits`, mean rho when half the
halts favour the tested system) gives its prediction and the halting model's confidence: the crossing head's
probability at the halt, recorded by :func:`stopwise.replay.joint_halts` (``halt_probability``; a table without it
takes every halt at the rule's reference confidence, 0.95). The run then counts with ``yhat + (audited / pi) (y - yhat)`` and the tasks are judged by
the tuned boundary (:func:`stopwise.compare._tuned.tuned_paths`, the decision of ``[decision] predicted =
"prediction-powered-tuned"``, ``[early] audit_rule = "active"``), stopping at the first crossing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from stopwise.compare import ActiveAudits, TunedValues, tuned_paths

__all__ = ["halt_confidence", "tuned_mode"]


def halt_confidence(runs: Any, rule: ActiveAudits) -> np.ndarray:
    """Each run's confidence for the audit rule: its recorded head probability, else the rule's reference.

    The crossing head's probability at the halt (``halt_probability``, from :func:`stopwise.replay.joint_halts`),
    clipped to [1/2, 1]; the rule's reference (0.95) where the table has none.

    Examples
    --------
    >>> import pandas as pd
    >>> from stopwise.compare import ActiveAudits
    >>> from stopwise.replay._joint_tuned import halt_confidence
    >>> halt_confidence(pd.DataFrame({"halt_probability": [0.99, None]}), ActiveAudits(0.3)).tolist()
    [0.99, 0.95]
    >>> halt_confidence(pd.DataFrame({"outcome": [1]}), ActiveAudits(0.3)).tolist()
    [0.95]
    """
    if "halt_probability" not in runs.columns:
        return np.full(len(runs), rule.reference)
    p = runs["halt_probability"].to_numpy(dtype=float)
    return np.where(np.isnan(p), rule.reference, np.clip(p, 0.5, 1.0))


def tuned_mode(
    pair: Any,
    orders: np.ndarray,
    draws: np.ndarray,
    rho: float,
    delta: float,
    alpha: float,
    ordered: Callable[[np.ndarray], np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(promote crossings, reject crossings, (K, R) halted-now mask, mean pi of the would-halt runs) of the tuned mode.

    ``pair`` is the replay's pair (runs, per-task sums), ``draws`` the (K, R) audit uniforms (inf for runs no head
    would halt), ``ordered`` maps (K, T) or (T,) per-task values to look order.
    """
    runs = pair.runs
    rule = ActiveAudits(rho) if rho < 1.0 else ActiveAudits(1.0, favour=1.0, slope=0.0)  # rho = 1: audit everything
    y = runs["outcome"].to_numpy(dtype=float)
    would = runs["halt_step"].notna().to_numpy()
    yhat = np.where(would, runs["predicted"].to_numpy(dtype=float), y)
    tested = (runs["agent"] == pair.tested).to_numpy()
    favours = np.where(tested, yhat == 1.0, yhat == 0.0)
    pi = np.where(would, rule.probability(favours, halt_confidence(runs, rule)), 1.0)
    audited = would[None, :] & (draws < pi[None, :])
    halted_now = would[None, :] & ~audited
    value = np.where(would[None, :], yhat[None, :] + audited / pi[None, :] * (y - yhat)[None, :], y[None, :])
    size = np.abs(pair.weight)
    wrong = would & (yhat != y)
    sub_low = wrong[None, :] & favours[None, :] & (draws < rule.least(True))
    sub_high = wrong[None, :] & ~favours[None, :] & (draws < rule.least(False))
    values = TunedValues(
        x=ordered(pair.per_task(value, pair.weight)),
        low=ordered(pair.per_task(np.where(halted_now, np.where(tested, 0.0, 1.0), y[None, :]), pair.weight)),
        high=ordered(pair.per_task(np.where(halted_now, np.where(tested, 1.0, 0.0), y[None, :]), pair.weight)),
        point=ordered(pair.per_task(np.where(halted_now, yhat[None, :], y[None, :]), pair.weight)),
        wrong_low=ordered(pair.per_task(sub_low, size)), wrong_high=ordered(pair.per_task(sub_high, size)),
        weight=np.ones(orders.shape), probability=np.full((*orders.shape, 2), np.nan),
    )  # fmt: skip
    paths = tuned_paths(values, delta, population_size=orders.shape[1], alpha=alpha, rule=rule)
    promote, reject = paths.crossed(alpha)
    return promote, reject, halted_now, float(pi[would].mean()) if would.any() else float("nan")
