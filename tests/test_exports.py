"""The public API: ``__all__`` is sorted, complete and importable, in the package and each subpackage.

The top-level namespace is pinned (``HEADLINE``): the headline verbs and types, at most 40 names; every
other name lives in its subpackage. The deprecated aliases of 0.1 (the former top-level names, the renamed
names) are gone in 0.2 (``REMOVED``).
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


@pytest.mark.parametrize(("module", "old"), REMOVED)
def test_a_deprecated_alias_of_0_1_is_gone(module: str, old: str) -> None:
    package = importlib.import_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no alias left that warns and resolves
        with pytest.raises(AttributeError, match=rf"{module!r} has no attribute {old!r}"):
            getattr(package, old)
    assert old not in dir(package)
