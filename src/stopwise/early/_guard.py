"""The unfamiliar-run guard: refuse to halt a run unlike the runs the thresholds were validated on.

A halting threshold — fixed or risk-controlled — is only as good as the runs it was checked on. The guard
measures, at every prefix, three things the model can compute for a live run, and holds the halt when any
is outside what was seen on the reference runs (the calibration runs when the model was trained with
``max_halt_error``, else its validation split):

1. **Task-text coverage** — the share of the task prompt's word 1–2-grams found in the task block's training
   vocabulary. A prompt from another benchmark shares few of them.
2. **Trajectory-text coverage** — the share of the word 1–2-grams of every action and observation so far
   found in the action- and feedback-history vocabularies (1.0 before any text).
3. **Task similarity** — the cosine similarity of the task prompt's task-block vector (its TF-IDF row
   projected on the training SVD basis) to the nearest task the heads were trained on.
4. **Behaviour out of range** — how many behavioral features lie outside the ``[q, 1 − q]`` quantile range
   (``q = range_quantile``) of the training prefixes (the rows the heads were fitted on).

Each score gets a limit fitted at training time from the reference prefixes — the ``quantile`` (1 %) lower
quantile of the two coverages and of the task similarity, and the ``1 − quantile`` upper quantile of the out-of-range count — so about
``quantile`` of familiar prefixes trip each check. A prefix outside any limit is *unfamiliar*: the monitor
does not halt there and says why (:attr:`~stopwise.early.Verdict.reason`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from stopwise.errors import InputError

__all__ = ["FamiliarityGuard", "fit_guard"]


@dataclass
class FamiliarityGuard:
    """Limits on a prefix's vocabulary coverage and behaviour, fitted at training time.

    Attributes
    ----------
    columns : numpy.ndarray of int
        Positions of the checked behavioral features in the model's feature row (featurizer columns).
    names : list of str
        Their names.
    low, high : numpy.ndarray
        Per checked feature, the training range (``±inf`` when a feature was never observed).
    max_outside : int
        Most features a familiar prefix may have outside their range.
    min_task_coverage, min_text_coverage : float
        Least task-text and trajectory-text coverage of a familiar prefix.
    quantile : float
        Share of reference prefixes each limit was set to exclude.
    reference : str
        What the limits were fitted on (``"calibration runs"`` or ``"validation runs"``).
    n_reference_prefixes : int
        How many prefixes that was.
    task_columns : numpy.ndarray of int
        Positions of the task block's features in the feature row.
    task_vectors : numpy.ndarray
        Unit-length task-block vectors of the training tasks (one row each).
    min_task_similarity : float
        Least cosine similarity to the nearest training task of a familiar prefix.

    Examples
    --------
    >>> import numpy as np
    >>> g = FamiliarityGuard(np.array([0]), ["n_steps"], np.array([1.0]), np.array([30.0]), 0, 0.5, 0.4, 0.01, "calibration runs", 100,
    ...                      np.array([1, 2]), np.array([[1.0, 0.0]]), 0.5)
    >>> g.check(np.array([12.0, 0.9, 0.1]), (0.9, 0.8)) is None
    True
    >>> g.check(np.array([12.0, 0.1, 0.9]), (0.9, 0.8))
    'unfamiliar run: task similarity 0.11 < 0.50 to the nearest training task (the 1% floor of the calibration runs)'
    >>> g.check(np.array([12.0, 0.9, 0.1]), (0.9, 0.8)) is None
    True
    >>> g.check(np.array([80.0, 0.9, 0.1]), (0.2, 0.8))
    'unfamiliar run: task-text coverage 20% < 50% (the 1% floor of the calibration runs)'
    """

    columns: np.ndarray
    names: list[str]
    low: np.ndarray
    high: np.ndarray
    max_outside: int
    min_task_coverage: float
    min_text_coverage: float
    quantile: float
    reference: str
    n_reference_prefixes: int
    task_columns: np.ndarray
    task_vectors: np.ndarray
    min_task_similarity: float

    def task_similarity(self, X: np.ndarray) -> np.ndarray:
        """Cosine similarity of each row's task vector to the nearest training task (0 for an empty one)."""
        T = np.atleast_2d(X)[:, self.task_columns]
        norms = np.linalg.norm(T, axis=1)
        if self.task_vectors.shape[0] == 0:
            return np.zeros(T.shape[0])
        sims = (T @ self.task_vectors.T).max(axis=1)
        return np.where(norms > 0, sims / np.where(norms > 0, norms, 1.0), 0.0)

    def _outside(self, X: np.ndarray) -> np.ndarray:
        values = X[..., self.columns]
        with np.errstate(invalid="ignore"):
            return (values < self.low) | (values > self.high)

    def familiar(self, X: np.ndarray, coverage: np.ndarray) -> np.ndarray:
        """Per prefix row, whether it is familiar (vectorised :meth:`check`).

        Parameters
        ----------
        X : numpy.ndarray of shape (n, n_features)
            Featurizer rows (all columns).
        coverage : numpy.ndarray of shape (n, 2)
            Task and text coverage of each row.
        """
        outside = self._outside(X).sum(axis=1)
        return (
            (self.task_similarity(X) >= self.min_task_similarity)
            & (coverage[:, 0] >= self.min_task_coverage)
            & (coverage[:, 1] >= self.min_text_coverage)
            & (outside <= self.max_outside)
        )

    def check(self, x: np.ndarray, coverage: tuple[float, float]) -> str | None:
        """``None`` for a familiar prefix, else the reason it is unfamiliar (the first limit broken)."""
        where = f"the {100 * self.quantile:g}% floor of the {self.reference}"
        task, text = coverage
        similarity = float(self.task_similarity(x)[0])
        if similarity < self.min_task_similarity:
            return (
                f"unfamiliar run: task similarity {similarity:.2f} < {self.min_task_similarity:.2f} to the nearest training task ({where})"
            )
        if task < self.min_task_coverage:
            return f"unfamiliar run: task-text coverage {100 * task:.0f}% < {100 * self.min_task_coverage:.0f}% ({where})"
        if text < self.min_text_coverage:
            return f"unfamiliar run: trajectory-text coverage {100 * text:.0f}% < {100 * self.min_text_coverage:.0f}% ({where})"
        outside = np.flatnonzero(self._outside(x))
        if outside.shape[0] > self.max_outside:
            j = int(outside[0])
            value = float(x[self.columns[j]])
            side = f"> {self.high[j]:.4g}" if value > self.high[j] else f"< {self.low[j]:.4g}"
            return (
                f"unfamiliar run: {outside.shape[0]} behavioral features outside the training range (at most "
                f"{self.max_outside} in {100 * (1 - self.quantile):g}% of the {self.reference}), e.g. {self.names[j]} = {value:.4g} {side}"
            )
        return None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (infinite bounds as ``None``)."""
        return {
            "columns": [int(c) for c in self.columns],
            "names": list(self.names),
            "low": [None if not np.isfinite(v) else float(v) for v in self.low],
            "high": [None if not np.isfinite(v) else float(v) for v in self.high],
            "max_outside": int(self.max_outside),
            "min_task_coverage": float(self.min_task_coverage),
            "min_text_coverage": float(self.min_text_coverage),
            "quantile": float(self.quantile),
            "reference": self.reference,
            "n_reference_prefixes": int(self.n_reference_prefixes),
            "task_columns": [int(c) for c in self.task_columns],
            "task_vectors": [[float(v) for v in row] for row in self.task_vectors],
            "min_task_similarity": float(self.min_task_similarity),
        }

    @classmethod
    def from_dict(cls, data: Any, n_features: int) -> FamiliarityGuard:
        """Rebuild from :meth:`as_dict` output, checking every field (the data may come from an untrusted file)."""
        try:
            columns = np.array([int(c) for c in data["columns"]], dtype=np.int64)
            low = np.array([-np.inf if v is None else float(v) for v in data["low"]])
            high = np.array([np.inf if v is None else float(v) for v in data["high"]])
            names = [str(n) for n in data["names"]]
            task_columns = np.array([int(c) for c in data["task_columns"]], dtype=np.int64)
            task_vectors = np.array(data["task_vectors"], dtype=np.float64).reshape(-1, task_columns.shape[0])
            guard = cls(
                columns, names, low, high, int(data["max_outside"]), float(data["min_task_coverage"]),
                float(data["min_text_coverage"]), float(data["quantile"]), str(data["reference"]), int(data["n_reference_prefixes"]),
                task_columns, task_vectors, float(data["min_task_similarity"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"guard: malformed ({type(exc).__name__}: {exc})") from None
        if not (columns.shape == low.shape == high.shape and len(names) == columns.shape[0]):
            raise InputError("guard: `columns`, `names`, `low` and `high` must have the same length")
        for name, cols in (("columns", columns), ("task_columns", task_columns)):
            if cols.shape[0] and (cols.min() < 0 or cols.max() >= n_features):
                raise InputError(f"guard: `{name}` must lie in [0, {n_features})")
        return guard


def fit_guard(
    X_train: np.ndarray,
    X_reference: np.ndarray,
    coverage_reference: np.ndarray,
    columns: np.ndarray,
    names: list[str],
    *,
    task_columns: np.ndarray | None = None,
    train_tasks: np.ndarray | None = None,
    train_task_coverage: np.ndarray | None = None,
    quantile: float = 0.01,
    range_quantile: float = 0.001,
    reference: str = "calibration runs",
) -> FamiliarityGuard:
    """Fit the guard's limits.

    Parameters
    ----------
    X_train : numpy.ndarray
        Featurizer rows the heads were fitted on (their behavioral ranges).
    X_reference, coverage_reference : numpy.ndarray
        Featurizer rows and ``(task, text)`` coverage of the reference prefixes (not used to fit the heads).
    columns, names
        The behavioral columns to check and their names.
    task_columns : numpy.ndarray of int, optional
        The task block's columns; with ``train_tasks`` enables the task-similarity check.
    train_tasks : numpy.ndarray, optional
        Task-block vectors of the training tasks (one row each).
    train_task_coverage : numpy.ndarray, optional
        Task-text coverage of the training tasks, to join the reference tasks' in setting the coverage floor.
        Not used by the model: measured on the shared data it lowered the floor and let runs of another
        benchmark through, so the floor comes from the reference tasks alone.
    quantile : float
        Share of reference prefixes each limit excludes.
    range_quantile : float
        Each feature's range is its ``[range_quantile, 1 − range_quantile]`` training quantiles.
    reference : str
        What the reference prefixes are, for messages.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 2)); cov = rng.uniform(0.6, 1.0, size=(1000, 2))
    >>> g = fit_guard(X, X[:500], cov[:500], np.array([0, 1]), ["a", "b"])
    >>> round(g.min_task_coverage, 2), g.max_outside
    (0.61, 0)
    """
    if X_reference.shape[0] == 0:
        raise InputError("the guard needs reference prefixes (calibration or validation runs)")
    values = X_train[:, columns]
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a feature never observed: all-NaN column
        low = np.nanquantile(values, range_quantile, axis=0) if values.shape[0] else np.full(columns.shape[0], -np.inf)
        high = np.nanquantile(values, 1 - range_quantile, axis=0) if values.shape[0] else np.full(columns.shape[0], np.inf)
    low = np.where(np.isfinite(low), low, -np.inf)
    high = np.where(np.isfinite(high), high, np.inf)
    tcols = np.zeros(0, dtype=np.int64) if task_columns is None else np.asarray(task_columns, dtype=np.int64)
    vectors = np.zeros((0, tcols.shape[0])) if train_tasks is None else np.asarray(train_tasks, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1) if vectors.shape[0] else np.zeros(0)
    vectors = vectors[norms > 0] / norms[norms > 0, None] if vectors.shape[0] else vectors
    guard = FamiliarityGuard(columns, list(names), low, high, 0, 0.0, 0.0, quantile, reference, int(X_reference.shape[0]), tcols, vectors, -1.0)
    # task-level limits: one value per reference task; the similarity floor also counts the training tasks'
    # similarity to each other (leave-one-out)
    ref_tasks = np.unique(np.column_stack([coverage_reference[:, :1], X_reference[:, tcols]]), axis=0) if tcols.shape[0] else coverage_reference[:, :1]
    if vectors.shape[0]:
        sims = _similarity(ref_tasks[:, 1:], vectors)
        if vectors.shape[0] > 1:
            gram = vectors @ vectors.T
            np.fill_diagonal(gram, -np.inf)
            sims = np.concatenate([sims, gram.max(axis=1)])
        guard.min_task_similarity = float(np.quantile(sims, quantile, method="lower"))
    outside = guard._outside(X_reference).sum(axis=1)
    guard.max_outside = int(np.quantile(outside, 1 - quantile, method="higher"))
    task_cov = ref_tasks[:, 0] if train_task_coverage is None else np.concatenate([ref_tasks[:, 0], np.asarray(train_task_coverage)])
    guard.min_task_coverage = float(np.quantile(task_cov, quantile, method="lower"))
    guard.min_text_coverage = float(np.quantile(coverage_reference[:, 1], quantile, method="lower"))
    return guard



def _similarity(T: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(T, axis=1)
    sims = (T @ vectors.T).max(axis=1) if T.shape[0] else np.zeros(0)
    return np.where(norms > 0, sims / np.where(norms > 0, norms, 1.0), 0.0)
