"""The stratified design of the betting boundary (``[betting] design = "stratified"``): retired (issue 33).

The per-group process of :func:`stopwise.compare.betting_boundary` resolved 44.6 % of SWE-bench Verified runs by
20 % of the tasks against 69.2 % for the top-up design with the tolerant coverage rule (docs/live_looks.md), and
less on the other grouped records. The word stays in the policy's vocabulary so that a policy naming it gets the
retirement's refusal (:func:`stopwise.compare._plan.retired_order`) rather than an unknown-value error; the design
runs on no order.
"""

from __future__ import annotations

from stopwise.compare._boundaries import BoundaryRule
from stopwise.compare._plan import STRATIFIED_RETIRED
from stopwise.errors import ComparisonError
from stopwise.records import Policy

__all__ = ["rule", "runs_on"]


def runs_on(kind: str, policy: Policy) -> bool:
    """No order: the design is retired.

    Examples
    --------
    >>> from stopwise import Policy
    >>> runs_on("coverage-aware", Policy()), runs_on("uniform", Policy())
    (False, False)
    """
    return False


def rule(warning: str | None) -> BoundaryRule:
    """Refused: the stratified process is retired (:data:`stopwise.compare._plan.STRATIFIED_RETIRED`)."""
    raise ComparisonError(f'[betting] design = "stratified": {STRATIFIED_RETIRED}')
