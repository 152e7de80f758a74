"""The public API: ``__all__`` is sorted, complete and importable, in the package and each subpackage."""

from __future__ import annotations

import importlib
import subprocess
import sys

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
    code = "import sys, stopwise; assert 'lightgbm' not in sys.modules; stopwise.OnlineMonitor; assert 'lightgbm' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_top_level_lists_every_public_name() -> None:
    public = {n for n in dir(stopwise) if not n.startswith("_") and not isinstance(getattr(stopwise, n), type(stopwise))}
    assert public - set(stopwise.__all__) == set()


def test_subpackages_are_not_shadowed_by_functions() -> None:
    for name in ("records", "compare", "replay", "early", "finality", "ingest"):
        module = importlib.import_module(f"stopwise.{name}")
        assert getattr(stopwise, name) is module
