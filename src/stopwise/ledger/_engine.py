"""Ledger URLs and database engines: SQLite (WAL, flushed before each acknowledgement) or PostgreSQL through psycopg 3.

An engine is made for one opening mode (:mod:`stopwise.ledger._opening`): only ``create`` may
create a SQLite file or switch its journal to WAL; ``write`` and ``read`` connect to an existing
file only (``read``: read-only).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import StaticPool

from stopwise._extras import require_extra
from stopwise._redact import redact_url
from stopwise.errors import LedgerError
from stopwise.ledger._group_commit import FLUSH_WAL
from stopwise.ledger._opening import LedgerMode, missing_file, sqlite_connector

__all__ = ["file_identity", "folder_lock", "ledger_url", "make_engine", "sqlite_file", "watch_server"]

SQLITE_BUSY_TIMEOUT_MS = 60_000
"""How long a SQLite writer waits for another process's write transaction before giving up."""


def ledger_url(target: str | os.PathLike[str]) -> str:
    """Normalise a ledger location to a SQLAlchemy URL.

    A plain path means a SQLite file; ``postgresql://`` and ``postgres://`` use the psycopg 3 driver.

    Examples
    --------
    >>> from stopwise.ledger import ledger_url
    >>> ledger_url("postgresql://u@localhost:5432/db")
    'postgresql+psycopg://u@localhost:5432/db'
    >>> ledger_url("sqlite:///ledger.db")
    'sqlite:///ledger.db'
    >>> ledger_url("/data/run?1%.db")  # a plain path is the file of that name: '?' and '%' escaped in the URL
    'sqlite:////data/run%3F1%25.db'
    """
    text = os.fspath(target).strip()
    if not text:
        raise LedgerError("ledger URL is empty; give a path (SQLite) or a postgresql+psycopg:// URL")
    if "://" not in text:  # SQLAlchemy reads '?' as the start of a query and decodes '%XX' in the database path
        path = str(Path(text).expanduser().resolve())
        return "sqlite:///" + path.replace("%", "%25").replace("?", "%3F")
    _check_port(text)
    scheme, rest = text.split("://", 1)
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        return "postgresql+psycopg://" + rest
    if scheme in ("sqlite", "sqlite+pysqlite"):
        return "sqlite://" + rest
    raise LedgerError(
        f"ledger URL {redact_url(text)!r}: unsupported scheme {scheme!r}; use a path or sqlite:///path for SQLite, "
        "or postgresql+psycopg://user@host:port/database for PostgreSQL"
    )


def _check_port(text: str) -> None:
    """Refuse a URL whose port is not a number from 0 to 65535, naming the port (password hidden)."""
    parts = urlsplit(text)
    try:
        parts.port  # noqa: B018 - parsing it is the check
    except ValueError:
        host = parts.netloc.rpartition("@")[2]
        raise LedgerError(
            f"ledger URL {redact_url(text)!r}: the port in {host!r} must be a number from 0 to 65535"
        ) from None


def _sqlite_engine(url: str, mode: LedgerMode) -> Engine:
    database = make_url(url).database
    memory = database in (None, "", ":memory:")
    existing = sqlite_file(url)  # None: in memory, or a file: URI the user spelt out
    if existing is not None and mode != "create" and not existing.is_file():
        raise missing_file(redact_url(url), existing)
    if not memory:
        parent = Path(str(database)).parent
        if not parent.is_dir():
            raise LedgerError(f"ledger {redact_url(url)}: folder {parent} does not exist; create it first")
    kwargs: dict[str, Any] = {"poolclass": StaticPool} if memory else {}
    connect_args: dict[str, Any] = {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
    if memory:  # the one in-memory connection may be used from worker threads (the Inspect manager's calls)
        connect_args["check_same_thread"] = False
    if existing is not None and mode != "create":  # never creates the file (read: never writes it)
        kwargs["creator"] = sqlite_connector(existing, mode, **connect_args)
    engine = create_engine(url, connect_args=connect_args, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's own transaction handling is off).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        # an existing ledger keeps its journal mode (WAL since it was created)
        journal = cursor.execute("PRAGMA journal_mode = WAL" if not memory and mode == "create" else "PRAGMA journal_mode")
        # A WAL file named by its path commits without a flush, and the ledger flushes the WAL itself before it
        # acknowledges (group commit: stopwise.ledger._group_commit); anything else flushes at each commit.
        flush_wal = existing is not None and str(journal.fetchone()[0]).lower() == "wal"
        cursor.execute(f"PRAGMA synchronous = {'NORMAL' if flush_wal else 'FULL'}")
        record.info[FLUSH_WAL] = flush_wal
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # Writers take the write lock up front (no deadlock on a read-to-write upgrade);
        # readers get a consistent snapshot with a deferred transaction.
        mode = "IMMEDIATE" if connection.get_execution_options().get("stopwise_write", False) else "DEFERRED"
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive ``flock`` of the folder a SQLite ledger is in (its creation, its head file), across processes.

    Not of the database file: closing a descriptor of it would drop SQLite's own POSIX locks in this process.
    A folder this process cannot open for reading, or a file system without ``flock``, goes unlocked.
    """
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        fd = None
    try:
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite ledger URL (None for PostgreSQL and in-memory SQLite)."""
    if not url.startswith("sqlite"):
        return None
    database = make_url(url).database
    if database in (None, "", ":memory:") or str(database).startswith("file:"):
        return None
    return Path(os.path.abspath(str(database)))


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path`` now, None when there is none: a removed or replaced file changes it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


_SERVER_IDENTITY = (
    "SELECT pg_postmaster_start_time()::text, (SELECT oid FROM pg_database WHERE datname = current_database())::text"
)


def watch_server(engine: Engine, on_change: Callable[[str], None]) -> None:
    """Call ``on_change(why)`` when a new PostgreSQL connection reaches another server run or database.

    The pool reconnects a connection it finds lost (pre-ping). A backend terminated on the same
    server loses nothing the ledger acknowledged (every write committed before it returned), but a
    server that restarted (crash recovery, a failover to a replica) or a database dropped and created
    again may lack what was acknowledged. The first connection fixes the server's identity (its
    postmaster start time and the database's oid); every new connection compares its own with it.
    """
    first: list[tuple[str, str]] = []

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(_SERVER_IDENTITY)
            started, oid = cursor.fetchone()
        finally:
            cursor.close()
        dbapi_connection.commit()  # end the implicit transaction of the query
        if not first:
            first.append((str(started), str(oid)))
        elif first[0] != (str(started), str(oid)):
            was_started, was_oid = first[0]
            why = (
                f"the server restarted (started {was_started}, now {started})"
                if was_started != str(started)
                else f"the database was dropped and created again (oid {was_oid}, now {oid})"
            )
            on_change(why)


def make_engine(url: str, *, mode: LedgerMode = "create") -> Engine:
    """A SQLAlchemy engine for a normalised ledger URL (see :func:`ledger_url`) opened in ``mode``.

    ``write`` and ``read``: a SQLite file that does not exist is a :class:`~stopwise.errors.LedgerError`
    (nothing is created); ``read`` connects read-only (SQLite ``mode=ro``, PostgreSQL read-only transactions).
    """
    if not url.startswith("sqlite"):
        require_extra("postgres", "a PostgreSQL ledger")
    try:
        if url.startswith("sqlite"):
            return _sqlite_engine(url, mode)
        options: dict[str, Any] = {"postgresql_readonly": True} if mode == "read" else {}
        return create_engine(url, pool_pre_ping=True, execution_options=options)
    except (ArgumentError, ModuleNotFoundError, ImportError) as exc:
        hint = " (install the postgres extra: pip install 'stopwise[postgres]')" if "psycopg" in str(exc) else ""
        raise LedgerError(redact_url(f"ledger {url}: cannot create a database engine: {exc}{hint}")) from exc
