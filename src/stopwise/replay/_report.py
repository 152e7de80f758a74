"""Readable outputs of a replay: Markdown tables and the unresolved-comparisons figure (Fig. 3)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from stopwise.replay._run import ReplayResult

__all__ = ["markdown_report", "markdown_table", "percent_figure", "plot_unresolved", "table_two"]


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


def plot_unresolved(summary: pd.DataFrame, path: str | Path, *, threshold: float = 0.0, eta: float = 0.25) -> Path:
    """Fig. 3: unresolved comparisons against budget at one threshold, a line per (source, policy)."""
    part = summary[np.isclose(summary["threshold"], threshold)]
    title = f"Unresolved comparisons at the {100 * threshold:g} pp threshold"
    with percent_figure(path, title, "budget (% of the shared task set)", "unresolved comparisons (%)", legend="upper right") as ax:
        for (source, policy), block in part.groupby(["source", "policy"], sort=False):
            block = block.sort_values("budget")
            label = source if part["policy"].nunique() == 1 else f"{source} — {policy}"
            ax.plot(100 * block["budget"], 100 * block["unresolved"], marker="o", markersize=3, label=label)
            ax.fill_between(100 * block["budget"], 100 * block["unresolved_low"], 100 * block["unresolved_high"], alpha=0.15)
        ax.axhline(100 * eta, color="black", linestyle="--", linewidth=1, label=f"η = {eta:.0%}")
    return Path(path)


@contextmanager
def percent_figure(path: str | Path, title: str, xlabel: str, ylabel: str, *, legend: Literal["upper right", "lower right"]) -> Iterator[Axes]:
    """The axes of a replay figure, percent against percent: draw on them in the ``with`` block.

    On exit the figure gets its labels, a 0-100 % y axis, a grid and the legend at ``legend``, is written to
    ``path`` (through a partial file renamed into place) and closed; shared by :func:`plot_unresolved` and
    the live-look replay's figure (``live_resolved.png``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    try:
        yield ax
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc=legend)
        fig.tight_layout()
        out = Path(path)
        partial = out.with_name(out.stem + ".partial" + out.suffix)
        fig.savefig(partial)
        partial.replace(out)
    finally:
        plt.close(fig)
