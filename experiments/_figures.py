"""The PNG figures of the docs (``docs/replay/*.png``, ``docs/live_looks_*.png``), drawn with matplotlib.

The library has one plotting stack, Plotly, on its HTML report pages (``stopwise report``); a Markdown page on
GitHub shows images only, and Plotly needs a browser (kaleido) to make one. The experiments that regenerate
the docs' figures therefore draw them with matplotlib, which only they need: ``pip install -e '.[experiments]'``.
The same curves are drawn interactively on the report page of a replay folder
(:func:`stopwise.report.replay_report`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["percent_figure", "plot_live", "plot_unresolved"]


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


def plot_live(curve: pd.DataFrame, path: str | Path, *, threshold: float = 0.0) -> Path:
    """Resolved-by-budget curves of a live-look replay at one threshold: a line per (source, policy, rule)."""
    part = curve[np.isclose(curve["threshold"], threshold)]
    title = f"Live looks after every task: resolved by budget at {100 * threshold:g} pp"
    with percent_figure(path, title, "tasks observed (% of the planned tasks)", "runs stopped with promote or reject (%)", legend="lower right") as ax:
        for (source, policy, rule), block in part.groupby(["source", "policy", "rule"], sort=False):
            block = block.sort_values("budget")
            style = "-" if rule == "betting-wor" else "--"
            ax.plot(100 * block["budget"], 100 * block["resolved"], style, label=f"{source} — {policy} — {rule}")
    return Path(path)


@contextmanager
def percent_figure(path: str | Path, title: str, xlabel: str, ylabel: str, *, legend: Literal["upper right", "lower right"]) -> Iterator[Axes]:
    """The axes of a docs figure, percent against percent: draw on them in the ``with`` block.

    On exit the figure gets its labels, a 0-100 % y axis, a grid and the legend at ``legend``, is saved to
    ``path`` and closed.
    """
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("the docs figures need matplotlib: pip install -e '.[experiments]'") from None
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
        fig.savefig(path)
    finally:
        plt.close(fig)
