"""The decision layer: pairing, the coverage rule, tail probabilities and the decision routine.

The names load on first use; the ``if TYPE_CHECKING:`` block below lists them (see :mod:`stopwise._lazy`).
"""

import typing as _typing

from stopwise._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:  # the lazy exports (stopwise._lazy): read at run time, imported on first use
    from stopwise.compare._betting import BettingBoundary, BettingPaths, betting_boundary, betting_paths
    from stopwise.compare._coverage import budget_task_count, coverage_from_sizes, coverage_state, required_counts
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
        measure_budget,
        routine_actions,
    )
    from stopwise.compare._demo import DEMO_BUDGETS, DemoComparison, demo_comparison
    from stopwise.compare._orders import (
        cost_first_orders,
        coverage_aware_orders,
        coverage_deadlines,
        neyman_from_draws,
        neyman_orders,
        stratified_draws,
        uniform_orders,
    )
    from stopwise.compare._pairing import (
        MAX_LATTICE,
        OutcomeCells,
        PairedOutcomes,
        lattice_of,
        outcome_cells,
        pair_outcomes,
        task_groups,
    )
    from stopwise.compare._plan import order_check, order_universe, task_order
    from stopwise.compare._predicted import AuditTallies, PoweredPairs, powered_boundary, powered_pairs, powered_scale
    from stopwise.compare._predicted_paths import powered_paths
    from stopwise.compare._tails import (
        TailProbabilities,
        exact_tails_from_counts,
        lattice_threshold,
        normal_tails_from_moments,
        serfling_tails_from_moments,
        tail_probabilities,
    )
    from stopwise.compare._topup import top_up_ends, top_up_tasks
    from stopwise.compare._wor_exact import exact_wor_pvalue, exact_wor_pvalues, exact_wor_tails_from_counts

__getattr__, __dir__ = _lazy_exports(__name__, __file__)

__all__ = [
    "ABSTAIN",
    "CONTINUE",
    "DEMO_BUDGETS",
    "MAX_LATTICE",
    "MIN_OBSERVED",
    "PROMOTE",
    "REJECT",
    "AuditTallies",
    "BettingBoundary",
    "BettingPaths",
    "DemoComparison",
    "OutcomeCells",
    "PairedOutcomes",
    "PoweredPairs",
    "TailProbabilities",
    "betting_boundary",
    "betting_paths",
    "budget_task_count",
    "check_betting_order",
    "cost_first_orders",
    "coverage_aware_orders",
    "coverage_deadlines",
    "coverage_from_sizes",
    "coverage_state",
    "decide",
    "demo_comparison",
    "exact_tails_from_counts",
    "exact_wor_pvalue",
    "exact_wor_pvalues",
    "exact_wor_tails_from_counts",
    "exceeds_threshold",
    "input_digest",
    "lattice_of",
    "lattice_threshold",
    "measure_budget",
    "neyman_from_draws",
    "neyman_orders",
    "normal_tails_from_moments",
    "order_check",
    "order_universe",
    "outcome_cells",
    "pair_outcomes",
    "powered_boundary",
    "powered_pairs",
    "powered_paths",
    "powered_scale",
    "required_counts",
    "routine_actions",
    "serfling_tails_from_moments",
    "stratified_draws",
    "tail_probabilities",
    "task_groups",
    "task_order",
    "top_up_ends",
    "top_up_tasks",
    "uniform_orders",
]
