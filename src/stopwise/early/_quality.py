"""Validation figures a trained model reports about itself, and the warnings it raises when a head is weak."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import beta

from stopwise.early._metrics import early_metrics
from stopwise.early._risk import fixed_sequence, min_halts
from stopwise.records import Trajectory

__all__ = [
    "MIN_PRECISION",
    "MIN_RELIABLE_HALTS",
    "clopper_pearson",
    "precision_lower_bound",
    "quality_figures",
    "refuted",
    "reliability",
    "unvalidated",
    "validated_floor",
]

MIN_PRECISION = 0.9
"""A head whose precision on the reference runs falls below this is flagged unreliable."""
MIN_RELIABLE_HALTS = 10
"""Fewer halted reference runs than this: the head's precision is flagged as unknown."""


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper–Pearson) two-sided interval of a binomial proportion; ``(nan, nan)`` for ``n = 0``.

    Examples
    --------
    >>> [round(v, 3) for v in clopper_pearson(101, 105)]
    [0.905, 0.99]
    """
    if n == 0:
        return float("nan"), float("nan")
    a = (1 - level) / 2
    low = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return low, high


def precision_lower_bound(right: int, n: int, confidence: float) -> float:
    """One-sided lower Clopper–Pearson bound of a proportion at ``confidence`` (0 for ``n = 0`` or ``right = 0``).

    ``precision_lower_bound(k, n, c) ≥ q`` exactly when the binomial test rejects ``precision < q`` at
    level ``1 − c``, i.e. ``P(Binomial(n, 1 − q) ≤ n − k) ≤ 1 − c``.

    Examples
    --------
    >>> round(precision_lower_bound(22, 22, 0.9), 4)  # 0.1 ** (1 / 22)
    0.9006
    """
    if n == 0 or right == 0:
        return 0.0
    return 1.0 if right == n and confidence <= 0 else float(beta.ppf(1 - confidence, right, n - right + 1))


def _nan_none(value: float) -> float | None:
    return None if value != value else float(value)


def quality_figures(
    runs: Sequence[Trajectory],
    proba: Sequence[np.ndarray],
    thresholds: Mapping[str, float | None],
    *,
    min_halt_step: int = 1,
    reference: str = "validation runs",
    risk_control: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Precision of halted runs per head, steps saved and |ΔPass@1| on reference runs, with warnings.

    Parameters
    ----------
    runs : sequence of Trajectory
        Reference runs with outcomes.
    proba : sequence of numpy.ndarray
        Their ``(p_success, p_failure)`` prefix probabilities.
    thresholds : mapping
        ``{"success": s, "failure": f}`` (``None``: head off).
    min_halt_step : int
        Earliest step at which a run may halt.
    reference : str
        What the runs are (``"calibration runs"`` or ``"validation runs"``), for messages.
    risk_control : mapping, optional
        Per head, the Learn-then-Test result as a mapping (its ``reason`` is quoted when the head never halts).

    Returns
    -------
    dict
        ``reference``, ``n_runs``, ``heads`` (per head: ``threshold``, ``halted``, ``precision``,
        ``precision_ci`` (exact 95 %), ``delta_steps``), ``both`` (``coverage``, ``accuracy``,
        ``delta_steps``, ``delta_abs_pass1``), ``warnings`` (list of sentences).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.records import Step, Trajectory
    >>> runs = [Trajectory(agent="a", task=f"t{i}", outcome=i % 2, steps=[Step(action="x")] * 3) for i in range(4)]
    >>> proba = [np.array([[0.5, 0.5], [0.5, 0.99], [0.5, 0.5], [0.5, 0.5]])] * 4
    >>> q = quality_figures(runs, proba, {"success": None, "failure": 0.9})
    >>> q["heads"]["failure"]["halted"], q["heads"]["failure"]["precision"], q["both"]["delta_steps"]
    (4, 0.5, -0.6666666666666667)
    >>> q["warnings"][0]
    'failure head: only 4 of the 4 validation runs halted; its precision cannot be judged (fewer than 10)'
    """
    n = len(runs)
    frame = pd.DataFrame(
        {
            "run": np.arange(n), "agent": [r.agent for r in runs], "outcome": [int(r.outcome or 0) for r in runs],
            "n_steps": [len(r.steps) for r in runs], "total_in": 0.0, "total_out": 0.0,
        }
    )
    lengths = [p.shape[0] for p in proba]
    rows = np.vstack(proba) if proba else np.zeros((0, 2))
    predictions = pd.DataFrame(
        {
            "run": np.repeat(np.arange(n), lengths), "k": np.concatenate([np.arange(m) for m in lengths]) if lengths else [],
            "p_success": rows[:, 0], "p_failure": rows[:, 1], "cum_in": 0.0, "cum_out": 0.0,
        }
    )
    out: dict[str, Any] = {"reference": reference, "n_runs": n, "heads": {}, "both": {}, "warnings": []}
    warnings: list[str] = out["warnings"]
    outcome = frame["outcome"].to_numpy()
    for head in ("success", "failure"):
        t = thresholds.get(head)
        rc = (risk_control or {}).get(head)
        if t is None:
            out["heads"][head] = {"threshold": None, "halted": 0, "precision": None, "precision_ci": [None, None], "delta_steps": 0.0}
            if rc is not None:
                warnings.append(f"{head} head disabled: it {rc['reason']}")
            continue
        m = early_metrics(frame, predictions, t if head == "success" else None, t if head == "failure" else None, min_halt_step=min_halt_step)
        halted = m.halts["halt_step"].notna().to_numpy()
        right = int((outcome[halted] == (1 if head == "success" else 0)).sum())
        k = int(halted.sum())
        precision = right / k if k else float("nan")
        low, high = clopper_pearson(right, k)
        out["heads"][head] = {
            "threshold": float(t), "halted": k, "precision": _nan_none(precision),
            "precision_ci": [_nan_none(low), _nan_none(high)], "delta_steps": _nan_none(m.delta_steps),
        }
        if k < MIN_RELIABLE_HALTS:
            warnings.append(
                f"{head} head: only {k} of the {n} {reference} halted; its precision cannot be judged (fewer than {MIN_RELIABLE_HALTS})"
            )
        elif precision < MIN_PRECISION:
            warnings.append(
                f"{head} head unreliable: right on {100 * precision:.1f}% of the {k} {reference} it halts "
                f"(95% CI {100 * low:.1f}–{100 * high:.1f}%; below {100 * MIN_PRECISION:.0f}%); consider turning it off"
            )
    both = early_metrics(frame, predictions, thresholds.get("success"), thresholds.get("failure"), min_halt_step=min_halt_step)
    out["both"] = {
        "coverage": _nan_none(both.coverage), "accuracy": _nan_none(both.accuracy),
        "delta_steps": _nan_none(both.delta_steps), "delta_abs_pass1": _nan_none(both.delta_abs_pass1),
    }
    return out



def reliability(scores: np.ndarray, outcome: np.ndarray, grid: Sequence[float]) -> dict[str, list[list[float]]]:
    """Per head and grid threshold (high to low), ``[threshold, halted runs, precision]`` on reference runs.

    Parameters
    ----------
    scores : numpy.ndarray of shape (n_runs, 2)
        Halting scores (:func:`~stopwise.early._risk.halting_scores`) of the reference runs.
    outcome : numpy.ndarray
        Their final outcomes.
    grid : sequence of float
        Thresholds.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.column_stack([np.zeros(40), np.r_[np.full(20, 0.95), np.full(20, 0.75)]])
    >>> outcome = np.r_[np.zeros(20), np.ones(20)]  # the failure head is right above 0.8, wrong below
    >>> reliability(scores, outcome, [0.9, 0.7])["failure"]
    [[0.9, 20.0, 1.0], [0.7, 40.0, 0.5]]
    """
    candidates = np.sort(np.unique(np.asarray(grid, dtype=np.float64)))[::-1]
    out: dict[str, list[list[float]]] = {}
    for j, head in enumerate(("success", "failure")):
        right = outcome == (1 if head == "success" else 0)
        halted = scores[None, :, j] >= candidates[:, None]
        n = halted.sum(axis=1)
        precision = (halted & right[None, :]).sum(axis=1) / np.maximum(n, 1)
        out[head] = [[float(t), float(k), float(p)] for t, k, p in zip(candidates, n, precision, strict=True)]
    return out


def refuted(table: Sequence[Sequence[float]], threshold: float) -> tuple[float, int, float] | None:
    """The reference evidence against halting at ``threshold``, or ``None``.

    ``(grid threshold, halted, precision)`` when the grid threshold at or just below it halts at least
    :data:`MIN_RELIABLE_HALTS` reference runs at a precision below :data:`MIN_PRECISION`; ``None``
    otherwise (including too few halts to judge).

    Examples
    --------
    >>> refuted([[0.9, 20.0, 1.0], [0.7, 40.0, 0.5]], 0.75)
    (0.7, 40, 0.5)
    >>> refuted([[0.9, 20.0, 1.0], [0.7, 40.0, 0.5]], 0.9) is None
    True
    """
    below = [row for row in table if row[0] <= threshold + 1e-12]
    if not below:
        return None
    t, n, p = max(below, key=lambda row: row[0])
    return (t, int(n), p) if n >= MIN_RELIABLE_HALTS and p < MIN_PRECISION else None


def validated_floor(table: Sequence[Sequence[float]], *, confidence: float) -> tuple[float | None, str]:
    """The lowest threshold down to which the reference runs *show* a head's precision ≥ :data:`MIN_PRECISION`.

    The reliability ``table`` (:func:`reliability`: ``[threshold, halted, precision]``, thresholds high to low)
    is tested by Learn-then-Test's fixed sequence (:func:`~stopwise.early._risk.fixed_sequence`) with risk
    ``1 − precision`` and ``ε = 1 − MIN_PRECISION``: starting at the highest threshold that halts
    :func:`~stopwise.early._risk.min_halts` reference runs (22 at confidence 0.9: fewer cannot show 90 % even
    when all are right), each threshold is validated while the one-sided lower Clopper–Pearson bound of its
    precision at ``confidence`` is ≥ 90 %, and the sequence stops at the first that is not. With probability
    ≥ ``confidence`` every validated threshold's precision on runs like the reference runs is ≥ 90 %.
    Thresholds above the start halt a subset of its runs and count as validated with it.

    Returns
    -------
    (float or None, str)
        The floor (``None``: no threshold is validated) and one sentence of evidence at the first threshold
        that failed (or why none was tested).

    Examples
    --------
    >>> table = [[0.95, 10.0, 1.0], [0.9, 30.0, 1.0], [0.8, 80.0, 0.975], [0.7, 90.0, 0.8]]
    >>> validated_floor(table, confidence=0.9)
    (0.8, 'at 0.70 it is right on 72 of the 90 runs it halts (one-sided 90% lower bound 74% < 90%)')
    >>> validated_floor(table[:1], confidence=0.9)
    (None, 'it halts at most 10 of them, and showing 90% precision at confidence 0.9 needs at least 22')
    """
    rows = np.asarray(table, dtype=np.float64).reshape(-1, 3)
    rows = rows[np.argsort(-rows[:, 0], kind="stable")]
    n = rows[:, 1].astype(np.int64)
    wrong = np.rint(rows[:, 1] * (1 - rows[:, 2])).astype(np.int64)
    epsilon = 1 - MIN_PRECISION
    need = min_halts(epsilon, 1 - confidence)
    enough = np.flatnonzero(n >= need)
    if enough.shape[0] == 0:
        most = int(n.max()) if n.shape[0] else 0
        return None, f"it halts at most {most} of them, and showing {100 * MIN_PRECISION:.0f}% precision at confidence {confidence:g} needs at least {need}"
    first = int(enough[0])
    rejected = fixed_sequence(n, wrong, n, epsilon=epsilon, delta=1 - confidence, first=first)
    stop = first + int(rejected[first:].sum())
    evidence = ""
    if stop < n.shape[0]:
        right = int(n[stop] - wrong[stop])
        low = precision_lower_bound(right, int(n[stop]), confidence)
        evidence = (
            f"at {rows[stop, 0]:.2f} it is right on {right} of the {int(n[stop])} runs it halts "
            f"(one-sided {100 * confidence:g}% lower bound {100 * low:.0f}% < {100 * MIN_PRECISION:.0f}%)"
        )
    return (float(rows[stop - 1, 0]) if stop > first else None), evidence


def unvalidated(table: Sequence[Sequence[float]], threshold: float, *, confidence: float) -> str | None:
    """Why halting at ``threshold`` is not validated by the reference runs (see :func:`validated_floor`), or ``None``.

    Examples
    --------
    >>> table = [[0.95, 10.0, 1.0], [0.9, 30.0, 1.0], [0.8, 80.0, 0.975], [0.7, 90.0, 0.8]]
    >>> unvalidated(table, 0.85, confidence=0.9) is None
    True
    >>> unvalidated(table, 0.75, confidence=0.9)
    'only down to 0.80; at 0.70 it is right on 72 of the 90 runs it halts (one-sided 90% lower bound 74% < 90%)'
    """
    floor, evidence = validated_floor(table, confidence=confidence)
    if floor is None:
        return f"at no threshold: {evidence}"
    if threshold >= floor - 1e-9:
        return None
    return f"only down to {floor:.2f}; {evidence}"
