"""Report of decision records: the path of the estimate, the tails against the cutoff, coverage, exclusions, digests."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pydantic

from stopwise._files import read_text
from stopwise._limits import json_loads
from stopwise._pydantic import problems_from_pydantic
from stopwise.errors import FileFormatError
from stopwise.records import DecisionRecord
from stopwise.report._page import Block, Callout, Chart, Facts, IntervalStrip, Report, Section, Table, Text, chart_text

__all__ = ["answer_blocks", "claim_sentence", "decision_report", "parse_decisions", "read_decisions"]

PER_PAIR_SCOPE = (
    "The guarantee is per pair: it covers this one comparison. Claims about several pairs of one record (a leaderboard) "
    "need a family control: stopwise leaderboard (decide_family)."
)
"""What a single-pair record's guarantee covers, shown under its claim (the record itself is unchanged)."""

_ACTION_COLOURS = {"promote": "#1a7f37", "reject": "#c0392b", "continue": "#b7791f", "abstain": "#7b3fa0"}


def _one(value: Any, where: str) -> DecisionRecord:
    if isinstance(value, dict) and isinstance(value.get("record"), dict) and "digest" in value:
        value = value["record"]  # a link of ``stopwise ledger export --decisions``: its record
    try:
        return DecisionRecord.model_validate(value)
    except pydantic.ValidationError as exc:
        first = problems_from_pydantic(exc, where)[0]
        raise FileFormatError(f"{where}: not a decision record: field {first.field!r}: {first.rule}") from None


def parse_decisions(text: str, source: str = "<input>") -> list[DecisionRecord]:
    """Decision records from JSON text: one record, a list of records, or JSON lines (one per line).

    Parameters
    ----------
    text : str
        The output of ``stopwise decide --json``, ``stopwise demo --json``, a ``decisions.jsonl``
        file, a JSON list of records, or a decision history written by ``stopwise ledger export
        --decisions`` (one chain link per line; its records are read).
    source : str, optional
        Name of the input, used in error messages.

    Returns
    -------
    list of DecisionRecord
        In input order.

    Raises
    ------
    FileFormatError
        When the text is not JSON, or an object is not a decision record (the line and field are named).

    Examples
    --------
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.compare import decide
    >>> rows = synthetic_benchmark(60, 2, rng=0)
    >>> record = decide(rows, "system-02", "system-01")
    >>> [r.action for r in parse_decisions(record.model_dump_json(indent=2))] == [record.action]
    True
    """
    stripped = text.strip()
    if not stripped:
        raise FileFormatError(f"{source}: empty; expected a decision record (JSON) or JSON lines")
    try:
        whole = json_loads(stripped, source)
    except json.JSONDecodeError:
        whole = None
        records = []
        for number, line in enumerate(stripped.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json_loads(line, f"{source}: line {number}")
            except json.JSONDecodeError as exc:
                raise FileFormatError(f"{source}: line {number}: not valid JSON ({exc.msg}, column {exc.colno})") from None
            records.append(_one(value, f"{source}: line {number}"))
        return records
    if isinstance(whole, list):
        if not whole:
            raise FileFormatError(f"{source}: holds an empty list; expected decision records")
        return [_one(value, f"{source}: item {i}") for i, value in enumerate(whole)]
    return [_one(whole, source)]


def read_decisions(path: str | os.PathLike[str]) -> list[DecisionRecord]:
    """Decision records from a ``.json`` or ``.jsonl`` file (see :func:`parse_decisions`)."""
    file = Path(path)
    text = read_text(file, "file")
    return parse_decisions(text, str(file))


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{value:.{digits}g}"


def _boundary(record: DecisionRecord) -> tuple[float, float] | None:
    """A time-uniform boundary (confidence sequence) carried by the record, when its schema has one."""
    interval = _interval(record)
    if interval is not None:  # schema 3: the interval that matches the record's boundary
        return interval[0], interval[1]
    data = record.model_dump()
    for holder in (data.get("boundary"), data.get("confidence_sequence"), data):
        if isinstance(holder, dict):
            low, high = holder.get("lower"), holder.get("upper")
            if isinstance(low, int | float) and isinstance(high, int | float):
                return float(low), float(high)
    return None


def _path_chart(looks: Sequence[DecisionRecord], title: str) -> Chart:
    import plotly.graph_objects as go

    x = [r.n_observed for r in looks]
    y = [r.delta_hat for r in looks]
    delta = looks[-1].threshold
    fig = go.Figure()
    bounds = [_boundary(r) for r in looks]
    if all(b is not None for b in bounds):
        low = [b[0] for b in bounds if b is not None]
        high = [b[1] for b in bounds if b is not None]
        fig.add_trace(go.Scatter(x=x, y=high, mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip"))
        fig.add_trace(
            go.Scatter(x=x, y=low, mode="lines", line={"width": 0}, fill="tonexty", fillcolor="rgba(31,95,174,0.18)", name="boundary")
        )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="lines+markers",
            name="observed mean paired difference Δ̂",
            line={"color": "#1f5fae"},
            marker={"size": 10, "color": [_ACTION_COLOURS[r.action] for r in looks], "line": {"width": 1, "color": "#fff"}},
            text=[r.action for r in looks],
            hovertemplate="%{x} tasks observed<br>Δ̂ = %{y:.4f}<br>action %{text}<extra></extra>",
        )
    )
    fig.add_hline(y=delta, line={"dash": "dash", "color": "#222"}, annotation_text=f"δ = {delta:g}", annotation_position="top left")
    # the axes hold the whole band and span the looks taken (issue 35: a band of [-5, +33] pp ran past the plot, and
    # looks 30-121 were drawn on a 0-500 axis); N stays in the axis title
    values = [v for v in [*y, delta, *(end for b in bounds if b is not None for end in b)] if v is not None]
    bottom, top = min(values), max(values)
    pad = max(0.02, 0.08 * (top - bottom))
    first, last = min(x), max(x)
    margin = max(1.0, 0.04 * (last - first))
    fig.update_layout(title=title, xaxis_title=f"tasks observed (look), of {looks[-1].n_shared} {_of(looks[-1])}", yaxis_title="mean paired difference A − B",
                      legend={"orientation": "h", "y": -0.25}, xaxis_range=[max(0.0, first - margin), last + margin], yaxis_range=[bottom - pad, top + pad])
    band = " The shaded band is the record's interval for the mean difference at each look." if all(b is not None for b in bounds) else ""
    one = " This input holds a single look, so the path is one point." if len(looks) == 1 else ""
    caption = (
        "The observed mean paired difference Δ̂ (tested minus baseline, averaged over the shared tasks observed so far) at each look, "
        f"against the threshold δ (dashed): promotion claims that the true difference exceeds δ. Marker colour is the action "
        f"taken at that look (green promote, red reject, amber continue, purple abstain).{band}{one}"
    )
    return Chart(fig, caption)


def _separate_limits(looks: Sequence[DecisionRecord]) -> bool:
    """Whether the looks are separate decisions at different budget limits (``stopwise demo``), not one path of looks."""
    return len({r.budget.limit for r in looks}) > 1


def _limits_chart(looks: Sequence[DecisionRecord], title: str) -> Chart:
    import plotly.graph_objects as go

    unit = "%" if looks[-1].budget.measure == "task_fraction" else ""
    scale = 100.0 if unit else 1.0
    fig = go.Figure()
    for action, colour in _ACTION_COLOURS.items():
        chosen = [r for r in looks if r.action == action]
        if not chosen:
            continue
        fig.add_trace(
            go.Scatter(
                x=[scale * r.budget.limit for r in chosen], y=[None if r.delta_hat is None else 100 * r.delta_hat for r in chosen], mode="markers", name=action,
                marker={"size": 12, "color": colour, "line": {"width": 1, "color": "#fff"}},
                hovertemplate="budget limit %{x:.4g}" + unit + "<br>Δ̂ = %{y:.1f} pp<br>" + action + "<extra></extra>",
            )
        )
    delta = looks[-1].threshold
    fig.add_hline(y=100 * delta, line={"dash": "dash", "color": "#222"}, annotation_text=f"δ = {_pp(delta)} pp", annotation_position="top left")
    measure = chart_text(looks[-1].budget.measure)
    fig.update_layout(title=title, xaxis_title=f"budget limit ({measure}{', %' if unit else ''}) — each a separate evaluation",
                      yaxis_title="mean paired difference A − B (pp)", legend={"orientation": "h", "y": -0.25})
    caption = (
        "Each point is a separate decision taken with its own budget limit, not a look in one evaluation: the points are not "
        "joined because reading them as a path of looks (stopping at the first that promotes) is the repeated-look mistake the "
        "fixed-budget rule forbids. Pick the budget limit before the evaluation and read only its decision. The dashed line is δ; "
        "colour is the action (green promote, red reject, amber continue, purple abstain)."
    )
    return Chart(fig, caption)


def _tails_chart(looks: Sequence[DecisionRecord], title: str) -> Chart:
    import plotly.graph_objects as go

    cutoff = looks[-1].tail_cutoff
    # the log axis starts a decade below the smallest positive tail or a, not at 1e-12 (issue 35); zeros are drawn there
    positive = [v for r in looks for v in (r.r_promote, r.r_reject) if v is not None and v > 0] + [cutoff]
    floor = max(1e-12, 10.0 ** (math.floor(math.log10(min(positive))) - 1))
    lowest = math.log10(floor) - 0.3

    def clip(v: float | None) -> float | None:
        return None if v is None else max(v, floor)

    fig = go.Figure()
    if len(looks) == 1:
        r = looks[0]
        fig.add_trace(
            go.Bar(
                y=["R_promote", "R_reject"],
                x=[clip(r.r_promote), clip(r.r_reject)],
                orientation="h",
                marker={"color": ["#1a7f37", "#c0392b"]},
                text=[_fmt(r.r_promote), _fmt(r.r_reject)],
                textposition="outside",
                hovertemplate="%{y} = %{text}<extra></extra>",
                name="tail probability",
            )
        )
        fig.add_vline(x=cutoff, line={"dash": "dash", "color": "#222"}, annotation_text=f"a = {cutoff:g}")
        fig.update_xaxes(type="log", title="tail probability (log scale)", range=[lowest, 0.9], exponentformat="power")
        fig.update_layout(title=title, showlegend=False)
    else:
        limits = _separate_limits(looks)
        x = [r.budget.limit if limits else r.n_observed for r in looks]
        for name, values, colour in (
            ("R_promote (evidence against promotion)", [clip(r.r_promote) for r in looks], "#1a7f37"),
            ("R_reject (evidence against rejection)", [clip(r.r_reject) for r in looks], "#c0392b"),
        ):
            fig.add_trace(go.Scatter(x=x, y=values, mode="markers" if limits else "lines+markers", name=name, line={"color": colour}, marker={"size": 9}))
        fig.add_hline(y=cutoff, line={"dash": "dash", "color": "#222"}, annotation_text=f"a = {cutoff:g}")
        fig.update_yaxes(type="log", title="tail probability (log scale)", range=[lowest, 0.3], exponentformat="power")
        xtitle = f"budget limit ({chart_text(looks[-1].budget.measure)}), one separate decision each" if limits else "tasks observed (look)"
        fig.update_layout(title=title, xaxis_title=xtitle, legend={"orientation": "h", "y": -0.25})
    method = chart_text(looks[-1].tail_method)
    caption = (
        f"The two tail probabilities from {method}: R_promote = P*(mean ≤ δ) and R_reject = P*(mean > δ). "
        f"A promote needs R_promote below the cutoff a = {cutoff:g} (dashed) and a reject needs R_reject below it; "
        "both also need the coverage rule to hold and, for the fixed-budget rule, the budget limit to be reached. "
        f"Values below {floor:g} are drawn at {floor:g}."
    )
    return Chart(fig, caption)


def _coverage_chart(record: DecisionRecord, title: str) -> Chart:
    import plotly.graph_objects as go

    pending = set(record.coverage.missing_groups)
    groups = [(chart_text(g.group) or "(none)") + (" — pending" if g.group in pending else "") for g in record.coverage.groups]
    fig = go.Figure()
    for name, values, colour in (
        ("shared tasks n_g", [g.size for g in record.coverage.groups], "#c9d3df"),
        ("required r_g", [g.required for g in record.coverage.groups], "#b7791f"),
        ("seen (red: below r_g)", [g.seen for g in record.coverage.groups], ["#c0392b" if g.group in pending else "#1f5fae" for g in record.coverage.groups]),
    ):
        fig.add_trace(go.Bar(x=groups, y=values, name=name, marker={"color": colour}))
    fig.update_layout(barmode="group", title=title, xaxis_title="task group", yaxis_title="tasks", legend={"orientation": "h", "y": -0.3})
    missing = ", ".join(record.coverage.missing_groups) or "none"
    if record.top_up:
        missing += f" (the requirement of the set the crossed boundary waits on; top-up task(s) still needed: {', '.join(record.top_up)})"
    elif record.coverage.deferred:  # the top-up design before its crossing (issue 35)
        missing += (" waited for: the boundary has not crossed, so the evaluation runs the next tasks of the planned order; the "
                    "crossing names the top-up tasks that bring coverage (the bars show the observed prefix against its quota)")
    caption = (
        f"Coverage rule '{record.coverage.rule}': before a final action, every task group must have at least its required count r_g "
        f"of observed tasks (proportional to its share n_g of the shared tasks). Groups below their requirement: {missing}. "
        + ("The rule is satisfied." if record.coverage.satisfied else "The rule is not yet satisfied.")
    )
    return Chart(fig, caption, height=380)


def _pp(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    text = f"{100 * value:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def _interval(record: DecisionRecord) -> tuple[float, float, str] | None:
    """The record's interval for the mean difference (``record.interval``, schema 3), read defensively."""
    interval = getattr(record, "interval", None)
    if interval is None:
        return None
    get = interval.get if isinstance(interval, dict) else (lambda name: getattr(interval, name, None))
    low, high = get("low"), get("high")
    if not isinstance(low, int | float) or not isinstance(high, int | float):
        return None
    level, kind = get("level"), get("kind")
    what = f"{100 * float(level):g} % " if isinstance(level, int | float) else ""
    what += f"{kind} interval" if isinstance(kind, str) and kind else "interval"
    return float(low), float(high), what


def claim_sentence(record: DecisionRecord) -> str:
    """The record's one-sentence claim, in the one wording of :func:`stopwise.compare.claim_sentence`.

    Its ``claim`` field (schema 3), or for a record written before the field the same sentence composed from its
    fields by :func:`stopwise.compare.claim_sentence`.

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.report._decision import claim_sentence
    >>> rows = stopwise.outcome_columns(
    ...     [{"system": "A", "task": f"t{i}", "outcome": 1} for i in range(40)]
    ...     + [{"system": "B", "task": f"t{i}", "outcome": int(i < 10)} for i in range(40)])
    >>> record = stopwise.decide(rows, "A", "B", complete=True)
    >>> claim_sentence(record) == claim_sentence(record.model_copy(update={"claim": None})) == record.claim
    True
    """
    claim = getattr(record, "claim", None)
    if isinstance(claim, str) and claim.strip():
        return claim.strip()
    from stopwise.compare import claim_sentence as compose  # the record's own sentence (the decision layer writes it)

    return compose(record)


def _forecast_text(record: DecisionRecord) -> str | None:
    forecast = getattr(record, "forecast", None)
    if forecast is None:
        return None
    get = forecast.get if isinstance(forecast, dict) else (lambda name: getattr(forecast, name, None))
    median, low, high, share = get("median"), get("low"), get("high"), get("decided_share")
    if not isinstance(median, int | float):
        return None
    text = f"Forecast: about {median:g} more tasks to a decision (median of a predictive replay"
    if isinstance(low, int | float) and isinstance(high, int | float):
        text += f"; {low:g}–{high:g}"
    if isinstance(share, int | float):
        when = " at the budget limit (the fixed-budget rule acts only there)" if record.boundary == "fixed-budget" else ""
        text += f"; {100 * share:.0f} % of the simulated completions decide{when}"
    return text + ")."


def answer_blocks(record: DecisionRecord) -> list[Block]:
    """The answer at a glance for one record: the verdict, the claim sentence and the interval against δ."""
    pair = f"{record.tested} vs {record.baseline}"
    blocks: list[Block] = [
        Callout(record.action, pair, tone=record.action),
        Text(claim_sentence(record), style="claim"),
        Text(PER_PAIR_SCOPE),
    ]
    if record.action in ("continue", "abstain"):
        blocks.append(Text(f"Why: {record.reason}."))
    forecast = _forecast_text(record)
    if forecast:
        blocks.append(Text(forecast))
    interval = _interval(record)
    if interval is not None:
        low, high, what = interval
        label = f"{what} for the mean difference A − B: [{_pp(low)}, {_pp(high)}] pp, against δ = {_pp(record.threshold)} pp (dashed); the dot is Δ̂."
        blocks.append(IntervalStrip(record.delta_hat, record.threshold, low, high, label))
    else:
        label = ("The observed mean difference Δ̂ (dot) against δ (dashed); this record carries no interval, so the evidence is the "
                 "two tail probabilities against the cutoff a.")
        blocks.append(IntervalStrip(record.delta_hat, record.threshold, None, None, label))
    if record.top_up:  # issue 35: the tasks the crossed boundary waits for, the same list as the reason and `top_up`
        blocks.append(Text(f"Coverage pending: the crossed boundary waits for {len(record.top_up)} top-up task(s) "
                           f"{', '.join(record.top_up)} (group(s) {', '.join(record.coverage.missing_groups)} below the requirement "
                           "of the set the action rests on).", style="note"))
    elif record.coverage.missing_groups:
        blocks.append(Text(f"Coverage pending: group(s) {', '.join(record.coverage.missing_groups)} below their required count.", style="note"))
    elif record.coverage.deferred:
        blocks.append(Text("Coverage pending, no group waited for yet: the boundary has not crossed; run the next tasks of the planned "
                           "order (the crossing names the top-up tasks that bring coverage).", style="note"))
    return blocks


def _of(record: DecisionRecord) -> str:
    """What ``n_shared`` counts: the planned tasks when the record has a task universe, else the shared tasks seen."""
    return "planned" if record.universe is not None else "shared"


def _universe(record: DecisionRecord) -> str:
    u = record.universe
    if u is None:
        return "not given (the shared tasks seen in the rows)"
    text = f"{u.n_tasks} planned tasks ({u.source}; sha256 {u.sha256[:16]}…)"
    return text + (f"; {u.outside_rows} row(s) outside it excluded" if u.outside_rows else "")


def _tails_or_note(looks: Sequence[DecisionRecord], pair: str) -> Block:
    if any(r.r_promote is not None or r.r_reject is not None for r in looks):
        return _tails_chart(looks, f"Tails against the cutoff: {chart_text(pair)}")
    last = looks[-1]
    why = (f"group(s) {', '.join(last.coverage.missing_groups)} below the required count" if last.coverage.missing_groups
           else "no tail was computed at any look")
    return Text(f"Tails against the cutoff: not drawn — {why}, so no tail probability was computed ({last.reason}).", style="note")


def _comparison_section(looks: list[DecisionRecord]) -> Section:
    last = looks[-1]
    pair = f"{last.tested} vs {last.baseline}"
    limits = _separate_limits(looks)
    blocks: list[Any] = [
        Callout("separate limits", f"{pair} — {len(looks)} decisions, each with its own budget limit; the facts below are those of the last "
                f"(limit {last.budget.limit:.4g}): {last.action}, {last.reason}", tone="neutral") if limits
        else Callout(last.action, f"{pair} — {last.reason}", tone=last.action),
        Facts(
            [
                ("tested (A)", last.tested),
                ("baseline (B)", last.baseline),
                ("threshold δ", f"{last.threshold:g}"),
                ("tail cutoff a", f"{last.tail_cutoff:g}"),
                ("observed", f"{last.n_observed} of {last.n_shared} {_of(last)} tasks"),
                ("budget", f"{last.budget.used:.4g} of {last.budget.limit:.4g} {last.budget.measure}" + (" (at limit)" if last.budget.at_limit else "")),
                ("observed mean difference Δ̂", _fmt(last.delta_hat)),
                ("R_promote / R_reject", f"{_fmt(last.r_promote)} / {_fmt(last.r_reject)}"),
                ("tail method", last.tail_method),
                ("boundary", last.boundary),
                ("task universe", _universe(last)),
                ("decided at", last.decided_at.isoformat() if last.decided_at is not None else "—"),
                ("looks in this input", len(looks)),
            ]
        ),
        *[Callout("warning", text, tone="continue") for text in last.warnings],
        _limits_chart(looks, f"One decision per budget limit: {chart_text(pair)}") if _separate_limits(looks)
        else _path_chart(looks, f"Path of the estimate: {chart_text(pair)}"),
        _tails_or_note(looks, pair),
        _coverage_chart(last, f"Coverage per group at the last look: {chart_text(pair)}"),
    ]
    if len(looks) > 1:
        blocks.append(
            Table(
                ["decision" if limits else "look", "observed", "budget limit" if limits else "budget used", "Δ̂", "R_promote", "R_reject", "coverage", "action"],
                [
                    [i + 1, f"{r.n_observed}/{r.n_shared}", f"{(r.budget.limit if limits else r.budget.used):.4g}", _fmt(r.delta_hat), _fmt(r.r_promote),
                     _fmt(r.r_reject), "ok" if r.coverage.satisfied else "not met", r.action]
                    for i, r in enumerate(looks)
                ],
                caption="Every decision on this comparison, each with its own budget limit (separate evaluations, not a path of looks), in input order."
                if limits else "Every look at this comparison, in input order.",
            )
        )
    total_rows = sum(e.rows for e in last.excluded)
    if last.excluded:
        blocks.append(
            Table(
                ["reason", "rows", "tasks"],
                [[e.reason, e.rows, e.tasks] for e in last.excluded],
                caption=f"{total_rows} row(s) of the two systems were left out of the last decision, counted by reason; nothing is dropped silently.",
            )
        )
    else:
        blocks.append(Text("Exclusions: no row of the two systems was left out of the last decision."))
    blocks.append(
        Facts(
            [
                ("policy sha256", last.policy_sha256),
                ("input sha256", last.input_sha256),
                ("stopwise version", last.stopwise_version),
                ("record schema", last.schema_version),
            ]
        )
    )
    return Section(f"{pair} (δ = {last.threshold:g})", blocks)


def decision_report(records: Sequence[DecisionRecord], *, source: str = "") -> Report:
    """A report of decision records: one section per comparison (tested, baseline, δ).

    Parameters
    ----------
    records : sequence of DecisionRecord
        One or more looks; looks at the same comparison form its path, in input order.
    source : str, optional
        Where the records came from (shown under the title).

    Returns
    -------
    Report

    Examples
    --------
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.compare import decide
    >>> record = decide(synthetic_benchmark(60, 2, rng=0), "system-02", "system-01")
    >>> page = decision_report([record])
    >>> page.kind, page.n_charts
    ('decision', 3)
    """
    if not records:
        raise FileFormatError(f"{source or 'input'}: holds no decision record")
    comparisons: dict[tuple[str, str, float], list[DecisionRecord]] = {}
    for record in records:
        comparisons.setdefault((record.tested, record.baseline, record.threshold), []).append(record)
    sections = [_comparison_section(looks) for looks in comparisons.values()]
    what = f"{len(records)} decision record(s) on {len(comparisons)} comparison(s)"
    answer: list[Block] = []
    for looks in comparisons.values():
        if _separate_limits(looks):
            limits = ", ".join(f"{r.budget.limit:.4g}: {r.action}" for r in looks)
            answer += [
                Callout("separate limits", f"{looks[-1].tested} vs {looks[-1].baseline}", tone="neutral"),
                Text(f"{len(looks)} separate decisions, one per budget limit ({looks[-1].budget.measure} {limits}); each answers for its own "
                     "limit fixed in advance — they are not looks in one evaluation, so no single claim combines them.", style="claim"),
            ]
        else:
            answer += answer_blocks(looks[-1])
    return Report("Decision record", f"{what}" + (f" from {source}" if source else ""), sections, kind="decision", answer=answer)
