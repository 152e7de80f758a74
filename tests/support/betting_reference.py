"""The stratified betting process before issue 9's speed-up (commit c13331f), kept verbatim as a reference.

The stratified process reports, at every look, the infimum of its log-capital over the null: a
fractional knapsack over the G group means (stopwise.compare._strata). This REFERENCE computes it with
(rows, looks, G) cumulative arrays and a full sort of the groups at every look.
tests/compare/test_betting_strata.py pins the current code to it; benchmarks/stratified_betting.py
times both side by side.
"""

from __future__ import annotations

import numpy as np

from stopwise.compare._betting import _average, _bet_parts, _component_bets, _components, _pooled_moments, _psi

__all__ = ["reference_knapsack_max", "reference_stratified"]

_TOL = 1e-9


# ---- REFERENCE: the stratified process before the speed-up (commit c13331f), verbatim -----------------------
def reference_knapsack_max(coef: np.ndarray, lo: np.ndarray, hi: np.ndarray, m0: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """REFERENCE. max sum_g coef_g m_g subject to sum_g w_g m_g <= m0 and lo <= m <= hi (coef >= 0); -inf if infeasible."""
    budget = m0 - lo @ weights
    capacity = weights * (hi - lo)
    ratio = coef / weights
    order = np.argsort(-ratio, axis=-1)
    cap_sorted = np.take_along_axis(capacity, order, axis=-1)
    ratio_sorted = np.take_along_axis(ratio, order, axis=-1)
    before = np.cumsum(cap_sorted, axis=-1) - cap_sorted
    used = np.clip(budget[..., None] - before, 0.0, cap_sorted)
    value = (coef * lo).sum(axis=-1) + (ratio_sorted * used).sum(axis=-1)
    return np.where(budget < -_TOL, -np.inf, value)


def reference_stratified(
    x: np.ndarray,
    m0: np.ndarray,
    codes: np.ndarray,
    sizes: np.ndarray,
    strategy: str,
    alpha: float,
    truncation: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    """REFERENCE. Log-capital paths (promote, reject) of the stratified process, as ``_betting._stratified`` takes them."""
    n_pop = int(sizes.sum())
    n_groups = len(sizes)
    weights = sizes / n_pop
    _, t, m_wor, mu, variance = _pooled_moments(x, m0, n_pop)
    onehot = codes[..., None] == np.arange(n_groups)
    group_total = np.cumsum(np.where(onehot, x[..., None], 0.0), axis=1)
    group_count = np.cumsum(onehot, axis=1)
    own_total = np.take_along_axis(group_total, codes[..., None], axis=-1)[..., 0] - x
    j = np.take_along_axis(group_count, codes[..., None], axis=-1)[..., 0].astype(float)
    n_g = sizes[codes].astype(float)
    left = n_g - j + 1.0
    centre = (own_total + mu) / j
    spread = (x - centre) ** 2 / 4.0
    slope = n_g / left
    unseen = sizes - group_count
    lo = (group_total - unseen) / sizes
    hi = (group_total + unseen) / sizes
    m0_b = np.broadcast_to(m0, x.shape)
    logs = []
    parts = _bet_parts(mu - m_wor, variance, alpha)
    for name, c in _components(strategy, truncation):
        up, down = _component_bets(parts, t, name, n_pop)
        lam_p, lam_r = np.minimum(up, c / 2.0), np.minimum(down, c / 2.0)
        step_a_p = lam_p * (x + own_total / left) - _psi(2.0 * lam_p) * spread
        step_a_r = -lam_r * (x + own_total / left) - _psi(2.0 * lam_r) * spread
        coef_p = np.cumsum(np.where(onehot, (lam_p * slope)[..., None], 0.0), axis=1)
        coef_r = np.cumsum(np.where(onehot, (lam_r * slope)[..., None], 0.0), axis=1)
        logs.append(
            (
                np.cumsum(step_a_p, axis=1) - reference_knapsack_max(coef_p, lo, hi, m0_b, weights),
                np.cumsum(step_a_r, axis=1) - reference_knapsack_max(coef_r, -hi, -lo, -m0_b, weights),
            )
        )
    return _average(logs)


# ---- end of REFERENCE ---------------------------------------------------------------------------------------
