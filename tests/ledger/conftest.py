"""Ledger fixtures: a real PostgreSQL server for the session, and a fresh ledger URL per test on each backend.

PostgreSQL: ``STOPWISE_TEST_POSTGRES_URL`` (an existing server; each test gets its own database on it)
or, by default, a private server started by :func:`tests.support.pgtemp.temporary_postgres` from
the PostgreSQL 15 binaries: ``initdb`` in a temporary folder and ``pg_ctl start`` on a free port of
127.0.0.1, stopped and removed after the session (as root, the server runs as the ``postgres`` user).
Under ``CI=true`` a missing server is a failure, not a skip.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import private_postgres
from tests.support.ledger_rows import universe
from tests.support.pgtemp import create_database

from stopwise.ledger import open_ledger
from stopwise.records import Policy

_counter = itertools.count()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """URL of a PostgreSQL server's maintenance database (``STOPWISE_TEST_POSTGRES_URL`` or a private one)."""
    existing = os.environ.get("STOPWISE_TEST_POSTGRES_URL")
    if existing:
        yield existing
        return
    with private_postgres() as url:
        yield url


def _fresh_database(server_url: str) -> str:
    return create_database(server_url, f"stopwise_test_{os.getpid()}_{next(_counter)}")


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


@pytest.fixture
def ledger(ledger_url: str) -> Iterator[Any]:
    """An opened ledger on each backend with evaluation ``eval`` registered (the 40 tasks of ``ledger_rows``, A vs B)."""
    with open_ledger(ledger_url) as opened:
        opened.register("eval", policy=Policy(), universe=universe(), tested="A", baseline="B")
        yield opened
