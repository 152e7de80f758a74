"""Text blocks against scikit-learn: analyzer, vocabulary, idf, TF-IDF rows, SVD basis, incremental history."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.preprocessing import normalize

from stopwise.early._text import analyze, fit_block, intern

DOCS = [
    "Run the tests again; the tests failed with an AssertionError.",
    "Open src/app.py and read the handler for the failing route.",
    "Edit the handler: replace the broken import with the right one.",
    "Run the tests again. All tests passed now!",
    "Search the repository for the route handler and its tests.",
    "The import failed again; ModuleNotFoundError for the helper module.",
    "Read the README and the contributing guide before editing.",
    "Tests passed: 12 passed, 0 failed. Submitting the patch.",
]


def test_analyzer_matches_scikit_learn() -> None:
    reference = TfidfVectorizer(ngram_range=(1, 2)).build_analyzer()
    for doc in DOCS:
        assert analyze(doc) == reference(doc)


def _block(docs: list[str], min_df: int, max_features: int = 30000, n_components: int = 3, kind: str = "last"):
    counts, terms = intern(docs)
    return fit_block("b", kind, terms, counts, counts, min_df=min_df, max_features=max_features, n_components=n_components, random_state=7)  # type: ignore[arg-type]


@pytest.mark.parametrize("min_df", [1, 2])
def test_vocabulary_idf_and_rows_match_tfidfvectorizer(min_df: int) -> None:
    block, _ = _block(DOCS, min_df)
    ref = TfidfVectorizer(ngram_range=(1, 2), min_df=min_df).fit(DOCS)
    assert block.vocabulary.tolist() == ref.get_feature_names_out().tolist()
    np.testing.assert_allclose(block.idf, ref.idf_, rtol=0, atol=1e-12)
    # a normalised TF-IDF row projected on the basis equals scikit-learn's row times the basis
    rows = ref.transform(DOCS).toarray()
    for doc, row in zip(DOCS, rows, strict=True):
        np.testing.assert_allclose(block.project(*block.columns(doc)), row @ block.projection, rtol=0, atol=1e-12)


def test_max_features_keeps_the_most_frequent_terms() -> None:
    block, _ = _block(DOCS, 1, max_features=5)
    counts = CountVectorizer(ngram_range=(1, 2)).fit(DOCS)
    totals = np.asarray(counts.transform(DOCS).sum(axis=0)).ravel()
    names = counts.get_feature_names_out()
    expected = sorted(names[np.lexsort((np.arange(names.shape[0]), -totals))[:5]].tolist())
    assert block.vocabulary.tolist() == expected


def test_projection_is_truncated_svd_of_the_training_rows() -> None:
    block, _ = _block(DOCS, 1, n_components=3)
    rows = TfidfVectorizer(ngram_range=(1, 2)).fit_transform(DOCS)
    svd = TruncatedSVD(n_components=3, algorithm="randomized", random_state=7).fit(rows)
    np.testing.assert_allclose(block.projection, svd.components_.T, rtol=0, atol=1e-10)


def test_small_vocabularies_pad_the_projection_with_zeros() -> None:
    block, _ = _block(["alpha beta", "alpha gamma"], 2, n_components=8)
    assert block.projection.shape == (1, 8)  # only "alpha" survives min_df=2: no component can be fitted
    assert not block.projection.any()


def test_history_state_equals_the_tfidf_row_of_the_whole_prefix() -> None:
    """The running-sum update gives the projection of the normalised TF-IDF row of all steps so far."""
    block, _ = _block(DOCS, 1, n_components=3, kind="history")
    counts = CountVectorizer(ngram_range=(1, 2), vocabulary=block.vocabulary.tolist()).transform(DOCS)
    state = block.start()
    for k, doc in enumerate(DOCS, start=1):
        got = state.update(*block.columns(doc))
        prefix = sp.csr_matrix(counts[:k].sum(axis=0))
        expected = normalize(prefix.multiply(block.idf[None, :])).toarray() @ block.projection
        np.testing.assert_allclose(got, expected.ravel(), rtol=0, atol=1e-12)


def test_intern_prunes_only_what_no_fold_can_keep() -> None:
    counts, terms = intern(DOCS, min_df=2)
    full, all_terms = intern(DOCS)
    df = np.asarray((full > 0).sum(axis=0)).ravel()
    assert terms.tolist() == all_terms[df >= 2].tolist()
    np.testing.assert_array_equal(counts.toarray(), full[:, np.flatnonzero(df >= 2)].toarray())
