"""No output replaces an existing file without ``--force``: every command that writes, enumerated from the Typer app.

Every path option of every command is either an input (:data:`INPUTS`) or an output with a case here
(:data:`FILE_OUTPUTS`, :data:`DIR_OUTPUTS`), so a new path option that writes and has no case fails
:func:`test_every_path_option_is_an_input_or_a_tested_output`. Each file output is run against a
pre-existing file of known content: exit 4, the file named in the message, every file of its folder
unchanged; then with ``--force`` the file is replaced. A directory output never replaces a user's file
(``--force`` or not), and replaces an earlier stopwise output only with ``--force``.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.early.conftest import SMALL, make_runs

from stopwise._atomic import MARKER
from stopwise.cli.main import app, main
from stopwise.early import EarlyOutcomeModel
from stopwise.records import write_trajectories

from .conftest import Run, files, refused

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

KNOWN = b"my own data: never replaced without --force\n"
ROOT = Path(__file__).parents[2]


def _path_options(group: typing.Any = None, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, str, str]]:
    """(command, parameter, help) of every path-typed parameter of every command of the app."""
    group = app if group is None else group
    for command in group.registered_commands:
        name = " ".join((*prefix, command.name or command.callback.__name__))
        for parameter, hint in typing.get_type_hints(command.callback, include_extras=True).items():
            if typing.get_origin(hint) is not typing.Annotated:
                continue
            base, info = typing.get_args(hint)[:2]
            if "Path" in str(base):
                yield name, parameter, str(getattr(info, "help", "") or "")
    for sub in group.registered_groups:
        yield from _path_options(sub.typer_instance, (*prefix, sub.name or sub.typer_instance.info.name))


INPUTS = {
    ("decide", "outcomes"), ("decide", "policy"), ("decide", "tasks"), ("next", "outcomes"), ("next", "policy"), ("next", "tasks"),
    ("order", "tasks"), ("order", "policy"),
    ("leaderboard", "outcomes"), ("leaderboard", "policy"), ("leaderboard", "tasks"),
    ("replay", "outcomes"), ("replay", "policy"),
    ("ingest", "paths"), ("ingest", "instances"),
    ("watch", "policy"), ("watch", "tasks"),
    ("policy check", "path"),
    ("early train", "trajectories"), ("early train", "gold"),
    ("early evaluate", "trajectories"), ("early evaluate", "gold"),
    ("early monitor", "model_dir"), ("early monitor", "trajectories"), ("early monitor", "gold"),
    ("finality check", "argument"), ("finality check", "runs"), ("finality check", "record"),
    ("ledger init", "tasks"), ("ledger init", "policy"),
    ("ledger append", "rows"),
}
"""Path options a command only reads."""


@dataclass(frozen=True)
class Inputs:
    """Small valid inputs shared by the cases (in a folder of their own, which no case writes to)."""

    folder: Path

    def __getattr__(self, name: str) -> Path:
        return self.folder / name.replace("_", ".")  # rows_csv: rows.csv


@pytest.fixture(scope="module")
def given(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    folder = tmp_path_factory.mktemp("inputs")
    rows = "".join(f"A,t{i},{int(i % 3 != 0)}\nB,t{i},{int(i % 4 == 0)}\n" for i in range(24))
    (folder / "rows.csv").write_text("system,task,outcome\n" + rows)
    (folder / "tasks.csv").write_text("task,group\n" + "".join(f"t{i},g{i % 2}\n" for i in range(24)))
    runs = make_runs()
    write_trajectories(runs, folder / "runs.jsonl.gz")
    EarlyOutcomeModel(**SMALL).fit([r for r in runs if r.agent != "agent-3"]).save(folder / "model")  # type: ignore[arg-type]
    ledger = folder / "ledger.db"
    assert main(["ledger", "init", str(ledger), "ev", "-t", "A", "-b", "B", "--n-tasks", "24"]) == 0
    assert main(["ledger", "append", str(ledger), "ev", str(folder / "rows.csv")]) == 0
    assert main(["ledger", "decide", str(ledger), "ev"]) in (0, 1, 2, 3)
    return Inputs(folder)


Case = Callable[[Inputs, Path], list[object]]

FINALITY = ROOT / "tests" / "finality" / "fixtures"
EXAMPLES = ROOT / "src" / "stopwise" / "finality" / "examples"

FILE_OUTPUTS: dict[tuple[str, str], tuple[str, Case]] = {
    ("order", "out"): (".csv", lambda g, t: ["order", g.tasks_csv, "-o", t]),
    ("ingest", "out"): (".csv", lambda g, t: ["ingest", ROOT / "tests/ingest/fixtures/tau2/airline_results.json", "-o", t]),
    ("ingest", "trajectories"): (".jsonl", lambda g, t: [
        "ingest", ROOT / "tests/ingest/fixtures/tau2/airline_results.json", "-o", t.with_name("rows.csv"), "--trajectories", t,
    ]),
    ("report", "out"): (".html", lambda g, t: ["report", g.ledger_db, "-o", t]),
    ("leaderboard", "html"): (".html", lambda g, t: ["leaderboard", g.rows_csv, "--complete", "--html", t]),
    ("policy init", "path"): (".toml", lambda g, t: ["policy", "init", t]),
    ("early evaluate", "outcomes"): (".csv", lambda g, t: [
        "early", "evaluate", g.runs_jsonl_gz, "--min-steps", "5", "--variant", "dense-lr", "--outcomes", t, "-q",
    ]),
    ("early monitor", "outcomes"): (".csv", lambda g, t: [
        "early", "monitor", g.model, g.runs_jsonl_gz, "--limit", "2", "--summary", "--outcomes", t,
    ]),
    ("finality check", "rows"): (".csv", lambda g, t: [
        "finality", "check", EXAMPLES / "async-no-reconciliation.toml", "--runs", FINALITY / "runs.csv", "--rows", t,
    ]),
    ("ledger export", "out"): (".csv", lambda g, t: ["ledger", "export", g.ledger_db, "ev", "-o", t]),
    ("ledger export", "decisions"): (".jsonl", lambda g, t: [
        "ledger", "export", g.ledger_db, "ev", "-o", t.with_name("rows.csv"), "--decisions", t,
    ]),
}
"""Output files: (suffix, the command writing the target ``t``)."""

DIR_OUTPUTS: dict[tuple[str, str], tuple[str, Case]] = {
    ("demo", "out"): ("stopwise.output", lambda g, t: ["demo", "--n-tasks", "40", "--systems", "2", "--out", t]),
    ("replay", "out"): ("stopwise.output", lambda g, t: ["replay", g.rows_csv, "--orders", "5", "-o", t, "-q"]),
    ("early train", "out"): ("stopwise.early.model", lambda g, t: ["early", "train", g.runs_jsonl_gz, "--min-steps", "5", "-o", t, "-q"]),
    ("early evaluate", "out"): ("stopwise.early.evaluation", lambda g, t: [
        "early", "evaluate", g.runs_jsonl_gz, "--min-steps", "5", "--variant", "dense-lr", "-o", t, "-q",
    ]),
    ("finality replay", "out"): ("stopwise.output", lambda g, t: ["finality", "replay", "-r", "1", "--out", t, "-q"]),
}
"""Output directories: (the kind of stopwise output they hold, the command writing the target ``t``)."""


def test_every_path_option_is_an_input_or_a_tested_output() -> None:
    found = {(command, parameter) for command, parameter, _ in _path_options()}
    assert found - INPUTS - set(FILE_OUTPUTS) - set(DIR_OUTPUTS) == set(), "a path option with no case: input or output?"
    assert (INPUTS | set(FILE_OUTPUTS) | set(DIR_OUTPUTS)) - found == set(), "a case of an option that is gone"
    assert len(found) >= 40


def test_no_input_is_described_as_written_and_every_output_is() -> None:
    for command, parameter, text in _path_options():
        written = "write" in text.lower()
        assert written == ((command, parameter) not in INPUTS), (command, parameter, text)


def test_every_writing_command_takes_force() -> None:
    writers = {command for command, _ in (*FILE_OUTPUTS, *DIR_OUTPUTS)}
    with_force = set()
    for command, _, _ in _path_options():
        group = app
        *groups, last = command.split()
        for name in groups:
            group = next(g.typer_instance for g in group.registered_groups if (g.name or g.typer_instance.info.name) == name)
        callback = next(c.callback for c in group.registered_commands if (c.name or c.callback.__name__) == last)
        if "force" in typing.get_type_hints(callback):
            with_force.add(command)
    assert writers - with_force == set()


@pytest.mark.parametrize("option", list(FILE_OUTPUTS), ids=" ".join)
def test_an_existing_file_is_replaced_only_with_force(option: tuple[str, str], given: Inputs, tmp_path: Path, run: Run) -> None:
    suffix, case = FILE_OUTPUTS[option]
    target = tmp_path / f"mine{suffix}"
    target.write_bytes(KNOWN)
    before = files(tmp_path)
    message = refused(run(*case(given, target)), str(target), "--force")
    assert "stopwise-tmp" not in message
    assert files(tmp_path) == before  # the file, and nothing written beside it
    result = run(*case(given, target), "--force")
    assert result.code in (0, 1, 2, 3), result.err
    assert target.read_bytes() != KNOWN and target.stat().st_size > 0
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left behind


@pytest.mark.parametrize("option", list(DIR_OUTPUTS), ids=" ".join)
def test_a_directory_output_never_replaces_a_users_file(option: tuple[str, str], given: Inputs, tmp_path: Path, run: Run) -> None:
    _, case = DIR_OUTPUTS[option]
    target = tmp_path / "mine"
    target.write_bytes(KNOWN)
    before = files(tmp_path)
    for force in ([], ["--force"]):
        refused(run(*case(given, target), *force), str(target))
        assert files(tmp_path) == before


@pytest.mark.parametrize("option", list(DIR_OUTPUTS), ids=" ".join)
def test_an_earlier_stopwise_directory_is_replaced_only_with_force(option: tuple[str, str], given: Inputs, tmp_path: Path, run: Run) -> None:
    kind, case = DIR_OUTPUTS[option]
    target = tmp_path / "earlier"
    target.mkdir()
    (target / MARKER).write_text(f"{kind} 1\nwritten by stopwise; --force may replace this directory\n")
    (target / "old.txt").write_bytes(KNOWN)
    before = files(tmp_path)
    refused(run(*case(given, target)), str(target), "--force")
    assert files(tmp_path) == before


def test_early_monitor_outcomes_with_force_replace_the_file_with_its_rows(given: Inputs, tmp_path: Path, run: Run) -> None:
    target = tmp_path / "rows.csv"
    target.write_bytes(KNOWN)
    result = run("early", "monitor", given.model, given.runs_jsonl_gz, "--limit", "3", "--summary", "--outcomes", target, "--force", "--json")
    assert result.code == 0, result.err
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert len(lines) == 3 and len(target.read_text().splitlines()) == 1 + 3  # header + one row per replayed run


@pytest.mark.parametrize(
    "case",
    [
        lambda t: ["ingest", ROOT / "tests/ingest/fixtures/tau2/airline_results.json", "-o", t],
        lambda t: ["finality", "check", EXAMPLES / "async-no-reconciliation.toml", "--runs", FINALITY / "runs.csv", "--rows", t],
    ],
    ids=["ingest", "finality check"],
)
def test_an_output_error_names_the_users_file_not_its_temporary(case: Callable[[Path], list[object]], tmp_path: Path, run: Run) -> None:
    target = tmp_path / "rows.txt"  # no table format
    message = refused(run(*case(target)), f"{target}: cannot tell the format from the file name")
    assert "stopwise-tmp" not in message
    assert list(tmp_path.iterdir()) == []
