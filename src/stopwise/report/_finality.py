"""Report of a finality check: what a completion argument establishes, or the verdict on every run."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pydantic

from stopwise._limits import json_loads
from stopwise._pydantic import problems_from_pydantic
from stopwise.errors import FileFormatError
from stopwise.report._page import Block, Callout, Chart, Facts, Report, Section, Table, Text, chart_text

__all__ = ["finality_report", "parse_finality"]

_LABELS = (("final", "#1a7f37"), ("bounded", "#b7791f"), ("unresolved", "#c0392b"))
_SHOWN = 200


def parse_finality(text: str, source: str = "<input>") -> Any:
    """The output of ``stopwise finality check --json``: an ``ArgumentCheck`` or a list of ``RunCheck``.

    Raises
    ------
    FileFormatError
        When the text is not JSON or not a check result (the item and field are named).

    Examples
    --------
    >>> from stopwise.finality import check_argument
    >>> from stopwise.finality._examples import example_argument
    >>> check = check_argument(example_argument("closed-simulator"))
    >>> parse_finality(check.model_dump_json()).argument == check.argument
    True
    """
    from stopwise.finality import ArgumentCheck, RunCheck

    try:
        data = json_loads(text, source)
    except json.JSONDecodeError as exc:
        raise FileFormatError(f"{source}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    try:
        if isinstance(data, list):
            if not data:
                raise FileFormatError(f"{source}: holds an empty list; expected run checks")
            return [RunCheck.model_validate(item) for item in data]
        return ArgumentCheck.model_validate(data)
    except pydantic.ValidationError as exc:
        first = problems_from_pydantic(exc, source)[0]
        raise FileFormatError(f"{source}: not a finality check result: field {first.field!r}: {first.rule}") from None


def _labels_chart(checks: Sequence[Any]) -> Chart:
    import plotly.graph_objects as go

    systems = sorted({c.system for c in checks})
    counts = Counter((c.system, c.label) for c in checks)
    fig = go.Figure()
    for label, colour in _LABELS:
        fig.add_trace(go.Bar(x=[chart_text(s) for s in systems], y=[counts[(s, label)] for s in systems], name=label, marker={"color": colour}))
    fig.update_layout(barmode="stack", title="Outcome labels per system", xaxis_title="system", yaxis_title="runs", legend={"orientation": "h", "y": -0.3})
    caption = (
        "Each run's recorded score is final (its outcome can no longer change), bounded (it may change, but only within a stated "
        "window) or unresolved (open effects could still change it). Only final rows enter a decision by default; unresolved "
        "runs become pending outcome rows."
    )
    return Chart(fig, caption, height=400)


def _units_chart(checks: Sequence[Any]) -> Chart:
    import plotly.graph_objects as go

    sizes = Counter()  # type: Counter[int]
    seen: set[str] = set()
    for c in checks:
        unit = c.unit_id or f"run:{c.run}"
        if unit not in seen:
            seen.add(unit)
            sizes[c.unit_size] += 1
    x = sorted(sizes)
    fig = go.Figure(go.Bar(x=[str(s) for s in x], y=[sizes[s] for s in x], marker={"color": "#1f5fae"}, name="analysis units"))
    fig.update_layout(title="Analysis units by number of runs", xaxis_title="runs in the unit", yaxis_title="analysis units", xaxis_type="category")
    caption = (
        "Runs connected by a carryover route (sharing an environment whose state can pass from one run to the next) form one "
        "analysis unit, paired and resampled together; a unit of one run is a separate trial."
    )
    return Chart(fig, caption, height=360)


def finality_report(result: Any, *, source: str = "") -> Report:
    """A report of ``stopwise finality check --json`` output (an ``ArgumentCheck`` or a list of ``RunCheck``).

    Parameters
    ----------
    result : ArgumentCheck or sequence of RunCheck
        As returned by :func:`parse_finality`, :func:`stopwise.check_argument` or :func:`stopwise.check_runs`.
    source : str, optional
        Shown under the title.

    Returns
    -------
    Report
    """
    subtitle = f"Check result from {source}" if source else ""
    if not isinstance(result, list | tuple):
        tone = {"final": "good", "bounded": "continue", "unresolved": "bad"}.get(result.label, "neutral")
        section = Section(
            f"Completion argument {result.argument}",
            [
                Callout(result.label, f"label status of any run this argument covers; analysis unit: {result.unit}", tone=tone),
                Table(["why the label is " + result.label], [[r] for r in result.label_reasons], numeric=[False]),
                Table(["why runs are " + result.unit], [[r] for r in result.unit_reasons], numeric=[False]),
                Text("Without runs the check says what the argument establishes by itself; pass --runs to get a verdict per run."),
            ],
        )
        answer: list[Block] = [
            Callout(result.label, f"completion argument {result.argument}", tone=tone),
            Text(f"Any run this argument covers is {result.label}; analysis unit: {result.unit}.", style="claim"),
        ]
        return Report("Finality check", subtitle, [section], kind="finality", answer=answer)
    checks = list(result)
    if not checks:
        raise FileFormatError(f"{source or 'input'}: holds no run check")
    labels = Counter(c.label for c in checks)
    units = len({c.unit_id or f"run:{c.run}" for c in checks})
    overview = Section(
        "Summary",
        [
            Facts(
                [
                    ("argument", ", ".join(sorted({c.argument for c in checks}))),
                    ("runs", len(checks)),
                    ("final / bounded / unresolved", f"{labels['final']} / {labels['bounded']} / {labels['unresolved']}"),
                    ("analysis units", f"{units} from {len(checks)} runs"),
                    ("systems", len({c.system for c in checks})),
                    ("tasks", len({c.task for c in checks})),
                ]
            ),
            _labels_chart(checks),
            _units_chart(checks),
        ],
    )
    shown = sorted(checks, key=lambda c: ({"unresolved": 0, "bounded": 1, "final": 2}.get(c.label, 3), c.system, c.task, c.attempt))[:_SHOWN]
    runs = Section(
        "Runs",
        [
            Table(
                ["run", "system", "task", "attempt", "label", "unit", "decisive reason"],
                [[c.run, c.system, c.task, c.attempt, c.label, c.unit_id or c.unit, c.label_reasons[0] if c.label_reasons else ""] for c in shown],
                caption=(f"The first {_SHOWN} of {len(checks)} runs, " if len(checks) > _SHOWN else "All runs, ") + "unresolved first.",
                numeric=[False, False, False, True, False, False, False],
            )
        ],
    )
    worst = "unresolved" if labels["unresolved"] else "bounded" if labels["bounded"] else "final"
    claim = (f"{labels['final']} of {len(checks)} runs are final, {labels['bounded']} bounded and {labels['unresolved']} unresolved; "
             f"they form {units} analysis unit(s)" + (" — the unresolved runs cannot be counted as settled outcomes." if labels["unresolved"] else "."))
    answer = [
        Callout(worst, "the weakest label among the runs checked", tone={"final": "good", "bounded": "continue", "unresolved": "bad"}[worst]),
        Text(claim, style="claim"),
    ]
    return Report("Finality check", subtitle, [overview, runs], kind="finality", answer=answer)
