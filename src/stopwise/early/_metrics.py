"""The paper's §IV metrics, computed from saved per-prefix predictions for any pair of thresholds.

Decision quality: coverage, accuracy, per-head precision and coverage. Compute efficiency: ΔSteps,
ΔTokens in/out (tokens when every step records them, else characters as a proxy: a step's input is the
task text plus every earlier action and observation — the context the model saw — and its output is its
action). Evaluation fidelity: ΔPass@1 per agent, Δ|Pass@1| (mean absolute, over agents), Spearman ρ of
the agent ranking, rank shifts and the share of unchanged ranks.

All Δ values are fractions (−0.26 means 26 % saved; Δ|Pass@1| = 0.011 means 1.1 percentage points).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr

from stopwise.early._halting import halt_points
from stopwise.errors import ArgumentError

__all__ = ["EarlyMetrics", "early_metrics"]


@dataclass(frozen=True)
class EarlyMetrics:
    """Metrics of one threshold setting over held-out runs.

    Attributes
    ----------
    success_threshold, failure_threshold : float or None
        The thresholds (``None``: that head is off).
    n_runs : int
        Held-out runs.
    coverage : float
        Share of runs halted before their last step.
    accuracy : float
        Share of halted runs whose predicted outcome is right (NaN when none halts).
    success_precision, failure_precision : float
        Among runs halted by the success (failure) head, the share that truly succeeded (failed).
    success_coverage, failure_coverage : float
        Share of all runs halted by each head.
    delta_steps : float
        ``Σ executed steps / Σ full steps − 1``.
    delta_tokens_in, delta_tokens_out : float
        The same for input and output tokens (or their character proxy).
    token_source : str
        ``"tokens"`` or ``"characters"``.
    delta_abs_pass1 : float
        Mean over agents of ``|early pass@1 − full pass@1|``.
    spearman_rho : float
        Spearman correlation of the agents' early and full pass@1 (NaN when undefined).
    unchanged_rank_share : float
        Share of agents whose rank is unchanged.
    per_agent : pandas.DataFrame
        One row per agent: runs, pass@1 full and early, ΔPass@1, ranks, ΔRank (full − early; negative means
        the agent dropped), ΔSteps.
    halts : pandas.DataFrame
        One row per run: halt step (NaN if none), predicted outcome, head, the crossing head's probability at the
        halt (``probability``: the model's confidence in its prediction; NaN if none), executed steps and their cost
        (``executed_cost``: input + output tokens, or characters, of the steps run).
    """

    success_threshold: float | None
    failure_threshold: float | None
    n_runs: int
    coverage: float
    accuracy: float
    success_precision: float
    success_coverage: float
    failure_precision: float
    failure_coverage: float
    delta_steps: float
    delta_tokens_in: float
    delta_tokens_out: float
    token_source: str
    delta_abs_pass1: float
    spearman_rho: float
    unchanged_rank_share: float
    per_agent: pd.DataFrame
    halts: pd.DataFrame

    def summary(self) -> dict[str, float | int | str | None]:
        """The scalar fields as a mapping."""
        return {k: v for k, v in self.__dict__.items() if not isinstance(v, pd.DataFrame)}


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.shape[0] else float("nan")


def _agent_table(
    agents: np.ndarray, outcome: np.ndarray, early_outcome: np.ndarray, executed: np.ndarray, n_steps: np.ndarray
) -> tuple[pd.DataFrame, float]:
    """Per agent: Pass@1 with and without early halting, ranks and steps saved; and the Spearman ρ of the two Pass@1."""
    table = (
        pd.DataFrame({"agent": agents, "outcome": outcome, "early": early_outcome, "executed": executed, "n_steps": n_steps})
        .groupby("agent", sort=True)
        .agg(runs=("outcome", "size"), pass1_full=("outcome", "mean"), pass1_early=("early", "mean"), executed=("executed", "sum"), full=("n_steps", "sum"))
        .reset_index()
    )
    table["delta_pass1"] = table["pass1_early"] - table["pass1_full"]
    table["rank_full"] = rankdata(-table["pass1_full"].to_numpy(), method="min").astype(int)
    table["rank_early"] = rankdata(-table["pass1_early"].to_numpy(), method="min").astype(int)
    table["delta_rank"] = table["rank_full"] - table["rank_early"]
    table["delta_steps"] = table["executed"] / table["full"] - 1.0
    table = table.drop(columns=["executed", "full"])
    if table.shape[0] >= 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rho = float(spearmanr(table["pass1_full"], table["pass1_early"]).statistic)
    else:
        rho = float("nan")
    return table, rho


def early_metrics(
    runs: pd.DataFrame,
    predictions: pd.DataFrame,
    success_threshold: float | None,
    failure_threshold: float | None,
    *,
    min_halt_step: int = 1,
    token_source: str = "characters",
) -> EarlyMetrics:
    """Compute every metric for one threshold pair.

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per held-out run with columns ``run`` (ids ``0..n-1``), ``agent``, ``outcome``,
        ``n_steps``, ``total_in``, ``total_out``.
    predictions : pandas.DataFrame
        One row per prefix with ``run``, ``k``, ``p_success``, ``p_failure``, ``cum_in``, ``cum_out``
        (of a single variant).
    success_threshold, failure_threshold : float or None
        Thresholds; ``None`` turns a head off.
    min_halt_step : int, default 1
        Earliest step at which a run may halt.
    token_source : str
        Recorded on the result.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"run": [0, 1], "agent": ["A", "A"], "outcome": [1, 0], "n_steps": [2, 2],
    ...                      "total_in": [6.0, 6.0], "total_out": [2.0, 2.0]})
    >>> pred = pd.DataFrame({"run": [0, 0, 0, 1, 1, 1], "k": [0, 1, 2] * 2,
    ...                      "p_success": [0.5, 0.99, 0.99, 0.5, 0.5, 0.5], "p_failure": [0.5, 0.0, 0.0, 0.5, 0.5, 0.5],
    ...                      "cum_in": [0, 2.0, 6.0] * 2, "cum_out": [0, 1.0, 2.0] * 2})
    >>> m = early_metrics(runs, pred, 0.95, 0.95)
    >>> m.coverage, m.accuracy, m.delta_steps
    (0.5, 1.0, -0.25)
    """
    runs = runs.sort_values("run").reset_index(drop=True)
    n = runs.shape[0]
    if not np.array_equal(runs["run"].to_numpy(), np.arange(n)):
        raise ArgumentError("runs must be numbered 0..n-1 in the `run` column")
    pred = predictions.sort_values(["run", "k"]).reset_index(drop=True)
    n_steps = runs["n_steps"].to_numpy(dtype=np.int64)
    run_ids = pred["run"].to_numpy(dtype=np.int64)
    k = pred["k"].to_numpy(dtype=np.int64)
    halt_step, predicted, success_head = halt_points(
        run_ids,
        k,
        n_steps[run_ids],
        pred["p_success"].to_numpy(dtype=np.float64),
        pred["p_failure"].to_numpy(dtype=np.float64),
        success_threshold,
        failure_threshold,
        min_halt_step=min_halt_step,
    )
    if halt_step.shape[0] < n:
        pad = n - halt_step.shape[0]
        halt_step = np.r_[halt_step, np.full(pad, np.nan)]
        predicted = np.r_[predicted, np.full(pad, np.nan)]
        success_head = np.r_[success_head, np.zeros(pad, dtype=bool)]
    outcome = runs["outcome"].to_numpy(dtype=np.float64)
    halted = ~np.isnan(halt_step)
    by_success = halted & success_head
    by_failure = halted & ~success_head
    executed = np.where(halted, halt_step, n_steps).astype(np.int64)
    # cumulative cost after the executed steps of each run
    start = np.searchsorted(run_ids, np.arange(n))
    at = start + executed
    cum_in = pred["cum_in"].to_numpy(dtype=np.float64)[at]
    cum_out = pred["cum_out"].to_numpy(dtype=np.float64)[at]
    early_outcome = np.where(halted, predicted, outcome)
    # the crossing head's probability at the halt: the model's confidence in the prediction it stored
    span = int(k.max()) + 1 if k.shape[0] else 1
    at_halt = np.minimum(
        np.searchsorted(run_ids * span + k, np.arange(n) * span + np.where(halted, halt_step, 0).astype(np.int64)), max(k.shape[0] - 1, 0)
    )
    p_head = np.where(success_head, pred["p_success"].to_numpy(dtype=np.float64)[at_halt], pred["p_failure"].to_numpy(dtype=np.float64)[at_halt])

    table, rho = _agent_table(runs["agent"].to_numpy(), outcome, early_outcome, executed, n_steps)

    halts = pd.DataFrame(
        {
            "run": runs["run"],
            "halt_step": halt_step,
            "predicted": predicted,
            "head": np.where(by_success, "success", np.where(by_failure, "failure", "")),
            "probability": np.where(halted, p_head, np.nan),
            "executed_steps": executed,
            "executed_cost": cum_in + cum_out,
        }
    )
    return EarlyMetrics(
        success_threshold=success_threshold,
        failure_threshold=failure_threshold,
        n_runs=n,
        coverage=float(halted.mean()) if n else float("nan"),
        accuracy=_mean((predicted[halted] == outcome[halted]).astype(float)),
        success_precision=_mean((outcome[by_success] == 1).astype(float)),
        success_coverage=float(by_success.mean()) if n else float("nan"),
        failure_precision=_mean((outcome[by_failure] == 0).astype(float)),
        failure_coverage=float(by_failure.mean()) if n else float("nan"),
        delta_steps=float(executed.sum() / n_steps.sum() - 1.0) if n_steps.sum() else float("nan"),
        delta_tokens_in=float(cum_in.sum() / runs["total_in"].sum() - 1.0) if runs["total_in"].sum() else float("nan"),
        delta_tokens_out=float(cum_out.sum() / runs["total_out"].sum() - 1.0) if runs["total_out"].sum() else float("nan"),
        token_source=token_source,
        delta_abs_pass1=float(table["delta_pass1"].abs().mean()),
        spearman_rho=rho,
        unchanged_rank_share=float((table["delta_rank"] == 0).mean()),
        per_agent=table,
        halts=halts,
    )
