"""Group commit for a SQLite ledger: concurrent appenders share the flush that makes their commits durable.

A SQLite ledger runs in WAL mode. Under ``synchronous=FULL`` (stopwise 0.1) each commit flushes the
WAL while it holds the database's write lock, so concurrent appenders (threads of one process, or
processes) commit one after another, each waiting for its own flush, and a writer that finds the
lock taken sleeps in SQLite's busy handler (1, 2, 5, 10 ms, ...): four appenders stored about 100
events per second.

Here a write transaction commits under ``synchronous=NORMAL`` (the commit hands the WAL frames to the
operating system, which keeps them when the process is killed), and the ledger flushes the WAL file
(``fdatasync``) itself after the commit, outside the write lock and before the method returns. A
flush makes durable every commit written to the WAL before it started, whoever wrote it:

* the threads of one process share flushes: a thread whose commit is covered by a flush under way
  waits for it, and the next flush serves every commit made meanwhile (one flush serves the
  appends waiting at that moment);
* processes share them through the file: a flush by one covers the others' commits written before
  it, so that their own flush finds little or nothing left to write.

What a returned write promises is unchanged: it returns only after a flush that started after its
commit, so the commit is on disk (its WAL frames flushed; or, if a checkpoint copied them into the
database file meanwhile, SQLite flushed the WAL before that checkpoint and the database file after
it, as it does under ``synchronous=NORMAL``); a process killed at any point loses nothing it
acknowledged, and a flush that fails acknowledges nothing.

The writers of one file also take turns in order: a thread lock in the process, and an advisory
``flock`` of the WAL file between processes (the kernel hands the lock on as soon as it is
released; waiting is a poll of at most :data:`POLL_MAX_S`), instead of in the busy handler's
sleeps. The turn only schedules writers: SQLite's own lock guards the database, and a writer that
cannot get its turn within the busy timeout goes on without it (SQLite then waits or fails as before).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["FLUSH_WAL", "GroupCommit", "flush_file"]

FLUSH_WAL = "stopwise_flush_wal"
"""Key of a SQLite connection's ``info``: True when it commits under ``synchronous=NORMAL`` (a WAL database
in a file), so that the ledger flushes the WAL itself before acknowledging a write."""

POLL_FIRST_S = 50e-6
"""First pause of a writer waiting for another process's turn (doubled up to :data:`POLL_MAX_S`)."""
POLL_MAX_S = 1e-3
"""Longest pause between two tries of a writer waiting for another process's turn."""


def flush_file(path: Path) -> None:
    """Flush ``path``'s data to disk (``fdatasync``): every write to it before the call is durable after it."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


class GroupCommit:
    """The turns and the shared WAL flushes of the writers of one SQLite database file in this process.

    Parameters
    ----------
    database : pathlib.Path
        The database file (its WAL is the file beside it with ``-wal`` appended).
    timeout_s : float
        How long a writer waits for its turn before it goes on without it.

    Examples
    --------
    >>> import pathlib, sqlite3, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.db"
    >>> db = sqlite3.connect(path, isolation_level=None)
    >>> db.execute("PRAGMA journal_mode = WAL").fetchone()
    ('wal',)
    >>> _ = db.execute("PRAGMA synchronous = NORMAL")
    >>> commits = GroupCommit(path, timeout_s=5.0)
    >>> with commits.turn():
    ...     _ = db.execute("CREATE TABLE t (x)")
    ...     ticket = commits.committed()
    >>> commits.durable(ticket)  # the WAL flushed: the commit is on disk
    >>> commits.flushes
    1
    """

    def __init__(self, database: Path, *, timeout_s: float) -> None:
        self.wal = Path(f"{database}-wal")
        self.timeout_s = float(timeout_s)
        self.flushes = 0
        """WAL flushes made by this process's writers (each served every commit counted before it)."""
        self.flush: Callable[[Path], None] = flush_file
        """How the WAL file is flushed (:func:`flush_file`); a test may wrap it to hold a flush and line commits up."""
        self._turn = threading.Lock()
        self._lock_fd: int | None = None  # the WAL file, open for the advisory lock between processes
        self._state = threading.Condition()
        self._committed = 0  # commits counted so far (tickets)
        self._durable = 0  # every ticket up to this one is on disk
        self._flushing = False

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Hold the writer's turn among the writers of the file: the process's lock, then the file's advisory lock."""
        mine = self._turn.acquire(timeout=self.timeout_s)
        locked: int | None = None
        try:
            locked = self._lock_file()
            yield
        finally:
            if locked is not None:
                fcntl.flock(locked, fcntl.LOCK_UN)
            if mine:
                self._turn.release()

    def _lock_file(self) -> int | None:
        """Take the advisory lock of the WAL file (None when there is no WAL yet or the wait timed out)."""
        fd = self._wal_fd()
        if fd is None:
            return None
        deadline = time.monotonic() + self.timeout_s
        pause = POLL_FIRST_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return None
                time.sleep(pause)
                pause = min(2 * pause, POLL_MAX_S)

    def _wal_fd(self) -> int | None:
        """An open descriptor of the WAL file (opened again once the file it named was removed)."""
        if self._lock_fd is not None and os.fstat(self._lock_fd).st_nlink == 0:
            os.close(self._lock_fd)
            self._lock_fd = None
        if self._lock_fd is None:
            try:
                self._lock_fd = os.open(self.wal, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                return None
        return self._lock_fd

    @property
    def commits(self) -> int:
        """Commits counted so far by this process's writers."""
        with self._state:
            return self._committed

    def committed(self) -> int:
        """Count a commit this process has just made; its ticket for :meth:`durable`."""
        with self._state:
            self._committed += 1
            return self._committed

    def durable(self, ticket: int) -> None:
        """Return once the commit of ``ticket`` is on disk: after a WAL flush that started after it.

        A flush under way that started later covers it; otherwise this thread flushes, for every
        commit counted until then. Raises :class:`OSError` when the flush fails (nothing is durable
        then, as far as this process can tell).
        """
        with self._state:
            while self._durable < ticket:
                if not self._flushing:
                    break
                self._state.wait()
            else:
                return
            self._flushing = True
            target = self._committed
        try:
            self.flush(self.wal)
        except BaseException:
            with self._state:
                self._flushing = False
                self._state.notify_all()
            raise
        with self._state:
            self._durable = max(self._durable, target)
            self.flushes += 1
            self._flushing = False
            self._state.notify_all()

    def close(self) -> None:
        """Close the WAL descriptor held for the advisory lock."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
