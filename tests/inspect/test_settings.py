"""The extension's settings: four sources, each overriding the earlier ones; bad values named with their source."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise.errors import InputError
from stopwise.inspect._settings import find_pyproject, settings_from


def test_each_source_overrides_the_earlier_ones(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.stopwise]\nledger = "sqlite:///a.db"\ntested = "m/a"\nbaseline = "m/b"\npolicy = "p.toml"\npace = 3\n'
    )
    (tmp_path / "sub").mkdir()
    path = find_pyproject(tmp_path / "sub")
    assert path == tmp_path / "pyproject.toml"
    s = settings_from(path, {"STOPWISE_TESTED": "m/env", "STOPWISE_PACE": "none", "STOPWISE_MAX_DEPTH": "3"},
                      {"stopwise_tested": "m/meta", "stopwise_refresh": "0.5", "other": 1}, {"tested": "m/T"})
    assert (s.ledger, s.tested, s.baseline, s.pace, s.refresh) == ("sqlite:///a.db", "m/T", "m/b", None, 0.5)
    assert s.policy == str(tmp_path / "p.toml")  # relative to the pyproject.toml
    assert s.sources["tested"] == "-T" and s.sources["pace"] == "environment STOPWISE_PACE"
    assert s.sources["refresh"] == "--metadata" and s.sources["baseline"].endswith("[tool.stopwise]")
    assert s.enabled
    assert not settings_from(path, {"STOPWISE_ENABLED": "off"}).enabled
    assert not settings_from({}, {}).enabled  # nothing configured: no ledger


@pytest.mark.parametrize(("source", "message"), [
    ({"pace": 0}, r"pyproject.toml \[tool.stopwise\]: `pace` must be a number of samples >= 1 or 'none'; got 0"),
    ({"enabled": "maybe"}, r"`enabled` must be true or false; got 'maybe'"),
    ({"ledgr": "x"}, r"`ledgr`: unknown setting; stopwise's Inspect settings are enabled, ledger"),
    ({"refresh": "-1"}, r"`refresh` must be a number of seconds >= 0"),
])
def test_a_bad_value_names_its_source_and_field(source: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        settings_from(source)
    with pytest.raises(InputError, match="environment"):
        settings_from(None, {"STOPWISE_PACE": "two"})
