r"""Predicted outcomes in a paired decision: the prediction-powered treatment (issue 22).

A run halted early by a monitor (:class:`stopwise.inspect.LiveHalting`) has no true outcome, only the
prediction f of the halting model: a row with ``status = "predicted"``. Dropping those rows (the default
``[decision] predicted = "exclude"``) loses the savings and keeps only tasks whose runs were *not*
halted, an outcome-dependent selection; taking the predictions as true outcomes (``statuses = ["final",
"predicted"]``) is biased by every wrong halt, and the halting model's certified error bound holds only
on runs like its calibration runs, not on a new agent. ``predicted = "prediction-powered"`` needs
neither: it is valid whatever the halting model's accuracy on the agents compared.

The audit draw
--------------
Before the evaluation a fraction rho of runs is drawn for audit (``[early] audit_fraction``; a seeded
hash of the run, :func:`stopwise.records.audit_draw`, independent of every outcome). An audited run is
never halted: it runs to its end (``status = "final"``, flag ``audited``), and if the monitor would have
halted it the row also carries ``would-halt:f``, the prediction it would have stored.

The estimator (prediction-powered inference, Angelopoulos et al. 2023; active inference, Zrnic & Candès 2024)
-----------------------------------------------------------------------------------------------------------
For a run with true outcome Y in [0, 1], let H = 1 when the monitor halts (or would halt) it with
prediction f in [0, 1], and xi = 1 when it is audited (P(xi = 1) = rho, independent of (Y, H, f): the
trajectory up to the halt is the same whether or not the run is audited). The run's value is

    Y_hat = Y                          (H = 0: never a halting candidate)
    Y_hat = f + (xi / rho) (Y - f)     (H = 1: f for a predicted row, f + (Y - f) / rho for an audited one)

so E[Y_hat | Y, H, f] = Y: unbiased by the audit randomisation alone, whatever f is (Angelopoulos,
Bates, Fannjiang, Jordan & Zrnic 2023, "Prediction-powered inference", Science 382; the inverse-probability
form with a known sampling probability is the "active statistical inference" estimator of Zrnic & Candès
2024, ICML). Y_hat lies in [1 - 1/rho, 1/rho]; attempts are averaged as for true outcomes and the task's
difference X_i = Y_hat_A - Y_hat_B, with E[X_i | task i] = D_i, lies in [-(2/rho - 1), 2/rho - 1]: the
scale C = max(1, 2/rho - 1) of :func:`powered_boundary` is fixed by the policy before any data.

Why the without-replacement boundary needs one more step, and the step
----------------------------------------------------------------------
The betting boundary (Waudby-Smith & Ramdas 2020, "Confidence sequences for sampling without
replacement", NeurIPS; bets of Waudby-Smith & Ramdas 2023, JRSS-B 86(1)) centres the t-th task at the
mean of the tasks not yet seen, ``(N m0 - S_{t-1}) / (N - t + 1)``, with S_{t-1} the sum of the *true*
past differences. Plugging in the sum of the past X's instead is not valid: given the past, the centre is
off by the realised audit noise ``(sum_{i<t} X_i - D_i) / (N - t + 1)``, which is known to the draw (it
is not mean zero given what was observed) and grows as the unseen tasks run out; at t = N it would let
the logical bounds "settle" on noisy sums. Independence and zero mean of the noise make the *next* task's
X unbiased, not the past sum exact.

The past true sum is, however, bounded by what was observed: a final or audited row's true outcome is
known, and a predicted row's lies in [0, 1]. So for every observed task the true difference lies in
[l_i, h_i] (l_i: the tested system's predicted rows at 0 and the baseline's at 1; h_i: the reverse;
l_i = h_i = D_i on a task without predicted rows), and with L_{t-1}, H_{t-1} their past sums:

**Claim.** Let the planned order be a uniform random permutation of the N tasks, independent of the
audit draw, and lambda_t >= 0 predictable. Under H0+: mu = (1/N) sum_i D_i <= m0, the process

    K_t = prod_{s <= t} (1 + lambda_s (X_s / C - c_s)),   c_s = min(1, (N m0 - L_{s-1}) / (N - s + 1)) / C,

with lambda_s <= 1 / (1 + c_s), is a nonnegative supermartingale, so P(exists t: K_t >= 1/alpha) <= alpha
(Ville's inequality) at every look, however many.

*Proof.* Let F_{s-1} hold the first s - 1 tasks, their rows and audit draws. Given F_{s-1} the s-th task
is uniform on the unseen ones and its audit draws are independent of F_{s-1} and of the task, so
E[X_s | F_{s-1}] = E[D_s | F_{s-1}] = (N mu - S_{s-1}) / (N - s + 1) (the unseen tasks' mean of true
differences, at most 1). Since S_{s-1} >= L_{s-1} and mu <= m0 this is at most C c_s, hence
E[1 + lambda_s (X_s / C - c_s) | F_{s-1}] <= 1 for lambda_s >= 0. Nonnegativity: X_s / C >= -1 and
lambda_s (1 + c_s) <= 1. (When c_s would fall below -1/C the null is impossible and promote is settled.)

The reject test is the mirror image (lambda_s <= 0, the centre from H_{s-1}, at least -1/C), and the
logical bounds settle promote once ``L_t - (N - t) > N m0`` (reject once ``H_t + (N - t) < N m0``): the
true mean is then certainly on one side. Nothing about the halting model's accuracy is assumed: a wrong
prediction moves X only through its mean-zero audit correction, and the past predicted outcomes enter the
centre only through their worst case (``predicted_centre = "worst-case"``). The price is power: the centre shifts by the past predicted rows'
share, so the bound is tight early and conservative late (it is the exclude-free worst case for the past,
not for the future tasks); the wider range C also makes bets smaller. The bets are the project's
strategies (:mod:`stopwise.compare._betting`: aGRAPA, plug-in, ``mixture``) on the scaled values with the
variance prior 1 / C^2 (one pseudo-observation of the [-1, 1] scale); any predictable bet keeps the claim.

The audited-bound centre (``[decision] predicted_centre = "audited-bound"``, the default)
------------------------------------------------------------------------------------------
The worst case charges one unit to every past unaudited prediction of the adverse kind (the tested system's
predicted 1, the baseline's predicted 0, for the promote test), though a useful halting model is mostly
right. With P_{t-1} the past sum with the predictions as outcomes and A_{t-1} = P_{t-1} - L_{t-1} the
adverse predicted weight, S_{t-1} = P_{t-1} - (the unaudited wrong adverse weight W_u) >= P_{t-1} - W_u.
:mod:`stopwise.compare._audit_bound` gives U_{t-1}, a function of the *audited* wrong adverse weight only,
with P(E) >= 1 - alpha_1 for E = {W_u < U at every look}. The centre then uses

    L'_{s-1} = max(L_{s-1}, P_{s-1} - U_{s-1}) (<= S_{s-1} on E),

the test bets at level alpha_2 = a - alpha_1 (its capital must reach 1 / alpha_2), and the logical bound
settles promote once ``L'_t - (N - t) > N m0``; alpha_1 = a / 5 (:data:`AUDIT_BOUND_SHARE`), fixed before the
data. (Taking the larger of the two lower bounds is what E allows; the minimum would be valid too but never
tighter.)

**Claim.** Under H0+, P(the promote test ever acts) <= alpha_1 + alpha_2 = a.

*Proof.* Let G_{s-1} hold F_{s-1} and the true outcomes of the first s - 1 tasks' runs (so S_{s-1} and W_u
up to then). Define the guarded centre c~_s from min(L'_{s-1}, S_{s-1}) and the guarded bet
lam~_s = min(lam_s, 1 / (1 + c~_s)): both G-predictable. Given G_{s-1} the s-th task is still uniform on the
unseen ones and its audit draws independent, so E[X_s | G_{s-1}] = (N mu - S_{s-1}) / (N - s + 1) <= C c~_s
under H0+, and K~_t = prod (1 + lam~_s (X_s / C - c~_s)) is a nonnegative G-supermartingale: Ville gives
P(exists t: K~_t >= 1 / alpha_2) <= alpha_2. On E, L'_{s-1} <= S_{s-1} at every s, so c~ = c', lam~ = lam and
K~ = K' (the reported process); and a logical settle on E implies S_t - (N - t) > N m0, impossible under H0+.
So P(K' ever >= 1/alpha_2 or settles) <= P(not E) + P(exists t: K~_t >= 1/alpha_2) <= alpha_1 + alpha_2.
The reject test is the mirror image with the reverse adverse group and H'_{s-1} = min(H_{s-1}, P_{s-1} + U'_{s-1}).
The reported log-capital paths are shifted by log(alpha_2 / a), so "crossing log(1/a)" keeps its meaning.

Scope: the pooled process (a uniform planned order; with the coverage rule, the top-up design). The
stratified process and the one-look fixed-budget tails are refused with ``prediction-powered``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from stopwise.compare._audit_bound import AUDIT_BOUND_SHARE, audited_wrong_bound
from stopwise.compare._betting import (
    _STRATEGY_LABELS,
    BettingBoundary,
    _average,
    _bet_parts,
    _component_bets,
    _components,
    resolve_strategy,
)
from stopwise.compare._interval import anytime_interval
from stopwise.compare._pairing import PairedOutcomes, _rows_on_tasks
from stopwise.compare._strata import SETTLED_TOL
from stopwise.errors import ComparisonError
from stopwise.records import (
    AUDITED_FLAG,
    PREDICTED_CENTRES,
    WOULD_HALT_FLAGS,
    DifferenceInterval,
    OutcomeColumns,
    PredictedState,
    audit_draw,
    flag_mask,
)

__all__ = ["AuditTallies", "PoweredPairs", "audit_disagreements", "powered_boundary", "powered_interval", "powered_pairs", "powered_scale", "predicted_counts", "predicted_note", "predicted_state"]


def powered_scale(audit_fraction: float) -> float:
    """C = max(1, 2/rho - 1): the largest |X_i| a task's prediction-powered difference can take.

    Examples
    --------
    >>> from stopwise.compare import powered_scale
    >>> powered_scale(0.2), powered_scale(1.0)
    (9.0, 1.0)
    """
    return max(1.0, 2.0 / audit_fraction - 1.0)


@dataclasses.dataclass(frozen=True)
class _RowKinds:
    predicted: np.ndarray
    """Rows with status predicted (outcome: the prediction f)."""
    corrected: np.ndarray
    """Audited rows the monitor would have halted (flag would-halt:f)."""
    audited: np.ndarray
    """Rows flagged audited."""
    would: np.ndarray
    """f of the corrected rows (NaN elsewhere)."""


def _row_kinds(rows: OutcomeColumns) -> _RowKinds:
    """Classify the rows and check the data contract of halted and audited runs (row numbers named)."""
    predicted = rows.status == "predicted"
    audited = flag_mask(rows.flags, AUDITED_FLAG)
    would = np.full(len(rows), np.nan)
    for value, flag in enumerate(WOULD_HALT_FLAGS):
        would[flag_mask(rows.flags, flag)] = float(value)
    corrected = ~np.isnan(would)

    def refuse(mask: np.ndarray, rule: str) -> None:
        if mask.any():
            at = np.flatnonzero(mask)
            i = int(at[0])
            raise ComparisonError(
                f"{int(mask.sum())} outcome row(s) break the rule of halted and audited runs: {rule} (first: row {i + 1}, "
                f"system {rows.system[i]!r}, task {rows.task[i]!r}, attempt {int(rows.attempt[i])}, status {rows.status[i]!r}, "
                f"flags {rows.flags[i]!r})"
            )

    refuse(predicted & audited, "an audited run is never halted, so a row flagged 'audited' cannot have status 'predicted'")
    refuse(corrected & ~audited, "a 'would-halt:0' / 'would-halt:1' row must be an audited run (flag 'audited')")
    refuse(corrected & (rows.status != "final"), "an audited run the monitor would have halted has status 'final' (its true outcome)")
    refuse(flag_mask(rows.flags, WOULD_HALT_FLAGS[0]) & flag_mask(rows.flags, WOULD_HALT_FLAGS[1]), "a row holds one would-halt flag")
    return _RowKinds(predicted=predicted, corrected=corrected, audited=audited, would=would)


def predicted_counts(rows: OutcomeColumns) -> tuple[int, int, int]:
    """(predicted, audited, corrected) rows: status predicted, flag audited, audited with a would-halt flag."""
    kinds = _row_kinds(rows)
    return int(kinds.predicted.sum()), int(kinds.audited.sum()), int(kinds.corrected.sum())


@dataclasses.dataclass(frozen=True)
class AuditTallies:
    """Per observed task, what the audited-bound centre reads (``[decision] predicted_centre = "audited-bound"``)."""

    point: np.ndarray
    """P_i: the task's difference with every predicted row at its prediction (the rows as recorded)."""
    wrong_low: np.ndarray
    """Audited wrong weight of the promote test's adverse group: audited would-halt runs of the tested system
    predicted 1 and of the baseline predicted 0 whose outcome differs, each weighted 1 / its system's attempts."""
    wrong_high: np.ndarray
    """The same for the reject test's group (tested predicted 0, baseline predicted 1)."""


@dataclasses.dataclass(frozen=True)
class PoweredPairs:
    """The two systems' paired prediction-powered differences and the bounds on their true differences."""

    paired: PairedOutcomes
    """The pairing with ``differences`` X_i (attempts averaged), over the same tasks as a true-outcome pairing."""
    low: np.ndarray
    """l_i per observed task (in ``paired``'s order): the least true difference the observed rows allow."""
    high: np.ndarray
    """h_i: the greatest."""
    scale: float
    """C, the bound of |X_i| fixed by rho (:func:`powered_scale`)."""
    used: int
    """Predicted and corrected rows on the observed tasks."""
    audit: AuditTallies | None = None
    """The audit tallies of the observed tasks (in ``paired``'s order) for the audited-bound centre."""


def powered_pairs(
    rows: OutcomeColumns, tested: str, audit_fraction: float, pair: Callable[[OutcomeColumns], PairedOutcomes]
) -> PoweredPairs:
    """Pair the prediction-powered values Y_hat of the rows, and the bounds l_i, h_i of the true differences.

    ``pair`` pairs outcome rows as the decision does (its statuses must include ``predicted``); it is called
    three times on rows differing only in ``outcome``, so the three pairings hold the same tasks in one order.

    Raises
    ------
    ComparisonError
        A row breaks the contract of halted and audited runs, or the rows hold predicted or corrected rows
        and rho is 0 (no audit), or predicted rows and rho is 1 (every run audited).

    Examples
    --------
    A's run on t1 was halted with prediction 1; A's run on t2 was audited, would have been predicted 1, and failed:

    >>> import stopwise
    >>> from stopwise.compare import pair_outcomes
    >>> from stopwise.compare._predicted import powered_pairs
    >>> rows = stopwise.outcome_columns([
    ...     {"system": "A", "task": "t1", "outcome": 1, "status": "predicted", "flags": "predicted"},
    ...     {"system": "A", "task": "t2", "outcome": 0, "flags": "audited;would-halt:1"},
    ...     {"system": "B", "task": "t1", "outcome": 0}, {"system": "B", "task": "t2", "outcome": 0}])
    >>> p = powered_pairs(rows, "A", 0.5, lambda r: pair_outcomes(r, "A", "B", statuses=("final", "predicted")))
    >>> p.paired.differences.tolist(), p.low.tolist(), p.high.tolist(), p.scale
    ([1.0, -1.0], [0.0, 0.0], [1.0, 0.0], 3.0)
    """
    kinds = _row_kinds(rows)
    if (kinds.predicted.any() or kinds.corrected.any()) and audit_fraction <= 0.0:
        raise ComparisonError(
            '[decision] predicted = "prediction-powered" needs audits: set [early] audit_fraction > 0 before the run '
            f"(the rows hold {int(kinds.predicted.sum())} predicted and {int(kinds.corrected.sum())} audited would-halt row(s))"
        )
    if kinds.predicted.any() and audit_fraction >= 1.0:
        raise ComparisonError("[early] audit_fraction = 1 audits every run, so no run is halted; yet the rows hold predicted rows")
    y = rows.outcome
    tested_row = rows.system == tested
    value = np.where(kinds.corrected, kinds.would + (y - kinds.would) / audit_fraction if audit_fraction > 0 else y, y)
    low = np.where(kinds.predicted, np.where(tested_row, 0.0, 1.0), y)
    high = np.where(kinds.predicted, np.where(tested_row, 1.0, 0.0), y)
    low[kinds.predicted & np.isnan(y)] = np.nan  # an unusable row stays unusable in every pairing
    high[kinds.predicted & np.isnan(y)] = np.nan
    paired = pair(rows.with_outcome(value))
    lows, highs = (pair(rows.with_outcome(v)) for v in (low, high))
    if not (np.array_equal(lows.tasks, paired.tasks) and np.array_equal(highs.tasks, paired.tasks)):
        raise ComparisonError("internal: the prediction-powered pairings differ in their tasks")  # pragma: no cover
    observed = _rows_on_tasks(rows, paired.tasks)
    used = int(((kinds.predicted | kinds.corrected) & observed).sum())
    audit = _audit_tallies(rows, kinds, tested_row, pair, paired.tasks)
    return PoweredPairs(paired=paired, low=lows.differences, high=highs.differences, scale=powered_scale(audit_fraction), used=used, audit=audit)


def _audit_tallies(
    rows: OutcomeColumns, kinds: _RowKinds, tested_row: np.ndarray, pair: Callable[[OutcomeColumns], PairedOutcomes], tasks: np.ndarray
) -> AuditTallies:
    """P_i and the audited wrong weights per task, by three more pairings of the same rows.

    A pairing's difference is mean_A(v) - mean_B(v) per task (attempts averaged); with v the wrong indicator
    on the tested system's rows and 1 - it on the baseline's, the difference plus 1 is the sum of the
    indicators weighted 1 / attempts over both systems.
    """
    y = rows.outcome
    wrong = kinds.corrected & (y != kinds.would)
    tallies = [pair(rows).differences]
    for guess_tested in (1.0, 0.0):  # promote side: tested predicted 1, baseline predicted 0; reject side: the reverse
        adverse = wrong & np.where(tested_row, kinds.would == guess_tested, kinds.would == 1.0 - guess_tested)
        v = np.where(tested_row, adverse.astype(float), 1.0 - adverse.astype(float))
        v[np.isnan(y)] = np.nan
        result = pair(rows.with_outcome(v))
        if not np.array_equal(result.tasks, tasks):
            raise ComparisonError("internal: the audit tallies' pairing differs in its tasks")  # pragma: no cover
        tallies.append(result.differences + 1.0)
    return AuditTallies(point=tallies[0], wrong_low=tallies[1], wrong_high=tallies[2])


def audit_disagreements(
    rows: OutcomeColumns, audit_fraction: float, audit_seed: int, probabilities: np.ndarray | None = None, *,
    tested: str | None = None, coupling: str = "independent",
) -> str | None:  # fmt: skip
    """The rows whose ``audited`` flag disagrees with the pre-registered draw, in words (None: every row agrees).

    A final or predicted row is drawn for audit iff ``audit_draw(audit_seed, system, task, attempt) < rho`` (with
    ``tested`` and ``coupling`` under antithetic audits)
    (:func:`stopwise.records.audit_draw`); the prediction-powered guarantee assumes the audited runs are exactly
    those. A disagreement means the audits were chosen otherwise, or the rows name the systems differently from
    the audit key (``LiveHalting.task(task, system=...)``).

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare._predicted import audit_disagreements
    >>> rows = stopwise.outcome_columns([{"system": "A", "task": "t", "outcome": 1, "flags": "audited"}])
    >>> audit_disagreements(rows, 1.0, 0) is None, audit_disagreements(rows, 0.0, 0)[:40]
    (True, '1 row(s) disagree with the audit draw of')
    """
    usable = (rows.status == "final") | (rows.status == "predicted")
    audited = flag_mask(rows.flags, AUDITED_FLAG)
    rate = np.full(len(rows), audit_fraction) if probabilities is None else probabilities
    if probabilities is not None:
        usable &= ~np.isnan(probabilities)
    drawn = np.fromiter(
        (
            audit_draw(audit_seed, s, t, a, tested=tested, coupling=coupling) < p
            for s, t, a, p in zip(rows.system, rows.task, rows.attempt.tolist(), rate.tolist(), strict=True)
        ),
        dtype=bool,
        count=len(rows),
    )
    wrong = usable & (audited != drawn)
    if not wrong.any():
        return None
    i = int(np.flatnonzero(wrong)[0])
    return (
        f"{int(wrong.sum())} row(s) disagree with the audit draw of [early] audit_seed = {audit_seed}, audit_fraction = "
        f"{audit_fraction:g} (first: system {rows.system[i]!r}, task {rows.task[i]!r}, attempt {int(rows.attempt[i])}, "
        f"{'flagged audited but not drawn' if audited[i] else 'drawn but not flagged audited'}): the prediction-powered "
        "guarantee assumes the audited runs are exactly the drawn ones (check the system names of the audit key)"
    )


def _powered_paths(
    x: np.ndarray, low_sum: np.ndarray, high_sum: np.ndarray, m0: np.ndarray, n_pop: int, scale: float, strategy: str, alpha: float,
    truncation: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Log K_t of the promote and reject tests (module docstring's claim), shape (len(m0), T): one row per null mean m0.

    ``low_sum`` / ``high_sum`` are the lower and upper bounds of the true sums S_1, ..., S_T the centre and the
    logical bounds use (worst case or audited bound, :func:`_centre_sums`); ``alpha`` is the test's level; ``truncation``
    the bets' c (None: each strategy's default). With
    (R, T) ``x``, ``low_sum`` and ``high_sum`` (R sequences, looks along the last axis) and one m0, shape (R, T).
    """
    means = np.asarray(m0, dtype=float).reshape(-1, 1)
    z = x / scale
    t = np.arange(1, z.shape[-1] + 1, dtype=float)
    s_prev = np.cumsum(z, axis=-1) - z
    q_prev = np.cumsum(z * z, axis=-1) - z * z
    left = n_pop - t + 1.0
    start = np.zeros((*low_sum.shape[:-1], 1))
    low_prev, high_prev = np.concatenate((start, low_sum[..., :-1]), axis=-1), np.concatenate((start, high_sum[..., :-1]), axis=-1)
    centre_up = np.clip((n_pop * means - low_prev) / left, -1.0, 1.0) / scale
    centre_down = np.clip((n_pop * means - high_prev) / left, -1.0, 1.0) / scale
    mu = s_prev / t
    variance = (1.0 / scale**2 + q_prev - mu * s_prev * ((t + 1.0) / t)) / t
    np.maximum(variance, 1e-12, out=variance)
    up_parts, down_parts = _bet_parts(mu - centre_up, variance, alpha), _bet_parts(mu - centre_down, variance, alpha)
    parts = (up_parts[0], down_parts[1], np.broadcast_to(up_parts[2], centre_up.shape).copy())
    logs = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, c in _components(strategy, truncation):
            up, down = _component_bets(parts, t, name, n_pop)
            up = np.minimum(up, c / (1.0 + centre_up))
            down = np.minimum(down, c / (1.0 - centre_down))
            logs.append((np.cumsum(np.log1p(up * (z - centre_up)), axis=1), np.cumsum(np.log1p(-down * (z - centre_down)), axis=1)))
    log_p, log_r = _average(logs)
    tol = SETTLED_TOL * n_pop
    log_p[low_sum - (n_pop - t) > n_pop * means + tol] = np.inf
    log_r[high_sum + (n_pop - t) < n_pop * means - tol] = np.inf
    return log_p, log_r


@dataclasses.dataclass(frozen=True)
class _Centre:
    """The bounds of the past true sums the boundary centres on, and the level its betting test runs at."""

    low_sum: np.ndarray
    high_sum: np.ndarray
    test_alpha: float
    """alpha_2: a under the worst case; a - alpha_1 under the audited bound."""
    label: str


def _centre_sums(
    lo: np.ndarray, hi: np.ndarray, alpha: float, centre: str, audit: AuditTallies | None, audit_fraction: float | None
) -> _Centre:
    """L_t, H_t (worst case) or max(L_t, P_t - U_t), min(H_t, P_t + U'_t) (audited bound; :mod:`._audit_bound`).

    Sums run along the last axis: ``lo`` / ``hi`` (T,) for one sequence or (R, T) for R of them, the tallies alike.
    """
    low_sum, high_sum = np.cumsum(lo, axis=-1), np.cumsum(hi, axis=-1)
    if centre == "worst-case":
        return _Centre(low_sum, high_sum, alpha, "past predictions at their worst case")
    if centre != "audited-bound":
        raise ComparisonError(f"prediction-powered centre must be one of {', '.join(PREDICTED_CENTRES)}; got {centre!r}")
    if audit is None or audit_fraction is None:
        raise ComparisonError("the audited-bound centre needs the audit tallies and the audit fraction")
    rows = (*np.shape(lo)[:-1], -1)
    point, wrong_low, wrong_high = (np.asarray(v, dtype=float).reshape(rows) for v in (audit.point, audit.wrong_low, audit.wrong_high))
    if not (point.shape == wrong_low.shape == wrong_high.shape == np.shape(lo)):
        raise ComparisonError(f"audit tallies: {point.shape[-1]} points, {wrong_low.shape[-1]} and {wrong_high.shape[-1]} wrong weights for {np.shape(lo)[-1]} values")
    alpha_1 = AUDIT_BOUND_SHARE * alpha
    if audit_fraction >= 1.0:  # every run audited: nothing predicted, the worst case is exact
        return _Centre(low_sum, high_sum, alpha - alpha_1, "past predictions within the audited bound")
    point_sum = np.cumsum(point, axis=-1)
    down_cap, up_cap = point_sum - low_sum, high_sum - point_sum  # A_t of each direction
    u_low = audited_wrong_bound(np.cumsum(wrong_low, axis=-1), audit_fraction, alpha_1, np.maximum(down_cap, 0.0))
    u_high = audited_wrong_bound(np.cumsum(wrong_high, axis=-1), audit_fraction, alpha_1, np.maximum(up_cap, 0.0))
    return _Centre(
        np.maximum(low_sum, point_sum - u_low), np.minimum(high_sum, point_sum + u_high), alpha - alpha_1,
        f"past predictions within the audited bound (a_1 = {alpha_1:.3g})",
    )


_LAST_LOOK: tuple[bytes, _Centre] | None = None
"""The last look's centre with its inputs (bytes): ``decide`` asks for the boundary and then the interval of one look."""


def _look_centre_sums(
    lo: np.ndarray, hi: np.ndarray, alpha: float, centre: str, audit: AuditTallies | None, audit_fraction: float | None
) -> _Centre:
    """:func:`_centre_sums` of one look, computed once for consecutive calls on the same inputs (compared byte for byte).

    The audited bound is most of the cost of :func:`powered_boundary` and of :func:`powered_interval`, which ``decide``
    calls one after the other on the same look.
    """
    global _LAST_LOOK
    arrays = [np.ascontiguousarray(v, dtype=float) for v in (lo, hi, *(() if audit is None else (audit.point, audit.wrong_low, audit.wrong_high)))]
    key = repr((alpha, centre, audit_fraction, [a.shape for a in arrays])).encode() + b"".join(a.tobytes() for a in arrays)
    last = _LAST_LOOK
    if last is not None and last[0] == key:
        return last[1]
    sums = _centre_sums(lo, hi, alpha, centre, audit, audit_fraction)
    sums.low_sum.flags.writeable = sums.high_sum.flags.writeable = False  # shared by the next call
    _LAST_LOOK = (key, sums)
    return sums


def _check_ranges(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, scale: float) -> None:
    """Finite values within +/- C and bounds l <= h within [-1, 1] (any shape)."""
    if not (np.isfinite(x).all() and np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ComparisonError("prediction-powered differences and their bounds must be finite numbers")
    if (np.abs(x) > scale + 1e-9).any() or (lo > hi + 1e-12).any() or (np.abs(lo) > 1 + 1e-12).any() or (np.abs(hi) > 1 + 1e-12).any():
        raise ComparisonError(f"prediction-powered differences must lie in [-{scale:g}, {scale:g}] and their bounds l <= h in [-1, 1]")


def powered_boundary(
    values: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    threshold: float,
    *,
    population_size: int,
    alpha: float,
    scale: float,
    strategy: str = "auto",
    centre: str = "worst-case",
    audit: AuditTallies | None = None,
    audit_fraction: float | None = None,
) -> BettingBoundary:
    """The anytime-valid betting boundary on prediction-powered differences (the module docstring's claim).

    Parameters
    ----------
    values : array_like of float
        X_i of the observed prefix of the planned (uniform random) order, |X_i| <= ``scale``.
    low, high : array_like of float
        l_i <= D_i <= h_i, the bounds of each task's true difference given its rows, in [-1, 1].
    threshold : float
        delta.
    population_size : int
        N, the planned tasks.
    alpha : float
        Level of each action.
    scale : float
        C, fixed by rho before the data (:func:`powered_scale`).
    strategy : str, optional
        The pooled betting strategy (default ``auto``: ``mixture``).
    centre : {"worst-case", "audited-bound"}, optional
        How the past predicted rows enter the centre: at their worst case (l_i, h_i), or within the audits'
        time-uniform bound on the unaudited wrong predictions (:mod:`stopwise.compare._audit_bound`; the cutoff
        is split, a_1 = ``AUDIT_BOUND_SHARE`` a for the bound, a - a_1 for the test).
    audit : AuditTallies, optional
        Per task P_i and the audited wrong weights (``audited-bound`` only; :func:`powered_pairs` makes them).
    audit_fraction : float, optional
        rho (``audited-bound`` only).

    Returns
    -------
    BettingBoundary
        p-values, log-capital paths and the logical bounds of the true mean (``lower`` / ``upper`` are those
        logical bounds: no confidence sequence is computed). Under ``audited-bound`` the log-capital paths are
        shifted by log(a_2 / a), so crossing log(1/a) means the capital crossed 1/a_2; the p-values compare
        with a only.

    Examples
    --------
    Forty wins and ten ties, no predicted row (l = h = D): the bets are those of the [-1, 1] scale when C = 1.

    >>> import numpy as np
    >>> from stopwise.compare import powered_boundary
    >>> d = np.r_[np.ones(40), np.zeros(10)]
    >>> b = powered_boundary(d, d, d, 0.0, population_size=300, alpha=0.05, scale=1.0)
    >>> b.promote, b.reject
    (True, False)
    """
    x, lo, hi = (np.asarray(v, dtype=float).ravel() for v in (values, low, high))
    n_pop = int(population_size)
    if not (len(x) == len(lo) == len(hi)) or len(x) > n_pop:
        raise ComparisonError(f"prediction-powered boundary: {len(x)} values, {len(lo)} lows, {len(hi)} highs for N = {n_pop}")
    _check_ranges(x, lo, hi, scale)
    used = resolve_strategy(strategy, False)
    sums = _look_centre_sums(lo, hi, float(alpha), centre, audit, audit_fraction)
    method = f"betting-wor ({_STRATEGY_LABELS[used]}, prediction-powered: range +/-{scale:.4g}, {sums.label}, pooled)"
    n = len(x)
    logical = ((lo.sum() - (n_pop - n)) / n_pop, (hi.sum() + (n_pop - n)) / n_pop)
    if n == 0:
        empty = np.zeros(0)
        return BettingBoundary(1.0, 1.0, False, False, 0, n_pop, float(threshold), float(alpha), -1.0, 1.0, -1.0, 1.0, empty, empty, method)
    paths = _powered_paths(x, sums.low_sum, sums.high_sum, np.array([float(threshold)]), n_pop, float(scale), used, sums.test_alpha)
    shift = np.log(sums.test_alpha / float(alpha))
    log_p, log_r = paths[0][0] + shift, paths[1][0] + shift
    p_promote = float(min(1.0, np.exp(-np.max(log_p))))
    p_reject = float(min(1.0, np.exp(-np.max(log_r))))
    return BettingBoundary(
        p_promote, p_reject, p_promote <= alpha, p_reject <= alpha, n, n_pop, float(threshold), float(alpha),
        logical[0], logical[1], logical[0], logical[1], log_p, log_r, method,
    )  # fmt: skip


INTERVAL_STEP = 0.01
"""Grid step of the prediction-powered confidence sequence (each end rounded outward to it)."""


def powered_interval(
    values: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    *,
    population_size: int,
    alpha: float,
    scale: float,
    centre: str = "worst-case",
    audit: AuditTallies | None = None,
    audit_fraction: float | None = None,
) -> DifferenceInterval:
    """The anytime-valid confidence sequence of the prediction-powered boundary at the current look.

    Each end inverts one of :func:`powered_boundary`'s tests over a grid of means m0 (step :data:`INTERVAL_STEP`):
    ``low`` is the grid point below the least m0 the promote test has not rejected at any look so far, ``high`` the
    point above the greatest m0 the reject test has not rejected; both intersected with the logical bounds of the
    true mean. Each end is a one-sided level-``1 - a`` bound valid at every look (the claim of the module docstring
    at every m0). ``centre``, ``audit`` and ``audit_fraction`` as for :func:`powered_boundary`.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._predicted import powered_interval
    >>> d = np.random.default_rng(1).permutation(np.r_[np.ones(30), np.zeros(60), -np.ones(10)])
    >>> ci = powered_interval(d, d, d, population_size=500, alpha=0.05, scale=1.0)
    >>> ci.kind, ci.level, -1.0 < ci.low < 0.2 < ci.high < 1.0
    ('anytime-valid', 0.9, True)
    """
    x, lo, hi = (np.asarray(v, dtype=float).ravel() for v in (values, low, high))
    n_pop = int(population_size)
    grid = np.round(np.arange(-1.0, 1.0 + INTERVAL_STEP / 2, INTERVAL_STEP), 12)
    sums = _look_centre_sums(lo, hi, float(alpha), centre, audit, audit_fraction)
    log_p, log_r = _powered_paths(x, sums.low_sum, sums.high_sum, grid, n_pop, float(scale), resolve_strategy("auto", False), sums.test_alpha)
    level = np.log(1.0 / sums.test_alpha)
    kept_up, kept_down = np.max(log_p, axis=1) < level, np.max(log_r, axis=1) < level
    logical = ((lo.sum() - (n_pop - len(x))) / n_pop, (hi.sum() + (n_pop - len(x))) / n_pop)
    lower = float(grid[np.argmax(kept_up)] - INTERVAL_STEP) if kept_up.any() else 1.0
    upper = float(grid[np.flatnonzero(kept_down)[-1]] + INTERVAL_STEP) if kept_down.any() else -1.0
    return anytime_interval(
        max(lower, logical[0]), min(upper, logical[1]), alpha,
        f"confidence sequence of the prediction-powered betting-wor test (range +/-{scale:.4g}, {sums.label}; each end one-sided 1 - a "
        f"over every look; {INTERVAL_STEP:g} grid, rounded outward)",
    )


def predicted_note(treatment: str, audit_fraction: float) -> str:
    """The record's sentence on what the treatment of predicted rows guarantees."""
    if treatment == "prediction-powered":
        return (
            f"predicted outcomes entered with the audit correction (rho = {audit_fraction:g}): unbiased and anytime-valid "
            "whatever the halting model's accuracy (Angelopoulos et al. 2023; Zrnic & Candes 2024; Waudby-Smith & Ramdas 2020)"
        )
    return (
        "predicted rows are used only if the policy's statuses list 'predicted', and then as if they were true outcomes "
        "(no account of wrong halts); otherwise they are excluded"
    )


def _any_halting_rows(rows: OutcomeColumns) -> bool:
    """Whether any row is predicted or flagged audited, read from the distinct values (cached codes): no cost per row."""
    statuses = rows.codes("status")[1]
    flags = rows.codes("flags")[1]
    return "predicted" in statuses.tolist() or any(AUDITED_FLAG in str(f) for f in flags.tolist())


def predicted_state(rows: OutcomeColumns, treatment: str, audit_fraction: float, used: int) -> PredictedState | None:
    """The record's account of predicted rows; None under ``exclude`` when no row is predicted or audited."""
    if treatment == "exclude" and not _any_halting_rows(rows):
        return None
    n_predicted, n_audited, n_corrected = predicted_counts(rows)
    if treatment == "exclude" and n_predicted == n_audited == 0:
        return None
    return PredictedState(
        treatment=treatment,  # type: ignore[arg-type]  # the policy's vocabulary word
        audit_fraction=audit_fraction,
        predicted_rows=n_predicted,
        audited_rows=n_audited,
        corrected_rows=n_corrected,
        used_rows=used,
        note=predicted_note(treatment, audit_fraction),
    )
