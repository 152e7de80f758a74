"""A retried task runs the planned prefix it lacks first: a sample that comes too far ahead of a missing one is skipped.

Inspect starts every sample of a task at once, in dataset order, and each waits for a slot of the task's
sample semaphore (first come, first served); ``EarlyStopping.schedule_sample`` is called once a sample holds
its slot. In a fresh run the samples reach the semaphore in dataset order. In a retry (``eval_set``,
``eval_retry``) each sample first looks its prior record up in the earlier log: a sample with no record
comes through at once, one with a record (the sample that errored, those cancelled with it) is read from the
log first, so it can queue behind many later samples and run last. The betting boundary judges the planned
prefix, so the decision then waits for that sample while the later ones pile up pairs (once 109 pairs where
the uninterrupted run decided at 28).

A manager cannot reorder Inspect's queue, and a sample holding its slot while it waits could hold every
slot the late sample needs. So :class:`PrefixGate` bounds how far a system runs ahead instead: a sample
that reaches ``schedule_sample`` more than ``window`` places (in the order Inspect was given) after a task
of this run that has not yet reached it, and that has no outcome of the system in the ledger, is skipped.
A skipped task stays missing, so nothing more than ``window`` places past the first missing task is run:
the system stores no outcome there while the prefix has a hole, by construction. The skipped samples pass
through their slots at once, so the late sample gets one soon; if the comparison is not decided by the end,
the task's log ends in error (fail closed) and ``eval_set`` runs the skipped samples in the next attempt,
where they come in order (they have no prior record).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from stopwise.ledger import Ledger

__all__ = ["WINDOW", "Late", "PrefixGate", "order_stop", "recorded_tasks"]

WINDOW = 24
"""How many places a sample may come ahead of a task that has not come yet. Inspect reads up to 25 prior
records at once in a retry whose log it did not seed (4 in one it did), so samples that read at the same time
may come that far out of order without any of them being late."""


@dataclass(frozen=True)
class Late:
    """A task that had not reached ``schedule_sample`` when a sample far behind it in the order did.

    Attributes
    ----------
    task : str
        The missing task (a sample id).
    place : int
        Its 1-based place in the order Inspect was given.
    sample : str
        The sample that came too early.
    sample_place : int
        Its 1-based place.
    """

    task: str
    place: int
    sample: str
    sample_place: int


class PrefixGate:
    """Which samples of one task may run: none more than ``window`` places past the first task still missing.

    Not thread-safe (the caller locks).

    Parameters
    ----------
    order : sequence of str
        The task's sample ids in the order Inspect was given them (its dataset order).
    have : iterable of str
        Tasks that already have an outcome of this system (in the ledger): Inspect reuses their prior
        records, or they need no run; they are never waited for.
    window : int
        How many places a sample may come ahead of a missing task.

    Attributes
    ----------
    skipped : list of Late
        The samples skipped so far, each with the task it came ahead of.

    Examples
    --------
    >>> from stopwise.inspect._prefix import PrefixGate
    >>> gate = PrefixGate(["a", "b", "c", "d", "e"], have=["a"], window=2)
    >>> gate.arrive("c") is None, gate.arrive("d") is None  # b is missing but within 2 places
    (True, True)
    >>> gate.arrive("e").task  # 3 places past b: skipped
    'b'
    >>> gate.arrive("b") is None, gate.missing()  # b came; e was skipped, so it is missing now
    (True, 'e')
    """

    def __init__(self, order: Sequence[str], have: Iterable[str] = (), window: int = WINDOW) -> None:
        if window < 1:
            raise ValueError(f"`window` must be >= 1; got {window}")
        self.window = int(window)
        self._order = list(dict.fromkeys(str(t) for t in order))
        self._place = {task: i for i, task in enumerate(self._order)}
        self._missing = set(self._order) - {str(t) for t in have}
        self._first = 0  # every task before this place has come (or needs no run)
        self.skipped: list[Late] = []

    def missing(self) -> str | None:
        """The first task in the order that has not come yet and has no outcome (None: none)."""
        while self._first < len(self._order) and self._order[self._first] not in self._missing:
            self._first += 1
        return self._order[self._first] if self._first < len(self._order) else None

    def done(self, task: str) -> None:
        """``task`` has an outcome now (a reused prior record, or a completed run): it is never waited for."""
        self._missing.discard(str(task))

    def arrive(self, task: str) -> Late | None:
        """``task`` reached ``schedule_sample``: None to run it, or the missing task it came too far ahead of.

        The caller skips it then (and counts it with :meth:`skip` unless it skips it for another reason). A task outside the order (a sample added during the run) is never skipped. A skipped task stays
        missing: no sample more than ``window`` places past it runs in this attempt either.
        """
        task = str(task)
        place = self._place.get(task)
        first = self.missing()
        if place is None or first is None or place - self._place[first] <= self.window:
            self._missing.discard(task)
            return None
        return Late(task=first, place=self._place[first] + 1, sample=task, sample_place=place + 1)

    def skip(self, late: Late) -> None:
        """Count ``late`` among the samples skipped for the order (the caller skipped it for no other reason)."""
        self.skipped.append(late)


def recorded_tasks(ledger: Ledger, evaluation: str, system: str) -> set[str]:
    """The tasks with an outcome event of ``system`` in the ledger (any status): a retry reuses or needs no run of them."""
    rows = ledger.outcomes(evaluation)
    return set(rows.loc[rows["system"].astype(str) == system, "task"].astype(str))


def order_stop(late: Late) -> tuple[str, dict[str, Any]]:
    """The skip reason (and ``EarlyStop`` metadata) of a sample that came more than ``WINDOW`` places ahead of ``late.task``."""
    return (
        f"stopwise order: task {late.task} (place {late.place} of this run) has not started yet and this sample (place "
        f"{late.sample_place}) comes more than {WINDOW} places after it; a retry starts the samples that errored after "
        "the fresh ones, and the boundary judges the planned prefix, so the later ones wait for a next attempt "
        "(eval_set runs them in order)"
    ), {"action": "order", "missing_task": late.task, "missing_place": late.place}
