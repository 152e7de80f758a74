"""Ledger fixtures: a real PostgreSQL server for the session, and a fresh ledger URL per test on each backend.

PostgreSQL: ``STOPWISE_TEST_POSTGRES_URL`` (an existing server; each test gets its own database on it)
or, by default, a private server started here from the PostgreSQL 15 binaries: ``initdb`` in a
temporary folder and ``pg_ctl start`` on a free port of 127.0.0.1 (and a Unix socket in that folder),
stopped and removed afterwards. initdb refuses to run as root, so as root the server runs as the
``postgres`` user. Under ``CI=true`` a missing server is a failure, not a skip.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("STOPWISE_PG_BIN", "/usr/lib/postgresql/15/bin"))
_counter = itertools.count()


def _unavailable(message: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL is required under CI=true: {message}")
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Server:
    """A throw-away PostgreSQL cluster owned by an unprivileged user."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="stopwise-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user: str | None = None
        if os.geteuid() == 0:
            self.user = "postgres"
            try:
                entry = pwd.getpwnam(self.user)
            except KeyError as exc:
                raise RuntimeError("running as root and there is no 'postgres' user to run initdb as") from exc
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.root.chmod(0o700)

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        command = list(args)
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, cwd=self.root)

    def start(self) -> str:
        done = self._run(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip() or done.stdout.strip()}")
        options = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.root} -c max_connections=100"
        done = self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", options, "-w", "-t", "60", "start"
        )
        if done.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace") if (self.root / "server.log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()} {log[-2000:]}")
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "-t", "60", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """URL of a PostgreSQL server's maintenance database (``STOPWISE_TEST_POSTGRES_URL`` or a private one)."""
    existing = os.environ.get("STOPWISE_TEST_POSTGRES_URL")
    if existing:
        yield existing
        return
    if not (PG_BIN / "initdb").exists():
        _unavailable(f"no PostgreSQL binaries in {PG_BIN} and STOPWISE_TEST_POSTGRES_URL is not set")
    try:
        server = _Server()
    except (RuntimeError, OSError) as exc:
        _unavailable(str(exc))
    try:
        url = server.start()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        server.stop()
        _unavailable(str(exc))
    try:
        yield url
    finally:
        server.stop()


def _fresh_database(server_url: str) -> str:
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server_url.replace("postgresql://", "postgresql+psycopg://", 1))
    name = f"stopwise_test_{os.getpid()}_{next(_counter)}"
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A fresh, empty PostgreSQL database for one test."""
    return _fresh_database(postgres_server)


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh ledger URL on each backend: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    return _fresh_database(request.getfixturevalue("postgres_server"))
