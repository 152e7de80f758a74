"""Report of a leave-one-out early-outcome evaluation: precision and steps saved against the threshold, calibration."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from stopwise.errors import FileFormatError
from stopwise.report._page import Block, Callout, Chart, Facts, Report, Section, Table, Text, chart_text

if TYPE_CHECKING:
    from stopwise.early import EarlyEvaluation

__all__ = ["calibration_table", "early_report"]

RECOMMENDED_THRESHOLD = 0.90
"""The setting the README recommends: the failure head only, at this threshold (the success head is often unreliable)."""

_MODES = {"dual": ("#1f5fae", "dual (both heads)"), "success-only": ("#1a7f37", "success head only"), "failure-only": ("#c0392b", "failure head only")}
_DASHES = ("solid", "dash", "dot", "dashdot")


def calibration_table(evaluation: EarlyEvaluation, variant: str, *, bins: int = 10) -> pd.DataFrame:
    """Reliability of both heads over the held-out prefixes from which a run may halt.

    Each prefix (a run after k steps, ``k >= min_halt_step``, at least one step) is one
    observation; predicted probabilities are put into ``bins`` equal-width bins.

    Returns
    -------
    pandas.DataFrame
        One row per head and non-empty bin: ``head`` (success or failure), ``bin_low``, ``bin_high``,
        ``mean_predicted``, ``observed`` (share of those prefixes whose run ended that way), ``prefixes``.
    """
    predictions = evaluation.predictions[evaluation.predictions["variant"] == variant]
    predictions = predictions[predictions["k"] >= max(1, evaluation.min_halt_step)]
    outcome = evaluation.runs.set_index("run")["outcome"]
    success = (outcome.reindex(predictions["run"]).to_numpy(dtype=float) >= 0.5).astype(float)
    edges = np.linspace(0.0, 1.0, bins + 1)
    frames = []
    for head, p, truth in (("success", predictions["p_success"].to_numpy(dtype=float), success), ("failure", predictions["p_failure"].to_numpy(dtype=float), 1.0 - success)):
        index = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, bins - 1)
        counts = np.bincount(index, minlength=bins)
        mean_p = np.bincount(index, weights=p, minlength=bins) / np.maximum(counts, 1)
        observed = np.bincount(index, weights=truth, minlength=bins) / np.maximum(counts, 1)
        keep = counts > 0
        frames.append(
            pd.DataFrame(
                {"head": head, "bin_low": edges[:-1][keep], "bin_high": edges[1:][keep], "mean_predicted": mean_p[keep], "observed": observed[keep], "prefixes": counts[keep]}
            )
        )
    return pd.concat(frames, ignore_index=True)


def _sweep(evaluation: EarlyEvaluation, folder: Path | None, variant: str) -> pd.DataFrame:
    from stopwise.early import THRESHOLDS

    saved = folder / f"sweep_{variant}.csv" if folder is not None else None
    if saved is not None and saved.is_file():
        try:
            return pd.read_csv(saved)
        except (OSError, ValueError) as exc:
            raise FileFormatError(f"{saved}: cannot be read: {exc}") from None
    return evaluation.sweep(THRESHOLDS, variant=variant)


def _signed(value: float, digits: int = 1, unit: str = "%") -> str:
    """A percentage with a sign, never "-0.0"."""
    if not np.isfinite(value):
        return "—"
    text = f"{value:+.{digits}f}"
    return ("0." + "0" * digits if float(text) == 0 else text) + unit


def _plain(value: float, digits: int = 1) -> str:
    """A percentage, never "-0.0"."""
    if not np.isfinite(value):
        return "—"
    text = f"{value:.{digits}f}"
    return ("0." + "0" * digits if float(text) == 0 else text) + "%"


def _unreliable_heads(evaluation: EarlyEvaluation, variant: str) -> list[str]:
    """The heads whose precision at the recommended threshold is below it (halting on them would mislabel more runs than it promises)."""
    flagged = []
    for head, metrics in (("success", evaluation.metrics(RECOMMENDED_THRESHOLD, None, variant=variant)),
                          ("failure", evaluation.metrics(None, RECOMMENDED_THRESHOLD, variant=variant))):
        precision = metrics.success_precision if head == "success" else metrics.failure_precision
        share = metrics.success_coverage if head == "success" else metrics.failure_coverage
        if np.isfinite(precision) and precision < RECOMMENDED_THRESHOLD:
            flagged.append(f"{head} head: precision {_plain(100 * precision)} at threshold {RECOMMENDED_THRESHOLD:g} "
                           f"(halts {_plain(100 * share)} of runs) — below the threshold it claims; do not halt on it")
    return flagged


def _pct(values: pd.Series) -> list[float | None]:
    return [None if not np.isfinite(v) else 100 * float(v) for v in values.to_numpy(dtype=float)]


def _sweep_lines(sweeps: dict[str, pd.DataFrame]) -> Iterator[tuple[str, str, str, pd.DataFrame]]:
    """(dash, colour, legend name, sweep rows by threshold) of each variant's halting modes, in legend order."""
    for v, (variant, sweep) in enumerate(sweeps.items()):
        for mode, (colour, label) in _MODES.items():
            part = sweep[sweep["mode"] == mode].sort_values("threshold")
            yield _DASHES[v % len(_DASHES)], colour, f"{chart_text(variant)}: {label}" if len(sweeps) > 1 else label, part


def _precision_chart(sweeps: dict[str, pd.DataFrame], by: str) -> Chart:
    import plotly.graph_objects as go

    fig = go.Figure()
    for dash, colour, name, part in _sweep_lines(sweeps):
        fig.add_trace(
            go.Scatter(
                x=part["threshold"], y=_pct(part["precision"]), mode="lines+markers", name=name,
                line={"color": colour, "dash": dash},
                hovertemplate=f"{name}<br>threshold %{{x:.2f}}<br>precision %{{y:.1f}}%<extra></extra>",
            )
        )
    fig.add_vline(x=RECOMMENDED_THRESHOLD, line={"dash": "dot", "color": "#555"}, annotation_text=f"recommended {RECOMMENDED_THRESHOLD:g}")
    fig.update_layout(title="Precision of halted runs against the threshold", xaxis_title="threshold on the calibrated probability (0–1)",
                      yaxis_title="precision (% of halted runs predicted right)", yaxis_range=[0, 102], legend={"orientation": "h", "y": -0.3})
    caption = (
        f"Held-out runs (leave-one-{by}-out). Precision: among the runs a head halts, the share whose final outcome it predicted "
        "right (for dual, the accuracy of all halts). A higher threshold halts fewer runs, usually with higher precision. The "
        f"dotted line is the recommended setting (failure head only at {RECOMMENDED_THRESHOLD:g})."
    )
    return Chart(fig, caption, height=440)


def _halted_chart(sweeps: dict[str, pd.DataFrame]) -> Chart:
    import plotly.graph_objects as go

    fig = go.Figure()
    for dash, colour, name, part in _sweep_lines(sweeps):
        fig.add_trace(
            go.Scatter(
                x=part["threshold"], y=_pct(part["coverage"]), mode="lines+markers", name=name,
                line={"color": colour, "dash": dash}, marker={"symbol": "x", "size": 7},
                hovertemplate=f"{name}<br>threshold %{{x:.2f}}<br>halted %{{y:.1f}}% of runs<extra></extra>",
            )
        )
    fig.add_vline(x=RECOMMENDED_THRESHOLD, line={"dash": "dot", "color": "#555"}, annotation_text=f"recommended {RECOMMENDED_THRESHOLD:g}")
    fig.update_layout(title="Share of runs halted early against the threshold", xaxis_title="threshold on the calibrated probability (0–1)",
                      yaxis_title="runs halted before their last step (% of all runs)", yaxis_range=[0, 102], legend={"orientation": "h", "y": -0.3})
    caption = (
        "The share of all held-out runs stopped before their last step by each halting mode. A threshold is useful where "
        "precision (above) is high and many runs still halt."
    )
    return Chart(fig, caption, height=400)


def _savings_chart(sweeps: dict[str, pd.DataFrame], token_source: str) -> Chart:
    import plotly.graph_objects as go

    fig = go.Figure()
    for dash, colour, name, part in _sweep_lines(sweeps):
        fig.add_trace(
            go.Scatter(
                x=part["threshold"], y=_pct(-part["delta_steps"]), mode="lines+markers", name=f"{name} — steps saved",
                line={"color": colour, "dash": dash},
                hovertemplate=f"{name}<br>threshold %{{x:.2f}}<br>steps saved %{{y:.1f}}%<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=part["threshold"], y=_pct(-part["delta_tokens_in"]), mode="lines", name=f"{name} — input {token_source} saved",
                line={"color": colour, "dash": dash, "width": 1}, opacity=0.55,
                hovertemplate=f"{name}<br>threshold %{{x:.2f}}<br>input {token_source} saved %{{y:.1f}}%<extra></extra>",
            )
        )
    fig.update_layout(title="Steps and input cost saved, against the threshold", xaxis_title="threshold on the calibrated probability (0–1)",
                      yaxis_title="saved (% of the full evaluation's steps or input)", legend={"orientation": "h", "y": -0.3})
    caption = (
        "Steps saved: 1 − (steps executed with early halting) / (steps of the full runs), over all held-out runs; the faint lines "
        f"give the same for input {token_source}. Savings fall as the threshold rises because fewer runs halt."
    )
    return Chart(fig, caption, height=460)


def _calibration_chart(tables: dict[str, pd.DataFrame]) -> Chart:
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration", line={"color": "#888", "dash": "dash"}, hoverinfo="skip"))
    for v, (variant, table) in enumerate(tables.items()):
        for head, colour in (("success", "#1a7f37"), ("failure", "#c0392b")):
            part = table[table["head"] == head]
            name = f"{chart_text(variant)}: {head} head" if len(tables) > 1 else f"{head} head"
            sizes = 6 + 14 * np.sqrt(part["prefixes"].to_numpy() / max(1, int(table["prefixes"].max())))
            fig.add_trace(
                go.Scatter(
                    x=part["mean_predicted"], y=part["observed"], mode="lines+markers", name=name,
                    line={"color": colour, "dash": _DASHES[v % len(_DASHES)]}, marker={"size": sizes},
                    customdata=np.stack([part["prefixes"].to_numpy(), part["bin_low"].to_numpy(), part["bin_high"].to_numpy()], axis=1),
                    hovertemplate=f"{name}<br>bin %{{customdata[1]:.1f}}–%{{customdata[2]:.1f}}<br>mean predicted %{{x:.3f}}<br>observed %{{y:.3f}}<br>%{{customdata[0]}} prefixes<extra></extra>",
                )
            )
    fig.update_layout(title="Calibration of the two heads on held-out prefixes", xaxis_title="predicted probability, bin mean (0–1)",
                      yaxis_title="observed frequency (share of prefixes, 0–1)", xaxis_range=[0, 1], yaxis_range=[0, 1.02], legend={"orientation": "h", "y": -0.25})
    caption = (
        "Every held-out prefix from which a run may halt, put into ten equal-width bins of the head's calibrated probability. "
        "A point is a bin: its mean predicted probability against the share of those prefixes whose run truly succeeded (success "
        "head) or failed (failure head); marker size grows with the number of prefixes. Points under the diagonal mean the head "
        "is overconfident there; halting relies on the top bins being on or above it."
    )
    return Chart(fig, caption, height=480)


def early_report(evaluation: EarlyEvaluation | str | os.PathLike[str], *, threshold: float = 0.95, source: str = "") -> Report:
    """A report of a leave-one-out evaluation (``stopwise early evaluate -o`` folder or an :class:`EarlyEvaluation`).

    Parameters
    ----------
    evaluation : EarlyEvaluation or path
        The evaluation, or the folder it was saved to.
    threshold : float, optional
        Dual threshold of the per-agent table.
    source : str, optional
        Shown under the title (default: the folder).

    Returns
    -------
    Report
    """
    from stopwise.early import EarlyEvaluation

    folder: Path | None = None
    if isinstance(evaluation, str | os.PathLike):
        folder = Path(evaluation)
        source = source or str(folder)
        evaluation = EarlyEvaluation.load(folder)
    variants = evaluation.variants
    sweeps = {name: _sweep(evaluation, folder, name) for name in variants}
    tables = {name: calibration_table(evaluation, name) for name in variants}
    metrics = evaluation.metrics(threshold, threshold, variant=variants[0])
    runs = evaluation.runs
    facts: list[tuple[str, Any]] = [
        ("held-out runs", len(runs)),
        ("agents", runs["agent"].nunique()),
        ("tasks", runs["task"].nunique()),
        ("success rate", _plain(100 * float((runs["outcome"] >= 0.5).mean()))),
        ("protocol", f"leave-one-{evaluation.by}-out" + (f" within {evaluation.within}" if evaluation.within else "")
         + (f", training without runs sharing {evaluation.exclude_same}" if evaluation.exclude_same else "")),
        ("variants", ", ".join(variants)),
        ("earliest halt step", evaluation.min_halt_step),
        ("cost measure", evaluation.token_source),
    ]
    per_agent = metrics.per_agent
    agent_rows = [
        [row.agent, row.runs, _plain(100 * row.pass1_full), _plain(100 * row.pass1_early), _signed(100 * row.delta_pass1, unit=" pp"), f"{row.delta_rank:+d}",
         _plain(-100 * row.delta_steps)]
        for row in per_agent.itertuples(index=False)
    ]
    recommended = evaluation.metrics(None, RECOMMENDED_THRESHOLD, variant=variants[0])
    recommended_rows = [
        [row.agent, row.runs, _plain(100 * row.pass1_full), _plain(100 * row.pass1_early), _signed(100 * row.delta_pass1, unit=" pp"), f"{row.delta_rank:+d}",
         _plain(-100 * row.delta_steps)]
        for row in recommended.per_agent.itertuples(index=False)
    ]
    flagged = _unreliable_heads(evaluation, variants[0])
    sections = [
        Section("Evaluation", [Facts(facts)]),
        Section(
            f"Recommended: failure head only at {RECOMMENDED_THRESHOLD:g} ({chart_text(variants[0])})",
            [
                Facts(_summary_facts(recommended)),
                Table(["agent", "runs", "Pass@1 full", "Pass@1 early", "ΔPass@1", "ΔRank", "steps saved"], recommended_rows,
                      caption="Pass@1 of each agent with and without early halting by the failure head alone (halted runs count as failures)."),
            ],
        ),
        Section("Precision and steps saved against the threshold",
                [_precision_chart(sweeps, evaluation.by), _halted_chart(sweeps), _savings_chart(sweeps, evaluation.token_source)]),
        Section("Calibration", [_calibration_chart(tables)]),
        Section(
            f"Per agent at dual threshold {threshold:g} ({chart_text(variants[0])})",
            [
                Facts(_summary_facts(metrics)),
                Table(["agent", "runs", "Pass@1 full", "Pass@1 early", "ΔPass@1", "ΔRank", "steps saved"], agent_rows,
                      caption="Pass@1 of each agent with and without early halting (halted runs count with their predicted outcome)."),
            ],
        ),
    ]
    answer: list[Block] = [
        Callout("recommended", f"failure head only at {RECOMMENDED_THRESHOLD:g} ({variants[0]})", tone="neutral"),
        Text(f"Halting runs on the failure head at {RECOMMENDED_THRESHOLD:g} stops {_plain(100 * recommended.coverage)} of the held-out runs early, "
             f"{_plain(100 * recommended.failure_precision)} of them rightly, saves {_plain(-100 * recommended.delta_steps)} of the steps and moves "
             f"agent Pass@1 by {100 * recommended.delta_abs_pass1:.2f} pp on average.", style="claim"),
        *[Text(f"Unreliable: {line}.", style="note") for line in flagged],
    ]
    if evaluation.min_halt_step <= 1 and recommended.coverage > 0.5:
        answer.append(Text("More than half of the runs halt; with the earliest halt step at 1 the prompt alone may decide — check the "
                           "precision per agent below before relying on it.", style="note"))
    return Report("Early outcome prediction: held-out evaluation", f"Evaluation in {source}" if source else "", sections, kind="early", answer=answer)


def _summary_facts(metrics: Any) -> list[tuple[str, Any]]:
    return [
        ("runs halted", _plain(100 * metrics.coverage)),
        ("accuracy of halts", _plain(100 * metrics.accuracy)),
        ("steps saved", _plain(-100 * metrics.delta_steps)),
        ("mean |ΔPass@1|", f"{100 * metrics.delta_abs_pass1:.2f} pp"),
        ("Spearman ρ of agent pass@1", "—" if not np.isfinite(metrics.spearman_rho) else f"{metrics.spearman_rho:.3f}"),
    ]
