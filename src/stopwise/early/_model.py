"""EarlyOutcomeModel: prefix featurizer + calibrated dual heads + the halting rule, as one estimator."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, clone

from stopwise._params import (
    Constraint,
    Interval,
    OneOf,
    Predicate,
    check_params,
    check_random_state,
    names_predicate,
)
from stopwise.early._checks import check_trajectories
from stopwise.early._featurizer import FAMILIES, FEATURE_GROUPS, Corpus, FeatureSpec, PrefixFeaturizer, Progress
from stopwise.early._fold_average import FoldAverageClassifier
from stopwise.early._guard import FamiliarityGuard, fit_guard
from stopwise.early._halting import Verdict, first_crossing
from stopwise.early._heads import HEADS, DualHeadClassifier
from stopwise.early._quality import MIN_PRECISION, quality_figures, reliability, unvalidated
from stopwise.early._reference import GoldSolution
from stopwise.early._risk import (
    GRID,
    RISK_UNITS,
    RiskControl,
    count_start,
    halting_scores,
    learn_then_test,
    sequence_start,
)
from stopwise.early._runkeys import run_key, run_keys
from stopwise.errors import InputError
from stopwise.records import Trajectory

__all__ = ["DEPLOYED_HEADS", "EXCLUDABLE", "EarlyOutcomeModel"]

EXCLUDABLE: tuple[str, ...] = (*FAMILIES, *(g for groups in FEATURE_GROUPS.values() for g in groups))
"""Names accepted by ``exclude``: a whole family or one group."""
DEPLOYED_HEADS: tuple[str, ...] = ("fold-average", "refit")
"""What a cross-fitted model deploys: the mean of its fold heads, or heads refitted on all training runs."""

_THRESHOLD = Interval(float, 0, 1, closed="right", allow_none=True)


def _steps(progress: Progress | None, total: int) -> Callable[[str | None], None]:
    """A counter of ``total`` fitting steps for ``progress``: a call reports the steps done and names the next (None: all done)."""
    done = 0

    def step(description: str | None) -> None:
        nonlocal done
        if progress is not None:
            progress(done if description is not None else total, total, description or "fitted")
        done += 1

    return step


class EarlyOutcomeModel(BaseEstimator):
    """Predict a run's final pass/fail from its prefix and halt_decision when it may halt (EarlyEval).

    ``fit`` expands every training run of at least ``min_steps`` steps into its prefixes k = 0..T, each
    labelled with the run's final outcome and weighted ``1 / (T + 1)``; fits the text blocks on these runs
    only; holds out a task-partitioned validation split; trains a success head and a failure head (the
    paper's LightGBM configuration by default) with early stopping on that split; and Platt-calibrates
    each head on that split alone. A run halts at the first step where ``p_success ≥ success_threshold``
    or ``p_failure ≥ failure_threshold`` (see :mod:`stopwise.early._halting`).

    Parameters
    ----------
    success_threshold, failure_threshold : float or None, default 0.95
        Halting thresholds ``s`` and ``f``; ``None`` disables a head.
    min_halt_step : int, default 1
        Earliest step at which a run may halt.
    min_steps : int, default 10
        Training runs shorter than this are dropped (the paper's rule).
    exclude : tuple of str, default ()
        Feature families or groups to leave out (ablation), from :data:`EXCLUDABLE`.
    classifier : DualHeadClassifier or None, default None
        The two calibrated heads and their hyperparameters (the paper's LightGBM configuration when ``None``;
        ``DualHeadClassifier(backbone="logistic")`` is the dense-LR baseline). Cloned at fit, with its
        ``random_state`` drawn from the model's; tune it the scikit-learn way, e.g.
        ``model.set_params(classifier__n_estimators=500)``.
    n_components, min_df, max_features
        Text blocks: SVD width (64), minimum document frequency (5), vocabulary cap (30000).
    random_state : int, numpy.random.Generator or None, default 42
        One seed for everything random (SVD, split, heads); the paper's 42 by default.
    max_halt_error : float or None, default None
        Risk-controlled thresholds (:mod:`stopwise.early._risk`, Learn-then-Test): choose each enabled head's
        threshold on calibration runs so that its wrong-halt rate is at most this with probability at least
        ``risk_confidence``. The calibration runs are every training run scored out of fold
        (``calibration_folds``), or the runs of held-out tasks (``calibration_fraction``). The thresholds above
        then only say which heads are enabled (``None`` disables one). ``None``: use the fixed thresholds.
    risk_confidence : float, default 0.9
        ``1 − δ`` of the guarantee.
    risk_unit : {"halted", "runs"}, default "halted"
        The wrong-halt rate as a share of the runs the head halts (one minus its precision), or of all runs.
    calibration_folds : int or None, default 5
        With ``max_halt_error``: cross-fitted calibration — split the training tasks into this many folds
        (every run of a task in one fold), score each fold's runs with heads fitted on the other folds (on the
        model's text blocks, which see no outcome), and test the thresholds on those out-of-fold scores of all
        training runs; the model deploys those fold heads (``deployed_heads``). The guarantee is for models fitted
        like the fold models (see :mod:`stopwise.early._risk`, "Cross-fitted calibration"). ``None``: hold out
        ``calibration_fraction`` of the tasks instead (an exact guarantee for this model, on fewer calibration runs).
    calibration_groups : {"task", "agent"}, default "task"
        What a cross-fitting fold holds out whole: tasks (every run of a task in one fold: calibration runs are
        new tasks) or agents (every run of an agent in one fold: calibration runs are new agents on tasks the
        fold heads may have seen — the shift of leave-one-agent-out; needs at least ``calibration_folds`` agents).
    calibration_fraction : float, default 0.3
        Share of training tasks held out as calibration runs when ``max_halt_error`` is set and
        ``calibration_folds`` is ``None``.
    deployed_heads : {"fold-average", "refit"}, default "fold-average"
        What a cross-fitted model (``max_halt_error`` with ``calibration_folds``) deploys. ``"fold-average"``: the
        mean of the ``calibration_folds`` fold heads' calibrated probabilities — the heads whose out-of-fold scores
        chose the thresholds, so the calibration runs speak for the deployed model (its bound held in ≥ 95 % of
        simulated repetitions); no heads are refitted on all runs, and a prediction costs the fold heads' rounds
        together. ``"refit"``: heads refitted on all training runs (the fixed-threshold model's heads; the bound
        held in 87–91 % of repetitions). Ignored otherwise (the heads are fitted on all training runs).
    guard_quantile : float or None, default 0.01
        The unfamiliar-run guard (:mod:`stopwise.early._guard`): each of its limits excludes this share of
        the reference prefixes (calibration runs, else the validation split). ``None`` turns the guard off.

    Attributes
    ----------
    featurizer_ : PrefixFeaturizer
        Text blocks fitted on the training runs.
    classifier_ : DualHeadClassifier or FoldAverageClassifier
        The deployed heads: fitted on all training runs, or the fold heads' average (``deployed_heads``).
    deployed_heads_ : str
        ``"fold-average"`` or ``"refit"``: what :attr:`classifier_` is (also in :attr:`quality_`).
    columns_ : numpy.ndarray of int
        Columns of the featurizer's output that the heads use (after ``exclude``).
    features_ : list of FeatureSpec
        The used columns: name, family, group (the feature manifest).
    n_train_runs_, n_train_prefixes_ : int
        Training volume after the ``min_steps`` filter (runs the heads were fitted on).
    train_run_keys_ : numpy.ndarray of str or None
        A digest of each training run's identity (:func:`~stopwise.early._runkeys.run_key`), for
        :meth:`trained_on`; ``None`` for a model saved before 0.2 without them.
    thresholds_ : dict of str to float or None
        The thresholds in use per head (chosen by Learn-then-Test when ``max_halt_error`` is set).
    risk_control_ : dict of str to RiskControl
        Per enabled head, the Learn-then-Test result (empty without ``max_halt_error``).
    reliability_ : dict of str to list
        Per head and grid threshold, ``[threshold, halted, precision]`` on the reference runs
        (:func:`~stopwise.early._quality.reliability`): with the guard on, a head does not halt at a threshold
        below the lowest one at which the reference runs *show* its precision ≥ 90 % (one-sided Clopper–Pearson
        bound at ``risk_confidence``, :func:`~stopwise.early._quality.validated_floor`); the verdict says so.
    calibration_tasks_ : numpy.ndarray of str
        The tasks of the calibration runs (empty without ``max_halt_error``; all training tasks when cross-fitted).
    calibration_scores_ : numpy.ndarray of shape (n_calibration, 2)
        The calibration runs' halting scores per head (out of fold when cross-fitted), with
        ``calibration_outcome_`` their outcomes: Learn-then-Test can be rerun at another ε or unit on them
        (not saved with the model: empty after :meth:`load`).
    guard_ : FamiliarityGuard or None
        The unfamiliar-run guard.
    quality_ : dict
        Validation figures at ``thresholds_`` on the reference runs (calibration, else validation split):
        per head halted runs and precision, steps saved, |ΔPass@1|, and warnings (see :func:`quality_figures`);
        ``deployed_heads`` says which heads predict.

    Examples
    --------
    >>> from stopwise.early import DualHeadClassifier, EarlyOutcomeModel
    >>> from stopwise.records import Step, Trajectory
    >>> def run(i, ok):
    ...     obs = "done" if ok else "[isError] failed"
    ...     return Trajectory(agent=f"a{i % 3}", task=f"t{i % 8}", outcome=int(ok), task_text="update the page",
    ...                       steps=[Step(action="update_page()", tool="update_page", observation=obs)] * 12)
    >>> runs = [run(i, i % 2 == 0) for i in range(48)]
    >>> heads = DualHeadClassifier(min_child_samples=5, n_estimators=10)
    >>> model = EarlyOutcomeModel(n_components=4, min_df=1, classifier=heads, guard_quantile=None).fit(runs)
    >>> model.predict([run(1, False)])[0].predicted
    0

    With the guard on (the default), a threshold the validation runs do not show to be right ≥ 90 % of the time
    is held; 48 toy runs cannot show it:

    >>> guarded = EarlyOutcomeModel(n_components=4, min_df=1, classifier=heads).fit(runs)
    >>> guarded.predict([run(1, False)])[0] is None
    True

    Risk-controlled thresholds, cross-fitted on 3 task folds: the model deploys the mean of the 3 fold heads

    >>> mixed = [run(i, i % 3 == 0) for i in range(96)]  # both outcomes in every task
    >>> risk = EarlyOutcomeModel(n_components=4, min_df=1, classifier=heads, max_halt_error=0.1, calibration_folds=3).fit(mixed)
    >>> type(risk.classifier_).__name__, risk.classifier_.n_folds, risk.deployed_heads_
    ('FoldAverageClassifier', 3, 'fold-average')
    """

    _parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "success_threshold": _THRESHOLD,
        "failure_threshold": _THRESHOLD,
        "min_halt_step": Interval(int, 0, None),
        "min_steps": Interval(int, 0, None),
        "exclude": names_predicate(EXCLUDABLE, "feature families or groups"),
        "classifier": Predicate(lambda v: v is None or isinstance(v, DualHeadClassifier), "a DualHeadClassifier or None"),
        "n_components": Interval(int, 1, None),
        "min_df": Interval(int, 1, None),
        "max_features": Interval(int, 1, None),
        "max_halt_error": Interval(float, 0, 1, closed="neither", allow_none=True),
        "risk_confidence": Interval(float, 0, 1, closed="neither"),
        "risk_unit": OneOf(RISK_UNITS),
        "calibration_folds": Interval(int, 2, None, allow_none=True),
        "calibration_groups": OneOf(("task", "agent")),
        "calibration_fraction": Interval(float, 0, 1, closed="neither"),
        "deployed_heads": OneOf(DEPLOYED_HEADS),
        "guard_quantile": Interval(float, 0, 0.5, closed="neither", allow_none=True),
    }

    def __init__(
        self,
        *,
        success_threshold: float | None = 0.95,
        failure_threshold: float | None = 0.95,
        min_halt_step: int = 1,
        min_steps: int = 10,
        exclude: tuple[str, ...] = (),
        classifier: DualHeadClassifier | None = None,
        n_components: int = 64,
        min_df: int = 5,
        max_features: int = 30000,
        random_state: Any = 42,
        max_halt_error: float | None = None,
        risk_confidence: float = 0.9,
        risk_unit: str = "halted",
        calibration_folds: int | None = 5,
        calibration_groups: str = "task",
        calibration_fraction: float = 0.3,
        deployed_heads: str = "fold-average",
        guard_quantile: float | None = 0.01,
    ) -> None:
        self.success_threshold = success_threshold
        self.failure_threshold = failure_threshold
        self.min_halt_step = min_halt_step
        self.min_steps = min_steps
        self.exclude = exclude
        self.classifier = classifier
        self.n_components = n_components
        self.min_df = min_df
        self.max_features = max_features
        self.random_state = random_state
        self.max_halt_error = max_halt_error
        self.risk_confidence = risk_confidence
        self.risk_unit = risk_unit
        self.calibration_folds = calibration_folds
        self.calibration_groups = calibration_groups
        self.calibration_fraction = calibration_fraction
        self.deployed_heads = deployed_heads
        self.guard_quantile = guard_quantile

    # ------------------------------------------------------------------ parameters
    @property
    def backbone(self) -> str:
        """The heads' backbone (``"lightgbm"`` or ``"logistic"``), from :attr:`classifier`."""
        return str((self.classifier or DualHeadClassifier()).backbone)

    @property
    def deployed_heads_(self) -> str:
        """``"fold-average"`` or ``"refit"``: what the fitted :attr:`classifier_` is."""
        return "fold-average" if isinstance(self.classifier_, FoldAverageClassifier) else "refit"

    def _new_classifier(self, seed: int) -> DualHeadClassifier:
        """An unfitted copy of the heads, seeded from the model's ``random_state``."""
        return clone(self.classifier if self.classifier is not None else DualHeadClassifier()).set_params(random_state=seed)

    def _check(self) -> tuple[np.ndarray, int, int]:
        """Validate every parameter; return (text seeds, head seed, split seed) drawn once from ``random_state``."""
        owner = type(self).__name__
        check_params(owner, self.get_params(), self._parameter_constraints)
        if self.classifier is not None:
            check_params(owner, self.classifier.get_params(), DualHeadClassifier._parameter_constraints)
        rng = check_random_state(owner, self.random_state)
        text_seeds = rng.integers(0, 2**31 - 1, size=5)
        head_seed = int(rng.integers(0, 2**31 - 1))
        split_seed = int(rng.integers(0, 2**31 - 1))
        return text_seeds, head_seed, split_seed

    def _featurizer_key(self, text_seeds: np.ndarray, split: tuple[Any, ...] = ()) -> tuple[Any, ...]:
        return (self.n_components, self.min_df, self.max_features, self.min_steps, tuple(int(s) for s in text_seeds), split)

    def _calibration_mode(self) -> str:
        """``"none"`` (fixed thresholds), ``"split"`` (held-out calibration tasks) or ``"cross"`` (cross-fitted)."""
        if self.max_halt_error is None:
            return "none"
        return "split" if self.calibration_folds is None else "cross"

    def _calibration_split(self, corpus: Corpus, idx: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(fit, calibration) trajectories of ``idx``: a share of tasks held out whole (``"split"`` mode only)."""
        if self._calibration_mode() != "split":
            return idx, idx[:0]
        tasks = np.array([corpus.trajectories[i].task for i in idx], dtype=object)
        outcomes = np.array([corpus.trajectories[i].outcome for i in idx])
        unique = np.unique(tasks)
        n_cal = int(np.ceil(self.calibration_fraction * unique.shape[0]))
        if unique.shape[0] < 3 or n_cal >= unique.shape[0] - 1:
            raise InputError(
                f"`max_halt_error` needs training runs of at least 3 tasks to hold {self.calibration_fraction:g} of them out "
                f"as calibration runs; got {unique.shape[0]} task(s)"
            )
        rng = np.random.default_rng(seed)
        for _ in range(100):
            held = rng.permutation(unique)[:n_cal]
            cal = np.isin(tasks, held)
            if np.unique(outcomes[~cal]).shape[0] == 2:
                return idx[~cal], idx[cal]
        raise InputError("cannot hold out calibration tasks and keep both outcomes among the training runs")

    def _task_folds(self, corpus: Corpus, idx: np.ndarray, seed: int) -> np.ndarray:
        """Cross-fitting fold (0..K−1) of each run of ``idx``.

        Tasks are dealt round-robin in a seeded random order, every run of a task in one fold; redrawn
        until every fold's complement holds both outcomes.
        """
        k = int(self.calibration_folds)  # type: ignore[arg-type]
        by = self.calibration_groups
        tasks = np.array([getattr(corpus.trajectories[i], by) for i in idx], dtype=object)
        outcomes = np.array([corpus.trajectories[i].outcome for i in idx])
        unique, inverse = np.unique(tasks, return_inverse=True)
        if unique.shape[0] < k:
            raise InputError(
                f"`calibration_folds` = {k} needs training runs of at least {k} {by}s (every run of a {by} in one fold); "
                f"got {unique.shape[0]} {by}(s); lower `calibration_folds` or set it to None"
            )
        rng = np.random.default_rng(seed)
        for _ in range(100):
            fold_of_task = np.empty(unique.shape[0], dtype=np.int64)
            fold_of_task[rng.permutation(unique.shape[0])] = np.arange(unique.shape[0]) % k
            folds = fold_of_task[inverse]
            if all(np.unique(outcomes[folds != j]).shape[0] == 2 for j in range(k)):
                return folds
        raise InputError("cannot split the training tasks into calibration folds that each leave both outcomes to train on")

    def _new_featurizer(self) -> PrefixFeaturizer:
        return PrefixFeaturizer(n_components=self.n_components, min_df=self.min_df, max_features=self.max_features)

    # ------------------------------------------------------------------ fitting
    def fit(
        self, trajectories: Sequence[Trajectory], y: Any = None, *, gold: Mapping[str, Any] | None = None, progress: Progress | None = None,
    ) -> EarlyOutcomeModel:
        """Fit the featurizer and both calibrated heads on finished, labelled runs.

        Parameters
        ----------
        trajectories : sequence of Trajectory
            Training runs with binary outcomes (``y`` is read from them; the argument is ignored).
        gold : mapping of task to GoldSolution (or text), optional
            Reference solutions; when given, the reference feature family is used.
        progress : callable, optional
            Called as ``progress(done, total, description)`` in stages: the runs whose behavioral features
            are computed (of all runs), the two tokenizing passes, then the fitting steps (text features,
            heads, each cross-fitting fold's heads, thresholds and guard), each before the step it names;
            within the text features step, the five text blocks fitted, then the runs whose text features
            are computed.
        """
        seeds = self._check()
        runs = check_trajectories(trajectories)
        kept = [r for r in runs if len(r.steps) >= self.min_steps]
        if not kept:
            raise InputError(f"no training run has at least `min_steps` = {self.min_steps} steps; lower `min_steps`")
        corpus = Corpus(kept, gold=gold, min_df=self.min_df, progress=progress)
        self._fit_corpus(corpus, np.arange(len(corpus)), seeds, {}, progress=progress)
        return self

    def _features(
        self, corpus: Corpus, fit_idx: np.ndarray, text_seeds: np.ndarray, key: tuple[Any, ...], cache: dict[Any, Any],
        others: Mapping[str, np.ndarray], progress: Progress | None = None,
    ) -> tuple[PrefixFeaturizer, list[np.ndarray], dict[str, list[np.ndarray]]]:
        """The featurizer fitted on ``fit_idx`` and the rows of ``fit_idx`` and of each of ``others``, via ``cache``."""
        if key not in cache:
            featurizer = self._new_featurizer()._fit_corpus(corpus, fit_idx, text_seeds, progress)
            cache[key] = (featurizer, featurizer._transform_corpus(corpus, fit_idx, progress), {})
        featurizer, X, transformed = cache[key]
        for name, idx in others.items():
            if name not in transformed:
                transformed[name] = featurizer._transform_corpus(corpus, idx)
        return featurizer, X, {name: transformed[name] for name in others}

    def _heads(
        self, featurizer: PrefixFeaturizer, X: list[np.ndarray], corpus: Corpus, fit_idx: np.ndarray, head_seed: int,
        key: tuple[Any, ...], cache: dict[Any, Any],
    ) -> EarlyOutcomeModel:
        """Fit the heads on ``X`` into this model; variants with the same features and heads share them through ``cache``."""
        classifier = self._new_classifier(head_seed)
        head_key = ("heads", key, head_seed, tuple(self.exclude), repr(sorted(classifier.get_params().items())))
        if head_key not in cache:
            cache[head_key] = clone(self)._fit_features(featurizer, X, corpus, fit_idx, head_seed)
        self.__dict__.update({k: v for k, v in vars(cache[head_key]).items() if k.endswith("_") and not k.startswith("__")})
        return self

    def _cross_fit(
        self, corpus: Corpus, idx: np.ndarray, featurizer: PrefixFeaturizer, X: list[np.ndarray], seeds: tuple[np.ndarray, int, int],
        key: tuple[Any, ...], cache: dict[Any, Any], *, step: Callable[[str | None], None] | None = None,
    ) -> tuple[list[np.ndarray], list[DualHeadClassifier]]:
        """Out-of-fold prefix probabilities of every run of ``idx`` (rows ``X``) and the fold heads.

        Per fold, heads (with their own validation split, early stopping and Platt scaling) fitted on the
        other folds' rows of the same text blocks.
        """
        _, head_seed, split_seed = seeds
        folds = self._task_folds(corpus, idx, split_seed)
        proba: list[np.ndarray] = [np.zeros((0, 2))] * idx.shape[0]
        fold_heads: list[DualHeadClassifier] = []
        for j in range(int(self.calibration_folds)):  # type: ignore[arg-type]
            if step is not None:
                step(f"cross-fitting: heads of fold {j + 1}/{self.calibration_folds}")
            inner, out = np.flatnonzero(folds != j), np.flatnonzero(folds == j)
            fold_key = (*key, "cross", self.calibration_groups, self.calibration_folds, split_seed, j)
            fold_model = clone(self)._heads(featurizer, [X[i] for i in inner], corpus, idx[inner], head_seed, fold_key, cache)
            fold_heads.append(fold_model.classifier_)
            for pos, p in zip(out, fold_model._proba_from_features([X[i] for i in out]), strict=True):
                proba[int(pos)] = p
        return proba, fold_heads

    def _fit_corpus(
        self, corpus: Corpus, kept: np.ndarray, seeds: tuple[np.ndarray, int, int], cache: dict[Any, Any], test: np.ndarray | None = None,
        progress: Progress | None = None,
    ) -> list[np.ndarray] | None:
        """Fit on the runs ``kept`` of a corpus (featurizer, heads, thresholds, guard); return the rows of ``test``."""
        text_seeds, head_seed, split_seed = seeds
        mode = self._calibration_mode()
        fold_average = mode == "cross" and self.deployed_heads == "fold-average"
        step = _steps(progress, 2 + (not fold_average) + (int(self.calibration_folds or 0) if mode == "cross" else 0))
        step("text features")
        fit_idx, cal_idx = self._calibration_split(corpus, kept, split_seed)
        split = ("calibration", self.calibration_fraction, split_seed) if mode == "split" else ()
        key = self._featurizer_key(text_seeds, split)
        others = {"calibration": cal_idx, **({"test": test} if test is not None else {})}
        featurizer, X, other = self._features(corpus, fit_idx, text_seeds, key, cache, others, progress)
        if fold_average:  # no heads on all runs: the fold heads are deployed
            self._use_features(featurizer, X, corpus, fit_idx)
        else:
            step("heads on all training runs")
            self._heads(featurizer, X, corpus, fit_idx, head_seed, key, cache)
        out_of_fold = None
        if mode == "cross":
            out_of_fold, fold_heads = self._cross_fit(corpus, fit_idx, featurizer, X, seeds, key, cache, step=step)
            if fold_average:
                self.classifier_: DualHeadClassifier | FoldAverageClassifier = FoldAverageClassifier(fold_heads)
        deployed = self.classifier_
        if isinstance(deployed, DualHeadClassifier):
            mask = deployed.validation_mask_
        else:  # the guard's split: the one the refitted heads would have drawn
            lengths = np.array([x.shape[0] for x in X])
            mask = self._new_classifier(head_seed).validation_mask(
                np.repeat([corpus.trajectories[i].outcome for i in fit_idx], lengths),
                groups=np.repeat([corpus.trajectories[i].task for i in fit_idx], lengths),
            )
        step("thresholds and guard")
        self._fit_thresholds(corpus, fit_idx, X, cal_idx, other["calibration"], mask, out_of_fold=out_of_fold)
        step(None)
        return other.get("test")

    def _fit_thresholds(
        self, corpus: Corpus, fit_idx: np.ndarray, X: list[np.ndarray], cal_idx: np.ndarray, X_cal: list[np.ndarray],
        mask: np.ndarray, *, out_of_fold: list[np.ndarray] | None = None,
    ) -> EarlyOutcomeModel:
        """Choose the thresholds (fixed, or Learn-then-Test on the calibration runs), fit the guard, record quality.

        Calibration runs: ``out_of_fold`` (cross-fitted probabilities of every ``fit_idx`` run) when given, else
        ``cal_idx``. ``mask`` marks the rows of the heads' validation split (for fold-average heads, the split the
        refitted heads would draw). The guard's limits come from runs the featurizer did not see (``cal_idx``), else
        from that split's tasks; the quality figures and the reliability table from the calibration runs when
        there are any, else from the validation split.
        """
        lengths = np.array([x.shape[0] for x in X])
        run_of_row = np.repeat(np.arange(len(X)), lengths)
        val_runs = np.unique(run_of_row[mask])
        validation_tasks = np.unique([corpus.trajectories[i].task for i in fit_idx[val_runs]])
        val_proba = self._proba_from_features([X[i] for i in val_runs]) if out_of_fold is None else []
        fixed = {"success": self.success_threshold, "failure": self.failure_threshold}
        self.risk_control_: dict[str, RiskControl] = {}
        delta = 1.0 - self.risk_confidence
        if out_of_fold is not None:
            risk_idx, risk_proba = fit_idx, out_of_fold
            reference = f"cross-fitted training runs ({self.calibration_folds} {self.calibration_groups} folds)"
        elif cal_idx.shape[0]:
            risk_idx, risk_proba, reference = cal_idx, self._proba_from_features(X_cal), "calibration runs"
        else:
            risk_idx, risk_proba, reference = fit_idx[val_runs], val_proba, "validation runs"
        if cal_idx.shape[0]:
            guard_idx, guard_X, guard_reference = cal_idx, X_cal, "calibration runs"
        else:
            guard_idx, guard_X, guard_reference = fit_idx[val_runs], [X[i] for i in val_runs], "validation runs"
        outcome = np.array([corpus.trajectories[i].outcome for i in risk_idx], dtype=np.float64)
        scores = halting_scores(risk_proba, min_halt_step=self.min_halt_step)
        controlled = self.max_halt_error is not None
        risk_tasks = np.array([corpus.trajectories[i].task for i in risk_idx], dtype=object)
        self.calibration_tasks_ = np.unique(risk_tasks) if controlled else np.zeros(0, dtype=object)
        self.calibration_scores_ = scores if controlled else np.zeros((0, 2))
        self.calibration_outcome_ = outcome if controlled else np.zeros(0)
        if controlled:
            if out_of_fold is None:  # the sequence starts where the validation runs say (cross-fitting: count_start)
                val_scores = halting_scores(val_proba, min_halt_step=self.min_halt_step)
                val_outcome = np.array([corpus.trajectories[i].outcome for i in fit_idx[val_runs]])
            eps = float(self.max_halt_error)  # type: ignore[arg-type]
            thresholds: dict[str, float | None] = {}
            for j, head in enumerate(HEADS):
                if fixed[head] is None:
                    thresholds[head] = None
                    continue
                wrong = outcome == (0 if head == "success" else 1)
                if out_of_fold is not None:
                    start = count_start(scores[:, j], epsilon=eps, delta=delta, unit=self.risk_unit)
                else:
                    val_wrong = val_outcome == (0 if head == "success" else 1)
                    start = sequence_start(val_scores[:, j], val_wrong, cal_idx.shape[0], epsilon=eps, delta=delta, unit=self.risk_unit)
                rc = learn_then_test(scores[:, j], wrong, epsilon=eps, delta=delta, unit=self.risk_unit, start=start, head=head)
                self.risk_control_[head] = rc
                thresholds[head] = rc.threshold
            self.thresholds_ = thresholds
        else:
            self.thresholds_ = dict(fixed)
        rows = np.vstack(X)
        self.guard_: FamiliarityGuard | None = None
        if self.guard_quantile is not None:
            behavioral = np.array([j for j in self.columns_ if self.featurizer_.features_[j].family == "behavioral"], dtype=np.int64)
            coverage = np.vstack(self.featurizer_._coverage_corpus(corpus, guard_idx))
            task_columns = np.array(
                [j for j in self.columns_ if self.featurizer_.features_[j].name.startswith("task_svd_")], dtype=np.int64
            )
            tasks = np.array([corpus.trajectories[i].task for i in fit_idx], dtype=object)
            seen = ~np.isin(tasks, validation_tasks) if not cal_idx.shape[0] else np.ones(tasks.shape[0], dtype=bool)
            _, first = np.unique(tasks[seen], return_index=True)
            train_runs = np.flatnonzero(seen)[first]
            train_tasks = (
                np.array([X[i][0, task_columns] for i in train_runs]).reshape(-1, task_columns.shape[0]) if task_columns.shape[0] else None
            )
            self.guard_ = fit_guard(
                rows[~mask], np.vstack(guard_X), coverage, behavioral, [self.featurizer_.features_[j].name for j in behavioral],
                task_columns=task_columns, train_tasks=train_tasks,
                quantile=float(self.guard_quantile), reference=guard_reference,
            )
        ref_runs = [corpus.trajectories[i] for i in risk_idx]
        self.reliability_ = reliability(scores, outcome, GRID)
        self.quality_ = quality_figures(
            ref_runs, risk_proba, self.thresholds_, min_halt_step=self.min_halt_step, reference=reference,
            risk_control={k: v.as_dict() for k, v in self.risk_control_.items()},
        )
        if self.deployed_heads_ == "fold-average":
            deployed = f"fold-average: the mean of the {self.calibration_folds} {self.calibration_groups}-fold heads"
        else:
            deployed = "refit: heads fitted on " + ("the training runs outside the calibration tasks" if cal_idx.shape[0] else "all training runs")
        self.quality_["deployed_heads"] = deployed
        return self

    def _unvalidated(self, head: str, threshold: float | None) -> str | None:
        """Why halting by ``head`` at ``threshold`` is not validated by the reference runs, or ``None``."""
        table = getattr(self, "reliability_", None)
        if table is None or threshold is None:
            return None
        why = unvalidated(table[head], threshold, confidence=float(self.risk_confidence))
        if why is None:
            return None
        quality = getattr(self, "quality_", None)
        reference = quality.get("reference", "reference runs") if isinstance(quality, dict) else "reference runs"
        return (
            f"threshold {threshold:.2f} was not validated: the {head} head's precision must be shown ≥ "
            f"{100 * MIN_PRECISION:.0f}% at confidence {self.risk_confidence:g} on the {reference}, and it is shown {why}"
        )

    def _effective_thresholds(self) -> tuple[float | None, float | None]:
        thresholds = getattr(self, "thresholds_", None) or {"success": self.success_threshold, "failure": self.failure_threshold}
        return thresholds["success"], thresholds["failure"]

    def _use_features(self, featurizer: PrefixFeaturizer, X: list[np.ndarray], corpus: Corpus, idx: np.ndarray) -> EarlyOutcomeModel:
        """Adopt the featurizer and the used columns (after ``exclude``) for training runs ``idx`` (rows ``X``)."""
        outcomes = np.array([corpus.trajectories[i].outcome for i in idx], dtype=np.int64)
        if np.unique(outcomes).shape[0] < 2:
            raise InputError("training runs must include both successes and failures")
        excluded = set(self.exclude)
        self.columns_ = np.array(
            [j for j, spec in enumerate(featurizer.features_) if spec.family not in excluded and spec.group not in excluded],
            dtype=np.int64,
        )
        if self.columns_.shape[0] == 0:
            raise InputError(f"`exclude` = {self.exclude!r} leaves no features")
        self.featurizer_ = featurizer
        self.features_: list[FeatureSpec] = [featurizer.features_[j] for j in self.columns_]
        self.n_train_runs_ = int(idx.shape[0])
        self.n_train_prefixes_ = int(sum(x.shape[0] for x in X))
        self.train_run_keys_: np.ndarray | None = run_keys(corpus.trajectories[i] for i in idx)
        return self

    def trained_on(self, runs: Sequence[Trajectory]) -> np.ndarray | None:
        """Whether each run was one of the training runs (same agent, task, attempt and length); ``None`` when unknown.

        A training run replayed through the monitor gets in-sample verdicts, better than a new run's.
        ``None`` for a model saved without its training runs' digests (before 0.2).
        """
        keys = getattr(self, "train_run_keys_", None)
        if keys is None:
            return None
        return np.isin(np.array([run_key(r) for r in runs], dtype=str), keys)

    def _fit_features(self, featurizer: PrefixFeaturizer, X: list[np.ndarray], corpus: Corpus, idx: np.ndarray, head_seed: int) -> EarlyOutcomeModel:
        """Adopt the features (:meth:`_use_features`) and fit the heads on all rows ``X`` of runs ``idx``."""
        self._use_features(featurizer, X, corpus, idx)
        lengths = np.array([x.shape[0] for x in X])
        outcomes = np.array([corpus.trajectories[i].outcome for i in idx], dtype=np.int64)
        tasks = np.array([corpus.trajectories[i].task for i in idx], dtype=object)
        self.classifier_ = self._new_classifier(head_seed).fit(
            np.vstack(X)[:, self.columns_],
            np.repeat(outcomes, lengths),
            groups=np.repeat(tasks, lengths),
            sample_weight=np.repeat(1.0 / lengths, lengths),
        )
        return self

    def _fold_proba(self, corpus: Corpus, train: np.ndarray, test: np.ndarray, cache: dict[Any, Any]) -> tuple[list[np.ndarray], dict[str, Any]]:
        """Fit a copy on ``train`` rows of a corpus and score every prefix of the ``test`` rows.

        Variants with the same text settings and seeds share the fold's featurizer, and with the same heads
        their fitted heads and out-of-fold scores, through ``cache``.
        """
        seeds = self._check()
        kept = train[corpus.n_steps[train] >= self.min_steps]
        if kept.shape[0] == 0:
            raise InputError(f"a fold has no training run with at least `min_steps` = {self.min_steps} steps")
        fitted = clone(self)
        X_test = fitted._fit_corpus(corpus, kept, seeds, cache, test=test)
        classifier = fitted.classifier_
        info = {
            "n_train_runs": fitted.n_train_runs_,
            "n_validation_tasks": int(classifier.validation_groups_.shape[0]),
            "rounds_success": classifier.best_iterations_["success"],
            "rounds_failure": classifier.best_iterations_["failure"],
        }
        if self.max_halt_error is not None:
            info["n_calibration_runs"] = int(fitted.calibration_scores_.shape[0])
            for head in HEADS:
                info[f"threshold_{head}"] = fitted.thresholds_[head]
                rc = fitted.risk_control_.get(head)
                info[f"calibration_halted_{head}"] = None if rc is None else rc.n_halted
                info[f"calibration_wrong_{head}"] = None if rc is None else rc.n_wrong
        return fitted._proba_from_features(X_test or []), info

    # ------------------------------------------------------------------ prediction
    def check_fitted(self) -> None:
        """Raise an :class:`~stopwise.errors.InputError` unless the model is fitted (by ``fit`` or loaded).

        What callers outside :mod:`stopwise.early` (the Inspect halting hook) check before using a model.

        Examples
        --------
        >>> from stopwise.early import EarlyOutcomeModel
        >>> EarlyOutcomeModel().check_fitted()
        Traceback (most recent call last):
        ...
        stopwise.errors.InputError: this EarlyOutcomeModel is not fitted yet; call fit() or load() first
        """
        if not hasattr(self, "classifier_"):
            raise InputError(f"this {type(self).__name__} is not fitted yet; call fit() or load() first")

    def _proba_from_features(self, X: list[np.ndarray]) -> list[np.ndarray]:
        if not X:
            return []
        lengths = [x.shape[0] for x in X]
        proba = self.classifier_.predict_proba(np.vstack(X)[:, self.columns_])
        return list(np.split(proba, np.cumsum(lengths)[:-1]))

    def predict_proba(self, trajectories: Sequence[Trajectory], *, gold: Mapping[str, Any] | None = None) -> list[np.ndarray]:
        """Calibrated ``(p_success, p_failure)`` of every prefix (k = 0..T): one ``(T + 1) × 2`` array per run."""
        self.check_fitted()
        runs = check_trajectories(trajectories, require_outcome=False)
        return self._proba_from_features(self.featurizer_.transform(runs, gold=gold))

    def familiar(self, trajectories: Sequence[Trajectory]) -> list[np.ndarray]:
        """Per run, which prefixes (k = 0..T) the unfamiliar-run guard lets halt (all when the guard is off)."""
        self.check_fitted()
        runs = check_trajectories(trajectories, require_outcome=False)
        if self.guard_ is None:
            return [np.ones(len(r.steps) + 1, dtype=bool) for r in runs]
        corpus = Corpus(runs, gold={} if self.featurizer_.reference_ else None, min_df=1)
        idx = np.arange(len(corpus))
        X = self.featurizer_._transform_corpus(corpus, idx)
        coverage = self.featurizer_._coverage_corpus(corpus, idx)
        return [self.guard_.familiar(x, c) for x, c in zip(X, coverage, strict=True)]

    def predict(self, trajectories: Sequence[Trajectory], *, gold: Mapping[str, Any] | None = None) -> list[Verdict | None]:
        """Replay the halting rule on finished runs: the halt verdict of each, or ``None`` if it never halts.

        Uses :attr:`thresholds_`; prefixes the unfamiliar-run guard marks do not halt (see :meth:`familiar`).
        """
        s, f = self._effective_thresholds()
        proba = self.predict_proba(trajectories, gold=gold)
        familiar = self.familiar(trajectories) if getattr(self, "guard_", None) is not None else [None] * len(proba)
        if getattr(self, "guard_", None) is not None:
            s = None if self._unvalidated("success", s) else s
            f = None if self._unvalidated("failure", f) else f
        return [
            first_crossing(p[:, 0], p[:, 1], s, f, min_halt_step=self.min_halt_step, familiar=ok)
            for p, ok in zip(proba, familiar, strict=True)
        ]

    def monitor(
        self,
        task_text: str,
        *,
        gold: GoldSolution | str | Mapping[str, Any] | None = None,
        success_threshold: float | None = None,
        failure_threshold: float | None = None,
        guard: bool = True,
    ) -> Any:
        """An :class:`~stopwise.early.OnlineMonitor` for one new run (thresholds default to the model's)."""
        from stopwise.early._monitor import OnlineMonitor

        return OnlineMonitor(
            self, task_text, gold=gold, success_threshold=success_threshold, failure_threshold=failure_threshold, guard=guard
        )

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike[str], *, force: bool = False) -> os.PathLike[str]:
        """Write the fitted model to a directory (manifest, text blocks, heads); see :func:`load_model`.

        An existing directory is replaced only when empty, or with ``force`` when stopwise wrote it.
        """
        from stopwise.early._persist import save_model

        self.check_fitted()
        return save_model(self, path, force=force)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EarlyOutcomeModel:
        """Read a model written by :meth:`save`."""
        from stopwise.early._persist import load_model

        return load_model(path)
