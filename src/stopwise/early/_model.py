"""EarlyOutcomeModel: prefix featurizer + calibrated dual heads + the halting rule, as one estimator."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, clone

from stopwise.early._checks import check_trajectories
from stopwise.early._featurizer import FAMILIES, FEATURE_GROUPS, Corpus, FeatureSpec, PrefixFeaturizer
from stopwise.early._guard import FamiliarityGuard, fit_guard
from stopwise.early._halting import Verdict, first_crossing
from stopwise.early._heads import HEADS, DualHeadClassifier
from stopwise.early._params import (
    Constraint,
    Interval,
    OneOf,
    Predicate,
    check_params,
    check_random_state,
    names_predicate,
)
from stopwise.early._quality import quality_figures, refuted, reliability
from stopwise.early._reference import GoldSolution
from stopwise.early._risk import GRID, RISK_UNITS, RiskControl, halting_scores, learn_then_test, sequence_start
from stopwise.errors import InputError
from stopwise.records import Trajectory

__all__ = ["EXCLUDABLE", "EarlyOutcomeModel"]

EXCLUDABLE: tuple[str, ...] = (*FAMILIES, *(g for groups in FEATURE_GROUPS.values() for g in groups))
"""Names accepted by ``exclude``: a whole family or one group."""

_THRESHOLD = Interval(float, 0, 1, closed="right", allow_none=True)


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
        Risk-controlled thresholds (:mod:`stopwise.early._risk`, Learn-then-Test): hold out
        ``calibration_fraction`` of the training *tasks* (every run of a task on one side), fit on the rest,
        and choose each enabled head's threshold on the held-out runs so that its wrong-halt rate is at most
        this with probability at least ``risk_confidence``. The thresholds above then only say which heads
        are enabled (``None`` disables one). ``None``: use the fixed thresholds.
    risk_confidence : float, default 0.9
        ``1 − δ`` of the guarantee.
    risk_unit : {"halted", "runs"}, default "halted"
        The wrong-halt rate as a share of the runs the head halts (one minus its precision), or of all runs.
    calibration_fraction : float, default 0.3
        Share of training tasks held out as calibration runs when ``max_halt_error`` is set.
    guard_quantile : float or None, default 0.01
        The unfamiliar-run guard (:mod:`stopwise.early._guard`): each of its limits excludes this share of
        the reference prefixes (calibration runs, else the validation split). ``None`` turns the guard off.

    Attributes
    ----------
    featurizer_ : PrefixFeaturizer
        Text blocks fitted on the training runs.
    classifier_ : DualHeadClassifier
        The two calibrated heads.
    columns_ : numpy.ndarray of int
        Columns of the featurizer's output that the heads use (after ``exclude``).
    features_ : list of FeatureSpec
        The used columns: name, family, group (the feature manifest).
    n_train_runs_, n_train_prefixes_ : int
        Training volume after the ``min_steps`` filter (runs the heads were fitted on).
    thresholds_ : dict of str to float or None
        The thresholds in use per head (chosen by Learn-then-Test when ``max_halt_error`` is set).
    risk_control_ : dict of str to RiskControl
        Per enabled head, the Learn-then-Test result (empty without ``max_halt_error``).
    reliability_ : dict of str to list
        Per head and grid threshold, ``[threshold, halted, precision]`` on the reference runs
        (:func:`~stopwise.early._quality.reliability`): with the guard on, a head does not halt at a threshold
        where the reference runs show it unreliable (≥ 10 halts, < 90 % precision); the verdict says so.
    calibration_tasks_ : numpy.ndarray of str
        The tasks held out as calibration runs (empty without ``max_halt_error``).
    guard_ : FamiliarityGuard or None
        The unfamiliar-run guard.
    quality_ : dict
        Validation figures at ``thresholds_`` on the reference runs (calibration, else validation split):
        per head halted runs and precision, steps saved, |ΔPass@1|, and warnings (see :func:`quality_figures`).

    Examples
    --------
    >>> from stopwise.early import DualHeadClassifier, EarlyOutcomeModel
    >>> from stopwise.records import Step, Trajectory
    >>> def run(i, ok):
    ...     obs = "done" if ok else "[isError] failed"
    ...     return Trajectory(agent=f"a{i % 3}", task=f"t{i % 8}", outcome=int(ok), task_text="update the page",
    ...                       steps=[Step(action="update_page()", tool="update_page", observation=obs)] * 12)
    >>> runs = [run(i, i % 2 == 0) for i in range(48)]
    >>> heads = DualHeadClassifier(min_child_samples=5, n_estimators=30)
    >>> model = EarlyOutcomeModel(n_components=4, min_df=1, classifier=heads).fit(runs)
    >>> model.predict([run(1, False)])[0].predicted
    0
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
        "calibration_fraction": Interval(float, 0, 1, closed="neither"),
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
        calibration_fraction: float = 0.3,
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
        self.calibration_fraction = calibration_fraction
        self.guard_quantile = guard_quantile

    # ------------------------------------------------------------------ parameters
    @property
    def backbone(self) -> str:
        """The heads' backbone (``"lightgbm"`` or ``"logistic"``), from :attr:`classifier`."""
        return str((self.classifier or DualHeadClassifier()).backbone)

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

    def _calibration_split(self, corpus: Corpus, idx: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(fit, calibration) trajectories of ``idx``: a share of tasks held out whole; no split without risk control."""
        if self.max_halt_error is None:
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

    def _new_featurizer(self) -> PrefixFeaturizer:
        return PrefixFeaturizer(n_components=self.n_components, min_df=self.min_df, max_features=self.max_features)

    # ------------------------------------------------------------------ fitting
    def fit(self, trajectories: Sequence[Trajectory], y: Any = None, *, gold: Mapping[str, Any] | None = None) -> EarlyOutcomeModel:
        """Fit the featurizer and both calibrated heads on finished, labelled runs.

        Parameters
        ----------
        trajectories : sequence of Trajectory
            Training runs with binary outcomes (``y`` is read from them; the argument is ignored).
        gold : mapping of task to GoldSolution (or text), optional
            Reference solutions; when given, the reference feature family is used.
        """
        text_seeds, head_seed, split_seed = self._check()
        runs = check_trajectories(trajectories)
        kept = [r for r in runs if len(r.steps) >= self.min_steps]
        if not kept:
            raise InputError(f"no training run has at least `min_steps` = {self.min_steps} steps; lower `min_steps`")
        corpus = Corpus(kept, gold=gold, min_df=self.min_df)
        fit_idx, cal_idx = self._calibration_split(corpus, np.arange(len(corpus)), split_seed)
        featurizer = self._new_featurizer()._fit_corpus(corpus, fit_idx, text_seeds)
        X = featurizer._transform_corpus(corpus, fit_idx)
        X_cal = featurizer._transform_corpus(corpus, cal_idx)
        self._fit_features(featurizer, X, corpus, fit_idx, head_seed)
        return self._fit_thresholds(corpus, fit_idx, X, cal_idx, X_cal)

    def _fit_thresholds(self, corpus: Corpus, fit_idx: np.ndarray, X: list[np.ndarray], cal_idx: np.ndarray, X_cal: list[np.ndarray]) -> EarlyOutcomeModel:
        """Choose the thresholds (fixed, or Learn-then-Test on the calibration runs), fit the guard, record quality."""
        classifier = self.classifier_
        lengths = np.array([x.shape[0] for x in X])
        mask = classifier.validation_mask_
        run_of_row = np.repeat(np.arange(len(X)), lengths)
        val_runs = np.unique(run_of_row[mask])
        val_proba = self._proba_from_features([X[i] for i in val_runs])
        fixed = {"success": self.success_threshold, "failure": self.failure_threshold}
        self.risk_control_: dict[str, RiskControl] = {}
        self.calibration_tasks_ = np.unique(np.array([corpus.trajectories[i].task for i in cal_idx], dtype=object))
        if cal_idx.shape[0]:
            ref_idx, ref_X, reference = cal_idx, X_cal, "calibration runs"
            ref_proba = self._proba_from_features(X_cal)
            scores = halting_scores(ref_proba, min_halt_step=self.min_halt_step)
            val_scores = halting_scores(val_proba, min_halt_step=self.min_halt_step)
            val_outcome = np.array([corpus.trajectories[i].outcome for i in fit_idx[val_runs]])
            outcome = np.array([corpus.trajectories[i].outcome for i in cal_idx])
            delta = 1.0 - self.risk_confidence
            eps = float(self.max_halt_error)  # type: ignore[arg-type]
            thresholds: dict[str, float | None] = {}
            for j, head in enumerate(HEADS):
                if fixed[head] is None:
                    thresholds[head] = None
                    continue
                wrong = outcome == (0 if head == "success" else 1)
                val_wrong = val_outcome == (0 if head == "success" else 1)
                start = sequence_start(val_scores[:, j], val_wrong, cal_idx.shape[0], epsilon=eps, delta=delta, unit=self.risk_unit)
                rc = learn_then_test(scores[:, j], wrong, epsilon=eps, delta=delta, unit=self.risk_unit, start=start, head=head)
                self.risk_control_[head] = rc
                thresholds[head] = rc.threshold
            self.thresholds_ = thresholds
        else:
            ref_idx, ref_X, reference = fit_idx[val_runs], [X[i] for i in val_runs], "validation runs"
            ref_proba = val_proba
            self.thresholds_ = dict(fixed)
        rows = np.vstack(X)
        self.guard_: FamiliarityGuard | None = None
        if self.guard_quantile is not None:
            behavioral = np.array([j for j in self.columns_ if self.featurizer_.features_[j].family == "behavioral"], dtype=np.int64)
            coverage = np.vstack(self.featurizer_._coverage_corpus(corpus, ref_idx))
            task_columns = np.array(
                [j for j in self.columns_ if self.featurizer_.features_[j].name.startswith("task_svd_")], dtype=np.int64
            )
            tasks = np.array([corpus.trajectories[i].task for i in fit_idx], dtype=object)
            seen = ~np.isin(tasks, classifier.validation_groups_) if not cal_idx.shape[0] else np.ones(tasks.shape[0], dtype=bool)
            _, first = np.unique(tasks[seen], return_index=True)
            train_runs = np.flatnonzero(seen)[first]
            train_tasks = (
                np.array([X[i][0, task_columns] for i in train_runs]).reshape(-1, task_columns.shape[0]) if task_columns.shape[0] else None
            )
            self.guard_ = fit_guard(
                rows[~mask], np.vstack(ref_X), coverage, behavioral, [self.featurizer_.features_[j].name for j in behavioral],
                task_columns=task_columns, train_tasks=train_tasks,
                quantile=float(self.guard_quantile), reference=reference,
            )
        ref_runs = [corpus.trajectories[i] for i in ref_idx]
        ref_outcome = np.array([r.outcome for r in ref_runs], dtype=np.float64)
        self.reliability_ = reliability(halting_scores(ref_proba, min_halt_step=self.min_halt_step), ref_outcome, GRID)
        self.quality_ = quality_figures(
            ref_runs, ref_proba, self.thresholds_, min_halt_step=self.min_halt_step, reference=reference,
            risk_control={k: v.as_dict() for k, v in self.risk_control_.items()},
        )
        return self

    def _unvalidated(self, head: str, threshold: float | None) -> str | None:
        """Why halting by ``head`` at ``threshold`` is refuted by the reference runs, or ``None``."""
        table = getattr(self, "reliability_", None)
        if table is None or threshold is None:
            return None
        evidence = refuted(table[head], threshold)
        if evidence is None:
            return None
        t, n, p = evidence
        quality = getattr(self, "quality_", None)
        reference = quality.get("reference", "reference runs") if isinstance(quality, dict) else "reference runs"
        return (
            f"threshold {threshold:.2f} was not validated: on the {reference} the {head} head at {t:.2f} is right on "
            f"{100 * p:.0f}% of the {n} runs it halts (< 90 %)"
        )

    def _effective_thresholds(self) -> tuple[float | None, float | None]:
        thresholds = getattr(self, "thresholds_", None) or {"success": self.success_threshold, "failure": self.failure_threshold}
        return thresholds["success"], thresholds["failure"]

    def _fit_features(self, featurizer: PrefixFeaturizer, X: list[np.ndarray], corpus: Corpus, idx: np.ndarray, head_seed: int) -> EarlyOutcomeModel:
        lengths = np.array([x.shape[0] for x in X])
        outcomes = np.array([corpus.trajectories[i].outcome for i in idx], dtype=np.int64)
        if np.unique(outcomes).shape[0] < 2:
            raise InputError("training runs must include both successes and failures")
        tasks = np.array([corpus.trajectories[i].task for i in idx], dtype=object)
        rows = np.vstack(X)
        excluded = set(self.exclude)
        self.columns_ = np.array(
            [j for j, spec in enumerate(featurizer.features_) if spec.family not in excluded and spec.group not in excluded],
            dtype=np.int64,
        )
        if self.columns_.shape[0] == 0:
            raise InputError(f"`exclude` = {self.exclude!r} leaves no features")
        self.classifier_ = self._new_classifier(head_seed).fit(
            rows[:, self.columns_],
            np.repeat(outcomes, lengths),
            groups=np.repeat(tasks, lengths),
            sample_weight=np.repeat(1.0 / lengths, lengths),
        )
        self.featurizer_ = featurizer
        self.features_: list[FeatureSpec] = [featurizer.features_[j] for j in self.columns_]
        self.n_train_runs_ = int(idx.shape[0])
        self.n_train_prefixes_ = int(rows.shape[0])
        return self

    def _fold_proba(self, corpus: Corpus, train: np.ndarray, test: np.ndarray, cache: dict[Any, Any]) -> tuple[list[np.ndarray], dict[str, Any]]:
        """Fit a copy on ``train`` rows of a corpus and score every prefix of the ``test`` rows.

        Variants with the same text settings and seeds share the fold's featurizer through ``cache``.
        """
        text_seeds, head_seed, split_seed = self._check()
        kept = train[corpus.n_steps[train] >= self.min_steps]
        if kept.shape[0] == 0:
            raise InputError(f"a fold has no training run with at least `min_steps` = {self.min_steps} steps")
        fit_idx, cal_idx = self._calibration_split(corpus, kept, split_seed)
        split = () if self.max_halt_error is None else ("calibration", self.calibration_fraction, split_seed)
        key = self._featurizer_key(text_seeds, split)
        if key not in cache:
            featurizer = self._new_featurizer()._fit_corpus(corpus, fit_idx, text_seeds)
            cache[key] = (
                featurizer, featurizer._transform_corpus(corpus, fit_idx), featurizer._transform_corpus(corpus, cal_idx),
                featurizer._transform_corpus(corpus, test),
            )
        featurizer, X_train, X_cal, X_test = cache[key]
        fitted = clone(self)._fit_features(featurizer, X_train, corpus, fit_idx, head_seed)
        fitted._fit_thresholds(corpus, fit_idx, X_train, cal_idx, X_cal)
        classifier = fitted.classifier_
        info = {
            "n_train_runs": fitted.n_train_runs_,
            "n_validation_tasks": int(classifier.validation_groups_.shape[0]),
            "rounds_success": classifier.best_iterations_["success"],
            "rounds_failure": classifier.best_iterations_["failure"],
        }
        if self.max_halt_error is not None:
            info["n_calibration_runs"] = int(cal_idx.shape[0])
            for head in HEADS:
                info[f"threshold_{head}"] = fitted.thresholds_[head]
        return fitted._proba_from_features(X_test), info

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self) -> None:
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
        self._check_fitted()
        runs = check_trajectories(trajectories, require_outcome=False)
        return self._proba_from_features(self.featurizer_.transform(runs, gold=gold))

    def familiar(self, trajectories: Sequence[Trajectory]) -> list[np.ndarray]:
        """Per run, which prefixes (k = 0..T) the unfamiliar-run guard lets halt (all when the guard is off)."""
        self._check_fitted()
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

        self._check_fitted()
        return save_model(self, path, force=force)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EarlyOutcomeModel:
        """Read a model written by :meth:`save`."""
        from stopwise.early._persist import load_model

        return load_model(path)
