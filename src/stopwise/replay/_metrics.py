"""Metrics of a replay, computed from the per-pair decision records only (paper eqs. 7-10)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stopwise.records import Targets

__all__ = ["SUMMARY_KEYS", "sufficiency", "summarize"]

SUMMARY_KEYS = ["source", "policy", "threshold", "budget"]
"""One summary row per source, policy, threshold and budget."""


def _pair_interval(rates: np.ndarray, n_boot: int, rng: np.random.Generator) -> tuple[float, float]:
    """5-95 % percentile interval of the mean of per-pair rates, resampling directed pairs."""
    if len(rates) == 0:
        return (np.nan, np.nan)
    draws = rng.integers(0, len(rates), size=(n_boot, len(rates)))
    means = rates[draws].mean(axis=1)
    low, high = np.percentile(means, [5, 95])
    return float(low), float(high)


def summarize(
    cases: pd.DataFrame,
    targets: Targets | None = None,
    *,
    n_boot: int = 2000,
    rng: np.random.Generator | int | None = 0,
) -> pd.DataFrame:
    """Aggregate per-pair records into the metrics of each (source, policy, threshold, budget).

    A case is a directed pair, a task order and a budget. FPR_cond counts false promotions over
    the cases whose completed-record decision is reject, FRR_cond false rejections over those whose
    decision is promote; abstentions stay in both denominators. Coverage failure (a final action
    before the coverage rule holds) and the unresolved rate (continue or abstain) are averaged over
    all cases. The unresolved interval is the 5-95 % percentile interval of the mean per-pair
    unresolved rate when directed pairs are resampled with replacement (descriptive: directed pairs
    share systems and tasks).

    Parameters
    ----------
    cases : pandas.DataFrame
        Per-pair records (:data:`stopwise.replay._engine.CASE_COLUMNS`).
    targets : Targets, optional
        alpha, gamma and eta (default: the paper's 0.05, 0.05, 0.25).
    n_boot : int, optional
        Resamples of directed pairs for the unresolved interval.
    rng : numpy.random.Generator or int, optional
        Generator of those resamples.

    Returns
    -------
    pandas.DataFrame
        One row per (source, policy, threshold, budget) with ``pairs``, ``positives``,
        ``negatives``, ``fpr_cond``, ``frr_cond``, ``coverage_failure``, ``unresolved``,
        ``unresolved_low``, ``unresolved_high``, ``promote_rate``, ``reject_rate``,
        ``observed_fraction``, ``tested_cost_fraction``, ``tested_elapsed_fraction``,
        ``meets_error``, ``meets_coverage``, ``meets_unresolved`` and ``sufficient``.
    """
    targets = targets if targets is not None else Targets()
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    frame = cases.assign(
        negative_cases=np.where(cases["positive"], 0, cases["orders"]),
        positive_cases=np.where(cases["positive"], cases["orders"], 0),
        unresolved_cases=cases["orders"] - cases["promote"] - cases["reject"],
        observed_fraction=cases["mean_observed"] / cases["n_shared"],
    )
    grouped = frame.groupby(SUMMARY_KEYS, sort=True)
    totals = grouped[
        ["orders", "negative_cases", "positive_cases", "false_promotions", "false_rejections", "coverage_failures", "unresolved_cases", "promote", "reject"]
    ].sum()
    summary = pd.DataFrame(
        {
            "pairs": grouped.size(),
            "positives": grouped["positive"].sum().astype(int),
            "negatives": grouped.size() - grouped["positive"].sum().astype(int),
            "fpr_cond": totals["false_promotions"] / totals["negative_cases"].replace(0, np.nan),
            "frr_cond": totals["false_rejections"] / totals["positive_cases"].replace(0, np.nan),
            "coverage_failure": totals["coverage_failures"] / totals["orders"],
            "unresolved": totals["unresolved_cases"] / totals["orders"],
            "promote_rate": totals["promote"] / totals["orders"],
            "reject_rate": totals["reject"] / totals["orders"],
            "observed_fraction": grouped["observed_fraction"].mean(),
            "tested_cost_fraction": grouped["tested_cost_fraction"].mean(),
            "tested_elapsed_fraction": grouped["tested_elapsed_fraction"].mean(),
        }
    )
    rates = frame["unresolved_cases"] / frame["orders"]
    intervals = [
        _pair_interval(rates.loc[index].to_numpy(dtype=float), n_boot, generator)
        for index in grouped.indices.values()
    ]
    summary["unresolved_low"] = [low for low, _ in intervals]
    summary["unresolved_high"] = [high for _, high in intervals]
    summary["meets_error"] = summary["fpr_cond"].fillna(0.0).le(targets.alpha) & summary["frr_cond"].fillna(0.0).le(targets.alpha)
    summary["meets_coverage"] = summary["coverage_failure"].le(targets.gamma)
    summary["meets_unresolved"] = summary["unresolved"].le(targets.eta)
    summary["sufficient"] = summary["meets_error"] & summary["meets_coverage"] & summary["meets_unresolved"]
    return summary.reset_index()


def _ranges(grid: np.ndarray, chosen: np.ndarray) -> str:
    """Chosen grid budgets as runs of consecutive grid points, e.g. ``5%-80%, 90%``."""
    marks = np.isin(grid, chosen)
    runs, start = [], None
    for i, mark in enumerate([*marks, False]):
        if mark and start is None:
            start = i
        if not mark and start is not None:
            runs.append(f"{grid[start]:.0%}" if start == i - 1 else f"{grid[start]:.0%}-{grid[i - 1]:.0%}")
            start = None
    return ", ".join(runs)


def sufficiency(summary: pd.DataFrame) -> pd.DataFrame:
    """Minimum sufficient budget per (source, policy, threshold), shaped like the paper's Table II.

    The minimum sufficient budget is the smallest grid budget meeting all targets; the unresolved
    rate and its interval are read at that budget, or at the largest budget when none is
    sufficient. Budgets that meet the error and coverage targets but leave too many comparisons
    unresolved are listed separately.

    Returns
    -------
    pandas.DataFrame
        Columns ``source``, ``policy``, ``threshold``, ``min_sufficient_budget`` (NaN when none),
        ``read_at_budget``, ``unresolved``, ``unresolved_low``, ``unresolved_high``,
        ``first_error_coverage_budget`` (smallest budget meeting error and coverage targets) and
        ``too_unresolved_budgets`` (those of them that fail only the unresolved target).
    """
    rows = []
    for (source, policy, threshold), part in summary.groupby(["source", "policy", "threshold"], sort=False):
        part = part.sort_values("budget")
        good = part[part["sufficient"]]
        minimum = float(good["budget"].iloc[0]) if len(good) else np.nan
        read = part[part["budget"] == minimum].iloc[0] if len(good) else part.iloc[-1]
        error_coverage = part[part["meets_error"] & part["meets_coverage"]]
        too_unresolved = error_coverage[~error_coverage["meets_unresolved"]]
        rows.append(
            {
                "source": source,
                "policy": policy,
                "threshold": threshold,
                "min_sufficient_budget": minimum,
                "read_at_budget": float(read["budget"]),
                "unresolved": float(read["unresolved"]),
                "unresolved_low": float(read["unresolved_low"]),
                "unresolved_high": float(read["unresolved_high"]),
                "first_error_coverage_budget": float(error_coverage["budget"].iloc[0]) if len(error_coverage) else np.nan,
                "too_unresolved_budgets": _ranges(part["budget"].to_numpy(), too_unresolved["budget"].to_numpy()),
            }
        )
    return pd.DataFrame(rows)
