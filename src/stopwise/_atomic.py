"""Atomic outputs and the overwrite rule every command follows.

* An output is written to a temporary path beside it (same directory, so the final rename is
  atomic) and moved into place only when the whole command has succeeded; a failing command
  leaves nothing behind: no partial file, no half-written directory.
* An existing output file is replaced only with ``force`` (``--force``).
* An output directory is created by stopwise and carries a marker file (:data:`MARKER`) whose
  first line names what the directory holds (its *kind*, e.g. ``stopwise.early.model 3``). An
  existing one is replaced only with ``force``, only when it carries the marker and only by an
  output of the same kind. An empty directory may be used; any other directory (and the current
  directory or one of its parents, and a symbolic link) is never replaced or written into,
  ``force`` or not.
* Every check runs when an output is registered, before any computation, so a command that
  would fail at the end fails at the start instead.
* A single file written by a library function (:func:`write_file`: outcome rows, trajectories, a report
  page, a ledger export) follows the same path: a temporary file beside it, moved into place when
  complete, removed on any failure. Without replacement the move is a hard link, which fails when the
  destination exists, even if it appeared while the file was being written.
* The outputs of one command are checked together (:func:`check_output_plan`, and :class:`Outputs` as
  each is registered) before any is written: two outputs on one path (or a file inside a directory
  output), a folder that cannot hold the output, and an existing device, named pipe (FIFO) or socket
  are refused; a special file is never replaced, ``force`` or not.

Directories written before 0.1 carry the markers of :data:`LEGACY_MARKERS` (saved early models and
evaluations); they are recognised, so they stay replaceable with ``force``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType

from stopwise.errors import OutputExistsError, StopwiseError, ValidationError

__all__ = [
    "LEGACY_MARKERS",
    "MARKER",
    "OUTPUT_KIND",
    "Outputs",
    "check_output",
    "check_output_plan",
    "output_kind",
    "special_file",
    "write_directory",
    "write_file",
]

MARKER = ".stopwise-output"
"""File that marks a directory as written by stopwise (and so replaceable with ``--force``)."""
LEGACY_MARKERS = (".stopwise-model", ".stopwise-evaluation")
"""Marker files of directories written before 0.1 (saved early models, early evaluations)."""
OUTPUT_KIND = "stopwise.output"
"""The kind of a plain output directory (``replay -o``, ``finality replay --out``, ...)."""
_MAX_MARKER_BYTES = 4096


def output_kind(folder: str | os.PathLike[str]) -> str | None:
    r"""The kind of stopwise output ``folder`` holds (first word of its marker file), or ``None`` if stopwise did not write it.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> output_kind(d) is None
    True
    >>> _ = (d / ".stopwise-model").write_text("stopwise.early.model 2\n")
    >>> output_kind(d)
    'stopwise.early.model'
    """
    for name in (MARKER, *LEGACY_MARKERS):
        marker = Path(folder) / name
        try:
            if marker.is_symlink() or not marker.is_file() or marker.stat().st_size > _MAX_MARKER_BYTES:
                continue
            words = marker.read_text(encoding="utf-8", errors="replace").split()
        except OSError:
            continue
        if words and words[0].startswith("stopwise."):
            return words[0]
        if name == MARKER:
            return OUTPUT_KIND  # written before kinds were recorded: "written by stopwise; ..."
    return None


def _marker_text(kind: str, version: int) -> str:
    return f"{kind} {version}\nwritten by stopwise; --force may replace this directory\n"


def _noun(kind: str) -> str:
    return "stopwise output" if kind == OUTPUT_KIND else f"saved {kind.rsplit('.', 1)[-1]}"


def check_output(
    path: str | os.PathLike[str], *, force: bool, directory: bool = False, kind: str = OUTPUT_KIND, name: str = ""
) -> Path:
    """Refuse an output that may not be (re)written; returns the path.

    ``kind`` (directories) is the kind of output about to be written: an existing stopwise
    directory of another kind is never replaced. ``name`` (e.g. ``"--out"``) starts every message.

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
    where = f"{name} {target}" if name else str(target)
    if target.is_symlink() and not target.exists():
        raise OutputExistsError(f"{where}: is a dangling symbolic link; choose another output path")
    _refuse_special(target, where)
    if directory:
        _check_directory(target, where, force=force, kind=kind)
        return target
    if target.is_dir():
        raise OutputExistsError(f"{where}: is a directory; give a file path")
    if target.exists() and not force:
        raise OutputExistsError(f"{where}: exists; pass --force to replace it")
    if target.parent.exists() and not target.parent.is_dir():
        raise OutputExistsError(f"{target.parent}: is not a directory")
    return target


def _check_directory(target: Path, where: str, *, force: bool, kind: str) -> None:
    if not target.exists() and not target.is_symlink():
        return
    if target.is_symlink() or not target.is_dir():
        raise OutputExistsError(f"{where}: exists and is not a directory; choose a directory path")
    resolved, cwd = target.resolve(), Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise OutputExistsError(f"{where}: is the current directory or one of its parents; choose a new directory")
    if not any(target.iterdir()):
        return
    found = output_kind(target)
    if found is None:
        raise OutputExistsError(
            f"{where}: is a directory stopwise did not write (no {MARKER} marker); it is never "
            "replaced: choose a new or empty directory"
        )
    if found != kind:
        raise OutputExistsError(f"{where}: holds a {_noun(found)}, not a {_noun(kind)}; it is never replaced by one: choose another directory")
    if not force:
        what = "earlier stopwise output" if kind == OUTPUT_KIND else f"a {_noun(kind)}"
        raise OutputExistsError(f"{where}: holds {what}; pass --force to replace it")


def _stand_in(target: Path) -> Path:
    """A fresh temporary path beside ``target`` ending in its name (a format read from the suffixes stays the same)."""
    return target.parent / f".stopwise-tmp-{secrets.token_hex(4)}-{target.name}"


def _place(tmp: Path, target: Path, *, replace: bool) -> None:
    """Move the finished ``tmp`` to ``target`` in one step; without ``replace``, never over an existing file.

    Without ``replace`` the move is a hard link, which fails when ``target`` exists (even if it appeared
    after the last check) and is then an :class:`OutputExistsError`; on a file system without hard links,
    ``target`` is checked and ``tmp`` renamed.
    """
    if replace:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise OutputExistsError(f"{target}: exists; pass --force to replace it") from None
    except OSError:  # no hard links here (some network and FAT file systems)
        if target.exists() or target.is_symlink():
            raise OutputExistsError(f"{target}: exists; pass --force to replace it") from None
        os.replace(tmp, target)
        return
    tmp.unlink()


def write_file(
    path: str | os.PathLike[str], write: Callable[[Path], object], *, replace: bool = True, durable: bool = False
) -> Path:
    """Write one file atomically: ``write(tmp)`` fills a temporary file beside ``path``, which then takes its place.

    Parameters
    ----------
    path : path-like
        The destination; missing parent folders are created.
    write : callable
        Called with the temporary path (same name ending as ``path``, so a format or compression chosen by
        suffix is the same); it creates and fills that file.
    replace : bool, optional
        Replace an existing ``path`` (the default of the library's writers). False: an existing ``path`` is
        an :class:`OutputExistsError`, also when it appears while ``write`` runs (``--force`` not given).
    durable : bool, optional
        Flush the file to disk (``fsync``) before it is moved into place (a ledger export).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    OutputExistsError
        ``path`` exists and ``replace`` is false.

    Notes
    -----
    On any failure (of ``write`` or of the move) the temporary file is removed and ``path`` is left as it was.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_file(d / "a.txt", lambda tmp: tmp.write_text("one")).read_text()
    'one'
    >>> write_file(d / "a.txt", lambda tmp: tmp.write_text("two"), replace=False)
    Traceback (most recent call last):
    ...
    stopwise.errors.OutputExistsError: .../a.txt: exists; pass --force to replace it
    >>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
    ('one', ['a.txt'])
    """
    target = Path(path)
    _refuse_special(target, str(target))  # a device or FIFO is never replaced, replace or not
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _stand_in(target)
    try:
        write(tmp)
        if durable:
            with open(tmp, "rb") as done:
                os.fsync(done.fileno())
        _place(tmp, target, replace=replace)
    finally:
        tmp.unlink(missing_ok=True)
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
        self._dirs: list[tuple[Path, Path, str, str]] = []
        self._created: list[Path] = []

    def _parent(self, target: Path) -> None:
        missing = [p for p in (target.parent, *target.parent.parents) if not p.exists()]
        target.parent.mkdir(parents=True, exist_ok=True)
        self._created.extend(missing)  # deepest first: removed in this order when discarded

    def file(self, path: str | os.PathLike[str]) -> Path:
        """Check ``path`` as an output file; returns the temporary path to write instead (same suffixes)."""
        target = check_output(path, force=self.force)
        _check_place(target, str(target), False, self._registered(), create_folders=True)
        self._parent(target)
        tmp = _stand_in(target)
        self._files.append((target, tmp))
        return tmp

    def directory(self, path: str | os.PathLike[str], *, kind: str = OUTPUT_KIND, version: int = 1, name: str = "") -> Path:
        """Check ``path`` as an output directory; returns a fresh temporary directory to fill instead.

        The temporary directory already holds the marker (:data:`MARKER`: ``kind`` and ``version``);
        ``kind`` and ``name`` are those of :func:`check_output`.
        """
        target = check_output(path, force=self.force, directory=True, kind=kind, name=name)
        _check_place(target, f"{name} {target}" if name else str(target), True, self._registered(), create_folders=True)
        self._parent(target)
        tmp = _stand_in(target)
        tmp.mkdir()
        (tmp / MARKER).write_text(_marker_text(kind, version), encoding="utf-8")
        self._dirs.append((target, tmp, kind, name))
        return tmp

    def _registered(self) -> list[tuple[str, Path, bool]]:
        """(name, target, is a directory) of every output registered so far."""
        return [(str(t), t, False) for t, _ in self._files] + [(f"{n} {t}" if n else str(t), t, True) for t, _, _, n in self._dirs]

    def commit(self) -> None:
        """Move every output into place (files by atomic rename; directories swapped, then the old removed).

        A registered file that was never written is skipped (the command had nothing to put there).
        """
        for target, tmp in self._files:
            if not tmp.exists():
                continue  # the command chose not to write this output
            check_output(target, force=self.force)  # still a file path (nothing appeared meanwhile: _place)
            _place(tmp, target, replace=self.force)
        for target, tmp, kind, name in self._dirs:
            check_output(target, force=self.force, directory=True, kind=kind, name=name)
            old: Path | None = None
            if target.is_dir():
                old = _stand_in(target)
                target.rename(old)
            try:
                tmp.rename(target)
            except BaseException:
                if old is not None:
                    old.rename(target)  # put the earlier output back
                raise
            if old is not None:
                shutil.rmtree(old) if output_kind(old) is not None else old.rmdir()
        self._files, self._dirs, self._created = [], [], []

    def discard(self) -> None:
        """Remove every temporary output, and the directories created for them."""
        for _, tmp in self._files:
            tmp.unlink(missing_ok=True)
        for _, tmp, _, _ in self._dirs:
            shutil.rmtree(tmp, ignore_errors=True)
        for folder in self._created:
            try:
                folder.rmdir()
            except OSError:
                break
        self._files, self._dirs, self._created = [], [], []

    def user_names(self, error: BaseException) -> None:
        """Make ``error``'s message name each output as the user gave it, not its temporary stand-in.

        A library call that fails while writing a temporary output (``.stopwise-tmp-…-rows.txt``: no
        table format) names the path it was given; the user gave ``rows.txt``.
        """
        pairs = [(str(tmp), str(target)) for target, tmp in self._files]
        pairs += [(str(tmp), str(target)) for target, tmp, _, _ in self._dirs]
        if not pairs or not isinstance(error, StopwiseError):
            return

        def renamed(text: str) -> str:
            for tmp, target in pairs:
                text = text.replace(tmp, target)
            return text

        if isinstance(error, ValidationError):
            import dataclasses

            error.problems = [dataclasses.replace(p, file=renamed(p.file)) for p in error.problems]
        error.args = tuple(renamed(a) if isinstance(a, str) else a for a in error.args)

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
            self.user_names(exc)
            self.discard()


def special_file(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it is a device, a named pipe (FIFO) or a socket (symbolic links followed); None otherwise.

    Examples
    --------
    >>> special_file("/dev/null"), special_file("/nonexistent/file")
    ('a character device', None)
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    for test, what in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return None


def _refuse_special(target: Path, where: str) -> None:
    what = special_file(target)
    if what is not None:
        raise OutputExistsError(f"{where}: is {what}, not a regular file; it is never replaced (--force or not): choose a file path")


def _same_or_inside(a: Path, b: Path) -> bool:
    return a == b or b in a.parents


def _check_place(
    target: Path, where: str, is_dir: bool, others: Sequence[tuple[str, Path, bool]], *, create_folders: bool
) -> None:
    """Refuse an output whose folder cannot hold it, or that shares a path with another output of the command."""
    folder = target.parent
    ancestor = next((p for p in (folder, *folder.parents) if p.exists() or p.is_symlink()), None)
    if ancestor is not None and not ancestor.is_dir():
        raise OutputExistsError(f"{where}: its folder {ancestor} is not a directory; choose another output path")
    if not create_folders and not folder.is_dir():
        raise OutputExistsError(f"{where}: folder {folder} does not exist; create it first or choose another output path")
    mine = Path(os.path.abspath(target)).resolve()
    for name, other, other_is_dir in others:
        theirs = Path(os.path.abspath(other)).resolve()
        if mine == theirs or (other_is_dir and _same_or_inside(mine, theirs)) or (is_dir and _same_or_inside(theirs, mine)):
            raise OutputExistsError(f"{where}: is also an output of this command ({name}); give each output its own path")


def check_output_plan(
    outputs: Sequence[tuple[str, str | os.PathLike[str] | None, str | None]], *, force: bool, create_folders: bool = True
) -> list[Path]:
    """Check every output of one command together, before any is written; returns their paths (None ones left out).

    ``outputs`` lists ``(option, path, kind)``: ``kind`` None for a file, else the kind of output directory
    (:func:`check_output`). Each is checked by :func:`check_output`, then as a set: two outputs on one path,
    or one inside an output directory, are refused, and so is a folder that is a file on the way (or, without
    ``create_folders``, a folder that does not exist). An existing device, FIFO or socket is refused,
    ``force`` or not.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_output_plan([("-o", d / "x.jsonl", None), ("--decisions", d / "x.jsonl", None)], force=False)
    Traceback (most recent call last):
    ...
    stopwise.errors.OutputExistsError: --decisions .../x.jsonl: is also an output of this command (-o .../x.jsonl); give each output its own path
    >>> check_output_plan([("--decisions", d / "nodir" / "d.jsonl", None)], force=False, create_folders=False)
    Traceback (most recent call last):
    ...
    stopwise.errors.OutputExistsError: --decisions .../d.jsonl: folder .../nodir does not exist; create it first or choose another output path
    """
    seen: list[tuple[str, Path, bool]] = []
    for name, path, kind in outputs:
        if path is None:
            continue
        target = Path(path)
        where = f"{name} {target}" if name else str(target)
        if kind is None:
            check_output(target, force=force, name=name)
        else:
            check_output(target, force=force, directory=True, kind=kind, name=name)
        _check_place(target, where, kind is not None, seen, create_folders=create_folders)
        seen.append((where, target, kind is not None))
    return [target for _, target, _ in seen]


def write_directory(
    path: str | os.PathLike[str],
    fill: Callable[[Path], Iterable[Path]],
    *,
    force: bool = False,
    kind: str = OUTPUT_KIND,
    version: int = 1,
    name: str = "",
) -> list[Path]:
    """Write one stopwise output directory atomically; returns the written paths under ``path``.

    ``fill(staging)`` writes the files into a fresh staging directory beside ``path`` and returns
    their paths; the staging directory (with :data:`MARKER`) then replaces ``path``. ``path`` may be
    new or an empty directory; an earlier stopwise output directory of the same ``kind`` is replaced
    only with ``force``; any other directory is refused before ``fill`` runs. On any failure nothing
    is left behind. ``kind``, ``version`` and ``name`` are those of :meth:`Outputs.directory`.

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
        staging = outputs.directory(target, kind=kind, version=version, name=name)
        written = [target / Path(p).relative_to(staging) for p in fill(staging)]
    return written
