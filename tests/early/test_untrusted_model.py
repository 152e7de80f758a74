"""A model directory from someone else: every crafted file is refused with exit code 4, naming the field, writing nothing."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from stopwise.cli.early import register
from stopwise.early import EarlyOutcomeModel, load_model
from stopwise.errors import ValidationError
from stopwise.records import Trajectory, write_trajectories

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def saved(fitted: EarlyOutcomeModel, runs: list[Trajectory], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("untrusted")
    fitted.save(folder / "model")
    write_trajectories(runs[:2], folder / "runs.jsonl")
    return folder


def _copy(saved: Path, tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(saved / "model", target)
    return target


def _rewrite(model: Path, change: Callable[[dict], None]) -> None:
    manifest = json.loads((model / "manifest.json").read_text())
    change(manifest)
    (model / "manifest.json").write_text(json.dumps(manifest))


def _redigest(model: Path, name: str) -> None:
    _rewrite(model, lambda m: m["files"].__setitem__(name, hashlib.sha256((model / name).read_bytes()).hexdigest()))


def _monitor(saved: Path, model: Path, tmp_path: Path) -> tuple[int, str]:
    root = typer.Typer()

    @root.callback()
    def main() -> None:
        """stopwise"""

    register(root)
    result = CliRunner().invoke(root, ["early", "monitor", str(model), str(saved / "runs.jsonl"), "--outcomes", str(tmp_path / "rows.csv")])
    assert not (tmp_path / "rows.csv").exists()
    return result.exit_code, result.output


def test_file_names_must_stay_inside_the_directory(saved: Path, tmp_path: Path) -> None:
    model = _copy(saved, tmp_path)
    _rewrite(model, lambda m: m["files"].__setitem__("../../etc/hostname", "0" * 64))
    code, out = _monitor(saved, model, tmp_path)
    assert code == 4 and "field 'files'" in out


def _rewrite_npz(model: Path, *, replace: dict[str, bytes] | None = None, compression: int = zipfile.ZIP_STORED) -> None:
    """Write the model's text.npz again (members as numpy writes them, or the raw bytes of ``replace``) and re-digest it."""
    with np.load(model / "text.npz") as arrays:
        members = {k: arrays[k] for k in arrays.files}
    with zipfile.ZipFile(model / "text.npz", "w", compression=compression) as archive:
        for name, value in members.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, value)
            archive.writestr(name + ".npy", (replace or {}).get(name, member.getvalue()))
    _redigest(model, "text.npz")


def test_a_link_to_a_device_is_refused_before_reading(saved: Path, tmp_path: Path) -> None:
    model = _copy(saved, tmp_path)
    (model / "vocabulary_task.txt").unlink()
    (model / "vocabulary_task.txt").symlink_to("/dev/zero")
    with pytest.raises(ValidationError, match=r"vocabulary_task.txt, field 'files': must be a regular file"):
        load_model(model)
    code, out = _monitor(saved, model, tmp_path)
    assert code == 4 and "regular file" in out


def test_an_npz_member_declaring_a_billion_floats_is_refused_without_reading_it(saved: Path, tmp_path: Path) -> None:
    model = _copy(saved, tmp_path)
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": (10**9,)})
    _rewrite_npz(model, replace={"task.idf": buffer.getvalue() + b"\0" * 64})
    with pytest.raises(ValidationError, match=r"text.npz, field 'task.idf(.npy)?': must (declare at most|have shape)"):
        load_model(model)
    code, out = _monitor(saved, model, tmp_path)
    assert code == 4 and "task.idf" in out


def test_a_crafted_lightgbm_head_is_refused_without_aborting_the_process(saved: Path, tmp_path: Path) -> None:
    model = _copy(saved, tmp_path)
    text = (model / "failure.txt").read_text()
    crafted = text.replace("split_feature=", "split_feature=2147483647 ", 1).replace("num_leaves=", "num_leaves=99999", 1)
    (model / "failure.txt").write_text(crafted)
    _redigest(model, "failure.txt")
    with pytest.raises(ValidationError, match=r"failure.txt, field '(lightgbm|header)'"):
        load_model(model)
    (model / "failure.txt").write_text("tree\nversion=v4\nnum_class=1\nmax_feature_idx=3\nobjective=regression\n")
    _redigest(model, "failure.txt")
    code, out = _monitor(saved, model, tmp_path)
    assert code == 4 and "field 'header'" in out


def test_lightgbm_parses_each_head_content_once_per_process_and_every_changed_head_again(
    saved: Path, runs: list[Trajectory], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    from stopwise.early import _persist

    children: list[list[str]] = []
    run = subprocess.run

    def recording_run(args: list[str], *rest: object, **kwargs: object) -> object:
        if args[:3] == [sys.executable, "-c", _persist._CHECK_HEADS]:
            children.append([Path(a).name for a in args[3:]])
        return run(args, *rest, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", recording_run)
    monkeypatch.setattr(_persist, "_PARSED_DIGESTS", set())
    model = _copy(saved, tmp_path)
    first = load_model(model)
    assert children == [["success.txt", "failure.txt"]]  # one child parses both heads
    assert len(_persist._PARSED_DIGESTS) == 2
    load_model(model)
    load_model(saved / "model")  # another folder, the same bytes
    assert children == [["success.txt", "failure.txt"]]
    # a head whose bytes changed goes to a child again (alone: the other is unchanged), crafted or not
    text = (model / "failure.txt").read_text()
    (model / "failure.txt").write_text(text.replace("split_feature=", "split_feature=2147483647 ", 1).replace("num_leaves=", "num_leaves=99999", 1))
    _redigest(model, "failure.txt")
    with pytest.raises(ValidationError, match=r"failure.txt, field '(lightgbm|header)'"):
        load_model(model)
    assert children[1:] == [["failure.txt"]] and len(_persist._PARSED_DIGESTS) == 2  # a failed parse is not remembered
    (model / "failure.txt").write_text(text)
    _redigest(model, "failure.txt")
    again = load_model(model)  # the original bytes again: remembered
    assert len(children) == 2
    np.testing.assert_array_equal(again.predict_proba(runs[:3])[0], first.predict_proba(runs[:3])[0])


def test_a_malformed_manifest_is_a_user_error(saved: Path, tmp_path: Path) -> None:
    model = _copy(saved, tmp_path)
    _rewrite(model, lambda m: m.__setitem__("params", {"n_jobs": 100000}))
    code, out = _monitor(saved, model, tmp_path)
    assert code == 4 and "manifest.json" in out


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_an_npz_member_compressed_with_bzip2_or_lzma_is_refused(saved: Path, tmp_path: Path, method: int) -> None:
    """zipfile decompresses these methods without an output bound; numpy writes only stored or deflated members."""
    model = _copy(saved, tmp_path)
    _rewrite_npz(model, compression=method)
    with pytest.raises(ValidationError, match=r"text.npz, field '[^']+\.npy': must be stored or deflated, unencrypted"):
        load_model(model)
    code, out = _monitor(saved, model, tmp_path)
    assert code == 4 and "must be stored or deflated" in out
