"""Seeded families for checking the family controls: exact finite-population nulls, new tasks and order per replication.

Each replication draws a benchmark of N tasks on which system s solves *exactly* ``counts[s]`` tasks, so every
finite-population mean difference is known exactly and a "global null" (equal counts) makes every ordered pair's
"A beats B" null true, as the betting boundary's guarantee is stated (the mean over the N planned tasks). The tasks
a system solves are correlated across systems like a benchmark's: each task has an easiness shared by every system
and each system a noisy view of it (correlation ``correlation`` between two systems' views); system s solves the
``counts[s]`` tasks it sees as easiest. The family then runs a uniformly random order of the N tasks with a look
after every task (:func:`stopwise.replay.family_claim_runs`), and its claims are compared with the truth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from stopwise.compare import family_hypotheses
from stopwise.errors import ArgumentError
from stopwise.replay._family import family_claim_runs, family_error_rates

__all__ = ["family_populations", "simulate_family"]


def family_populations(counts: Sequence[int], n_tasks: int, replications: int, *, correlation: float = 0.5, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """(R, k, N) 0/1 outcomes: in every replication system s solves exactly ``counts[s]`` of the N tasks (see the module docstring).

    Examples
    --------
    >>> from stopwise.replay import family_populations
    >>> family_populations([3, 5], 10, 4, rng=0).sum(axis=2).astype(int).tolist()
    [[3, 5], [3, 5], [3, 5], [3, 5]]
    """
    solved = np.asarray(counts, dtype=np.int64)
    if solved.ndim != 1 or len(solved) < 2 or (solved < 0).any() or (solved > n_tasks).any():
        raise ArgumentError(f"`counts` must give at least 2 systems' solved-task counts in 0..{n_tasks}; got {list(counts)!r}")
    if not 0.0 <= correlation < 1.0:
        raise ArgumentError(f"`correlation` must be in [0, 1); got {correlation!r}")
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    easiness = generator.normal(size=(replications, 1, n_tasks)) * math.sqrt(correlation)
    views = easiness + generator.normal(size=(replications, len(solved), n_tasks)) * math.sqrt(1.0 - correlation)
    rank = np.argsort(np.argsort(-views, axis=2), axis=2)
    return (rank < solved[None, :, None]).astype(float)


def simulate_family(
    counts: Sequence[int],
    n_tasks: int,
    replications: int,
    *,
    alpha: float = 0.05,
    correlation: float = 0.5,
    publication: Sequence[float] = (0.5, 1.0),
    controls: Sequence[str] = ("none", "fdr", "fwer"),
    rng: np.random.Generator | int | None = None,
    batch: int = 16,
) -> pd.DataFrame:
    """Realised FWER (at every look) and FDR (at each publication look) of each control on seeded families.

    Parameters
    ----------
    counts : sequence of int
        Tasks each system solves (equal counts: a global null; see :func:`family_populations`).
    n_tasks : int
        N.
    replications : int
        R: each a new population and a new uniformly random order.
    alpha : float
        The family's level a.
    correlation, rng, batch
        As :func:`family_populations`; ``batch`` replications per vectorised step.
    publication : sequence of float
        Fractions of N at which the false discovery rate is read (the publication looks of ``fdr``).
    controls : sequence of str
        Among :data:`stopwise.replay.FAMILY_REPLAY_CONTROLS`.

    Returns
    -------
    pandas.DataFrame
        One row per control: ``control``, ``systems``, ``hypotheses``, ``true_nulls``, ``replications``,
        ``fwer_max`` (the largest FWER over all looks: FWER at a look counts the false claims made by then),
        ``fwer_se``, and ``fdr_<p>`` / ``fdr_se_<p>`` / ``power_<p>`` at each publication look p.

    Examples
    --------
    >>> from stopwise.replay import simulate_family
    >>> table = simulate_family([50] * 4, 100, 40, rng=0)
    >>> table["control"].tolist(), int(table["hypotheses"].iloc[0])
    (['none', 'fdr', 'fwer'], 12)
    """
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    outcomes = family_populations(counts, n_tasks, replications, correlation=correlation, rng=generator)
    order = np.argsort(generator.random((replications, n_tasks)), axis=1)
    ordered = np.take_along_axis(outcomes, order[:, None, :], axis=2)
    hypotheses = family_hypotheses(len(counts))
    means = np.asarray(counts, dtype=float) / n_tasks
    null_true = hypotheses.null_holds(means[:, None] - means[None, :])
    runs = family_claim_runs(ordered, hypotheses, population_size=n_tasks, alpha=alpha, controls=controls, batch=batch)
    looks = [max(1, math.ceil(p * n_tasks - 1e-9)) for p in publication]
    rows = []
    for control in controls:
        every = family_error_rates(runs[control], null_true, range(1, n_tasks + 1))
        worst = int(every["fwer"].idxmax())
        row = {"control": control, "systems": len(counts), "hypotheses": hypotheses.n_hypotheses, "true_nulls": int(null_true.sum()),
               "replications": replications, "fwer_max": float(every["fwer"].iloc[worst]), "fwer_se": float(every["fwer_se"].iloc[worst])}  # fmt: skip
        at = family_error_rates(runs[control], null_true, looks)
        for p, (_, line) in zip(publication, at.iterrows(), strict=True):
            row[f"fdr_{p:g}"], row[f"fdr_se_{p:g}"], row[f"power_{p:g}"] = float(line["fdr"]), float(line["fdr_se"]), float(line["power"])
        rows.append(row)
    return pd.DataFrame(rows)
