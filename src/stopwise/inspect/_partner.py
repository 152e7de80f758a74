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

A ledger object without ``notify``/``notices``/``progress`` (a test double) is read through this
process only: :class:`PartnerWatch` then knows nothing and never holds a worker.
"""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["PartnerWatch"]

_log = logging.getLogger("stopwise.inspect")

PACE_LEDGER_POLL_S = 0.05
"""How often a paced worker reads the ledger's progress while it waits for a partner in another process."""


class PartnerWatch:
    """The workers' notices and progress of one evaluation, read from the ledger (not thread-safe: the caller locks).

    Parameters
    ----------
    ledger : object
        The opened ledger (its ``notify``, ``notices`` and ``progress`` are used when it has them).
    evaluation : str
        The evaluation id.

    Examples
    --------
    >>> from stopwise.ledger import open_ledger
    >>> from stopwise.inspect._partner import PartnerWatch
    >>> ledger = open_ledger("sqlite:///:memory:")
    >>> watch = PartnerWatch(ledger, "demo")
    >>> watch.announce("B", "failed", "sample ids differ")
    1
    >>> watch.refresh()
    >>> watch.failure("B"), watch.failure("A")
    ('sample ids differ', None)
    """

    def __init__(self, ledger: Any, evaluation: str) -> None:
        self.ledger = ledger
        self.evaluation = evaluation
        self._after = 0
        self._states: dict[str, tuple[str, str, int]] = {}  # system -> (state, message, id) of its latest notice
        self._progress: dict[str, int] = {}
        self._progress_at = float("-inf")
        self._moved_at: dict[str, float] = {}  # system -> monotonic time its progress last changed

    @property
    def supported(self) -> bool:
        """Whether the ledger keeps notices (a real ledger does; a test double may not)."""
        return all(callable(getattr(self.ledger, name, None)) for name in ("notify", "notices", "progress"))

    def announce(self, system: str, state: str, message: str = "") -> int:
        """Record this worker's state in the ledger and return the notice's id (0 when it could not be recorded).

        A failure to record it is logged, not raised (best effort: the ledger itself may be what failed).
        """
        if not self.supported:
            return 0
        try:
            return int(self.ledger.notify(self.evaluation, system=system, state=state, message=message).id)
        except Exception as exc:
            _log.warning("stopwise: could not record %r %s in the ledger: %s", system, state, exc)
            return 0

    def refresh(self) -> None:
        """Read the notices stored since the last read (by any process)."""
        if not self.supported:
            return
        for notice in self.ledger.notices(self.evaluation, after=self._after):
            self._after = max(self._after, int(notice.id))
            self._states[str(notice.system)] = (str(notice.state), str(notice.message), int(notice.id))

    def state(self, system: str) -> str | None:
        """The latest state of ``system`` read from the ledger (None before any notice)."""
        return self._states[system][0] if system in self._states else None

    def failure(self, system: str, *, after: int = 0) -> str | None:
        """The reason ``system``'s worker gave, if its latest notice is ``failed`` and has an id above ``after``.

        ``after``: the id of this worker's own ``started`` notice, so that a failure of an earlier
        attempt (before this worker started; the partner run again announces itself) is not taken
        for a failure of this run.
        """
        state, message, notice = self._states.get(system, (None, "", 0))
        return (message or "no reason given") if state == "failed" and notice > after else None

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
        if not self.supported:
            return False
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
        if now - self._moved_at.setdefault(partner, now) > stall:
            return False
        return self._progress.get(system, 0) - self._progress.get(partner, 0) >= pace
