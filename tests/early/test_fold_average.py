"""A cross-fitted model deploys the mean of its fold heads: the average, persistence, composability."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from tests.early.conftest import SMALL, make_runs

from stopwise.early import DualHeadClassifier, EarlyOutcomeModel, FoldAverageClassifier, load_model
from stopwise.errors import InputError, ValidationError
from stopwise.records import Trajectory


@pytest.fixture(scope="module")
def cross_runs() -> list[Trajectory]:
    return make_runs(n_agents=4, n_tasks=15, seed=3)


@pytest.fixture(scope="module")
def averaged(cross_runs: list[Trajectory]) -> EarlyOutcomeModel:
    return EarlyOutcomeModel(**SMALL, max_halt_error=0.1, calibration_folds=3).fit(cross_runs)  # type: ignore[arg-type]


def test_the_average_is_the_mean_of_the_fold_heads_probabilities(averaged: EarlyOutcomeModel, cross_runs: list[Trajectory]) -> None:
    heads = averaged.classifier_
    assert isinstance(heads, FoldAverageClassifier) and heads.n_folds == 3
    X = np.vstack(averaged.featurizer_.transform(cross_runs[:4]))[:, averaged.columns_]
    # independent: each fold head's calibrated probability is expit(a * raw + b) of its own booster
    from scipy.special import expit

    per_fold = [
        np.column_stack([expit(c.calibrators_[h].coef_ * c.heads_[h].raw(X) + c.calibrators_[h].intercept_) for h in ("success", "failure")])
        for c in heads.classifiers_
    ]
    np.testing.assert_allclose(np.vstack(averaged.predict_proba(cross_runs[:4])), sum(per_fold) / 3, atol=1e-12)
    assert heads.best_iterations_ == {h: sum(c.best_iterations_[h] for c in heads.classifiers_) for h in ("success", "failure")}
    # the monitor's one-row path gives the same averaged probabilities, step by step
    run = cross_runs[0]
    monitor = averaged.monitor(run.task_text, guard=False)
    seen = np.array([[v.p_success, v.p_failure] for v in (monitor.observe(step) for step in run.steps)])
    np.testing.assert_allclose(seen, averaged.predict_proba([run])[0][1:], atol=1e-9)


def test_fold_average_round_trip_gives_identical_probabilities(
    averaged: EarlyOutcomeModel, cross_runs: list[Trajectory], tmp_path: Path
) -> None:
    path = Path(averaged.save(tmp_path / "model"))
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["deployed_heads"] == "fold-average" and len(manifest["fold_heads"]) == 3 and "heads" not in manifest
    assert {f"fold{j}_{h}.txt" for j in range(3) for h in ("success", "failure")} <= set(manifest["files"])
    assert not (path / "success.txt").exists()
    loaded = load_model(path)
    assert isinstance(loaded.classifier_, FoldAverageClassifier) and loaded.deployed_heads_ == "fold-average"
    np.testing.assert_array_equal(np.vstack(loaded.predict_proba(cross_runs)), np.vstack(averaged.predict_proba(cross_runs)))
    assert loaded.get_params(deep=False)["deployed_heads"] == "fold-average"
    assert loaded.quality_ == averaged.quality_ and loaded.thresholds_ == averaged.thresholds_
    assert loaded.classifier_.fold_iterations_ == averaged.classifier_.fold_iterations_  # type: ignore[union-attr]
    assert [list(c.validation_groups_) for c in loaded.classifier_.classifiers_] == [  # type: ignore[union-attr]
        list(c.validation_groups_) for c in averaged.classifier_.classifiers_  # type: ignore[union-attr]
    ]
    assert [v and v.predicted for v in loaded.predict(cross_runs)] == [v and v.predicted for v in averaged.predict(cross_runs)]


def test_logistic_fold_heads_round_trip(cross_runs: list[Trajectory], tmp_path: Path) -> None:
    params = {**SMALL, "classifier": DualHeadClassifier(backbone="logistic")}
    model = EarlyOutcomeModel(**params, max_halt_error=0.1, calibration_folds=2).fit(cross_runs)  # type: ignore[arg-type]
    loaded = load_model(model.save(tmp_path / "lr"))
    assert sorted(p.name for p in (tmp_path / "lr").glob("*heads.npz")) == ["fold0_heads.npz", "fold1_heads.npz"]
    np.testing.assert_array_equal(np.vstack(loaded.predict_proba(cross_runs[:5])), np.vstack(model.predict_proba(cross_runs[:5])))


def test_a_format_2_model_loads_as_refit_and_bad_fold_heads_are_refused(cross_runs: list[Trajectory], tmp_path: Path) -> None:
    refit = EarlyOutcomeModel(**SMALL, max_halt_error=0.1, calibration_folds=3, deployed_heads="refit").fit(cross_runs)  # type: ignore[arg-type]
    path = Path(refit.save(tmp_path / "v2"))
    manifest_file = path / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    assert manifest["deployed_heads"] == "refit" and "fold_heads" not in manifest
    # the format-2 manifest: no deployed_heads anywhere (such models always deployed heads refitted on all runs)
    manifest["format_version"] = 2
    del manifest["deployed_heads"], manifest["params"]["deployed_heads"]
    manifest_file.write_text(json.dumps(manifest))
    old = load_model(path)
    assert old.deployed_heads == "refit" and old.deployed_heads_ == "refit" and isinstance(old.classifier_, DualHeadClassifier)
    np.testing.assert_array_equal(np.vstack(old.predict_proba(cross_runs[:5])), np.vstack(refit.predict_proba(cross_runs[:5])))
    manifest["format_version"] = 3
    manifest["deployed_heads"] = "median"
    manifest_file.write_text(json.dumps(manifest))
    with pytest.raises(ValidationError, match=r"field 'deployed_heads': must be 'refit' .* or 'fold-average' .*; got 'median'"):
        load_model(path)


def test_fold_heads_must_match_the_folds_of_the_parameters(averaged: EarlyOutcomeModel, tmp_path: Path) -> None:
    path = Path(averaged.save(tmp_path / "m"))
    manifest_file = path / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["params"]["calibration_folds"] = 4
    manifest_file.write_text(json.dumps(manifest))
    with pytest.raises(ValidationError, match=r"field 'fold_heads': must hold one head set per cross-fitting fold .*; got 3"):
        load_model(path)


def test_deployed_heads_is_a_validated_parameter_kept_by_clone(averaged: EarlyOutcomeModel, cross_runs: list[Trajectory]) -> None:
    assert averaged.get_params()["deployed_heads"] == "fold-average"
    copy = clone(averaged)
    assert copy.get_params().keys() == averaged.get_params().keys() and copy.deployed_heads == "fold-average"
    assert not hasattr(copy, "classifier_")
    assert clone(averaged.set_params(deployed_heads="refit")).deployed_heads == "refit"
    averaged.set_params(deployed_heads="fold-average")
    with pytest.raises(InputError, match=r"EarlyOutcomeModel: `deployed_heads` must be one of 'fold-average', 'refit'; got 'mean'"):
        EarlyOutcomeModel(**SMALL, max_halt_error=0.1, deployed_heads="mean").fit(cross_runs)  # type: ignore[arg-type]
    # without cross-fitting there are no fold heads: the heads are fitted on all runs whatever the parameter says
    plain = EarlyOutcomeModel(**SMALL).fit(cross_runs)  # type: ignore[arg-type]
    assert plain.deployed_heads == "fold-average" and plain.deployed_heads_ == "refit" and isinstance(plain.classifier_, DualHeadClassifier)


def test_fold_average_classifier_refuses_unfitted_or_mismatched_heads() -> None:
    with pytest.raises(InputError, match="one or more fitted DualHeadClassifier"):
        FoldAverageClassifier([])
    with pytest.raises(InputError, match="one or more fitted DualHeadClassifier"):
        FoldAverageClassifier([DualHeadClassifier()])
    rng = np.random.default_rng(0)
    y = np.tile([0, 1], 100)
    groups = np.arange(200) // 10
    a = DualHeadClassifier(backbone="logistic", random_state=0).fit(rng.normal(size=(200, 2)), y, groups=groups)
    b = DualHeadClassifier(backbone="logistic", random_state=0).fit(rng.normal(size=(200, 3)), y, groups=groups)
    with pytest.raises(InputError, match=r"share one feature width; got \[2, 3\]"):
        FoldAverageClassifier([a, b])
