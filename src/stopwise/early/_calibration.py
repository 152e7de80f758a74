"""Platt scaling: a one-dimensional weighted logistic regression on a head's raw score.

``p = σ(a · s + b)`` with ``s`` the raw (logit) score of a head, so that ``a · logit(ŝ) + b`` of the paper
is the same map. The slope is constrained to ``a ≥ 0``: calibration never reverses a head's ranking.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from sklearn.base import BaseEstimator

from stopwise.errors import InputError

__all__ = ["PlattCalibrator"]


class PlattCalibrator(BaseEstimator):
    """Monotone Platt scaling fitted by weighted maximum likelihood.

    Parameters
    ----------
    monotone : bool, default True
        Constrain the slope to be non-negative, so the calibrated probability never decreases with the
        raw score.

    Attributes
    ----------
    coef_ : float
        The slope ``a``.
    intercept_ : float
        The intercept ``b``.
    n_samples_ : int
        Number of rows the calibrator was fitted on.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0])
    >>> y = np.array([0, 0, 1, 0, 1, 1])
    >>> cal = PlattCalibrator().fit(s, y)
    >>> bool(cal.coef_ > 0), cal.predict(np.array([-5.0, 5.0])).round(3).tolist()
    (True, [0.001, 0.996])
    """

    def __init__(self, *, monotone: bool = True) -> None:
        self.monotone = monotone

    def fit(self, scores: Any, y: Any, sample_weight: Any = None) -> PlattCalibrator:
        """Fit ``a`` and ``b`` on raw scores and binary labels (both classes needed)."""
        s, t, w = _fit_iv(scores, y, sample_weight)
        w = w / w.sum()

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            z = theta[0] * s + theta[1]
            value = -float(np.sum(w * (t * log_expit(z) + (1.0 - t) * log_expit(-z))))
            r = w * (expit(z) - t)
            return value, np.array([float(r @ s), float(r.sum())])

        bounds = [(0.0, None), (None, None)] if self.monotone else [(None, None), (None, None)]
        result = minimize(loss, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B", bounds=bounds, options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 1000})
        self.coef_ = float(result.x[0])
        self.intercept_ = float(result.x[1])
        self.n_samples_ = int(s.shape[0])
        return self

    def predict(self, scores: Any) -> np.ndarray:
        """Calibrated probabilities of the raw scores."""
        if not hasattr(self, "coef_"):
            raise InputError("this PlattCalibrator is not fitted yet; call fit() first")
        return expit(self.coef_ * np.asarray(scores, dtype=np.float64) + self.intercept_)


def _fit_iv(scores: Any, y: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64).ravel()
    t = np.asarray(y, dtype=np.float64).ravel()
    if s.shape != t.shape or s.shape[0] == 0:
        raise InputError(f"PlattCalibrator: `scores` and `y` must be non-empty and of equal length; got {s.shape[0]} and {t.shape[0]}")
    if not np.all(np.isfinite(s)):
        raise InputError("PlattCalibrator: `scores` must be finite numbers")
    if not np.all((t == 0) | (t == 1)):
        raise InputError("PlattCalibrator: `y` must hold only 0 and 1")
    if t.min() == t.max():
        raise InputError(f"PlattCalibrator: `y` must hold both classes to calibrate; got only {int(t[0])}")
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).ravel()
    if w.shape != s.shape or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise InputError("PlattCalibrator: `sample_weight` must be non-negative finite numbers, one per score, not all zero")
    return s, t, w
