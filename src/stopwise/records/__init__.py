"""Data contracts: outcome rows, trajectories, the comparison policy and the decision record.

This package imports nothing else of stopwise's but the shared modules (errors, the vocabulary, limits). The
names load on first use; the ``if TYPE_CHECKING:`` block below lists them (see :mod:`stopwise._lazy`).

Besides what a user reads, writes and matches on, the facade exports a few pieces of the contracts that other
stopwise packages build on: the text columns of :class:`OutcomeColumns` (:data:`TEXT_COLUMNS`, for pairing),
the order stamp of a planned order (:class:`OrderStamp`, :data:`STAMP_COLUMNS`, :func:`order_digest`, for
``stopwise order``) and the one table reader (:func:`read_table`, :func:`format_of`, for the CLI and the ledger's
export).
"""

import typing as _typing

from stopwise._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:  # the lazy exports (stopwise._lazy): read at run time, imported on first use
    from stopwise._vocabulary import (
        ACTION_CODE,
        AUDITED_FLAG,
        BOUNDARIES,
        COMPUTED_TAIL_METHODS,
        COVERAGE_RULES,
        EXCLUSION_CODES,
        EXCLUSION_REASONS,
        PREDICTED_CENTRES,
        PREDICTED_FLAG,
        PREDICTED_TREATMENTS,
        TAIL_METHODS,
        WARNING_CODES,
        WORKER_STATES,
        WOULD_HALT_FLAGS,
        Boundary,
        ComputedTailMethod,
        CoverageRule,
        ExclusionCode,
        PredictedCentre,
        PredictedTreatment,
        Status,
        TailMethod,
        WarningCode,
        WorkerState,
    )
    from stopwise.records._audit import audit_draw, is_audited
    from stopwise.records._columns import TEXT_COLUMNS, OutcomeColumns, factorize
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
        LedgerPosition,
        MissingState,
        PredictedState,
        RemainingForecast,
        TailProvenance,
        UniverseState,
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
        EarlyPolicy,
        FlagPolicy,
        OrderPolicy,
        Policy,
        Targets,
        load_policy,
        parse_policy,
    )
    from stopwise.records._synthetic import synthetic_benchmark
    from stopwise.records._tables import format_of, read_table
    from stopwise.records._trajectory import Step, Trajectory, iter_trajectories, read_trajectories, write_trajectories
    from stopwise.records._universe import STAMP_COLUMNS, OrderStamp, TaskUniverse, order_digest, read_task_universe

__getattr__, __dir__ = _lazy_exports(__name__, __file__)

__all__ = [
    "ACTIONS",
    "ACTION_CODE",
    "AUDITED_FLAG",
    "BOUNDARIES",
    "COMPUTED_TAIL_METHODS",
    "COVERAGE_RULES",
    "DEFAULT_POLICY_TOML",
    "EXCLUSION_CODES",
    "EXCLUSION_REASONS",
    "FLAG_SEPARATOR",
    "OUTCOME_COLUMNS",
    "PREDICTED_CENTRES",
    "PREDICTED_FLAG",
    "PREDICTED_TREATMENTS",
    "STAMP_COLUMNS",
    "STATUSES",
    "TAIL_METHODS",
    "TEXT_COLUMNS",
    "WARNING_CODES",
    "WORKER_STATES",
    "WOULD_HALT_FLAGS",
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
    "EarlyPolicy",
    "Exclusion",
    "ExclusionCode",
    "FlagCount",
    "FlagPolicy",
    "GroupCoverage",
    "LedgerPosition",
    "MissingState",
    "OrderPolicy",
    "OrderStamp",
    "OutcomeColumns",
    "Policy",
    "PredictedCentre",
    "PredictedState",
    "PredictedTreatment",
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
    "audit_draw",
    "factorize",
    "flag_mask",
    "format_of",
    "is_audited",
    "iter_trajectories",
    "load_policy",
    "order_digest",
    "outcome_columns",
    "parse_policy",
    "read_outcomes",
    "read_table",
    "read_task_universe",
    "read_trajectories",
    "synthetic_benchmark",
    "write_outcomes",
    "write_trajectories",
]
