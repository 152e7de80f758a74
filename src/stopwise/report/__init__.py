"""Self-contained HTML reports: decision records, replays, early evaluations, finality checks and family records.

A report is one HTML file that needs no network to be read: plotly.js's basic bundle (package data)
and every chart's data are inlined; every page opens with an answer block (the verdict and the claim
that may be made). Build one with :func:`build_report` (any input, kind detected) or the function of
one kind, then :meth:`Report.write` it. PNG figures for papers stay with matplotlib
(:func:`stopwise.replay.plot_unresolved`).

The pages' building blocks (sections, charts, tables, callouts: ``report/_page.py``) and the readers of each
kind's input stay inside the package; a page is built from one of the functions below.
"""

from stopwise.report._build import REPORT_KINDS, build_report, detect_kind, ledger_report
from stopwise.report._decision import decision_report, read_decisions
from stopwise.report._early import early_report
from stopwise.report._family import family_report, read_family
from stopwise.report._finality import finality_report
from stopwise.report._page import Report
from stopwise.report._replay import replay_report

__all__ = [
    "REPORT_KINDS",
    "Report",
    "build_report",
    "decision_report",
    "detect_kind",
    "early_report",
    "family_report",
    "finality_report",
    "ledger_report",
    "read_decisions",
    "read_family",
    "replay_report",
]
