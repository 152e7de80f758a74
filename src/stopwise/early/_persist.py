"""Saving and loading an EarlyOutcomeModel: a directory with a versioned feature manifest.

Layout::

    model/
      manifest.json    format name and version, library version, parameters, the feature manifest
                       (every column: name, family, group, used or not), text blocks, heads and their
                       calibration, training volume, and the sha256 of every other file
      text.npz         per block: idf and projection
      vocabulary_<block>.txt  per block: the terms, one per line, sorted
      success.txt      the success head (LightGBM model text) ─ or heads.npz for the logistic backbone
      failure.txt      the failure head

      .stopwise-model  marker: the format tag; only a directory holding it is ever replaced

No pickle is used. A model directory may come from someone else, so loading treats it as untrusted: file
names from the manifest must be plain names inside the directory (no ``..``, no absolute path, no symbolic
link), every file's size is checked against a limit before it is read, ``text.npz`` members' shapes are read
from their headers and checked against the manifest before any array is allocated, and each LightGBM head is
parsed by LightGBM in a child process before this process loads it (a crafted file cannot abort the caller).
Loading then checks the format version, the feature manifest against this library's feature definitions,
and every file's digest, and names the file and field that disagree.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from stopwise._version import __version__
from stopwise.early._calibration import PlattCalibrator
from stopwise.early._featurizer import PrefixFeaturizer, feature_specs
from stopwise.early._guard import FamiliarityGuard
from stopwise.early._heads import HEADS, DualHeadClassifier, LightGBMHead, LogisticHead
from stopwise.early._risk import RiskControl
from stopwise.early._text import TEXT_BLOCKS, TextBlock
from stopwise.errors import FileFormatError, InputError, Problem, ValidationError

__all__ = ["FORMAT", "FORMAT_VERSION", "MARKER", "check_output_dir", "is_model_dir", "load_model", "save_model"]

FORMAT = "stopwise.early.model"
FORMAT_VERSION = 2
"""Version of the saved-model layout; bumped whenever a feature definition or the layout changes."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.random.Generator):
        return None
    return value


MARKER = ".stopwise-model"
"""File every saved model directory holds; its text is :data:`FORMAT` and the format version."""


def _marker_text() -> str:
    return f"{FORMAT} {FORMAT_VERSION}\n"


def is_model_dir(path: Path) -> bool:
    """Whether ``path`` is a directory stopwise wrote as a model (it holds the marker file with the format tag)."""
    marker = path / MARKER
    try:
        return marker.is_file() and not marker.is_symlink() and marker.stat().st_size < 256 and marker.read_text(encoding="utf-8").startswith(FORMAT + " ")
    except OSError:
        return False


def check_output_dir(path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Refuse an output directory stopwise may not replace; called before any work and again when saving.

    Allowed: a path that does not exist, an empty directory, or (with ``force``) a model directory stopwise
    wrote (marker file). Refused: a file, a directory with anything else in it, the current directory or one
    of its parents.

    Raises
    ------
    InputError
        Naming the path and the rule (field ``--out``).
    """
    target = Path(path)
    if not target.exists() and not target.is_symlink():
        return target
    if target.is_symlink() or not target.is_dir():
        raise InputError(f"--out {target}: exists and is not a directory; refusing to replace it")
    cwd = Path.cwd().resolve()
    resolved = target.resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise InputError(f"--out {target}: is the current directory or one of its parents; choose a new directory for the model")
    if not any(target.iterdir()):
        return target
    if not is_model_dir(target):
        raise InputError(
            f"--out {target}: exists and holds files stopwise did not write (no {MARKER} marker); refusing to replace it — "
            "choose a new or empty directory"
        )
    if not force:
        raise InputError(f"--out {target}: a saved model is already there; pass --force to replace it")
    return target


def save_model(model: Any, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write a fitted model to the directory ``path``.

    The model is written to a temporary directory beside ``path`` and renamed into place only when complete.
    An existing ``path`` is replaced only if it is empty, or with ``force`` if stopwise wrote it (see
    :func:`check_output_dir`); nothing else is ever deleted.
    """
    target = check_output_dir(path, force=force)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        featurizer = model.featurizer_
        arrays: dict[str, np.ndarray] = {}
        for name, block in featurizer.blocks_.items():
            (tmp / f"vocabulary_{name}.txt").write_text("".join(f"{term}\n" for term in block.vocabulary), encoding="utf-8")
            arrays[f"{name}.idf"] = block.idf
            arrays[f"{name}.projection"] = block.projection
        np.savez_compressed(tmp / "text.npz", **arrays)  # type: ignore[arg-type]
        classifier = model.classifier_
        heads: dict[str, Any] = {}
        if classifier.backbone == "lightgbm":
            for name in HEADS:
                (tmp / f"{name}.txt").write_text(classifier.heads_[name].to_text(), encoding="utf-8")
        else:
            head_arrays = {f"{name}.{key}": value for name in HEADS for key, value in classifier.heads_[name].to_arrays().items()}
            np.savez_compressed(tmp / "heads.npz", **head_arrays)
        for name in HEADS:
            cal = classifier.calibrators_[name]
            heads[name] = {
                "backbone": classifier.backbone,
                "iterations": classifier.best_iterations_[name],
                "calibration": {"a": cal.coef_, "b": cal.intercept_, "n_rows": cal.n_samples_},
            }
        used = set(int(j) for j in model.columns_)
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "stopwise_version": __version__,
            "params": {k: _jsonable(v) for k, v in model.get_params().items()},
            "reference": bool(featurizer.reference_),
            "features": [
                {"name": spec.name, "family": spec.family, "group": spec.group, "used": j in used}
                for j, spec in enumerate(featurizer.features_)
            ],
            "text_blocks": {
                name: {"kind": block.kind, "n_terms": int(block.vocabulary.shape[0]), "n_components": block.n_components}
                for name, block in featurizer.blocks_.items()
            },
            "heads": heads,
            "thresholds": dict(model.thresholds_),
            "risk_control": {head: rc.as_dict() for head, rc in model.risk_control_.items()},
            "calibration_tasks": [str(t) for t in model.calibration_tasks_],
            "guard": model.guard_.as_dict() if model.guard_ is not None else None,
            "quality": model.quality_,
            "training": {
                "n_runs": model.n_train_runs_,
                "n_prefixes": model.n_train_prefixes_,
                "validation_tasks": [str(g) for g in classifier.validation_groups_],
                "n_validation_rows": int(classifier.validation_mask_.sum()),
            },
            "files": {},
        }
        manifest["files"] = {p.name: _digest(p) for p in sorted(tmp.iterdir())}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        (tmp / MARKER).write_text(_marker_text(), encoding="utf-8")
        check_output_dir(target, force=force)
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            old.rmdir()
            target.rename(old)
        try:
            tmp.rename(target)
        except BaseException:
            if old is not None:
                old.rename(target)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _vocabulary(path: Path) -> np.ndarray:
    if not path.exists():
        raise FileFormatError(f"{path}: missing from the saved model")
    terms = path.read_text(encoding="utf-8").split("\n")[:-1]
    out = np.empty(len(terms), dtype=object)
    out[:] = terms
    return out


def _problem(file: Path, field: str, rule: str, value: Any = None) -> ValidationError:
    return ValidationError([Problem(str(file), None, field, rule, value)])


def load_model(path: str | os.PathLike[str]) -> Any:
    """Read a model directory written by :func:`save_model`.

    Raises
    ------
    FileFormatError
        The directory or one of its files is missing or unreadable.
    ValidationError
        The manifest's format, version, features or a file digest disagree with this library.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from stopwise.early import EarlyOutcomeModel, load_model
    >>> from stopwise.records import Step, Trajectory
    >>> runs = [Trajectory(agent="a", task=f"t{i % 5}", outcome=i % 2, task_text="fix it",
    ...                    steps=[Step(action="ls", tool="bash", observation="ok" if i % 2 else "error")] * 4)
    ...         for i in range(36)]
    >>> model = EarlyOutcomeModel(n_components=2, min_df=1, min_steps=1, min_child_samples=5, n_estimators=10).fit(runs)
    >>> folder = model.save(pathlib.Path(tempfile.mkdtemp()) / "model")
    >>> loaded = load_model(folder)
    >>> bool((loaded.predict_proba(runs[:2])[0] == model.predict_proba(runs[:2])[0]).all())
    True
    """
    from stopwise.early._model import EarlyOutcomeModel

    folder = Path(path)
    manifest_path = folder / "manifest.json"
    if not folder.is_dir():
        raise FileFormatError(f"{folder}: no such model directory (expected the output of `stopwise early train`)")
    if not manifest_path.exists():
        raise FileFormatError(f"{manifest_path}: missing; {folder} is not a saved stopwise model")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FileFormatError(f"{manifest_path}: cannot be read as JSON: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _problem(manifest_path, "format", f"must be {FORMAT!r}", manifest.get("format") if isinstance(manifest, dict) else None)
    if manifest.get("format_version") != FORMAT_VERSION:
        raise _problem(
            manifest_path,
            "format_version",
            f"must be {FORMAT_VERSION} (this library's model format); retrain the model with this version",
            manifest.get("format_version"),
        )
    for name, digest in manifest.get("files", {}).items():
        file = folder / name
        if not file.exists():
            raise FileFormatError(f"{file}: missing from the saved model")
        if _digest(file) != digest:
            raise _problem(file, "sha256", "must match the digest recorded in manifest.json (the file was changed)", _digest(file)[:16])
    params = manifest["params"]
    try:
        kwargs: dict[str, Any] = {k: (tuple(v) if k == "exclude" else v) for k, v in params.items()}
        model = EarlyOutcomeModel(**kwargs)
    except TypeError as exc:
        raise _problem(manifest_path, "params", f"must be EarlyOutcomeModel parameters ({exc})") from exc
    expected = feature_specs(int(params["n_components"]), reference=bool(manifest["reference"]))
    saved = manifest["features"]
    if [(s.name, s.family, s.group) for s in expected] != [(f["name"], f["family"], f["group"]) for f in saved]:
        raise _problem(manifest_path, "features", "must match this library's feature definitions; retrain the model")
    with np.load(folder / "text.npz", allow_pickle=False) as arrays:
        blocks = {
            name: TextBlock(
                name=name,
                kind=TEXT_BLOCKS[name][1],
                vocabulary=_vocabulary(folder / f"vocabulary_{name}.txt"),
                idf=arrays[f"{name}.idf"],
                projection=arrays[f"{name}.projection"],
            )
            for name in TEXT_BLOCKS
        }
    featurizer = PrefixFeaturizer(n_components=model.n_components, min_df=model.min_df, max_features=model.max_features)
    featurizer.blocks_ = blocks
    featurizer.reference_ = bool(manifest["reference"])
    featurizer.features_ = expected
    featurizer.feature_names_out_ = np.array([s.name for s in expected], dtype=object)
    featurizer.n_features_ = len(expected)
    classifier = DualHeadClassifier(**model._head_params())
    heads: dict[str, Any] = {}
    if model.backbone == "lightgbm":
        for name in HEADS:
            heads[name] = LightGBMHead.from_text((folder / f"{name}.txt").read_text(encoding="utf-8"))
    else:
        with np.load(folder / "heads.npz", allow_pickle=False) as arrays:
            for name in HEADS:
                heads[name] = LogisticHead.from_arrays({k.split(".", 1)[1]: arrays[k] for k in arrays.files if k.startswith(name + ".")})
    classifier.heads_ = heads
    classifier.calibrators_ = {}
    for name in HEADS:
        cal = PlattCalibrator()
        info = manifest["heads"][name]["calibration"]
        cal.coef_, cal.intercept_, cal.n_samples_ = float(info["a"]), float(info["b"]), int(info["n_rows"])
        classifier.calibrators_[name] = cal
    classifier.best_iterations_ = {name: int(manifest["heads"][name]["iterations"]) for name in HEADS}
    classifier.validation_groups_ = np.array(manifest["training"]["validation_tasks"], dtype=object)
    classifier.validation_mask_ = np.zeros(0, dtype=bool)
    columns = np.array([j for j, f in enumerate(saved) if f["used"]], dtype=np.int64)
    classifier.n_features_in_ = int(columns.shape[0])
    model.featurizer_ = featurizer
    model.classifier_ = classifier
    model.columns_ = columns
    model.features_ = [expected[j] for j in columns]
    model.n_train_runs_ = int(manifest["training"]["n_runs"])
    model.n_train_prefixes_ = int(manifest["training"]["n_prefixes"])
    _restore_thresholds(model, manifest, manifest_path, featurizer.n_features_)
    return model


def _restore_thresholds(model: Any, manifest: dict[str, Any], manifest_path: Path, n_features: int) -> None:
    """Thresholds in use, Learn-then-Test results, guard and quality figures, each checked before use."""
    thresholds = manifest.get("thresholds")
    if not isinstance(thresholds, dict) or set(thresholds) != set(HEADS) or not all(
        v is None or (isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= 1) for v in thresholds.values()
    ):
        raise _problem(manifest_path, "thresholds", "must map success and failure to a number in (0, 1] or null", thresholds)
    model.thresholds_ = {k: (None if v is None else float(v)) for k, v in thresholds.items()}
    try:
        model.risk_control_ = {head: RiskControl.from_dict(rc) for head, rc in (manifest.get("risk_control") or {}).items()}
    except (TypeError, ValueError) as exc:
        raise _problem(manifest_path, "risk_control", f"must hold Learn-then-Test results ({exc})") from None
    model.calibration_tasks_ = np.array([str(t) for t in manifest.get("calibration_tasks") or []], dtype=object)
    guard = manifest.get("guard")
    try:
        model.guard_ = None if guard is None else FamiliarityGuard.from_dict(guard, n_features)
    except InputError as exc:
        raise _problem(manifest_path, "guard", str(exc)) from None
    quality = manifest.get("quality")
    model.quality_ = quality if isinstance(quality, dict) else {}
