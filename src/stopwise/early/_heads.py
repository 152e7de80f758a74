"""The dual-head classifier: a success head and a failure head, each Platt-calibrated.

Both heads see the same feature matrix and are trained on inverted targets (``y`` and ``1 − y``). A
task-partitioned validation split (all prefixes of a task on one side) drives LightGBM early stopping and
is the only data the Platt calibrators see.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import lightgbm as lgb
import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupShuffleSplit

from stopwise._params import N_JOBS, Constraint, Interval, OneOf, check_params, check_random_state
from stopwise.early._calibration import PlattCalibrator
from stopwise.errors import InputError

__all__ = ["BACKBONES", "HEADS", "DualHeadClassifier", "LightGBMHead", "LogisticHead", "validation_split"]

_EVAL_XY = "eval_X" in inspect.signature(lgb.LGBMClassifier.fit).parameters  # LightGBM >= 4.7 names

HEADS: tuple[str, ...] = ("success", "failure")
"""The two heads, in column order of every probability array."""
BACKBONES: tuple[str, ...] = ("lightgbm", "logistic")
"""Per-head classifiers: gradient-boosted trees (the paper's) or dense logistic regression (a baseline)."""


class LightGBMHead:
    """A fitted LightGBM booster truncated at its best iteration; predicts raw (logit) scores."""

    kind = "lightgbm"

    def __init__(self, booster: lgb.Booster) -> None:
        self.booster = booster

    @property
    def n_iterations(self) -> int:
        """Number of boosting rounds kept."""
        return int(self.booster.current_iteration())

    def raw(self, X: np.ndarray, n_jobs: int | None = None) -> np.ndarray:
        """Raw scores of rows."""
        if X.shape[0] == 0:
            return np.zeros(0)
        return np.asarray(self.booster.predict(X, raw_score=True, num_threads=1 if n_jobs is None else n_jobs), dtype=np.float64)

    def raw_one(self, x: np.ndarray) -> float:
        """Raw score of one row, on one thread (the monitor's path)."""
        return float(self.booster.predict(x.reshape(1, -1), raw_score=True, num_threads=1)[0])

    def to_text(self) -> str:
        """The booster as LightGBM's model text."""
        return str(self.booster.model_to_string())

    @classmethod
    def from_text(cls, text: str) -> LightGBMHead:
        """Rebuild from LightGBM's model text."""
        return cls(lgb.Booster(model_str=text))


class LogisticHead:
    """Standardised dense logistic regression (missing values read as the training mean)."""

    kind = "logistic"

    def __init__(self, mean: np.ndarray, scale: np.ndarray, coef: np.ndarray, intercept: float) -> None:
        self.mean = mean
        self.scale = scale
        self.coef = coef
        self.intercept = intercept

    @property
    def n_iterations(self) -> int:
        return 0

    def _standardise(self, X: np.ndarray) -> np.ndarray:
        Z = (X - self.mean) / self.scale
        return np.where(np.isfinite(Z), Z, 0.0)

    def raw(self, X: np.ndarray, n_jobs: int | None = None) -> np.ndarray:
        return self._standardise(X) @ self.coef + self.intercept

    def raw_one(self, x: np.ndarray) -> float:
        return float(self._standardise(x) @ self.coef + self.intercept)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"mean": self.mean, "scale": self.scale, "coef": self.coef, "intercept": np.array([self.intercept])}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> LogisticHead:
        return cls(arrays["mean"], arrays["scale"], arrays["coef"], float(arrays["intercept"][0]))


def validation_split(groups: np.ndarray, y: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """A boolean validation mask partitioned by group, with both classes on both sides."""
    unique = np.unique(groups)
    if unique.shape[0] < 2:
        raise InputError(f"training data must span at least 2 tasks to hold some out for validation; got {unique.shape[0]}")
    for _ in range(200):
        seed = int(rng.integers(0, 2**31 - 1))
        splitter = GroupShuffleSplit(n_splits=1, test_size=fraction, random_state=seed)
        _, val_idx = next(splitter.split(np.zeros(groups.shape[0]), y, groups))
        mask = np.zeros(groups.shape[0], dtype=bool)
        mask[val_idx] = True
        if np.unique(y[mask]).shape[0] == 2 and np.unique(y[~mask]).shape[0] == 2:
            return mask
    raise InputError(
        "cannot find a task-partitioned validation split with both outcomes on both sides; the training runs need "
        "successes and failures spread over several tasks (or raise `validation_fraction`)"
    )


class DualHeadClassifier(BaseEstimator):
    """Success and failure heads with a task-partitioned validation split and Platt calibration.

    Parameters
    ----------
    backbone : {"lightgbm", "logistic"}, default "lightgbm"
        The per-head classifier.
    n_estimators : int, default 2000
        Maximum boosting rounds (early stopping after ``early_stopping_rounds`` without improvement).
    learning_rate : float, default 0.03
    num_leaves : int, default 31
    max_depth : int, default 6
    min_child_samples : int, default 200
    subsample : float, default 0.75
        Row subsampling per round (bagging every round).
    colsample_bytree : float, default 0.7
    reg_alpha : float, default 0.5
    reg_lambda : float, default 10.0
    early_stopping_rounds : int, default 50
    validation_fraction : float, default 0.15
        Fraction of tasks held out for early stopping and calibration.
    C : float, default 1.0
        Inverse regularisation of the logistic backbone.
    n_jobs : int or None, default None
        Threads for LightGBM training and batch prediction; ``None`` means 1 (as in scikit-learn), ``-1`` all
        cores. On small data one thread is often fastest.
    random_state : int, numpy.random.Generator or None, default None
        Seeds the validation split and the two heads.

    Attributes
    ----------
    heads_ : dict
        ``"success"`` and ``"failure"`` fitted heads.
    calibrators_ : dict of str to PlattCalibrator
        One calibrator per head, fitted on the validation rows only.
    validation_mask_ : numpy.ndarray of bool
        Which training rows formed the validation split.
    validation_groups_ : numpy.ndarray
        The groups (tasks) of the validation split.
    best_iterations_ : dict of str to int
        Boosting rounds kept per head (0 for the logistic backbone).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] > 0).astype(int); groups = np.arange(400) // 10
    >>> clf = DualHeadClassifier(n_estimators=50, min_child_samples=5, random_state=0).fit(X, y, groups=groups)
    >>> p = clf.predict_proba(np.array([[2.0, 0, 0], [-2.0, 0, 0]]))
    >>> bool(p[0, 0] > 0.5 > p[1, 0]) and bool(p[1, 1] > 0.5 > p[0, 1])
    True
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "backbone": OneOf(BACKBONES),
        "n_estimators": Interval(int, 1, None),
        "learning_rate": Interval(float, 0, None, closed="neither"),
        "num_leaves": Interval(int, 2, None),
        "max_depth": Interval(int, -1, None),
        "min_child_samples": Interval(int, 1, None),
        "subsample": Interval(float, 0, 1, closed="right"),
        "colsample_bytree": Interval(float, 0, 1, closed="right"),
        "reg_alpha": Interval(float, 0, None),
        "reg_lambda": Interval(float, 0, None),
        "early_stopping_rounds": Interval(int, 1, None),
        "validation_fraction": Interval(float, 0, 1, closed="neither"),
        "C": Interval(float, 0, None, closed="neither"),
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        *,
        backbone: str = "lightgbm",
        n_estimators: int = 2000,
        learning_rate: float = 0.03,
        num_leaves: int = 31,
        max_depth: int = 6,
        min_child_samples: int = 200,
        subsample: float = 0.75,
        colsample_bytree: float = 0.7,
        reg_alpha: float = 0.5,
        reg_lambda: float = 10.0,
        early_stopping_rounds: int = 50,
        validation_fraction: float = 0.15,
        C: float = 1.0,
        n_jobs: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.backbone = backbone
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.reg_alpha = reg_alpha
        self.reg_lambda = reg_lambda
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.C = C
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit_iv(self, X: Any, y: Any, groups: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        owner = type(self).__name__
        check_params(owner, self.get_params(), self._parameter_constraints)
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0:
            raise InputError(f"{owner}: `X` must be a non-empty 2-D array; got shape {X.shape}")
        y = np.asarray(y).ravel()
        if y.shape[0] != X.shape[0] or not np.all((y == 0) | (y == 1)):
            raise InputError(f"{owner}: `y` must hold one 0/1 label per row of X")
        if groups is None:
            raise InputError(f"{owner}: `groups` (the task of each row) is required for the task-partitioned validation split")
        groups = np.asarray(groups).ravel()
        if groups.shape[0] != X.shape[0]:
            raise InputError(f"{owner}: `groups` must have one entry per row of X; got {groups.shape[0]} for {X.shape[0]} rows")
        w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).ravel()
        if w.shape[0] != X.shape[0] or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InputError(f"{owner}: `sample_weight` must hold one non-negative number per row of X")
        return X, y.astype(np.int64), groups, w

    def validation_mask(self, y: Any, *, groups: Any) -> np.ndarray:
        """The task-partitioned validation split :meth:`fit` draws for these rows, without fitting anything.

        Same ``random_state``, same rows: the same mask as ``fit(X, y, groups=groups).validation_mask_``.

        Examples
        --------
        >>> import numpy as np
        >>> y = np.tile([0, 1], 20); groups = np.arange(40) // 4
        >>> heads = DualHeadClassifier(random_state=3)
        >>> mask = heads.validation_mask(y, groups=groups)
        >>> bool(mask.any()) and all(len(set(mask[groups == g])) == 1 for g in range(10))
        True
        """
        check_params(type(self).__name__, self.get_params(), self._parameter_constraints)
        rng = check_random_state(type(self).__name__, self.random_state)
        return validation_split(np.asarray(groups).ravel(), np.asarray(y).ravel(), self.validation_fraction, rng)

    def fit(self, X: Any, y: Any, *, groups: Any = None, sample_weight: Any = None) -> DualHeadClassifier:
        """Fit both heads and their calibrators.

        Parameters
        ----------
        X : array of shape (n_rows, n_features)
            Prefix features.
        y : array of shape (n_rows,)
            Final outcome (1 success, 0 failure) of each row's run.
        groups : array of shape (n_rows,)
            Task of each row; the validation split never separates a task.
        sample_weight : array of shape (n_rows,), optional
            Row weights (the model passes ``1 / (T + 1)``).
        """
        X, y, groups, w = self._fit_iv(X, y, groups, sample_weight)
        rng = check_random_state(type(self).__name__, self.random_state)
        mask = validation_split(groups, y, self.validation_fraction, rng)
        seeds = rng.integers(0, 2**31 - 1, size=len(HEADS))
        self.heads_: dict[str, Any] = {}
        self.calibrators_: dict[str, PlattCalibrator] = {}
        self.best_iterations_: dict[str, int] = {}
        for name, seed in zip(HEADS, seeds, strict=True):
            target = y if name == "success" else 1 - y
            head = self._fit_head(X[~mask], target[~mask], w[~mask], X[mask], target[mask], w[mask], int(seed))
            raw = head.raw(X[mask], self.n_jobs)
            self.calibrators_[name] = PlattCalibrator().fit(raw, target[mask], sample_weight=w[mask])
            self.heads_[name] = head
            self.best_iterations_[name] = head.n_iterations
        self.validation_mask_ = mask
        self.validation_groups_ = np.unique(groups[mask])
        self.n_features_in_ = X.shape[1]
        return self

    def _fit_head(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, X_val: np.ndarray, y_val: np.ndarray, w_val: np.ndarray, seed: int) -> Any:
        if self.backbone == "logistic":
            finite = np.isfinite(X)
            seen = finite.sum(axis=0)
            mean = np.where(seen > 0, np.where(finite, X, 0.0).sum(axis=0) / np.maximum(seen, 1), 0.0)
            Z = np.where(finite, X, mean)
            scale = Z.std(axis=0)
            scale = np.where(scale > 0, scale, 1.0)
            model = LogisticRegression(C=self.C, max_iter=5000)
            model.fit((Z - mean) / scale, y, sample_weight=w / w.mean())
            return LogisticHead(mean, scale, model.coef_.ravel().copy(), float(model.intercept_[0]))
        model = lgb.LGBMClassifier(
            n_estimators=self.n_estimators,
            learning_rate=self.learning_rate,
            num_leaves=self.num_leaves,
            max_depth=self.max_depth,
            min_child_samples=self.min_child_samples,
            subsample=self.subsample,
            subsample_freq=1,
            colsample_bytree=self.colsample_bytree,
            reg_alpha=self.reg_alpha,
            reg_lambda=self.reg_lambda,
            random_state=seed,
            n_jobs=self.n_jobs if self.n_jobs is not None else 1,
            deterministic=True,
            force_col_wise=True,
            verbose=-1,
        )
        evaluation: dict[str, Any] = (
            {"eval_X": (X_val,), "eval_y": (y_val,)} if _EVAL_XY else {"eval_set": [(X_val, y_val)]}
        )
        model.fit(
            X,
            y,
            sample_weight=w,
            eval_sample_weight=[w_val],
            callbacks=[lgb.early_stopping(self.early_stopping_rounds, verbose=False)],
            **evaluation,
        )
        best = model.best_iteration_ if model.best_iteration_ else model.n_estimators
        return LightGBMHead(lgb.Booster(model_str=model.booster_.model_to_string(num_iteration=best)))

    def _check_fitted(self) -> None:
        if not hasattr(self, "heads_"):
            raise InputError(f"this {type(self).__name__} is not fitted yet; call fit() first")

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw scores, shape ``(n_rows, 2)``: success head, failure head."""
        self._check_fitted()
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise InputError(f"{type(self).__name__}: `X` must have {self.n_features_in_} columns; got shape {X.shape}")
        return np.column_stack([self.heads_[name].raw(X, self.n_jobs) for name in HEADS])

    def predict_proba(self, X: Any) -> np.ndarray:
        """Calibrated probabilities, shape ``(n_rows, 2)``: ``p_success``, ``p_failure``.

        The two columns come from separate heads and need not sum to one.
        """
        raw = self.decision_function(X)
        return np.column_stack([self.calibrators_[name].predict(raw[:, j]) for j, name in enumerate(HEADS)])

    def predict_one(self, x: np.ndarray) -> tuple[float, float]:
        """``(p_success, p_failure)`` of one feature row on one thread (the monitor's fast path)."""
        out = []
        for name in HEADS:
            cal = self.calibrators_[name]
            z = cal.coef_ * self.heads_[name].raw_one(x) + cal.intercept_
            out.append(float(expit(z)))
        return out[0], out[1]
