"""Data contracts: outcome rows, trajectories, the comparison policy and the decision record.

This package imports nothing else of stopwise's (but its errors).
"""

from stopwise.records._decision import (
    ACTIONS,
    Action,
    BudgetState,
    CoverageState,
    DecisionRecord,
    Exclusion,
    GroupCoverage,
    UniverseState,
)
from stopwise.records._joined import read_outcome_files
from stopwise.records._outcomes import (
    OUTCOME_COLUMNS,
    STATUSES,
    outcome_frame,
    read_outcomes,
    validate_outcomes,
    write_outcomes,
)
from stopwise.records._policy import (
    DEFAULT_POLICY_TOML,
    BudgetPolicy,
    CoveragePolicy,
    DecisionPolicy,
    OrderPolicy,
    Policy,
    Targets,
    load_policy,
    parse_policy,
)
from stopwise.records._synthetic import synthetic_benchmark
from stopwise.records._trajectory import Step, Trajectory, iter_trajectories, read_trajectories, write_trajectories
from stopwise.records._universe import MAX_UNIVERSE_TASKS, TaskUniverse, read_task_universe

__all__ = [
    "ACTIONS",
    "DEFAULT_POLICY_TOML",
    "MAX_UNIVERSE_TASKS",
    "OUTCOME_COLUMNS",
    "STATUSES",
    "Action",
    "BudgetPolicy",
    "BudgetState",
    "CoveragePolicy",
    "CoverageState",
    "DecisionPolicy",
    "DecisionRecord",
    "Exclusion",
    "GroupCoverage",
    "OrderPolicy",
    "Policy",
    "Step",
    "Targets",
    "TaskUniverse",
    "Trajectory",
    "UniverseState",
    "iter_trajectories",
    "load_policy",
    "outcome_frame",
    "parse_policy",
    "read_outcome_files",
    "read_outcomes",
    "read_task_universe",
    "read_trajectories",
    "synthetic_benchmark",
    "validate_outcomes",
    "write_outcomes",
    "write_trajectories",
]
