"""The public API: ``__all__`` is sorted, complete and importable, in the package and each subpackage.

The top-level namespace is pinned (``HEADLINE``): the headline verbs and types, at most 40 names; every
other name lives in its subpackage, and the names that moved or were renamed at 0.1 still resolve for
one release with a :class:`DeprecationWarning` that names their new home.
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

RENAMED = [  # (module, old name, new name): deprecated aliases kept for one release
    ("stopwise", "ControlledReplay", "stopwise.finality.DelayedWriteReplay"),
    ("stopwise", "load_runs", "stopwise.finality.read_scored_runs"),
    ("stopwise", "outcome_frame", "stopwise.records.outcome_frame"),
    ("stopwise", "OnlineMonitor", "stopwise.early.OnlineMonitor"),
    ("stopwise", "DEFAULT_BUDGETS", "stopwise.replay.DEFAULT_BUDGETS"),
    ("stopwise.replay", "replay", "stopwise.replay.replay_grid"),
    ("stopwise.replay", "replay_policy", "stopwise.replay.replay_source_grid"),
    ("stopwise.replay", "live_replay", "stopwise.replay.replay_looks"),
    ("stopwise.replay", "replay_live", "stopwise.replay.replay_source_looks"),
    ("stopwise.finality", "ControlledReplay", "stopwise.finality.DelayedWriteReplay"),
    ("stopwise.finality", "load_runs", "stopwise.finality.read_scored_runs"),
    ("stopwise.inspect", "Ledger", "stopwise.ledger.Ledger"),
]


def _resolve(dotted: str) -> object:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_top_level_is_the_headline_set() -> None:
    assert set(stopwise.__all__) == HEADLINE
    assert len(stopwise.__all__) <= 40


def test_dir_lists_the_headline_names_and_the_subpackages_only() -> None:
    public = {n for n in dir(stopwise) if not n.startswith("_")}
    modules = {n for n in public if isinstance(getattr(stopwise, n), type(stopwise))}
    assert public - modules == HEADLINE - {"__version__"}
    assert public & set(stopwise._MOVED) == set()


@pytest.mark.parametrize(("module", "old", "new"), RENAMED)
def test_a_deprecated_name_warns_and_resolves_to_its_new_home(module: str, old: str, new: str) -> None:
    package = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{module}\.{old} is deprecated .*use {new}\b"):
        value = getattr(package, old)
    assert value is _resolve(new)
    with pytest.warns(DeprecationWarning):  # not cached: every use warns
        assert getattr(package, old) is value
    assert old not in dir(package)
    assert old not in package.__all__


def test_from_import_of_a_deprecated_name_warns() -> None:
    with pytest.warns(DeprecationWarning, match="stopwise.records.validate_outcomes"):
        from stopwise import validate_outcomes
    assert validate_outcomes is stopwise.records.validate_outcomes


def test_every_former_top_level_name_still_resolves() -> None:
    """Each of the 128 pre-0.1 top-level names is a headline name or resolves, warning, to its new home."""
    assert len(set(stopwise._MOVED) | HEADLINE - {"replay_grid", "replay_looks"}) == 128
    assert set(stopwise._MOVED) & HEADLINE == set()
    for old, home in stopwise._MOVED.items():
        module, _, attribute = home.partition(":")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = getattr(stopwise, old)
        assert [w.category for w in caught] == [DeprecationWarning], old
        assert module in str(caught[0].message)
        assert value is getattr(importlib.import_module(module), attribute)
