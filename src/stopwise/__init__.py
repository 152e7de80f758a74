"""stopwise: when may an LLM-agent evaluation stop, and what may it claim?

The public API, assembled from the subpackages:

* records  - outcome rows, trajectories, the comparison policy and the decision record
* compare  - pairing, the coverage rule, tail probabilities and :func:`decide`
* replay   - completed-record replay and minimum sufficient budgets (``stopwise.replay.replay``)
* early    - early outcome prediction within a task (loaded on first use: it imports LightGBM)
* finality - completion arguments, open-effects records and the controlled delayed-write replay
* ingest   - SWE-bench, Inspect AI, tau2-bench, Harbor / Terminal-Bench and HAL logs to outcome rows
  (``stopwise.ingest.ingest``)
* ledger   - the durable decision ledger: outcome events and a hash-chained decision history in
  SQLite or PostgreSQL (:func:`open_ledger`)

Every name but the errors is loaded on first use (PEP 562 module ``__getattr__``), so that
``import stopwise`` and the ``stopwise`` command start without pandas, scikit-learn, LightGBM or
matplotlib. **To export a name, add its import inside the ``if TYPE_CHECKING:`` block below** (and to
``__all__``): that block is the one list of lazy exports, read by :func:`__getattr__`.

The subpackages keep their own names: ``stopwise.replay`` and ``stopwise.ingest`` are modules, not
the functions of the same name.
"""

import importlib as _importlib
import importlib.util as _importlib_util
import typing as _typing

from stopwise._version import __version__
from stopwise.errors import (
    ArgumentError,
    ComparisonError,
    CompletionArgumentError,
    EffectsRecordError,
    FileFormatError,
    InputError,
    LedgerError,
    LimitError,
    OutputExistsError,
    PolicyError,
    Problem,
    ServiceError,
    StopwiseError,
    TaskUniverseError,
    ValidationError,
)

if _typing.TYPE_CHECKING:  # the lazy exports: read at run time by _exports(), imported on first use
    from stopwise.compare import (
        BettingBoundary,
        PairedOutcomes,
        TailProbabilities,
        betting_boundary,
        budget_task_count,
        coverage_state,
        decide,
        exact_tails_from_counts,
        pair_outcomes,
        required_counts,
        tail_probabilities,
    )
    from stopwise.early import (
        DualHeadClassifier,
        EarlyEvaluation,
        EarlyMetrics,
        EarlyOutcomeModel,
        FamiliarityGuard,
        FoldAverageClassifier,
        GoldSolution,
        OnlineMonitor,
        PlattCalibrator,
        PrefixFeaturizer,
        RiskControl,
        RunMonitoring,
        TfidfLogisticModel,
        Verdict,
        early_metrics,
        halt_decision,
        learn_then_test,
        leave_one_out,
        make_variant,
        monitor_run,
    )
    from stopwise.early import (
        load_model as load_early_model,
    )
    from stopwise.finality import (
        ArgumentCheck,
        CompletionArgument,
        ControlledReplay,
        EffectEntry,
        EffectRoute,
        OpenEffectsRecord,
        Probe,
        ReplaySchedule,
        RunCheck,
        ScoredRun,
        Sweep,
        check_argument,
        check_runs,
        finality_rows,
        finality_schema,
        load_argument,
        load_effects_record,
        load_runs,
        parse_argument,
        parse_effects_record,
        run_controlled_replay,
    )
    from stopwise.ingest import (
        INGEST_FORMATS,
        IngestResult,
        SkippedRecord,
        detect_format,
        read_hal,
        read_harbor,
        read_inspect,
        read_swebench,
        read_tau2,
        source_flags,
    )
    from stopwise.ledger import (
        Ledger,
        open_ledger,
    )
    from stopwise.records import (
        ACTIONS,
        DEFAULT_POLICY_TOML,
        OUTCOME_COLUMNS,
        STATUSES,
        BudgetPolicy,
        BudgetState,
        CoveragePolicy,
        CoverageState,
        DecisionPolicy,
        DecisionRecord,
        Exclusion,
        FlagCount,
        FlagPolicy,
        GroupCoverage,
        OrderPolicy,
        OutcomeColumns,
        Policy,
        Step,
        Targets,
        TaskUniverse,
        Trajectory,
        UniverseState,
        iter_trajectories,
        load_policy,
        outcome_columns,
        outcome_frame,
        parse_policy,
        read_outcome_columns,
        read_outcome_files,
        read_outcomes,
        read_task_universe,
        read_trajectories,
        synthetic_benchmark,
        validate_outcomes,
        write_outcomes,
        write_trajectories,
    )
    from stopwise.replay import (
        DEFAULT_BUDGETS,
        STANDARD_POLICIES,
        ReplayResult,
        comparison_policies,
        cost_first_orders,
        coverage_aware_orders,
        neyman_orders,
        prepare_source,
        sufficiency,
        summarize,
        uniform_orders,
    )


def _exports() -> dict[str, tuple[str, str]]:
    """Exported name -> (module, attribute), from the ``from … import …`` lines of the TYPE_CHECKING block."""
    import ast
    from pathlib import Path

    found: dict[str, tuple[str, str]] = {}
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    for alias in statement.names:
                        found[alias.asname or alias.name] = (statement.module, alias.name)
    return found


_LAZY: dict[str, tuple[str, str]] = {}
"""Filled on first use by :func:`_exports`."""


def __getattr__(name: str) -> _typing.Any:
    if not _LAZY:
        _LAZY.update(_exports())
    if name in _LAZY:
        module, attribute = _LAZY[name]
        value = getattr(_importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    if not name.startswith("_") and _importlib_util.find_spec(f"{__name__}.{name}") is not None:
        return _importlib.import_module(f"{__name__}.{name}")  # a subpackage, e.g. stopwise.replay
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    if not _LAZY:
        _LAZY.update(_exports())
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ACTIONS",
    "DEFAULT_BUDGETS",
    "DEFAULT_POLICY_TOML",
    "INGEST_FORMATS",
    "OUTCOME_COLUMNS",
    "STANDARD_POLICIES",
    "STATUSES",
    "ArgumentCheck",
    "ArgumentError",
    "BettingBoundary",
    "BudgetPolicy",
    "BudgetState",
    "ComparisonError",
    "CompletionArgument",
    "CompletionArgumentError",
    "ControlledReplay",
    "CoveragePolicy",
    "CoverageState",
    "DecisionPolicy",
    "DecisionRecord",
    "DualHeadClassifier",
    "EarlyEvaluation",
    "EarlyMetrics",
    "EarlyOutcomeModel",
    "EffectEntry",
    "EffectRoute",
    "EffectsRecordError",
    "Exclusion",
    "FamiliarityGuard",
    "FileFormatError",
    "FlagCount",
    "FlagPolicy",
    "FoldAverageClassifier",
    "GoldSolution",
    "GroupCoverage",
    "IngestResult",
    "InputError",
    "Ledger",
    "LedgerError",
    "LimitError",
    "OnlineMonitor",
    "OpenEffectsRecord",
    "OrderPolicy",
    "OutcomeColumns",
    "OutputExistsError",
    "PairedOutcomes",
    "PlattCalibrator",
    "Policy",
    "PolicyError",
    "PrefixFeaturizer",
    "Probe",
    "Problem",
    "ReplayResult",
    "ReplaySchedule",
    "RiskControl",
    "RunCheck",
    "RunMonitoring",
    "ScoredRun",
    "ServiceError",
    "SkippedRecord",
    "Step",
    "StopwiseError",
    "Sweep",
    "TailProbabilities",
    "Targets",
    "TaskUniverse",
    "TaskUniverseError",
    "TfidfLogisticModel",
    "Trajectory",
    "UniverseState",
    "ValidationError",
    "Verdict",
    "__version__",
    "betting_boundary",
    "budget_task_count",
    "check_argument",
    "check_runs",
    "comparison_policies",
    "cost_first_orders",
    "coverage_aware_orders",
    "coverage_state",
    "decide",
    "detect_format",
    "early_metrics",
    "exact_tails_from_counts",
    "finality_rows",
    "finality_schema",
    "halt_decision",
    "iter_trajectories",
    "learn_then_test",
    "leave_one_out",
    "load_argument",
    "load_early_model",
    "load_effects_record",
    "load_policy",
    "load_runs",
    "make_variant",
    "monitor_run",
    "neyman_orders",
    "open_ledger",
    "outcome_columns",
    "outcome_frame",
    "pair_outcomes",
    "parse_argument",
    "parse_effects_record",
    "parse_policy",
    "prepare_source",
    "read_hal",
    "read_harbor",
    "read_inspect",
    "read_outcome_columns",
    "read_outcome_files",
    "read_outcomes",
    "read_swebench",
    "read_task_universe",
    "read_tau2",
    "read_trajectories",
    "required_counts",
    "run_controlled_replay",
    "source_flags",
    "sufficiency",
    "summarize",
    "synthetic_benchmark",
    "tail_probabilities",
    "uniform_orders",
    "validate_outcomes",
    "write_outcomes",
    "write_trajectories",
]
