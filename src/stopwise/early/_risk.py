"""Risk-controlled halting thresholds by Learn-then-Test (fixed-sequence testing, exact binomial p-values).

Reference: A. N. Angelopoulos, S. Bates, E. J. Candès, M. I. Jordan, L. Lei (2021), "Learn then Test:
Calibrating predictive algorithms to achieve risk control", arXiv:2110.01052 — §2 (the framework: one null
hypothesis ``H_λ : R(λ) > ε`` per candidate threshold, a p-value per hypothesis, a family-wise-error
controlling procedure), §3.1 (the exact binomial p-value for losses in {0, 1}) and §4 (fixed-sequence
testing along an ordering fixed in advance).

The unit of risk
----------------
Each calibration run ``i`` has, per head, a *halting score* ``m_i``: the largest calibrated probability the
head gives over the prefixes at which the run may halt (``min_halt_step ≤ k < T``). The head alone halts the
run at threshold ``λ`` iff ``m_i ≥ λ``, and the halt is *wrong* iff the run's final outcome is the opposite
of the head's prediction. Lowering ``λ`` can only halt more runs (the same runs halt earlier with the same
prediction), so the wrong halts grow monotonically as ``λ`` falls.

Two risks are supported (``unit``):

``"halted"`` (default) — the *wrong-halt rate among halted runs*, ``R(λ) = P(wrong | halted at λ)``, i.e.
    one minus the head's precision. Conditional on the number ``N_λ`` of calibration runs the head halts,
    those runs are i.i.d. draws from the halted population, so the count of wrong halts is
    ``Binomial(N_λ, R(λ))`` and ``p_λ = P(Binomial(N_λ, ε) ≤ wrong_λ)`` is a valid p-value for
    ``H_λ : R(λ) > ε`` (valid conditionally on ``N_λ``, hence marginally). With ``N_λ = 0`` nothing can be
    claimed and ``p_λ = 1``. This risk need not be monotone in ``λ``; fixed-sequence testing does not need it.
``"runs"`` — the *share of all runs that are halted wrongly*, ``R(λ) = P(halted at λ and wrong)``; monotone
    in ``λ``, with ``p_λ = P(Binomial(n, ε) ≤ wrong_λ)`` over all ``n`` calibration runs.

The procedure
-------------
Candidate thresholds are tested from high to low (``grid``), rejecting ``H_λ`` while ``p_λ ≤ δ`` and
stopping at the first one not rejected; the chosen threshold is the lowest rejected one. Fixed-sequence
testing controls the family-wise error at ``δ`` whatever the dependence between the p-values (LTT,
Proposition 4), so ``P(R(λ̂) > ε) ≤ δ``: with probability at least ``1 − δ`` over the calibration runs the
chosen threshold's risk is at most ``ε``. When not even the first threshold is rejected the head never
halts and the result says so (``threshold`` is ``None``).

For the ``"halted"`` risk the highest thresholds often halt no calibration run, which would stop the sequence
at once. The sequence therefore *starts* at ``start`` (the highest threshold worth testing), which the model
chooses from data independent of the calibration runs (its validation split): fixing the start from other
data keeps the ordering fixed in advance, as the guarantee requires.

Cross-fitted calibration
------------------------
Holding calibration tasks out costs the heads their training runs and leaves few calibration runs (~140 of
MCPMark's ~560 per leave-one-agent-out fold, too few to show 5 % at confidence 0.9). With
``calibration_folds = K`` the model instead splits its training *tasks* into ``K`` folds (every run of a task
in one fold), fits the heads — with their own validation split, early stopping and Platt scaling — on ``K − 1``
folds, and scores the runs of the remaining fold with them; every training run then has an *out-of-fold*
halting score and is a calibration run, and Learn-then-Test runs on those scores. The deployed model is, by
default (``deployed_heads="fold-average"``), the **mean of those K fold heads' calibrated probabilities** —
no heads are refitted on all training runs; with ``deployed_heads="refit"`` it is heads refitted on all runs
(the fixed-threshold model's). The fold heads use the text blocks fitted on all training runs. This is
cross-fitting as in CV+ and cross-conformal prediction (Barber, Candès, Ramdas, Tibshirani 2021, "Predictive
inference with the jackknife+", §3; Vovk 2015, "Cross-conformal predictors"), and the guarantee is approximate
in the same ways, each documented rather than hidden:

1. The out-of-fold scores measure *each fold model on the tasks it did not see*; the thresholds are tested on
   them, but what halts a new run is the *average* of the K fold models' probabilities, which no calibration
   run was scored with. Averaging calibrated probabilities pulls them toward the middle (fewer runs reach a
   high threshold), and the average of models that each err at most ε at a threshold is not proven to err at
   most ε there; the simulation below finds it errs *less* often (it meets the bound more often than the fold
   models do). The refitted alternative is further from what was measured: it sees ``K / (K − 1)`` times as
   many tasks and has its own validation split and Platt fit, which nothing measures.
2. The out-of-fold losses of runs in different folds come from different models, and the fold models share
   training runs, so the wrong-halt counts are only approximately binomial (the pooled count estimates the
   fold models' average risk).
3. With every training run a calibration run there is no independent pilot to fix where the sequence starts;
   :func:`count_start` fixes it from the halting scores alone (the highest threshold halting
   :func:`min_halts` runs), never from the losses.
4. The text blocks (TF-IDF vocabularies and SVD bases, fitted without outcomes) are the deployed model's, so
   they have seen the out-of-fold runs' text; a new run's text is covered less well. Refitting them per fold
   would remove this at five times the training cost; the unfamiliar-run guard holds runs whose text coverage
   falls below what the validation runs showed.

``experiments/early_risk_simulation.py --cross-fit`` and ``tests/early/test_risk.py`` measure the combined effect:
a simulated learner with task effects, cross-fitted on 60 tasks, whose true risk at the chosen threshold is
computed on fresh tasks. At δ = 0.05 the bound holds in ≥ 95 % of 500 repetitions for the deployed fold average
(99.2 % among halted runs, 98.6 % among all runs) and for the fold models (95.2 %, 96.8 %), but *not* for a
single model refitted on all tasks (90.6 %, 86.8 %: its own validation split and Platt fit are never measured),
and Learn-then-Test on a model's own in-sample scores fails far more often. That is one simulated learner (ridge
logistic regression), not a proof for LightGBM heads: treat the guarantee for the deployed model as approximate;
the leave-one-agent-out figures in ``docs/early_results.md`` show how it fares on held-out agents.

The guarantee is for runs exchangeable with the calibration runs — new tasks of the same population. Runs
unlike the calibration runs are what the familiarity guard (:mod:`stopwise.early._guard`) holds back.
In dual mode each head is controlled separately; a run halted wrongly in dual mode is halted wrongly by that
head alone, so the share of all runs halted wrongly (``"runs"``) is at most ``ε_success + ε_failure``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import binom

from stopwise.errors import InputError

__all__ = [
    "GRID",
    "RISK_UNITS",
    "RiskControl",
    "binomial_pvalue",
    "count_start",
    "fixed_sequence",
    "halting_scores",
    "learn_then_test",
    "min_halts",
]

RiskUnit = Literal["halted", "runs"]
RISK_UNITS: tuple[str, ...] = ("halted", "runs")
"""What a wrong-halt rate is a share of: the runs a head halts, or all runs."""

GRID: tuple[float, ...] = tuple(round(0.99 - 0.01 * i, 2) for i in range(50))
"""Candidate thresholds, tested from high to low: 0.99, 0.98, …, 0.50."""


def binomial_pvalue(wrong: Any, n: Any, epsilon: float) -> np.ndarray:
    """Exact binomial p-value of ``H : risk > ε`` from ``wrong`` losses among ``n`` (LTT §3.1).

    ``P(Binomial(n, ε) ≤ wrong)``; 1 where ``n = 0``.

    Examples
    --------
    >>> float(binomial_pvalue(0, 45, 0.05))  # 0.95 ** 45
    0.0994...
    >>> float(binomial_pvalue(0, 0, 0.05))
    1.0
    """
    wrong = np.asarray(wrong, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    p = binom.cdf(wrong, np.maximum(n, 1), epsilon)
    return np.where(n > 0, p, 1.0)


def min_halts(epsilon: float, delta: float) -> int:
    """Fewest halted runs with which a wrong-halt rate ≤ ε can be shown at level δ (all of them right).

    Examples
    --------
    >>> min_halts(0.05, 0.1)
    45
    """
    return int(np.ceil(np.log(delta) / np.log1p(-epsilon)))


def halting_scores(proba: list[np.ndarray], *, min_halt_step: int = 1) -> np.ndarray:
    """Per run and head, the largest probability over the prefixes at which it may halt (``-inf`` if none).

    Parameters
    ----------
    proba : list of numpy.ndarray
        One ``(T + 1) × 2`` array of ``(p_success, p_failure)`` per run, rows k = 0..T.
    min_halt_step : int
        Earliest step at which a run may halt.

    Returns
    -------
    numpy.ndarray of shape (n_runs, 2)

    Examples
    --------
    >>> import numpy as np
    >>> halting_scores([np.array([[0.9, 0.1], [0.2, 0.7], [0.3, 0.8], [0.99, 0.0]])]).tolist()
    [[0.3, 0.8]]
    """
    out = np.full((len(proba), 2), -np.inf)
    if not proba:
        return out
    lengths = np.array([p.shape[0] for p in proba])
    rows = np.vstack(proba)
    run = np.repeat(np.arange(len(proba)), lengths)
    k = np.concatenate([np.arange(n) for n in lengths])
    eligible = (k >= min_halt_step) & (k < lengths[run] - 1)
    for j in range(2):
        np.maximum.at(out[:, j], run[eligible], rows[eligible, j])
    return out


@dataclass(frozen=True)
class RiskControl:
    """The threshold Learn-then-Test chose for one head, and the evidence behind it.

    Attributes
    ----------
    head : {"success", "failure"}
    epsilon : float
        The target wrong-halt rate ``ε``.
    delta : float
        The error level ``δ``: the guarantee holds with probability at least ``1 − δ``.
    unit : {"halted", "runs"}
        What the rate is a share of (see the module docstring).
    threshold : float or None
        The lowest threshold whose risk was shown ≤ ε; ``None``: no threshold qualifies, the head never halts.
    n_runs : int
        Calibration runs.
    n_halted, n_wrong : int
        Calibration runs the head halts at ``threshold``, and how many of them wrongly (0 when ``None``).
    rate : float
        ``n_wrong / n_halted`` (unit ``"halted"``) or ``n_wrong / n_runs`` (``"runs"``); NaN when nothing halts.
    p_value : float
        The p-value at ``threshold`` (at the first threshold tested when ``None``).
    start : float
        The first threshold tested.
    n_tested : int
        Thresholds tested before the sequence stopped.
    reason : str
        One sentence: what was chosen and why, or why the head never halts.
    """

    head: str
    epsilon: float
    delta: float
    unit: str
    threshold: float | None
    n_runs: int
    n_halted: int
    n_wrong: int
    rate: float
    p_value: float
    start: float
    n_tested: int
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready mapping (NaN as ``None``)."""
        return {k: (None if isinstance(v, float) and v != v else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RiskControl:
        """Rebuild from :meth:`as_dict` output."""
        values = dict(data)
        values["rate"] = float("nan") if values.get("rate") is None else float(values["rate"])
        return cls(**values)


def _check(epsilon: float, delta: float, unit: str) -> None:
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < float(value) < 1:
            raise InputError(f"learn_then_test: `{name}` must be a number in (0, 1); got {value!r}")
    if unit not in RISK_UNITS:
        raise InputError(f"learn_then_test: `unit` must be one of {', '.join(RISK_UNITS)}; got {unit!r}")


def learn_then_test(
    scores: Any,
    wrong: Any,
    *,
    epsilon: float,
    delta: float,
    unit: str = "halted",
    grid: Any = GRID,
    start: float | None = None,
    head: str = "failure",
) -> RiskControl:
    """Choose a head's threshold so that its wrong-halt rate is ≤ ε with probability ≥ 1 − δ.

    Parameters
    ----------
    scores : array of shape (n_runs,)
        Each calibration run's halting score for the head (:func:`halting_scores`; ``-inf``: cannot halt).
    wrong : array of bool, shape (n_runs,)
        Whether a halt of that run by this head would be wrong (its final outcome is the opposite).
    epsilon, delta : float
        Target rate ε and error level δ.
    unit : {"halted", "runs"}, default "halted"
        The risk: wrong halts among halted runs, or among all runs.
    grid : sequence of float
        Candidate thresholds; tested in decreasing order.
    start : float, optional
        Skip candidates above this (chosen from data independent of these runs); default: the top of ``grid``.
    head : str
        Name recorded on the result.

    Returns
    -------
    RiskControl

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> m = rng.uniform(size=5000); wrong = rng.uniform(size=5000) < 1 - m  # P(wrong | m) = 1 - m
    >>> rc = learn_then_test(m, wrong, epsilon=0.05, delta=0.1, start=0.97)
    >>> rc.threshold, rc.n_wrong, rc.n_halted  # the true risk above λ is (1 - λ) / 2: ≤ 0.05 from λ = 0.90
    (0.92, 12, 396)
    """
    _check(epsilon, delta, unit)
    m = np.asarray(scores, dtype=np.float64).ravel()
    bad = np.asarray(wrong, dtype=bool).ravel()
    if m.shape != bad.shape:
        raise InputError(f"learn_then_test: `scores` and `wrong` must have one entry per run; got {m.shape[0]} and {bad.shape[0]}")
    candidates = np.sort(np.unique(np.asarray(grid, dtype=np.float64)))[::-1]
    if start is not None:
        candidates = candidates[candidates <= start + 1e-12]
    n = int(m.shape[0])
    if candidates.shape[0] == 0 or n == 0:
        why = "no calibration runs" if n == 0 else "no threshold of the grid lies at or below the start"
        return RiskControl(head, float(epsilon), float(delta), unit, None, n, 0, 0, float("nan"), 1.0,
                           float(start if start is not None else np.nan), 0, f"never halts: {why}")
    halted = m[None, :] >= candidates[:, None]
    n_halted = halted.sum(axis=1)
    n_wrong = (halted & bad[None, :]).sum(axis=1)
    base = n_halted if unit == "halted" else np.full(n_halted.shape, n)
    p = binomial_pvalue(n_wrong, base, epsilon)
    rejected = np.cumprod(p <= delta).astype(bool)  # fixed sequence: stop at the first non-rejection
    n_tested = int(min(rejected.sum() + 1, candidates.shape[0]))
    share = "of halted runs" if unit == "halted" else "of all runs"
    if not rejected.any():
        reason = (
            f"never halts: at the first threshold tested, {candidates[0]:.2f}, {int(n_wrong[0])} of {int(n_halted[0])} "
            f"halted calibration runs are wrong (p = {p[0]:.3g} > δ = {delta:g}); no threshold shows a wrong-halt rate "
            f"≤ {epsilon:g} {share} at confidence {1 - delta:g}"
        )
        return RiskControl(head, float(epsilon), float(delta), unit, None, n, 0, 0, float("nan"), float(p[0]),
                           float(candidates[0]), n_tested, reason)
    j = int(np.flatnonzero(rejected)[-1])
    rate = float(n_wrong[j] / base[j]) if base[j] else float("nan")
    reason = (
        f"threshold {candidates[j]:.2f}: {int(n_wrong[j])} of {int(n_halted[j])} halted calibration runs wrong "
        f"({n} runs); wrong-halt rate ≤ {epsilon:g} {share} with confidence {1 - delta:g} (p = {p[j]:.3g})"
    )
    return RiskControl(head, float(epsilon), float(delta), unit, float(candidates[j]), n, int(n_halted[j]), int(n_wrong[j]),
                       rate, float(p[j]), float(candidates[0]), n_tested, reason)


def sequence_start(
    scores: Any,
    wrong: Any,
    n_calibration: int,
    *,
    epsilon: float,
    delta: float,
    unit: str = "halted",
    grid: Any = GRID,
) -> float:
    """The first threshold worth testing, chosen on pilot runs independent of the calibration runs.

    For unit ``"halted"``: the highest grid threshold at which the pilot predicts a rejection on
    ``n_calibration`` runs — halting the pilot's share of runs with the pilot's wrong rate (smoothed as
    ``(wrong + ½) / (halted + 1)``) gives a binomial p-value ≤ δ; failing that, the highest threshold expected
    to halt at least :func:`min_halts` runs; failing that, the grid's lowest value. For ``"runs"``: the top of
    the grid (the risk is monotone, and halting nothing is evidence of low risk). The start affects power
    only: any start fixed without the calibration runs keeps the guarantee.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.linspace(0, 1, 101)
    >>> sequence_start(m, np.zeros(101, dtype=bool), 200, epsilon=0.05, delta=0.1)  # 45 of 200 needed: 23 of 101
    0.78
    """
    candidates = np.sort(np.unique(np.asarray(grid, dtype=np.float64)))[::-1]
    if unit == "runs":
        return float(candidates[0])
    m = np.asarray(scores, dtype=np.float64).ravel()
    bad = np.asarray(wrong, dtype=bool).ravel()
    if m.shape[0] == 0:
        return float(candidates[-1])
    halted = m[None, :] >= candidates[:, None]
    share = halted.mean(axis=1)
    rate = ((halted & bad[None, :]).sum(axis=1) + 0.5) / (halted.sum(axis=1) + 1.0)
    expected = np.round(share * n_calibration)
    predicted = binomial_pvalue(np.floor(rate * expected), expected, epsilon)
    ok = np.flatnonzero(predicted <= delta)
    if ok.shape[0]:
        return float(candidates[ok[0]])
    enough = np.flatnonzero(share * n_calibration >= min_halts(epsilon, delta))
    return float(candidates[enough[0]]) if enough.shape[0] else float(candidates[-1])


def fixed_sequence(n_halted: Any, n_wrong: Any, base: Any, *, epsilon: float, delta: float, first: int = 0) -> np.ndarray:
    """Which hypotheses of an ordered sequence fixed-sequence testing rejects (LTT §4), from counts.

    Hypothesis ``j`` (``H_j : risk_j > ε``) has the exact binomial p-value ``P(Binomial(base_j, ε) ≤ wrong_j)``;
    testing starts at index ``first`` and stops at the first p-value above ``δ``. Returns a boolean array
    (``True``: rejected, i.e. risk shown ≤ ε), with every index before ``first`` untested (``False``).

    Examples
    --------
    >>> fixed_sequence([0, 50, 60, 90], [0, 0, 1, 9], [0, 50, 60, 90], epsilon=0.1, delta=0.1, first=1).tolist()
    [False, True, True, False]
    """
    p = binomial_pvalue(np.asarray(n_wrong)[first:], np.asarray(base)[first:], epsilon)
    out = np.zeros(np.asarray(n_halted).shape[0], dtype=bool)
    out[first:] = np.cumprod(p <= delta).astype(bool)
    return out


def count_start(scores: Any, *, epsilon: float, delta: float, unit: str = "halted", grid: Any = GRID) -> float:
    """Where the sequence starts when no independent pilot exists.

    The highest grid threshold that halts at least :func:`min_halts` of ``scores`` (the grid's lowest
    value if none does); the top of the grid for unit ``"runs"``.

    Uses the halting scores only, never the losses, so no outcome of the calibration runs steers the order in
    which their hypotheses are tested. It is what cross-fitted calibration uses (every training run is a
    calibration run there); :mod:`stopwise.early._risk` explains what the guarantee then covers.

    Examples
    --------
    >>> import numpy as np
    >>> count_start(np.linspace(0, 1, 101), epsilon=0.05, delta=0.1)  # 45 runs needed: 0.56..1.00
    0.56
    """
    candidates = np.sort(np.unique(np.asarray(grid, dtype=np.float64)))[::-1]
    if unit == "runs":
        return float(candidates[0])
    m = np.asarray(scores, dtype=np.float64).ravel()
    counts = (m[None, :] >= candidates[:, None]).sum(axis=1)
    enough = np.flatnonzero(counts >= min_halts(epsilon, delta))
    return float(candidates[enough[0]]) if enough.shape[0] else float(candidates[-1])
