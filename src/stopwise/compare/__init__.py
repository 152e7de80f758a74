"""The decision layer: pairing, the coverage rule, tail probabilities and the decision routine."""

from stopwise.compare._betting import BettingBoundary, BettingPaths, betting_boundary, betting_paths
from stopwise.compare._coverage import budget_task_count, coverage_state, required_counts
from stopwise.compare._decide import (
    ABSTAIN,
    CONTINUE,
    PROMOTE,
    REJECT,
    decide,
    exceeds_threshold,
    input_digest,
    routine_actions,
)
from stopwise.compare._pairing import MAX_LATTICE, PairedOutcomes, lattice_of, pair_outcomes
from stopwise.compare._tails import (
    TailProbabilities,
    exact_tails_from_counts,
    lattice_threshold,
    normal_tails_from_moments,
    serfling_tails_from_moments,
    tail_probabilities,
)

__all__ = [
    "ABSTAIN",
    "CONTINUE",
    "MAX_LATTICE",
    "PROMOTE",
    "REJECT",
    "PairedOutcomes",
    "TailProbabilities",
    "budget_task_count",
    "coverage_state",
    "decide",
    "exact_tails_from_counts",
    "exceeds_threshold",
    "input_digest",
    "lattice_of",
    "lattice_threshold",
    "normal_tails_from_moments",
    "pair_outcomes",
    "required_counts",
    "routine_actions",
    "serfling_tails_from_moments",
    "tail_probabilities",
]
__all__ += ["BettingBoundary", "BettingPaths", "betting_boundary", "betting_paths"]
