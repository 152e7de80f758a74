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
      fold<j>_success.txt, fold<j>_failure.txt (or fold<j>_heads.npz)
                       instead of the three above when the model deploys the average of its K cross-fitting
                       fold heads (``deployed_heads="fold-average"``): one set per fold, j = 0..K−1

      .stopwise-output marker (:mod:`stopwise._atomic`): ``stopwise.early.model <version>``; only a directory
                       holding it is ever replaced (directories saved before 0.1 hold ``.stopwise-model`` instead)

Format 3 added ``deployed_heads`` and the fold-head sets; a format-2 directory (always heads refitted on all
training runs) still loads, as ``deployed_heads="refit"``.

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
import stat
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from stopwise._atomic import MARKER, check_output, write_directory
from stopwise._params import check_params
from stopwise._version import __version__
from stopwise.early._calibration import PlattCalibrator
from stopwise.early._featurizer import PrefixFeaturizer, feature_specs
from stopwise.early._fold_average import FoldAverageClassifier
from stopwise.early._guard import FamiliarityGuard
from stopwise.early._heads import HEADS, DualHeadClassifier, LightGBMHead, LogisticHead
from stopwise.early._risk import RiskControl
from stopwise.early._text import TEXT_BLOCKS, TextBlock
from stopwise.errors import FileFormatError, InputError, Problem, ValidationError

__all__ = ["FORMAT", "FORMAT_VERSION", "MODEL_KIND", "check_output_dir", "load_model", "save_model"]

FORMAT = "stopwise.early.model"
FORMAT_VERSION = 3
"""Version of the saved-model layout; bumped whenever a feature definition or the layout changes."""
READABLE_VERSIONS = (2, 3)
"""Versions :func:`load_model` reads (2: before fold-average heads; loaded as ``deployed_heads="refit"``)."""


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


MODEL_KIND = FORMAT
"""The kind of output (:func:`stopwise._atomic.output_kind`) a saved model directory holds."""


def check_output_dir(path: str | os.PathLike[str], *, force: bool = False, kind: str = MODEL_KIND) -> Path:
    """Refuse an output directory stopwise may not replace; called before any work and again when saving.

    Allowed: a path that does not exist, an empty directory, or (with ``force``) a directory stopwise
    wrote as the same ``kind`` of output. Refused: a file, a directory with anything else in it, the
    current directory or one of its parents (:func:`stopwise._atomic.check_output`).

    Raises
    ------
    OutputExistsError
        Naming the path and the rule (field ``--out``).
    """
    return check_output(path, force=force, directory=True, kind=kind, name="--out")


def save_model(model: Any, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Write a fitted model to the directory ``path``.

    The model is written to a temporary directory beside ``path`` and renamed into place only when complete.
    An existing ``path`` is replaced only if it is empty, or with ``force`` if stopwise wrote it (see
    :func:`check_output_dir`); nothing else is ever deleted.
    """
    write_directory(path, lambda folder: _write_model(model, folder), force=force, kind=MODEL_KIND, version=FORMAT_VERSION, name="--out")
    return Path(path)


def _write_model(model: Any, tmp: Path) -> list[Path]:
    """Write the model's files and ``manifest.json`` into the fresh directory ``tmp``; returns their paths."""
    featurizer = model.featurizer_
    arrays: dict[str, np.ndarray] = {}
    for name, block in featurizer.blocks_.items():
        (tmp / f"vocabulary_{name}.txt").write_text("".join(f"{term}\n" for term in block.vocabulary), encoding="utf-8")
        arrays[f"{name}.idf"] = block.idf
        arrays[f"{name}.projection"] = block.projection
    np.savez_compressed(tmp / "text.npz", **arrays)  # type: ignore[arg-type]
    classifier = model.classifier_
    fold_average = isinstance(classifier, FoldAverageClassifier)
    if fold_average:
        fold_heads = [_save_head_set(tmp, c, f"fold{j}_") for j, c in enumerate(classifier.classifiers_)]
    else:
        heads = _save_head_set(tmp, classifier, "")
    used = set(int(j) for j in model.columns_)
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "stopwise_version": __version__,
        "params": {k: _jsonable(v) for k, v in model.get_params(deep=False).items() if k != "classifier"},
        "classifier": None if model.classifier is None else {k: _jsonable(v) for k, v in model.classifier.get_params().items()},
        "reference": bool(featurizer.reference_),
        "features": [
            {"name": spec.name, "family": spec.family, "group": spec.group, "used": j in used}
            for j, spec in enumerate(featurizer.features_)
        ],
        "text_blocks": {
            name: {"kind": block.kind, "n_terms": int(block.vocabulary.shape[0]), "n_components": block.n_components}
            for name, block in featurizer.blocks_.items()
        },
        "deployed_heads": "fold-average" if fold_average else "refit",
        **({"fold_heads": fold_heads} if fold_average else {"heads": heads}),
        "thresholds": dict(model.thresholds_),
        "risk_control": {head: rc.as_dict() for head, rc in model.risk_control_.items()},
        "calibration_tasks": [str(t) for t in model.calibration_tasks_],
        "guard": model.guard_.as_dict() if model.guard_ is not None else None,
        "quality": model.quality_,
        "reliability": model.reliability_,
        "training": {
            "n_runs": model.n_train_runs_,
            "n_prefixes": model.n_train_prefixes_,
            **({} if getattr(model, "train_run_keys_", None) is None else {"run_keys": [str(k) for k in model.train_run_keys_]}),
            "validation_tasks": [str(g) for g in classifier.validation_groups_],
            "n_validation_rows": None if fold_average else int(classifier.validation_mask_.sum()),
        },
        "files": {},
    }
    manifest["files"] = {p.name: _digest(p) for p in sorted(tmp.iterdir()) if p.name != MARKER}
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return sorted(p for p in tmp.iterdir() if p.name != MARKER)


def _head_files(backbone: str, prefix: str) -> list[str]:
    """The files of one set of heads (``prefix`` "" for the deployed heads, ``"fold<j>_"`` for a fold's)."""
    return [f"{prefix}{name}.txt" for name in HEADS] if backbone == "lightgbm" else [f"{prefix}heads.npz"]


def _save_head_set(folder: Path, classifier: DualHeadClassifier, prefix: str) -> dict[str, Any]:
    """Write one fitted :class:`DualHeadClassifier`'s heads; return their manifest entry (calibration, rounds)."""
    if classifier.backbone == "lightgbm":
        for name in HEADS:
            (folder / f"{prefix}{name}.txt").write_text(classifier.heads_[name].to_text(), encoding="utf-8")
    else:
        head_arrays = {f"{name}.{key}": value for name in HEADS for key, value in classifier.heads_[name].to_arrays().items()}
        np.savez_compressed(folder / f"{prefix}heads.npz", **head_arrays)
    entry: dict[str, Any] = {}
    for name in HEADS:
        cal = classifier.calibrators_[name]
        entry[name] = {
            "backbone": classifier.backbone,
            "iterations": classifier.best_iterations_[name],
            "calibration": {"a": cal.coef_, "b": cal.intercept_, "n_rows": cal.n_samples_},
        }
    if prefix:
        entry["validation_tasks"] = [str(g) for g in classifier.validation_groups_]
    return entry


MAX_MANIFEST_BYTES = 64 * 2**20
"""Largest ``manifest.json`` loading reads."""
MAX_FILE_BYTES = 1 * 2**30
"""Largest other model file loading reads (compressed size on disk)."""
MAX_ARRAY_BYTES = 2 * 2**30
"""Largest array a ``.npz`` member may declare."""


def _safe_file(folder: Path, name: Any, limit: int) -> Path:
    """A regular file directly inside ``folder`` named by an untrusted manifest, no larger than ``limit`` bytes."""
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name or "\x00" in name or os.path.isabs(name):
        raise _problem(folder / "manifest.json", "files", "must name plain files inside the model directory", name)
    file = folder / name
    try:
        info = file.lstat()
    except OSError:
        raise FileFormatError(f"{file}: missing from the saved model") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise _problem(file, "files", "must be a regular file inside the model directory (no link, device or folder)", name)
    if file.resolve().parent != folder.resolve():
        raise _problem(file, "files", "must lie inside the model directory", name)
    if info.st_size > limit:
        raise _problem(file, "size", f"must be at most {limit} bytes", info.st_size)
    return file


def _npz_shapes(path: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    """Shape and dtype of every member of an ``.npz``, read from the member headers without loading any array."""
    shapes: dict[str, tuple[tuple[int, ...], str]] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    raise _problem(path, info.filename, "must be a .npy member")
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or info.flag_bits & 0x1:
                    # numpy writes only these; zipfile decompresses bzip2 and LZMA without a bound
                    raise _problem(path, info.filename, "must be stored or deflated, unencrypted (as numpy.savez writes)", info.compress_type)
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(member)
                    elif version == (2, 0):
                        shape, _, dtype = np.lib.format.read_array_header_2_0(member)
                    else:
                        raise _problem(path, info.filename, "must be a .npy member of format 1.0 or 2.0", version)
                if dtype.hasobject or dtype.kind not in "fiub":
                    raise _problem(path, info.filename, "must hold numbers", str(dtype))
                n_bytes = int(np.prod(shape, dtype=np.float64)) * dtype.itemsize
                if n_bytes > MAX_ARRAY_BYTES or info.file_size > MAX_ARRAY_BYTES + 4096:
                    raise _problem(path, info.filename, f"must declare at most {MAX_ARRAY_BYTES} bytes", n_bytes)
                shapes[info.filename[:-4]] = (tuple(int(d) for d in shape), dtype.str)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise _problem(path, "npz", f"must be a readable .npz archive ({type(exc).__name__}: {exc})") from None
    return shapes


def _expect_shapes(path: Path, shapes: dict[str, tuple[tuple[int, ...], str]], expected: dict[str, tuple[int, ...]]) -> None:
    if set(shapes) != set(expected):
        raise _problem(path, "members", f"must be exactly {sorted(expected)}", sorted(shapes))
    for name, shape in expected.items():
        if shapes[name][0] != shape:
            raise _problem(path, name, f"must have shape {shape} (from manifest.json)", shapes[name][0])


_CHECK_HEADS = (
    "import hashlib, io, sys, lightgbm\n"
    "for path in sys.argv[1:]:\n"
    "    data = open(path, 'rb').read()\n"
    "    lightgbm.Booster(model_str=io.TextIOWrapper(io.BytesIO(data), encoding='utf-8').read())\n"
    "    print(hashlib.sha256(data).hexdigest())\n"
)
"""The child's check: parse each file's text as the loader reads it (``Path.read_text``), print its bytes' sha256."""

_PARSED_DIGESTS: set[str] = set()
"""sha256 of every LightGBM model text a child process of this process has parsed without error (kept in memory only)."""


def _check_lightgbm_texts(paths: list[Path], n_features: int) -> None:
    """Check each head's LightGBM model text in Python, then let LightGBM parse them in one child process first.

    The child costs an interpreter start and a LightGBM import, so it runs once per distinct file content in this
    process: a file whose sha256 is that of bytes a child has already parsed without error is not parsed again.
    The safety property is kept: the child is skipped only for a file whose bytes have the sha256 of bytes a child
    already read and parsed as the loader will (the child reports the digest of what it parsed; the set lives in
    this process's memory only, never on disk), so crafted text still aborts a child, not the caller, and a changed
    file has a new digest and goes to a child again.
    """
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            lines = handle.read(4096).splitlines()  # the header only: the trees are parsed later
        header = dict(line.split("=", 1) for line in lines if "=" in line)
        if not lines or lines[0] != "tree" or header.get("num_class") != "1" or header.get("objective", "").split(" ")[0] != "binary":
            raise _problem(path, "header", "must be a LightGBM binary-classification model (tree / num_class=1 / objective=binary)")
        if header.get("max_feature_idx") != str(n_features - 1):
            raise _problem(path, "max_feature_idx", f"must be {n_features - 1} (the model's feature count − 1)", header.get("max_feature_idx"))
    paths = [path for path in paths if _digest(path) not in _PARSED_DIGESTS]
    if not paths:
        return
    import subprocess
    import sys

    def parse(files: list[Path]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-c", _CHECK_HEADS, *(str(f) for f in files)], capture_output=True, timeout=600, check=False)

    done = parse(paths)
    if done.returncode == 0:
        _PARSED_DIGESTS.update(done.stdout.decode("ascii", "replace").split())
        return
    for path in paths:  # the batch failed: one child per file names the culprit
        single = parse([path]) if len(paths) > 1 else done
        if single.returncode != 0:
            tail = single.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {single.returncode}"]
            raise _problem(path, "lightgbm", f"must be a model LightGBM can parse ({tail[0][:200]})")
    raise _problem(paths[0], "lightgbm", f"must be models LightGBM can parse (exit status {done.returncode})")


def _vocabulary(path: Path, n_terms: int) -> np.ndarray:
    if not path.exists():
        raise FileFormatError(f"{path}: missing from the saved model")
    terms = path.read_text(encoding="utf-8").split("\n")[:-1]
    if len(terms) != n_terms:
        raise _problem(path, "n_terms", f"must hold {n_terms} terms (manifest.json)", len(terms))
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
    >>> from stopwise.early import DualHeadClassifier, EarlyOutcomeModel, load_model
    >>> from stopwise.records import Step, Trajectory
    >>> runs = [Trajectory(agent="a", task=f"t{i % 5}", outcome=i % 2, task_text="fix it",
    ...                    steps=[Step(action="ls", tool="bash", observation="ok" if i % 2 else "error")] * 4)
    ...         for i in range(36)]
    >>> heads = DualHeadClassifier(min_child_samples=5, n_estimators=10)
    >>> model = EarlyOutcomeModel(n_components=2, min_df=1, min_steps=1, classifier=heads).fit(runs)
    >>> folder = model.save(pathlib.Path(tempfile.mkdtemp()) / "model")
    >>> loaded = load_model(folder)
    >>> bool((loaded.predict_proba(runs[:2])[0] == model.predict_proba(runs[:2])[0]).all())
    True
    """
    folder = Path(path)
    manifest_path = folder / "manifest.json"
    if not folder.is_dir():
        raise FileFormatError(f"{folder}: no such model directory (expected the output of `stopwise early train`)")
    if not manifest_path.exists():
        raise FileFormatError(f"{manifest_path}: missing; {folder} is not a saved stopwise model")
    _safe_file(folder, "manifest.json", MAX_MANIFEST_BYTES)
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise FileFormatError(f"{manifest_path}: cannot be read as JSON: {str(exc)[:200]}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _problem(manifest_path, "format", f"must be {FORMAT!r}", manifest.get("format") if isinstance(manifest, dict) else None)
    if manifest.get("format_version") not in READABLE_VERSIONS:
        raise _problem(
            manifest_path,
            "format_version",
            f"must be {FORMAT_VERSION} (this library's model format; {', '.join(map(str, READABLE_VERSIONS[:-1]))} still loads); "
            "retrain the model with this version",
            manifest.get("format_version"),
        )
    try:
        return _load_checked(folder, manifest_path, manifest)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise _problem(manifest_path, "manifest", f"must follow the saved-model layout ({type(exc).__name__}: {str(exc)[:200]})") from None


def _load_checked(folder: Path, manifest_path: Path, manifest: dict[str, Any]) -> Any:
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise _problem(manifest_path, "files", "must map file names to sha256 digests", type(files).__name__)
    heads_params = manifest.get("classifier")
    if heads_params is not None and not isinstance(heads_params, dict):
        raise _problem(manifest_path, "classifier", "must be DualHeadClassifier parameters or null", type(heads_params).__name__)
    backbone = (heads_params or {}).get("backbone", "lightgbm")
    deployed = _deployed_heads(manifest, manifest_path)
    head_sets = [f"fold{j}_" for j in range(len(manifest["fold_heads"]))] if deployed == "fold-average" else [""]
    heads_files = [name for prefix in head_sets for name in _head_files(backbone, prefix)]
    expected_files = {"text.npz", *(f"vocabulary_{name}.txt" for name in TEXT_BLOCKS), *heads_files}
    if set(files) != expected_files:
        raise _problem(manifest_path, "files", f"must list exactly {sorted(expected_files)}", sorted(str(k) for k in files))
    for name, digest in files.items():
        file = _safe_file(folder, name, MAX_FILE_BYTES)
        if _digest(file) != digest:
            raise _problem(file, "sha256", "must match the digest recorded in manifest.json (the file was changed)", _digest(file)[:16])
    model = _unfitted_model(manifest, manifest_path, heads_params, deployed, len(head_sets))
    expected = feature_specs(model.n_components, reference=bool(manifest["reference"]))
    saved = manifest["features"]
    if [(s.name, s.family, s.group) for s in expected] != [(f["name"], f["family"], f["group"]) for f in saved]:
        raise _problem(manifest_path, "features", "must match this library's feature definitions; retrain the model")
    n_used = sum(1 for f in saved if f["used"])
    text_shapes: dict[str, tuple[int, ...]] = {}
    for name in TEXT_BLOCKS:
        info = manifest["text_blocks"][name]
        n_terms, width = int(info["n_terms"]), int(info["n_components"])
        if n_terms < 0 or width != model.n_components:
            raise _problem(manifest_path, f"text_blocks.{name}", f"must have n_terms ≥ 0 and n_components = {model.n_components}", info)
        text_shapes[f"{name}.idf"] = (n_terms,)
        text_shapes[f"{name}.projection"] = (n_terms, width)
    _expect_shapes(folder / "text.npz", _npz_shapes(folder / "text.npz"), text_shapes)
    if backbone == "lightgbm":
        _check_lightgbm_texts([folder / name for name in heads_files], n_used)
    else:
        head_shapes: dict[str, tuple[int, ...]] = {f"{h}.{k}": shape for h in HEADS for k, shape in (("mean", (n_used,)), ("scale", (n_used,)), ("coef", (n_used,)), ("intercept", (1,)))}
        for name in heads_files:
            _expect_shapes(folder / name, _npz_shapes(folder / name), head_shapes)
    with np.load(folder / "text.npz", allow_pickle=False) as arrays:
        blocks = {
            name: TextBlock(
                name=name,
                kind=TEXT_BLOCKS[name][1],
                vocabulary=_vocabulary(folder / f"vocabulary_{name}.txt", text_shapes[f"{name}.idf"][0]),
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
    columns = np.array([j for j, f in enumerate(saved) if f["used"]], dtype=np.int64)
    if deployed == "fold-average":
        folds = [
            _load_head_set(folder, model, prefix, entry, entry["validation_tasks"], columns.shape[0])
            for prefix, entry in zip(head_sets, manifest["fold_heads"], strict=True)
        ]
        model.classifier_ = FoldAverageClassifier(folds)
    else:
        model.classifier_ = _load_head_set(folder, model, "", manifest["heads"], manifest["training"]["validation_tasks"], columns.shape[0])
    model.featurizer_ = featurizer
    model.columns_ = columns
    model.features_ = [expected[j] for j in columns]
    model.n_train_runs_ = int(manifest["training"]["n_runs"])
    model.n_train_prefixes_ = int(manifest["training"]["n_prefixes"])
    model.train_run_keys_ = _run_keys(manifest["training"].get("run_keys"), manifest_path)
    _restore_thresholds(model, manifest, manifest_path, featurizer.n_features_)
    return model


def _run_keys(keys: Any, manifest_path: Path) -> np.ndarray | None:
    """The training runs' digests of a manifest (absent before 0.2: ``None``), checked: 16 hex digits each."""
    if keys is None:
        return None
    if not isinstance(keys, list) or not all(isinstance(k, str) and len(k) == 16 and all(c in "0123456789abcdef" for c in k) for k in keys):
        raise _problem(manifest_path, "training.run_keys", "must be a list of 16-hex-digit run digests", keys)
    return np.array(sorted(keys), dtype=str)


def _unfitted_model(
    manifest: dict[str, Any], manifest_path: Path, heads_params: dict[str, Any] | None, deployed: str, n_head_sets: int
) -> Any:
    """The saved parameters as an unfitted :class:`EarlyOutcomeModel`, every parameter checked."""
    from stopwise.early._model import EarlyOutcomeModel

    params = dict(manifest["params"])
    params.setdefault("deployed_heads", "refit")  # format 2: heads refitted on all training runs, always
    try:
        kwargs: dict[str, Any] = {k: (tuple(v) if k == "exclude" else v) for k, v in params.items()}
        classifier = None if heads_params is None else DualHeadClassifier(**heads_params)
        model = EarlyOutcomeModel(**kwargs, classifier=classifier)
    except TypeError as exc:
        raise _problem(manifest_path, "params", f"must be EarlyOutcomeModel parameters ({exc})") from exc
    check_params("EarlyOutcomeModel", model.get_params(), type(model)._parameter_constraints)
    if model.classifier is not None:
        check_params("DualHeadClassifier", model.classifier.get_params(), DualHeadClassifier._parameter_constraints)
    if deployed == "fold-average" and (
        model.deployed_heads != "fold-average" or model.max_halt_error is None or model.calibration_folds != n_head_sets
    ):
        raise _problem(
            manifest_path, "fold_heads",
            "must hold one head set per cross-fitting fold of a model with max_halt_error, calibration_folds and "
            "deployed_heads='fold-average'", n_head_sets,
        )
    return model


def _deployed_heads(manifest: dict[str, Any], manifest_path: Path) -> str:
    """``"refit"`` or ``"fold-average"`` (format 2: always ``"refit"``), with the matching head entries present."""
    if manifest["format_version"] == 2:
        return "refit"
    deployed = manifest.get("deployed_heads")
    if deployed == "refit" and isinstance(manifest.get("heads"), dict):
        return "refit"
    if deployed == "fold-average" and isinstance(manifest.get("fold_heads"), list) and 1 <= len(manifest["fold_heads"]) <= 100:
        return "fold-average"
    raise _problem(
        manifest_path, "deployed_heads",
        "must be 'refit' (with a 'heads' entry) or 'fold-average' (with 1 to 100 'fold_heads' entries)", deployed,
    )


def _load_head_set(folder: Path, model: Any, prefix: str, entry: dict[str, Any], validation_tasks: list[Any], n_used: int) -> DualHeadClassifier:
    """One :class:`DualHeadClassifier` from its files (``prefix``) and manifest entry (calibration, rounds)."""
    classifier = model._new_classifier(0)
    heads: dict[str, Any] = {}
    if model.backbone == "lightgbm":
        for name in HEADS:
            heads[name] = LightGBMHead.from_text((folder / f"{prefix}{name}.txt").read_text(encoding="utf-8"))
    else:
        with np.load(folder / f"{prefix}heads.npz", allow_pickle=False) as arrays:
            for name in HEADS:
                heads[name] = LogisticHead.from_arrays({k.split(".", 1)[1]: arrays[k] for k in arrays.files if k.startswith(name + ".")})
    classifier.heads_ = heads
    classifier.calibrators_ = {}
    for name in HEADS:
        cal = PlattCalibrator()
        info = entry[name]["calibration"]
        cal.coef_, cal.intercept_, cal.n_samples_ = float(info["a"]), float(info["b"]), int(info["n_rows"])
        classifier.calibrators_[name] = cal
    classifier.best_iterations_ = {name: int(entry[name]["iterations"]) for name in HEADS}
    classifier.validation_groups_ = np.array([str(t) for t in validation_tasks], dtype=object)
    classifier.validation_mask_ = np.zeros(0, dtype=bool)
    classifier.n_features_in_ = int(n_used)
    return classifier


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
    model.calibration_scores_, model.calibration_outcome_ = np.zeros((0, 2)), np.zeros(0)  # not saved
    guard = manifest.get("guard")
    try:
        model.guard_ = None if guard is None else FamiliarityGuard.from_dict(guard, n_features)
    except InputError as exc:
        raise _problem(manifest_path, "guard", str(exc)) from None
    quality = manifest.get("quality")
    model.quality_ = quality if isinstance(quality, dict) else {}
    table: Any = manifest.get("reliability")
    try:
        model.reliability_ = {head: [[float(t), float(n), float(p)] for t, n, p in table[head]] for head in HEADS}
    except (TypeError, ValueError, KeyError) as exc:
        raise _problem(manifest_path, "reliability", f"must map each head to [threshold, halted, precision] rows ({exc})") from None

