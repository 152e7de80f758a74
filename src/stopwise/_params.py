"""Declared parameter constraints and the one message shape every bad value gets.

A public entry point lists its constraints once (``_parameter_constraints`` of an estimator, as in
scikit-learn; a module-level table of a function) and :func:`check_params` validates them all before
any computation, raising ``error`` (:class:`~stopwise.errors.InputError` by default; the replay raises
:class:`~stopwise.errors.ArgumentError`, also a ``ValueError``) with the message
``"<owner>: `name` must be <rule>; got <value>."``.

Used by :mod:`stopwise.early` (the estimators) and :mod:`stopwise.replay` (``replay_grid``, ``replay_looks``);
:func:`check_random_state` is the one normaliser of every ``rng`` / ``random_state`` argument (:mod:`stopwise.compare`
too: ``decide``, the task orders).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from stopwise.errors import InputError, StopwiseError

__all__ = [
    "RANDOM_STATE_RULE",
    "Constraint",
    "Interval",
    "OneOf",
    "Predicate",
    "check_params",
    "check_random_state",
    "names_predicate",
    "number_list",
    "param_error",
    "whole_number",
]


@dataclass(frozen=True)
class Interval:
    """A real (or integer) number in a range; ``closed`` names the closed ends."""

    kind: type
    low: float | None
    high: float | None
    closed: str = "both"
    allow_none: bool = False

    def accepts(self, value: Any) -> bool:
        if value is None:
            return self.allow_none
        if isinstance(value, bool):
            return False
        if self.kind is int:
            if not isinstance(value, numbers.Integral):
                return False
        elif not isinstance(value, numbers.Real):
            return False
        v = float(value)
        if math.isnan(v):
            return False
        if self.low is not None:
            if v < self.low or (v == self.low and self.closed not in ("both", "left")):
                return False
        if self.high is not None and (v > self.high or (v == self.high and self.closed not in ("both", "right"))):
            return False
        return True

    def describe(self) -> str:
        noun = "an integer" if self.kind is int else "a number"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        text = f"{noun} in {left}{lo}, {hi}{right}"
        return text + (" or None" if self.allow_none else "")


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of values."""

    options: tuple[Any, ...]

    def accepts(self, value: Any) -> bool:
        return any(value == option and type(value) is type(option) for option in self.options)

    def describe(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.options)


@dataclass(frozen=True)
class Predicate:
    """Any rule given as a function and its description."""

    test: Callable[[Any], bool]
    text: str

    def accepts(self, value: Any) -> bool:
        try:
            return bool(self.test(value))
        except Exception:
            return False

    def describe(self) -> str:
        return self.text


Constraint = Interval | OneOf | Predicate


def param_error(owner: str, name: str, rule: str, value: Any, error: type[StopwiseError] = InputError) -> StopwiseError:
    """Build the standard error for a parameter that breaks its rule.

    Examples
    --------
    >>> str(param_error("EarlyOutcomeModel", "min_df", "an integer in [1, inf)", 0))
    'EarlyOutcomeModel: `min_df` must be an integer in [1, inf); got 0.'
    """
    return error(f"{owner}: `{name}` must be {rule}; got {value!r}.")


def check_params(
    owner: str, params: Mapping[str, Any], constraints: Mapping[str, Constraint], *, error: type[StopwiseError] = InputError
) -> None:
    """Validate every parameter against its declared constraint.

    Raises
    ------
    InputError
        (or ``error``) For the first parameter that breaks its rule, naming owner, parameter, rule and value.

    Examples
    --------
    >>> check_params("f", {"k": 0}, {"k": Interval(int, 1, None)})
    Traceback (most recent call last):
    ...
    stopwise.errors.InputError: f: `k` must be an integer in [1, inf); got 0.
    """
    for name, constraint in constraints.items():
        value = params[name]
        if not constraint.accepts(value):
            raise param_error(owner, name, constraint.describe(), value, error)


def whole_number(low: int, high: int | None = None) -> Predicate:
    """An integer (or a float with an integer value) from ``low`` to ``high`` (None: no upper end).

    Examples
    --------
    >>> rule = whole_number(1, 100_000)
    >>> rule.accepts(5), rule.accepts(5.0), rule.accepts(0), rule.accepts(True), rule.describe()
    (True, True, False, False, 'an integer from 1 to 100,000')
    """
    def test(v: Any) -> bool:
        if not isinstance(v, numbers.Real) or isinstance(v, bool) or not math.isfinite(float(v)) or int(float(v)) != v:
            return False
        return low <= float(v) and (high is None or float(v) <= high)

    return Predicate(test, f"an integer from {low:,} to {high:,}" if high is not None else f"an integer >= {low:,}")


def number_list(interval: Interval, what: str) -> Predicate:
    """A non-empty one-dimensional list of numbers, each accepted by ``interval`` (``what`` names them).

    Examples
    --------
    >>> rule = number_list(Interval(float, 0, 1, closed="right"), "fractions")
    >>> rule.accepts([0.5, 1]), rule.accepts([]), rule.accepts([0, 0.5]), rule.describe()
    (True, False, False, 'a non-empty list of fractions in (0, 1]')
    """
    def test(v: Any) -> bool:
        values = np.asarray(v, dtype=float)
        return values.ndim == 1 and len(values) > 0 and all(interval.accepts(float(x)) for x in values)

    return Predicate(test, f"a non-empty list of {what} in {interval.describe().split(' in ', 1)[1]}")


def _is_names(value: Any, allowed: Iterable[str]) -> bool:
    allowed_set = set(allowed)
    return isinstance(value, tuple | list) and all(isinstance(v, str) and v in allowed_set for v in value)


def names_predicate(allowed: Iterable[str], what: str) -> Predicate:
    """A constraint accepting a tuple/list of names drawn from ``allowed``."""
    allowed = tuple(allowed)
    return Predicate(lambda v: _is_names(v, allowed), f"a tuple of {what} from " + ", ".join(allowed))


CPU_COUNT = max(1, os.cpu_count() or 1)
"""Cores of this machine: the most threads LightGBM may be given (more has crashed its thread pool)."""

N_JOBS = Predicate(
    lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool) and v != 0 and abs(v) <= CPU_COUNT),
    f"a non-zero integer with |n_jobs| at most the CPU count ({CPU_COUNT}), or None",
)
"""The constraint of every ``n_jobs`` parameter (LightGBM threads; -1 means every core)."""


RANDOM_STATE_RULE = "a non-negative integer, a numpy Generator or None"
"""The rule every random-state parameter states (``rng``, ``random_state``)."""


def check_random_state(
    owner: str,
    random_state: Any,
    *,
    name: str = "random_state",
    default: int | None = None,
    error: type[StopwiseError] = InputError,
) -> np.random.Generator:
    """Turn a random-state argument into a Generator once: the one normaliser of ``rng`` and ``random_state``.

    A Generator is used as given; an integer seed >= 0 seeds a new one; None seeds one from ``default`` (fresh
    entropy when ``default`` is None too). Anything else (a negative or non-integer number, a bool, text) is
    refused with :func:`param_error`'s message naming ``owner`` and the parameter ``name``, raised as ``error``.

    Examples
    --------
    >>> int(check_random_state("m", 42).integers(10)) == int(check_random_state("m", 42).integers(10))
    True
    >>> int(check_random_state("m", None, default=42).integers(10)) == int(check_random_state("m", 42).integers(10))
    True
    >>> check_random_state("decide", -1, name="rng")
    Traceback (most recent call last):
    ...
    stopwise.errors.InputError: decide: `rng` must be a non-negative integer, a numpy Generator or None; got -1.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None:
        return np.random.default_rng(default)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and int(random_state) >= 0:
        return np.random.default_rng(int(random_state))
    raise param_error(owner, name, RANDOM_STATE_RULE, random_state, error)
