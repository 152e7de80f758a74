"""Issue 35 (Reports): the look path's axes hold the interval band and span the looks; the tails' log axis starts near
the tails drawn, not at 1e-12."""

from __future__ import annotations

import numpy as np

from stopwise import Policy, TaskUniverse, decide, outcome_columns
from stopwise.report._decision import _path_chart, _tails_chart


def test_the_look_path_chart_holds_its_interval_band_and_spans_its_looks() -> None:
    """Issue 35 (Reports): a band of [-5, +33] pp ran past the plot and looks 30-121 were drawn on a 0-500 axis."""
    policy = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "order": {"kind": "uniform"}})
    rng = np.random.default_rng(8)
    names = [f"t{i:03d}" for i in range(500)]
    universe = TaskUniverse(names, ["g"] * 500)
    a, b = (rng.random(500) < 0.55).astype(int), (rng.random(500) < 0.45).astype(int)
    looks = []
    for k in range(30, 122, 13):
        rows = outcome_columns(
            [{"system": "A", "task": names[i], "outcome": int(a[i])} for i in range(k)]
            + [{"system": "B", "task": names[i], "outcome": int(b[i])} for i in range(k)]
        )
        looks.append(decide(rows, "A", "B", policy, universe=universe, forecast=False))
    layout = _path_chart(looks, "path").figure.layout
    ends = [e for r in looks if r.interval is not None for e in (r.interval.low, r.interval.high)]
    assert layout.yaxis.range[0] < min(ends) and layout.yaxis.range[1] > max(ends)
    assert layout.xaxis.range[0] >= 25 and layout.xaxis.range[1] <= 130  # the looks taken, not the 500 planned tasks
    tails = _tails_chart(looks, "tails").figure.layout
    smallest = min(v for r in looks for v in (r.r_promote, r.r_reject) if v)
    assert (
        tails.yaxis.range[0] > -12 and 10 ** tails.yaxis.range[0] < smallest
    )  # not from 1e-12, below every tail drawn
