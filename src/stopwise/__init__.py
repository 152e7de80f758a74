"""stopwise: when may an LLM-agent evaluation stop, and what may it claim?

The public API, assembled from the subpackages:

* records  - outcome rows, trajectories, the comparison policy and the decision record
* compare  - pairing, the coverage rule, tail probabilities and :func:`decide`
* replay   - completed-record replay and minimum sufficient budgets (``stopwise.replay.replay``)
* early    - early outcome prediction within a task (loaded on first use: it imports LightGBM)
* finality - completion arguments, open-effects records and the controlled delayed-write replay
* ingest   - SWE-bench, Inspect AI, tau2-bench, Harbor / Terminal-Bench and HAL logs to outcome rows
  (``stopwise.ingest.ingest``)

The subpackages keep their own names: ``stopwise.replay`` and ``stopwise.ingest`` are modules, not
the functions of the same name.
"""

import importlib as _importlib
import typing as _typing

from stopwise._version import __version__
from stopwise.compare import (
    PairedOutcomes,
    TailProbabilities,
    budget_task_count,
    coverage_state,
    decide,
    exact_tails_from_counts,
    pair_outcomes,
    required_counts,
    tail_probabilities,
)
from stopwise.errors import (
    ComparisonError,
    CompletionArgumentError,
    EffectsRecordError,
    FileFormatError,
    InputError,
    PolicyError,
    Problem,
    ServiceError,
    StopwiseError,
    TaskUniverseError,
    ValidationError,
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
    GroupCoverage,
    OrderPolicy,
    Policy,
    Step,
    Targets,
    TaskUniverse,
    Trajectory,
    UniverseState,
    iter_trajectories,
    load_policy,
    outcome_frame,
    parse_policy,
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

if _typing.TYPE_CHECKING:
    from stopwise.early import (
        DualHeadClassifier,
        EarlyEvaluation,
        EarlyMetrics,
        EarlyOutcomeModel,
        GoldSolution,
        OnlineMonitor,
        PlattCalibrator,
        PrefixFeaturizer,
        TfidfLogisticModel,
        Verdict,
        early_metrics,
        halt_decision,
        leave_one_out,
    )
    from stopwise.early import (
        load_model as load_early_model,
    )

_LAZY = {
    "DualHeadClassifier": ("stopwise.early", "DualHeadClassifier"),
    "EarlyEvaluation": ("stopwise.early", "EarlyEvaluation"),
    "EarlyMetrics": ("stopwise.early", "EarlyMetrics"),
    "EarlyOutcomeModel": ("stopwise.early", "EarlyOutcomeModel"),
    "GoldSolution": ("stopwise.early", "GoldSolution"),
    "OnlineMonitor": ("stopwise.early", "OnlineMonitor"),
    "PlattCalibrator": ("stopwise.early", "PlattCalibrator"),
    "PrefixFeaturizer": ("stopwise.early", "PrefixFeaturizer"),
    "TfidfLogisticModel": ("stopwise.early", "TfidfLogisticModel"),
    "Verdict": ("stopwise.early", "Verdict"),
    "early_metrics": ("stopwise.early", "early_metrics"),
    "halt_decision": ("stopwise.early", "halt_decision"),
    "leave_one_out": ("stopwise.early", "leave_one_out"),
    "load_early_model": ("stopwise.early", "load_model"),
}
"""Names loaded on first use, so that ``import stopwise`` does not import LightGBM."""


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        module, attribute = _LAZY[name]
        value = getattr(_importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
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
    "FileFormatError",
    "GoldSolution",
    "GroupCoverage",
    "IngestResult",
    "InputError",
    "OnlineMonitor",
    "OpenEffectsRecord",
    "OrderPolicy",
    "PairedOutcomes",
    "PlattCalibrator",
    "Policy",
    "PolicyError",
    "PrefixFeaturizer",
    "Probe",
    "Problem",
    "ReplayResult",
    "ReplaySchedule",
    "RunCheck",
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
    "leave_one_out",
    "load_argument",
    "load_early_model",
    "load_effects_record",
    "load_policy",
    "load_runs",
    "neyman_orders",
    "outcome_frame",
    "pair_outcomes",
    "parse_argument",
    "parse_effects_record",
    "parse_policy",
    "prepare_source",
    "read_hal",
    "read_harbor",
    "read_inspect",
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
