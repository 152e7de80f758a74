"""Report of a family record: the control first, then the tiers with the rank intervals, the pairwise matrix and the pairs."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pydantic

from stopwise._files import read_text
from stopwise._limits import json_loads
from stopwise._pydantic import problems_from_pydantic
from stopwise.errors import FileFormatError
from stopwise.records import FamilyRecord
from stopwise.report._page import Block, Callout, Chart, Facts, Report, Section, Table, Text, chart_text

__all__ = ["family_report", "parse_family", "read_family"]

_TIER_COLOURS = ("#1f5fae", "#b7791f", "#1a7f37", "#7b3fa0", "#c0392b", "#56606b")
_CELLS = {
    "beats": ("row beats column", "#1a7f37"),
    "beaten": ("column beats row", "#c0392b"),
    "not-by": ("row does not beat column by more than δ", "#e8a39b"),
    "equivalent": ("equivalent within ±δ_eq", "#1f5fae"),
    "open": ("not separated", "#d5dde8"),
}


def parse_family(text: str, source: str = "<input>") -> FamilyRecord:
    """A family record from its JSON (``stopwise leaderboard --json``).

    Raises
    ------
    FileFormatError
        The text is not JSON or not a family record (the field is named).
    """
    try:
        return FamilyRecord.model_validate(json_loads(text.strip(), source))
    except ValueError as exc:
        if isinstance(exc, pydantic.ValidationError):
            first = problems_from_pydantic(exc, source)[0]
            raise FileFormatError(f"{source}: not a family record: field {first.field!r}: {first.rule}") from None
        raise FileFormatError(f"{source}: not valid JSON ({exc})") from None


def read_family(path: str | os.PathLike[str]) -> FamilyRecord:
    """A family record from a ``.json`` file (see :func:`parse_family`)."""
    return parse_family(read_text(Path(path), "file"), str(path))


def _control_label(record: FamilyRecord) -> tuple[str, str]:
    pct = f"{100 * record.level:g} %"
    if record.control == "none":
        return "uncontrolled", "bad"
    return f"{record.control.upper()} {pct}", "good"


def _answer(record: FamilyRecord) -> list[Block]:
    """The first block: the control, the claim, the estimand, and what "per pair" would have meant."""
    label, tone = _control_label(record)
    what = {"all-pairs": "every ordered pair", "baseline": f"each candidate against {record.baseline}", "best": "which system is best"}[record.kind]
    status = "answered" if record.answered else "needs more tasks"
    blocks: list[Block] = [
        Callout(label, f"{len(record.systems)} systems, {what}: {status}", tone=tone),
        Text(record.claim, style="claim"),
        Text(f"Control: {record.method}."),
        Text(f"About: {record.estimand_note}."),
    ]
    if record.control == "none":
        blocks.append(Text("Each pair is judged at a on its own: across the family the chance of some false claim is not bounded. "
                           "Use control fwer or fdr for claims about the family.", style="note"))
    return blocks


def _tiers_chart(record: FamilyRecord) -> Chart:
    import plotly.graph_objects as go

    fig = go.Figure()
    tier_of = {system: number for number, tier in enumerate(record.tiers, start=1) for system in tier.systems}
    names = [chart_text(row.system) for row in record.ranks]
    for number in sorted({tier_of.get(row.system, 0) for row in record.ranks}):
        rows = [row for row in record.ranks if tier_of.get(row.system, 0) == number]
        colour = _TIER_COLOURS[(number - 1) % len(_TIER_COLOURS)] if number else "#56606b"
        x: list[float | None] = []
        y: list[str | None] = []
        for row in rows:
            x += [row.rank_low, row.rank_high, None]
            y += [chart_text(row.system), chart_text(row.system), None]
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", line={"color": colour, "width": 6}, showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(
            x=[row.rank for row in rows], y=[chart_text(row.system) for row in rows], mode="markers",
            marker={"color": colour, "size": 9, "line": {"color": "#fff", "width": 1}}, name=f"tier {number}" if number else "no tier",
            text=[f"mean {100 * row.mean:.1f} %" if row.mean is not None else "no mean" for row in rows],
            hovertemplate="%{y}: observed rank %{x}, %{text}<extra></extra>",
        ))  # fmt: skip
    fig.update_layout(title="Ranks with simultaneous rank intervals, coloured by tier", xaxis_title="rank (1 = best)",
                      yaxis={"categoryorder": "array", "categoryarray": names[::-1]}, legend={"orientation": "h", "y": -0.15})
    caption = (
        "Each bar is a system's simultaneous rank interval: every interval holds at once with probability at least "
        f"{100 * (1 - record.level):g} % (family-wise claims at delta = 0, closed transitively; Mogstad, Romano, Shaikh & Wilhelm 2024); "
        "the dot is the observed rank. A tier is a run of consecutive systems no claim of the family separates."
    )
    return Chart(fig, caption, height=max(380, 22 * len(record.ranks) + 140))


def _cell(record: FamilyRecord) -> dict[tuple[str, str], str]:
    cells: dict[tuple[str, str], str] = {}
    for pair in record.pairs:
        kind = "beats" if pair.action == "promote" and record.threshold >= 0 else "equivalent" if pair.equivalent else "open"
        if pair.action == "reject":
            kind = "beaten" if record.threshold <= 0 else "not-by"
        cells[(pair.tested, pair.baseline)] = kind
        if record.kind == "baseline":
            cells[(pair.baseline, pair.tested)] = {"beats": "beaten", "beaten": "beats", "not-by": "open"}.get(kind, kind)
    return cells


def _matrix_chart(record: FamilyRecord) -> Chart:
    import plotly.graph_objects as go

    names = [row.system for row in record.ranks]
    cells = _cell(record)
    size = max(5, min(22, 560 // max(len(names), 1)))
    fig = go.Figure()
    for kind, (label, colour) in _CELLS.items():
        chosen = [(row, column) for (row, column), value in cells.items() if value == kind]
        if not chosen:
            continue
        fig.add_trace(go.Scatter(
            x=[chart_text(c) for _, c in chosen], y=[chart_text(r) for r, _ in chosen], mode="markers", name=label,
            marker={"symbol": "square", "size": size, "color": colour}, hovertemplate="%{y} vs %{x}: " + label + "<extra></extra>",
        ))  # fmt: skip
    order = [chart_text(n) for n in names]
    numbers = [str(i) for i in range(1, len(names) + 1)]  # columns by rank number (the ranks table's), rows by name
    fig.update_layout(title="Pairwise claims (rows and columns in rank order; columns numbered as the ranks table)",
                      xaxis={"categoryorder": "array", "categoryarray": order, "tickmode": "array", "tickvals": order, "ticktext": numbers,
                             "side": "top", "tickangle": 0},
                      yaxis={"categoryorder": "array", "categoryarray": order[::-1]}, legend={"orientation": "h", "y": -0.05})
    caption = (
        f"Each square is the family's claim on the row system against the column system (columns numbered by rank, as the ranks "
        f"table) under {_control_label(record)[0]}: "
        "green, the row beats the column; red, the column beats the row; pale red (δ > 0), the row does not beat the column by "
        "more than δ; blue, the two are claimed equivalent within ±δ_eq; "
        "grey, not separated (no claim either way, which is not the same as equivalent)."
    )
    return Chart(fig, caption, height=max(420, int(1.25 * size * len(names)) + 200))


def _pp(value: float | None) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{100 * value:+.1f}"


def _e(value: float | None) -> str:
    if value is None:
        return "—"
    return "∞" if math.isinf(value) else f"{value:.3g}"


PAIR_ROWS = 250
"""Rows of the family page's pair table, claims first (issue 35: every row of swebench_lite's 1,722 pairs put 443 kB
of table on the page and the page at 1.78 MB); every pair stays in the matrix chart and the family record."""


def _pairs_table(record: FamilyRecord) -> Table:
    order = {"promote": 0, "reject": 1, "continue": 2, "abstain": 3}
    every = sorted(record.pairs, key=lambda p: (order[p.action], p.tested, p.baseline))
    pairs = every[:PAIR_ROWS]
    shown = "Every pair of the family, claims first." if len(pairs) == len(every) else (
        f"The first {len(pairs)} of {len(every):,} pairs of the family, claims first; every pair is in the matrix above and in "
        "the family record (stopwise leaderboard --json)."
    )
    evidence = "p" if record.evidence == "p-value" else "e"
    rows = [
        [p.tested, p.baseline, p.action + (" (equivalent)" if p.equivalent else ""), _pp(p.delta_hat),
         f"[{_pp(p.low)}, {_pp(p.high)}]" if p.low is not None else "—",
         _e(p.p_promote if evidence == "p" else p.e_promote), _e(p.p_reject if evidence == "p" else p.e_reject), p.claimed_at or "—", p.n]
        for p in pairs
    ]  # fmt: skip
    return Table(
        ["tested", "baseline", "action", "Δ̂ (pp)", "interval (pp)", f"{evidence} promote", f"{evidence} reject", "claimed at", "tasks"],
        rows,
        caption=f"{shown} Intervals: {record.interval_method}, level {record.interval_level:.6g}. "
        + ("The e-values are the evidence at this look (an fdr claim's at the look it entered the e-BH set)." if evidence == "e" else ""),
        numeric=[False, False, False, True, True, True, True, True, True],
    )


def family_report(record: FamilyRecord, *, source: str = "") -> Report:
    """A report of one family record: the control in the first block, the tiers, the pairwise matrix and every pair.

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare import decide_family
    >>> rows = stopwise.outcome_columns(
    ...     [{"system": s, "task": f"t{i}", "outcome": int(i < n)} for s, n in (("A", 180), ("B", 60), ("C", 55)) for i in range(200)])
    >>> page = family_report(decide_family(rows, complete=True))
    >>> page.kind, page.n_charts, page.answer[0].label
    ('family', 2, 'FWER 5 %')
    """
    tiers = [[i + 1, ", ".join(t.systems), len(t.systems), "equivalent" if t.equivalent else "not separated"] for i, t in enumerate(record.tiers)]
    sections = [
        Section("Ranks and tiers", [
            _tiers_chart(record),
            Table(["rank", "system", "mean", "rank interval", "tier"],
                  [[r.rank, r.system, "—" if r.mean is None else f"{100 * r.mean:.1f} %", f"[{r.rank_low}, {r.rank_high}]", r.tier or "—"] for r in record.ranks],
                  caption="Observed ranks (ties share a rank) and the simultaneous rank intervals.", numeric=[True, False, True, True, True]),
            Table(["tier", "systems", "size", "inside"], tiers, caption="Tiers, best first.", numeric=[True, False, True, False])
            if tiers else Text("No tiers: a baseline family compares each candidate with the baseline only.", style="note"),
        ]),
        Section("Pairwise claims", [_matrix_chart(record), _pairs_table(record)]),
        Section("Record", [
            Facts([
                ("family", record.kind + (f" (baseline {record.baseline})" if record.baseline else "")), ("control", record.control),
                ("level a", f"{record.level:g}"), ("threshold δ", f"{record.threshold:g}"), ("equivalence δ_eq", f"{record.equivalence:g}"),
                ("hypotheses M", record.n_hypotheses), ("claims", record.n_claims), ("evidence", record.evidence),
                ("look", f"{record.look} of {record.n_planned} tasks" + (" (final)" if record.final else "")),
                ("boundary", record.boundary), ("policy sha256", record.policy_sha256), ("input sha256", record.input_sha256),
                ("stopwise version", record.stopwise_version), ("record digest", record.digest()),
            ]),
            *[Callout("warning", w, tone="continue") for w in record.warnings],
        ]),
    ]  # fmt: skip
    subtitle = f"{len(record.systems)} systems, {record.n_hypotheses:,} hypotheses" + (f" from {source}" if source else "")
    return Report(f"Family of {len(record.systems)} systems", subtitle, sections, kind="family", answer=_answer(record))
