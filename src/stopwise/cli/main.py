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

import copy
import inspect
import os
import sys
from collections.abc import Sequence
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


def _command_name(command: typer.models.CommandInfo) -> str | None:
    if isinstance(command.name, str):
        return command.name
    return typer.main.get_command_name(command.callback.__name__) if command.callback else None


def _group_name(group: typer.models.TyperInfo) -> str | None:
    for name in (group.name, group.typer_instance.info.name if group.typer_instance else None):
        if isinstance(name, str):
            return name
    return None


def _invoked(typer_app: typer.Typer, args: Sequence[str], flags: frozenset[str] = frozenset()) -> typer.Typer:
    """``typer_app`` reduced to what ``args`` asks for: the command they name, or this level's help listing.

    Typer turns every registered command into a Click command (evaluating the annotations of all its
    options) before it runs one; building the invoked command alone saves ~0.1 s of each start-up.
    With no command named, or ``--help`` before one, this level's commands are listed, which needs
    their help lines only (:func:`_listing`). The app is kept whole, so that Click reports and
    suggests as always, after an option this level does not know to be a flag (it might take a
    value) and for a name that is not a command. ``flags``: this level's options known to take no
    value (a group with options of its own is never reduced).
    """
    position = 0
    while position < len(args) and args[position] in flags:
        position += 1
    if position == len(args) or args[position].startswith("-"):
        listing = position == len(args) or args[position] == "--help"  # this level's help (or its usage error)
        return _listing(typer_app) if listing else typer_app
    name = args[position]
    reduced = copy.copy(typer_app)  # the registration lists are replaced, never changed: the app stays whole
    for command in typer_app.registered_commands:
        if _command_name(command) == name:
            reduced.registered_commands, reduced.registered_groups = [command], []
            return reduced
    for group in typer_app.registered_groups:
        sub = group.typer_instance
        if sub is not None and _group_name(group) == name:
            only = copy.copy(group)
            callback = sub.info.callback
            if isinstance(callback, typer.models.DefaultPlaceholder):
                callback = callback.value
            if sub.registered_callback is None and callback is None:  # no group options to misread
                only.typer_instance = _invoked(sub, args[position + 1 :])
            reduced.registered_commands, reduced.registered_groups = [], [only]
            return reduced
    return typer_app


def _no_options() -> None:
    """A command's stand-in in a help listing: its name and help are the command's, it has no options to build."""


def _listing(typer_app: typer.Typer) -> typer.Typer:
    """``typer_app`` for its own ``--help``: every command and group keeps its name and help, no command builds options.

    A listing shows one help line per command, never a command's options; building those for all
    commands is what makes ``stopwise --help`` wait (~0.1 s). A test checks that the listing reads
    the same as the whole app's.
    """
    listed = copy.copy(typer_app)
    listed.registered_commands = []
    for command in typer_app.registered_commands:
        stand_in = copy.copy(command)
        stand_in.name = _command_name(command)
        if stand_in.help is None and command.callback is not None:
            stand_in.help = inspect.getdoc(command.callback)
        stand_in.callback = _no_options
        listed.registered_commands.append(stand_in)
    listed.registered_groups = []
    for group in typer_app.registered_groups:
        stand_in_group = copy.copy(group)
        if group.typer_instance is not None:
            stand_in_group.typer_instance = _listing(group.typer_instance)
        listed.registered_groups.append(stand_in_group)
    return listed


_ROOT_FLAGS = frozenset({"--version"})
"""The options of :func:`_root` (``--help`` excepted: it lists every command)."""


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
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        result = _invoked(app, args, _ROOT_FLAGS)(args=args, prog_name="stopwise", standalone_mode=False)
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
