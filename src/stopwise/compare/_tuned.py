r"""The power-tuned prediction-powered boundary with active audits (issue 34, treatment ``prediction-powered-tuned``).

The treatment of :mod:`stopwise.compare._predicted` (kept for reproduction) pays for its validity in power: every
bet is capped by the symmetric range 2/rho - 1 of the corrected difference, the prediction enters with weight one
whatever its accuracy, and a fifth of the cutoff goes to the bound of the unaudited wrong predictions. This module
keeps the argument and lowers each price.

Active audits (Zrnic & Candès 2024, "Active statistical inference")
--------------------------------------------------------------------
A halted run's audit probability pi is a pre-registered function of its prediction f in {0, 1} and the halting
model's confidence (:class:`ActiveAudits`): predictions that *favour the tested system* (the tested system predicted
to pass, the baseline predicted to fail) are audited at about ``favour x rho`` (1.5 rho by default), the others at ``(2 - favour) x rho``,
less confident halts more (``slope``), never below ``floor x rho``; the mean over the halts is rho when half of them
favour the tested system and the mean confidence is ``reference``. The draw is the seeded uniform u of the run
(:func:`stopwise.records.audit_draw`): audited iff u < pi. Since f and the confidence are fixed by the trajectory up
to the halt, which does not depend on u, P(audited | Y, f, confidence) = pi exactly.

Antithetic audits (``coupling = "antithetic"``): the two runs of a task share one uniform w, the tested system's run
audited iff w < pi_A and the baseline's iff 1 - w < pi_B. Each is still uniform and independent of both trajectories,
so each run is audited with probability exactly pi and every unbiasedness below holds unchanged; but both runs are
audited only when pi_A + pi_B > 1 (w < pi_A and w > 1 - pi_B). The extreme of the promote test -- both runs'
favouring predictions wrong *and* audited -- is then impossible while the favouring probabilities stay at most 1/2,
and the range the bets are capped by narrows from 1 - 2/pi_fav to -1/pi_fav (a classic variance-reduction coupling,
here used for the worst case rather than the variance). On the benchmark of issue 34 (rho = 0.3) this takes the
median tasks to promote from about 2.25x to about 1.95x the full evaluation's (``benchmarks/tuned_power.py``).

The estimator (PPI++, Angelopoulos, Duchi & Zrnic 2023, power tuning)
--------------------------------------------------------------------
For a halted run with outcome Y, a guess g in [0, 1] fixed before its audit draw and xi its audit indicator,

    Y_hat = g + (xi / pi) (Y - g),     E[Y_hat | Y, g, pi] = Y,

whatever g is (unhalted runs enter as Y). Classic PPI takes g = f; here g shrinks f by a weight lam_t in [0, 1]
learned from the *past* tasks' audited halts (the least-squares slope of Y on f, clipped; 1 until
:data:`TUNE_AFTER` audited halts): g = lam f for the tested system and g = 1 - lam (1 - f) for the baseline (each
shrunk toward the value that keeps the promote test's worst case, below). A bad halting model so degrades toward
audit-only estimation. lam_t depends on tasks 1..t-1 only, so g is fixed before task t's audit draws.

The range the bets are capped by
--------------------------------
The promote test bets lam_s >= 0 on X_s - c_s; the capital stays nonnegative iff lam_s <= 1 / (c_s - x_min) with
x_min the least value X can take under the design, over *every* case (never the current task's own prediction:
that cap is larger exactly when the predictions are anti-correlated with the outcomes). With the shrinks above,
Y_hat_A >= min(0, 1 - 1/pi_fav) and Y_hat_B <= max(1, 1/pi_fav), pi_fav the least audit probability a favouring
prediction can get (:meth:`ActiveAudits.least`): x_min = min(0, 1 - 1/pi_fav) - max(1, 1/pi_fav), which is
1 - 2 / pi_fav for pi_fav <= 1. The reject test is the mirror image with the non-favouring predictions'
least probability. Auditing favouring predictions more is what narrows the promote test's range.

Under antithetic audits the two extremes meet only when pi_A + pi_B > 1 with both in [pi_fav, pi_max] (pi_max the
rule's greatest favouring probability, at confidence 1/2): with one of them, X >= 1 - 1/pi_fav - 1 = -1/pi_fav (the
other run's corrected value stays in [0, 1]); with both, X >= 1 - 1/a - 1/b, whose infimum over a + b >= 1 (the convex
1/a + 1/b is largest at an end of the segment) is at a = max(pi_fav, 1 - pi_max), b = max(pi_fav, 1 - a).
:func:`design_range` takes the smaller; ``tests/compare/test_tuned.py`` checks it against every case of a task.
A confidence outside [1/2, 1] is refused, since pi_max rests on it. The weight lam keeps each adverse value within
its lam = 1 extreme and every other promote-side value in [0, 1] (tested system) or at most 1 (baseline); on the
reject side a shrunk guess audited right may reach 1/pi (tested) or 1 - 1/pi (baseline), as an adverse one does, so
that side's pair bound takes the greatest pi of either kind. The range so holds for every lam in [0, 1].

The centre (without replacement)
--------------------------------
Sampling without replacement centres task s at (N m0 - S_{s-1}) / (N - s + 1), S the true past sum; the proof of
:mod:`stopwise.compare._predicted` needs only a lower bound on S_{s-1} that holds at every s on an event E of
probability at least 1 - alpha_1 (then P(promote under H0+) <= alpha_1 + alpha_2). With P the past sum with the
unaudited predictions as outcomes, S = P - (unaudited wrong favouring weight) + (unaudited wrong other weight)
>= P - W_u. The favouring runs have pi >= pi_fav, so xi' = 1{u < pi_fav} is a Bernoulli(pi_fav) *sub-audit*
independent of everything else, with xi' <= xi (a sub-audited run is audited, its outcome known). The bound of
:mod:`stopwise.compare._audit_bound` at rate pi_fav on the sub-audited wrong weight bounds the wrong weight outside
the sub-audit, which contains W_u. (Under antithetic audits the two sub-audit coins of a task, 1{w < pi_fav} and
1{1 - w < pi_fav}, are dependent, but negatively: P(both) = max(0, 2 pi_fav - 1) <= pi_fav^2. For two Bernoulli
variables a nonpositive covariance is negative association, so E[prod_j h_j(xi'_j)] <= prod_j E[h_j(xi'_j)] for the
nonnegative nonincreasing h_j(xi) = exp(lam a_j (1 - xi / pi_fav)) (Joag-Dev & Proschan 1983, Ann. Statist. 11(1));
the bound's exponential process is still a supermartingale at every task's end, where it is read.) S_{s-1} >= max(L_{s-1}, P_{s-1} - U_{s-1}) on E. Here alpha_1 =
:data:`TUNED_BOUND_ALPHA` = 0.005 is fixed (not a share of a), and the test runs at alpha_2 = a - 0.005.

The bets
--------
The project's pooled bettor (:func:`stopwise.compare._predicted._powered_paths`: the ``mixture`` of the ``max`` and
``horizon`` strategies, mean and variance of the past values only) on X / C_up for the promote test (C_up = -x_min)
and on X / C_down for the reject test: predictable, capped by the design's worst case.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from stopwise._vocabulary import AUDIT_COUPLINGS
from stopwise.compare._audit_bound import audited_wrong_bound
from stopwise.compare._betting import BettingBoundary, BettingPaths, resolve_strategy
from stopwise.compare._interval import anytime_interval
from stopwise.compare._predicted import INTERVAL_STEP, AuditTallies, _powered_paths
from stopwise.errors import ArgumentError, ComparisonError
from stopwise.records import DifferenceInterval

__all__ = [
    "AUDIT_COUPLINGS",
    "TUNED_BOUND_ALPHA",
    "TUNED_TRUNCATION",
    "TUNE_AFTER",
    "ActiveAudits",
    "TunedValues",
    "design_range",
    "tuned_paths",
    "tuned_values",
]

TUNED_BOUND_ALPHA = 0.005
"""alpha_1: the level of the time-uniform lower bound on the past true sum (the test runs at a - alpha_1)."""
TUNE_AFTER = 20
"""Audited halts of past tasks needed before the prediction's weight lam is learned (1 until then)."""


@dataclasses.dataclass(frozen=True)
class ActiveAudits:
    """A pre-registered audit rule: each halted run's audit probability from its prediction and confidence.

    ``pi = clip(rho (m + slope (reference - confidence)), floor rho, 1)`` with ``m = favour`` for a prediction
    that favours the tested system (tested predicted 1, baseline predicted 0) and ``m = 2 - favour`` otherwise.
    ``ActiveAudits(rho, favour=1.0, slope=0.0)`` is the uniform audit of the earlier treatment.

    Examples
    --------
    >>> from stopwise.compare._tuned import ActiveAudits
    >>> rule = ActiveAudits(0.5)
    >>> [round(float(p), 3) for p in rule.probability([True, False], [0.95, 0.95])]
    [0.75, 0.25]
    >>> round(rule.least(True), 4), round(rule.least(False), 4)
    (0.7375, 0.2375)
    """

    rate: float
    """rho: the mean audit probability of the halts (when half favour the tested system, confidence ``reference``)."""
    favour: float = 1.5
    """Multiplier of rho for predictions favouring the tested system (the others get 2 - favour)."""
    slope: float = 0.5
    """How much more a less confident halt is audited, per unit of confidence below ``reference`` (times rho)."""
    reference: float = 0.95
    """The confidence at which a halt gets exactly m rho."""
    floor: float = 0.25
    """The least audit probability, as a share of rho."""
    coupling: str = "independent"
    """How the two runs of a task draw their audits: ``independent`` uniforms, or ``antithetic``: one uniform w per
    task, the tested system's run audited iff w < pi_A and the baseline's iff 1 - w < pi_B (each still audited with
    probability exactly pi; both only when pi_A + pi_B > 1, which narrows the design's range)."""

    def __post_init__(self) -> None:
        if not 0.0 < self.rate <= 1.0:
            raise ArgumentError(f"`rate` (rho) must be in (0, 1]; got {self.rate!r}")
        if not 1.0 <= self.favour < 2.0:
            raise ArgumentError(f"`favour` must be in [1, 2); got {self.favour!r}")
        if self.slope < 0.0 or not 0.5 <= self.reference <= 1.0 or not 0.0 < self.floor <= 1.0:
            raise ArgumentError(
                f"`slope` must be >= 0, `reference` in [0.5, 1] and `floor` in (0, 1]; got {self.slope!r}, {self.reference!r}, {self.floor!r}"
            )
        if self.coupling not in AUDIT_COUPLINGS:
            raise ArgumentError(f"`coupling` must be one of {', '.join(AUDIT_COUPLINGS)}; got {self.coupling!r}")

    def probability(self, favours: np.ndarray | list[bool], confidence: np.ndarray | list[float]) -> np.ndarray:
        """The audit probability pi of each halt: ``favours`` whether its prediction favours the tested system, ``confidence`` in [0.5, 1]."""
        m = np.where(np.asarray(favours, dtype=bool), self.favour, 2.0 - self.favour)
        raw = self.rate * (m + self.slope * (self.reference - np.asarray(confidence, dtype=float)))
        return np.clip(raw, self.floor * self.rate, 1.0)

    def least(self, favours: bool) -> float:
        """The least pi a favouring (``True``) or other prediction can get (at confidence 1)."""
        return float(self.probability([favours], [1.0])[0])

    def greatest(self, favours: bool) -> float:
        """The greatest pi a favouring (``True``) or other prediction can get (at confidence 0.5)."""
        return float(self.probability([favours], [0.5])[0])

    def describe(self) -> str:
        """The rule in words, for the record."""
        return (
            f"active audits: pi = clip(rho (m + {self.slope:g} ({self.reference:g} - confidence)), {self.floor:g} rho, 1), rho = {self.rate:g}, "
            f"m = {self.favour:g} for predictions favouring the tested system, {2.0 - self.favour:g} otherwise"
            + ("; the two runs of a task audited antithetically (w and 1 - w)" if self.coupling == "antithetic" else "")
        )


@dataclasses.dataclass(frozen=True)
class TunedValues:
    """The tuned treatment's per-task quantities of a batch of orders, shape (R, T) each, in look order."""

    x: np.ndarray
    """X: the tuned prediction-powered difference Y_hat_A - Y_hat_B."""
    low: np.ndarray
    """The least true difference the rows allow (unaudited predictions at their worst)."""
    high: np.ndarray
    """The greatest."""
    point: np.ndarray
    """P: the difference with the unaudited predictions taken as outcomes."""
    wrong_low: np.ndarray
    """Sub-audited wrong favouring predictions (the promote test's adverse group), per task."""
    wrong_high: np.ndarray
    """Sub-audited wrong other predictions (the reject test's), per task."""
    weight: np.ndarray
    """lam_t: the prediction's weight used on task t (from tasks 1..t-1)."""
    probability: np.ndarray
    """(R, T, 2) audit probability of each halted run (NaN for runs not halted)."""


def _lam(f: np.ndarray, y: np.ndarray, audited: np.ndarray) -> np.ndarray:
    """lam_t per (R, T): the clipped least-squares slope of Y on f over the audited halts of tasks before t."""
    use = audited.astype(float)
    sums = [
        np.cumsum((use * v).sum(axis=-1), axis=-1)
        for v in (np.ones_like(f), f, np.nan_to_num(y), f * f, f * np.nan_to_num(y))
    ]
    n, sf, sy, sff, sfy = (np.concatenate((np.zeros((*s.shape[:-1], 1)), s[..., :-1]), axis=-1) for s in sums)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = sff - sf * sf / n
        slope = (sfy - sf * sy / n) / var
    return np.where((n >= TUNE_AFTER) & (var > 1e-9), np.clip(np.nan_to_num(slope, nan=1.0), 0.0, 1.0), 1.0)


def tuned_values(
    outcome: np.ndarray,
    halted: np.ndarray,
    prediction: np.ndarray,
    confidence: np.ndarray,
    draw: np.ndarray,
    rule: ActiveAudits,
    *,
    tune: bool = True,
) -> TunedValues:
    """The tuned treatment's values of a batch of orders from each run's halt, prediction, confidence and audit draw.

    Parameters
    ----------
    outcome, halted, prediction, confidence, draw : array_like, shape (R, T, 2)
        Per order (R), look (T) and system (tested, baseline): the true outcome Y (read only where the run is not
        halted or is audited), whether the monitor halts (or would halt) it, its prediction f in {0, 1}, the model's
        confidence, and the run's seeded audit uniform u (audited iff halted and u < pi).
    rule : ActiveAudits
        The pre-registered audit rule.
    tune : bool, optional
        Learn lam from past audits (False: g = f, classic prediction-powered inference).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._tuned import ActiveAudits, tuned_values
    >>> one = lambda *v: np.array(v, dtype=float).reshape(1, 1, 2)
    >>> v = tuned_values(one(1, 0), one(1, 0), one(1, 0), one(1, 1), one(0.9, 0.1), ActiveAudits(0.5))
    >>> float(v.x[0, 0]), float(v.low[0, 0]), float(v.point[0, 0])
    (1.0, 0.0, 1.0)
    """
    y, h, f, conf, u = (np.asarray(v, dtype=float) for v in (outcome, halted, prediction, confidence, draw))
    if not (y.shape == h.shape == f.shape == conf.shape == u.shape) or y.ndim != 3 or y.shape[-1] != 2:
        raise ArgumentError(
            f"the run arrays must share one (R, T, 2) shape; got {[v.shape for v in (y, h, f, conf, u)]}"
        )
    if ((conf < 0.5) | (conf > 1.0)).any():
        raise ArgumentError("`confidence` must lie in [0.5, 1] (the rule's range of audit probabilities rests on it)")
    if rule.coupling == "antithetic" and not np.allclose(u[..., 1], 1.0 - u[..., 0], rtol=0.0, atol=1e-12):
        raise ArgumentError("antithetic audits: each task's baseline draw must be 1 - its tested draw")
    halted_ = h > 0.5
    side = np.array([1.0, 0.0])  # the prediction that favours the tested system: A passes, B fails
    favours = f == side
    pi = np.where(halted_, rule.probability(favours, conf), np.nan)
    audited = halted_ & (u < np.nan_to_num(pi))
    lam = _lam(f, y, audited) if tune else np.ones(y.shape[:2])
    g = np.stack([lam * f[..., 0], 1.0 - lam * (1.0 - f[..., 1])], axis=-1)
    with np.errstate(invalid="ignore"):
        y_hat = np.where(halted_, np.where(audited, g + (np.nan_to_num(y) - g) / np.where(audited, pi, 1.0), g), y)
    predicted = halted_ & ~audited
    known = np.where(predicted, f, y)
    worst_low = np.where(predicted, np.array([0.0, 1.0]), y)
    worst_high = np.where(predicted, np.array([1.0, 0.0]), y)
    wrong = halted_ & (f != y)
    sub_fav = wrong & favours & (u < rule.least(True))
    sub_other = wrong & ~favours & (u < rule.least(False))

    def diff(v: np.ndarray) -> np.ndarray:
        return v[..., 0] - v[..., 1]

    return TunedValues(
        x=diff(y_hat), low=diff(worst_low), high=diff(worst_high), point=diff(known),
        wrong_low=sub_fav.sum(axis=-1).astype(float), wrong_high=sub_other.sum(axis=-1).astype(float), weight=lam, probability=pi,
    )  # fmt: skip


def _adverse_extreme(least: float, greatest: float, coupling: str) -> float:
    """The least promote-side difference when the adverse predictions get pi in [least, greatest] (module docstring).

    One adverse run audited and wrong gives at least -1 / least (the other run's corrected value stays in [0, 1]); both
    give 1 - 1/a - 1/b, possible for every (a, b) when the draws are independent and only for a + b > 1 when they are
    antithetic (the worst such pair: a = max(least, 1 - greatest), b = max(least, 1 - a)).
    """
    one = -max(1.0, 1.0 / least)
    if coupling == "independent":
        return min(0.0, 1.0 - 1.0 / least) - max(1.0, 1.0 / least)
    if 2.0 * greatest <= 1.0:
        return one
    a = max(least, 1.0 - greatest)
    return min(one, 1.0 - 1.0 / a - 1.0 / max(least, 1.0 - a))


def design_range(rule: ActiveAudits) -> tuple[float, float]:
    """(x_min, x_max): the least and greatest tuned difference the design allows (module docstring).

    Examples
    --------
    >>> from stopwise.compare._tuned import ActiveAudits, design_range
    >>> [round(v, 4) for v in design_range(ActiveAudits(0.3))]
    [-3.5198, 13.0351]
    >>> [round(v, 4) for v in design_range(ActiveAudits(0.28, coupling="antithetic"))]
    [-2.4213, 7.5188]
    """
    low = _adverse_extreme(rule.least(True), rule.greatest(True), rule.coupling)
    # the reject side: a shrunk (lam < 1) favouring guess audited right lies in [1 - 1/pi, 1/pi] too, so a task's
    # two audited runs may be one of each kind: the greatest pi of either kind bounds when both can be audited
    high = -_adverse_extreme(rule.least(False), max(rule.greatest(False), rule.greatest(True)), rule.coupling)
    return low, high


TUNED_TRUNCATION = 0.95
"""c of the tuned boundary's bets: at most c times the largest bet the design's worst case allows (any c < 1 is valid;
the worst case is rare under a useful halting model, so the hedge of the [-1, 1] scale's 0.6 / 0.7 costs more here;
measured on the benchmark of issue 34: 0.8 -> 0.95 takes about a tenth off the median tasks to promote)."""


def tuned_paths(
    values: TunedValues,
    threshold: float,
    *,
    population_size: int,
    alpha: float,
    rule: ActiveAudits,
    strategy: str = "auto",
    truncation: float = TUNED_TRUNCATION,
) -> BettingPaths:
    """Log-capital paths of the tuned boundary's promote and reject tests, one row per order (module docstring).

    The paths are shifted by log(alpha_2 / a), so a test has crossed where its running maximum reaches log(1/a).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._tuned import ActiveAudits, TunedValues, tuned_paths
    >>> d = np.r_[np.ones(60), np.zeros(20)].reshape(1, -1)
    >>> z = np.zeros_like(d)
    >>> v = TunedValues(d, d, d, d, z, z, np.ones_like(d), np.zeros((1, 80, 2)))
    >>> promote, reject = tuned_paths(v, 0.0, population_size=400, alpha=0.05, rule=ActiveAudits(0.5)).crossed(0.05)
    >>> bool(promote.any()), bool(reject.any())
    (True, False)
    """
    if not 0.0 < truncation < 1.0:
        raise ArgumentError(f"`truncation` must be in (0, 1); got {truncation!r}")
    if not 0.0 < alpha - TUNED_BOUND_ALPHA < 1.0:
        raise ArgumentError(f"`alpha` must exceed the bound's level {TUNED_BOUND_ALPHA}; got {alpha!r}")
    x_min, x_max = design_range(rule)
    if (values.x < x_min - 1e-9).any() or (values.x > x_max + 1e-9).any():
        raise ArgumentError(f"tuned differences must lie in the design's range [{x_min:.4g}, {x_max:.4g}]")
    lower, upper = _tuned_sums(values.low, values.high, values.point, values.wrong_low, values.wrong_high, rule)
    test_alpha = float(alpha) - TUNED_BOUND_ALPHA
    used = resolve_strategy(strategy, False)
    log_p, log_r = _tuned_logs(
        values.x, lower, upper, np.array([float(threshold)]), int(population_size), rule, used, test_alpha, truncation
    )
    shift = np.log(test_alpha / float(alpha))
    return BettingPaths(log_p + shift, log_r + shift, False, used)


def _tuned_sums(
    low: np.ndarray,
    high: np.ndarray,
    point: np.ndarray,
    wrong_low: np.ndarray,
    wrong_high: np.ndarray,
    rule: ActiveAudits,
) -> tuple[np.ndarray, np.ndarray]:
    """max(L_t, P_t - U_t) and min(H_t, P_t + U'_t): the bounds of the past true sums at level TUNED_BOUND_ALPHA (last axis)."""
    low_sum, high_sum = np.cumsum(low, axis=-1), np.cumsum(high, axis=-1)
    point_sum = np.cumsum(point, axis=-1)

    def bound(wrong: np.ndarray, favours: bool, cap: np.ndarray) -> np.ndarray:
        least = rule.least(favours)
        if least >= 1.0:  # every run of the kind audited: no unaudited prediction to bound
            return np.zeros_like(cap)
        return audited_wrong_bound(np.cumsum(wrong, axis=-1), least, TUNED_BOUND_ALPHA, cap)

    u_low = bound(wrong_low, True, np.maximum(point_sum - low_sum, 0.0))
    u_high = bound(wrong_high, False, np.maximum(high_sum - point_sum, 0.0))
    return np.maximum(low_sum, point_sum - u_low), np.minimum(high_sum, point_sum + u_high)


def _tuned_logs(
    x: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    m0: np.ndarray,
    n_pop: int,
    rule: ActiveAudits,
    strategy: str,
    test_alpha: float,
    truncation: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Unshifted log-capital paths: the promote test on X / C_up, the reject test on X / C_down (module docstring)."""
    x_min, x_max = design_range(rule)
    log_p, _ = _powered_paths(x, lower, upper, m0, n_pop, max(1.0, -x_min), strategy, test_alpha, truncation)
    _, log_r = _powered_paths(x, lower, upper, m0, n_pop, max(1.0, x_max), strategy, test_alpha, truncation)
    return log_p, log_r


def tuned_boundary(
    values: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    audit: AuditTallies,
    threshold: float,
    *,
    population_size: int,
    alpha: float,
    rule: ActiveAudits,
) -> BettingBoundary:
    """The tuned boundary on one observed prefix (as :func:`stopwise.compare.powered_boundary`; the module docstring's claim).

    ``audit`` holds per task P_i and the *sub-audited* wrong weights (drawn below the rule's least probability).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import AuditTallies
    >>> from stopwise.compare._tuned import ActiveAudits, tuned_boundary
    >>> d = np.r_[np.ones(40), np.zeros(10)]
    >>> b = tuned_boundary(d, d, d, AuditTallies(d, 0 * d, 0 * d), 0.0, population_size=300, alpha=0.05, rule=ActiveAudits(0.5))
    >>> b.promote, b.reject
    (True, False)
    """
    x, lo, hi = (np.asarray(v, dtype=float).ravel() for v in (values, low, high))
    n_pop, n = int(population_size), len(x)
    if not (len(lo) == len(hi) == n == len(audit.point)) or n > n_pop:
        raise ComparisonError(
            f"tuned boundary: {n} values, {len(lo)} lows, {len(hi)} highs, {len(audit.point)} points for N = {n_pop}"
        )
    x_min, x_max = design_range(rule)
    method = (
        f"betting-wor (mixture, prediction-powered-tuned: range [{x_min:.4g}, {x_max:.4g}] by the audit rule, past sums bounded at "
        f"{TUNED_BOUND_ALPHA:g}, bets capped at {TUNED_TRUNCATION:g} of the worst case, pooled)"
    )
    logical = ((lo.sum() - (n_pop - n)) / n_pop, (hi.sum() + (n_pop - n)) / n_pop)
    if n == 0:
        empty = np.zeros(0)
        return BettingBoundary(
            1.0, 1.0, False, False, 0, n_pop, float(threshold), float(alpha), -1.0, 1.0, -1.0, 1.0, empty, empty, method
        )
    values_ = TunedValues(x[None], lo[None], hi[None], np.asarray(audit.point, float)[None], np.asarray(audit.wrong_low, float)[None],
                          np.asarray(audit.wrong_high, float)[None], np.ones((1, n)), np.full((1, n, 2), np.nan))  # fmt: skip
    paths = tuned_paths(values_, threshold, population_size=n_pop, alpha=alpha, rule=rule)
    log_p, log_r = paths.log_promote[0], paths.log_reject[0]
    p_promote = float(min(1.0, np.exp(-np.max(log_p))))
    p_reject = float(min(1.0, np.exp(-np.max(log_r))))
    return BettingBoundary(
        p_promote, p_reject, p_promote <= alpha, p_reject <= alpha, n, n_pop, float(threshold), float(alpha),
        logical[0], logical[1], logical[0], logical[1], log_p, log_r, method,
    )  # fmt: skip


def tuned_interval(
    values: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    audit: AuditTallies,
    *,
    population_size: int,
    alpha: float,
    rule: ActiveAudits,
) -> DifferenceInterval:
    """The tuned boundary's anytime-valid confidence sequence (each end inverts one test over a grid of m0, step 0.01).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import AuditTallies
    >>> from stopwise.compare._tuned import ActiveAudits, tuned_interval
    >>> d = np.random.default_rng(1).permutation(np.r_[np.ones(30), np.zeros(60), -np.ones(10)])
    >>> ci = tuned_interval(d, d, d, AuditTallies(d, 0 * d, 0 * d), population_size=500, alpha=0.05, rule=ActiveAudits(0.5))
    >>> ci.kind, -1.0 < ci.low < 0.2 < ci.high < 1.0
    ('anytime-valid', True)
    """
    x, lo, hi = (np.asarray(v, dtype=float).ravel() for v in (values, low, high))
    n_pop = int(population_size)
    step = INTERVAL_STEP
    grid = np.round(np.arange(-1.0, 1.0 + step / 2, step), 12)
    point, wrong_low, wrong_high = (
        np.asarray(v, dtype=float).ravel() for v in (audit.point, audit.wrong_low, audit.wrong_high)
    )
    lower, upper = _tuned_sums(lo, hi, point, wrong_low, wrong_high, rule)
    test_alpha = float(alpha) - TUNED_BOUND_ALPHA
    log_p, log_r = _tuned_logs(
        x, lower, upper, grid, n_pop, rule, resolve_strategy("auto", False), test_alpha, TUNED_TRUNCATION
    )
    level = np.log(1.0 / test_alpha)
    kept_up, kept_down = np.max(log_p, axis=1) < level, np.max(log_r, axis=1) < level
    logical = ((lo.sum() - (n_pop - len(x))) / n_pop, (hi.sum() + (n_pop - len(x))) / n_pop)
    low_end = float(grid[np.argmax(kept_up)] - step) if kept_up.any() else 1.0
    high_end = float(grid[np.flatnonzero(kept_down)[-1]] + step) if kept_down.any() else -1.0
    return anytime_interval(
        max(low_end, logical[0]), min(high_end, logical[1]), alpha,
        f"confidence sequence of the prediction-powered-tuned betting-wor test (each end one-sided 1 - a over every look; {step:g} grid, rounded outward)",
    )  # fmt: skip
