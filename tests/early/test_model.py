"""EarlyOutcomeModel as an estimator: parameters, validation, determinism, save/load, monitor parity, families."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from stopwise.early import EXCLUDABLE, FORMAT_VERSION, DualHeadClassifier, EarlyOutcomeModel, GoldSolution, load_model
from stopwise.errors import FileFormatError, InputError, ValidationError
from stopwise.records import Step, Trajectory


def test_init_only_stores_parameters() -> None:
    model = EarlyOutcomeModel(classifier=DualHeadClassifier(learning_rate=-5.0), exclude=("nonsense",))  # validated in fit, not here
    assert model.get_params()["classifier__learning_rate"] == -5.0
    assert not [name for name in vars(model) if name.endswith("_")]
    params = DualHeadClassifier().get_params()
    # the paper's hyperparameters are the defaults of the heads, which the model uses when `classifier` is None
    assert EarlyOutcomeModel().classifier is None and EarlyOutcomeModel().backbone == "lightgbm"
    assert {k: params[k] for k in ("learning_rate", "num_leaves", "max_depth", "min_child_samples", "subsample", "colsample_bytree", "reg_alpha", "reg_lambda", "n_estimators", "early_stopping_rounds", "validation_fraction")} == {
        "learning_rate": 0.03, "num_leaves": 31, "max_depth": 6, "min_child_samples": 200, "subsample": 0.75,
        "colsample_bytree": 0.7, "reg_alpha": 0.5, "reg_lambda": 10.0, "n_estimators": 2000, "early_stopping_rounds": 50,
        "validation_fraction": 0.15,
    }
    own = EarlyOutcomeModel().get_params()
    assert {k: own[k] for k in ("n_components", "min_df", "max_features", "min_steps", "random_state")} == {
        "n_components": 64, "min_df": 5, "max_features": 30000, "min_steps": 10, "random_state": 42,
    }
    # composable the scikit-learn way: nested parameters and clone
    tuned = EarlyOutcomeModel(classifier=DualHeadClassifier(num_leaves=7)).set_params(classifier__max_depth=3)
    copy = clone(tuned)
    assert copy.classifier is not tuned.classifier and copy.get_params()["classifier__num_leaves"] == 7
    assert copy.get_params()["classifier__max_depth"] == 3


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"classifier": DualHeadClassifier(learning_rate=-1.0)}, r"EarlyOutcomeModel: `learning_rate` must be a number in \(0, inf\); got -1.0\."),
        ({"classifier": "lightgbm"}, r"`classifier` must be a DualHeadClassifier or None"),
        ({"exclude": ("nonsense",)}, r"`exclude` must be a tuple of feature families or groups from behavioral, textual"),
        ({"success_threshold": 1.5}, r"`success_threshold` must be a number in \(0, 1\] or None; got 1.5"),
        ({"classifier": DualHeadClassifier(backbone="mlp")}, r"`backbone` must be one of 'lightgbm', 'logistic'; got 'mlp'"),
        ({"random_state": -3}, r"`random_state` must be a non-negative integer"),
        ({"min_df": 0}, r"`min_df` must be an integer in \[1, inf\); got 0"),
    ],
)
def test_bad_parameters_are_named_in_fit(runs: list[Trajectory], params: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        EarlyOutcomeModel(**params).fit(runs)


def test_bad_runs_are_named_by_row_and_field(runs: list[Trajectory]) -> None:
    bad = [*runs[:3], runs[3].model_copy(update={"outcome": None})]
    with pytest.raises(ValidationError, match=r"<trajectories>, row 4, field 'outcome': must be 0 or 1"):
        EarlyOutcomeModel().fit(bad)
    with pytest.raises(InputError, match="list of Trajectory"):
        EarlyOutcomeModel().fit(runs[0])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="min_steps"):
        EarlyOutcomeModel(min_steps=1000).fit(runs)


def test_fit_sets_learned_state(fitted: EarlyOutcomeModel, runs: list[Trajectory]) -> None:
    train = [r for r in runs if r.agent != "agent-3"]
    assert fitted.n_train_runs_ == 36
    assert fitted.n_train_prefixes_ == sum(len(r.steps) + 1 for r in train)
    assert len(fitted.features_) == fitted.columns_.shape[0] == fitted.featurizer_.n_features_
    assert {s.family for s in fitted.features_} == {"behavioral", "textual"}  # no gold: no reference family
    assert set(fitted.classifier_.validation_groups_) < {r.task for r in train}


def test_same_random_state_same_model_different_seed_different_model(runs: list[Trajectory], small_params: dict) -> None:
    train = [r for r in runs if r.agent != "agent-0"]
    test = [r for r in runs if r.agent == "agent-0"]
    a = np.vstack(EarlyOutcomeModel(**small_params, random_state=1).fit(train).predict_proba(test))
    b = np.vstack(EarlyOutcomeModel(**small_params, random_state=1).fit(train).predict_proba(test))
    c = np.vstack(EarlyOutcomeModel(**small_params, random_state=2).fit(train).predict_proba(test))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_monitor_probabilities_equal_batch_probabilities(fitted: EarlyOutcomeModel, runs: list[Trajectory]) -> None:
    for run, p in zip(runs[36:], fitted.predict_proba(runs[36:]), strict=True):
        monitor = fitted.monitor(run.task_text, success_threshold=1.0, failure_threshold=1.0)
        got = [(v.p_success, v.p_failure) for v in (monitor.observe(step) for step in run.steps)]
        np.testing.assert_allclose(np.array(got), p[1:], rtol=0, atol=1e-15)


def test_monitor_initial_verdict_is_the_k0_prefix(fitted: EarlyOutcomeModel, runs: list[Trajectory]) -> None:
    run = runs[40]
    p = fitted.predict_proba([run])[0]
    monitor = fitted.monitor(run.task_text, success_threshold=0.01, failure_threshold=0.01)
    first = monitor.initial()
    assert (first.step, first.action) == (0, "continue")  # min_halt_step = 1: never halts before a step
    assert (first.p_success, first.p_failure) == pytest.approx(tuple(p[0]), abs=1e-15)
    monitor.observe(run.steps[0])
    with pytest.raises(InputError, match="already started"):
        monitor.initial()


def test_monitor_accepts_mappings_and_rejects_junk(fitted: EarlyOutcomeModel) -> None:
    monitor = fitted.monitor("Repair module 1")
    assert monitor.observe({"action": "ls", "observation": "a.py", "tool": "bash"}).step == 1
    with pytest.raises(InputError, match="step contract"):
        monitor.observe({"action": "ls", "bogus": 1})
    with pytest.raises(InputError, match="must be a Step or a mapping"):
        monitor.observe("ls")  # type: ignore[arg-type]


def test_save_and_load_round_trip(fitted: EarlyOutcomeModel, runs: list[Trajectory], tmp_path: Path) -> None:
    path = fitted.save(tmp_path / "model")
    manifest = json.loads((tmp_path / "model" / "manifest.json").read_text())
    assert manifest["format_version"] == FORMAT_VERSION
    assert [f["name"] for f in manifest["features"] if f["used"]] == [s.name for s in fitted.features_]
    assert {f["family"] for f in manifest["features"]} == {"behavioral", "textual"}
    loaded = load_model(path)
    np.testing.assert_array_equal(np.vstack(loaded.predict_proba(runs[36:])), np.vstack(fitted.predict_proba(runs[36:])))
    assert loaded.get_params(deep=False).keys() == fitted.get_params(deep=False).keys()
    assert {k: v for k, v in loaded.get_params().items() if k != "classifier"} == {
        k: v for k, v in fitted.get_params().items() if k != "classifier"
    }
    with pytest.raises(InputError, match="pass --force"):
        fitted.save(tmp_path / "model")  # an existing model is replaced only with force
    fitted.save(tmp_path / "model", force=True)
    assert (tmp_path / "model" / ".stopwise-output").read_text().startswith(f"stopwise.early.model {FORMAT_VERSION}\n")
    assert ".stopwise-output" not in json.loads((tmp_path / "model" / "manifest.json").read_text())["files"]
    assert loaded.thresholds_ == fitted.thresholds_ and loaded.quality_ == fitted.quality_
    assert loaded.guard_ is not None and loaded.guard_.as_dict() == fitted.guard_.as_dict()


def test_load_names_what_is_wrong(fitted: EarlyOutcomeModel, tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="no such model directory"):
        load_model(tmp_path / "missing")
    path = fitted.save(tmp_path / "m")
    manifest_file = Path(path) / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["format_version"] = 99
    manifest_file.write_text(json.dumps(manifest))
    with pytest.raises(ValidationError, match=r"manifest.json, field 'format_version': must be 3 \(this library's model format; 2 still loads\).*; got 99"):
        load_model(path)
    path = fitted.save(tmp_path / "m2")
    with open(Path(path) / "success.txt", "a") as handle:
        handle.write("\n")
    with pytest.raises(ValidationError, match=r"success.txt, field 'sha256': must match the digest"):
        load_model(path)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "x.txt").write_text("x")
    with pytest.raises(InputError, match=r"--out .*plain: is a directory stopwise did not write"):
        fitted.save(tmp_path / "plain")
    assert (tmp_path / "plain" / "x.txt").read_text() == "x"


def test_a_model_saved_before_0_1_still_loads_and_is_replaced_only_with_force(
    fitted: EarlyOutcomeModel, runs: list[Trajectory], tmp_path: Path
) -> None:
    path = Path(fitted.save(tmp_path / "old"))
    (path / ".stopwise-output").unlink()  # the layout written before 0.1: its own marker file
    (path / ".stopwise-model").write_text(f"stopwise.early.model {FORMAT_VERSION}\n")
    loaded = load_model(path)
    np.testing.assert_array_equal(np.vstack(loaded.predict_proba(runs[36:])), np.vstack(fitted.predict_proba(runs[36:])))
    with pytest.raises(InputError, match="a saved model; pass --force"):
        fitted.save(path)
    fitted.save(path, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]
    assert (path / ".stopwise-output").is_file() and not (path / ".stopwise-model").exists()
    # an evaluation directory (old or new marker) is never replaced by a model, --force or not
    (tmp_path / "evaluation").mkdir()
    (tmp_path / "evaluation" / ".stopwise-evaluation").write_text("stopwise.early.evaluation 1\n")
    with pytest.raises(InputError, match="holds a saved evaluation, not a saved model"):
        fitted.save(tmp_path / "evaluation", force=True)


def test_exclude_drops_families_and_groups(runs: list[Trajectory], small_params: dict) -> None:
    train = [r for r in runs if r.agent != "agent-0"]
    assert "timing" in EXCLUDABLE and "textual" in EXCLUDABLE
    no_text = EarlyOutcomeModel(**small_params, exclude=("textual",)).fit(train)
    assert {s.family for s in no_text.features_} == {"behavioral"}
    no_timing = EarlyOutcomeModel(**small_params, exclude=("timing", "task")).fit(train)
    assert not {s.group for s in no_timing.features_} & {"timing", "task"}
    assert {s.group for s in no_timing.features_} >= {"activity", "action", "feedback"}


def test_logistic_backbone_round_trip(runs: list[Trajectory], small_params: dict, tmp_path: Path) -> None:
    model = EarlyOutcomeModel(**{**small_params, "classifier": DualHeadClassifier(backbone="logistic")}).fit(runs[:36])
    assert model.classifier_.best_iterations_ == {"success": 0, "failure": 0}
    loaded = load_model(model.save(tmp_path / "lr"))
    np.testing.assert_array_equal(np.vstack(loaded.predict_proba(runs[36:40])), np.vstack(model.predict_proba(runs[36:40])))


def test_reference_family_with_gold(runs: list[Trajectory], small_params: dict) -> None:
    gold = {f"task-{t}": GoldSolution(f"--- a/src/m{t}.py\n+++ b/src/m{t}.py\n@@ -1 +1 @@\n-x = old(1)\n+x = new(1)\n") for t in range(12)}
    model = EarlyOutcomeModel(**small_params).fit(runs[:36], gold=gold)
    names = [s.name for s in model.features_]
    assert "file_hits" in names and "gold_hunks" in names
    run = Trajectory(
        agent="x", task="task-1", outcome=1, task_text=runs[1].task_text,
        steps=[Step(action='edit_file({"path": "src/m1.py"})', tool="edit_file", observation="ok")],
    )
    x = model.featurizer_.transform([run], gold=gold)[0]
    col = {s.name: j for j, s in enumerate(model.featurizer_.features_)}
    assert x[0, col["file_hits"]] == 0 and x[1, col["file_hits"]] == 1 and x[1, col["gold_file_edited"]] == 1
    assert x[1, col["gold_files"]] == 1 and x[1, col["gold_hunks"]] == 1
    # a task without gold gets missing reference features, not zeros
    x_none = model.featurizer_.transform([run], gold={})[0]
    assert np.isnan(x_none[1, col["file_hits"]])
