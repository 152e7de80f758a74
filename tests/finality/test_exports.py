"""The public names of stopwise.finality: sorted, complete, importable, and light to import."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import stopwise.finality as finality


def test_all_is_sorted_isort_style() -> None:
    names = finality.__all__
    key = [(0 if n.isupper() else 1 if n[0].isupper() else 2, n) for n in names]
    assert key == sorted(key)
    assert len(set(names)) == len(names)


def test_all_names_exist_and_public_objects_are_listed() -> None:
    for name in finality.__all__:
        assert hasattr(finality, name), name
    public = {n for n in dir(finality) if not n.startswith("_") and not inspect.ismodule(getattr(finality, n))}
    assert public == set(finality.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = finality.nope  # type: ignore[attr-defined]


def test_importing_the_package_does_not_load_the_http_stack() -> None:
    code = (
        "import sys, stopwise; before = set(sys.modules); import stopwise.finality; "
        "print(sorted({'uvicorn', 'fastapi', 'httpx'} & (set(sys.modules) - before)))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
    assert finality.LocalService.__name__ == "LocalService"  # loaded on first use
