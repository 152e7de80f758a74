"""The prefix featurizer: behavioral, textual and reference families, batch and one step at a time.

Two paths produce the same numbers because they run the same per-step code:

- the batch path (:meth:`PrefixFeaturizer.transform`, and the evaluation loop) reads each step's n-gram
  counts from a precomputed :class:`Corpus` and feeds them to the block states;
- the streaming path (:meth:`PrefixFeaturizer.stream`) tokenizes each arriving step and feeds the same
  states.

Only training rows choose vocabularies, idf and SVD bases (:meth:`PrefixFeaturizer.fit`). Nothing reads
``meta``, the outcome, or a step after the current one.

What a "document" is, per block: the task block counts each distinct training task text once; the last-step
blocks count training steps; the history blocks count training runs (a term's document frequency is the number
of runs using it) and fit their SVD basis on each run's prefixes at ¼, ½, ¾ and all of its steps, so that the
basis sees histories of every length.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from stopwise._params import Constraint, Interval, check_params, check_random_state
from stopwise.early._behavior import BEHAVIOR_FEATURES, BEHAVIOR_GROUPS, BehaviorState
from stopwise.early._reference import REFERENCE_FEATURES, REFERENCE_GROUPS, GoldSolution, ReferenceState, as_gold
from stopwise.early._text import TEXT_BLOCKS, BlockState, TextBlock, analyze, fit_block, intern_counts
from stopwise.errors import ArgumentError, InputError
from stopwise.records import Step, Trajectory

__all__ = [
    "FAMILIES",
    "FEATURE_GROUPS",
    "Corpus",
    "FeatureSpec",
    "PrefixFeaturizer",
    "PrefixStream",
    "feature_specs",
    "fit_text",
    "prefix_indicator",
    "term_lookup",
]

Progress = Callable[[int, int, str], None]

FAMILIES: tuple[str, ...] = ("behavioral", "textual", "reference")
"""The feature families, in column order."""

FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "behavioral": tuple(BEHAVIOR_GROUPS),
    "textual": ("task", "action", "feedback"),
    "reference": tuple(REFERENCE_GROUPS),
}
"""Feature groups of each family (the rows of the paper's Table II)."""

_BLOCK_GROUP = {"task": "task", "action_history": "action", "action_last": "action", "feedback_history": "feedback", "feedback_last": "feedback"}
_DYNAMIC = ("action_history", "action_last", "feedback_history", "feedback_last")


@dataclass(frozen=True)
class FeatureSpec:
    """One column of the feature matrix: its name, family and group."""

    name: str
    family: str
    group: str


def feature_specs(n_components: int, *, reference: bool) -> list[FeatureSpec]:
    """Every feature column, in order, for a text width and with or without the reference family.

    Examples
    --------
    >>> specs = feature_specs(2, reference=False)
    >>> [s.name for s in specs if s.family == "textual"][:3]
    ['task_svd_00', 'task_svd_01', 'action_history_svd_00']
    """
    specs = [FeatureSpec(n, "behavioral", g) for g, names in BEHAVIOR_GROUPS.items() for n in names]
    specs += [
        FeatureSpec(f"{block}_svd_{i:02d}", "textual", _BLOCK_GROUP[block]) for block in TEXT_BLOCKS for i in range(n_components)
    ]
    if reference:
        specs += [FeatureSpec(n, "reference", g) for g, names in REFERENCE_GROUPS.items() for n in names]
    return specs


def _gold_lookup(gold: Mapping[str, Any] | None) -> dict[str, GoldSolution] | None:
    if gold is None:
        return None
    if not isinstance(gold, Mapping):
        raise InputError(f"`gold` must be a mapping from task to gold solution; got {type(gold).__name__}")
    return {str(task): as_gold(value, task=str(task)) for task, value in gold.items()}


class Corpus:
    """Label-free, fold-independent precomputation over a list of trajectories.

    Holds each trajectory's behavioral (and reference) feature rows and the interned n-gram counts of
    every task text, action and observation. Folds then fit text blocks on their training rows and read
    counts from here, so the text is tokenized once however many folds and variants are evaluated.
    """

    def __init__(
        self,
        trajectories: Sequence[Trajectory],
        *,
        gold: Mapping[str, Any] | None = None,
        min_df: int = 1,
        progress: Progress | None = None,
    ) -> None:
        self.trajectories = list(trajectories)
        golds = _gold_lookup(gold)
        self.has_reference = golds is not None
        n = len(self.trajectories)
        self.n_steps = np.array([len(t.steps) for t in self.trajectories], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.n_steps)]).astype(np.int64)
        self.behavior: list[np.ndarray] = []
        self.reference: list[np.ndarray] | None = [] if golds is not None else None
        for i, trajectory in enumerate(self.trajectories):
            state = BehaviorState(trajectory.task_text)
            rows = np.empty((len(trajectory.steps) + 1, len(BEHAVIOR_FEATURES)))
            rows[0] = state.initial()
            ref_state = ReferenceState(golds.get(trajectory.task)) if golds is not None else None
            ref_rows = np.empty((len(trajectory.steps) + 1, len(REFERENCE_FEATURES))) if ref_state is not None else None
            if ref_state is not None and ref_rows is not None:
                ref_rows[0] = ref_state.initial()
            for j, step in enumerate(trajectory.steps, start=1):
                rows[j] = state.update(step)
                if ref_state is not None and ref_rows is not None and state.info is not None:
                    ref_rows[j] = ref_state.update(step, state.info.category)
            self.behavior.append(rows)
            if self.reference is not None and ref_rows is not None:
                self.reference.append(ref_rows)
            if progress is not None and (i + 1) % 25 == 0:
                progress(i + 1, n, "behavioral features")
        if progress is not None:
            progress(n, n, "behavioral features")
        tasks = [t.task_text for t in self.trajectories]
        unique_tasks = sorted(set(tasks))
        position = {text: i for i, text in enumerate(unique_tasks)}
        self.task_of = np.array([position[text] for text in tasks], dtype=np.int64)
        self.task_counts, self.task_terms, self.task_totals = intern_counts(unique_tasks, min_df=min_df)
        if progress is not None:
            progress(0, 2, "tokenizing steps")
        self.action_counts, self.action_terms, self.action_totals = intern_counts(
            [s.action for t in self.trajectories for s in t.steps], min_df=min_df
        )
        if progress is not None:
            progress(1, 2, "tokenizing steps")
        self.feedback_counts, self.feedback_terms, self.feedback_totals = intern_counts(
            [s.observation for t in self.trajectories for s in t.steps], min_df=min_df
        )
        if progress is not None:
            progress(2, 2, "tokenizing steps")
        self.min_df = min_df

    def __len__(self) -> int:
        return len(self.trajectories)

    def step_rows(self, idx: np.ndarray) -> np.ndarray:
        """Global step-row indices of the given trajectories."""
        if len(idx) == 0:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in idx]).astype(np.int64)

    def source(self, name: str) -> tuple[sp.csr_matrix, np.ndarray]:
        """Counts and terms of a text source (``"action"`` or ``"feedback"``)."""
        if name == "action":
            return self.action_counts, self.action_terms
        return self.feedback_counts, self.feedback_terms


def prefix_indicator(corpus: Corpus, idx: np.ndarray, prefixes: Sequence[np.ndarray]) -> sp.csr_matrix:
    """Rows summing the steps 1..k of trajectory i for each (i, k) requested."""
    indptr = [0]
    indices: list[np.ndarray] = []
    for i, ks in zip(idx, prefixes, strict=True):
        start = corpus.offsets[i]
        for k in ks:
            indices.append(np.arange(start, start + k))
            indptr.append(indptr[-1] + int(k))
    cols = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int64)
    return sp.csr_matrix((np.ones(cols.shape[0]), cols, np.asarray(indptr)), shape=(len(indptr) - 1, int(corpus.offsets[-1])))


def fit_text(
    corpus: Corpus, idx: np.ndarray, *, min_df: int, max_features: int, n_components: int, seeds: np.ndarray, progress: Progress | None = None,
) -> dict[str, TextBlock]:
    """Fit the five text blocks on the training trajectories ``idx`` of a corpus (see the module docstring).

    ``progress(done, 5, "text blocks")`` is called before each block.
    """
    if min_df < corpus.min_df:
        raise ArgumentError("corpus was interned with a larger min_df than the featurizer asks for")
    blocks: dict[str, TextBlock] = {}
    if progress is not None:
        progress(0, len(TEXT_BLOCKS), "text blocks")
    tasks = np.unique(corpus.task_of[idx])
    task_docs = corpus.task_counts[tasks]
    blocks["task"], _ = fit_block(
        "task", "static", corpus.task_terms, task_docs, task_docs,
        min_df=min_df, max_features=max_features, n_components=n_components, random_state=int(seeds[0]),
    )
    rows = corpus.step_rows(idx)
    whole = prefix_indicator(corpus, idx, [np.array([corpus.n_steps[i]]) for i in idx])
    quartiles = [np.unique(np.ceil(corpus.n_steps[i] * np.array([0.25, 0.5, 0.75, 1.0])).astype(np.int64)) for i in idx]
    sampled = prefix_indicator(corpus, idx, [q[q > 0] for q in quartiles])
    for s, name in enumerate(_DYNAMIC, start=1):
        if progress is not None:
            progress(s, len(TEXT_BLOCKS), "text blocks")
        source, kind = TEXT_BLOCKS[name]
        counts, terms = corpus.source(source)
        if kind == "last":
            docs = counts[rows]
            svd_rows = docs
        else:
            docs = sp.csr_matrix(whole @ counts)
            svd_rows = sp.csr_matrix(sampled @ counts)
        docs.sum_duplicates()
        docs.sort_indices()
        blocks[name], _ = fit_block(
            name, kind, terms, docs, svd_rows,
            min_df=min_df, max_features=max_features, n_components=n_components, random_state=int(seeds[s]),
        )
    return blocks


def term_lookup(block: TextBlock, terms: np.ndarray) -> np.ndarray:
    """For each of the sorted ``terms``, its column in the block's vocabulary, or -1 when absent."""
    lookup = np.full(terms.shape[0], -1, dtype=np.int64)
    if block.vocabulary.shape[0] and terms.shape[0]:
        at = np.minimum(np.searchsorted(terms, block.vocabulary), terms.shape[0] - 1)
        found = terms[at] == block.vocabulary
        lookup[at[found]] = np.flatnonzero(found)
    return lookup


class PrefixStream:
    """Features of a growing prefix, one step at a time (the monitor's feature state).

    Obtain one from :meth:`PrefixFeaturizer.stream`. :meth:`initial` gives the empty prefix (k = 0);
    each :meth:`update` adds one step and returns the prefix's full feature vector. The cost of an update
    depends on that step's text only.

    Examples
    --------
    >>> from stopwise.records import Step, Trajectory
    >>> runs = [Trajectory(agent="a", task="t", outcome=1, task_text="fix the bug",
    ...                    steps=[Step(action="cat x.py", tool="bash", observation="def f(): pass")])] * 3
    >>> featurizer = PrefixFeaturizer(n_components=2, min_df=1).fit(runs)
    >>> stream = featurizer.stream("fix the bug")
    >>> import numpy as np
    >>> np.array_equal(stream.update(runs[0].steps[0]), featurizer.transform(runs[:1])[0][1], equal_nan=True)
    True
    """

    def __init__(self, featurizer: PrefixFeaturizer, task_text: str, gold: GoldSolution | None) -> None:
        blocks = featurizer.blocks_
        self._behavior = BehaviorState(task_text)
        self._reference = ReferenceState(gold) if featurizer.reference_ else None
        task = blocks["task"]
        self._task = task.project(*task.columns(task_text))
        self._blocks = [blocks[name] for name in _DYNAMIC]
        self._states: list[BlockState] = [block.start() for block in self._blocks]
        self._width = featurizer.n_features_
        self._history = {TEXT_BLOCKS[name][0]: blocks[name] for name in ("action_history", "feedback_history")}
        task_terms = Counter(analyze(task_text))
        task_total = sum(task_terms.values())
        task_known = sum(n for term, n in task_terms.items() if term in task.index)
        self.task_coverage = task_known / task_total if task_total else 1.0
        self._known = 0.0
        self._total = 0.0
        self.k = 0

    def initial(self) -> np.ndarray:
        """Features of the empty prefix (before any step)."""
        parts = [self._behavior.initial(), self._task, *(s.initial() for s in self._states)]
        if self._reference is not None:
            parts.append(self._reference.initial())
        return np.concatenate(parts)

    @property
    def coverage(self) -> tuple[float, float]:
        """Vocabulary coverage of the prefix: ``(task, text)`` shares of word n-grams the training vocabularies know.

        ``task`` covers the task prompt (task block), ``text`` every action and observation so far (action and
        feedback history blocks); 1.0 when there is no text yet.
        """
        return self.task_coverage, (self._known / self._total if self._total else 1.0)

    @property
    def last_category(self) -> str | None:
        """Category of the most recent step."""
        info = self._behavior.info
        return info.category if info is not None else None

    def update(self, step: Step) -> np.ndarray:
        """Add one step; return the features of the prefix ending there."""
        self.k += 1
        behavior = self._behavior.update(step)
        action = Counter(analyze(step.action))
        feedback = Counter(analyze(step.observation))
        for source, counter in (("action", action), ("feedback", feedback)):
            index = self._history[source].index
            self._total += sum(counter.values())
            self._known += sum(n for term, n in counter.items() if term in index)
        texts = []
        for block, state in zip(self._blocks, self._states, strict=True):
            counter = action if TEXT_BLOCKS[block.name][0] == "action" else feedback
            texts.append(state.update(*_columns(block, counter)))
        parts = [behavior, self._task, *texts]
        if self._reference is not None:
            info = self._behavior.info
            parts.append(self._reference.update(step, info.category if info is not None else "other"))
        return np.concatenate(parts)


def _columns(block: TextBlock, counter: Counter[str]) -> tuple[np.ndarray, np.ndarray]:
    index = block.index
    pairs = sorted((j, n) for term, n in counter.items() if (j := index.get(term)) is not None)
    if not pairs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    cols, counts = zip(*pairs, strict=True)
    return np.asarray(cols, dtype=np.int64), np.asarray(counts, dtype=np.float64)


class PrefixFeaturizer(BaseEstimator):
    """Prefix features of trajectories: behavioral, textual (TF-IDF + TruncatedSVD per block), reference.

    Parameters
    ----------
    n_components : int, default 64
        SVD width of each of the five text blocks (the paper's 64).
    min_df : int, default 5
        A term enters a block's vocabulary when found in at least this many training documents.
    max_features : int, default 30000
        Vocabulary cap per block (most frequent terms first).
    random_state : int, numpy.random.Generator or None, default None
        Seeds the randomized SVD.

    Attributes
    ----------
    blocks_ : dict of str to TextBlock
        The fitted text blocks.
    features_ : list of FeatureSpec
        Every column: name, family, group.
    feature_names_out_ : numpy.ndarray of str
        Column names.
    n_features_ : int
        Number of columns.
    reference_ : bool
        Whether the reference family is present (gold solutions were supplied to ``fit``).

    Examples
    --------
    >>> from stopwise.records import Step, Trajectory
    >>> runs = [Trajectory(agent="a", task=f"t{i}", outcome=i % 2, task_text=f"fix bug {i}",
    ...                    steps=[Step(action="cat x.py", tool="bash", observation="def f(): pass")] * 3)
    ...         for i in range(6)]
    >>> f = PrefixFeaturizer(n_components=2, min_df=1).fit(runs)
    >>> [x.shape for x in f.transform(runs[:1])]
    [(4, 117)]
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "n_components": Interval(int, 1, None),
        "min_df": Interval(int, 1, None),
        "max_features": Interval(int, 1, None),
    }

    def __init__(self, *, n_components: int = 64, min_df: int = 5, max_features: int = 30000, random_state: Any = None) -> None:
        self.n_components = n_components
        self.min_df = min_df
        self.max_features = max_features
        self.random_state = random_state

    def _check(self) -> np.random.Generator:
        check_params(type(self).__name__, self.get_params(), self._parameter_constraints)
        return check_random_state(type(self).__name__, self.random_state)

    def fit(self, trajectories: Sequence[Trajectory], y: Any = None, *, gold: Mapping[str, Any] | None = None) -> PrefixFeaturizer:
        """Fit the text blocks on ``trajectories`` (labels are not read)."""
        rng = self._check()
        _check_trajectory_list(trajectories)
        corpus = Corpus(trajectories, gold=gold, min_df=self.min_df)
        return self._fit_corpus(corpus, np.arange(len(corpus)), rng.integers(0, 2**31 - 1, size=len(TEXT_BLOCKS)))

    def _fit_corpus(self, corpus: Corpus, idx: np.ndarray, seeds: np.ndarray, progress: Progress | None = None) -> PrefixFeaturizer:
        check_params(type(self).__name__, self.get_params(), self._parameter_constraints)
        self.blocks_ = fit_text(
            corpus, idx, min_df=self.min_df, max_features=self.max_features, n_components=self.n_components, seeds=seeds, progress=progress
        )
        self.reference_ = corpus.has_reference
        self.features_ = feature_specs(self.n_components, reference=self.reference_)
        self.feature_names_out_ = np.array([s.name for s in self.features_], dtype=object)
        self.n_features_ = len(self.features_)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "blocks_"):
            raise InputError(f"this {type(self).__name__} is not fitted yet; call fit() first")

    def transform(self, trajectories: Sequence[Trajectory], *, gold: Mapping[str, Any] | None = None) -> list[np.ndarray]:
        """Feature rows of every prefix (k = 0..T) of each trajectory: one ``(T + 1) × n_features`` array each."""
        self._check_fitted()
        _check_trajectory_list(trajectories)
        if self.reference_ and gold is None:
            gold = {}
        corpus = Corpus(trajectories, gold=gold if self.reference_ else None, min_df=1)
        return self._transform_corpus(corpus, np.arange(len(corpus)))

    def _transform_corpus(self, corpus: Corpus, idx: np.ndarray, progress: Progress | None = None) -> list[np.ndarray]:
        """Feature rows of every prefix of the trajectories ``idx``; ``progress(done, total, "text features")`` every 25 runs."""
        blocks = [self.blocks_[name] for name in _DYNAMIC]
        sources = [corpus.source(TEXT_BLOCKS[name][0]) for name in _DYNAMIC]
        lookups = [term_lookup(block, terms) for block, (_, terms) in zip(blocks, sources, strict=True)]
        task_block = self.blocks_["task"]
        task_lookup = term_lookup(task_block, corpus.task_terms)
        d = self.n_components
        out: list[np.ndarray] = []
        for done, i in enumerate(idx):
            if progress is not None and done % 25 == 0:
                progress(done, len(idx), "text features")
            T = int(corpus.n_steps[i])
            text = np.zeros((T + 1, len(TEXT_BLOCKS) * d))
            row = corpus.task_counts[corpus.task_of[i]]
            text[:, :d] = task_block.project(*_mapped(task_lookup, row.indices, row.data))
            states = [block.start() for block in blocks]
            start = int(corpus.offsets[i])
            for j in range(T):
                g = start + j
                for b, (state, (counts, _), lookup) in enumerate(zip(states, sources, lookups, strict=True)):
                    lo, hi = counts.indptr[g], counts.indptr[g + 1]
                    cols, values = _mapped(lookup, counts.indices[lo:hi], counts.data[lo:hi])
                    text[j + 1, (b + 1) * d : (b + 2) * d] = state.update(cols, values)
            parts = [corpus.behavior[i], text]
            if self.reference_:
                if corpus.reference is None:
                    parts.append(np.full((T + 1, len(REFERENCE_FEATURES)), np.nan))
                else:
                    parts.append(corpus.reference[i])
            out.append(np.hstack(parts))
        return out

    def _coverage_corpus(self, corpus: Corpus, idx: np.ndarray) -> list[np.ndarray]:
        """Vocabulary coverage ``(task, text)`` of every prefix (k = 0..T) of trajectories ``idx``, as the stream's."""
        task_lookup = term_lookup(self.blocks_["task"], corpus.task_terms)
        known_task = np.bincount(
            np.repeat(np.arange(corpus.task_counts.shape[0]), np.diff(corpus.task_counts.indptr)),
            weights=corpus.task_counts.data * (task_lookup[corpus.task_counts.indices] >= 0),
            minlength=corpus.task_counts.shape[0],
        )
        task_cov = np.where(corpus.task_totals > 0, known_task / np.maximum(corpus.task_totals, 1), 1.0)
        known = np.zeros(corpus.action_counts.shape[0])
        total = corpus.action_totals + corpus.feedback_totals
        for name in ("action_history", "feedback_history"):
            counts, terms = corpus.source(TEXT_BLOCKS[name][0])
            hit = term_lookup(self.blocks_[name], terms)[counts.indices] >= 0
            rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
            known += np.bincount(rows, weights=counts.data * hit, minlength=counts.shape[0])
        out = []
        for i in idx:
            lo, hi = int(corpus.offsets[i]), int(corpus.offsets[i + 1])
            k_cum = np.concatenate([[0.0], np.cumsum(known[lo:hi])])
            t_cum = np.concatenate([[0.0], np.cumsum(total[lo:hi])])
            text = np.where(t_cum > 0, k_cum / np.maximum(t_cum, 1), 1.0)
            out.append(np.column_stack([np.full(hi - lo + 1, task_cov[corpus.task_of[i]]), text]))
        return out

    def coverage(self, trajectories: Sequence[Trajectory]) -> list[np.ndarray]:
        """Vocabulary coverage of every prefix: one ``(T + 1) × 2`` array ``(task, text)`` per trajectory.

        The same numbers as :attr:`PrefixStream.coverage` step by step.

        Examples
        --------
        >>> from stopwise.records import Step, Trajectory
        >>> runs = [Trajectory(agent="a", task="t", outcome=1, task_text="fix the bug",
        ...                    steps=[Step(action="cat x.py", tool="bash", observation="def f(): pass")])] * 3
        >>> f = PrefixFeaturizer(n_components=2, min_df=1).fit(runs)
        >>> new = Trajectory(agent="a", task="u", task_text="fix the parser", steps=[Step(action="grep y.py")])
        >>> f.coverage([new])[0].round(2).tolist()
        [[0.6, 1.0], [0.6, 0.33]]
        """
        self._check_fitted()
        _check_trajectory_list(trajectories)
        corpus = Corpus(trajectories, min_df=1)
        return self._coverage_corpus(corpus, np.arange(len(corpus)))

    def stream(self, task_text: str, *, gold: GoldSolution | str | Mapping[str, Any] | None = None) -> PrefixStream:
        """A :class:`PrefixStream` for one new run of a task."""
        self._check_fitted()
        return PrefixStream(self, task_text, as_gold(gold) if gold is not None else None)


def _mapped(lookup: np.ndarray, indices: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cols = lookup[indices]
    keep = cols >= 0
    return cols[keep], data[keep]


def _check_trajectory_list(trajectories: Any) -> None:
    if isinstance(trajectories, Trajectory) or not isinstance(trajectories, Sequence):
        raise InputError(f"`trajectories` must be a list of Trajectory objects; got {type(trajectories).__name__}")
    for i, t in enumerate(trajectories):
        if not isinstance(t, Trajectory):
            raise InputError(f"`trajectories[{i}]` must be a Trajectory; got {type(t).__name__}")
