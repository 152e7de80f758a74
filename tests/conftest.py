"""Shared fixtures: where ../shared/data lives, how a test that needs it behaves without it, and the Inspect
example script (docs/examples/inspect_live.py) the Inspect tests of several folders run."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("STOPWISE_SHARED_DATA", REPO.parent / "shared" / "data"))


INTEGRATION_DOCTESTS = ("stopwise.replay._joint.joint_halts",)
"""Doctests that train models (leave-one-out training of several folds): the integration lane runs them."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark :data:`INTEGRATION_DOCTESTS` ``integration`` (a doctest takes no decorator)."""
    for item in items:
        if item.name in INTEGRATION_DOCTESTS:
            item.add_marker(pytest.mark.integration)


def unavailable(message: str) -> None:
    """A test's requirement is missing: fail under CI=true (CI must not hide it), skip elsewhere."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"required under CI=true: {message}")
    pytest.skip(message)


def skip_without(module: str, install: str) -> None:
    """At a test module's top: skip the module when ``module`` is not installed, except under CI=true (where it is
    required: the module's own import of it then fails, and CI says so)."""
    if os.environ.get("CI", "").lower() != "true":
        pytest.importorskip(module, reason=f"{module} is not installed: {install}")


@contextmanager
def private_postgres() -> Iterator[str]:
    """A private PostgreSQL server (:func:`tests.support.pgtemp.temporary_postgres`): yield the URL of its
    ``postgres`` database, stop and remove it afterwards; fails under CI=true, skips elsewhere, when it cannot start."""
    from tests.support.pgtemp import temporary_postgres

    from stopwise.errors import LedgerError

    try:
        server = temporary_postgres()
        url = server.__enter__()
    except LedgerError as exc:
        unavailable(f"PostgreSQL: {exc}")
        raise
    try:
        yield url
    finally:
        server.__exit__(None, None, None)


def shared_path(*parts: str) -> Path:
    """Path under ../shared/data; fails under CI=true and skips elsewhere when it is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        unavailable(f"shared data missing: {path} (expected ../shared/data beside the project)")
    return path


@pytest.fixture
def shared_data() -> Path:
    """The ../shared/data folder (see :func:`shared_path`)."""
    return shared_path()


def load_example(filename: str) -> ModuleType:
    """Import the runnable example ``docs/examples/<filename>`` as a module (the docs show it unchanged)."""
    spec = importlib.util.spec_from_file_location(f"{Path(filename).stem}_example", REPO / "docs" / "examples" / filename)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def example() -> ModuleType:
    """docs/examples/inspect_live.py, imported once (its questions and mock systems)."""
    return load_example("inspect_live.py")
