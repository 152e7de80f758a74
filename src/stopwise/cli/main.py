"""Entry point of the ``stopwise`` command: assembles the command groups.

Exit codes (the one table; also in docs/cli.md and the README):

====  ======================================================================
code  meaning
====  ======================================================================
0     ``decide``: promote; any other command: success
1     ``decide``: reject (``finality replay``: a measured count differs)
2     ``decide``: continue
3     ``decide``: abstain
4     an input or usage error (bad file, policy, option); the message names it
5     an internal failure, a bug (set ``STOPWISE_DEBUG=1`` to see the traceback)
130   interrupted (Ctrl-C)
141   standard output closed early (``stopwise … | head -1``); never read it as a decision
====  ======================================================================

Command modules import the library inside their commands, so that ``stopwise --help`` and a
``decide`` start without scikit-learn, LightGBM or matplotlib.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import click
import typer
from rich.markup import escape

from stopwise.cli._common import EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_PIPE, StdoutClosed, err_console
from stopwise.cli._examples import attach_examples
from stopwise.errors import StopwiseError, escape_text, terminal_text

app = typer.Typer(
    name="stopwise",
    help="When may an LLM-agent evaluation stop, and what may it claim?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    epilog=(
        "Exit codes: decide 0 promote, 1 reject, 2 continue, 3 abstain; 4 input error; 5 internal error; "
        "130 interrupted; 141 output pipe closed. Example: stopwise decide outcomes.csv -t A -b B"
    ),
)


def _version(value: bool) -> None:
    if value:
        from stopwise._version import __version__

        typer.echo(f"stopwise {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """When may an LLM-agent evaluation stop, and what may it claim?"""


def _register() -> None:
    from stopwise.cli import compare as compare_cli

    compare_cli.register(app)
    for module_name in ("replay", "early", "finality", "ingest", "report"):
        try:
            module = __import__(f"stopwise.cli.{module_name}", fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != f"stopwise.cli.{module_name}":
                raise
            continue
        module.register(app)
    from stopwise.cli import ledger as ledger_cli

    ledger_cli.register(app)


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


def _stdout_closed() -> int:
    """Standard output is gone (a closed pipe): silence further writes and report :data:`EXIT_PIPE`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout replaced by an object without a descriptor
        pass
    return EXIT_PIPE


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    attach_examples(app)  # here, not at registration: commands registered later get theirs too
    try:
        result = app(args=argv, prog_name="stopwise", standalone_mode=False)
    except (BrokenPipeError, StdoutClosed):
        return _stdout_closed()
    except SystemExit as exc:
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":  # Click's answer to EPIPE is exit 1: a decision code
            return _stdout_closed()
        raise exc
    except (typer.Exit, click.exceptions.Exit) as exc:
        return int(exc.exit_code)
    except (typer.Abort, click.exceptions.Abort):
        err_console.print("aborted")
        return EXIT_ERROR
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return EXIT_INTERRUPTED
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
    """Console-script entry point: exits with :func:`main`'s code, or 141 when standard output was closed early."""
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = _stdout_closed()
    sys.exit(code)
