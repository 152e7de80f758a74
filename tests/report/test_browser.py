"""``stopwise report`` pages opened in real headless Chromium with the network off: every chart drawn, no console error.

The inputs are made by the commands a user runs: a replay of terminal_bench_2 (small settings), a
``decide --json`` record, an ``early evaluate -o`` folder and a ``finality check --json`` result.
Each page is screenshotted into the test's temporary folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pytest
from tests.support.report_inputs import looked_ledger, synthetic_runs

from stopwise.cli.main import main

if TYPE_CHECKING:
    from tests.report.conftest import Browser, Rendered

pytestmark = [pytest.mark.data, pytest.mark.integration]  # Chromium (browser-bound)


def _assert_clean(seen: Rendered, n_charts: int) -> None:
    assert seen.page_errors == [], seen.page_errors
    assert seen.console_errors == [], seen.console_errors
    assert seen.blocked == [], f"requests left the page: {seen.blocked}"
    assert seen.dialogs == []
    assert len(seen.charts) == n_charts
    for chart in seen.charts:
        assert chart["svg"] >= 1, chart
        assert chart["data"] >= 1 and chart["traces"] >= 1, chart
        assert chart["points"] >= 1, f"an empty chart: {chart}"  # a panel with nothing to draw is a sentence (p.note) instead
        assert chart["title"] and len(chart["caption"]) > 80, chart
    assert seen.screenshot is not None and seen.screenshot.stat().st_size > 20_000
    assert len(seen.answer) > 40, "no answer block first on the page"
    assert seen.text.index("Answer") < seen.text.index(seen.answer[-20:]) < len(seen.text) // 2 + len(seen.answer)
    for note in seen.notes:
        assert len(note) > 40 and ("not drawn" in note or "pending" in note or note.endswith(".")), note
    assert seen.size < 1_500_000 + 200_000 * n_charts, f"{seen.size} bytes"


@pytest.fixture(scope="module")
def replay_page(tmp_path_factory: pytest.TempPathFactory, terminal_bench_2: Path) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("replay")
    outcomes = terminal_bench_2
    code = main(["replay", str(outcomes), "-k", "20", "--thresholds", "0,0.05", "--budgets", "0.1,0.25,0.5,0.75", "-o", str(folder / "out")])
    assert code == 0
    assert main(["report", str(folder / "out"), "-o", str(folder / "replay.html")]) == 0
    return folder / "out", folder / "replay.html"


def test_replay_report_renders_offline(browser: Browser, replay_page: tuple[Path, Path], tmp_path: Path) -> None:
    _, html = replay_page
    seen = browser.render(html, tmp_path / "replay.png")
    _assert_clean(seen, n_charts=6)  # unresolved, errors and stopping time at 0 and 5 pp
    assert "terminal_bench_2" in seen.text and "Minimum sufficient budgets" in seen.text
    titles = [c["title"] for c in seen.charts]
    assert titles[0] == "Unresolved comparisons at the 0 pp threshold" and titles[3] == "Unresolved comparisons at the 5 pp threshold"
    assert "shaded band" in seen.charts[0]["caption"]


def test_replay_chart_values_are_the_summary(browser: Browser, replay_page: tuple[Path, Path], tmp_path: Path) -> None:
    """The drawn unresolved line is the replay's summary.csv (percent, to float precision)."""
    folder, html = replay_page
    summary = pd.read_csv(folder / "summary.csv")
    expected = summary[np.isclose(summary["threshold"], 0.0)].sort_values("budget")
    page = browser.context.new_page()
    page.goto(html.resolve().as_uri())
    page.wait_for_function("() => document.querySelector('#chart-2-0 svg.main-svg')")
    drawn = page.evaluate(
        "() => document.getElementById('chart-2-0')._fullData.filter(t => t.name === 'terminal_bench_2')"
        ".map(t => ({x: Array.from(t.x), y: Array.from(t.y)}))[0]"
    )
    page.close()
    np.testing.assert_allclose(drawn["x"], 100 * expected["budget"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(drawn["y"], 100 * expected["unresolved"].to_numpy(), rtol=1e-12)


def test_decision_report_renders_offline(browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str], terminal_bench_2: Path) -> None:
    outcomes = terminal_bench_2
    code = main(["decide", str(outcomes), "-t", "Mux__GPT-5.2", "-b", "MAYA__Claude-4.5-sonnet", "--json"])
    assert code in (0, 1, 2, 3)
    record = tmp_path / "decision.json"
    record.write_text(capsys.readouterr().out)
    assert main(["report", str(record)]) == 0
    seen = browser.render(tmp_path / "decision.html", tmp_path / "decision.png")
    _assert_clean(seen, n_charts=3)  # path of the estimate, tails, coverage
    data = json.loads(record.read_text())
    assert data["policy_sha256"] in seen.text and data["input_sha256"] in seen.text
    assert data["action"].upper() in seen.text
    assert data["action"].upper() in seen.answer and "Mux__GPT-5.2" in seen.answer
    assert seen.size < 1_500_000, f"a single-decision page weighs {seen.size} bytes"


def test_early_report_renders_offline(browser: Browser, tmp_path: Path) -> None:
    runs = synthetic_runs(tmp_path / "runs.jsonl.gz")
    folder = tmp_path / "evaluation"
    assert main(["early", "evaluate", str(runs), "-o", str(folder), "--variant", "tfidf-lr", "--min-steps", "5"]) == 0
    assert main(["report", str(folder), "-o", str(tmp_path / "early.html")]) == 0
    seen = browser.render(tmp_path / "early.html", tmp_path / "early.png")
    _assert_clean(seen, n_charts=4)  # precision, runs halted, savings, calibration
    assert "agent-3" in seen.text and "leave-one-agent-out" in seen.text
    assert "failure head only at 0.9" in seen.answer and "-0.0%" not in seen.text


def test_finality_report_renders_offline(browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs.csv"
    lines = ["run,system,task,attempt,outcome,environment,group"]
    lines += [f"r{i},sys-{i % 2},task-{i // 2},0,{i % 3 == 0:d},env-{i // 4},g" for i in range(12)]
    runs.write_text("\n".join(lines) + "\n")
    examples = Path(__file__).resolve().parents[2] / "src" / "stopwise" / "finality" / "examples"
    assert main(["finality", "check", str(examples / "shared-state.toml"), "--runs", str(runs), "--json"]) == 0
    checks = tmp_path / "checks.json"
    checks.write_text(capsys.readouterr().out)
    assert main(["report", str(checks), "-o", str(tmp_path / "finality.html")]) == 0
    seen = browser.render(tmp_path / "finality.html", tmp_path / "finality.png")
    _assert_clean(seen, n_charts=2)
    assert "sys-1" in seen.text and "12 runs" not in seen.title
    assert "of 12 runs are final" in seen.answer


def test_live_look_report_renders_offline(browser: Browser, tmp_path: Path, terminal_bench_2: Path) -> None:
    """A live-look replay: wrong decisions on their own 0–10 % axis with the cutoff, human headers, the per-pair table."""
    out = tmp_path / "live"
    assert main(["replay", str(terminal_bench_2), "-k", "5", "--looks", "every", "--thresholds", "0", "-o", str(out)]) == 0
    assert main(["report", str(out), "-o", str(tmp_path / "live.html")]) == 0
    seen = browser.render(tmp_path / "live.html", tmp_path / "live.png")
    _assert_clean(seen, n_charts=2)  # resolved, wrong
    assert "betting-wor" in seen.answer and "fixed-budget" in seen.answer
    assert "mean wrong" in seen.text and "mean_wrong_rate" not in seen.text and "resolved_10" not in seen.text
    assert "Mux__GPT-5.2 vs" in seen.text  # the per-pair table
    page = browser.context.new_page()
    page.goto((tmp_path / "live.html").resolve().as_uri())
    page.wait_for_function("() => document.querySelector('#chart-0-1 svg.main-svg')")
    top = page.evaluate("() => document.getElementById('chart-0-1')._fullLayout.yaxis.range[1]")
    wide = page.evaluate("() => Array.from(document.querySelectorAll('table')).filter(t => t.scrollWidth > t.parentElement.clientWidth + 1).length")
    page.close()
    wrong = pd.read_csv(out / "live_curve.csv")["wrong"].max()
    assert top == pytest.approx(max(10.0, 110 * wrong))  # 0–10 % unless a rate is higher
    assert wide == 0  # no table cut behind a horizontal scrollbar


def test_demo_and_ledger_pages_answer_first(browser: Browser, tmp_path: Path) -> None:
    """The demo's records are separate budget limits (no path of looks); a ledger page is headlined by its first decisive look."""

    assert main(["demo", "--seed", "0", "--n-tasks", "400", "--out", str(tmp_path / "demo")]) == 0
    assert main(["report", str(tmp_path / "demo" / "decisions.jsonl"), "-o", str(tmp_path / "demo.html")]) == 0
    seen = browser.render(tmp_path / "demo.html", tmp_path / "demo.png")
    _assert_clean(seen, n_charts=3)
    assert "SEPARATE LIMITS" in seen.answer and "not looks in one evaluation" in seen.answer
    assert "Path of the estimate" not in seen.text and seen.charts[0]["title"].startswith("One decision per budget limit")

    path = tmp_path / "ledger.db"
    actions = looked_ledger(path)
    assert actions == ["continue", "continue", "promote", "promote"]
    assert main(["report", str(path), "-o", str(tmp_path / "ledger.html")]) == 0
    seen = browser.render(tmp_path / "ledger.html", tmp_path / "ledger.png")
    _assert_clean(seen, n_charts=3)
    assert "First decided at look 3 of 4" in seen.answer and "PROMOTE" in seen.answer and "system-08 beats system-01" in seen.answer


def test_hostile_names_are_shown_as_text_not_run(browser: Browser, tmp_path: Path) -> None:
    """A system named like markup is escaped everywhere: no script runs, no dialog, the name reads literally."""
    from stopwise.compare import decide
    from stopwise.records import synthetic_benchmark

    rows = synthetic_benchmark(60, 2, rng=1)
    hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>"
    tested, baseline = sorted(rows["system"].unique())
    rows["system"] = rows["system"].replace({tested: hostile})
    rows["group"] = rows["group"].replace({rows["group"].iloc[0]: "<b>bold</b>"})
    record = decide(rows, hostile, baseline)
    path = tmp_path / "hostile.json"
    path.write_text(record.model_dump_json())
    assert main(["report", str(path)]) == 0
    seen = browser.render(tmp_path / "hostile.html", tmp_path / "hostile.png")
    _assert_clean(seen, n_charts=3)
    assert seen.dialogs == [] and hostile in seen.text
