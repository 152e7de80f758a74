"""Bounds on a scored outcome, and the label they imply."""

from __future__ import annotations

from typing import Literal

__all__ = ["Bound", "bound_label", "bound_problem"]

Bound = tuple[float, float]
"""``(low, high)``: every value the scored outcome can still take lies in ``[low, high]``."""


def bound_problem(bound: Bound) -> str | None:
    """The rule a bound breaks, or ``None`` when it is a valid sub-interval of [0, 1]."""
    low, high = bound
    if not (0.0 <= low <= 1.0 and 0.0 <= high <= 1.0):
        return "must be two numbers, low then high, both in [0, 1]"
    if low > high:
        return "must be two numbers, low then high, with low <= high"
    return None


def bound_label(bound: Bound, pass_at: float) -> Literal["pass", "fail"] | None:
    """The label every value of ``bound`` gives, or ``None`` when the values disagree.

    A score passes when it is at or above ``pass_at``.

    Examples
    --------
    >>> from stopwise.finality._bound import bound_label
    >>> bound_label((0.0, 0.4), 0.5), bound_label((0.6, 1.0), 0.5), bound_label((0.3, 0.7), 0.5)
    ('fail', 'pass', None)
    """
    low, high = bound
    if low >= pass_at:
        return "pass"
    if high < pass_at:
        return "fail"
    return None
