"""The vocabulary of the records: each set of allowed words once, as a ``Literal`` and its tuple.

The tuples are derived from the aliases (:func:`typing.get_args`), so a word is added in one place.

Examples
--------
>>> from stopwise.records import STATUSES, TAIL_METHODS
>>> STATUSES, TAIL_METHODS[-1]
(('final', 'pending', 'predicted'), 'none')
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "ACTIONS",
    "BOUNDARIES",
    "COMPUTED_TAIL_METHODS",
    "COVERAGE_RULES",
    "STATUSES",
    "TAIL_METHODS",
    "Action",
    "Boundary",
    "ComputedTailMethod",
    "CoverageRule",
    "Status",
    "TailMethod",
]

Status = Literal["final", "pending", "predicted"]
STATUSES: tuple[Status, ...] = get_args(Status)
"""Allowed values of ``status``: a final label, an unresolved one, or an early prediction."""

ComputedTailMethod = Literal["exact", "bootstrap", "normal", "serfling"]
COMPUTED_TAIL_METHODS: tuple[ComputedTailMethod, ...] = get_args(ComputedTailMethod)
"""Tail methods that compute tail probabilities."""

TailMethod = Literal[ComputedTailMethod, "none"]
TAIL_METHODS: tuple[TailMethod, ...] = get_args(TailMethod)
"""A policy's tail methods: the computed ones, or ``none`` (decide by the observed margin)."""

CoverageRule = Literal["proportional", "none"]
COVERAGE_RULES: tuple[CoverageRule, ...] = get_args(CoverageRule)
"""Coverage rules: ``proportional`` (paper eq. 4) or ``none`` (recorded, not enforced)."""

Boundary = Literal["fixed-budget", "betting-wor"]
BOUNDARIES: tuple[Boundary, ...] = get_args(Boundary)
"""Decision boundaries: the paper's one-look fixed-budget rule, or the betting sequence."""

Action = Literal["promote", "reject", "continue", "abstain"]
ACTIONS: tuple[Action, ...] = get_args(Action)
"""The four actions, in exit-code order (promote 0, reject 1, continue 2, abstain 3)."""
