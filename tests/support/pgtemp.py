"""A throw-away PostgreSQL server for tests and benchmarks (``initdb`` + ``pg_ctl`` in a temporary folder).

The server listens on a free port of 127.0.0.1 and on a Unix socket in its folder, trusts local
connections, and is stopped and removed on exit. ``initdb`` refuses to run as root, so as root the
server runs as the ``postgres`` user (the folder is handed to it).

Examples
--------
::

    with temporary_postgres() as url:   # postgresql+psycopg://postgres@127.0.0.1:PORT/postgres
        ledger = open_ledger(create_database(url, "bench"))
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stopwise.errors import LedgerError

__all__ = ["PG_BIN", "create_database", "restart_server", "temporary_postgres"]

PG_BIN = Path(os.environ.get("STOPWISE_PG_BIN", "/usr/lib/postgresql/15/bin"))
"""Folder of the PostgreSQL server binaries (``STOPWISE_PG_BIN`` overrides)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def temporary_postgres(bin_dir: Path | None = None, *, user: str = "postgres") -> Iterator[str]:
    """Start a private PostgreSQL server; yield the URL of its ``postgres`` database; stop and remove it.

    Raises
    ------
    LedgerError
        The binaries are missing, or initdb / pg_ctl fail (their message is included).
    """
    binaries = bin_dir or PG_BIN
    if not (binaries / "initdb").exists():
        raise LedgerError(f"no PostgreSQL server binaries in {binaries} (set STOPWISE_PG_BIN)")
    root = Path(tempfile.mkdtemp(prefix="stopwise-pg-"))
    data = root / "data"
    prefix: list[str] = []
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(user)
        except KeyError as exc:
            shutil.rmtree(root, ignore_errors=True)
            raise LedgerError(f"running as root and there is no {user!r} user to run initdb as") from exc
        os.chown(root, entry.pw_uid, entry.pw_gid)
        prefix = ["runuser", "-u", user, "--"]
    root.chmod(0o700)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=180, check=False, cwd=root)

    try:
        done = run(str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
        if done.returncode != 0:
            raise LedgerError(f"initdb failed: {(done.stderr or done.stdout).strip()}")
        port = _free_port()
        options = f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} -c max_connections=100"
        done = run(str(binaries / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log"), "-o", options, "-w", "-t", "60", "start")
        if done.returncode != 0:
            log = (root / "server.log").read_text(errors="replace")[-2000:] if (root / "server.log").exists() else ""
            raise LedgerError(f"pg_ctl start failed: {done.stderr.strip()} {log}")
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        if (data / "postmaster.pid").exists():
            run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "-t", "60", "stop")
        _remove(root)


def _remove(root: Path) -> None:
    """Remove the server's folder; retried, since exiting server processes may still write files into it."""
    for _ in range(20):
        shutil.rmtree(root, ignore_errors=True)
        if not root.exists():
            return
        time.sleep(0.25)


def create_database(server_url: str, name: str) -> str:
    """Create (or re-create) database ``name`` on the server and return its URL."""
    import psycopg
    from sqlalchemy.engine import make_url

    if not name.replace("_", "").isalnum():
        raise LedgerError(f"database name must be letters, digits and underscores; got {name!r}")
    url = make_url(server_url.replace("postgresql://", "postgresql+psycopg://", 1))
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


def restart_server(server_url: str, bin_dir: Path | None = None, *, user: str = "postgres") -> None:
    """Restart the server behind ``server_url`` (``pg_ctl restart``, its options kept): every connection is lost.

    The data folder is asked of the server (``SHOW data_directory``, superuser); as root, ``pg_ctl`` runs as
    ``user`` as the server does.
    """
    import psycopg
    from sqlalchemy.engine import make_url

    conninfo = make_url(server_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
    assert row is not None
    prefix = ["runuser", "-u", user, "--"] if os.geteuid() == 0 else []
    pg_ctl = str((bin_dir or PG_BIN) / "pg_ctl")
    data = Path(str(row[0]))  # the server logs to its folder (not to our pipes, which it would hold open)
    done = subprocess.run([*prefix, pg_ctl, "-D", str(data), "-l", str(data.parent / "server.log"), "-m", "immediate", "-w",
                           "-t", "60", "restart"],
                          capture_output=True, text=True, timeout=120, check=False, cwd="/")
    if done.returncode != 0:
        raise LedgerError(f"pg_ctl restart failed: {(done.stderr or done.stdout).strip()}")
