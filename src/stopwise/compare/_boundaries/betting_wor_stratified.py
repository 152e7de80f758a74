"""The stratified design of the betting boundary (``[betting] design = "stratified"``): the per-group process.

It runs on a coverage-aware planned order (and on any order whose provenance is not verified, taken as random
within groups): the group of the next task is chosen predictably, so the pooled process is not valid, and the
stratified process of :func:`stopwise.compare.betting_boundary` (given the judged tasks' groups and the planned
group sizes) is. On a uniform order the design does not run: the pooled process is valid there and stronger.
It does not take prediction-powered differences.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from stopwise.compare._boundaries.betting_wor import Pooled
from stopwise.records import Policy

__all__ = ["Stratified", "rule", "runs_on"]


@dataclasses.dataclass(frozen=True)
class Stratified(Pooled):
    """The per-group (stratified) process on the observed prefix: valid for any group schedule random within groups."""

    takes_predictions: ClassVar[bool] = False
    stratified: ClassVar[bool] = True


def runs_on(kind: str, policy: Policy) -> bool:
    """Every order kind but ``uniform`` (a group-driven order).

    Examples
    --------
    >>> from stopwise import Policy
    >>> runs_on("coverage-aware", Policy()), runs_on("uniform", Policy())
    (True, False)
    """
    return kind != "uniform"


def rule(warning: str | None) -> Stratified:
    """The stratified process; ``warning``: the order's provenance warning (None when verified)."""
    return Stratified(warning)
