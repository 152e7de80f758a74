"""An append's events belong to the evaluation: one of its two systems, a task of its planned universe.

Each broken rule is a :class:`~stopwise.errors.Problem` (row, field, rule, value); a misspelt system
or task gets a "did you mean" from the known names (at most :data:`HINTED` distinct values per append,
since each costs a pass over the planned tasks).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from stopwise.errors import Problem, ValidationError
from stopwise.ledger._results import Registration

__all__ = ["HINTED", "check_membership"]

HINTED = 20
"""Distinct misspelt names of one append that get a "did you mean" (each costs a pass over the planned tasks)."""


def check_membership(
    payloads: list[dict[str, Any]], reg: Registration, planned: frozenset[str] | None, source: str
) -> None:
    """Refuse events of another system, or of a task outside ``planned`` (None: a universe given by counts).

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.ledger._membership import check_membership
    >>> from stopwise.ledger._results import Registration
    >>> reg = Registration("ev", stopwise.Policy(), stopwise.TaskUniverse(["task-1"]), "A", "B", "", "", "", "")
    >>> check_membership([{"system": "A", "task": "task-2"}], reg, frozenset({"task-1"}), "append")
    Traceback (most recent call last):
    ...
    stopwise.errors.ValidationError: 1 problem in the input:
      append, row 1, field 'task': must be a task of the evaluation's planned universe (did you mean 'task-1'?); got 'task-2'
    """
    systems = reg.systems
    problems: list[Problem] = []
    hints: dict[tuple[str, str], str] = {}  # (field, value) -> "did you mean ...?" (or ""), once per distinct value

    def hint(field: str, value: str, known: Iterable[str], n: int) -> str:
        if (field, value) not in hints:
            close = difflib.get_close_matches(value, sorted(known), n=n, cutoff=0.6) if len(hints) < HINTED else []
            hints[field, value] = f"did you mean {' or '.join(map(repr, close))}?" if close else ""
        return hints[field, value]

    for i, p in enumerate(payloads):
        if p["system"] not in systems:
            close = hint("system", p["system"], systems, 1)
            named = " or ".join(map(repr, systems)) if len(systems) <= 6 else f"one of {len(systems)} systems ({', '.join(systems[:5])}, ...)"
            rule = f"must be {named} (the evaluation's systems{'; ' + close if close else ''})"
            problems.append(Problem(source, i + 1, "system", rule, p["system"]))
        if planned is not None and p["task"] not in planned:
            close = hint("task", p["task"], planned, 3)
            rule = "must be a task of the evaluation's planned universe" + (f" ({close})" if close else "")
            problems.append(Problem(source, i + 1, "task", rule, p["task"]))
    if problems:
        raise ValidationError(problems)
