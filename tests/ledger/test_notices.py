"""The live workers' notices and progress, and a PostgreSQL ledger that fails closed when its server changes (issue 20)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url
from tests.conftest import private_postgres
from tests.support.pgtemp import create_database, restart_server

from stopwise.errors import InputError, LedgerError
from stopwise.ledger import open_ledger
from stopwise.records import Policy, TaskUniverse

UNIVERSE = TaskUniverse([f"t{i}" for i in range(6)])


def test_notices_are_read_back_in_order_and_after_an_id(ledger_url: str) -> None:
    with open_ledger(ledger_url) as ledger:
        # before registration: a worker may fail before it registers
        first = ledger.notify("ev", system="B", state="failed", message="sample ids differ: t9")
        ledger.register("ev", policy=Policy(), universe=UNIVERSE, tested="A", baseline="B")
        ledger.notify("ev", system="A", state="started")
        again = ledger.notify("ev", system="B", state="started")
        ledger.notify("other", system="B", state="finished")
        seen = [(n.system, n.state, n.message) for n in ledger.notices("ev")]
        assert seen == [("B", "failed", "sample ids differ: t9"), ("A", "started", ""), ("B", "started", "")]
        assert [n.id for n in ledger.notices("ev", after=first.id)] == [first.id + 1, again.id]
    with open_ledger(ledger_url) as other:  # another process reads them
        assert [n.state for n in other.notices("ev")] == ["failed", "started", "started"]
        assert other.notices("ev", after=again.id) == []


def test_a_bad_notice_is_refused(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.db") as ledger:
        with pytest.raises(InputError, match="one of started, failed, finished; got 'broken'"):
            ledger.notify("ev", system="A", state="broken")  # type: ignore[arg-type]
        with pytest.raises(InputError, match="system must be a non-empty name"):
            ledger.notify("ev", system=" ", state="failed")
        assert ledger.notices("ev") == []


def test_progress_counts_stored_events_per_system(ledger_url: str) -> None:
    with open_ledger(ledger_url) as ledger:
        ledger.register("ev", policy=Policy(), universe=UNIVERSE, tested="A", baseline="B")
        assert ledger.progress("ev") == {}
        ledger.append("ev", [{"system": "A", "task": f"t{i}", "outcome": 1} for i in range(4)])
        ledger.append("ev", [{"system": "B", "task": "t0", "outcome": 0}, {"system": "A", "task": "t0", "outcome": 1}])
        ledger.append("ev", [{"system": "B", "task": "t1", "outcome": None, "status": "pending"}])
        assert ledger.progress("ev") == {"A": 4, "B": 2}  # a duplicate is not counted twice; pending rows are


def _conninfo(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def test_a_terminated_backend_is_reconnected_but_a_restarted_server_fails_closed() -> None:
    """pg_terminate_backend loses nothing acknowledged (same server): the pool reconnects. A restarted server
    (crash recovery, a failover) may lack acknowledged events: every later call fails, naming why."""
    with private_postgres() as server_url:
        url = create_database(server_url, "loss")
        with open_ledger(url) as ledger:
            ledger.register("ev", policy=Policy(), universe=UNIVERSE, tested="A", baseline="B")
            ledger.append("ev", [{"system": "A", "task": "t0", "outcome": 1}])
            with psycopg.connect(_conninfo(url), autocommit=True) as admin:
                killed = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = 'loss' AND pid <> pg_backend_pid()"
                ).fetchall()
            assert killed and all(ok for (ok,) in killed)
            assert ledger.append("ev", [{"system": "B", "task": "t0", "outcome": 0}]).accepted == 1
            restart_server(server_url)
            with pytest.raises(LedgerError, match=r"connection to the database was lost and the server restarted"):
                ledger.append("ev", [{"system": "B", "task": "t1", "outcome": 0}])
            with pytest.raises(LedgerError, match="fail closed"):
                ledger.progress("ev")  # reads fail too
        with open_ledger(url) as reopened:  # opened again (after checking), it works on the restarted server
            assert reopened.progress("ev") == {"A": 1, "B": 1} and reopened.verify("ev").ok


def test_a_ledger_made_before_notices_opens_and_only_a_create_open_adds_the_table(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "older.db"
    with open_ledger(path) as ledger:
        ledger.register("ev", policy=Policy(), universe=UNIVERSE, tested="A", baseline="B")
        ledger.append("ev", [{"system": "A", "task": "t0", "outcome": 1}])
    with sqlite3.connect(path) as conn:  # a version-2 ledger written before the notices table existed
        conn.execute("DROP TABLE stopwise_notices")
    tables = lambda: {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}  # noqa: E731
    before = tables()
    for mode in ("read", "write"):
        with open_ledger(path, mode=mode) as ledger:
            assert ledger.notices("ev") == [] and len(ledger.outcomes("ev")) == 1
        assert tables() == before  # nothing added by a read or write open
    with open_ledger(path) as ledger:  # create (ledger init, the live managers) adds the later table
        ledger.notify("ev", system="A", state="started")
        assert [n.state for n in ledger.notices("ev")] == ["started"]
    assert tables() == before | {"stopwise_notices"}
