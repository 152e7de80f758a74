"""The halting rule: dual thresholds on the calibrated success and failure probabilities.

At each step ``k`` (from ``min_halt_step`` up to, but not including, the run's last step) the run halts
when ``p_success ≥ s`` or ``p_failure ≥ f``; the earlier crossing wins. When both cross on the same step
the larger margin over its own threshold wins (``p − threshold``); an exact tie predicts failure, the
more conservative call. A head whose threshold is ``None`` never fires (success-only and failure-only
modes).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from stopwise.errors import ArgumentError

__all__ = ["MODES", "Verdict", "first_crossing", "halt_decision", "halt_points", "halt_reason", "mode_thresholds"]

MODES: tuple[str, ...] = ("success-only", "failure-only", "dual")
"""The threshold modes of the paper's Table III."""


@dataclass(frozen=True)
class Verdict:
    """The monitor's answer after one step.

    Attributes
    ----------
    step : int
        Number of steps observed (k).
    action : {"continue", "halt"}
        Whether the run may stop now.
    predicted : int or None
        The predicted final outcome (1 success, 0 failure) when halting, else ``None``.
    head : {"success", "failure"} or None
        The head whose threshold was crossed.
    p_success, p_failure : float
        Calibrated probabilities of the two heads at this step.
    reason : str
        Why: which head halted at what probability against which threshold, or what held the run (the
        unfamiliar-run guard), or ``""`` for a plain continue.
    held : bool
        Whether a head crossed its threshold but the guard refused to halt (the action is then ``continue``).
    """

    step: int
    action: Literal["continue", "halt"]
    predicted: int | None
    head: Literal["success", "failure"] | None
    p_success: float
    p_failure: float
    reason: str = ""
    held: bool = False

    @property
    def halted(self) -> bool:
        """Whether this verdict halts the run."""
        return self.action == "halt"

    @property
    def hold(self) -> str:
        """What held the run (the guard's or the unvalidated threshold's reason, the same at every step it holds); ``""`` when not held."""
        if not self.held:
            return ""
        return self.reason.removeprefix("held: ").rsplit("; the ", 1)[0]

    @property
    def would_have(self) -> str:
        """Of a held verdict, the halt it held (``"failure head: p_failure 0.87 ≥ 0.60 would have halted it"``); else ``""``."""
        if not self.held or "; the " not in self.reason:
            return ""
        return self.reason.rsplit("; the ", 1)[1]

    def as_dict(self) -> dict[str, Any]:
        """The verdict as a plain mapping."""
        return asdict(self)

    def outcome_row(self, *, system: str, task: str, attempt: int = 0, group: str = "", source: str = "stopwise.early") -> dict[str, Any]:
        """An outcome-ledger row for a halted run (``status = "predicted"``).

        Examples
        --------
        >>> v = Verdict(7, "halt", 0, "failure", 0.02, 0.97)
        >>> v.outcome_row(system="agent", task="t1")["status"]
        'predicted'
        """
        if not self.halted:
            raise ArgumentError("only a halt verdict predicts an outcome; a continuing run has no outcome row yet")
        return {
            "system": system,
            "task": task,
            "outcome": float(self.predicted) if self.predicted is not None else None,
            "group": group,
            "attempt": attempt,
            "status": "predicted",
            "source": f"{source}@step{self.step}:{self.head}",
        }


def halt_decision(p_success: float, p_failure: float, success_threshold: float | None, failure_threshold: float | None) -> tuple[int | None, str | None]:
    """Apply the rule to one step: ``(predicted, head)`` or ``(None, None)`` to continue.

    Examples
    --------
    >>> halt_decision(0.97, 0.10, 0.95, 0.95)
    (1, 'success')
    >>> halt_decision(0.50, 0.50, 0.95, 0.95)
    (None, None)
    >>> halt_decision(0.96, 0.99, 0.95, 0.95)
    (0, 'failure')
    """
    s_margin = p_success - success_threshold if success_threshold is not None else -np.inf
    f_margin = p_failure - failure_threshold if failure_threshold is not None else -np.inf
    s_fires = s_margin >= 0
    f_fires = f_margin >= 0
    if s_fires and (not f_fires or s_margin > f_margin):
        return 1, "success"
    if f_fires:
        return 0, "failure"
    return None, None


def first_crossing(
    p_success: Any,
    p_failure: Any,
    success_threshold: float | None,
    failure_threshold: float | None,
    *,
    min_halt_step: int = 1,
    familiar: Any = None,
) -> Verdict | None:
    """Replay the rule over one trajectory's prefix probabilities (rows k = 0..T).

    Returns the halting :class:`Verdict`, or ``None`` when the run is never halted before its last step.
    ``familiar`` (one flag per row) marks the prefixes the guard lets halt; by default all.

    Examples
    --------
    >>> first_crossing([0.2, 0.3, 0.96, 0.99], [0.1, 0.2, 0.0, 0.0], 0.95, 0.95).reason
    'success head: p_success 0.960 ≥ 0.950'
    >>> first_crossing([0.2, 0.3, 0.96, 0.99], [0.1, 0.2, 0.0, 0.0], 0.95, 0.95, familiar=[1, 1, 0, 1]) is None
    True
    >>> first_crossing([0.2, 0.3, 0.5, 0.99], [0.1, 0.2, 0.0, 0.0], 0.95, 0.95) is None
    True
    """
    ps = np.asarray(p_success, dtype=np.float64)
    pf = np.asarray(p_failure, dtype=np.float64)
    ok = np.ones(ps.shape[0], dtype=bool) if familiar is None else np.asarray(familiar, dtype=bool)
    T = ps.shape[0] - 1
    for k in range(max(min_halt_step, 0), T):
        if not ok[k]:
            continue
        predicted, head = halt_decision(float(ps[k]), float(pf[k]), success_threshold, failure_threshold)
        if predicted is not None:
            reason = halt_reason(head, float(ps[k]), float(pf[k]), success_threshold, failure_threshold)
            return Verdict(k, "halt", predicted, head, float(ps[k]), float(pf[k]), reason)  # type: ignore[arg-type]
    return None


def halt_reason(head: str | None, p_success: float, p_failure: float, success_threshold: float | None, failure_threshold: float | None) -> str:
    """The sentence a verdict gives for a head crossing its threshold.

    Examples
    --------
    >>> halt_reason("failure", 0.1, 0.97, None, 0.9)
    'failure head: p_failure 0.970 ≥ 0.900'
    """
    if head == "success":
        return f"success head: p_success {p_success:.3f} ≥ {success_threshold:.3f}"
    return f"failure head: p_failure {p_failure:.3f} ≥ {failure_threshold:.3f}"


def halt_points(
    run: np.ndarray,
    k: np.ndarray,
    n_steps: np.ndarray,
    p_success: np.ndarray,
    p_failure: np.ndarray,
    success_threshold: float | None,
    failure_threshold: float | None,
    *,
    min_halt_step: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised :func:`first_crossing` over many runs' prefix rows.

    Parameters
    ----------
    run : numpy.ndarray of int
        Run id of each row (ids ``0..n_runs-1``).
    k, n_steps : numpy.ndarray of int
        The row's prefix length and its run's total steps.
    p_success, p_failure : numpy.ndarray
        Calibrated probabilities of the row.
    success_threshold, failure_threshold : float or None
        Thresholds; ``None`` disables a head.
    min_halt_step : int
        Earliest step at which a run may halt.

    Returns
    -------
    halt_step : numpy.ndarray of float
        Per run id, the step at which it halts, NaN if never.
    predicted : numpy.ndarray of float
        Per run id, the predicted outcome (1/0), NaN if never halted.
    success_head : numpy.ndarray of bool
        Per run id, whether the success head fired.
    """
    s_margin = p_success - success_threshold if success_threshold is not None else np.full(p_success.shape, -np.inf)
    f_margin = p_failure - failure_threshold if failure_threshold is not None else np.full(p_failure.shape, -np.inf)
    s_fires = s_margin >= 0
    f_fires = f_margin >= 0
    eligible = (k >= min_halt_step) & (k < n_steps) & (s_fires | f_fires)
    n_runs = int(run.max()) + 1 if run.shape[0] else 0
    halt_step = np.full(n_runs, np.nan)
    predicted = np.full(n_runs, np.nan)
    success_head = np.zeros(n_runs, dtype=bool)
    rows = np.flatnonzero(eligible)
    if rows.shape[0] == 0:
        return halt_step, predicted, success_head
    order = rows[np.lexsort((k[rows], run[rows]))]
    first = order[np.r_[True, run[order][1:] != run[order][:-1]]]
    success = s_fires[first] & (~f_fires[first] | (s_margin[first] > f_margin[first]))
    halt_step[run[first]] = k[first]
    predicted[run[first]] = success.astype(float)
    success_head[run[first]] = success
    return halt_step, predicted, success_head


def mode_thresholds(mode: str, threshold: float) -> tuple[float | None, float | None]:
    """The (success, failure) thresholds of a Table III mode.

    Examples
    --------
    >>> mode_thresholds("failure-only", 0.9)
    (None, 0.9)
    """
    if mode == "success-only":
        return threshold, None
    if mode == "failure-only":
        return None, threshold
    if mode == "dual":
        return threshold, threshold
    raise ArgumentError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
