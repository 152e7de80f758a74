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
    "DEFAULT_BUDGETS",
    "INGEST_FORMATS",
    "LIVE_RULES",
    "STATUSES",
    "STRATEGIES",
    "TAIL_METHODS",
    "Action",
    "Boundary",
    "ComputedTailMethod",
    "CoverageRule",
    "IngestFormat",
    "LiveRule",
    "Status",
    "Strategy",
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

Strategy = Literal["auto", "mixture", "max", "horizon", "agrapa", "plug-in"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
"""Betting strategies: ``auto`` (default: ``mixture`` for the pooled process, ``max`` for the stratified
one), ``mixture`` (the average of the ``max`` and ``horizon`` capitals), ``max`` (the larger of the aGRAPA
and plug-in bets), ``horizon`` (the larger of the aGRAPA and the horizon-tuned plug-in bets), ``agrapa``
and the predictable ``plug-in`` baseline."""

LiveRule = Literal["betting-wor", "fixed-budget"]
LIVE_RULES: tuple[LiveRule, ...] = get_args(LiveRule)
"""The rules a live-look replay compares."""

IngestFormat = Literal["swebench", "inspect", "tau2", "harbor", "hal"]
INGEST_FORMATS: tuple[IngestFormat, ...] = get_args(IngestFormat)
"""Harness formats :func:`~stopwise.ingest.ingest` reads, in the order detection tries them."""

DEFAULT_BUDGETS: tuple[float, ...] = tuple(k / 100 for k in range(5, 100, 5))
"""The replay's budget fractions, 5 % to 95 % in 5-point steps (``stopwise.replay.DEFAULT_BUDGETS`` is
the same as a NumPy array)."""
