"""What every command module shares: the console, error handling and exit codes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from stopwise.errors import StopwiseError, terminal_text

__all__ = ["EXIT_ERROR", "EXIT_INTERNAL", "console", "err_console", "user_errors"]

EXIT_ERROR = 4
"""Exit code of any user-input error (bad file, bad policy, bad argument)."""
EXIT_INTERNAL = 5
"""Exit code of an unexpected internal failure (a bug; please report it)."""

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a :class:`~stopwise.errors.StopwiseError` into a clear message and exit code 4."""
    try:
        yield
    except StopwiseError as exc:
        err_console.print(f"[bold red]error:[/] {escape(terminal_text(str(exc)))}", markup=True, highlight=False)
        raise typer.Exit(EXIT_ERROR) from None
