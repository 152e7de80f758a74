"""Leave-one-agent-out (and leave-one-group-out) evaluation, the paper's §IV protocol.

For each held-out value of ``by`` (an agent, or a ``meta`` key such as ``service`` or ``model``) the models
are fitted on the other runs only — within the same ``within`` stratum when one is given, and without the
runs that share the held-out runs' ``exclude_same`` value (the paper's "no same model in training") — and
score every prefix of the held-out runs. The per-prefix predictions are kept, so any threshold, mode or
metric is computed afterwards without refitting (:meth:`EarlyEvaluation.metrics`, :meth:`EarlyEvaluation.sweep`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stopwise._version import __version__
from stopwise.early._checks import check_trajectories, meta_value
from stopwise.early._featurizer import Corpus
from stopwise.early._halting import MODES, mode_thresholds
from stopwise.early._metrics import EarlyMetrics, early_metrics
from stopwise.errors import FileFormatError, InputError
from stopwise.records import Trajectory, outcome_columns

__all__ = ["THRESHOLDS", "EarlyEvaluation", "leave_one_out"]

EVALUATION_KIND = "stopwise.early.evaluation"
"""The kind of output (:func:`stopwise._atomic.output_kind`) an evaluation directory holds."""

THRESHOLDS: tuple[float, ...] = (0.75, 0.80, 0.85, 0.90, 0.95, 0.97)
"""The threshold grid of the paper's Table III."""

Progress = Callable[[int, int, str], None]


@dataclass
class EarlyEvaluation:
    """Held-out predictions of a leave-one-out evaluation, and the metrics computed from them.

    Attributes
    ----------
    runs : pandas.DataFrame
        One row per held-out run: ``run`` (id), ``fold``, ``held_out``, ``stratum``, ``agent``, ``task``,
        ``attempt``, ``outcome``, ``n_steps``, ``total_in``, ``total_out``.
    predictions : pandas.DataFrame
        One row per variant and prefix: ``variant``, ``run``, ``k`` (0..T), ``p_success``, ``p_failure``,
        ``cum_in``, ``cum_out`` (cost of the first k steps).
    folds : pandas.DataFrame
        One row per fold and variant: held-out value, training runs, validation tasks, boosting rounds, seconds.
    by, within, exclude_same : str or None
        The grouping of the protocol.
    min_halt_step : int
        Earliest step at which a run may halt.
    token_source : str
        ``"tokens"`` when every held-out step records tokens, else ``"characters"``.
    """

    runs: pd.DataFrame
    predictions: pd.DataFrame
    folds: pd.DataFrame
    by: str
    within: str | None
    exclude_same: str | None
    min_halt_step: int
    token_source: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def variants(self) -> list[str]:
        """The evaluated model variants, in order."""
        return list(dict.fromkeys(self.predictions["variant"]))

    def _variant(self, variant: str | None) -> pd.DataFrame:
        names = self.variants
        if variant is None:
            if len(names) != 1:
                raise InputError(f"this evaluation holds several variants ({', '.join(names)}); pass `variant`")
            variant = names[0]
        if variant not in names:
            raise InputError(f"`variant` must be one of {', '.join(names)}; got {variant!r}")
        return self.predictions[self.predictions["variant"] == variant]

    def metrics(self, success_threshold: float | None, failure_threshold: float | None, *, variant: str | None = None) -> EarlyMetrics:
        """Every §IV metric for one pair of thresholds (``None`` turns a head off)."""
        for name, value in (("success_threshold", success_threshold), ("failure_threshold", failure_threshold)):
            if value is not None and not (isinstance(value, int | float) and 0 < value <= 1):
                raise InputError(f"`{name}` must be a number in (0, 1] or None; got {value!r}")
        return early_metrics(
            self.runs, self._variant(variant), success_threshold, failure_threshold,
            min_halt_step=self.min_halt_step, token_source=self.token_source,
        )

    def sweep(self, thresholds: Sequence[float] = THRESHOLDS, modes: Sequence[str] = MODES, *, variant: str | None = None) -> pd.DataFrame:
        """The paper's Table III in long form: one row per (threshold, mode).

        Columns: ``threshold``, ``mode``, ``precision`` (the head's precision; accuracy for ``dual``),
        ``coverage``, ``accuracy``, ``delta_steps``, ``delta_tokens_in``, ``delta_tokens_out``,
        ``delta_abs_pass1``, ``spearman_rho``, ``unchanged_rank_share``.
        """
        rows = []
        for threshold in thresholds:
            for mode in modes:
                s, f = mode_thresholds(mode, float(threshold))
                m = self.metrics(s, f, variant=variant)
                precision = {"success-only": m.success_precision, "failure-only": m.failure_precision}.get(mode, m.accuracy)
                rows.append(
                    {
                        "threshold": float(threshold), "mode": mode, "precision": precision, "coverage": m.coverage,
                        "accuracy": m.accuracy, "delta_steps": m.delta_steps, "delta_tokens_in": m.delta_tokens_in,
                        "delta_tokens_out": m.delta_tokens_out, "delta_abs_pass1": m.delta_abs_pass1,
                        "spearman_rho": m.spearman_rho, "unchanged_rank_share": m.unchanged_rank_share,
                    }
                )
        return pd.DataFrame(rows)

    def outcome_rows(self, success_threshold: float | None, failure_threshold: float | None, *, variant: str | None = None) -> pd.DataFrame:
        """Outcome-ledger rows of the early-stopped evaluation: halted runs as ``status = "predicted"``.

        Runs that were not halted keep their true outcome with ``status = "final"``.
        """
        m = self.metrics(success_threshold, failure_threshold, variant=variant)
        name = variant or self.variants[0]
        halts = m.halts.set_index("run").loc[self.runs["run"]]
        halted = ~np.isnan(halts["halt_step"].to_numpy())
        rows = pd.DataFrame(
            {
                "system": self.runs["agent"].to_numpy(),
                "task": self.runs["task"].to_numpy(),
                "outcome": np.where(halted, halts["predicted"].to_numpy(), self.runs["outcome"].to_numpy()),
                "group": self.runs["stratum"].astype(str).to_numpy(),
                "attempt": self.runs["attempt"].to_numpy(),
                "status": np.where(halted, "predicted", "final"),
                "source": [
                    f"stopwise.early:{name}@step{int(h)}" if ok else "stopwise.early:full-run"
                    for h, ok in zip(halts["halt_step"].to_numpy(), halted, strict=True)
                ],
            }
        )
        return outcome_columns(rows.to_dict("records")).to_frame()

    # ------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike[str], *, force: bool = False, extra: Mapping[str, pd.DataFrame] | None = None) -> Path:
        """Write ``runs.csv``, ``predictions.csv.gz``, ``folds.csv``, ``evaluation.json`` (and ``extra`` CSVs) into a directory.

        Written atomically (a temporary directory renamed into place); an existing directory is replaced only when
        empty, or with ``force`` when stopwise wrote it as an evaluation (:mod:`stopwise._atomic`).
        """
        from stopwise._atomic import write_directory

        meta = {
            "stopwise_version": __version__,
            "by": self.by,
            "within": self.within,
            "exclude_same": self.exclude_same,
            "min_halt_step": self.min_halt_step,
            "token_source": self.token_source,
            "variants": self.variants,
            **self.info,
        }

        def write(folder: Path) -> list[Path]:
            self.runs.to_csv(folder / "runs.csv", index=False)
            self.predictions.to_csv(folder / "predictions.csv.gz", index=False, float_format="%.17g")
            self.folds.to_csv(folder / "folds.csv", index=False)
            for name, frame in (extra or {}).items():
                frame.to_csv(folder / name, index=False)
            (folder / "evaluation.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
            return [folder / name for name in ("runs.csv", "predictions.csv.gz", "folds.csv", *(extra or {}), "evaluation.json")]

        write_directory(path, write, force=force, kind=EVALUATION_KIND, name="--out")
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EarlyEvaluation:
        """Read an evaluation written by :meth:`save`."""
        folder = Path(path)
        needed = ["evaluation.json", "runs.csv", "predictions.csv.gz", "folds.csv"]
        for name in needed:
            if not (folder / name).exists():
                raise FileFormatError(f"{folder / name}: missing; {folder} is not a saved stopwise evaluation")
        meta = json.loads((folder / "evaluation.json").read_text(encoding="utf-8"))
        for name in ("runs.csv", "folds.csv"):
            _check_csv_shape(folder / name)
        runs = pd.read_csv(folder / "runs.csv", index_col=False, keep_default_na=False, na_values=[""], dtype={"agent": str, "task": str, "held_out": str, "stratum": str})
        predictions = pd.read_csv(folder / "predictions.csv.gz", dtype={"variant": str})
        folds = pd.read_csv(folder / "folds.csv")
        info = {k: v for k, v in meta.items() if k not in ("by", "within", "exclude_same", "min_halt_step", "token_source", "variants", "stopwise_version")}
        return cls(runs, predictions, folds, meta["by"], meta["within"], meta["exclude_same"], int(meta["min_halt_step"]), meta["token_source"], info)


def _check_csv_shape(path: Path) -> None:
    """Refuse a CSV whose header repeats a column or whose rows have more or fewer cells than the header."""
    import csv

    from stopwise.errors import Problem, ValidationError

    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            raise FileFormatError(f"{path}: empty; expected a header row")
        seen = [c for i, c in enumerate(header) if c in header[:i]]
        if seen:
            raise ValidationError([Problem(str(path), None, seen[0], "must appear once in the header", header.count(seen[0]))])
        for row, cells in enumerate(reader, start=1):
            if len(cells) != len(header):
                raise ValidationError(
                    [Problem(str(path), row, None, f"must have {len(header)} cells like the header", len(cells))]
                )


def _costs(run: Trajectory, use_tokens: bool) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative input / output cost after k = 0..T steps."""
    if use_tokens:
        step_in = np.array([s.tokens_in for s in run.steps], dtype=np.float64)
        step_out = np.array([s.tokens_out for s in run.steps], dtype=np.float64)
    else:
        sizes = np.array([len(s.action) + len(s.observation) for s in run.steps], dtype=np.float64)
        context = len(run.task_text) + np.concatenate([[0.0], np.cumsum(sizes)[:-1]]) if sizes.shape[0] else np.zeros(0)
        step_in = context
        step_out = np.array([len(s.action) for s in run.steps], dtype=np.float64)
    return np.concatenate([[0.0], np.cumsum(step_in)]), np.concatenate([[0.0], np.cumsum(step_out)])


def _models_iv(models: Any) -> dict[str, Any]:
    from stopwise.early._baselines import TfidfLogisticModel
    from stopwise.early._model import EarlyOutcomeModel

    if models is None:
        return {"lightgbm": EarlyOutcomeModel()}
    if isinstance(models, EarlyOutcomeModel):
        return {models.backbone: models}
    if isinstance(models, TfidfLogisticModel):
        return {"tfidf_logistic": models}
    if not isinstance(models, Mapping) or not models:
        raise InputError("`models` must be a model or a non-empty mapping from variant name to model")
    out = {}
    for name, model in models.items():
        if not isinstance(name, str) or not name or "," in name:
            raise InputError(f"variant names must be non-empty text without commas; got {name!r}")
        if not isinstance(model, EarlyOutcomeModel | TfidfLogisticModel):
            raise InputError(f"`models[{name!r}]` must be an EarlyOutcomeModel or TfidfLogisticModel; got {type(model).__name__}")
        out[name] = model
    return out


def _leave_one_out_iv(
    trajectories: Sequence[Trajectory],
    models: Any,
    by: str,
    within: str | None,
    exclude_same: str | None,
    min_halt_step: int,
    source: str,
) -> tuple[dict[str, Any], list[Trajectory]]:
    """The named variants and the checked runs (each with the meta keys the folds need); every argument checked."""
    variants = _models_iv(models)
    for name, value in (("by", by), ("within", within), ("exclude_same", exclude_same)):
        if value is not None and (not isinstance(value, str) or not value):
            raise InputError(f"`{name}` must be a non-empty text (agent or a meta key); got {value!r}")
    if not isinstance(min_halt_step, int) or isinstance(min_halt_step, bool) or min_halt_step < 0:
        raise InputError(f"`min_halt_step` must be a non-negative integer; got {min_halt_step!r}")
    keys = [k for k in (by, within, exclude_same) if k is not None]
    return variants, check_trajectories(trajectories, source=source, meta_keys=keys)


def _fold_plan(
    runs: Sequence[Trajectory], by: str, within: str | None, exclude_same: str | None
) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """(stratum, held-out value, training indices, test indices) of every fold, strata and values sorted."""
    held = np.array([str(meta_value(r, by)) for r in runs], dtype=object)
    strata = np.array([str(meta_value(r, within)) if within else "" for r in runs], dtype=object)
    same = np.array([str(meta_value(r, exclude_same)) for r in runs], dtype=object) if exclude_same else None
    folds_plan: list[tuple[str, str, np.ndarray, np.ndarray]] = []
    for stratum in sorted(set(strata)):
        in_stratum = strata == stratum
        values = sorted(set(held[in_stratum]))
        if len(values) < 2:
            where = f" within {within} = {stratum!r}" if within else ""
            raise InputError(f"leave-one-out by {by!r} needs at least 2 values{where}; got {values}")
        for value in values:
            test = np.flatnonzero(in_stratum & (held == value))
            train_mask = in_stratum & (held != value)
            if same is not None:
                train_mask &= ~np.isin(same, np.unique(same[test]))
            train = np.flatnonzero(train_mask)
            if train.shape[0] == 0:
                raise InputError(f"fold holding out {by} = {value!r} has no training runs left (check `exclude_same`)")
            folds_plan.append((stratum, value, train, test))
    return folds_plan


def leave_one_out(
    trajectories: Sequence[Trajectory],
    models: Any = None,
    *,
    by: str = "agent",
    within: str | None = None,
    exclude_same: str | None = None,
    min_halt_step: int = 1,
    gold: Mapping[str, Any] | None = None,
    source: str = "<trajectories>",
    progress: Progress | None = None,
) -> EarlyEvaluation:
    """Leave-one-agent-out (or leave-one-group-out) evaluation of one or more early-outcome models.

    Parameters
    ----------
    trajectories : sequence of Trajectory
        Finished, labelled runs.
    models : EarlyOutcomeModel, TfidfLogisticModel or mapping of name to model, optional
        The variants to evaluate (default: ``{"lightgbm": EarlyOutcomeModel()}``). Variants that share text
        settings and ``random_state`` share each fold's fitted featurizer.
    by : str, default "agent"
        What is held out: ``"agent"`` or a ``meta`` key (``"service"``, ``"model"``, ...).
    within : str, optional
        A ``meta`` key; folds are formed inside each of its values (e.g. ``"service"`` when services have
        disjoint tasks) and training uses only that stratum.
    exclude_same : str, optional
        A ``meta`` key; training drops runs sharing the held-out runs' value (e.g. ``"model"``).
    min_halt_step : int, default 1
        Earliest step at which a run may halt.
    gold : mapping of task to gold solution, optional
        Reference solutions (enables the reference family).
    source : str
        Name of the input in error messages.
    progress : callable, optional
        Called as ``progress(done, total, description)``.

    Returns
    -------
    EarlyEvaluation

    Raises
    ------
    ValidationError
        A run lacks a binary outcome or a grouping key.
    InputError
        A stratum has fewer than two values of ``by``, or a fold has nothing to train on.

    Examples
    --------
    >>> from stopwise.early import DualHeadClassifier, EarlyOutcomeModel, leave_one_out
    >>> from stopwise.records import Step, Trajectory
    >>> def run(agent, i):
    ...     ok = i % 2 == 0
    ...     obs = "saved" if ok else "[isError] denied"
    ...     return Trajectory(agent=agent, task=f"t{i % 5}", attempt=i // 5, outcome=int(ok), task_text="update the page",
    ...                       steps=[Step(action="update_page()", tool="update_page", observation=obs)] * 6)
    >>> runs = [run(agent, i) for agent in ("a", "b", "c") for i in range(24)]
    >>> small = EarlyOutcomeModel(n_components=2, min_df=1, min_steps=1, classifier=DualHeadClassifier(min_child_samples=5, n_estimators=10))
    >>> evaluation = leave_one_out(runs, small, by="agent")
    >>> m = evaluation.metrics(0.9, 0.9)
    >>> m.n_runs, m.accuracy, round(m.delta_steps, 3)
    (72, 1.0, -0.833)
    >>> evaluation.outcome_rows(0.9, 0.9)["status"].value_counts().to_dict()
    {'predicted': 72}
    """
    variants, runs = _leave_one_out_iv(trajectories, models, by, within, exclude_same, min_halt_step, source)
    folds_plan = _fold_plan(runs, by, within, exclude_same)
    min_df = min(int(m.min_df) for m in variants.values())
    corpus = Corpus(runs, gold=gold, min_df=min_df, progress=progress)
    test_all = np.concatenate([t for *_, t in folds_plan])
    use_tokens = all(s.tokens_in is not None and s.tokens_out is not None for i in test_all for s in runs[i].steps)
    run_rows: list[dict[str, Any]] = []
    pred_parts: list[pd.DataFrame] = []
    fold_rows: list[dict[str, Any]] = []
    run_id = 0
    total = len(folds_plan) * len(variants)
    done = 0
    for fold, (stratum, value, train, test) in enumerate(folds_plan):
        cache: dict[Any, Any] = {}
        fold_runs = []
        for i in test:
            r = runs[i]
            cin, cout = _costs(r, use_tokens)
            fold_runs.append((run_id, cin, cout))
            run_rows.append(
                {
                    "run": run_id, "fold": fold, "held_out": value, "stratum": stratum, "agent": r.agent, "task": r.task,
                    "attempt": r.attempt, "outcome": int(r.outcome or 0), "n_steps": len(r.steps),
                    "total_in": float(cin[-1]), "total_out": float(cout[-1]),
                }
            )
            run_id += 1
        for name, model in variants.items():
            if progress is not None:
                progress(done, total, f"fold {fold + 1}/{len(folds_plan)} ({by} = {value}) · {name}")
            started = time.perf_counter()
            proba, info = model._fold_proba(corpus, train, test, cache)
            seconds = time.perf_counter() - started
            for (rid, cin, cout), p in zip(fold_runs, proba, strict=True):
                pred_parts.append(
                    pd.DataFrame(
                        {
                            "variant": name, "run": rid, "k": np.arange(p.shape[0]), "p_success": p[:, 0],
                            "p_failure": p[:, 1], "cum_in": cin, "cum_out": cout,
                        }
                    )
                )
            fold_rows.append({"fold": fold, "stratum": stratum, "held_out": value, "variant": name, "n_test_runs": int(test.shape[0]), **info, "seconds": round(seconds, 3)})
            done += 1
    if progress is not None:
        progress(total, total, "done")
    return EarlyEvaluation(
        runs=pd.DataFrame(run_rows),
        predictions=pd.concat(pred_parts, ignore_index=True),
        folds=pd.DataFrame(fold_rows),
        by=by,
        within=within,
        exclude_same=exclude_same,
        min_halt_step=min_halt_step,
        token_source="tokens" if use_tokens else "characters",
        info={"n_runs": len(runs), "source": source},
    )

