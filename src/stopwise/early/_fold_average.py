"""The deployed heads of a cross-fitted model: the mean of the fold heads' calibrated probabilities.

Cross-fitted calibration (:mod:`stopwise.early._risk`) fits one :class:`~stopwise.early.DualHeadClassifier` per
fold and tests the thresholds on their out-of-fold scores. Deploying the average of those same fold heads —
rather than heads refitted on all runs, which nothing has measured — keeps the deployed model one that the
calibration runs speak for: on simulated runs its wrong-halt rate meets the bound in ≥ 95 % of repetitions,
the refitted model's does not (``experiments/early_risk_simulation.py --cross-fit``). A prediction costs the
sum of the fold heads' boosting rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from stopwise.early._heads import HEADS, DualHeadClassifier
from stopwise.errors import InputError

__all__ = ["FoldAverageClassifier"]


class FoldAverageClassifier:
    """Average the calibrated ``(p_success, p_failure)`` of fitted fold heads.

    Parameters
    ----------
    classifiers : sequence of DualHeadClassifier
        The fitted fold heads (at least one), all on the same feature columns.

    Attributes
    ----------
    classifiers_ : list of DualHeadClassifier
        The fold heads, in fold order.
    backbone : str
        Their backbone (``"lightgbm"`` or ``"logistic"``).
    best_iterations_ : dict of str to int
        Per head, the boosting rounds one prediction evaluates: the sum over the fold heads.
    fold_iterations_ : dict of str to list of int
        Per head, the rounds kept by each fold head.
    validation_groups_ : numpy.ndarray
        The tasks any fold head held out as its validation split (their union).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.early import DualHeadClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] > 0).astype(int); groups = np.arange(400) // 10
    >>> folds = [DualHeadClassifier(n_estimators=10, min_child_samples=5, random_state=s).fit(X, y, groups=groups) for s in (1, 2)]
    >>> average = FoldAverageClassifier(folds)
    >>> x = np.array([[2.0, 0, 0]])
    >>> bool(np.allclose(average.predict_proba(x), (folds[0].predict_proba(x) + folds[1].predict_proba(x)) / 2))
    True
    >>> np.allclose(average.predict_one(x[0]), average.predict_proba(x)[0])
    True
    """

    def __init__(self, classifiers: Sequence[DualHeadClassifier]) -> None:
        folds = list(classifiers)
        if not folds or not all(isinstance(c, DualHeadClassifier) and hasattr(c, "heads_") for c in folds):
            raise InputError("FoldAverageClassifier: `classifiers` must be one or more fitted DualHeadClassifier")
        widths = {int(c.n_features_in_) for c in folds}
        if len(widths) != 1:
            raise InputError(f"FoldAverageClassifier: the fold heads must share one feature width; got {sorted(widths)}")
        self.classifiers_ = folds
        self.backbone = str(folds[0].backbone)
        self.n_features_in_ = widths.pop()
        self.fold_iterations_ = {name: [int(c.best_iterations_[name]) for c in folds] for name in HEADS}
        self.best_iterations_ = {name: int(sum(rounds)) for name, rounds in self.fold_iterations_.items()}
        self.validation_groups_ = np.unique(np.concatenate([np.asarray(c.validation_groups_, dtype=object) for c in folds]))

    @property
    def n_folds(self) -> int:
        """How many fold heads are averaged."""
        return len(self.classifiers_)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Mean calibrated probabilities over the fold heads, shape ``(n_rows, 2)``: ``p_success``, ``p_failure``."""
        return np.mean([c.predict_proba(X) for c in self.classifiers_], axis=0)

    def predict_one(self, x: np.ndarray) -> tuple[float, float]:
        """Mean ``(p_success, p_failure)`` of one feature row (the monitor's path; one thread per fold head)."""
        pairs = np.array([c.predict_one(x) for c in self.classifiers_])
        return float(pairs[:, 0].mean()), float(pairs[:, 1].mean())
