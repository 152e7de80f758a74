"""A synthetic benchmark record from an item-response model: the project's embedded default data."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stopwise.errors import ArgumentError
from stopwise.records._outcomes import _validate_frame

__all__ = ["synthetic_benchmark"]


def _expit(x: np.ndarray) -> np.ndarray:
    """The logistic function 1 / (1 + exp(-x)), correct to 2 ulp (a test checks it against extended precision and :func:`scipy.special.expit`).

    No overflow can harm it: exp(-x) = inf for x below about -709 gives exactly 0, and the
    largest x give 1; so the record needs no SciPy (importing it costs ~0.3 s of start-up).
    """
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))

_GROUPS = (
    ("repo-alpha", 0.40, -0.8),
    ("repo-beta", 0.20, -0.2),
    ("repo-gamma", 0.15, 0.3),
    ("repo-delta", 0.10, 0.9),
    ("repo-epsilon", 0.08, 1.4),
    ("repo-zeta", 0.07, 2.0),
)


def synthetic_benchmark(
    n_tasks: int = 400,
    n_systems: int = 8,
    *,
    attempts: int = 1,
    rng: np.random.Generator | int | None = 0,
) -> pd.DataFrame:
    """Generate a labelled-synthetic benchmark record of binary outcomes.

    Tasks fall in six groups of unequal size and difficulty (like repositories of a software
    benchmark); task difficulty is the group's mean plus N(0, 1) noise; system abilities are
    spread evenly over [-1.5, 1.5] plus N(0, 0.1) noise; an outcome is a Bernoulli draw with
    probability ``expit(1.7 (ability - difficulty))`` (a two-parameter logistic item-response model).
    Cost and elapsed time grow with difficulty and vary log-normally.

    Parameters
    ----------
    n_tasks : int, optional
        Number of tasks (at least the number of groups, 6).
    n_systems : int, optional
        Number of systems, named ``system-01`` (weakest) upwards.
    attempts : int, optional
        Attempts per (system, task), each an independent draw.
    rng : numpy.random.Generator or int, optional
        Generator or seed; the same seed gives the same record.

    Returns
    -------
    pandas.DataFrame
        Validated outcome rows with ``source = "synthetic:irt(seed=...)"``.

    Examples
    --------
    >>> from stopwise.records import synthetic_benchmark
    >>> rows = synthetic_benchmark(60, 3, rng=1)
    >>> len(rows), sorted(rows["system"].unique())
    (180, ['system-01', 'system-02', 'system-03'])
    """
    if int(n_tasks) != n_tasks or n_tasks < len(_GROUPS):
        raise ArgumentError(f"`n_tasks` must be an integer >= {len(_GROUPS)}; got {n_tasks!r}")
    if int(n_systems) != n_systems or n_systems < 2:
        raise ArgumentError(f"`n_systems` must be an integer >= 2; got {n_systems!r}")
    if int(attempts) != attempts or attempts < 1:
        raise ArgumentError(f"`attempts` must be a positive integer; got {attempts!r}")
    seed_label = rng if isinstance(rng, int) else "generator"
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    names = np.array([g[0] for g in _GROUPS])
    shares = np.array([g[1] for g in _GROUPS])
    means = np.array([g[2] for g in _GROUPS])
    sizes = np.maximum(1, np.floor(shares * n_tasks).astype(int))
    sizes[0] += n_tasks - sizes.sum()
    group_of_task = np.repeat(np.arange(len(_GROUPS)), sizes)
    difficulty = means[group_of_task] + generator.normal(0.0, 1.0, n_tasks)
    tasks = np.array([f"{names[g]}-{i:04d}" for i, g in enumerate(group_of_task)])

    ability = np.linspace(-1.5, 1.5, n_systems) + generator.normal(0.0, 0.1, n_systems)
    systems = np.array([f"system-{i + 1:02d}" for i in range(n_systems)])

    shape = (n_systems, n_tasks, attempts)
    probability = _expit(1.7 * (ability[:, None, None] - difficulty[None, :, None]))
    outcome = (generator.random(shape) < probability).astype(float)
    base_cost = 0.05 * np.exp(0.4 * difficulty)
    cost = base_cost[None, :, None] * generator.lognormal(0.0, 0.5, shape)
    elapsed = 60.0 * np.exp(0.5 * difficulty)[None, :, None] * generator.lognormal(0.0, 0.6, shape)

    s, t, a = np.meshgrid(np.arange(n_systems), np.arange(n_tasks), np.arange(attempts), indexing="ij")
    frame = pd.DataFrame(
        {
            "system": systems[s.ravel()],
            "task": tasks[t.ravel()],
            "outcome": outcome.ravel(),
            "group": names[group_of_task[t.ravel()]],
            "attempt": a.ravel(),
            "cost_usd": np.round(cost.ravel(), 6),
            "elapsed_s": np.round(elapsed.ravel(), 3),
            "status": "final",
            "source": f"synthetic:irt(seed={seed_label})",
        }
    )
    return _validate_frame(frame, "<synthetic>", None).to_frame()
