"""The public names of stopwise.finality: sorted, complete, importable, and light to import."""

from __future__ import annotations

import subprocess
import sys

import pytest

import stopwise.finality as finality


def test_unknown_attribute_is_an_attribute_error() -> None:
    # sorted / complete / importable: the one parametrised test in tests/test_exports.py
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
