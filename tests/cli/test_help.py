"""Every command's ``--help`` ends with an example."""

from __future__ import annotations

import pytest
import typer

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
