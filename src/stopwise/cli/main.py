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
``decide`` start without pandas, scikit-learn or LightGBM. A command imports its own command module only
(:data:`COMMANDS`, the lazy-group idea of Click's documentation: the name on the command line picks the
module); ``--help`` and a name that is no command import every command module.
"""

from __future__ import annotations

import copy
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
    "next": "compare",
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


def _command_token(args: Sequence[str], flags: frozenset[str]) -> str | None:
    """The command name ``args`` begin with (after options in ``flags``); None when an other option or nothing comes first."""
    first = next((arg for arg in args if arg not in flags), None)
    return first if first is not None and not first.startswith("-") else None


_ROOT_FLAGS = frozenset({"--version"})
"""The options of :func:`_root` (``--help`` excepted: it lists every command); each takes no value, so the
command name may follow it."""


def _show_usage_error(error: typer.TyperException) -> None:
    """Click's report of a usage error on standard error: the usage line, the ``--help`` hint and the error."""
    show = getattr(error, "show", None)  # every Click exception has show(); Typer's bare base only a message
    if show is not None:
        show(file=sys.stderr)
    else:
        err_console.print(f"Error: {escape(error.format_message())}")


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
        result = typer_app(args=args, prog_name="stopwise", standalone_mode=False)
    except (BrokenPipeError, StdoutClosed):
        return _stdout_closed()
    except SystemExit as exc:
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":  # Click's answer to EPIPE is exit 1: a decision code
            return _stdout_closed()
        raise exc
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        return EXIT_ERROR
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return EXIT_INTERRUPTED
    except typer.TyperException as exc:  # Click's errors (no such command or option, a bad value): Typer's public base
        _show_usage_error(exc)
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
