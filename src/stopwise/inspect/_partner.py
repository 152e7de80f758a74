"""What a paired manager knows of the other system's worker, read from the ledger: its state and progress.

The two systems of a comparison may run in two processes (a worker per system, ``inspect eval
tasks.py@a tasks.py@b`` which builds a manager per task, a retry) that share nothing but the ledger.
So each worker records its state there (:meth:`stopwise.ledger.Ledger.notify`: ``started``, ``failed``
with the reason, ``finished``) and reads the other's before scheduling a sample:

* a partner whose latest notice is ``failed`` (bad sample ids, a ledger error) stops this worker's
  scheduling too, with the partner's reason;
* with ``pace``, a worker that has stored ``pace`` outcome events more than a running partner waits
  (:meth:`stopwise.ledger.Ledger.progress`), unless the partner stored nothing for a while (a task that
  Inspect failed sends no notice).

"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

from stopwise.ledger import Ledger, WorkerNotice
from stopwise.records import WorkerState

__all__ = ["PartnerWatch"]

_log = logging.getLogger("stopwise.inspect")

EARLIER_ATTEMPT_S = 60.0
"""A partner's failure stored more than this many seconds before this worker's ``started`` notice is taken for
an earlier attempt's (the partner run again announces itself); one stored since then, or shortly before (two
workers started together, the other one first), is this run's."""

PACE_LEDGER_POLL_S = 0.05
"""How often a paced worker reads the ledger's progress while it waits for a partner in another process."""


class PartnerWatch:
    """The workers' notices and progress of one evaluation, read from the ledger (not thread-safe: the caller locks).

    Parameters
    ----------
    ledger : Ledger
        The opened ledger.
    evaluation : str
        The evaluation id.

    Examples
    --------
    >>> from stopwise.ledger import open_ledger
    >>> from stopwise.inspect._partner import PartnerWatch
    >>> ledger = open_ledger("sqlite:///:memory:")
    >>> watch = PartnerWatch(ledger, "demo")
    >>> watch.announce("B", "failed", "sample ids differ")
    >>> watch.refresh()
    >>> watch.failure("B"), watch.failure("A")
    ('sample ids differ', None)
    """

    def __init__(self, ledger: Ledger, evaluation: str) -> None:
        self.ledger = ledger
        self.evaluation = evaluation
        self._after = 0
        self._states: dict[str, WorkerNotice] = {}  # system -> its latest notice
        self._started: dict[str, WorkerNotice] = {}  # system of this process -> its `started` notice
        self._progress: dict[str, int] = {}
        self._progress_at = float("-inf")
        self._moved_at: dict[str, float] = {}  # system -> monotonic time its progress last changed

    def announce(self, system: str, state: WorkerState, message: str = "") -> None:
        """Record this worker's state in the ledger.

        A failure to record it is logged, not raised (best effort: the ledger itself may be what failed).
        """
        try:
            notice = self.ledger.notify(self.evaluation, system=system, state=state, message=message)
        except Exception as exc:
            _log.warning("stopwise: could not record %r %s in the ledger: %s", system, state, exc)
            return
        if state == "started":
            self._started[system] = notice

    def refresh(self) -> None:
        """Read the notices stored since the last read (by any process)."""
        for notice in self.ledger.notices(self.evaluation, after=self._after):
            self._after = max(self._after, int(notice.id))
            self._states[str(notice.system)] = notice

    def state(self, system: str) -> str | None:
        """The latest state of ``system`` read from the ledger (None before any notice)."""
        return str(self._states[system].state) if system in self._states else None

    def failure(self, system: str, *, since: str | None = None) -> str | None:
        """The reason ``system``'s worker gave, if its latest notice is ``failed`` and belongs to this run.

        ``since``: the system of this process whose ``started`` notice dates the run; a failure
        stored before it, and more than :data:`EARLIER_ATTEMPT_S` seconds earlier, is an earlier
        attempt's (the partner run again announces ``started``, which supersedes it).
        """
        notice = self._states.get(system)
        if notice is None or notice.state != "failed":
            return None
        mine = self._started.get(since) if since is not None else None
        if mine is not None and notice.id < mine.id:
            gap = datetime.fromisoformat(mine.created_at) - datetime.fromisoformat(notice.created_at)
            if gap > timedelta(seconds=EARLIER_ATTEMPT_S):
                return None
        return str(notice.message) or "no reason given"

    def stored(self, system: str, count: int) -> None:
        """Count ``count`` events this process just stored for ``system`` (its own progress is never stale)."""
        if count and self._progress_at > float("-inf"):
            self._progress[system] = self._progress.get(system, 0) + int(count)

    def ahead(self, system: str, partner: str, pace: int, stall: float) -> bool:
        """Whether ``system`` has stored ``pace`` events more than ``partner``, a worker running elsewhere.

        The progress is read from the ledger at most every :data:`PACE_LEDGER_POLL_S` seconds (with
        the notices); in between, the events this process stores are added (:meth:`stored`), so
        that only the partner's count can be that old (which only makes the wait longer). Never holds ``system`` when the partner is not running (no notice yet, finished
        or failed) or stored nothing for ``stall`` seconds.
        """
        now = time.monotonic()
        if now - self._progress_at >= PACE_LEDGER_POLL_S:
            self.refresh()
            progress = dict(self.ledger.progress(self.evaluation))
            for name, count in progress.items():
                if count != self._progress.get(name):
                    self._moved_at[name] = now
            self._progress, self._progress_at = progress, now
        if self.state(partner) != "started":
            return False
        if self.stalled(partner, stall):
            return False
        return self._progress.get(system, 0) - self._progress.get(partner, 0) >= pace

    def stalled(self, system: str, seconds: float) -> bool:
        """Whether ``system`` has stored no event for ``seconds`` since this process first read its progress."""
        now = time.monotonic()
        return now - self._moved_at.setdefault(system, now) > seconds
