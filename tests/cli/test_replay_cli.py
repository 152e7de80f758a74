"""``stopwise replay`` in-process: outputs written, tables printed, bad input exits 4."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from stopwise import write_outcomes
from stopwise.cli.main import main
from stopwise.records import synthetic_benchmark


@pytest.fixture
def outcomes(tmp_path: Path) -> Path:
    return write_outcomes(synthetic_benchmark(80, 3, rng=0), tmp_path / "bench" / "outcomes.csv")


def test_replay_writes_records_and_tables_and_names_the_report_command(tmp_path: Path, outcomes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["replay", str(outcomes), "--orders", "12", "--policies", "primary,forced-uniform", "--thresholds", "0,0.05", "-o", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Minimum sufficient budgets — primary" in printed and "bench" in printed
    cases = pd.read_parquet(out / "cases.parquet")
    assert len(cases) == 6 * 2 * 19 * 2  # pairs x policies x budgets x thresholds
    assert set(cases["orders"]) == {12}
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary) == 2 * 2 * 19
    assert not [p for p in out.iterdir() if p.suffix in (".png", ".svg", ".html")]  # no figure: charts are on the report page
    assert f"charts: stopwise report {out}" in printed
    settings = json.loads((out / "settings.json").read_text())
    assert settings["n_orders"] == 12 and set(settings["policies"]) == {"primary", "forced-uniform"}


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--policies", "magic"], "unknown name(s) magic"),
        (["--thresholds", "zero"], "--thresholds must be comma-separated numbers"),
        (["--budgets", "0,0.5"], "`budgets` must be a non-empty list of fractions in (0, 1]"),
        (["--measure", "cost_usd"], "budget measure cost_usd needs cost_usd"),
    ],
)
def test_bad_options_exit_4(tmp_path: Path, outcomes: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str) -> None:
    frame = pd.read_csv(outcomes)
    if "cost_usd" in extra:
        frame = frame.drop(columns=["cost_usd"])
        write_outcomes(frame, outcomes)
    assert main(["replay", str(outcomes), "--orders", "3", *extra]) == 4
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_missing_file_exits_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "none.csv")]) == 4
    assert "no such file" in capsys.readouterr().err
