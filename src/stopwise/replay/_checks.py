"""The replay's parameter constraints, declared once (:mod:`stopwise._params`).

Every public replay function (``replay``, ``replay_looks``, ``replay_source_grid``, ``replay_source_looks``,
``prepare_source``) validates the arguments it takes with :func:`check_replay_args` before any work;
a bad value is an :class:`~stopwise.errors.ArgumentError` (also a ``ValueError``) naming the function,
the parameter, the rule and the value.
"""

from __future__ import annotations

from typing import Any

from stopwise._params import Constraint, Interval, OneOf, Predicate, check_params, number_list, whole_number
from stopwise._vocabulary import LIVE_RULES, STRATEGIES
from stopwise.errors import ArgumentError

__all__ = ["MAX_ORDERS", "MEASURES", "REPLAY_CONSTRAINTS", "SCOPES", "check_replay_args"]

MAX_ORDERS = 100_000
"""Most task orders per pair a replay takes (each order is a row of task indices held in memory)."""
MEASURES = ("task_fraction", "task_count", "cost_usd", "elapsed_s")
"""Budget measures a replay may override the policy's with."""
SCOPES = ("tested", "pair")
"""Budget scopes a replay may override the policy's with."""


def _looks(value: Any) -> bool:
    return value == "every" or whole_number(1).accepts(value)


def _rules(value: Any) -> bool:
    return not isinstance(value, str) and len(value) > 0 and all(rule in LIVE_RULES for rule in value)


LOOKS = Predicate(_looks, "'every' or a positive integer")

REPLAY_CONSTRAINTS: dict[str, Constraint] = {
    "thresholds": number_list(Interval(float, -1, 1, closed="left"), "numbers"),
    "budgets": number_list(Interval(float, 0, 1, closed="right"), "fractions"),
    "n_orders": whole_number(1, MAX_ORDERS),
    "measure": OneOf((None, *MEASURES)),
    "scope": OneOf((None, *SCOPES)),
    "min_coverage": Interval(float, 0, 1),
    "min_shared": whole_number(1),
    "looks": LOOKS,
    "fixed_looks": Predicate(lambda v: v is None or _looks(v), "'every', a positive integer or None"),
    "rules": Predicate(_rules, "a non-empty subset of " + ", ".join(LIVE_RULES)),
    "strategy": OneOf(STRATEGIES),
    "batch_rows": whole_number(1),
    "n_jobs": whole_number(1),
}
"""Parameter name -> its rule, for every replay function that takes it."""


def check_replay_args(owner: str, **params: Any) -> None:
    """Check the named arguments of the replay function ``owner`` against :data:`REPLAY_CONSTRAINTS`.

    Raises
    ------
    ArgumentError
        For the first argument that breaks its rule.

    Examples
    --------
    >>> from stopwise.replay._checks import check_replay_args
    >>> check_replay_args("replay_grid", n_orders=0)
    Traceback (most recent call last):
    ...
    stopwise.errors.ArgumentError: replay_grid: `n_orders` must be an integer from 1 to 100,000; got 0.
    """
    check_params(owner, params, {name: REPLAY_CONSTRAINTS[name] for name in params}, error=ArgumentError)
