"""The one canonical JSON (stopwise._canonical): the bytes every digest hashes, written in one place."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stopwise._canonical import canonical_json

SOURCE = Path(__file__).resolve().parents[1] / "src" / "stopwise"

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_the_bytes_are_those_every_digest_was_taken_over_before(value: object) -> None:
    """The three spellings it replaced (policy and universe: defaults; ledger: ASCII, no NaN) give the same text."""
    before_records = json.dumps(value, sort_keys=True, separators=(",", ":"))
    before_ledger = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    assert canonical_json(value) == before_records == before_ledger
    assert json.loads(canonical_json(value)) == value


def test_a_known_value() -> None:
    assert canonical_json({"b": 1.0, "a": [None, "é", True], "c": {"z": 1, "y": "x y"}}) == (
        '{"a":[null,"\\u00e9",true],"b":1.0,"c":{"y":"x y","z":1}}'
    )


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_float_is_refused_unless_asked_for(bad: float) -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        canonical_json({"x": [bad]})
    assert canonical_json({"x": [bad]}, allow_nan=True) == json.dumps({"x": [bad]}, separators=(",", ":"))


def test_the_default_policy_digest_is_unchanged() -> None:
    """docs/history.md: the paper's primary policy's sha256 (the default's from the [decision] section to issue 35) is
    9e761cc1…; the default's since issue 35 (exact-wor on a uniform order, tolerant coverage) is e9e722c0…"""
    from stopwise.records import Policy

    assert Policy.paper().sha256().startswith("9e761cc1")
    assert Policy().sha256().startswith("e9e722c0")


def test_no_module_writes_canonical_json_by_hand() -> None:
    """Compact separators with sorted keys appear in stopwise._canonical only (one form, one place)."""
    pattern = re.compile(r"""separators=\(\s*["'],["']\s*,\s*["']:["']\s*\)""")
    found = [
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if path.name != "_canonical.py" and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []
