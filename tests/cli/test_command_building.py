"""Start-up: a command imports its own command module only, and nothing a user sees changes for it.

``stopwise.cli.main`` builds the app from the command module of the name on the line (:data:`COMMANDS`),
or from every module for a help listing or a name that is no command. These tests build the whole app
and compare: every command's options, every help page and listing, and the errors for names and options
Click must report.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

import stopwise
from stopwise.cli._common import EXIT_ERROR
from stopwise.cli._examples import attach_examples
from stopwise.cli.main import _ROOT_FLAGS, COMMANDS, MODULES, _show_usage_error, app, build_app, main

attach_examples(app)
WHOLE = typer.main.get_command(app)


def _groups(command: Any) -> dict[str, Any]:
    return {name: sub for name, sub in getattr(command, "commands", {}).items() if hasattr(sub, "commands")}


def _paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, sub in command.commands.items():
        found += _paths(sub, (*prefix, name)) if hasattr(sub, "commands") else [(*prefix, name)]
    return found


PATHS = _paths(WHOLE)
GROUPS = [(name,) for name in _groups(WHOLE)]


def _described(command: Any) -> str:
    """Everything of a built command but its subcommands and callables, object addresses removed."""

    def plain(obj: Any) -> dict[str, Any]:
        return {k: v for k, v in vars(obj).items() if k not in ("callback", "commands", "params") and not callable(v)}

    text = repr((plain(command), [plain(param) for param in command.params]))
    return re.sub(r" at 0x[0-9a-f]+", "", text)


def _whole_output(args: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(Exception):
        WHOLE(args=args, prog_name="stopwise", standalone_mode=False)
    return out.getvalue()


def _main_output(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args)
    return code, out.getvalue()


def test_there_are_commands_and_groups() -> None:
    assert len(PATHS) >= 20 and len(GROUPS) >= 4
    assert ("decide",) in PATHS and ("early", "train") in PATHS and ("finality", "check") in PATHS


@pytest.mark.parametrize("path", PATHS, ids=" ".join)
def test_the_commands_own_module_builds_it_as_the_whole_app_does(path: tuple[str, ...]) -> None:
    own = build_app([COMMANDS[path[0]]])  # what main() builds: the command's own module
    attach_examples(own)
    whole, built = WHOLE, typer.main.get_command(own)
    assert path[0] in built.commands and set(built.commands) < set(WHOLE.commands)  # type: ignore[attr-defined]
    for name in path:
        whole, built = whole.commands[name], built.commands[name]  # type: ignore[attr-defined]
    assert _described(built) == _described(whole)
    assert len(built.params) == len(whole.params)


@pytest.mark.parametrize(
    "args",
    [[], ["--help"], *([*g] for g in GROUPS), *([*g, "--help"] for g in GROUPS)],
    ids=lambda a: " ".join(a) or "(nothing)",
)
def test_help_listings_read_as_the_whole_apps(args: list[str]) -> None:
    """A group's listing from its own module reads as the whole app's, character for character."""
    code, shown = _main_output(list(args))
    assert shown == _whole_output(list(args))
    assert code == (0 if "--help" in args else EXIT_ERROR)  # no command: Click's no-args-is-help usage error
    assert "Usage: stopwise" in shown
    level = WHOLE
    for name in (a for a in args if not a.startswith("-")):
        level = level.commands[name]  # type: ignore[attr-defined]
    for name in level.commands:  # type: ignore[attr-defined]
        assert re.search(rf"\b{re.escape(name)}\b", shown), f"{name} missing from the listing"


@pytest.mark.parametrize("path", [("decide",), ("early", "train"), ("ledger", "init")], ids=" ".join)
def test_command_help_reads_as_the_whole_apps(path: tuple[str, ...]) -> None:
    code, shown = _main_output([*path, "--help"])
    assert code == 0
    assert shown == _whole_output([*path, "--help"])


@pytest.mark.parametrize(
    "args",
    [["decid"], ["early", "trian"], ["--bogus", "decide"], ["early", "--bogus", "train"], ["decide", "--no-such-option"]],
    ids=" ".join,
)
def test_unknown_names_and_options_are_reported_as_before(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A name that is no command builds the whole app: Click lists, suggests ("did you mean") and reports as always."""
    assert main(args) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "No such command" in err or "No such option" in err
    if args == ["decid"]:
        assert "decide" in err  # Click's suggestion needs every command name


def test_root_options_known_to_take_no_value_are_its_flags() -> None:
    """main() skips _ROOT_FLAGS before the command name: each must be a root flag (else a value could be read as a command)."""
    flags = {opt for param in WHOLE.params if getattr(param, "is_flag", False) for opt in param.opts}
    assert flags >= _ROOT_FLAGS
    for param in WHOLE.params:
        assert getattr(param, "is_flag", False), f"root option {param.opts} takes a value: teach main() to skip it"


def test_version_before_a_command_still_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--version", "decide", "x.csv"], ["--version", "--help"]):
        assert main(args) == 0
        assert capsys.readouterr().out.startswith("stopwise ")


def test_the_command_table_names_what_each_module_registers() -> None:
    registered: dict[str, str] = {}
    for module in MODULES:
        alone = build_app([module])
        names = [c.name for c in alone.registered_commands] + [g.name for g in alone.registered_groups]
        assert names, f"stopwise.cli.{module} registers nothing"
        registered.update(dict.fromkeys(names, module))  # type: ignore[arg-type]
    assert registered == COMMANDS
    assert set(WHOLE.commands) == set(registered)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("args", "expected"), [(["decide", "--help"], ["compare"]), (["early", "train", "--help"], ["early"]),
                                                (["--version", "ledger", "--help"], ["ledger"]), (["--help"], list(MODULES))])
def test_a_command_imports_its_own_command_module_only(args: list[str], expected: list[str]) -> None:
    code = (
        "import sys\nfrom stopwise.cli.main import main\ncode = main(sys.argv[1:])\n"
        "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('stopwise.cli.') and m.count('.') == 2\n"
        "             and not m.rsplit('.', 1)[1].startswith('_') and m != 'stopwise.cli.main'))\n"
        "print('click' in sys.modules or 'typer._click' not in sys.modules)\nsys.exit(code)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(stopwise.__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    modules, click_imported = done.stdout.strip().splitlines()[-2:]
    assert modules == repr(sorted(expected))
    assert click_imported == "False"  # Typer vendors Click as typer._click: the click package is not loaded


def test_a_usage_error_is_clicks_report_on_standard_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", "x.csv", "--no-such-option"]) == EXIT_ERROR
    assert capsys.readouterr().err == (
        "Usage: stopwise decide [OPTIONS] OUTCOMES...\nTry 'stopwise decide --help' for help.\n\nError: No such option: --no-such-option\n"
    )
    assert main(["decide", "x.csv", "--tested"]) == EXIT_ERROR
    assert capsys.readouterr().err == "Error: Option '--tested' requires an argument.\n"
    _show_usage_error(typer.TyperException("a bare Typer error"))  # Typer's base without Click's show()
    assert capsys.readouterr().err == "Error: a bare Typer error\n"
