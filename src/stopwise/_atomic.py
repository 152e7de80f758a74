"""Atomic outputs and the overwrite rule every command follows.

* An output is written to a temporary path beside it (same directory, so the final rename is
  atomic) and moved into place only when the whole command has succeeded; a failing command
  leaves nothing behind: no partial file, no half-written directory.
* An existing output file is replaced only with ``force`` (``--force``).
* An output directory is created by stopwise and carries a marker file (:data:`MARKER`); an
  existing one is replaced only with ``force`` and only when it carries the marker. An empty
  directory may be used; any other directory is never replaced or written into, ``force`` or not.
* Every check runs when an output is registered, before any computation, so a command that
  would fail at the end fails at the start instead.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

from stopwise.errors import OutputExistsError

__all__ = ["MARKER", "Outputs", "check_output", "write_directory"]

MARKER = ".stopwise-output"
"""File that marks a directory as written by stopwise (and so replaceable with ``--force``)."""


def check_output(path: str | os.PathLike[str], *, force: bool, directory: bool = False) -> Path:
    """Refuse an output that may not be (re)written; returns the path.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "out.csv").write_text("mine")
    >>> check_output(d / "out.csv", force=False)
    Traceback (most recent call last):
    ...
    stopwise.errors.OutputExistsError: .../out.csv: exists; pass --force to replace it
    """
    target = Path(path)
    if target.is_symlink() and not target.exists():
        raise OutputExistsError(f"{target}: is a dangling symbolic link; choose another output path")
    if directory:
        if target.exists() and not target.is_dir():
            raise OutputExistsError(f"{target}: exists and is not a directory; choose a directory path")
        if target.is_dir() and any(target.iterdir()):
            if not (target / MARKER).is_file():
                raise OutputExistsError(
                    f"{target}: is a directory stopwise did not write (no {MARKER} marker); it is never "
                    "replaced: choose a new or empty directory"
                )
            if not force:
                raise OutputExistsError(f"{target}: holds earlier stopwise output; pass --force to replace it")
        return target
    if target.is_dir():
        raise OutputExistsError(f"{target}: is a directory; give a file path")
    if target.exists() and not force:
        raise OutputExistsError(f"{target}: exists; pass --force to replace it")
    if target.parent.exists() and not target.parent.is_dir():
        raise OutputExistsError(f"{target.parent}: is not a directory")
    return target


class Outputs:
    """The outputs of one command: registered (and checked) first, moved into place together at the end.

    Use as a context manager: leaving the block normally commits every output; an exception
    discards them all (temporaries removed, directories this object created removed).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with Outputs(force=False) as outputs:
    ...     tmp = outputs.file(d / "sub" / "a.txt")
    ...     _ = tmp.write_text("hello")
    >>> (d / "sub" / "a.txt").read_text()
    'hello'
    >>> sorted(p.name for p in (d / "sub").iterdir())
    ['a.txt']
    """

    def __init__(self, *, force: bool = False) -> None:
        self.force = force
        self._files: list[tuple[Path, Path]] = []
        self._dirs: list[tuple[Path, Path]] = []
        self._created: list[Path] = []

    def _parent(self, target: Path) -> None:
        missing = [p for p in (target.parent, *target.parent.parents) if not p.exists()]
        target.parent.mkdir(parents=True, exist_ok=True)
        self._created.extend(missing)  # deepest first: removed in this order when discarded

    def _temporary(self, target: Path) -> Path:
        return target.parent / f".stopwise-tmp-{secrets.token_hex(4)}-{target.name}"

    def file(self, path: str | os.PathLike[str]) -> Path:
        """Check ``path`` as an output file; returns the temporary path to write instead (same suffixes)."""
        target = check_output(path, force=self.force)
        self._parent(target)
        tmp = self._temporary(target)
        self._files.append((target, tmp))
        return tmp

    def directory(self, path: str | os.PathLike[str]) -> Path:
        """Check ``path`` as an output directory; returns a fresh temporary directory to fill instead."""
        target = check_output(path, force=self.force, directory=True)
        self._parent(target)
        tmp = self._temporary(target)
        tmp.mkdir()
        (tmp / MARKER).write_text("written by stopwise; --force may replace this directory\n", encoding="utf-8")
        self._dirs.append((target, tmp))
        return tmp

    def commit(self) -> None:
        """Move every output into place (files by atomic rename; directories swapped, then the old removed).

        A registered file that was never written is skipped (the command had nothing to put there).
        """
        for target, tmp in self._files:
            if not tmp.exists():
                continue  # the command chose not to write this output
            check_output(target, force=self.force)  # nothing appeared meanwhile
            os.replace(tmp, target)
        for target, tmp in self._dirs:
            check_output(target, force=self.force, directory=True)
            old: Path | None = None
            if target.is_dir():
                old = self._temporary(target)
                target.rename(old)
            tmp.rename(target)
            if old is not None:
                shutil.rmtree(old) if (old / MARKER).is_file() else old.rmdir()
        self._files, self._dirs, self._created = [], [], []

    def discard(self) -> None:
        """Remove every temporary output, and the directories created for them."""
        for _, tmp in self._files:
            tmp.unlink(missing_ok=True)
        for _, tmp in self._dirs:
            shutil.rmtree(tmp, ignore_errors=True)
        for folder in self._created:
            try:
                folder.rmdir()
            except OSError:
                break
        self._files, self._dirs, self._created = [], [], []

    def __enter__(self) -> Outputs:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None:
            try:
                self.commit()
            except BaseException:
                self.discard()
                raise
        else:
            self.discard()


def write_directory(path: str | os.PathLike[str], fill: Callable[[Path], Iterable[Path]], *, force: bool = False) -> list[Path]:
    """Write one stopwise output directory atomically; returns the written paths under ``path``.

    ``fill(staging)`` writes the files into a fresh staging directory beside ``path`` and returns
    their paths; the staging directory (with :data:`MARKER`) then replaces ``path``. ``path`` may be
    new or an empty directory; an earlier stopwise output directory is replaced only with ``force``;
    any other directory is refused before ``fill`` runs. On any failure nothing is left behind.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> def fill(folder):
    ...     _ = (folder / "a.txt").write_text("hello")
    ...     return [folder / "a.txt"]
    >>> [p.name for p in write_directory(d / "out", fill)]
    ['a.txt']
    >>> write_directory(d / "out", fill)
    Traceback (most recent call last):
    ...
    stopwise.errors.OutputExistsError: .../out: holds earlier stopwise output; pass --force to replace it
    """
    target = Path(path)
    with Outputs(force=force) as outputs:
        staging = outputs.directory(target)
        written = [target / Path(p).relative_to(staging) for p in fill(staging)]
    return written
