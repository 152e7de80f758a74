"""The decision layer: pairing, the coverage rule, tail probabilities and the decision routine.

The names load on first use; the ``if TYPE_CHECKING:`` block below lists them (see :mod:`stopwise._lazy`).

Besides what a user calls (:func:`decide`, :func:`pair_outcomes`, :func:`tail_probabilities`,
:func:`betting_boundary`, the coverage rule, the task orders, :func:`next_tasks`), the facade exports what other stopwise packages
take from the decision layer: the kernels and steps :mod:`stopwise.replay` reruns on thousands of orders
(:func:`exact_tails_from_counts`, :func:`exact_wor_tails_from_counts`, :func:`normal_tails_from_moments`,
:func:`serfling_tails_from_moments`, :func:`lattice_of`, :func:`lattice_threshold`, :func:`betting_paths`,
:func:`stratified_draws`, :func:`neyman_from_draws`, :func:`coverage_deadlines`, :func:`top_up_ends`,
:func:`powered_boundary`, :func:`powered_scale`, :func:`exceeds_threshold`, :func:`routine_actions`,
:func:`resolve_strategy`, :func:`in_order_ends`, :func:`coverage_enforced`), the ledger's check of a betting order (:func:`check_betting_order`), the
Inspect managers' planned universe (:func:`order_universe`) and the CLI's demo and interval text
(:func:`demo_comparison`, :func:`interval_text`).
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
    from stopwise.compare._coverage import budget_task_count, coverage_enforced, coverage_state, required_counts
    from stopwise.compare._decide import (
        ABSTAIN,
        CONTINUE,
        MIN_OBSERVED,
        PROMOTE,
        REJECT,
        check_betting_order,
        decide,
        exceeds_threshold,
        input_digest,
        routine_actions,
    )
    from stopwise.compare._demo import DemoComparison, demo_comparison
    from stopwise.compare._interval import interval_text
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
    from stopwise.compare._tails import (
        TailProbabilities,
        exact_tails_from_counts,
        lattice_threshold,
        normal_tails_from_moments,
        serfling_tails_from_moments,
        tail_probabilities,
    )
    from stopwise.compare._topup import in_order_ends, top_up_ends
    from stopwise.compare._wor_exact import exact_wor_tails_from_counts

__getattr__, __dir__ = _lazy_exports(__name__, __file__)

__all__ = [
    "ABSTAIN",
    "CONTINUE",
    "MIN_OBSERVED",
    "PROMOTE",
    "REJECT",
    "AuditTallies",
    "BettingBoundary",
    "BettingPaths",
    "DemoComparison",
    "NextTask",
    "NextTasks",
    "OutcomeCells",
    "PairedOutcomes",
    "TailProbabilities",
    "betting_boundary",
    "betting_paths",
    "budget_task_count",
    "check_betting_order",
    "cost_first_orders",
    "coverage_aware_orders",
    "coverage_deadlines",
    "coverage_enforced",
    "coverage_state",
    "decide",
    "demo_comparison",
    "exact_tails_from_counts",
    "exact_wor_tails_from_counts",
    "exceeds_threshold",
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
    "pair_outcomes",
    "powered_boundary",
    "powered_scale",
    "required_counts",
    "resolve_strategy",
    "routine_actions",
    "serfling_tails_from_moments",
    "stratified_draws",
    "tail_probabilities",
    "task_order",
    "top_up_ends",
    "uniform_orders",
]
