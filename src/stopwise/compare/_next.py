"""The tasks an evaluation should run next, top-up first: what every harness needs to keep the early stop (issue 33).

The betting boundary's top-up design issues its action once a test has crossed and the crossing look's top-up
tasks are observed (:mod:`stopwise.compare._topup`). Its early stop reaches an evaluation only if those tasks
run as soon as the record names them: a harness that keeps running the planned order and decides again reaches
them where they lie in the order (SWE-bench Verified, default policy with betting-wor: 7 % of runs resolved by
20 % of the tasks instead of 70 %; docs/live_looks.md). :func:`next_tasks` answers "what do I run now" from the
rows so far, the planned order and the policy, for any runner (the Inspect managers skip to the top-up on their
own; ``stopwise next``, ``stopwise watch`` and the ledger followers print this list).

The list: nothing once the decision is final; otherwise the top-up tasks the record waits for (``top_up``, in
planned order), then the planned tasks not run yet, in planned order, up to the budget limit (in tasks; all
planned tasks for a cost or time budget). A task is *run* for a system when the system has any row on it
(a pending row is a run in flight); a task is listed with the systems that have no row on it. Under
``[decision] missing = "wait"`` a task whose outcome is missing (errored or unscored) is listed again for the
systems without a usable outcome (``retry``): the observed prefix waits at it. Running the list in order and
deciding after each task stops exactly where the live-look replay of the same order and design stops
(``tests/compare/test_next.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from stopwise.compare._pairing import as_columns, outcome_cells
from stopwise.errors import ComparisonError
from stopwise.records import DecisionRecord, OutcomeColumns, Policy, TaskUniverse

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NextTask", "NextTasks", "next_tasks"]

Why = Literal["top-up", "planned order", "retry"]


@dataclass(frozen=True)
class NextTask:
    """One task to run next."""

    task: str
    """The task id."""
    position: int
    """Its 1-based position in the planned order."""
    group: str
    """Its coverage group ("" when the universe has none)."""
    why: Why
    """``top-up`` (the crossed boundary waits for it), ``planned order`` (the next task of the order) or ``retry``
    (its outcome is missing and the observed prefix waits at it: ``[decision] missing = "wait"``)."""
    systems: tuple[str, ...]
    """The compared systems to run it for (tested first)."""


@dataclass(frozen=True)
class NextTasks:
    """What to run next, and the decision it follows from."""

    tasks: list[NextTask]
    """The tasks, in the order to run them: top-up first, then the planned order."""
    record: DecisionRecord | None
    """The decision on the rows so far (None while a system has no row yet)."""
    remaining: int
    """Tasks still to run of the whole list (``tasks`` holds at most ``n`` of them)."""
    note: str
    """What the list is, in words."""

    @property
    def names(self) -> list[str]:
        """The task ids, in order."""
        return [t.task for t in self.tasks]

    def lines(self) -> list[str]:
        """The list as ``stopwise next`` and ``stopwise watch`` print it: the note, then one task per line.

        Examples
        --------
        >>> from stopwise.compare import NextTask, NextTasks
        >>> NextTasks([NextTask("t7", 7, "g", "top-up", ("A",))], None, 3, "run them").lines()
        ['run them', '  7  t7  (group g; top-up; A)', '  ... 2 more']
        """
        out = [self.note]
        for t in self.tasks:
            group = f"group {t.group}; " if t.group else ""
            out.append(f"  {t.position}  {t.task}  ({group}{t.why}; {', '.join(t.systems)})")
        if self.remaining > len(self.tasks):
            out.append(f"  ... {self.remaining - len(self.tasks)} more")
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``action`` (None without a record), ``note``, ``remaining`` and ``tasks``.

        Each task is ``{task, position, group, why, systems}``.
        """
        return {
            "action": None if self.record is None else self.record.action,
            "note": self.note,
            "remaining": self.remaining,
            "tasks": [
                {"task": t.task, "position": t.position, "group": t.group, "why": t.why, "systems": list(t.systems)} for t in self.tasks
            ],
        }


def _next_tasks_iv(
    rows: pd.DataFrame | OutcomeColumns | None, tested: str, baseline: str, policy: Policy | None, universe: object, n: object
) -> tuple[OutcomeColumns | None, Policy, TaskUniverse, int | None]:
    """Validate the arguments of :func:`next_tasks`: rows as columns, the policy, an ordered universe and ``n``."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ComparisonError(f"`n` must be a whole number of tasks >= 1 or None (every task); got {n!r}")
    if not isinstance(universe, TaskUniverse) or not universe.ordered:
        given = "no task universe" if universe is None else "a task universe without task names"
        raise ComparisonError(
            f"the next tasks follow the planned task order, but {given} was given: pass the `stopwise order` output "
            "(universe=read_task_universe(...), --tasks FILE)"
        )
    chosen = policy if policy is not None else Policy()
    if not isinstance(chosen, Policy):
        raise ComparisonError(f"`policy` must be a stopwise.Policy (see stopwise.load_policy) or None; got {type(chosen).__name__}")
    for role, system in (("tested", tested), ("baseline", baseline)):
        if not isinstance(system, str) or not system:
            raise ComparisonError(f"`{role}` must be a system name (a non-empty str); got {system!r}")
    if tested == baseline:
        raise ComparisonError(f"tested and baseline must be different systems; both are {tested!r}")
    if rows is None:
        return None, chosen, universe, n
    if not isinstance(rows, OutcomeColumns) and type(rows).__name__ != "DataFrame":
        raise ComparisonError(f"outcome rows must be stopwise.OutcomeColumns or a pandas DataFrame; got {type(rows).__name__}")
    return as_columns(rows, source="<rows passed to next_tasks>"), chosen, universe, n


def _limit_tasks(policy: Policy, n_tasks: int) -> int:
    """The budget limit in planned tasks (every task for a cost or time budget, which has no task count)."""
    if policy.budget.measure == "task_fraction":
        return min(n_tasks, math.ceil(policy.budget.limit * n_tasks - 1e-9))
    if policy.budget.measure == "task_count":
        return min(n_tasks, math.ceil(policy.budget.limit - 1e-9))
    return n_tasks


def next_tasks(
    rows: pd.DataFrame | OutcomeColumns | None,
    tested: str,
    baseline: str,
    policy: Policy | None = None,
    *,
    universe: TaskUniverse,
    n: int | None = 10,
    record: DecisionRecord | None = None,
) -> NextTasks:
    """The tasks to run next: the top-up the crossed boundary waits for, then the planned order (module docstring).

    Parameters
    ----------
    rows : OutcomeColumns or pandas.DataFrame or None
        The outcome rows so far (any systems; only the two compared ones are read); None before the first one.
    tested, baseline : str
        The compared systems.
    policy : Policy, optional
        The comparison policy (default: ``Policy()``).
    universe : TaskUniverse
        The planned tasks in planned order (``stopwise order``'s output, :func:`stopwise.read_task_universe`).
    n : int or None, optional
        At most this many tasks (None: every task still to run).
    record : DecisionRecord, optional
        The decision already taken on exactly these rows (a ledger's look); default: :func:`stopwise.decide` is
        called (without the forecast) when both systems have rows.

    Returns
    -------
    NextTasks

    Raises
    ------
    ComparisonError
        The universe has no planned order, or the arguments are invalid.

    Examples
    --------
    >>> import pandas as pd
    >>> import stopwise
    >>> from stopwise.compare import next_tasks, order_universe, task_order
    >>> policy = stopwise.Policy.model_validate({"decision": {"boundary": "betting-wor"}})
    >>> tasks = pd.DataFrame({"task": [f"t{i:02d}" for i in range(40)], "group": ["a"] * 30 + ["b"] * 10})
    >>> universe = order_universe(task_order(tasks, policy))
    >>> first = next_tasks(None, "A", "B", policy, universe=universe, n=3)
    >>> first.names == universe.tasks[:3].tolist(), first.tasks[0].why, first.tasks[0].systems, first.record
    (True, 'planned order', ('A', 'B'), None)
    """
    from stopwise.compare._decide import decide

    columns, chosen, planned, most = _next_tasks_iv(rows, tested, baseline, policy, universe, n)
    cells = None if columns is None else outcome_cells(
        columns, systems=(tested, baseline), statuses=chosen.statuses, group_column=chosen.coverage.group_column,
        exclude_flags=chosen.flags.exclude,
    )  # fmt: skip
    present = set() if cells is None else set(cells.systems.tolist())
    if record is None and columns is not None and {tested, baseline} <= present:
        record = decide(columns, tested, baseline, chosen, universe=planned, forecast=False)
    if record is not None and record.action != "continue":
        return NextTasks(tasks=[], record=record, remaining=0, note=f"decided: {record.action}; nothing more to run")
    names = planned.tasks
    groups = planned.groups
    assert names is not None and groups is not None
    # per planned task and system: any row (run or in flight), and a usable outcome
    has_row = np.zeros((2, len(names)), dtype=bool)
    usable = np.zeros((2, len(names)), dtype=bool)
    for s, system in enumerate((tested, baseline)):
        if cells is not None and system in present:
            at = planned.positions(cells.tasks)
            inside = at >= 0
            row = int(np.flatnonzero(cells.systems == system)[0])
            has_row[s, at[inside]] = cells.planned[row][inside]
            usable[s, at[inside]] = cells.usable[row][inside]
    retry = np.zeros(len(names), dtype=bool)
    if record is not None and record.missing is not None and record.missing.treatment == "wait":
        missing = planned.positions(record.missing.tasks)
        retry[missing[missing >= 0]] = True
    need = ~has_row | (retry[None, :] & ~usable)
    top_up = planned.positions(record.top_up) if record is not None and record.top_up else np.zeros(0, dtype=np.int64)
    limit = _limit_tasks(chosen, len(names))
    rest = np.flatnonzero(need.any(axis=0) & (np.arange(len(names)) < limit))
    order = np.r_[top_up[need[:, top_up].any(axis=0)], rest[~np.isin(rest, top_up)]].astype(np.int64)
    shown = order if most is None else order[:most]
    systems, waited = (tested, baseline), set(top_up.tolist())
    listed = [
        NextTask(
            task=str(names[i]), position=int(i) + 1, group=str(groups[i]),
            why="top-up" if i in waited else "retry" if retry[i] else "planned order",
            systems=tuple(systems[s] for s in range(2) if need[s, i]),
        )
        for i in shown
    ]  # fmt: skip
    if len(top_up):
        note = (
            f"the boundary has crossed and its action waits for {len(top_up)} top-up task(s): run them first "
            "(only they are needed; the early stop depends on it), then the planned order"
        )
    elif record is None:
        note = "no decision yet (a system has no row): run the planned order"
    else:
        note = f"no final action yet ({record.boundary}): run the planned order" + (
            f" (up to the budget limit, {limit} tasks)" if limit < len(names) else ""
        )
    return NextTasks(tasks=listed, record=record, remaining=len(order), note=note)
