r"""Textual prefix features: TF-IDF over word 1–2-grams, projected by TruncatedSVD, one block at a time.

Blocks (the paper's Table II, textual family): the task prompt (``task``), the action history and the
last action (``action_history``, ``action_last``), the feedback history and the last feedback
(``feedback_history``, ``feedback_last``). Each block has its own vocabulary, idf and SVD basis, fitted on
training runs only.

The history blocks are updated incrementally. A prefix's TF-IDF row is
``x = (c ⊙ idf) / ‖c ⊙ idf‖₂`` with ``c`` the running n-gram counts (n-grams never cross step boundaries,
so ``c`` is the sum of the steps' counts). The SVD projection is linear, so
``x · W = (Σⱼ (cⱼ ⊙ idf) · W) / ‖c ⊙ idf‖₂``: a running projected sum divided by a norm whose square is
kept as a running sum updated only on the terms the new step touches. One step costs time proportional
to its own text, never to the length of the history.

The tokenizer is scikit-learn's default (lowercase, ``(?u)\b\w\w+\b``, unigrams then bigrams), so a
block's rows equal ``TfidfVectorizer(ngram_range=(1, 2))`` rows on the same vocabulary and idf.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import TruncatedSVD

__all__ = [
    "TEXT_BLOCKS",
    "BlockState",
    "TextBlock",
    "analyze",
    "fit_block",
    "intern",
    "intern_counts",
]

_TOKEN = re.compile(r"(?u)\b\w\w+\b")

BlockKind = Literal["static", "history", "last"]
TEXT_BLOCKS: dict[str, tuple[str, BlockKind]] = {
    "task": ("task", "static"),
    "action_history": ("action", "history"),
    "action_last": ("action", "last"),
    "feedback_history": ("feedback", "history"),
    "feedback_last": ("feedback", "last"),
}
"""Block name → (source text, kind). Sources: the task prompt, step actions, step observations."""


def analyze(text: str) -> list[str]:
    """Word unigrams then bigrams of a text, as scikit-learn's default word analyzer makes them.

    Examples
    --------
    >>> analyze("Run the Tests!")
    ['run', 'the', 'tests', 'run the', 'the tests']
    """
    tokens = _TOKEN.findall(text.lower())
    return tokens + [a + " " + b for a, b in pairwise(tokens)]


def intern(texts: Sequence[str], *, min_df: int = 1) -> tuple[sp.csr_matrix, np.ndarray]:
    """Count the n-grams of each text over one shared, alphabetically sorted term list.

    Terms found in fewer than ``min_df`` texts are dropped (see :func:`intern_counts`).

    Examples
    --------
    >>> counts, terms = intern(["a bb bb", "bb cc"])
    >>> terms.tolist(), counts.toarray().astype(int).tolist()
    (['bb', 'bb bb', 'bb cc', 'cc'], [[2, 1, 0, 0], [1, 0, 1, 1]])
    """
    counts, terms, _ = intern_counts(texts, min_df=min_df)
    return counts, terms


def intern_counts(texts: Sequence[str], *, min_df: int = 1) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Count the n-grams of each text over one shared, alphabetically sorted term list.

    This is label-free bookkeeping (every fold later chooses its own vocabulary from its training rows);
    terms found in fewer than ``min_df`` texts are dropped because no fold could keep them.

    Returns
    -------
    counts : scipy.sparse.csr_matrix
        ``len(texts) × n_terms`` counts, column indices sorted within each row.
    terms : numpy.ndarray of object (str)
        The terms, sorted.
    totals : numpy.ndarray of float
        Every text's n-gram count before ``min_df`` drops any (the denominator of vocabulary coverage).

    Examples
    --------
    >>> counts, terms, totals = intern_counts(["a bb bb", "bb cc"], min_df=2)
    >>> terms.tolist(), totals.tolist()
    (['bb'], [3.0, 3.0])
    """
    index: dict[str, int] = {}
    indptr = [0]
    indices: list[int] = []
    data: list[int] = []
    for text in texts:
        counter = Counter(analyze(text))
        for term, n in counter.items():
            j = index.get(term)
            if j is None:
                j = index[term] = len(index)
            indices.append(j)
            data.append(n)
        indptr.append(len(indices))
    terms = np.empty(len(index), dtype=object)  # object, not fixed-width: one long token must not widen them all
    terms[:] = list(index)
    matrix = sp.csr_matrix(
        (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
        shape=(len(texts), len(index)),
    )
    totals = np.diff(np.concatenate([[0.0], np.cumsum(np.asarray(data, dtype=np.float64))])[np.asarray(indptr)])
    df = np.bincount(matrix.indices, minlength=len(index)) if len(index) else np.zeros(0, dtype=np.int64)
    keep = np.flatnonzero(df >= min_df)
    order = keep[np.argsort(terms[keep], kind="stable")] if keep.shape[0] else keep
    matrix = matrix[:, order].tocsr()
    matrix.sort_indices()
    return matrix, terms[order], totals


@dataclass
class TextBlock:
    """One fitted text block: vocabulary, idf and SVD basis.

    Attributes
    ----------
    name : str
        The block name (a key of :data:`TEXT_BLOCKS`).
    kind : {"static", "history", "last"}
        How the block is updated along a trajectory.
    vocabulary : numpy.ndarray of object (str)
        The kept terms, sorted.
    idf : numpy.ndarray
        Smoothed idf per term: ``ln((1 + n_docs) / (1 + df)) + 1``.
    projection : numpy.ndarray
        ``n_terms × n_components`` basis (``TruncatedSVD.components_.T``, zero-padded columns when the
        training text supports fewer components).
    """

    name: str
    kind: BlockKind
    vocabulary: np.ndarray
    idf: np.ndarray
    projection: np.ndarray
    _index: dict[str, int] | None = field(default=None, repr=False, compare=False)

    @property
    def n_components(self) -> int:
        """Width of the block's feature vector."""
        return int(self.projection.shape[1])

    @property
    def index(self) -> dict[str, int]:
        """Term → column."""
        if self._index is None:
            self._index = {str(t): i for i, t in enumerate(self.vocabulary)}
        return self._index

    def columns(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Columns (ascending) and counts of the block's terms found in ``text``."""
        index = self.index
        pairs = sorted((j, n) for term, n in Counter(analyze(text)).items() if (j := index.get(term)) is not None)
        if not pairs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        cols, counts = zip(*pairs, strict=True)
        return np.asarray(cols, dtype=np.int64), np.asarray(counts, dtype=np.float64)

    def project(self, cols: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The SVD projection of one normalised TF-IDF row given by its columns and counts."""
        weighted = counts * self.idf[cols]
        norm2 = float(weighted @ weighted)
        if norm2 <= 0.0:
            return np.zeros(self.n_components)
        return (weighted @ self.projection[cols]) / np.sqrt(norm2)

    def start(self) -> BlockState:
        """A fresh running state for a history or last-step block."""
        return BlockState(self)


class BlockState:
    """Running state of one block along one trajectory.

    ``update(cols, counts)`` adds one step (its term columns in ascending order and their counts) and
    returns the block's features for the prefix ending at that step.
    """

    __slots__ = ("block", "norm2", "projected", "running")

    def __init__(self, block: TextBlock) -> None:
        self.block = block
        self.running = np.zeros(block.idf.shape[0]) if block.kind == "history" else None
        self.norm2 = 0.0
        self.projected = np.zeros(block.n_components)

    def initial(self) -> np.ndarray:
        """Features of the empty prefix."""
        return np.zeros(self.block.n_components)

    def update(self, cols: np.ndarray, counts: np.ndarray) -> np.ndarray:
        block = self.block
        if self.running is None:
            return block.project(cols, counts)
        if cols.shape[0]:
            idf = block.idf[cols]
            old = self.running[cols]
            new = old + counts
            self.running[cols] = new
            self.norm2 += float(((new * new - old * old) * (idf * idf)).sum())
            self.projected = self.projected + (counts * idf) @ block.projection[cols]
        if self.norm2 <= 0.0:
            return np.zeros(block.n_components)
        return self.projected / np.sqrt(self.norm2)


def fit_block(
    name: str,
    kind: BlockKind,
    terms: np.ndarray,
    documents: sp.csr_matrix,
    svd_rows: sp.csr_matrix,
    *,
    min_df: int,
    max_features: int,
    n_components: int,
    random_state: int,
) -> tuple[TextBlock, np.ndarray]:
    """Fit one block from training rows only.

    Parameters
    ----------
    name, kind
        The block.
    terms : numpy.ndarray of str
        The sorted interned term list that the columns of ``documents`` and ``svd_rows`` refer to.
    documents : scipy.sparse.csr_matrix
        Training documents (counts) that define document frequency and the vocabulary.
    svd_rows : scipy.sparse.csr_matrix
        Training rows (counts) on which the SVD basis is fitted.
    min_df, max_features
        Keep terms found in at least ``min_df`` documents; then at most ``max_features`` by total count
        (ties by term order).
    n_components : int
        Width of the projection (columns beyond what the data supports are zero).
    random_state : int
        Seed of the randomized SVD.

    Returns
    -------
    block : TextBlock
    kept : numpy.ndarray
        Indices into ``terms`` of the kept vocabulary, ascending.
    """
    n_docs = documents.shape[0]
    df = np.bincount(documents.indices, minlength=len(terms)) if len(terms) else np.zeros(0, dtype=np.int64)
    kept = np.flatnonzero(df >= min_df)
    if kept.shape[0] > max_features:
        tf = np.asarray(documents.sum(axis=0)).ravel()[kept]
        top = np.lexsort((kept, -tf))[:max_features]
        kept = np.sort(kept[top])
    idf = np.log((1.0 + n_docs) / (1.0 + df[kept])) + 1.0
    projection = np.zeros((kept.shape[0], n_components))
    rows = svd_rows[:, kept].tocsr()
    rows = sp.csr_matrix(rows.multiply(idf[None, :]))
    norms = np.sqrt(np.asarray(rows.multiply(rows).sum(axis=1)).ravel())
    rows = sp.csr_matrix(sp.diags(np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)) @ rows)
    rows.eliminate_zeros()
    rows = rows[np.flatnonzero(norms > 0)]
    k = min(n_components, kept.shape[0] - 1, rows.shape[0] - 1)
    if k >= 1:
        svd = TruncatedSVD(n_components=k, algorithm="randomized", random_state=random_state)
        with warnings.catch_warnings():  # explained-variance ratios of a tiny corpus may divide by zero
            warnings.simplefilter("ignore", RuntimeWarning)
            svd.fit(rows)
        projection[:, :k] = svd.components_.T
    block = TextBlock(name=name, kind=kind, vocabulary=terms[kept].copy(), idf=idf, projection=projection)
    return block, kept
