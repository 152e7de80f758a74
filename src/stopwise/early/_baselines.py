"""The TF-IDF logistic-regression baseline of the paper's Table VI.

Dual heads (success, failure), each a logistic regression over the raw TF-IDF rows of the five text blocks
(before any SVD), calibrated by Platt scaling on a task-partitioned validation split. (The dense
logistic-regression baseline is :class:`~stopwise.early.EarlyOutcomeModel` with ``backbone="logistic"``.)

Training uses at most ``max_prefixes`` evenly spaced prefixes per run (weights ``1 / n_sampled`` keep each
run's total mass at one), because explicit TF-IDF history rows grow with the run. Prediction needs no
explicit rows: a logistic score is linear in each block's normalised TF-IDF row, so it is computed with the
same running sums as the SVD features (:class:`~stopwise.early._text.BlockState`), one step at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize

from stopwise._params import Constraint, Interval, check_params, check_random_state
from stopwise.early._behavior import BEHAVIOR_FEATURES
from stopwise.early._calibration import PlattCalibrator
from stopwise.early._checks import check_trajectories
from stopwise.early._featurizer import Corpus, PrefixFeaturizer, feature_specs, fit_text, prefix_indicator, term_lookup
from stopwise.early._halting import Verdict, first_crossing
from stopwise.early._heads import HEADS, validation_split
from stopwise.early._text import TEXT_BLOCKS, TextBlock
from stopwise.errors import InputError
from stopwise.records import Trajectory

__all__ = ["TfidfLogisticModel"]

_THRESHOLD = Interval(float, 0, 1, closed="right", allow_none=True)


def _last_step_indicator(corpus: Corpus, idx: np.ndarray, samples: list[np.ndarray]) -> sp.csr_matrix:
    """Rows selecting step k of run i for each sampled (i, k); k = 0 gives an empty row."""
    rows: list[int] = []
    cols: list[int] = []
    r = 0
    for i, ks in zip(idx, samples, strict=True):
        for k in ks:
            if k > 0:
                rows.append(r)
                cols.append(int(corpus.offsets[i]) + int(k) - 1)
            r += 1
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(r, int(corpus.offsets[-1])))


class TfidfLogisticModel(BaseEstimator):
    """Dual-head logistic regression on raw TF-IDF text blocks (the paper's "Linear (TF-IDF LR)").

    Parameters
    ----------
    success_threshold, failure_threshold : float or None, default 0.95
    min_halt_step : int, default 1
    min_steps : int, default 10
    min_df : int, default 5
    max_features : int, default 30000
    C : float, default 1.0
        Inverse L2 regularisation of both heads.
    max_prefixes : int, default 10
        Training prefixes sampled per run (evenly spaced, first and last included).
    validation_fraction : float, default 0.15
    random_state : int, numpy.random.Generator or None, default 42

    Attributes
    ----------
    blocks_ : dict of str to TextBlock
        Per block: vocabulary, idf, and as ``projection`` the two heads' coefficients (``n_terms × 2``).
    intercepts_ : numpy.ndarray
        The two heads' intercepts.
    calibrators_ : dict of str to PlattCalibrator
        Fitted on the validation split only.
    validation_groups_ : numpy.ndarray
        Tasks of the validation split.

    Examples
    --------
    >>> from stopwise.records import Step, Trajectory
    >>> def run(i, ok):
    ...     obs = "all good" if ok else "error again"
    ...     return Trajectory(agent="a", task=f"t{i % 8}", outcome=int(ok), task_text="do it",
    ...                       steps=[Step(action="go()", tool="go", observation=obs)] * 10)
    >>> m = TfidfLogisticModel(min_df=1, C=10.0).fit([run(i, i % 2 == 0) for i in range(40)])
    >>> p = m.predict_proba([run(0, True), run(1, False)])
    >>> bool(p[0][-1, 0] > p[1][-1, 0])
    True
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "success_threshold": _THRESHOLD,
        "failure_threshold": _THRESHOLD,
        "min_halt_step": Interval(int, 0, None),
        "min_steps": Interval(int, 0, None),
        "min_df": Interval(int, 1, None),
        "max_features": Interval(int, 1, None),
        "C": Interval(float, 0, None, closed="neither"),
        "max_prefixes": Interval(int, 2, None),
        "validation_fraction": Interval(float, 0, 1, closed="neither"),
    }

    def __init__(
        self,
        *,
        success_threshold: float | None = 0.95,
        failure_threshold: float | None = 0.95,
        min_halt_step: int = 1,
        min_steps: int = 10,
        min_df: int = 5,
        max_features: int = 30000,
        C: float = 1.0,
        max_prefixes: int = 10,
        validation_fraction: float = 0.15,
        random_state: Any = 42,
    ) -> None:
        self.success_threshold = success_threshold
        self.failure_threshold = failure_threshold
        self.min_halt_step = min_halt_step
        self.min_steps = min_steps
        self.min_df = min_df
        self.max_features = max_features
        self.C = C
        self.max_prefixes = max_prefixes
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def _check(self) -> np.random.Generator:
        check_params(type(self).__name__, self.get_params(), self._parameter_constraints)
        return check_random_state(type(self).__name__, self.random_state)

    def fit(self, trajectories: Sequence[Trajectory], y: Any = None) -> TfidfLogisticModel:
        """Fit vocabularies, both heads and their calibrators on finished, labelled runs."""
        rng = self._check()
        runs = [r for r in check_trajectories(trajectories) if len(r.steps) >= self.min_steps]
        if not runs:
            raise InputError(f"no training run has at least `min_steps` = {self.min_steps} steps; lower `min_steps`")
        corpus = Corpus(runs, min_df=self.min_df)
        return self._fit_corpus(corpus, np.arange(len(corpus)), rng)

    def _rows(self, corpus: Corpus, idx: np.ndarray, blocks: dict[str, TextBlock]) -> tuple[sp.csr_matrix, np.ndarray]:
        samples = []
        for i in idx:
            T = int(corpus.n_steps[i])
            samples.append(np.unique(np.round(np.linspace(0, T, min(self.max_prefixes, T + 1))).astype(np.int64)))
        counts_per_run = np.array([s.shape[0] for s in samples])
        parts = []
        for name, block in blocks.items():
            source, kind = TEXT_BLOCKS[name]
            if kind == "static":
                counts, terms = corpus.task_counts, corpus.task_terms
                raw = counts[np.repeat(corpus.task_of[idx], counts_per_run)]
            else:
                counts, terms = corpus.source(source)
                if kind == "history":
                    raw = prefix_indicator(corpus, idx, samples) @ counts
                else:
                    raw = _last_step_indicator(corpus, idx, samples) @ counts
            kept = np.flatnonzero(term_lookup(block, terms) >= 0)
            parts.append(normalize(sp.csr_matrix(sp.csr_matrix(raw)[:, kept].multiply(block.idf[None, :]))))
        return sp.hstack(parts).tocsr(), counts_per_run

    def _fit_corpus(self, corpus: Corpus, idx: np.ndarray, rng: np.random.Generator) -> TfidfLogisticModel:
        seeds = rng.integers(0, 2**31 - 1, size=len(TEXT_BLOCKS))
        vocab = fit_text(corpus, idx, min_df=self.min_df, max_features=self.max_features, n_components=0, seeds=seeds)
        X, per_run = self._rows(corpus, idx, vocab)
        outcomes = np.array([corpus.trajectories[i].outcome for i in idx], dtype=np.int64)
        if np.unique(outcomes).shape[0] < 2:
            raise InputError("training runs must include both successes and failures")
        y = np.repeat(outcomes, per_run)
        w = np.repeat(1.0 / per_run, per_run)
        groups = np.repeat(np.array([corpus.trajectories[i].task for i in idx], dtype=object), per_run)
        mask = validation_split(groups, y, self.validation_fraction, rng)
        coefs, intercepts = [], []
        self.calibrators_: dict[str, PlattCalibrator] = {}
        for name in HEADS:
            target = y if name == "success" else 1 - y
            head = LogisticRegression(C=self.C, solver="liblinear", max_iter=2000, random_state=int(rng.integers(0, 2**31 - 1)))
            head.fit(X[~mask], target[~mask], sample_weight=w[~mask] / w[~mask].mean())
            raw = head.decision_function(X[mask])
            self.calibrators_[name] = PlattCalibrator().fit(raw, target[mask], sample_weight=w[mask])
            coefs.append(head.coef_.ravel())
            intercepts.append(float(head.intercept_[0]))
        coef = np.column_stack(coefs)
        self.blocks_: dict[str, TextBlock] = {}
        start = 0
        for name, block in vocab.items():
            width = block.vocabulary.shape[0]
            self.blocks_[name] = TextBlock(name, block.kind, block.vocabulary, block.idf, coef[start : start + width])
            start += width
        self.intercepts_ = np.array(intercepts)
        self.validation_groups_ = np.unique(groups[mask])
        self.n_train_runs_ = int(idx.shape[0])
        return self

    def _raw_corpus(self, corpus: Corpus, idx: np.ndarray) -> list[np.ndarray]:
        scorer = PrefixFeaturizer(n_components=2)
        scorer.blocks_ = self.blocks_
        scorer.reference_ = False
        scorer.features_ = feature_specs(2, reference=False)
        scorer.n_features_ = len(scorer.features_)
        out = []
        for x in scorer._transform_corpus(corpus, idx):
            text = x[:, len(BEHAVIOR_FEATURES) :].reshape(x.shape[0], len(TEXT_BLOCKS), 2)
            out.append(text.sum(axis=1) + self.intercepts_)
        return out

    def _proba_corpus(self, corpus: Corpus, idx: np.ndarray) -> list[np.ndarray]:
        return [
            np.column_stack([expit(self.calibrators_[n].coef_ * raw[:, j] + self.calibrators_[n].intercept_) for j, n in enumerate(HEADS)])
            for raw in self._raw_corpus(corpus, idx)
        ]

    def _fold_proba(self, corpus: Corpus, train: np.ndarray, test: np.ndarray, cache: dict[Any, Any]) -> tuple[list[np.ndarray], dict[str, Any]]:
        from sklearn.base import clone

        rng = self._check()
        kept = train[corpus.n_steps[train] >= self.min_steps]
        if kept.shape[0] == 0:
            raise InputError(f"a fold has no training run with at least `min_steps` = {self.min_steps} steps")
        fitted = clone(self)._fit_corpus(corpus, kept, rng)
        info = {"n_train_runs": fitted.n_train_runs_, "n_validation_tasks": int(fitted.validation_groups_.shape[0]), "rounds_success": 0, "rounds_failure": 0}
        return fitted._proba_corpus(corpus, test), info

    def predict_proba(self, trajectories: Sequence[Trajectory]) -> list[np.ndarray]:
        """Calibrated ``(p_success, p_failure)`` of every prefix (k = 0..T) of each run."""
        if not hasattr(self, "blocks_"):
            raise InputError("this TfidfLogisticModel is not fitted yet; call fit() first")
        runs = check_trajectories(trajectories, require_outcome=False)
        corpus = Corpus(runs)
        return self._proba_corpus(corpus, np.arange(len(corpus)))

    def predict(self, trajectories: Sequence[Trajectory]) -> list[Verdict | None]:
        """The halt verdict of each finished run, or ``None`` if it never halts."""
        return [
            first_crossing(p[:, 0], p[:, 1], self.success_threshold, self.failure_threshold, min_halt_step=self.min_halt_step)
            for p in self.predict_proba(trajectories)
        ]
