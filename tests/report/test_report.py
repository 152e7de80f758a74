"""Report pages without a browser: escaping, input detection, clear errors, and the calibration table's values."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from stopwise.cli.main import main
from stopwise.compare import decide
from stopwise.errors import FileFormatError, InputError
from stopwise.records import synthetic_benchmark
from stopwise.replay import replay_grid
from stopwise.report import Report, build_report, decision_report, detect_kind, replay_report
from stopwise.report._decision import parse_decisions
from stopwise.report._early import calibration_table
from stopwise.report._page import Chart, Facts, Section, Table, Text
from stopwise.report._replay import REPLAY_FILES

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def record_json() -> str:
    rows = synthetic_benchmark(80, 3, rng=2)
    names = sorted(rows["system"].unique())
    return decide(rows, names[-1], names[0]).model_dump_json()


def test_user_strings_are_escaped_everywhere() -> None:
    page = Report(HOSTILE, HOSTILE, [Section(HOSTILE, [Text(HOSTILE), Facts([(HOSTILE, HOSTILE)]), Table([HOSTILE], [[HOSTILE]], caption=HOSTILE)])])
    html = page.to_html()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert html.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") == 11  # title, h1, subtitle, toc, h2, text, dt, dd, th, td, caption
    assert "<script" not in html  # no chart: no script at all


def test_decision_page_escapes_system_names_in_chart_data(record_json: str) -> None:
    record = json.loads(record_json)
    record["tested"] = HOSTILE
    page = decision_report(parse_decisions(json.dumps(record)))
    html = page.to_html()
    assert "<img src=x" not in html
    # Plotly's JSON writes < as \u003c; the label itself is HTML-escaped for Plotly's pseudo-HTML.
    assert "\\u003cimg" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_parse_decisions_reads_json_list_and_lines(record_json: str) -> None:
    one = parse_decisions(record_json)
    assert len(one) == 1
    assert len(parse_decisions(json.dumps([json.loads(record_json)] * 2))) == 2
    lines = record_json.replace("\n", "") + "\n\n" + record_json.replace("\n", "") + "\n"
    assert [r.action for r in parse_decisions(lines)] == [one[0].action] * 2


def test_parse_decisions_names_line_and_field(record_json: str) -> None:
    with pytest.raises(FileFormatError, match=r"d.jsonl: line 2: not valid JSON"):
        parse_decisions(record_json.replace("\n", "") + "\n{oops\n", "d.jsonl")
    broken = json.loads(record_json)
    broken["n_observed"] = "many"
    with pytest.raises(FileFormatError, match=r"d.json: not a decision record: field 'n_observed'"):
        parse_decisions(json.dumps(broken), "d.json")
    with pytest.raises(FileFormatError, match="empty"):
        parse_decisions("  \n", "d.json")


def test_detect_kind(tmp_path: Path, record_json: str) -> None:
    assert detect_kind("-", text=record_json) == "decision"
    assert detect_kind("-", text='[{"run": "r1", "label": "final"}]') == "finality"
    (tmp_path / "summary.csv").write_text("x\n")
    (tmp_path / "settings.json").write_text("{}")
    assert detect_kind(tmp_path) == "replay"
    with pytest.raises(FileFormatError, match="neither a decision record"):
        detect_kind("-", text='{"hello": 1}')
    with pytest.raises(FileFormatError, match="no such file"):
        detect_kind(tmp_path / "missing.json")
    with pytest.raises(InputError, match="report kind must be"):
        build_report(tmp_path, kind="pie")


def test_replay_report_has_three_charts_per_threshold() -> None:
    result = replay_grid({"synthetic": synthetic_benchmark(120, 3, rng=0)}, n_orders=10, thresholds=[0.0, 0.05, 0.1], budgets=[0.2, 0.5, 0.8])
    page = replay_report(result)
    assert page.n_charts == 9
    assert [s.title for s in page.sections][2:] == ["Threshold 0 pp", "Threshold 5 pp", "Threshold 10 pp"]


def test_calibration_table_matches_an_independent_binning() -> None:
    rng = np.random.default_rng(5)
    runs = pd.DataFrame({"run": [f"r{i}" for i in range(30)], "outcome": rng.integers(0, 2, 30).astype(float)})
    k = np.tile(np.arange(0, 8), 30)
    predictions = pd.DataFrame(
        {"variant": "v", "run": np.repeat(runs["run"], 8).to_numpy(), "k": k, "p_success": rng.random(240), "p_failure": rng.random(240)}
    )
    evaluation = SimpleNamespace(runs=runs, predictions=predictions, min_halt_step=3)
    table = calibration_table(evaluation, "v", bins=5)  # type: ignore[arg-type]
    used = predictions[predictions["k"] >= 3].merge(runs, on="run")
    for head, column, truth in (("success", "p_success", used["outcome"] >= 0.5), ("failure", "p_failure", used["outcome"] < 0.5)):
        bins = pd.cut(used[column], np.linspace(0, 1, 6), right=False, include_lowest=True)
        expected = pd.DataFrame({"p": used[column], "t": truth.astype(float), "bin": bins}).groupby("bin", observed=True).agg(
            mean_predicted=("p", "mean"), observed=("t", "mean"), prefixes=("p", "size")
        )
        got = table[table["head"] == head]
        np.testing.assert_allclose(got["mean_predicted"], expected["mean_predicted"], rtol=1e-12)
        np.testing.assert_allclose(got["observed"], expected["observed"], rtol=1e-12)
        assert got["prefixes"].tolist() == expected["prefixes"].tolist()
        assert got["prefixes"].sum() == len(used)


def test_cli_writes_replaces_its_own_and_refuses_others(tmp_path: Path, record_json: str, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "decision.json"
    source.write_text(record_json)
    assert main(["report", str(source), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["kind"] == "decision" and written["charts"] == 3 and Path(written["report"]) == tmp_path / "decision.html"
    assert main(["report", str(source)]) == 0  # its own report: replaced
    mine = tmp_path / "notes.html"
    mine.write_text("<p>my notes</p>")
    assert main(["report", str(source), "-o", str(mine)]) == 4
    assert "not written by stopwise" in capsys.readouterr().err and mine.read_text() == "<p>my notes</p>"
    assert main(["report", str(source), "-o", str(mine), "--force"]) == 0
    assert main(["report", "-"]) == 4
    assert "pass --out" in capsys.readouterr().err
    assert main(["report", str(tmp_path)]) == 4
    assert "neither a replay output" in capsys.readouterr().err
    assert not list(tmp_path.glob(".stopwise-tmp*"))


def test_live_look_files_add_stopping_time_sections(tmp_path: Path) -> None:
    """A replay folder with a live-look replay's live_curve.csv and live_summary.csv gets one live chart per threshold."""
    result = replay_grid({"synthetic": synthetic_benchmark(80, 3, rng=0)}, n_orders=5, thresholds=[0.0], budgets=[0.5])
    result.write(tmp_path)
    budgets = np.linspace(0.01, 1.0, 100)
    curve = pd.concat(
        [
            pd.DataFrame({"source": "synthetic", "policy": "primary", "rule": rule, "threshold": t, "budget": budgets,
                          "resolved": np.minimum(1, budgets * k), "wrong": 0.01 * budgets})
            for rule, k in (("betting-wor", 3.0), ("fixed-budget", 1.5)) for t in (0.0, 0.05)
        ]
    )
    curve.to_csv(tmp_path / "live_curve.csv", index=False)
    summary = pd.DataFrame({"source": ["synthetic"], "policy": ["primary"], "rule": ["betting-wor"], "threshold": [0.0], "pairs": [6], "stop_q50": [0.17]})
    summary.to_csv(tmp_path / "live_summary.csv", index=False)
    page = build_report(tmp_path)
    grid_charts = 4 if (pd.read_csv(tmp_path / "summary.csv")["coverage_failure"] > 0).any() else 3  # coverage failures: a chart, or a sentence
    assert page.n_charts == grid_charts + 2 * 2  # per threshold: resolved and wrong decisions, on their own axes
    assert [s.title for s in page.sections][-3:] == ["Live looks at 0 pp", "Live looks at 5 pp", "Live-look tables"]
    html = page.to_html()
    assert "17.0%" in html and "median stop" in html and "stop_q50" not in html  # human headers
    for name in REPLAY_FILES:
        (tmp_path / name).unlink()
    assert build_report(tmp_path).n_charts == 4  # a live-only folder


def test_ledger_history_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every decision of a ledger evaluation is a look on the path; the chain's digests are listed."""
    from stopwise.ledger import open_ledger
    from stopwise.records import Policy, TaskUniverse

    rows = synthetic_benchmark(60, 2, rng=4)
    a, b = sorted(rows["system"].unique())
    tasks = sorted(rows["task"].unique())
    groups = rows.drop_duplicates("task").set_index("task").loc[tasks, "group"].tolist()
    path = tmp_path / "ledger.db"
    with open_ledger(path) as ledger:
        ledger.register("nightly", policy=Policy(), universe=TaskUniverse(tasks, groups), tested=b, baseline=a)
        for k in (20, 40, 60):
            ledger.append("nightly", rows[rows["task"].isin(tasks[k - 20 : k])])
            ledger.decide("nightly")
        chain = ledger.decisions("nightly")
    assert detect_kind(f"sqlite:///{path}") == "ledger" and detect_kind(path) == "ledger"
    out = tmp_path / "nightly.html"
    assert main(["report", f"sqlite:///{path}", "-o", str(out), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["charts"] == 3 and written["sections"][-1] == "Decision chain"
    html = out.read_text()
    assert all(link.digest in html for link in chain) and html.count("<tr><td class=\"num\">") >= 3
    assert main(["report", str(tmp_path / "missing.db"), "-o", str(out)]) == 4
    assert "no such ledger file" in capsys.readouterr().err and not (tmp_path / "missing.db").exists()
    assert main(["report", str(path), "--evaluation", "other", "-o", str(out)]) == 4
    assert "no evaluation 'other'" in capsys.readouterr().err


def test_report_reads_standard_input(tmp_path: Path, record_json: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(record_json))
    out = tmp_path / "from-stdin.html"
    assert main(["report", "-", "-o", str(out)]) == 0
    assert "from &lt;stdin&gt;" in out.read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO("{not json"))
    assert main(["report", "-", "-o", str(out)]) == 4
    assert "<stdin>" in capsys.readouterr().err


def test_answer_block_reads_claim_interval_and_forecast_when_the_record_has_them(record_json: str) -> None:
    """Schema-3 records carry `claim`, `interval` and `forecast`; the answer block shows them, and builds its own without them.

    These fields are not yet part of DecisionRecord on this branch (its schema forbids extra keys, so a JSON
    file holding them is refused by `parse_decisions` until they are), so the record is given them with
    ``model_copy``: the report reads them with getattr, as it will read the real fields.
    """
    plain = parse_decisions(record_json)[0]
    fallback = decision_report([plain]).to_html()
    assert 'id="answer"' in fallback and fallback.index('id="answer"') < fallback.index('id="section-0"')
    assert f"{plain.tested}" in fallback and 'class="claim"' in fallback and 'class="estimate"' in fallback
    assert 'class="interval"' not in fallback and "carries no interval" in fallback
    interval = SimpleNamespace(low=0.012, high=0.098, level=0.95, kind="anytime-valid", method="betting-wor")
    forecast = {"median": 140, "low": 60, "high": 320, "decided_share": 0.8, "n_simulations": 200, "seed": 0}
    claim = "A beats B by more than 0 pp on this benchmark's 80 planned tasks (95 % anytime-valid interval [+1.2, +9.8] pp, 80 of 80 tasks observed)"
    richer = plain.model_copy(update={"claim": claim, "interval": interval, "forecast": forecast})
    html = decision_report([richer]).to_html()
    assert escape(claim) in html and 'class="interval"' in html
    assert "95 % anytime-valid interval for the mean difference A − B: [+1.2, +9.8] pp" in html
    assert "about 140 more tasks to a decision" in html and "60–320" in html
    path = next(b for b in decision_report([richer]).sections[0].blocks if isinstance(b, Chart)).figure
    assert [t.name for t in path.data][1] == "boundary" and list(path.data[1].y) == [0.012]  # the interval drawn on the path, too


def test_pending_group_replaces_the_tails_panel_with_a_sentence(record_json: str) -> None:
    """A look whose coverage rule is pending has no tails: a note says why, and the pending group is marked."""
    plain = parse_decisions(record_json)[0]
    group = plain.coverage.groups[0].group
    pending = plain.model_copy(update={
        "action": "continue", "r_promote": None, "r_reject": None,
        "coverage": plain.coverage.model_copy(update={"satisfied": False, "missing_groups": [group]}),
    })
    page = decision_report([pending])
    html = page.to_html()
    assert page.n_charts == 2  # path and coverage; the tails panel is a sentence
    assert "Tails against the cutoff: not drawn" in html and f"group(s) {group} below the required count" in html
    coverage = [b for b in page.sections[0].blocks if isinstance(b, Chart)][-1].figure
    assert f"{group} — pending" in list(coverage.data[0].x) and "Coverage pending" in html


@pytest.mark.parametrize("name", ["outcomes.csv", "outcomes.parquet", "outcomes.jsonl", "rows.txt"])
def test_outcome_rows_given_to_report_are_named_with_what_report_reads(tmp_path: Path, name: str) -> None:
    """Outcome rows (CSV, Parquet, JSON lines; a CSV under any name) get what ``report`` reads and the decide step, never "line 1: not valid JSON"."""
    from stopwise import write_outcomes
    from stopwise.records import synthetic_benchmark

    path = tmp_path / name
    rows = synthetic_benchmark(60, 2, rng=0)
    if name == "rows.txt":
        path.write_text(rows.to_csv(index=False), encoding="utf-8")
    else:
        write_outcomes(rows, path)
    with pytest.raises(FileFormatError) as caught:
        build_report(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "outcome rows" in message
    assert "stopwise report reads decision records" in message and "not valid JSON" not in message
    assert f"stopwise decide {path} -t A -b B --json > decision.json, then stopwise report decision.json" in message


def test_text_that_is_no_json_says_what_report_reads() -> None:
    with pytest.raises(FileFormatError, match=r"^notes\.txt: not JSON \(line 1: Expecting value\); stopwise report reads decision records") as caught:
        detect_kind("notes.txt", text="hello\nworld\n")
    assert "stopwise decide" not in str(caught.value)  # no outcome-row hint for text that is not rows
