r"""A time-uniform upper bound on the wrong predictions nobody audited (``predicted_centre = "audited-bound"``).

The prediction-powered boundary (:mod:`stopwise.compare._predicted`) needs, in its centre, a lower bound on
the true sum S_{t-1} of the past tasks' differences. The worst case puts *every* unaudited prediction at its
adverse extreme; this module bounds instead how many of them can be wrong, from the audits.

The bound
---------
Take the would-halt runs of one direction's *adverse group* in arrival order (for the promote test: the
tested system's runs predicted 1 and the baseline's predicted 0 -- a wrong prediction there makes the true
difference smaller than the predicted one; for the reject test the other two kinds). Run j has a weight
a_j = w_j wrong_j in [0, 1]: w_j = 1 / (the system's attempts on the task), wrong_j = 1 when its prediction
is not its outcome. Both are fixed before its audit coin xi_j ~ Bernoulli(rho), drawn independently of
everything else (the pre-registered audit draw). With W_u = sum_j a_j (1 - xi_j) (unaudited wrong weight,
unknown) and W_a = sum_j a_j xi_j (audited wrong weight, observed: an audited run's row carries both its
prediction and its outcome),

    W_u - ((1 - rho) / rho) W_a = sum_j a_j (1 - xi_j / rho) =: Z_n,

a sum of mean-zero increments bounded above by a_j <= 1. With psi(lam) = log(rho e^{lam (1 - 1/rho)} + (1 - rho)
e^{lam}) the log moment generating function of 1 - xi / rho, convexity and psi(0) = 0 give psi(lam a) <=
a psi(lam) for a in [0, 1], so for every lam >= 0

    exp(lam Z_n - psi(lam) (W_u + W_a))

is a nonnegative supermartingale (over the runs, in the filtration that also holds every run's outcome and
prediction); so is any mixture of them over lam. Writing lam = rho u, g(u) = -log(rho e^{-u} + 1 - rho) > 0,
the exponent is ``g(u) (W_u + W_a) - u W_a``. Ville's inequality: with probability at least 1 - alpha_1, at
every run (so at every task's end)

    sum_k pi_k exp(g(u_k) (W_u + W_a) - u_k W_a) < 1 / alpha_1,

and since the left side increases in W_u, W_u < U(W_a), the root of the equality (found by bisection). With
W_a = 0 and large u this is log(1/alpha_1) / -log(1 - rho): the chance that every one of that many wrong
predictions escaped the audit is below alpha_1. The grid :data:`AUDIT_BOUND_U` and weights
:data:`AUDIT_BOUND_WEIGHTS` are fixed constants (any choice made before the data keeps the bound).

How the boundary uses it
------------------------
The predicted rows' sum P_{t-1} (predictions as outcomes) minus the adverse predicted rows' weight A_{t-1}
is the worst case L_{t-1}; on the event E that U holds at every task, S_{t-1} >= P_{t-1} - min(A_{t-1}, U)
= max(L_{t-1}, P_{t-1} - U): the larger of two lower bounds, valid on E. The cutoff a of an action is split
before the data: alpha_1 = :data:`AUDIT_BOUND_SHARE` * a for the bound, alpha_2 = a - alpha_1 for the betting
test (the proof is in :mod:`stopwise.compare._predicted`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["AUDIT_BOUND_SHARE", "AUDIT_BOUND_U", "AUDIT_BOUND_WEIGHTS", "audited_wrong_bound"]

AUDIT_BOUND_SHARE = 0.2
"""alpha_1 / a: the share of an action's cutoff a spent on the bound of unaudited wrong predictions."""
AUDIT_BOUND_U: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 12.0)
"""The grid of u = lam / rho of the mixture (small u: many audited wrongs; large u: few)."""
AUDIT_BOUND_WEIGHTS: tuple[float, ...] = (0.1, 0.1, 0.15, 0.2, 0.45)
"""The mixture's weights pi_k (sum 1), leaning to large u: a useful halting model is mostly right."""
_BISECTIONS = 40


def audited_wrong_bound(audited_wrong: np.ndarray, rho: float, alpha: float, cap: np.ndarray | None = None) -> np.ndarray:
    """U(W_a): the time-uniform level-``1 - alpha`` upper bound on the unaudited wrong weight W_u (module docstring).

    Parameters
    ----------
    audited_wrong : array_like of float
        W_a, the cumulative audited wrong weight of the adverse group at each look (any shape).
    rho : float
        The audit probability, in (0, 1).
    alpha : float
        alpha_1, the bound's error level.
    cap : array_like of float, optional
        Broadcastable to ``audited_wrong``: the bound is returned as ``min(U, cap)`` (the search stops there;
        the boundary takes the minimum with the worst case A anyway).

    Returns
    -------
    numpy.ndarray
        U, same shape as ``audited_wrong``: with probability at least 1 - alpha, W_u < U at every look.

    Examples
    --------
    No audited wrong prediction at rho = 0.5 and alpha_1 = 0.01: fewer than about 7.2 unaudited ones.

    >>> from stopwise.compare._audit_bound import audited_wrong_bound
    >>> round(float(audited_wrong_bound(0.0, 0.5, 0.01)), 2)
    7.16
    """
    w_a = np.asarray(audited_wrong, dtype=float)
    if not 0.0 < rho < 1.0 or not 0.0 < alpha < 1.0:
        raise ValueError(f"the audit bound needs rho and alpha in (0, 1); got rho = {rho!r}, alpha = {alpha!r}")
    flat_cap = None if cap is None else np.broadcast_to(np.asarray(cap, dtype=float), w_a.shape).reshape(-1)
    # each look's bound depends on its (W_a, cap) alone: solved once per distinct pair (a replay's orders repeat few)
    w_distinct, cap_distinct, back = _distinct_pairs(w_a.reshape(-1), flat_cap)
    return _solve(w_distinct, cap_distinct, rho, alpha)[back].reshape(w_a.shape)


def _distinct_pairs(w_a: np.ndarray, cap: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """The distinct (W_a, cap) pairs of flat arrays (bitwise: 0.0 and -0.0 stay apart) and each element's pair index."""
    w_values, w_code = np.unique(w_a.view(np.uint64), return_inverse=True)
    if cap is None:
        return w_values.view(float), None, w_code
    cap_values, cap_code = np.unique(cap.view(np.uint64), return_inverse=True)
    pairs, back = np.unique(w_code * len(cap_values) + cap_code, return_inverse=True)
    return w_values[pairs // len(cap_values)].view(float), cap_values[pairs % len(cap_values)].view(float), back


def _solve(w_a: np.ndarray, cap: np.ndarray | None, rho: float, alpha: float) -> np.ndarray:
    """U of each element of the flat arrays ``w_a`` and ``cap`` (bisection; see :func:`audited_wrong_bound`)."""
    u = np.asarray(AUDIT_BOUND_U)
    g = -np.log(rho * np.exp(-u) + 1.0 - rho)
    log_w = np.log(np.asarray(AUDIT_BOUND_WEIGHTS))
    level = np.log(1.0 / alpha)
    flat = w_a.reshape(-1, 1)

    def log_mixture(x: np.ndarray) -> np.ndarray:  # x = W_u + W_a, shape (M, 1)
        terms = log_w + g * x - u * flat
        top = terms.max(axis=1, keepdims=True)
        return (top + np.log(np.exp(terms - top).sum(axis=1, keepdims=True)))[:, 0]

    # the root lies below W_a + level / min over k of g_k weighted: start from an upper end that is surely above it
    upper_end = flat[:, 0] + (level - log_w.min() + u.max() * flat[:, 0]) / g.min()
    if cap is not None:
        upper_end = np.minimum(upper_end, flat[:, 0] + cap)
    lo, hi = flat[:, 0].copy(), upper_end
    inside = log_mixture(hi.reshape(-1, 1)) < level  # capped below the root: the cap itself bounds W_u
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        below = log_mixture(mid.reshape(-1, 1)) < level
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return np.where(inside, upper_end, hi) - flat[:, 0]
