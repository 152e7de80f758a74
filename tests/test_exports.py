"""The public API: ``__all__`` is sorted, complete and importable, in the package and each subpackage.

The top-level namespace is pinned (``HEADLINE``): the headline verbs and types, at most 40 names; every
other name lives in its subpackage. Each subpackage's ``__all__`` is pinned too (``PUBLIC``): what a user calls
and what another stopwise package needs of it, nothing else (0.2 moved the rest to private access in its
package: docs/history.md). The deprecated aliases of 0.1 (the former top-level names, the renamed names) are
gone in 0.2 (``REMOVED``).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

import stopwise


def _isort_key(name: str) -> tuple[int, str]:
    """isort-style order (as ruff's RUF022): CONSTANTS, then Classes, then functions."""
    if name.isupper() or (name.upper() == name and "_" in name):
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


PACKAGES = [
    "stopwise",
    "stopwise.records",
    "stopwise.compare",
    "stopwise.replay",
    "stopwise.early",
    "stopwise.finality",
    "stopwise.ingest",
    "stopwise.ledger",
    "stopwise.live",
    "stopwise.inspect",
    "stopwise.report",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported)
    for item in exported:
        assert hasattr(module, item), f"{name}.{item} is listed in __all__ but missing"


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_attribute_is_exported(name: str) -> None:
    module = importlib.import_module(name)
    public = {n for n in dir(module) if not n.startswith("_") and not isinstance(getattr(module, n), type(stopwise))}
    assert public - set(module.__all__) == set(), f"{name} has public names missing from __all__"


def test_importing_stopwise_does_not_import_lightgbm() -> None:
    code = "import sys, stopwise; assert 'lightgbm' not in sys.modules; stopwise.EarlyOutcomeModel; assert 'lightgbm' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_top_level_lists_every_public_name() -> None:
    public = {n for n in dir(stopwise) if not n.startswith("_") and not isinstance(getattr(stopwise, n), type(stopwise))}
    assert public - set(stopwise.__all__) == set()


def test_subpackages_are_not_shadowed_by_functions() -> None:
    for name in ("records", "compare", "replay", "early", "finality", "ingest"):
        module = importlib.import_module(f"stopwise.{name}")
        assert getattr(stopwise, name) is module


HEADLINE = {
    # records: the outcome-row contract, the policy, the task universe, the decision record
    "ACTIONS",
    "OUTCOME_COLUMNS",
    "DecisionRecord",
    "OutcomeColumns",
    "Policy",
    "TaskUniverse",
    "Trajectory",
    "load_policy",
    "outcome_columns",
    "read_outcomes",
    "read_task_universe",
    "read_trajectories",
    "write_outcomes",
    # compare and replay
    "decide",
    "pair_outcomes",
    "tail_probabilities",
    "replay_grid",
    "replay_looks",
    # ledger, early, finality
    "open_ledger",
    "EarlyOutcomeModel",
    "load_early_model",
    "check_argument",
    "check_runs",
    "load_argument",
    # errors: the base class and those a caller catches
    "StopwiseError",
    "InputError",
    "FileFormatError",
    "ValidationError",
    "PolicyError",
    "ComparisonError",
    "TaskUniverseError",
    "OutputExistsError",
    "LedgerError",
    "__version__",
}

PUBLIC = {  # each subpackage's facade, pinned: a name added or removed here is a decision (docs/history.md); 283 names, 340 at 0.1; 311 with issue 32's families, 316 with issue 33's next tasks
    "stopwise.records": set(
        "ACTIONS ACTION_CODE AUDITED_FLAG BOUNDARIES COMPUTED_TAIL_METHODS COVERAGE_RULES DEFAULT_POLICY_TOML "
        "EXCLUSION_CODES EXCLUSION_REASONS FLAG_SEPARATOR OUTCOME_COLUMNS PREDICTED_CENTRES PREDICTED_FLAG "
        "PREDICTED_TREATMENTS STAMP_COLUMNS STATUSES TAIL_METHODS TEXT_COLUMNS WARNING_CODES WORKER_STATES "
        "WOULD_HALT_FLAGS Action Boundary BudgetPolicy BudgetState ComputedTailMethod CoveragePolicy "
        "CoverageRule CoverageState DecisionPolicy DecisionRecord DecisionWarning DifferenceInterval "
        "EarlyPolicy Exclusion ExclusionCode FlagCount FlagPolicy GroupCoverage LedgerPosition MissingState "
        "OrderPolicy OrderStamp OutcomeColumns Policy PredictedCentre PredictedState PredictedTreatment "
        "RemainingForecast Status Step TailMethod TailProvenance Targets TaskUniverse Trajectory "
        "UniverseState WarningCode WorkerState audit_draw factorize flag_mask format_of is_audited "
        "iter_trajectories load_policy order_digest outcome_columns parse_policy read_outcomes read_table "
        "read_task_universe read_trajectories synthetic_benchmark write_outcomes write_trajectories"
        # issue 32: the family record, its policy section and the words a user matches on
        " ESTIMANDS FAMILY_CONTROLS FAMILY_KINDS Estimand FamilyControl FamilyKind FamilyPair FamilyPolicy FamilyRecord"
        " FamilyTier SystemRank"
        " EstimandState PAPER_POLICY_TOML"  # issue 35: what a decision record's interval and action are about
        .split()
    ),
    "stopwise.compare": set(
        "ABSTAIN CONTINUE MIN_OBSERVED PROMOTE REJECT ActiveAudits AuditTallies BettingBoundary BettingPaths "
        "DemoComparison OutcomeCells PairedOutcomes TailProbabilities TunedValues betting_boundary betting_paths "
        "budget_task_count check_betting_order claim_sentence cost_first_orders coverage_aware_orders coverage_deadlines "
        "coverage_state decide demo_comparison exact_tails_from_counts exact_wor_tails_from_counts "
        "exceeds_threshold input_digest interval_text lattice_of lattice_threshold neyman_from_draws "
        "neyman_orders normal_tails_from_moments order_check order_universe outcome_cells pair_outcomes "
        "powered_boundary powered_paths powered_scale required_counts resolve_strategy routine_actions "
        "serfling_tails_from_moments stratified_draws tail_probabilities task_order top_up_ends tuned_paths "
        "uniform_orders"
        # issue 32: deciding a family, and the hypotheses and controls the family replay reruns
        " FamilyHypotheses claim_looks closed_e_test decide_family e_bh family_hypotheses p_value_claims stopped_e_bh"
        # issue 33: the tasks to run next (a user's call), and what replay takes for the tolerant rule and the in-order run
        " NextTask NextTasks next_tasks coverage_enforced in_order_ends"
        .split()
    ),
    "stopwise.replay": set(
        "DEFAULT_BUDGETS JOINT_MODES LIVE_RULES REPLAY_POLICY STANDARD_POLICIES JointReplay LiveReplay "
        "LiveReplaySettings PolicyReplay ReplayPair ReplayResult ReplaySettings ReplaySource "
        "comparison_policies joint_halts joint_rows live_looks pair_orders prepare_source "
        "replay_grid replay_joint replay_looks replay_source_grid replay_source_looks source_table "
        "sufficiency summarize summary_table synthetic_trajectories table_two"
        # issue 32: the family replay and the seeded families
        " FAMILY_REPLAY_CONTROLS FamilyReplay family_claim_runs family_error_rates family_populations replay_family"
        " simulate_family"
        " ExceedanceVerdict exceedance_verdict"  # issue 35: chance exceedances are no failure
        .split()
    ),
    "stopwise.early": set(
        "DEPLOYED_HEADS EVALUATION_KIND EXCLUDABLE FORMAT_VERSION THRESHOLDS VARIANTS DualHeadClassifier "
        "EarlyEvaluation EarlyMetrics EarlyOutcomeModel FamiliarityGuard FoldAverageClassifier GoldSolution "
        "OnlineMonitor PlattCalibrator PrefixFeaturizer PrefixStream RiskControl RunMonitoring "
        "TfidfLogisticModel Verdict check_output_dir early_metrics halt_decision learn_then_test "
        "leave_one_out load_model make_variant monitor_run read_gold read_runs"
        .split()
    ),
    "stopwise.finality": set(
        "EXAMPLE_ARGUMENTS REPLAY_CONDITIONS SCHEMA_NAMES ArgumentCheck CompletionArgument ConditionResult "
        "ConditionSummary DelayedWriteReplay EffectEntry EffectRoute LocalService OpenEffectsRecord "
        "OutcomeSpec Probe ProtocolSpec ReplayCount ReplaySchedule RouteSpec RunCheck ScoredRun ScoringSpec "
        "ServiceStore Sweep ToolCall TrialObservation arun_controlled_replay check_argument check_runs "
        "create_service_app example_argument example_text finality_rows finality_schema load_argument "
        "load_effects_record parse_argument parse_effects_record read_scored_runs run_controlled_replay"
        .split()
    ),
    "stopwise.ingest": set(
        "INGEST_FORMATS SYSTEM_SOURCES IngestResult SkippedRecord detect_format ingest options_iv read_hal "
        "read_harbor read_inspect read_swebench read_tau2 system_template"
        .split()
    ),
    "stopwise.ledger": set(
        "LEDGER_MODES SCHEMA_VERSION VOLATILE_RECORD_FIELDS AppendResult EventKey EventSnapshot Ledger LedgerDecision "
        "LedgerHead LedgerLook LedgerMode Mismatch Registration VerifyResult WorkerNotice canonical_json chain_digest "
        "event_digest genesis_digest ledger_url open_ledger"
        .split()
    ),
    "stopwise.live": set(
        "FollowLook InspectLogDir LiveDecision LogLook Look RunFolder follow follow_inspect_logs follow_run_folder "
        "run_folder_kind"
        .split()
    ),
    "stopwise.inspect": set(
        "LiveHalting ModelPairEarlyStopping PairedComparison PairedSpec SystemEarlyStopping "
        "paired_early_stopping paired_manager paired_model_early_stopping planned_order steps_from_inspect "
        "FamilyRace FamilySpec ModelFamilyStopping SystemRaceStopping family_early_stopping family_model_early_stopping"
        .split()
    ),
    "stopwise.report": set(
        "REPORT_KINDS Report build_report decision_report detect_kind early_report finality_report "
        "ledger_report read_decisions replay_report"
        " family_report read_family"  # issue 32
        .split()
    ),
}


REMOVED = [  # (module, name): the deprecated aliases of 0.1, removed in 0.2 (docs/history.md)
    ("stopwise", "ControlledReplay"),
    ("stopwise", "load_runs"),
    ("stopwise", "outcome_frame"),
    ("stopwise", "OnlineMonitor"),
    ("stopwise", "DEFAULT_BUDGETS"),
    ("stopwise", "synthetic_benchmark"),
    ("stopwise", "validate_outcomes"),
    ("stopwise", "Ledger"),
    ("stopwise.replay", "replay"),
    ("stopwise.replay", "replay_policy"),
    ("stopwise.replay", "live_replay"),
    ("stopwise.replay", "replay_live"),
    ("stopwise.finality", "ControlledReplay"),
    ("stopwise.finality", "load_runs"),
    ("stopwise.inspect", "Ledger"),
    ("stopwise.ledger", "follow"),
    ("stopwise.ledger", "follow_inspect_logs"),
    ("stopwise.records", "outcome_frame"),
    ("stopwise.records", "read_outcome_columns"),
    ("stopwise.records", "read_outcome_files"),
    ("stopwise.records", "read_file_columns"),
    ("stopwise.records", "validate_outcomes"),
    ("stopwise.records", "columns_of_frame"),
    ("stopwise.ingest", "source_flags"),
]


def test_top_level_is_the_headline_set() -> None:
    assert set(stopwise.__all__) == HEADLINE
    assert len(stopwise.__all__) <= 40


def test_dir_lists_the_headline_names_and_the_subpackages_only() -> None:
    public = {n for n in dir(stopwise) if not n.startswith("_")}
    modules = {n for n in public if isinstance(getattr(stopwise, n), type(stopwise))}
    assert public - modules == HEADLINE - {"__version__"}


@pytest.mark.parametrize("name", PACKAGES[1:])
def test_each_subpackage_exports_its_pinned_names(name: str) -> None:
    """0.2 shrank the facades to what a user calls and what another stopwise package needs (docs/history.md)."""
    exported = set(importlib.import_module(name).__all__)
    assert exported - PUBLIC[name] == set(), f"{name} exports names not pinned here"
    assert PUBLIC[name] - exported == set(), f"{name} no longer exports pinned names"


@pytest.mark.parametrize(("module", "old"), REMOVED)
def test_a_deprecated_alias_of_0_1_is_gone(module: str, old: str) -> None:
    package = importlib.import_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no alias left that warns and resolves
        with pytest.raises(AttributeError, match=rf"{module!r} has no attribute {old!r}"):
            getattr(package, old)
    assert old not in dir(package)
