"""How a ledger is opened: created on purpose, or an existing stopwise ledger opened for writing or reading only.

=======  ==========================================================================================
mode     what opening the ledger does
=======  ==========================================================================================
create   the database (a SQLite file) and the stopwise tables are created when there are none, and
         the schema version is stored; a SQLite file is switched to the WAL journal
         (``stopwise ledger init``, the Inspect manager, :func:`stopwise.ledger.open_ledger`'s default)
write    an existing stopwise ledger is opened to append events and decisions: nothing is created
         (no file, no table, no version row) and no journal mode is changed
read     an existing stopwise ledger is opened read-only: a SQLite ``file:...?mode=ro`` connection,
         read-only PostgreSQL transactions; any write is refused
=======  ==========================================================================================

In every mode a database holding part of the stopwise tables (a damaged ledger, e.g. one whose
version table was dropped) is refused before anything is written, and so is one of another schema
version; in the ``write`` and ``read`` modes, so is a missing SQLite file and a database without the
stopwise tables (a user's own database): the message names the ledger and what is missing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args

from sqlalchemy import Connection, func, inspect, select

from stopwise.errors import LedgerError
from stopwise.ledger import _schema as S

__all__ = ["LEDGER_MODES", "LedgerMode", "check_mode", "missing_file", "prepare_schema", "sqlite_connector"]

LedgerMode = Literal["create", "write", "read"]
LEDGER_MODES: tuple[LedgerMode, ...] = get_args(LedgerMode)
"""How a ledger may be opened (see the table above)."""

_CREATE_LOCK = 0x5707_5153
"""PostgreSQL advisory lock key: one creator of the tables at a time when many workers open a fresh database."""


def check_mode(mode: object) -> LedgerMode:
    """``mode`` when it is one of :data:`LEDGER_MODES`, else a :class:`~stopwise.errors.LedgerError`.

    Examples
    --------
    >>> check_mode("read")
    'read'
    >>> check_mode("append")
    Traceback (most recent call last):
    ...
    stopwise.errors.LedgerError: `mode` must be one of create, write, read; got 'append'
    """
    for known in LEDGER_MODES:
        if mode == known:
            return known
    raise LedgerError(f"`mode` must be one of {', '.join(LEDGER_MODES)}; got {mode!r}")


def missing_file(display: str, path: Path) -> LedgerError:
    """The error for a ``write`` or ``read`` open of a SQLite ledger whose file does not exist (nothing is created)."""
    return LedgerError(
        f"ledger {display}: no such file {path}; nothing was created. A ledger is created by "
        "`stopwise ledger init` (in Python: open_ledger(url, mode='create')); check the path"
    )


def sqlite_connector(path: Path, mode: LedgerMode, **connect_args: Any) -> Callable[[], sqlite3.Connection]:
    """A connection factory for an existing SQLite file: ``mode=ro`` (``read``) or ``mode=rw`` (``write``), never creating it.

    The file is named by a ``file:`` URI (:meth:`pathlib.Path.as_uri`, so ``?``, ``#`` and ``%`` in
    the path are escaped); ``connect_args`` go to :func:`sqlite3.connect`.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> connect = sqlite_connector(pathlib.Path(tempfile.mkdtemp()) / "none.db", "read")
    >>> connect()
    Traceback (most recent call last):
    ...
    sqlite3.OperationalError: unable to open database file
    """
    uri = f"{Path(path).absolute().as_uri()}?mode={'ro' if mode == 'read' else 'rw'}"

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(uri, uri=True, **connect_args)

    return connect


def _versions_error(display: str, versions: list[int]) -> LedgerError:
    found = ", ".join(map(str, versions)) or "none"
    why = (
        " (written before outcome flags were stored: its outcome events have no flags column, so a "
        "policy's [flags] exclusions could not be applied to them)"
        if versions == [1]
        else ""
    )
    return LedgerError(
        f"ledger {display} has schema version {found}{why}; this stopwise reads version "
        f"{S.SCHEMA_VERSION} and does not migrate a ledger silently. Use the stopwise version that wrote "
        "it, or carry its events over: export them with that version (stopwise ledger export URL EVAL "
        "-o rows.csv) and register and append them into a new ledger (stopwise ledger init, append)."
    )


LATER_TABLES: tuple[str, ...] = ("stopwise_notices",)
"""Tables added to schema version 2 after its first release: a version-2 ledger without them is complete. A
``create`` open adds them; ``write`` and ``read`` opens leave the database as it is (the worker notices of such a
ledger read as none, :func:`stopwise.ledger._notices.read_notices`)."""


def prepare_schema(conn: Connection, display: str, *, mode: LedgerMode, postgres: bool, now: str) -> None:
    """Check (``create``: make when there is none) the stopwise schema on ``conn``, in the caller's transaction.

    Nothing is written unless ``mode`` is ``create`` and the database holds none of the stopwise
    tables: then every table and the version row are created. A database with part of the tables,
    without the stopwise tables (``write``, ``read``) or of another schema version is refused with a
    :class:`~stopwise.errors.LedgerError` that names ``display`` and what is missing.
    """
    if postgres and mode == "create":
        conn.execute(select(func.pg_advisory_xact_lock(_CREATE_LOCK)))
    names = [name for name in S.metadata.tables if name not in LATER_TABLES]
    present = set(inspect(conn).get_table_names())
    missing = [name for name in names if name not in present]
    later = [S.metadata.tables[name] for name in LATER_TABLES if name not in present]
    if missing and len(missing) < len(names):
        raise LedgerError(
            f"ledger {display}: is not a complete stopwise ledger: table(s) {', '.join(missing)} missing "
            f"(found {', '.join(n for n in names if n in present)}); nothing was changed. stopwise does not repair "
            "a damaged ledger: restore it from a copy, or register the evaluation in a new ledger"
        )
    if missing and mode != "create":
        others = sorted(present)
        held = f" (it holds {len(others)} other table(s): {', '.join(others[:5])}{', …' if len(others) > 5 else ''})" if others else ""
        raise LedgerError(
            f"ledger {display}: is not a stopwise ledger: it has none of the stopwise tables (missing: {', '.join(missing)})"
            f"{held}; nothing was changed. A ledger is created by `stopwise ledger init`; check the path"
        )
    if missing:
        S.metadata.create_all(conn, checkfirst=True)
        conn.execute(S.schema_version.insert().values(version=S.SCHEMA_VERSION, created_at=now))
        return
    versions = [int(v) for v in conn.execute(select(S.schema_version.c.version)).scalars().all()]
    if versions != [S.SCHEMA_VERSION]:
        raise _versions_error(display, versions)
    if later and mode == "create":  # a ledger made before these tables: create opens may add them (init, live managers)
        S.metadata.create_all(conn, tables=later, checkfirst=True)
