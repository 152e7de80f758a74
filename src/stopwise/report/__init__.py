"""Self-contained HTML reports: decision records, replays, early evaluations and finality checks.

A report is one HTML file that needs no network to be read: plotly.js's basic bundle (package data)
and every chart's data are inlined; every page opens with an answer block (the verdict and the claim
that may be made). Build one with :func:`build_report` (any input, kind detected) or the function of
one kind, then :meth:`Report.write` it. PNG figures for papers stay with matplotlib
(:func:`stopwise.replay.plot_unresolved`).
"""

from stopwise.report._build import REPORT_KINDS, build_report, detect_kind, ledger_report
from stopwise.report._decision import answer_blocks, claim_sentence, decision_report, parse_decisions, read_decisions
from stopwise.report._early import calibration_table, early_report
from stopwise.report._finality import finality_report, parse_finality
from stopwise.report._page import Callout, Chart, Facts, IntervalStrip, Report, Section, Table, Text, chart_text
from stopwise.report._replay import LIVE_FILES, REPLAY_FILES, read_replay_folder, replay_report

__all__ = [
    "LIVE_FILES",
    "REPLAY_FILES",
    "REPORT_KINDS",
    "Callout",
    "Chart",
    "Facts",
    "IntervalStrip",
    "Report",
    "Section",
    "Table",
    "Text",
    "answer_blocks",
    "build_report",
    "calibration_table",
    "chart_text",
    "claim_sentence",
    "decision_report",
    "detect_kind",
    "early_report",
    "finality_report",
    "ledger_report",
    "parse_decisions",
    "parse_finality",
    "read_decisions",
    "read_replay_folder",
    "replay_report",
]
