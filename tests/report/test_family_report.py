"""The family HTML page: the control in the first block, the tiers and the matrix drawn, user text escaped."""

from __future__ import annotations

import pytest

from stopwise.compare import decide, decide_family
from stopwise.errors import FileFormatError
from stopwise.records import Policy, outcome_columns, synthetic_benchmark
from stopwise.report import build_report, decision_report, family_report
from stopwise.report._family import parse_family


def _rows(names: tuple[str, ...] = ("A", "B", "C")) -> object:
    rates = dict(zip(names, (0.9, 0.6, 0.58), strict=False))
    return outcome_columns([{"system": s, "task": f"t{i}", "outcome": int(i < r * 200)} for s, r in rates.items() for i in range(200)])


def test_the_first_block_states_the_control_and_the_claim() -> None:
    record = decide_family(_rows(), complete=True)  # type: ignore[arg-type]
    page = family_report(record)
    html = page.to_html()
    answer = html.split('id="answer"')[1].split("</section>")[0]
    assert "FWER 5 %" in answer and "2 of 3 pairs separated at FWER 5 %" in answer and "task distribution" in answer
    assert page.kind == "family" and page.n_charts == 2 and "Pairwise claims" in html


def test_an_uncontrolled_family_says_so_first() -> None:
    record = decide_family(_rows(), policy=Policy.model_validate({"family": {"control": "none"}}), complete=True)  # type: ignore[arg-type]
    answer = family_report(record).to_html().split('id="answer"')[1].split("</section>")[0]
    assert "UNCONTROLLED" in answer and "not bounded" in answer


def test_hostile_system_names_are_escaped() -> None:
    record = decide_family(_rows(("<b>x</b>", "B", "C")), complete=True)  # type: ignore[arg-type]
    html = family_report(record).to_html()
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_a_family_json_is_detected_and_a_bad_one_named() -> None:
    record = decide_family(_rows(), complete=True)  # type: ignore[arg-type]
    page = build_report("family.json", text=record.model_dump_json())
    assert page.kind == "family"
    assert parse_family(record.model_dump_json()) == record
    with pytest.raises(FileFormatError, match="not a family record"):
        parse_family('{"pairs": [], "tiers": [], "control": "fwer"}', "bad.json")


def test_a_single_pair_page_says_its_guarantee_is_per_pair() -> None:
    record = decide(synthetic_benchmark(60, 2, rng=0), "system-02", "system-01", complete=True)
    answer = decision_report([record]).to_html().split('id="answer"')[1].split("</section>")[0]
    assert "The guarantee is per pair" in answer


def test_a_large_family_shows_its_claims_first_in_a_capped_table() -> None:
    """Issue 35 (Reports): 1,722 pair rows put swebench_lite's family page at 1.78 MB; the table keeps 250 rows, claims
    first, and says where every pair is."""
    from stopwise.report._family import PAIR_ROWS

    record = decide_family(synthetic_benchmark(200, 24, rng=0), complete=True)
    assert len(record.pairs) == 24 * 23 > PAIR_ROWS  # directed pairs
    html = family_report(record).to_html()
    table = html.split("Pairwise claims")[-1].split("<tbody>")[1].split("</tbody>")[0]
    assert table.count("<tr>") == PAIR_ROWS == 250
    claims = sum(pair.action in ("promote", "reject") for pair in record.pairs)
    shown = table.split("<tr>")[1:]
    assert sum(("promote" in row or "reject" in row) for row in shown) == min(claims, PAIR_ROWS) > 0  # claims first
    assert "The first 250 of 552 pairs of the family, claims first; every pair is in the matrix above" in html
