r"""One self-contained HTML page: sections of facts, tables and Plotly charts, every user string escaped.

The page needs no network to be read: Plotly's basic JavaScript bundle (package data) is inlined once in the page head
and each chart's data is inlined as JSON beside its ``<div>``. Text that came from user input
(system names, task names, reasons, file names) is escaped here with :func:`stopwise._text.for_html`
(control and bidirectional characters shown as ``\xNN`` / ``\uNNNN``, then HTML-escaped), at the one
place where text becomes HTML; chart labels are escaped with :func:`chart_text` because Plotly reads
a subset of HTML tags in labels.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from stopwise._atomic import write_file
from stopwise._text import for_html
from stopwise._version import __version__

__all__ = ["PLOTLY_BUNDLE", "Callout", "Chart", "Facts", "IntervalStrip", "Report", "Section", "Table", "Text", "chart_text", "plotly_bundle"]


def chart_text(value: object) -> str:
    """A user string made safe for a Plotly label (Plotly reads ``<b>``, ``<a href>`` … in labels).

    Examples
    --------
    >>> chart_text("<b>bold</b> & co")
    '&lt;b&gt;bold&lt;/b&gt; &amp; co'
    """
    return for_html(value, quote=False)


PLOTLY_BUNDLE = "plotly-basic.min.js"
"""The plotly.js *basic* bundle (scatter, bar and pie traces only), v4.1.1 from the npm package
``plotly.js-basic-dist-min``, MIT licence (stated in the file's header), vendored as package data: about
1.2 MB instead of the 4.7 MB full bundle, so one decision page stays under 1.5 MB. Its version is the
plotly.js version of the ``plotly`` Python package the figures are built with; charts must use only
``go.Scatter`` and ``go.Bar``."""


@functools.cache
def plotly_bundle() -> str:
    """The inlined plotly.js basic bundle (read once from the package data)."""
    return resources.files("stopwise.report").joinpath(PLOTLY_BUNDLE).read_text(encoding="utf-8")


def _e(value: object) -> str:
    return for_html(value)


@dataclass(frozen=True)
class Text:
    """A paragraph of plain text (escaped)."""

    text: str
    """The paragraph."""
    style: str = ""
    """"" (plain), "claim" (the claim that may be made, in bold) or "note" (a panel left out, and why)."""

    def html(self, index: str) -> str:
        if self.style in ("claim", "note"):
            return f'<p class="{self.style}">{_e(self.text)}</p>'
        return f"<p>{_e(self.text)}</p>"


@dataclass(frozen=True)
class Facts:
    """Label-value pairs shown as a definition list."""

    items: Sequence[tuple[str, object]]
    """(label, value) pairs; values are shown with ``str``."""

    def html(self, index: str) -> str:
        rows = "".join(f"<dt>{_e(label)}</dt><dd>{_e(value)}</dd>" for label, value in self.items)
        return f'<dl class="facts">{rows}</dl>'


@dataclass(frozen=True)
class Table:
    """A table with a header row; cells are shown with ``str`` and escaped."""

    columns: Sequence[str]
    """Column headers."""
    rows: Sequence[Sequence[object]]
    """Cells, one sequence per row."""
    caption: str = ""
    """What the table shows (under the table)."""
    numeric: Sequence[bool] | None = None
    """Per column: right-align (numbers). Default: every column but the first."""

    def html(self, index: str) -> str:
        numeric = list(self.numeric) if self.numeric is not None else [i > 0 for i in range(len(self.columns))]
        align = ['class="num"' if flag else "" for flag in numeric]
        head = "".join(f"<th {a}>{_e(c)}</th>" for c, a in zip(self.columns, align, strict=True))
        body = "".join(
            "<tr>" + "".join(f"<td {a}>{_e(v)}</td>" for v, a in zip(row, align, strict=True)) + "</tr>" for row in self.rows
        )
        caption = f'<p class="caption">{_e(self.caption)}</p>' if self.caption else ""
        return f'<div class="table-wrap"><table id="table-{index}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{caption}'


@dataclass(frozen=True)
class Chart:
    """A Plotly figure with the short explanation shown under it."""

    figure: Any
    """A ``plotly.graph_objects.Figure``; its labels must already be escaped with :func:`chart_text`."""
    caption: str
    """How to read the chart (plain text, escaped)."""
    height: int = 420
    """Height in pixels."""

    def html(self, index: str) -> str:
        import plotly.io as pio

        figure = self.figure
        figure.update_layout(template="plotly_white", height=self.height, margin={"l": 70, "r": 30, "t": 60, "b": 60})
        # titles start at the left, away from Plotly's toolbar at the top right, which shows on hover only (issue 35:
        # it covered long titles)
        figure.update_layout(title_x=0.0, title_xanchor="left")
        div = pio.to_html(
            figure,
            include_plotlyjs=False,
            full_html=False,
            div_id=f"chart-{index}",
            default_width="100%",
            default_height=f"{self.height}px",
            config={"displaylogo": False, "responsive": True, "displayModeBar": "hover"},
            validate=True,
        )
        return f'<figure class="chart" data-chart="chart-{index}">{div}<figcaption>{_e(self.caption)}</figcaption></figure>'


@dataclass(frozen=True)
class Callout:
    """A highlighted verdict: a coloured label and one line of text."""

    label: str
    """The label (e.g. an action), shown upper-case."""
    text: str
    """The line beside it."""
    tone: str = "neutral"
    """Colour: promote, reject, continue, abstain, good, bad or neutral."""

    def html(self, index: str) -> str:
        tone = self.tone if self.tone in _TONES else "neutral"
        return f'<p class="callout"><span class="badge {tone}">{_e(self.label.upper())}</span> {_e(self.text)}</p>'


@dataclass(frozen=True)
class IntervalStrip:
    """An interval for the mean difference drawn against the threshold δ as a small inline SVG (no Plotly).

    Values are in the record's units (fractions); they are drawn in percentage points. ``low``/``high``
    may be None (no interval in the record): then only the estimate and δ are drawn.
    """

    estimate: float | None
    """The observed mean difference Δ̂ (the dot)."""
    threshold: float
    """δ (the dashed line)."""
    low: float | None = None
    """Lower end of the interval."""
    high: float | None = None
    """Upper end of the interval."""
    label: str = ""
    """What the interval is (e.g. "95 % anytime-valid interval"), written under the strip."""

    def html(self, index: str) -> str:
        values = [v for v in (self.estimate, self.threshold, self.low, self.high) if v is not None and math.isfinite(v)]
        left, right = min(values), max(values)
        span = max(right - left, 0.02)
        left, right = left - 0.15 * span, right + 0.15 * span
        width, height, pad = 640, 74, 20

        def x(value: float) -> float:
            return pad + (value - left) / (right - left) * (width - 2 * pad)

        parts = [f'<line x1="{pad}" y1="44" x2="{width - pad}" y2="44" stroke="#9aa3ad" stroke-width="1"/>']
        for tick in _ticks(left, right):
            parts.append(f'<line x1="{x(tick):.1f}" y1="44" x2="{x(tick):.1f}" y2="49" stroke="#9aa3ad"/>'
                         f'<text x="{x(tick):.1f}" y="62" font-size="11" text-anchor="middle" fill="#56606b">{_pp(tick)}</text>')
        parts.append(f'<line class="delta" x1="{x(self.threshold):.1f}" y1="8" x2="{x(self.threshold):.1f}" y2="50" stroke="#222" stroke-dasharray="4 3"/>'
                     f'<text x="{x(self.threshold) + 4:.1f}" y="16" font-size="12" fill="#222">δ = {_pp(self.threshold)}</text>')
        if self.low is not None and self.high is not None and math.isfinite(self.low) and math.isfinite(self.high):
            parts.append(f'<rect class="interval" x="{x(self.low):.1f}" y="26" width="{max(x(self.high) - x(self.low), 2):.1f}" height="12" rx="3" fill="rgba(31,95,174,0.35)" stroke="#1f5fae"/>')
        if self.estimate is not None and math.isfinite(self.estimate):
            parts.append(f'<circle class="estimate" cx="{x(self.estimate):.1f}" cy="32" r="5" fill="#1f5fae" stroke="#fff"/>')
        svg = (f'<svg class="strip" viewBox="0 0 {width} {height}" width="100%" style="max-width:{width}px" role="img" '
               f'aria-label="interval against the threshold">{"".join(parts)}</svg>')
        label = f'<p class="caption">{_e(self.label)}</p>' if self.label else ""
        return f'<div class="interval-strip" id="strip-{index}">{svg}{label}</div>'


def _pp(value: float) -> str:
    """A fraction in percentage points, signed, never "-0"."""
    text = f"{100 * value:+.1f}"
    return ("0.0" if text in ("+0.0", "-0.0") else text) + " pp"


def _ticks(left: float, right: float) -> list[float]:
    raw = (right - left) / 5
    step = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * step:
            step *= factor
            break
    first = math.ceil(left / step) * step
    return [first + i * step for i in range(int((right - first) / step) + 1)]


_TONES = ("promote", "reject", "continue", "abstain", "good", "bad", "neutral")

Block = Text | Facts | Table | Chart | Callout | IntervalStrip


@dataclass
class Section:
    """A titled part of the report."""

    title: str
    """Heading."""
    blocks: list[Block] = field(default_factory=list)
    """Contents, in order."""


_STYLE = """
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #1d232b; background: #f6f7f9; margin: 0; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 60px; background: #fff; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 20px; margin: 34px 0 10px; padding-top: 8px; border-top: 1px solid #e3e6ea; }
.subtitle { color: #56606b; margin: 0 0 14px; }
nav ol { margin: 6px 0 0; padding-left: 22px; color: #56606b; }
nav a { color: #1f5fae; text-decoration: none; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 3px 18px; margin: 8px 0 14px; }
dl.facts dt { color: #56606b; } dl.facts dd { margin: 0; overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
.table-wrap { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 4px; font-size: 14px; font-variant-numeric: tabular-nums; max-width: 100%; }
td { overflow-wrap: break-word; } td.num { white-space: nowrap; }  /* whole words; a wide table scrolls */
th, td { padding: 4px 8px; border-bottom: 1px solid #e3e6ea; text-align: left; vertical-align: top; }
th { background: #f0f2f5; font-weight: 600; } td.num, th.num { text-align: right; }
.caption, figcaption { color: #424b55; font-size: 14px; margin: 4px 0 18px; max-width: 900px; }
figure.chart { margin: 10px 0 22px; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 4px; color: #fff; font-weight: 600; }
.promote, .good { background: #1a7f37; } .reject, .bad { background: #c0392b; } .continue { background: #b7791f; }
.abstain { background: #7b3fa0; } .neutral { background: #56606b; } .callout { font-size: 16px; margin: 10px 0; }
section.answer { background: #f3f6fa; border: 1px solid #d5dde8; border-radius: 6px; padding: 4px 18px 10px; margin: 12px 0 8px; }
section.answer h2 { border-top: 0; margin-top: 8px; } .claim { font-size: 17px; font-weight: 600; margin: 8px 0; }
.note { color: #424b55; background: #fbf6ea; border-left: 4px solid #b7791f; padding: 6px 12px; margin: 10px 0 18px; }
footer { color: #6b7580; font-size: 13px; margin-top: 40px; }
"""


@dataclass
class Report:
    """A report page: a title, an optional subtitle and sections.

    Examples
    --------
    >>> page = Report("A <title>", "about", [Section("Numbers", [Facts([("n", 3)])])])
    >>> text = page.to_html()
    >>> "<title>A &lt;title&gt; — stopwise report</title>" in text, "Plotly" in text
    (True, False)
    """

    title: str
    """Page heading (plain text)."""
    subtitle: str = ""
    """One line under the heading: what the report is made from."""
    sections: list[Section] = field(default_factory=list)
    """The parts of the report."""
    kind: str = ""
    """What the report was built from: decision, replay, early or finality."""
    answer: list[Block] = field(default_factory=list)
    """The answer at a glance, drawn first under the heading (``<section id="answer">``): the verdict, the
    claim that may be made and, for a decision, its interval against δ."""

    @property
    def n_charts(self) -> int:
        """How many charts the page holds."""
        return sum(isinstance(block, Chart) for section in self.sections for block in section.blocks)

    def to_html(self) -> str:
        """The whole page as one HTML string (Plotly's script inlined when the page has charts)."""
        parts = []
        for s, section in enumerate(self.sections):
            blocks = "".join(block.html(f"{s}-{b}") for b, block in enumerate(section.blocks))
            parts.append(f'<section id="section-{s}"><h2>{_e(section.title)}</h2>{blocks}</section>')
        toc = "".join(f'<li><a href="#section-{s}">{_e(section.title)}</a></li>' for s, section in enumerate(self.sections))
        script = ""
        if self.n_charts:
            script = f'<script type="text/javascript">{plotly_bundle()}</script>'
        subtitle = f'<p class="subtitle">{_e(self.subtitle)}</p>' if self.subtitle else ""
        if self.answer:
            blocks = "".join(block.html(f"answer-{b}") for b, block in enumerate(self.answer))
            subtitle += f'<section id="answer" class="answer"><h2>Answer</h2>{blocks}</section>'
        return (
            "<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="stopwise {_e(__version__)}"><meta name="stopwise-report" content="{_e(self.kind)}">'
            f"<title>{_e(self.title)} — stopwise report</title><style>{_STYLE}</style>{script}</head>"
            f"<body><main><h1>{_e(self.title)}</h1>{subtitle}<nav><ol>{toc}</ol></nav>{''.join(parts)}"
            f"<footer>Written by stopwise {_e(__version__)}. This page is self-contained: it needs no network access.</footer>"
            "</main></body></html>\n"
        )

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the page atomically (a temporary file renamed into place, :func:`stopwise._atomic.write_file`); returns the path."""
        text = self.to_html()
        return write_file(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
