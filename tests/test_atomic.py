"""The one overwrite rule for output directories (stopwise._atomic): markers, kinds, and directories written before 0.1."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from stopwise._atomic import MARKER, OUTPUT_KIND, Outputs, check_output, output_kind, write_directory, write_file
from stopwise.errors import OutputExistsError


def _fill(text: str):  # type: ignore[no-untyped-def]
    def fill(folder: Path) -> list[Path]:
        (folder / "a.txt").write_text(text)
        return [folder / "a.txt"]

    return fill


def test_a_directory_records_its_kind_and_is_replaced_only_by_the_same_kind_with_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert write_directory(out, _fill("one"), kind="stopwise.early.evaluation") == [out / "a.txt"]
    assert (out / MARKER).read_text().splitlines()[0] == "stopwise.early.evaluation 1"
    assert output_kind(out) == "stopwise.early.evaluation"
    with pytest.raises(OutputExistsError, match=r"out: holds a saved evaluation; pass --force"):
        write_directory(out, _fill("two"), kind="stopwise.early.evaluation")
    with pytest.raises(OutputExistsError, match="holds a saved evaluation, not a stopwise output"):
        write_directory(out, _fill("two"), force=True)
    write_directory(out, _fill("two"), kind="stopwise.early.evaluation", force=True)
    assert (out / "a.txt").read_text() == "two" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize(
    ("marker", "text", "kind"),
    [
        (".stopwise-output", "written by stopwise; --force may replace this directory\n", OUTPUT_KIND),
        (".stopwise-model", "stopwise.early.model 3\n", "stopwise.early.model"),
        (".stopwise-evaluation", "stopwise.early.evaluation 1\n", "stopwise.early.evaluation"),
    ],
)
def test_directories_written_before_0_1_stay_replaceable_with_force(tmp_path: Path, marker: str, text: str, kind: str) -> None:
    old = tmp_path / "old"
    old.mkdir()
    (old / marker).write_text(text)
    (old / "earlier.txt").write_text("earlier")
    assert output_kind(old) == kind
    with pytest.raises(OutputExistsError, match="pass --force"):
        check_output(old, force=False, directory=True, kind=kind)
    write_directory(old, _fill("new"), kind=kind, force=True)
    assert sorted(p.name for p in old.iterdir()) == [MARKER, "a.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]


def test_a_marker_that_is_not_stopwise_text_or_a_link_does_not_count(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / ".stopwise-model").write_text("mine\n")
    assert output_kind(theirs) is None
    (tmp_path / "elsewhere").write_text("stopwise.output 1\n")
    (theirs / MARKER).symlink_to(tmp_path / "elsewhere")
    assert output_kind(theirs) is None
    with pytest.raises(OutputExistsError, match="is a directory stopwise did not write"):
        write_directory(theirs, _fill("x"), force=True)
    assert sorted(p.name for p in theirs.iterdir()) == [".stopwise-model", MARKER]


def test_a_link_the_current_directory_and_its_parents_are_never_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write_directory(real, _fill("x"))
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(OutputExistsError, match="exists and is not a directory"):
        write_directory(tmp_path / "link", _fill("y"), force=True)
    cwd = os.getcwd()
    os.chdir(real)
    try:
        for path in (".", ".."):
            with pytest.raises(OutputExistsError, match=r"--out \.+: is the current directory or one of its parents"):
                check_output(path, force=True, directory=True, name="--out")
    finally:
        os.chdir(cwd)
    assert (real / "a.txt").read_text() == "x"


def test_a_failing_command_leaves_the_earlier_output_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_directory(out, _fill("earlier"))

    def fail(folder: Path) -> list[Path]:
        (folder / "a.txt").write_text("half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write_directory(out, fail, force=True)
    assert (out / "a.txt").read_text() == "earlier" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    with pytest.raises(RuntimeError, match="boom"), Outputs() as outputs:
        outputs.file(tmp_path / "new" / "deeper" / "b.txt").write_text("half")
        raise RuntimeError("boom")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


SOURCE = Path(__file__).resolve().parents[1] / "src" / "stopwise"


def test_write_file_replaces_by_default_with_the_usual_permissions(tmp_path: Path) -> None:
    target = tmp_path / "deeper" / "rows.csv.gz"
    seen: list[str] = []

    def write(tmp: Path) -> None:
        seen.append(tmp.name)
        tmp.write_text("one")

    assert write_file(target, write) == target
    assert seen[0].startswith(".stopwise-tmp-") and seen[0].endswith("-rows.csv.gz")  # suffixes kept: format by suffix
    write_file(target, lambda tmp: tmp.write_text("two"))
    assert target.read_text() == "two" and sorted(p.name for p in target.parent.iterdir()) == ["rows.csv.gz"]
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600


def test_write_file_without_replace_refuses_an_existing_file_and_one_that_appears_meanwhile(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("theirs")
    with pytest.raises(OutputExistsError, match=r"out.jsonl: exists; pass --force"):
        write_file(target, lambda tmp: tmp.write_text("mine"), replace=False)
    assert target.read_text() == "theirs" and sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]
    late = tmp_path / "late.jsonl"

    def write(tmp: Path) -> None:
        tmp.write_text("mine")
        late.write_text("appeared while writing")

    with pytest.raises(OutputExistsError, match=r"late\.jsonl: exists"):
        write_file(late, write, replace=False)
    assert late.read_text() == "appeared while writing" and sorted(p.name for p in tmp_path.iterdir()) == ["late.jsonl", "out.jsonl"]
    assert write_file(tmp_path / "new.jsonl", lambda tmp: tmp.write_text("mine"), replace=False).read_text() == "mine"


def test_write_file_on_a_file_system_without_hard_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: object, dst: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    assert write_file(tmp_path / "a.txt", lambda tmp: tmp.write_text("one"), replace=False).read_text() == "one"
    with pytest.raises(OutputExistsError, match="exists"):
        write_file(tmp_path / "a.txt", lambda tmp: tmp.write_text("two"), replace=False)
    assert (tmp_path / "a.txt").read_text() == "one" and sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_write_file_leaves_the_earlier_file_and_no_temporary_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "page.html"
    target.write_text("earlier")

    def fail(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("boom")

    def interrupted(tmp: Path) -> None:
        tmp.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(RuntimeError, match="boom"):
        write_file(target, fail)
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    with pytest.raises(KeyboardInterrupt):
        write_file(target, interrupted, durable=True)
    assert target.read_text() == "earlier" and sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]
    write_file(target, lambda tmp: tmp.write_text("new"), durable=True)
    assert len(synced) == 1 and target.read_text() == "new"



def test_every_atomic_write_goes_through_stopwise_atomic() -> None:
    """One atomic writer: no other module of src/ makes its own temporary file and renames it into place."""
    pattern = re.compile(r"mkstemp|NamedTemporaryFile|os\.replace\(|os\.link\(|\.partial")
    found = [str(p.relative_to(SOURCE)) for p in SOURCE.rglob("*.py") if p.name != "_atomic.py" and pattern.search(p.read_text(encoding="utf-8"))]
    assert found == []
