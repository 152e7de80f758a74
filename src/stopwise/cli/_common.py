"""What every command module shares.

The console, error handling, exit codes, standard input, JSON output and the options several commands take.

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
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any
from typing import get_args as typing_args

import typer
from rich.console import Console, ConsoleDimensions

from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise.errors import InputError, Problem, StopwiseError, ValidationError, shown, terminal_text

if TYPE_CHECKING:
    from rich.progress import Progress

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_PIPE",
    "PIPE_WIDTH",
    "SYSTEM_SOURCES",
    "BaselineSystem",
    "GroupSizes",
    "Inputs",
    "PlannedCount",
    "PlannedTasks",
    "PolicyFile",
    "Quiet",
    "Reporter",
    "StdoutClosed",
    "TestedSystem",
    "comma_numbers",
    "console",
    "err_console",
    "input_path",
    "is_stdin",
    "print_json",
    "progress",
    "progress_bar",
    "system_naming",
    "task_universe",
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
        message = _collapsed_problems(exc) if isinstance(exc, ValidationError) else str(exc)
        for spooled, shown in _STDIN_NAMES.items():
            message = message.replace(spooled, shown)
        err_console.print(f"[bold red]error:[/] {escape(terminal_text(message))}", markup=True, highlight=False)
        raise typer.Exit(EXIT_ERROR) from None


_SHOWN_PROBLEMS = 20
"""Lines of problems an error message spells out."""
_ROWS_NAMED = 3
"""A problem repeated on more rows than this is printed once, with a count and its first rows."""


def _collapsed_problems(error: ValidationError) -> str:
    """The message of ``error`` with repeated problems shown once, with a count.

    A problem repeated on more than 3 rows (the same file, field, rule and value) is one line with
    its count and first rows; the same rule broken by more than 3 different values in one file and
    field (a key read twice, once per task) is one line with its count and first values.
    ``ledger append`` of a file holding another system's rows names one problem (×1,700), not 1,700
    lines.

    Examples
    --------
    >>> from stopwise.errors import Problem
    >>> same = [Problem("rows.csv", i, "system", "must be 'A' or 'B'", "C") for i in range(1, 1701)]
    >>> print(_collapsed_problems(ValidationError([*same, Problem("rows.csv", 9, "task", "must be planned", "t9")])))
    1,701 problems in the input:
      rows.csv, field 'system': must be 'A' or 'B'; got 'C' (×1,700: rows 1, 2, 3, …)
      rows.csv, row 9, field 'task': must be planned; got 't9'
    >>> keys = [Problem("b.json", None, "task", "must be unique but is read twice", f"t{i}") for i in range(30)]
    >>> print(_collapsed_problems(ValidationError(keys)))
    30 problems in the input:
      b.json, field 'task': must be unique but is read twice; got 't0', 't1', 't2', … (×30)
    """
    import dataclasses

    groups: dict[tuple[str, str | None, str, str], list[Problem]] = {}
    for problem in error.problems:
        groups.setdefault((problem.file, problem.field, problem.rule, repr(problem.value)), []).append(problem)
    rules: dict[tuple[str, str | None, str], list[list[Problem]]] = {}  # the groups of each rule, of few rows each
    for (file, field, text, _), same in groups.items():
        if len(same) <= _ROWS_NAMED:
            rules.setdefault((file, field, text), []).append(same)
    collapsed = {key for key, values in rules.items() if sum(map(len, values)) > _ROWS_NAMED}
    if not collapsed and all(len(same) <= _ROWS_NAMED for same in groups.values()):
        return str(error)
    lines: list[str] = []
    for same in groups.values():
        first = same[0]
        key = (first.file, first.field, first.rule)
        if len(same) > _ROWS_NAMED:
            rows = [f"{p.row}" + (f" (line {p.line})" if p.line is not None else "") for p in same[:_ROWS_NAMED] if p.row is not None]
            where = f": rows {', '.join(rows)}, …" if rows else ""
            lines.append(f"{dataclasses.replace(first, row=None, line=None)} (×{len(same):,}{where})")
        elif key not in collapsed:
            lines += [str(p) for p in same]
        elif same is rules[key][0]:  # the rule's line, where its first value stood
            values = rules[key]
            n = sum(map(len, values))
            got = ", ".join(shown(v[0].value) for v in values[:_ROWS_NAMED])
            bare = dataclasses.replace(first, row=None, line=None, value=None)
            count = f"×{n:,}" + (f" in {len(values):,} values" if n != len(values) else "")
            lines.append(f"{bare}; got {got}{', …' if len(values) > _ROWS_NAMED else ''} ({count})")
    if len(lines) > _SHOWN_PROBLEMS:
        lines[_SHOWN_PROBLEMS:] = [f"... and {len(lines) - _SHOWN_PROBLEMS:,} more"]
    n = len(error.problems)
    return f"{n:,} problem{'s' if n != 1 else ''} in the {error.subject}:\n  " + "\n  ".join(lines)


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
            f"({', '.join(SYSTEM_SOURCES)}) or --system"
        )


def system_naming(system: str | None, system_from: list[str] | None) -> str | None:
    """The system name or template of Inspect logs from ``--system`` or ``--system-from`` (not both).

    Examples
    --------
    >>> system_naming("{task}/{model}", None)
    '{task}/{model}'
    >>> system_naming("A", ["file"])
    Traceback (most recent call last):
    ...
    stopwise.errors.InputError: give either --system or --system-from, not both
    """
    if not system_from:
        return system
    if system is not None:
        raise InputError("give either --system or --system-from, not both")
    from stopwise.ingest import system_template

    return system_template(system_from)


PROGRESS_SECONDS = 30.0
"""Seconds between two plain progress lines (when standard error is not a terminal); the environment variable
``STOPWISE_PROGRESS_SECONDS`` overrides it."""


def _clock(seconds: float) -> str:
    """``seconds`` as H:MM:SS.

    Examples
    --------
    >>> _clock(3725.4)
    '1:02:05'
    """
    whole = int(max(seconds, 0.0))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _interval() -> float:
    try:
        value = float(os.environ.get("STOPWISE_PROGRESS_SECONDS", PROGRESS_SECONDS))
    except ValueError:
        return PROGRESS_SECONDS
    return value if value > 0 and math.isfinite(value) else PROGRESS_SECONDS


class Reporter:
    """Progress of one long command: a transient Rich bar on a terminal, plain lines elsewhere, nothing when quiet.

    Call it as ``reporter(done, total, description)`` (absolute counts), or :meth:`advance` with an
    increment. Off a terminal (a pipe, a CI log) it prints a line ``label: done/total (pct), elapsed
    H:MM:SS, ETA H:MM:SS — description`` on standard error at the start, at every 10 % and at least
    every :data:`PROGRESS_SECONDS` seconds (a line saying the command is still running when the work
    has no count, or between two counts), and a last line with the total time. With ``after``
    (work that is often quick, such as ``ingest``), off a terminal nothing is printed before the
    first interval has passed. The ETA extrapolates the current count: work reported in stages (features
    of every run, then the folds) starts a new count, and a new ETA, when its total changes or its count
    goes back. Build it with :func:`progress`.
    """

    def __init__(self, label: str, *, quiet: bool, on: Console, every: float | None = None, after: bool = False) -> None:
        import threading
        import time

        self.label = label
        self.quiet = quiet
        self.on = on
        self.every = _interval() if every is None else every
        self.done = 0
        self.total: int | None = None
        self.description = ""
        self._time = time.monotonic
        self._start = self._time()
        self._last_line = self._start
        self._last_tenth = 0
        self._count_start, self._count_base = self._start, 0  # where the current count (and its ETA) began
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar: Progress | None = None
        self._task: Any = None
        self.plain = not quiet and not on.is_terminal
        self.after = after
        self._printed = False

    def __enter__(self) -> Reporter:
        import threading

        if self.quiet:
            return self
        if not self.plain:
            self._bar = progress_bar(escape(self.label), "{task.description}", on=self.on)
            self._bar.__enter__()
            self._task = self._bar.add_task("", total=None)
            return self
        if not self.after:
            self._line("started")
        self._thread = threading.Thread(target=self._tick, name="stopwise-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.__exit__(kind, error, trace)
        if self.plain and kind is None and (self._printed or not self.after):
            self._line(f"done in {_clock(self._time() - self._start)}", whole=True)

    def __call__(self, done: int, total: int | None = None, description: str = "") -> None:
        with self._lock:
            self._new_count(total, done)
            self.done = done
            self.total = total if total is not None else self.total
            self.description = description or self.description
        self._update()

    def advance(self, step: int, total: int | None = None) -> None:
        """Add ``step`` to the count done (the replay engines report increments)."""
        with self._lock:
            self._new_count(total, self.done)
            self.done += step
            self.total = total if total is not None else self.total
        self._update()

    def _new_count(self, total: int | None, base: int) -> None:
        """A total other than the current one, or a count that goes back, starts a new count (a new stage) from ``base``, and its ETA from now."""
        if total is not None and self.total is not None and (total != self.total or base < self.done):
            self._count_start, self._count_base, self._last_tenth = self._time(), base, 0

    def _update(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, total=self.total, description=escape(self.description))
        elif self.plain:
            tenth = 10 * self.done // self.total if self.total else 0
            if self.total is not None and self.done >= self.total:
                return  # the last line says it (with the total time)
            if (tenth > self._last_tenth and not self.after) or self._time() - self._last_line >= self.every:
                self._last_tenth = max(tenth, self._last_tenth)
                self._line()

    def _tick(self) -> None:
        while not self._stop.wait(min(self.every, 1.0)):
            if self._time() - self._last_line >= self.every:
                self._line()

    def _line(self, note: str = "", *, whole: bool = False) -> None:
        """One plain progress line on standard error: the count, the time and the description (or ``note``)."""
        with self._lock:
            now = self._time()
            self._last_line = now
            self._printed = True
            elapsed = now - self._start
            count = f"{self.done:,}/{self.total:,} ({100 * self.done / self.total:.0f}%)" if self.total else ""
            if whole:
                parts = [count, note]
            elif note:
                parts = [note]
            else:
                counted, spent = self.done - self._count_base, now - self._count_start
                eta = f", ETA {_clock(spent * (self.total - self.done) / counted)}" if self.total and counted > 0 and self.done < self.total else ""
                parts = [count or "still running", f"elapsed {_clock(elapsed)}{eta}"]
                parts += [f"— {self.description}"] if self.description else []
            self.on.print(escape(f"{self.label}: " + ", ".join(p for p in parts[:2] if p) + "".join(f" {p}" for p in parts[2:])), highlight=False, soft_wrap=True)


def progress(label: str, *, quiet: bool = False, detail: str = "", after: bool = False, on: Console | None = None) -> Reporter:
    """The progress of one long command, to use as a context manager (see :class:`Reporter`); on standard error by default.

    Examples
    --------
    >>> with progress("replay", quiet=True) as report:
    ...     report(1, 2, "pairs x policies")
    """
    reporter = Reporter(label, quiet=quiet, on=on if on is not None else err_console, after=after)
    reporter.description = detail  # what is counted, until the work describes its step
    return reporter


def quiet_option() -> Any:
    """The ``--quiet/-q`` option of the long commands: no progress lines or bar."""
    return typer.Option("--quiet", "-q", help="Print no progress (by default: a bar on a terminal, a line every 10 % or 30 s elsewhere).")


Quiet = Annotated[bool, quiet_option()]


def progress_bar(label: str, detail: str, *, on: Console) -> Progress:
    """A transient Rich progress bar on console ``on``, to use as a context manager.

    Its columns: ``label``, the bar, done/total, ``detail`` (a Rich column template such as
    ``"{task.description}"``) and the elapsed time.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn(detail), TimeElapsedColumn(), console=on, transient=True
    )


def did_you_mean(value: str, known: Iterable[str]) -> str:
    """``"did you mean 'x' or 'y'?"`` naming the (at most 3) names of ``known`` closest to a misspelt ``value``; "" when none is close.

    Examples
    --------
    >>> did_you_mean("django-1109", ["django-11099", "astropy-12907"])
    "did you mean 'django-11099'?"
    >>> did_you_mean("zzz", ["django-11099"])
    ''
    """
    import difflib

    close = difflib.get_close_matches(value, sorted(set(known)), n=3, cutoff=0.6)
    return f"did you mean {' or '.join(map(repr, close))}?" if close else ""


def comma_numbers(text: str, option: str, *, unit_interval: bool = False) -> list[float]:
    """The numbers of a comma-separated option (``--thresholds 0,0.05``): at least one; with ``unit_interval``, each in (0, 1].

    Examples
    --------
    >>> comma_numbers("0, 0.05,", "thresholds")
    [0.0, 0.05]
    >>> comma_numbers("0,0.5", "thresholds", unit_interval=True)
    Traceback (most recent call last):
    ...
    stopwise.errors.InputError: --thresholds must list numbers in (0, 1]; got '0,0.5'
    >>> comma_numbers(" , ", "budgets")
    Traceback (most recent call last):
    ...
    stopwise.errors.InputError: --budgets must list at least one number; got ' , '
    """
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise InputError(f"--{option} must be comma-separated numbers; got {text!r}") from exc
    if unit_interval and not (values and all(0 < v <= 1 for v in values)):
        raise InputError(f"--{option} must list numbers in (0, 1]; got {text!r}")
    if not values:
        raise InputError(f"--{option} must list at least one number; got {text!r}")
    return values


def _group_sizes(values: list[str]) -> dict[str, int]:
    """``--group-size NAME=COUNT`` values as {group: count}; a malformed or repeated group is an InputError."""
    sizes: dict[str, int] = {}
    for value in values:
        name, sep, count = value.rpartition("=")
        if not sep or not name.strip() or not count.strip().isdigit() or int(count) < 1:
            raise InputError(f"--group-size must be NAME=COUNT with a whole COUNT >= 1; got {value!r}")
        if name.strip() in sizes:
            raise InputError(f"--group-size names group {name.strip()!r} twice")
        sizes[name.strip()] = int(count)
    return sizes


def task_universe(tasks: Path | None, n_tasks: int | None, group_size: list[str] | None, group_column: str) -> Any:
    """The planned task universe (a :class:`stopwise.records.TaskUniverse`), or None when none is given.

    From ``--tasks``, or from ``--n-tasks`` / ``--group-size`` (N is the sum of the group sizes when
    ``--n-tasks`` is not given).

    Examples
    --------
    >>> universe = task_universe(None, None, ["g=30", "h=10"], "group")
    >>> universe.n_tasks
    40
    >>> task_universe(None, None, None, "group") is None
    True
    """
    from stopwise.records import TaskUniverse, read_task_universe

    sizes = _group_sizes(group_size or [])
    if tasks is not None:
        if n_tasks is not None or sizes:
            raise InputError("give the planned tasks either as --tasks FILE or as --n-tasks / --group-size, not both")
        return read_task_universe(tasks, group_column=group_column)
    if n_tasks is None and not sizes:
        return None
    return TaskUniverse.from_counts(n_tasks if n_tasks is not None else sum(sizes.values()), sizes or None)


def _usage_names() -> None:
    """Usage lines name arguments as Click does (``TASKS``, ``[PATH]``, ``OUTCOMES...``), not as ``{tasks}``.

    Typer 0.2x writes a required argument as ``{name}`` in the usage line, which reads like a template
    placeholder; its hook is replaced here (a Typer without the hook is left as it is).
    """
    import typer.core

    argument: Any = getattr(typer.core, "TyperArgument", None)
    if argument is None or not hasattr(argument, "_usage_display_name"):
        return

    def usage_name(self: Any) -> str:
        name = str(self.metavar if self.metavar is not None else self.name).upper()
        return (name if self.required else f"[{name}]") + ("..." if self.nargs != 1 else "")

    argument._usage_display_name = usage_name


_usage_names()

_METAVARS = {"bool": "BOOLEAN", "str": "TEXT", "int": "INTEGER", "float": "FLOAT", "datetime": "DATETIME", "Path": "PATH"}
"""Click's names of the value types, which ``--help`` shows where Typer 0.2x shows Python's (``<int>``)."""


def click_metavar(param: Any) -> str:
    """What ``--help`` shows in the type column of a parameter: nothing for a flag, else Click's name.

    Typer 0.2x writes Python annotations there (``<bool>`` beside every flag, ``<list[Path]>``,
    ``<str>``); this gives what Click writes: ``TEXT``, ``INTEGER``, ``FLOAT``, ``PATH`` (``FILE``,
    ``DIRECTORY``), ``[a|b|c]`` for choices, and ``INTEGER RANGE`` for bounded numbers. A repeatable
    option or a variadic argument shows its element's name (the ``...`` after an argument's name says
    it takes several).
    """
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    desc = param.type_descriptor
    if desc.is_choice:
        return "[" + "|".join(str(getattr(choice, "value", choice)) for choice in desc.choices or ()) + "]"
    if desc.is_path:
        return {"file": "FILE", "dir": "DIRECTORY"}.get(desc.path_type, "PATH")
    annotation = desc.annotation
    if desc.is_list or desc.is_tuple:
        names = [_METAVARS.get(getattr(arg, "__name__", ""), "TEXT") for arg in typing_args(annotation)]
        return " ".join(names[:1] if desc.is_list else names)
    name = _METAVARS.get(getattr(annotation, "__name__", ""), "TEXT")
    return f"{name} RANGE" if desc.is_ranged else name


def _click_metavars() -> None:
    """Typer's type column shows Click's names (:func:`click_metavar`); a Typer without the hook is left as it is."""
    import typer.core

    parameter: Any = getattr(typer.core, "_TyperParameter", None)
    if parameter is None or not hasattr(parameter, "display_type"):
        return
    parameter.display_type = lambda self, ctx: click_metavar(self)


_click_metavars()


# Options several commands take. Each ``*_option(panel)`` makes the typer option (under a help panel of the
# command's when given); the Annotated aliases are the common case.

SYSTEM_SOURCES = ("model", "file", "dir", "task", "task-arg:NAME", "tag", "tag:PREFIX", "solver", "metadata:KEY")
"""As ``stopwise.ingest.SYSTEM_SOURCES`` (a test keeps them equal); spelled out so that ``--help``
imports no reader."""


def _option(*names: str, help: str, show_default: bool = True) -> Callable[..., Any]:
    def make(panel: str | None = None, *, help: str = help) -> Any:
        return typer.Option(*names, help=help, rich_help_panel=panel, show_default=show_default)

    return make


tested_option = _option("--tested", "-t", help="The tested system A.")
baseline_option = _option("--baseline", "-b", help="The baseline system B.")
policy_option = _option("--policy", "-p", help="Policy TOML (default: the exact-wor one-look test on a uniform order, the `policy init` one).")
tasks_option = _option("--tasks", help="The planned tasks: `stopwise order` output or a tasks file (task, group, position).")
n_tasks_option = _option("--n-tasks", help="N, the number of planned tasks (names unknown).")
group_size_option = _option("--group-size", help="Planned tasks of one group, NAME=COUNT (repeatable).")
system_option = _option("--system", help="System name, or a template such as '{task}/{model}'.")
system_from_option = _option(
    "--system-from",
    help="Inspect logs: name each log's system from "
    + " | ".join(SYSTEM_SOURCES)
    + " (default model; repeat to join with '/'), e.g. when two logs share one model.",
    show_default=False,
)
scorer_option = _option("--scorer", help="Inspect scorer (NAME or NAME:KEY); Harbor reward key; HAL result key.")
errors_option = _option("--errors", help="Runs the harness failed on: pending (default), fail (outcome 0) or drop.")
elapsed_option = _option("--elapsed", help="total wall-clock time (default) or the agent's own time.")

TestedSystem = Annotated[str, tested_option()]
BaselineSystem = Annotated[str, baseline_option()]
PolicyFile = Annotated[Path | None, policy_option()]
PlannedTasks = Annotated[Path | None, tasks_option()]
PlannedCount = Annotated[int | None, n_tasks_option()]
GroupSizes = Annotated[list[str] | None, group_size_option()]
