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
``decide`` start without scikit-learn, LightGBM or matplotlib. Start-up does only what the command
line asks for: a command imports its own command module (:data:`COMMANDS`), and Typer builds that
command's options alone (:func:`_invoked`); ``--help`` lists every command from their help lines.
"""

from __future__ import annotations

import copy
import inspect
import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from stopwise._redact import redact_url
from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise.cli._common import EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_PIPE, StdoutClosed, err_console
from stopwise.cli._examples import attach_examples
from stopwise.errors import StopwiseError, terminal_text

_base = typer.Typer(
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
"""The root: its options and help, no command (:func:`build_app` adds them)."""


def _version(value: bool) -> None:
    if value:
        from stopwise._version import __version__

        typer.echo(f"stopwise {__version__}")
        raise typer.Exit(0)


@_base.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """When may an LLM-agent evaluation stop, and what may it claim?"""


MODULES = ("compare", "leaderboard", "replay", "early", "finality", "ingest", "report", "ledger")
"""The command modules ``stopwise.cli.<name>``, each with ``register(app)``, in the order ``--help`` lists them."""

COMMANDS = {
    "decide": "compare",
    "order": "compare",
    "demo": "compare",
    "policy": "compare",
    "leaderboard": "leaderboard",
    "replay": "replay",
    "early": "early",
    "finality": "finality",
    "ingest": "ingest",
    "report": "report",
    "ledger": "ledger",
    "watch": "ledger",
}
"""Top-level command or group -> the module that registers it: ``stopwise decide`` imports that module
alone (a test checks this table against what the modules register; a name missing here still works,
through the whole app)."""

_BUILT: dict[tuple[str, ...], typer.Typer] = {}


def build_app(modules: Sequence[str] = MODULES) -> typer.Typer:
    """The ``stopwise`` app with the commands of ``modules`` (default: every command), built once per selection."""
    key = tuple(modules)
    if key not in _BUILT:
        built = copy.copy(_base)  # the root callback and settings, with command lists of its own
        built.registered_commands, built.registered_groups = [], []
        for module_name in key:
            try:
                module = __import__(f"stopwise.cli.{module_name}", fromlist=["register"])
            except ModuleNotFoundError as exc:
                if exc.name != f"stopwise.cli.{module_name}":
                    raise
                continue
            module.register(built)
        _BUILT[key] = built
    return _BUILT[key]


app: typer.Typer
"""Every command (for tests and tools that take the Typer app): built on first use, see :func:`__getattr__`."""


def __getattr__(name: str) -> Any:
    """``app`` is built when first asked for, so that ``stopwise decide`` imports only its own command module."""
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _command_name(command: typer.models.CommandInfo) -> str | None:
    if isinstance(command.name, str):
        return command.name
    return typer.main.get_command_name(command.callback.__name__) if command.callback else None


def _group_name(group: typer.models.TyperInfo) -> str | None:
    for name in (group.name, group.typer_instance.info.name if group.typer_instance else None):
        if isinstance(name, str):
            return name
    return None


def _first_other(args: Sequence[str], flags: frozenset[str]) -> int:
    """Index of the first argument not in ``flags`` (``len(args)`` when there is none)."""
    return next((i for i, arg in enumerate(args) if arg not in flags), len(args))


def _command_token(args: Sequence[str], flags: frozenset[str]) -> str | None:
    """The command name ``args`` begin with (after options in ``flags``); None when an other option or nothing comes first."""
    position = _first_other(args, flags)
    return args[position] if position < len(args) and not args[position].startswith("-") else None


def _invoked(typer_app: typer.Typer, args: Sequence[str], flags: frozenset[str] = frozenset()) -> typer.Typer:
    """``typer_app`` reduced to what ``args`` asks for: the command they name, or this level's help listing.

    Typer turns every registered command into a Click command (evaluating the annotations of all its
    options) before it runs one; building the invoked command alone saves 0.01-0.03 s of each start-up (10 %; measured
    idle, `stopwise --help` 0.25 -> 0.22 s, `decide --help` 0.29 -> 0.28 s).
    With no command named, or ``--help`` before one, this level's commands are listed, which needs
    their help lines only (:func:`_listing`). The app is kept whole, so that Click reports and
    suggests as always, after an option this level does not know to be a flag (it might take a
    value) and for a name that is not a command. ``flags``: this level's options known to take no
    value (a group with options of its own is never reduced).
    """
    position = _first_other(args, flags)
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
    commands costs ``stopwise --help`` about 0.03 s (measured idle). A test checks that the listing reads
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


def _click_exceptions() -> Any:
    """The exceptions module of Click as this Typer runs it.

    ``typer._click`` (Typer >= 0.20 vendors Click; the click package is then never imported, saving its
    import) or the click package.
    """
    try:
        return __import__("typer._click.exceptions", fromlist=["ClickException"])
    except ImportError:  # Typer < 0.20
        return __import__("click.exceptions", fromlist=["ClickException"])


_CLICK = _click_exceptions()
_USAGE_ERRORS: tuple[type[BaseException], ...] = (_CLICK.ClickException,)
"""Click's usage-error base."""
_EXITS: tuple[type[BaseException], ...] = (typer.Exit, getattr(_CLICK, "Exit", typer.Exit))
_ABORTS: tuple[type[BaseException], ...] = (typer.Abort, getattr(_CLICK, "Abort", typer.Abort))
"""Exit and Abort: Typer's own since Typer vendors Click, Click's before."""


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
    args = sys.argv[1:] if argv is None else list(argv)
    module = COMMANDS.get(_command_token(args, _ROOT_FLAGS) or "")
    typer_app = build_app([module]) if module is not None else build_app()  # a command's own module, or all
    attach_examples(typer_app)  # here, not at registration: commands registered later get theirs too
    try:
        result = _invoked(typer_app, args, _ROOT_FLAGS)(args=args, prog_name="stopwise", standalone_mode=False)
    except (BrokenPipeError, StdoutClosed):
        return _stdout_closed()
    except SystemExit as exc:
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":  # Click's answer to EPIPE is exit 1: a decision code
            return _stdout_closed()
        raise exc
    except _EXITS as exc:
        return int(exc.exit_code)  # type: ignore[attr-defined]
    except _ABORTS:
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
        text = escape(redact_url(f"{type(exc).__name__}: {exc}")[:2000])
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
