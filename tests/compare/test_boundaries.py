"""The boundary seam of ``decide`` (issue 31): one module per boundary and per betting design, found by its word.

A boundary is a word of ``Boundary`` (:mod:`stopwise._vocabulary`) and the module of
``stopwise.compare._boundaries`` named after it; a design of the betting boundary a word of ``BettingDesign`` and the
module ``betting_wor_<design>``. These tests check that every word has its module, that each module provides what
the pipeline calls (``ANYTIME``, ``check``, ``rule``; ``runs_on``, ``rule``), and that the package holds no other.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

from stopwise import ComparisonError, Policy, TaskUniverse, decide, outcome_columns
from stopwise._vocabulary import BETTING_DESIGNS, BOUNDARIES
from stopwise.compare import betting_boundary, order_universe, task_order
from stopwise.compare._boundaries import BoundaryRule, Look, boundary_module, design_module
from stopwise.compare._state import look_state, paired_outcomes

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "stopwise" / "compare" / "_boundaries"
RULE_METHODS = {name for name, _ in inspect.getmembers(BoundaryRule, inspect.isfunction) if not name.startswith("_")}


def test_every_boundary_and_design_word_has_its_module_and_no_module_lacks_a_word() -> None:
    modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"}
    expected = {word.replace("-", "_") for word in BOUNDARIES} | {f"betting_wor_{d.replace('-', '_')}" for d in BETTING_DESIGNS}
    assert modules == expected
    assert RULE_METHODS == {"look", "interval", "reason"}


def _has_rule_shape(rule: object) -> None:
    for name in RULE_METHODS:
        assert callable(getattr(rule, name)), name
    assert isinstance(rule.coverage_on_observed, bool) and isinstance(rule.takes_predictions, bool)  # type: ignore[attr-defined]


@pytest.mark.parametrize("word", BOUNDARIES)
def test_each_boundary_module_provides_the_protocol(word: str) -> None:
    module = boundary_module(word)
    assert isinstance(module.ANYTIME, bool)
    universe = TaskUniverse([f"t{i}" for i in range(10)], ["a", "b"] * 5)
    policy = Policy(decision={"boundary": word})
    module.check(policy, universe)  # an ordered universe suits every boundary
    _has_rule_shape(module.rule(policy, universe))


@pytest.mark.parametrize("design", BETTING_DESIGNS)
def test_each_betting_design_module_provides_its_entry_points(design: str) -> None:
    module = design_module(design)
    policy = Policy(decision={"boundary": "betting-wor"}, betting={"design": design})
    assert [module.runs_on(kind, policy) for kind in ("uniform", "coverage-aware")] == [design == "top-up", False]
    if design == "stratified":  # retired (issue 33): the word is kept for the refusal's message
        with pytest.raises(ComparisonError, match="retired"):
            module.rule(None)
    else:
        _has_rule_shape(module.rule(None))


def test_the_betting_boundary_refuses_a_universe_without_order_at_validation() -> None:
    with pytest.raises(ComparisonError, match="needs the planned task order"):
        boundary_module("betting-wor").check(Policy(decision={"boundary": "betting-wor"}), TaskUniverse.from_counts(10))
    boundary_module("fixed-budget").check(Policy(), None)  # nothing to refuse


def test_a_rule_reads_only_the_state_and_its_look_matches_the_record() -> None:
    """The pipeline's steps by hand: the state, the rule's look and interval are what ``decide`` writes."""
    from stopwise.compare._decide import _decide_iv

    tasks = [f"t{i:03d}" for i in range(60)]
    frame = __import__("pandas").DataFrame({"task": tasks, "group": ["a", "b"] * 30})
    policy = Policy(decision={"boundary": "betting-wor"})
    universe = order_universe(task_order(frame, policy))
    rng = np.random.default_rng(0)
    seen = universe.tasks[:30]
    rows = outcome_columns(
        [{"system": s, "task": t, "outcome": float(rng.random() < p)} for t in seen for s, p in (("A", 0.9), ("B", 0.3))]
    )
    inputs = _decide_iv(rows, "A", "B", policy, universe, None, False, None)
    state = look_state(inputs, paired_outcomes(inputs))
    look = state.rule.look(state)
    assert isinstance(look, Look) and type(state.rule).__name__ == "TopUp"
    record = decide(rows, "A", "B", policy, universe=universe)
    assert (record.action, record.r_promote, record.r_reject, record.tail_method) == (look.action, look.r_promote, look.r_reject, look.method)
    assert record.interval == state.rule.interval(state, look)
    direct = betting_boundary(state.observed.differences, 0.0, population_size=60, alpha=0.05)
    assert look.r_promote == direct.p_promote  # the top-up design tests with the pooled process on pi's prefix
