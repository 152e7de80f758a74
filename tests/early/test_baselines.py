"""The TF-IDF logistic baseline: its step-by-step scores equal a logistic regression on explicit TF-IDF rows."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

from stopwise.early import TfidfLogisticModel
from stopwise.records import Trajectory


def test_incremental_scores_equal_explicit_rows(runs: list[Trajectory]) -> None:
    model = TfidfLogisticModel(min_df=2, min_steps=5, C=5.0).fit(runs[:36])
    run = runs[40]
    got = model.predict_proba([run])[0]
    T = len(run.steps)
    raw = np.tile(model.intercepts_, (T + 1, 1))
    for name, block in model.blocks_.items():
        counter = CountVectorizer(ngram_range=(1, 2), vocabulary=block.vocabulary.tolist())
        if name == "task":
            counts = sp.vstack([counter.transform([run.task_text])] * (T + 1))
        else:
            texts = [s.action if name.startswith("action") else s.observation for s in run.steps]
            steps = counter.transform(texts).toarray()
            zero = np.zeros((1, steps.shape[1]))
            counts = np.vstack([zero, np.cumsum(steps, axis=0)]) if name.endswith("history") else np.vstack([zero, steps])
        rows = normalize(sp.csr_matrix(counts).multiply(block.idf[None, :]))
        raw += rows @ block.projection  # the block's slice of both heads' coefficients
    expected = np.column_stack([expit(model.calibrators_[h].coef_ * raw[:, j] + model.calibrators_[h].intercept_) for j, h in enumerate(("success", "failure"))])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
