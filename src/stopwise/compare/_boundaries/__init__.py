"""The decision boundaries of :func:`stopwise.decide`, one module per boundary, behind one protocol.

How a boundary plugs in
-----------------------
``[decision] boundary`` of the policy names a boundary (:data:`stopwise.records.BOUNDARIES`); the module of this
package with that name, dashes written as underscores (``fixed-budget`` -> :mod:`.fixed_budget`, ``betting-wor``
-> :mod:`.betting_wor`), is the boundary. It provides (the :class:`BoundaryModule` protocol):

* ``ANYTIME: bool`` -- the boundary is valid at every look: it judges the longest observed prefix of the planned
  order, keeps a look past the budget limit (with a warning), and treats missing tasks by ``[decision] missing``;
  otherwise it judges every observed task at one planned look, the budget limit;
* ``check(policy, universe)`` -- refuse a universe it cannot run on (called while :func:`stopwise.decide` validates
  its arguments, before any row is read);
* ``rule(policy, universe) -> BoundaryRule`` -- the rule that judges the looks of this universe (built once per
  call, when the first look needs it).

A :class:`BoundaryRule` turns the state of a look (:class:`stopwise.compare._state.DecideState`: the validated
inputs, the paired outcomes, the budget and the judged tasks, frozen) into a :class:`Look` (the action and its
evidence), the record's interval for the mean difference, and the words of its action.

``betting-wor`` has designs, chosen by ``[betting] design`` (:data:`stopwise._vocabulary.BETTING_DESIGNS`) in the same
way: the module ``betting_wor_<design>`` (``top-up`` -> :mod:`.betting_wor_top_up`, ``stratified`` ->
:mod:`.betting_wor_stratified`) provides ``runs_on(kind, policy) -> bool`` (the planned order kinds it runs on) and
``rule(warning) -> BoundaryRule``; an order it does not run on gets the pooled process (the only order the betting
boundary decides on is a uniform one: ``stratified`` is retired and runs on no order, issue 33).

So a new boundary is one new module here and one word in ``Boundary`` of :mod:`stopwise._vocabulary`; a new
design of the betting boundary one module ``betting_wor_<design>.py`` and one word in ``BettingDesign``. The pipeline
(:mod:`stopwise.compare._decide`), the record and the missing-task treatment do not change: they read the rule's
:class:`Look` and call its methods only. ``tests/compare/test_boundaries.py`` checks that every vocabulary word has
its module and that each satisfies the protocol.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING, ClassVar, Protocol, cast

from stopwise.records import (
    Action,
    CoverageState,
    DecisionWarning,
    DifferenceInterval,
    Policy,
    TailProvenance,
    TaskUniverse,
)

if TYPE_CHECKING:
    from stopwise.compare._state import DecideState

__all__ = ["BoundaryModule", "BoundaryRule", "DesignModule", "Look", "boundary_module", "design_module"]


@dataclasses.dataclass(frozen=True)
class Look:
    """What a boundary made of the judged tasks."""

    action: Action
    """The action taken."""
    method: str
    """The tail method in words (``DecisionRecord.tail_method``)."""
    r_promote: float | None = None
    """Evidence against promotion (None when not computed)."""
    r_reject: float | None = None
    """Evidence against rejection (None when not computed)."""
    tail: TailProvenance | None = None
    """How the tails were computed (None when they were not)."""
    reason: str | None = None
    """The record's reason when the boundary words it itself, before any other (the top-up design); None: the
    pipeline's reason (nothing observed, coverage, no universe), else the rule's :meth:`BoundaryRule.reason`."""
    coverage: CoverageState | None = None
    """The coverage of the tasks the action rests on when the boundary chooses them (the top-up design); None:
    the judged tasks'."""
    warnings: tuple[DecisionWarning, ...] = ()
    """Warnings of the boundary's own about its evidence (listed after the guards, before ``past-limit``)."""
    top_up_left: int | None = None
    """Top-up tasks still to run before a crossed boundary may act (the top-up design); None otherwise."""
    top_up: tuple[str, ...] | None = None
    """Those tasks, in planned order (the record's ``top_up``)."""
    min_observed: int = 0
    """Fewest judged tasks for which the look's tails are trusted (the ``few-observed`` guard; 0: no such guard)."""
    action_warnings: tuple[DecisionWarning, ...] = ()
    """Warnings about the final action itself (listed after ``past-limit``; the fixed-budget rule's, issue 21)."""


class BoundaryRule(Protocol):
    """The rule of a boundary (or of one design of it) on one planned universe.

    ``look`` is called once per look state (twice under ``missing = "worst-case"``: on the low and the high fill,
    whose looks :func:`stopwise.compare._missing.combine_looks` joins), ``interval`` once per state with the look
    the record shows, ``reason`` when the look leaves the words to the pipeline.
    """

    coverage_on_observed: ClassVar[bool]
    """Coverage is judged on every observed task, not only on the judged ones (the top-up design)."""
    takes_predictions: ClassVar[bool]
    """The rule judges prediction-powered differences (``[decision] predicted = "prediction-powered"``)."""

    def look(self, state: DecideState) -> Look:
        """The action on the judged tasks (``state.observed``) and its evidence."""
        ...

    def interval(self, state: DecideState, look: Look) -> DifferenceInterval | None:
        """The record's interval for the mean difference, matching ``look`` (None when the boundary gives none)."""
        ...

    def reason(self, state: DecideState, action: Action) -> str:
        """The boundary's words for ``action`` when nothing else explains it (tasks observed, coverage holding)."""
        ...


class BoundaryModule(Protocol):
    """What a boundary's module provides (see the package docstring)."""

    ANYTIME: bool

    def check(self, policy: Policy, universe: TaskUniverse | None) -> None:
        """Refuse a universe the boundary cannot run on (a clear :class:`stopwise.errors.ComparisonError`)."""
        ...

    def rule(self, policy: Policy, universe: TaskUniverse | None) -> BoundaryRule:
        """The rule judging the looks of ``universe`` under ``policy``."""
        ...


class DesignModule(Protocol):
    """What a design module of the betting boundary provides (see the package docstring)."""

    def runs_on(self, kind: str, policy: Policy) -> bool:
        """Whether the design runs on a planned order of this kind (``uniform``, ``coverage-aware``) under ``policy``."""
        ...

    def rule(self, warning: str | None) -> BoundaryRule:
        """The design's rule; ``warning`` is the order-provenance warning the record must carry (None: verified)."""
        ...


def _module(name: str) -> object:
    return importlib.import_module(f"{__name__}.{name.replace('-', '_')}")


def boundary_module(boundary: str) -> BoundaryModule:
    """The module of a boundary of the vocabulary (``fixed-budget`` -> :mod:`.fixed_budget`).

    Examples
    --------
    >>> from stopwise.compare._boundaries import boundary_module
    >>> boundary_module("betting-wor").ANYTIME, boundary_module("fixed-budget").ANYTIME
    (True, False)
    """
    return cast(BoundaryModule, _module(boundary))


def design_module(design: str) -> DesignModule:
    """The module of a design of the betting boundary (``top-up`` -> :mod:`.betting_wor_top_up`)."""
    return cast(DesignModule, _module(f"betting_wor_{design}"))
