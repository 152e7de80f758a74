"""The family page (``stopwise leaderboard --html``) opened in real headless Chromium with the network off."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from tests.conftest import shared_path

from stopwise.cli.main import main

if TYPE_CHECKING:
    from tests.report.conftest import Browser

pytestmark = [pytest.mark.data, pytest.mark.integration]  # Chromium (browser-bound)


def test_the_leaderboard_page_draws_tiers_and_the_matrix_offline(browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = shared_path("records", "swebench_verified", "outcomes.csv")
    page = tmp_path / "leaderboard.html"
    assert main(["leaderboard", str(outcomes), "--complete", "--html", str(page)]) == 2
    capsys.readouterr()
    seen = browser.render(page, tmp_path / "leaderboard.png")
    assert seen.page_errors == [] and seen.console_errors == [] and seen.blocked == []
    assert len(seen.charts) == 2 and all(chart["svg"] >= 1 and chart["points"] >= 1 for chart in seen.charts)
    assert "FWER 5 %" in seen.answer and "the top 8" in seen.answer and "task distribution" in seen.answer
    tiers, matrix = seen.charts
    assert tiers["points"] >= 36 and matrix["points"] == 36 * 35  # every ordered pair is a square
    assert seen.screenshot is not None and seen.screenshot.stat().st_size > 20_000
