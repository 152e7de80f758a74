"""The decision layer: pairing, the coverage rule, tail probabilities and the decision routine.

The names load on first use; the ``if TYPE_CHECKING:`` block below lists them (see :mod:`stopwise._lazy`).

Besides what a user calls (:func:`decide`, :func:`pair_outcomes`, :func:`tail_probabilities`,
:func:`betting_boundary`, the coverage rule, the task orders, :func:`next_tasks`), the facade exports what other stopwise packages
take from the decision layer: the kernels and steps :mod:`stopwise.replay` reruns on thousands of orders
(:func:`exact_tails_from_counts`, :func:`exact_wor_tails_from_counts`, :func:`normal_tails_from_moments`,
:func:`serfling_tails_from_moments`, :func:`lattice_of`, :func:`lattice_threshold`, :func:`betting_paths`,
:func:`stratified_draws`, :func:`neyman_from_draws`, :func:`coverage_deadlines`, :func:`top_up_ends`,
:func:`powered_boundary`, :func:`powered_paths`, :func:`powered_scale`, :func:`exceeds_threshold`, :func:`routine_actions`,
:func:`resolve_strategy`, :func:`in_order_ends`, :func:`coverage_enforced`), the ledger's check of a betting order (:func:`check_betting_order`), the
Inspect managers' planned universe (:func:`order_universe`) and the CLI's demo and interval text
(:func:`demo_comparison`, :func:`interval_text`). A family of systems is decided by :func:`decide_family`; its
hypotheses (:func:`family_hypotheses`) and controls (:func:`claim_looks`, :func:`closed_e_test`, :func:`e_bh`,
:func:`stopped_e_bh`, :func:`p_value_claims`) are what :mod:`stopwise.replay` reruns on thousands of orders.

How :func:`decide` is built (issue 31). ``_decide`` is the pipeline: validate the arguments, pair the two systems,
cut the look at the budget limit, treat missing tasks (``_missing``, ``_missing_look``), build the frozen state of
the look (``_state.DecideState``: the validated inputs, the paired outcomes, the budget, the judged tasks), ask the
boundary, write the record (``_record``). Each boundary is one module of ``_boundaries`` named after its
``[decision] boundary`` word (``fixed_budget``, ``betting_wor``; the betting boundary's designs ``betting_wor_top_up``
and ``betting_wor_stratified``, named after ``[betting] design``), behind one protocol
(``_boundaries.BoundaryRule``)::

    rule = boundary_module(policy.decision.boundary).rule(policy, universe)
    look = rule.look(state)                  # -> Look: the action and its evidence (p-values or tails)
    interval = rule.interval(state, look)    # -> DifferenceInterval | None, matching the look's action
    words = rule.reason(state, look.action)  # when the look leaves its reason to the pipeline

A new boundary is one new module in ``_boundaries`` (``ANYTIME``, ``check(policy, universe)``,
``rule(policy, universe)``) plus its word in ``Boundary`` of ``stopwise._vocabulary``; a new design of the
betting boundary one module ``betting_wor_<design>`` (``runs_on(kind, policy)``, ``rule(warning)``) plus its word in
``BettingDesign``. Prediction-powered pairing and the prefix boundary on it are ``_powered`` (beside ``_predicted``).
"""

import typing as _typing

from stopwise._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:  # the lazy exports (stopwise._lazy): read at run time, imported on first use
    from stopwise.compare._betting import (
        BettingBoundary,
        BettingPaths,
        betting_boundary,
        betting_paths,
        resolve_strategy,
    )
    from stopwise.compare._boundaries.betting_wor import check_betting_order
    from stopwise.compare._boundaries.fixed_budget import (
        ABSTAIN,
        CONTINUE,
        MIN_OBSERVED,
        PROMOTE,
        REJECT,
        routine_actions,
    )
    from stopwise.compare._claim import claim_sentence, interval_text
    from stopwise.compare._coverage import budget_task_count, coverage_enforced, coverage_state, required_counts
    from stopwise.compare._decide import decide
    from stopwise.compare._demo import DemoComparison, demo_comparison
    from stopwise.compare._family import decide_family
    from stopwise.compare._family_hypotheses import FamilyHypotheses, family_hypotheses
    from stopwise.compare._multiple import claim_looks, closed_e_test, e_bh, p_value_claims, stopped_e_bh
    from stopwise.compare._next import NextTask, NextTasks, next_tasks
    from stopwise.compare._orders import (
        cost_first_orders,
        coverage_aware_orders,
        coverage_deadlines,
        neyman_from_draws,
        neyman_orders,
        stratified_draws,
        uniform_orders,
    )
    from stopwise.compare._pairing import OutcomeCells, PairedOutcomes, lattice_of, outcome_cells, pair_outcomes
    from stopwise.compare._plan import order_check, order_universe, task_order
    from stopwise.compare._predicted import AuditTallies, powered_boundary, powered_scale
    from stopwise.compare._predicted_paths import powered_paths
    from stopwise.compare._record import input_digest
    from stopwise.compare._state import exceeds_threshold
    from stopwise.compare._tails import (
        TailProbabilities,
        exact_tails_from_counts,
        lattice_threshold,
        normal_tails_from_moments,
        serfling_tails_from_moments,
        tail_probabilities,
    )
    from stopwise.compare._topup import in_order_ends, top_up_ends
    from stopwise.compare._tuned import ActiveAudits, TunedValues, tuned_paths
    from stopwise.compare._wor_exact import exact_wor_tails_from_counts

__getattr__, __dir__ = _lazy_exports(__name__, __file__)

__all__ = [
    "ABSTAIN",
    "CONTINUE",
    "MIN_OBSERVED",
    "PROMOTE",
    "REJECT",
    "ActiveAudits",
    "AuditTallies",
    "BettingBoundary",
    "BettingPaths",
    "DemoComparison",
    "FamilyHypotheses",
    "NextTask",
    "NextTasks",
    "OutcomeCells",
    "PairedOutcomes",
    "TailProbabilities",
    "TunedValues",
    "betting_boundary",
    "betting_paths",
    "budget_task_count",
    "check_betting_order",
    "claim_looks",
    "claim_sentence",
    "closed_e_test",
    "cost_first_orders",
    "coverage_aware_orders",
    "coverage_deadlines",
    "coverage_enforced",
    "coverage_state",
    "decide",
    "decide_family",
    "demo_comparison",
    "e_bh",
    "exact_tails_from_counts",
    "exact_wor_tails_from_counts",
    "exceeds_threshold",
    "family_hypotheses",
    "in_order_ends",
    "input_digest",
    "interval_text",
    "lattice_of",
    "lattice_threshold",
    "next_tasks",
    "neyman_from_draws",
    "neyman_orders",
    "normal_tails_from_moments",
    "order_check",
    "order_universe",
    "outcome_cells",
    "p_value_claims",
    "pair_outcomes",
    "powered_boundary",
    "powered_paths",
    "powered_scale",
    "required_counts",
    "resolve_strategy",
    "routine_actions",
    "serfling_tails_from_moments",
    "stopped_e_bh",
    "stratified_draws",
    "tail_probabilities",
    "task_order",
    "top_up_ends",
    "tuned_paths",
    "uniform_orders",
]
