"""Entry point of the ``stopwise`` command: assembles the command groups.

Exit codes: promote 0, reject 1, continue 2, abstain 3 (for ``decide``); 0 for success of other
commands; 4 for any input or usage error; 5 for an internal failure (set ``STOPWISE_DEBUG=1``
to see its traceback).
"""

from __future__ import annotations

import os
import sys

import click
import typer
from rich.markup import escape

from stopwise.cli._common import EXIT_ERROR, EXIT_INTERNAL, err_console
from stopwise.errors import StopwiseError, escape_text, terminal_text

app = typer.Typer(
    name="stopwise",
    help="When may an LLM-agent evaluation stop, and what may it claim?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    from stopwise.cli import compare as compare_cli

    compare_cli.register(app)
    for module_name in ("replay", "early", "finality", "ingest"):
        try:
            module = __import__(f"stopwise.cli.{module_name}", fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != f"stopwise.cli.{module_name}":
                raise
            continue
        module.register(app)


_register()


def _usage_error_types() -> tuple[type[BaseException], ...]:
    """Click's usage-error base, wherever this Typer version takes Click from."""
    found: list[type[BaseException]] = [click.exceptions.ClickException]
    try:  # Typer >= 0.20 vendors Click as typer._click
        from typer._click.exceptions import ClickException as VendoredClickException

        found.append(VendoredClickException)
    except ImportError:
        pass
    return tuple(found)


_USAGE_ERRORS = _usage_error_types()


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    try:
        result = app(args=argv, prog_name="stopwise", standalone_mode=False)
    except (typer.Exit, click.exceptions.Exit) as exc:
        return int(exc.exit_code)
    except (typer.Abort, click.exceptions.Abort):
        err_console.print("aborted")
        return EXIT_ERROR
    except _USAGE_ERRORS as exc:
        exc.show(file=sys.stderr)  # type: ignore[attr-defined]
        return EXIT_ERROR
    except StopwiseError as exc:  # a user error a command did not catch itself
        err_console.print(f"[bold red]error:[/] {escape(terminal_text(str(exc)))}")
        return EXIT_ERROR
    except Exception as exc:  # a bug, not a user error: say so plainly
        if os.environ.get("STOPWISE_DEBUG"):
            raise
        text = escape(escape_text(f"{type(exc).__name__}: {exc}"[:2000]))
        err_console.print(f"[bold red]internal error:[/] {text}\nPlease report this as a bug.")
        return EXIT_INTERNAL
    return int(result) if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
