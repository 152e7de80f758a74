"""Ledger opening modes: only ``ledger init`` creates or alters a database; every other command opens an
existing stopwise ledger (read-only where it only reads) and refuses anything else, changing nothing.

Each case asserts exit code 4, the path and what is missing named in the message, and the files
unchanged: their bytes and, for SQLite, ``PRAGMA journal_mode`` and the table list.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import private_postgres
from tests.support.pgtemp import create_database

from stopwise.errors import LedgerError
from stopwise.ledger import open_ledger
from stopwise.records import Policy, TaskUniverse

from .conftest import Run, files, refused

ROWS = "system,task,outcome\nA,t1,1\nB,t1,0\nA,t2,1\nB,t2,0\n"


def _commands(db: Path | str, folder: Path) -> list[list[str]]:
    """Every command but ``ledger init`` that takes a ledger, with the arguments it needs."""
    return [
        ["ledger", "verify", str(db), "ev"],
        ["ledger", "conflicts", str(db), "ev"],
        ["ledger", "export", str(db), "ev", "-o", str(folder / "x.csv"), "--decisions", str(folder / "d.jsonl")],
        ["ledger", "decide", str(db), "ev"],
        ["ledger", "decide", str(db), "ev", "--no-record"],
        ["ledger", "append", str(db), "ev", str(folder / "rows.csv")],
        ["watch", str(db), "ev", "--once"],
        ["watch", str(db), "ev", "--once", "--no-record"],
        ["report", str(db), "--evaluation", "ev", "-o", str(folder / "r.html")],
    ]


COMMAND_IDS = ["verify", "conflicts", "export", "decide", "decide-no-record", "append", "watch-once", "watch-no-record", "report"]


def _sqlite_state(path: Path) -> tuple[bytes, str, list[str]]:
    """(bytes, journal mode, table names) of a SQLite file, read without changing it."""
    data = path.read_bytes()
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
        tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    finally:
        connection.close()
    return data, mode, tables


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "rows.csv").write_text(ROWS)
    return tmp_path


@pytest.mark.parametrize("args", range(len(COMMAND_IDS)), ids=COMMAND_IDS)
def test_a_missing_ledger_file_is_not_created(folder: Path, run: Run, args: int) -> None:
    before = files(folder)
    typo = folder / "typo.db"
    refused(run(*_commands(typo, folder)[args]), str(typo))
    assert files(folder) == before  # no typo.db, -wal, -shm, export or report


@pytest.mark.parametrize("args", range(len(COMMAND_IDS)), ids=COMMAND_IDS)
def test_a_users_own_sqlite_database_is_not_altered(folder: Path, run: Run, args: int) -> None:
    app = folder / "app.db"
    with sqlite3.connect(app) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO users (name) VALUES ('ada')")
    connection.close()
    state, before = _sqlite_state(app), files(folder)
    assert state[1:] == ("delete", ["users"])
    message = refused(run(*_commands(app, folder)[args]), str(app))
    assert "not a stopwise ledger" in message and "stopwise_schema_version" in message and "users" in message
    assert _sqlite_state(app) == state  # bytes, journal mode "delete" and the one table
    assert files(folder) == before


def _ledger(folder: Path, run: Run) -> Path:
    """A stopwise ledger with 4 events and one recorded decision, every write checkpointed into the file."""
    path = folder / "ledger.db"
    assert run("ledger", "init", path, "ev", "-t", "A", "-b", "B", "--n-tasks", "4").code == 0
    assert run("ledger", "append", path, "ev", folder / "rows.csv").code == 0
    assert run("ledger", "decide", path, "ev").code == 2  # continue
    return path


@pytest.mark.parametrize("args", range(len(COMMAND_IDS)), ids=COMMAND_IDS)
def test_a_ledger_whose_version_table_was_dropped_gets_no_version_row(folder: Path, run: Run, args: int) -> None:
    path = _ledger(folder, run)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE stopwise_schema_version SET version = 1")  # as a version-1 ledger ...
        connection.execute("DROP TABLE stopwise_schema_version")  # ... whose version table was dropped
    connection.close()
    state = _sqlite_state(path)
    assert "stopwise_schema_version" not in state[2]
    message = refused(run(*_commands(path, folder)[args]), str(path))
    assert "not a complete stopwise ledger" in message and "stopwise_schema_version missing" in message
    assert _sqlite_state(path) == state


def test_ledger_init_neither_repairs_a_damaged_ledger(folder: Path, run: Run) -> None:
    path = _ledger(folder, run)
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE stopwise_schema_version")
    connection.close()
    state = _sqlite_state(path)
    refused(run("ledger", "init", path, "ev2", "-t", "A", "-b", "B", "--n-tasks", "4"), str(path), "stopwise_schema_version missing")
    assert _sqlite_state(path) == state


@pytest.mark.parametrize(
    "args",
    [
        ["ledger", "verify"], ["ledger", "conflicts"], ["ledger", "decide", "--no-record"], ["watch", "--once", "--no-record"],
        ["ledger", "export", "-o", "x.csv"], ["report", "--evaluation", "ev", "-o", "r.html"],
    ],
    ids=["verify", "conflicts", "decide-no-record", "watch-no-record", "export", "report"],
)
def test_reading_commands_leave_a_ledger_file_unchanged(folder: Path, run: Run, args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    path = _ledger(folder, run)
    state = _sqlite_state(path)
    assert state[1] == "wal"
    monkeypatch.chdir(folder)
    command = [*args[:2], str(path), "ev", *args[2:]] if args[0] == "ledger" else [args[0], str(path), "ev", *args[1:]]
    if args[0] == "report":
        command = ["report", str(path), *args[1:]]
    result = run(*command)
    assert result.code in (0, 2), result.err
    assert _sqlite_state(path) == state  # opened read-only: the database file is as it was
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # and nothing was written to its journal


def test_ledger_init_still_creates_and_other_commands_then_open_it(folder: Path, run: Run) -> None:
    path = _ledger(folder, run)
    assert run("ledger", "verify", path, "ev").code == 0
    assert _sqlite_state(path)[1:] == ("wal", ["sqlite_sequence", "stopwise_conflicts", "stopwise_decisions", "stopwise_evaluations", "stopwise_notices", "stopwise_outcomes", "stopwise_schema_version"])


def test_the_library_modes(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    for mode in ("read", "write"):
        with pytest.raises(LedgerError, match=r"no such file .*l\.db; nothing was created"):
            open_ledger(path, mode=mode)  # type: ignore[arg-type]
        assert not path.exists()
    with pytest.raises(LedgerError, match=r"`mode` must be one of create, write, read; got 'rw'"):
        open_ledger(path, mode="rw")  # type: ignore[arg-type]
    with open_ledger(path) as ledger:  # the default creates, as before
        ledger.register("ev", policy=Policy(), universe=TaskUniverse(["t1", "t2"]), tested="A", baseline="B")
    with open_ledger(path, mode="read") as ledger:
        assert ledger.evaluations() == ["ev"]
        with pytest.raises(LedgerError, match="is open read-only"):
            ledger.append("ev", [{"system": "A", "task": "t1", "outcome": 1}])
    with open_ledger(path, mode="write") as ledger:
        assert ledger.append("ev", [{"system": "A", "task": "t1", "outcome": 1}]).accepted == 1


@pytest.fixture(scope="module")
def postgres_server() -> Iterator[str]:
    with private_postgres() as url:
        yield url


def _pg_tables(url: str) -> list[str]:
    from sqlalchemy import create_engine, inspect

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return sorted(inspect(connection).get_table_names())
    finally:
        engine.dispose()


def test_postgres_a_database_without_the_schema_gets_no_tables(postgres_server: str, tmp_path: Path, run: Run) -> None:
    from sqlalchemy import create_engine, text

    url = create_database(postgres_server, "stopwise_open_app")
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE users (id integer)"))
    engine.dispose()
    (tmp_path / "rows.csv").write_text(ROWS)
    for args in _commands(url, tmp_path):
        message = refused(run(*args), "stopwise_open_app")
        assert "not a stopwise ledger" in message and "stopwise_schema_version" in message
        assert _pg_tables(url) == ["users"]
    assert list(tmp_path.iterdir()) == [tmp_path / "rows.csv"]
    with open_ledger(url, mode="create"):
        pass
    assert "stopwise_schema_version" in _pg_tables(url)  # the explicit create path still creates


def test_postgres_read_mode_refuses_writes_in_the_database(postgres_server: str) -> None:
    url = create_database(postgres_server, "stopwise_open_read")
    with open_ledger(url) as ledger:
        ledger.register("ev", policy=Policy(), universe=TaskUniverse(["t1"]), tested="A", baseline="B")
    with open_ledger(url, mode="read") as ledger:
        from sqlalchemy import text

        with pytest.raises(Exception, match="read-only transaction"), ledger.store.engine.begin() as connection:
            connection.execute(text("CREATE TABLE sneaky (id integer)"))
    assert "sneaky" not in _pg_tables(url)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_ledger_init_refuses_an_in_memory_database_that_would_store_nothing(url: str, tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    refused(run("ledger", "init", url, "ev", "-t", "A", "-b", "B", "--n-tasks", "4"), url, "in-memory", "nothing would be registered")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", range(len(COMMAND_IDS) + 1), ids=[*COMMAND_IDS, "init"])
def test_a_file_that_is_no_database_is_left_as_it_is(folder: Path, run: Run, args: int) -> None:
    text = folder / "rows.csv"  # a CSV file given where the ledger goes
    commands = [*_commands(text, folder), ["ledger", "init", str(text), "ev", "-t", "A", "-b", "B", "--n-tasks", "4"]]
    before = files(folder)
    result = run(*commands[args])
    refused(result, "rows.csv")
    assert "file is not a database" in result.err or "stopwise report reads decision records" in result.err  # report names what it reads
    assert files(folder) == before


def test_a_plain_path_with_a_question_mark_or_percent_is_that_file(folder: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLAlchemy reads ``?`` in a URL as a query and decodes ``%41``: ``led?ger%41.db`` once made the ledger ``led``."""
    monkeypatch.chdir(folder)
    name = "led?ger%41.db"
    before = files(folder)
    refused(run("ledger", "verify", name, "ev"), "no such file", str(folder / name))
    assert files(folder) == before
    assert run("ledger", "init", name, "ev", "-t", "A", "-b", "B", "--n-tasks", "4").code == 0
    assert (folder / name).is_file() and not (folder / "led").exists() and not (folder / "ledgerA.db").exists()
    assert run("ledger", "append", name, "ev", "rows.csv").code == 0
    result = run("ledger", "verify", name, "ev")
    assert result.code == 0 and "4 outcome events" in result.out
