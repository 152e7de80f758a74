"""Every command's ``--help`` ends with an example, and shows its help texts and defaults whole."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from stopwise.cli._examples import attach_examples
from stopwise.cli.main import app, main


def _paths(group: typer.Typer, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [(*prefix, c.name or (c.callback.__name__ if c.callback else "")) for c in group.registered_commands]
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            found += _paths(sub.typer_instance, (*prefix, sub.name or sub.typer_instance.info.name or ""))
    return found


COMMANDS = _paths(app)


def test_every_command_has_an_example_in_the_table() -> None:
    assert attach_examples(app) == []
    assert len(COMMANDS) >= 15


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_shows_an_example(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    assert "Example" in out and "stopwise " + path[0] in out.split("Example", 1)[1]


def _command(path: tuple[str, ...]) -> Any:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


def _squeezed(text: str) -> str:
    """Text without whitespace and the help panels' box characters, so that wrapping does not matter."""
    return re.sub(r"[\s│╭╮╰╯─]+", "", text)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_shows_every_bracket_and_default_whole(path: tuple[str, ...]) -> None:
    """Rendered at 60 columns: no ``[word]`` of a help text swallowed as Rich markup, no default cut with "…", usage names plain."""
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "60"})
    assert result.exit_code == 0, result.output
    shown = _squeezed(result.output)
    command = _command(path)
    texts = [command.help or "", command.epilog or ""] + [p.help or "" for p in command.params if not p.hidden]
    for text in texts:
        for word in re.findall(r"(?<!\\)\[[\w-]+\]", text.replace("\\[", "[")):
            assert _squeezed(word) in shown, f"{' '.join(path)} --help swallows {word} (Rich markup): {text!r}"
    for param in command.params:
        if param.hidden or not getattr(param, "show_default", True) or isinstance(param.default, bool):
            continue
        if isinstance(param.default, str | int | float) and str(param.default) != "":
            assert _squeezed(f"[default: {param.default}]") in shown, f"{' '.join(path)} --help cuts the default of {param.name}"
    usage = next(line for line in result.output.splitlines() if "Usage:" in line)
    assert "{" not in usage, usage


def test_the_spellings_before_0_1_are_gone() -> None:
    """The options renamed at 0.1 kept their old spelling for one release; 0.2 refuses it as an unknown option."""
    shown = CliRunner().invoke(app, ["early", "train", "--help"], env={"COLUMNS": "200"}).output
    assert "--seed" in shown and "--jobs" in shown
    assert "--n-tasks" in CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "200"}).output
    for args, old in (
        (["early", "train", "runs.jsonl", "-o", "model", "--random-state", "3"], "--random-state"),
        (["early", "evaluate", "runs.jsonl", "-o", "eval", "--n-jobs", "2"], "--n-jobs"),
        (["demo", "--tasks", "60"], "--tasks"),
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code != 0 and f"No such option: {old}" in result.output, args


def _command_tree(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every leaf command of the Click tree Typer builds, with its path (``("ledger", "append")``)."""
    if not hasattr(command, "commands"):
        return [(path, command)]
    return [leaf for name, sub in command.commands.items() for leaf in _command_tree(sub, (*path, name))]


TREE = _command_tree(typer.main.get_command(app))
PYTHON_METAVAR = re.compile(r"<(?:bool|str|int|float|path|file|dir|datetime|Path|None|NoneType)(?: range)?>|<?\b(?:list|tuple|dict)\[[^\]]*\]>?")
CLICK_METAVAR = re.compile(r"(?:TEXT|INTEGER|FLOAT|BOOLEAN|DATETIME|PATH|FILE|DIRECTORY)(?: RANGE)?|\[[\w.-]+(?:\|[\w.-]+)+\]")


def test_the_walk_finds_every_command() -> None:
    """The Click tree and the Typer registrations list the same commands (so the test below sees them all)."""
    assert sorted(path for path, _ in TREE) == sorted(COMMANDS)


@pytest.mark.parametrize(("path", "command"), TREE, ids=[" ".join(path) for path, _ in TREE])
def test_help_shows_click_metavars_not_python_types(path: tuple[str, ...], command: Any) -> None:
    """No ``<bool>`` beside a flag, no ``<list[Path]>`` or ``<str>``: the type column reads as Click's (``PATH``, ``TEXT``)."""
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    found = PYTHON_METAVAR.findall(result.output)
    assert not found, f"stopwise {' '.join(path)} --help shows Python types {found}"
    for param in command.params:
        if param.hidden:
            continue
        shown = param.display_type_rich(typer.Context(command))
        if getattr(param, "is_flag", False):
            assert not shown, f"{' '.join(path)} {param.name}: a flag shows {shown!r}"
        else:
            assert (shown and CLICK_METAVAR.fullmatch(shown.removesuffix("..."))) or shown == param.metavar, (path, param.name, shown)
            label = param.opts[0] if param.param_type_name == "option" else param.display_name_raw
            row = next(line for line in result.output.splitlines() if re.match(rf"│\s*(?:\*\s+)?{re.escape(label)}(?:\.\.\.)?\s", line))
            assert shown in row, f"{' '.join(path)} --help: the row of {param.name} lacks {shown!r}: {row!r}"
