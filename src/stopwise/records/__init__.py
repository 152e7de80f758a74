"""Data contracts: outcome rows, trajectories, the comparison policy and the decision record.

This package imports nothing else of stopwise's (but its errors). The names load on first use; the
``if TYPE_CHECKING:`` block below lists them (see :mod:`stopwise._lazy`).
"""

import typing as _typing

from stopwise._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:  # the lazy exports (stopwise._lazy): read at run time, imported on first use
    from stopwise.records._columns import OutcomeColumns, factorize
    from stopwise.records._decision import (
        ACTIONS,
        Action,
        BudgetState,
        CoverageState,
        DecisionRecord,
        DecisionWarning,
        DifferenceInterval,
        Exclusion,
        FlagCount,
        GroupCoverage,
        RemainingForecast,
        TailProvenance,
        UniverseState,
    )
    from stopwise.records._deprecated import (  # deprecated aliases, removed in 0.2
        columns_of_frame,
        outcome_frame,
        read_file_columns,
        read_outcome_columns,
        read_outcome_files,
        validate_outcomes,
    )
    from stopwise.records._outcomes import (
        FLAG_SEPARATOR,
        OUTCOME_COLUMNS,
        STATUSES,
        flag_mask,
        outcome_columns,
        read_outcomes,
        write_outcomes,
    )
    from stopwise.records._policy import (
        DEFAULT_POLICY_TOML,
        BudgetPolicy,
        CoveragePolicy,
        DecisionPolicy,
        FlagPolicy,
        OrderPolicy,
        Policy,
        Targets,
        load_policy,
        parse_policy,
    )
    from stopwise.records._synthetic import synthetic_benchmark
    from stopwise.records._trajectory import Step, Trajectory, iter_trajectories, read_trajectories, write_trajectories
    from stopwise.records._universe import MAX_UNIVERSE_TASKS, TaskUniverse, read_task_universe
    from stopwise.records._vocabulary import (
        ACTION_CODE,
        BOUNDARIES,
        COMPUTED_TAIL_METHODS,
        COVERAGE_RULES,
        EXCLUSION_CODES,
        EXCLUSION_REASONS,
        TAIL_METHODS,
        WARNING_CODES,
        WORKER_STATES,
        Boundary,
        ComputedTailMethod,
        CoverageRule,
        ExclusionCode,
        Status,
        TailMethod,
        WarningCode,
        WorkerState,
    )

__getattr__, __dir__ = _lazy_exports(__name__, __file__)

__all__ = [
    "ACTIONS",
    "ACTION_CODE",
    "BOUNDARIES",
    "COMPUTED_TAIL_METHODS",
    "COVERAGE_RULES",
    "DEFAULT_POLICY_TOML",
    "EXCLUSION_CODES",
    "EXCLUSION_REASONS",
    "FLAG_SEPARATOR",
    "MAX_UNIVERSE_TASKS",
    "OUTCOME_COLUMNS",
    "STATUSES",
    "TAIL_METHODS",
    "WARNING_CODES",
    "WORKER_STATES",
    "Action",
    "Boundary",
    "BudgetPolicy",
    "BudgetState",
    "ComputedTailMethod",
    "CoveragePolicy",
    "CoverageRule",
    "CoverageState",
    "DecisionPolicy",
    "DecisionRecord",
    "DecisionWarning",
    "DifferenceInterval",
    "Exclusion",
    "ExclusionCode",
    "FlagCount",
    "FlagPolicy",
    "GroupCoverage",
    "OrderPolicy",
    "OutcomeColumns",
    "Policy",
    "RemainingForecast",
    "Status",
    "Step",
    "TailMethod",
    "TailProvenance",
    "Targets",
    "TaskUniverse",
    "Trajectory",
    "UniverseState",
    "WarningCode",
    "WorkerState",
    "columns_of_frame",
    "factorize",
    "flag_mask",
    "iter_trajectories",
    "load_policy",
    "outcome_columns",
    "outcome_frame",
    "parse_policy",
    "read_file_columns",
    "read_outcome_columns",
    "read_outcome_files",
    "read_outcomes",
    "read_task_universe",
    "read_trajectories",
    "synthetic_benchmark",
    "validate_outcomes",
    "write_outcomes",
    "write_trajectories",
]
