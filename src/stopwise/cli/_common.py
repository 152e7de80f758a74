"""What every command module shares: the console, error handling, exit codes, standard input and JSON output.

This module is imported by ``stopwise --help``: it must stay light (no numpy, pandas or library code at
import time).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape

from stopwise.errors import InputError, StopwiseError, terminal_text

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_PIPE",
    "PIPE_WIDTH",
    "Inputs",
    "StdoutClosed",
    "console",
    "err_console",
    "input_path",
    "is_stdin",
    "print_json",
    "user_errors",
]

EXIT_ERROR = 4
"""Exit code of any user-input error (bad file, bad policy, bad argument)."""
EXIT_INTERNAL = 5
"""Exit code of an unexpected internal failure (a bug; please report it)."""
EXIT_INTERRUPTED = 130
"""Exit code after Ctrl-C (128 + SIGINT, as a shell reports it)."""
EXIT_PIPE = 141
"""Exit code when standard output was closed before everything was written (``stopwise … | head -1``):
128 + SIGPIPE, as a shell reports a process ended by SIGPIPE. Never 0-3, which read as decisions."""

PIPE_WIDTH = 100_000
"""Line width of output that does not go to a terminal: wide enough that no table cell is ever cut."""


class StdoutClosed(Exception):
    """Standard output was closed by its reader (not an ``OSError``, so that Click does not turn it into exit 1)."""


class _Console(Console):
    """A Rich console that never truncates or wraps when its output is not a terminal (a pipe, a file, a CI log).

    Rich sizes output from the terminal of any standard stream, so ``stopwise replay | cat`` would
    cut table cells to the terminal's width (``termin…``); here a piped stream gets a width no row
    reaches, so cells are shown whole and lines wrap only where the reader's viewer wraps them.
    """

    @property
    def size(self) -> ConsoleDimensions:
        size = Console.size.fget(self)  # type: ignore[attr-defined]
        if not self.is_terminal:  # COLUMNS too is ignored: it describes a terminal, not this pipe
            return ConsoleDimensions(PIPE_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    def on_broken_pipe(self) -> None:
        """Rich exits with status 1 here, which reads as ``reject``; hand the closed pipe to ``main`` (exit 141)."""
        raise StdoutClosed("standard output closed")


console = _Console(highlight=False, soft_wrap=True)
"""Standard output of every command (results)."""
err_console = _Console(stderr=True, highlight=False, soft_wrap=True)
"""Standard error of every command (progress, warnings, errors)."""

_STDIN_NAMES: dict[str, str] = {}
"""Temporary files holding standard input -> ``<stdin>``, so that messages name what the user gave."""


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a :class:`~stopwise.errors.StopwiseError` into a clear message and exit code 4."""
    try:
        yield
    except StopwiseError as exc:
        message = str(exc)
        for spooled, shown in _STDIN_NAMES.items():
            message = message.replace(spooled, shown)
        err_console.print(f"[bold red]error:[/] {escape(terminal_text(message))}", markup=True, highlight=False)
        raise typer.Exit(EXIT_ERROR) from None


def is_stdin(path: Path | str | None) -> bool:
    """Whether a path argument is ``-`` (standard input)."""
    return path is not None and str(path) == "-"


def _sniff_suffix(head: bytes) -> str:
    """The file suffix that makes the library read spooled standard input in the right format."""
    if head.startswith(b"PAR1"):
        return ".parquet"
    if head.startswith(b"\x1f\x8b"):
        import gzip
        import io

        try:
            inner = gzip.GzipFile(fileobj=io.BytesIO(head)).read(64)
        except (OSError, EOFError):
            inner = b""
        return _sniff_suffix(inner) + ".gz"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"{"):
        return ".jsonl"
    if text.startswith(b"["):
        return ".json"
    return ".csv"


@contextmanager
def input_path(path: Path, *, suffix: str | None = None, sniff: Callable[[bytes], str] | None = None) -> Iterator[Path]:
    """A file the library can read: ``path`` itself, or standard input spooled to a temporary file when ``path`` is ``-``.

    Standard input is copied in blocks (memory stays bounded) to a private temporary folder and
    removed afterwards. Its format comes from ``suffix`` (e.g. ``".toml"``), from ``sniff`` (the
    first 4 KiB -> a suffix) or from its first bytes: Parquet, gzip (then the same for the content,
    e.g. ``.jsonl.gz``), JSON lines (``{``), JSON (``[``), else CSV. Error messages name it ``<stdin>``.

    Examples
    --------
    >>> with input_path(Path("outcomes.csv")) as path:
    ...     print(path)
    outcomes.csv
    """
    if not is_stdin(path):
        yield path
        return
    stream = sys.stdin.buffer
    folder = tempfile.mkdtemp(prefix="stopwise-stdin-")
    try:
        head = stream.read(4096) if hasattr(stream, "read") else b""
        spooled = Path(folder) / f"stdin{suffix or (sniff or _sniff_suffix)(head)}"
        with spooled.open("wb") as handle:
            handle.write(head)
            shutil.copyfileobj(stream, handle, 1 << 20)
        _STDIN_NAMES[str(spooled)] = "<stdin>"  # kept after cleanup: the error is reported once the file is gone
        yield spooled
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class Inputs:
    """The files one command reads, any one of which may be ``-`` (standard input, which can be read once).

    Give every file argument of the command (``None`` for an option not given) when entering; a
    second ``-`` among them is an :class:`~stopwise.errors.InputError`. :meth:`file` then gives a
    path the library can read (:func:`input_path`); spooled standard input is removed on leaving.

    Examples
    --------
    >>> with Inputs(Path("argument.toml"), None) as inputs:
    ...     print(inputs.file(Path("argument.toml")))
    argument.toml
    >>> with Inputs(Path("-"), Path("-")):
    ...     pass
    Traceback (most recent call last):
    ...
    stopwise.errors.InputError: standard input ('-') can be read once; give '-' for one of the files only
    """

    def __init__(self, *given: Path | list[Path] | None) -> None:
        self._given = [p for item in given for p in (item if isinstance(item, list) else [item]) if p is not None]
        self._stack = ExitStack()

    def __enter__(self) -> Inputs:
        if sum(is_stdin(p) for p in self._given) > 1:
            raise InputError("standard input ('-') can be read once; give '-' for one of the files only")
        self._stack.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> bool | None:
        return self._stack.__exit__(kind, error, trace)

    def file(self, path: Path, *, suffix: str | None = None, sniff: Callable[[bytes], str] | None = None) -> Path:
        """A readable path for ``path``: itself, or standard input spooled (see :func:`input_path`)."""
        return self._stack.enter_context(input_path(path, suffix=suffix, sniff=sniff))

    def files(self, paths: list[Path]) -> list[Path]:
        """:meth:`file` of each path."""
        return [self.file(p) for p in paths]


def _plain(value: Any) -> Any:
    """JSON-ready form of pydantic models, data frames, dataclasses, paths and numpy scalars."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "to_dict") and hasattr(value, "columns"):  # a pandas DataFrame
        return json.loads(value.to_json(orient="records"))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "item") and callable(value.item) and hasattr(value, "dtype"):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json(value: Any, *, lines: bool = False) -> None:
    """Print a result as JSON on standard output, without colour or wrapping (for ``--json``).

    ``value`` may be a pydantic model, a data frame (records), a dict or list of those. With
    ``lines``, a list is printed as JSON lines. NaN becomes ``null``.

    Examples
    --------
    >>> print_json({"action": "promote", "n": 3})
    {
      "action": "promote",
      "n": 3
    }
    """
    plain = _plain(value)
    if lines and isinstance(plain, list):
        typer.echo("".join(json.dumps(item, allow_nan=False, default=str) + "\n" for item in plain), nl=False)
        return
    typer.echo(json.dumps(plain, indent=2, allow_nan=False, default=str))


def hint_system_naming(error: Exception, system: str | None) -> None:
    """After a "read twice" error on Inspect logs with no --system: say how to name each log's system."""
    if system is None and "read twice" in str(error):
        err_console.print(
            "hint: logs of one model read as one system; name each log's system with --system-from "
            "(file, dir, task, task-arg:NAME, tag, solver, metadata:KEY) or --system"
        )
