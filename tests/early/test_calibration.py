"""Platt calibration: equals a weighted 1-D logistic regression, is monotone, and sees the validation split only."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from stopwise.early import DualHeadClassifier, PlattCalibrator
from stopwise.errors import InputError


def _data(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = rng.normal(size=n) * 2
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.7 * s - 0.4)))).astype(int)
    w = rng.uniform(0.1, 1.0, size=n)
    return s, y, w


def test_platt_equals_weighted_logistic_regression() -> None:
    s, y, w = _data()
    ours = PlattCalibrator().fit(s, y, sample_weight=w)
    ref = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(s[:, None], y, sample_weight=w)
    assert ours.coef_ == pytest.approx(float(ref.coef_[0, 0]), abs=1e-5)
    assert ours.intercept_ == pytest.approx(float(ref.intercept_[0]), abs=1e-5)
    np.testing.assert_allclose(ours.predict(s), ref.predict_proba(s[:, None])[:, 1], rtol=0, atol=1e-6)


def test_calibration_is_monotone_even_for_an_inverted_score() -> None:
    s, y, w = _data()
    grid = np.linspace(-10, 10, 201)
    forward = PlattCalibrator().fit(s, y, sample_weight=w)
    assert np.all(np.diff(forward.predict(grid)) > 0)
    inverted = PlattCalibrator().fit(-s, y, sample_weight=w)  # the best unconstrained slope would be negative
    assert inverted.coef_ == 0.0
    assert np.all(np.diff(inverted.predict(grid)) == 0)
    free = PlattCalibrator(monotone=False).fit(-s, y, sample_weight=w)
    assert free.coef_ < 0


@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [
        ([0.1, 0.2], [1, 1], "both classes"),
        ([0.1, 0.2], [1], "equal length"),
        ([0.1, np.nan], [0, 1], "finite"),
        ([0.1, 0.2], [0, 2], "only 0 and 1"),
    ],
)
def test_platt_rejects_bad_input(scores: list[float], labels: list[int], message: str) -> None:
    with pytest.raises(InputError, match=message):
        PlattCalibrator().fit(scores, labels)


@pytest.fixture(scope="module")
def dual() -> tuple[DualHeadClassifier, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    n = 3000
    groups = np.repeat(np.arange(60), n // 60)
    X = rng.normal(size=(n, 5))
    X[:, 1] += groups % 5  # task-level signal
    y = (rng.random(n) < 1 / (1 + np.exp(-(1.5 * X[:, 0] + 0.3 * X[:, 1] - 1)))).astype(int)
    w = rng.uniform(0.2, 1.0, size=n)
    clf = DualHeadClassifier(n_estimators=200, min_child_samples=40, early_stopping_rounds=20, random_state=5)
    return clf.fit(X, y, groups=groups, sample_weight=w), X, y, w, groups


def test_validation_split_partitions_tasks(dual: tuple) -> None:
    clf, _, y, _, groups = dual
    mask = clf.validation_mask_
    assert set(groups[mask]).isdisjoint(groups[~mask])
    assert set(np.unique(groups[mask])) == set(clf.validation_groups_)
    assert len(clf.validation_groups_) == 9  # 15 % of 60 tasks
    assert set(y[mask]) == {0, 1} and set(y[~mask]) == {0, 1}


def test_calibrators_are_fitted_on_the_validation_rows_only(dual: tuple) -> None:
    """Refit Platt independently on the validation rows' raw scores: same a, b; on the training rows: different."""
    clf, X, y, w, _ = dual
    mask = clf.validation_mask_
    for name, target in (("success", y), ("failure", 1 - y)):
        raw = clf.heads_[name].raw(X)
        ref = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(raw[mask, None], target[mask], sample_weight=w[mask])
        cal = clf.calibrators_[name]
        assert cal.n_samples_ == int(mask.sum())
        assert cal.coef_ == pytest.approx(float(ref.coef_[0, 0]), abs=1e-4)
        assert cal.intercept_ == pytest.approx(float(ref.intercept_[0]), abs=1e-4)
        on_train = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(raw[~mask, None], target[~mask], sample_weight=w[~mask])
        assert abs(float(on_train.coef_[0, 0]) - cal.coef_) > 1e-2


def test_calibration_preserves_each_heads_ranking(dual: tuple) -> None:
    clf, X, *_ = dual
    raw = clf.decision_function(X)
    proba = clf.predict_proba(X)
    for j in range(2):
        order = np.argsort(raw[:, j], kind="stable")
        assert np.all(np.diff(proba[order, j]) >= 0)


def test_single_row_fast_path_equals_batch(dual: tuple) -> None:
    clf, X, *_ = dual
    batch = clf.predict_proba(X[:50])
    for i in range(50):
        assert clf.predict_one(X[i]) == pytest.approx(tuple(batch[i]), abs=1e-15)


def test_classifier_parameter_and_input_errors() -> None:
    X = np.zeros((10, 2))
    y = np.array([0, 1] * 5)
    with pytest.raises(InputError, match=r"`learning_rate` must be a number in \(0, inf\); got -0.1"):
        DualHeadClassifier(learning_rate=-0.1).fit(X, y, groups=np.arange(10))
    with pytest.raises(InputError, match="`groups`"):
        DualHeadClassifier().fit(X, y)
    with pytest.raises(InputError, match="at least 2 tasks"):
        DualHeadClassifier().fit(X, y, groups=np.zeros(10))
