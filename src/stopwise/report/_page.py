r"""One self-contained HTML page: sections of facts, tables and Plotly charts, every user string escaped.

The page needs no network to be read: Plotly's JavaScript bundle is inlined once in the page head
and each chart's data is inlined as JSON beside its ``<div>``. Text that came from user input
(system names, task names, reasons, file names) is escaped here with :func:`stopwise._text.for_html`
(control and bidirectional characters shown as ``\xNN`` / ``\uNNNN``, then HTML-escaped), at the one
place where text becomes HTML; chart labels are escaped with :func:`chart_text` because Plotly reads
a subset of HTML tags in labels.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stopwise._text import for_html
from stopwise._version import __version__

__all__ = ["Callout", "Chart", "Facts", "Report", "Section", "Table", "Text", "chart_text"]


def chart_text(value: object) -> str:
    """A user string made safe for a Plotly label (Plotly reads ``<b>``, ``<a href>`` … in labels).

    Examples
    --------
    >>> chart_text("<b>bold</b> & co")
    '&lt;b&gt;bold&lt;/b&gt; &amp; co'
    """
    return for_html(value, quote=False)


def _e(value: object) -> str:
    return for_html(value)


@dataclass(frozen=True)
class Text:
    """A paragraph of plain text (escaped)."""

    text: str
    """The paragraph."""

    def html(self, index: str) -> str:
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
        div = pio.to_html(
            figure,
            include_plotlyjs=False,
            full_html=False,
            div_id=f"chart-{index}",
            default_width="100%",
            default_height=f"{self.height}px",
            config={"displaylogo": False, "responsive": True},
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


_TONES = ("promote", "reject", "continue", "abstain", "good", "bad", "neutral")

Block = Text | Facts | Table | Chart | Callout


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
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 4px; font-size: 14px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e3e6ea; text-align: left; vertical-align: top; }
th { background: #f0f2f5; font-weight: 600; } td.num, th.num { text-align: right; }
.caption, figcaption { color: #424b55; font-size: 14px; margin: 4px 0 18px; max-width: 900px; }
figure.chart { margin: 10px 0 22px; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 4px; color: #fff; font-weight: 600; }
.promote, .good { background: #1a7f37; } .reject, .bad { background: #c0392b; } .continue { background: #b7791f; }
.abstain { background: #7b3fa0; } .neutral { background: #56606b; } .callout { font-size: 16px; margin: 10px 0; }
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
            from plotly.offline import get_plotlyjs

            script = f'<script type="text/javascript">{get_plotlyjs()}</script>'
        subtitle = f'<p class="subtitle">{_e(self.subtitle)}</p>' if self.subtitle else ""
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
        """Write the page atomically (a temporary file renamed into place); returns the path."""
        out = Path(path)
        text = self.to_html()
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, out)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return out
