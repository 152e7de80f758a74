"""The replay settings: typed records whose JSON form is the settings.json of a replay folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stopwise.errors import FileFormatError
from stopwise.records import synthetic_benchmark
from stopwise.replay import (
    LiveReplaySettings,
    ReplaySettings,
    prepare_source,
    replay_grid,
    replay_looks,
    replay_source_looks,
)


@pytest.fixture(scope="module")
def records() -> dict[str, object]:
    return {"s": synthetic_benchmark(60, 3, rng=0)}


def test_grid_settings_are_typed_and_written_as_their_dict(records: dict, tmp_path: Path) -> None:
    result = replay_grid(records, n_orders=5, thresholds=[0.0, 0.05], budgets=[0.2, 0.5])
    settings = result.settings
    assert isinstance(settings, ReplaySettings)
    assert settings.thresholds == (0.0, 0.05) and settings.budgets == (0.2, 0.5) and settings.n_orders == 5
    assert settings.measure == "task_fraction" and set(settings.policies) == {"primary"}
    assert list(settings.to_dict()) == [
        "stopwise_version", "policies", "thresholds", "budgets", "n_orders", "measure", "scope", "min_coverage",
        "min_shared", "excluded_systems", "excluded_rows", "notes", "excluded_pairs",
    ]
    result.write(tmp_path / "out")
    written = json.loads((tmp_path / "out" / "settings.json").read_text())
    assert written == settings.to_dict() and written["thresholds"] == [0.0, 0.05]
    assert ReplaySettings.from_dict(written) == settings


def test_live_settings_of_one_source_and_of_several(records: dict) -> None:
    one = replay_source_looks(prepare_source(records["s"], "s"), thresholds=[0.0], n_orders=4, looks=5).settings
    assert isinstance(one, LiveReplaySettings) and one.looks == 5 and one.rules == ("betting-wor", "fixed-budget")
    assert one.policy_sha256 is not None and one.policies is None
    assert list(one.to_dict()) == [
        "stopwise_version", "thresholds", "n_orders", "looks", "fixed_looks", "rules", "strategy", "truth", "policy", "policy_sha256",
    ]
    several = replay_looks(records, thresholds=[0.0], n_orders=4, looks=5).settings
    assert several.policy is None and several.sources == ("s",) and several.min_shared == 1
    assert list(several.to_dict()) == [
        "stopwise_version", "thresholds", "n_orders", "looks", "fixed_looks", "rules", "strategy", "truth", "policies", "sources",
        "min_coverage", "min_shared",
    ]
    assert LiveReplaySettings.from_dict(json.loads(json.dumps(several.to_dict()))) == several


def test_settings_are_no_dict_any_more(records: dict) -> None:
    """The dict access kept through 0.1 (``settings["n_orders"]``) is gone in 0.2: read the attribute or ``to_dict()``."""
    settings = replay_grid(records, n_orders=5, thresholds=[0.0], budgets=[0.5]).settings
    assert settings.n_orders == 5 and settings.to_dict()["n_orders"] == 5
    with pytest.raises(TypeError, match="not subscriptable"):
        settings["n_orders"]  # type: ignore[index]
    assert not hasattr(settings, "get")


def test_reading_settings_without_their_fields_names_them() -> None:
    with pytest.raises(FileFormatError, match=r"out/settings.json: field\(s\) stopwise_version, policies, .* missing"):
        ReplaySettings.from_dict({}, source="out/settings.json")
