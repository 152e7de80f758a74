"""Readable outputs of a replay: Markdown tables (its charts, Fig. 3 among them, are on its report page: stopwise.report)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from stopwise.replay._run import ReplayResult

__all__ = ["markdown_report", "markdown_table", "table_two"]


def _percent(value: float, digits: int = 2) -> str:
    return "—" if value is None or not np.isfinite(value) else f"{100 * value:.{digits}f}%"


def markdown_table(frame: pd.DataFrame) -> str:
    """A DataFrame as a GitHub Markdown table (no extra dependency)."""
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def table_two(sufficiency: pd.DataFrame, policy: str = "primary") -> pd.DataFrame:
    """Minimum sufficient budgets of one policy in the paper's Table II layout.

    One row per source: the minimum sufficient budget at each threshold ("none by 95%" when no
    budget meets all targets) and the unresolved rate with its 5-95 % directed-pair interval at
    the first threshold's minimum sufficient budget (or at the largest budget).
    """
    part = sufficiency[sufficiency["policy"] == policy]
    rows = []
    for source, block in part.groupby("source", sort=False):
        block = block.sort_values("threshold")
        row = {"Source": source}
        for _, r in block.iterrows():
            label = f"{100 * r['threshold']:g} pp"
            budget = r["min_sufficient_budget"]
            row[label] = f"{budget:.0%}" if np.isfinite(budget) else f"none by {r['read_at_budget']:.0%}"
        first = block.iloc[0]
        row[f"{100 * first['threshold']:g} pp unresolved interval"] = (
            f"{_percent(first['unresolved'])} [{100 * first['unresolved_low']:.2f}, {100 * first['unresolved_high']:.2f}]"
            f" at {first['read_at_budget']:.0%}"
        )
        row["error & coverage met, too unresolved"] = first["too_unresolved_budgets"] or "—"
        rows.append(row)
    return pd.DataFrame(rows)


def markdown_report(result: ReplayResult) -> str:
    """A Markdown report of a replay: settings, Table I, Table II per policy and the full summary."""
    settings = result.settings
    lines = [
        "# Completed-record replay",
        "",
        f"stopwise {settings.stopwise_version}; {settings.n_orders} task orders per pair; "
        f"budget measure {settings.measure} ({settings.scope}); thresholds "
        + ", ".join(f"{100 * t:g} pp" for t in settings.thresholds)
        + ".",
        "",
        "## Sources (Table I)",
        "",
        markdown_table(result.sources),
        "",
    ]
    for policy in result.sufficiency["policy"].unique():
        lines += [f"## Minimum sufficient budgets — {policy} (Table II)", "", markdown_table(table_two(result.sufficiency, policy)), ""]
    shown = result.summary.copy()
    for column in ("fpr_cond", "frr_cond", "coverage_failure", "unresolved", "unresolved_low", "unresolved_high"):
        shown[column] = shown[column].map(lambda v: _percent(v))
    shown["budget"] = shown["budget"].map(lambda v: f"{v:.0%}")
    shown["threshold"] = shown["threshold"].map(lambda v: f"{100 * v:g} pp")
    keep = ["source", "policy", "threshold", "budget", "pairs", "positives", "fpr_cond", "frr_cond", "coverage_failure", "unresolved", "unresolved_low", "unresolved_high", "sufficient"]
    lines += ["## Summary per budget", "", markdown_table(shown[keep]), ""]
    return "\n".join(lines)
