"""Off-lattice outcomes: ``exact`` no longer falls back to a B = 200 Monte-Carlo bootstrap whose
action depends on the seed; it works on a fine grid and brackets the exact bootstrap value."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from stopwise import Policy, decide, tail_probabilities
from stopwise.compare import lattice_of
from stopwise.records import outcome_columns


def _differences() -> np.ndarray:
    base = np.clip(np.random.default_rng(11).normal(0.0, 0.45, 40), -0.99, 0.99)
    return np.clip(base + 0.135, -1.0, 1.0)  # exact R_promote about 0.0525, just above a = 0.05


def _rows(d: np.ndarray) -> pd.DataFrame:
    tasks = [f"t{i:02d}" for i in range(len(d))]
    return pd.DataFrame(
        {"system": ["A"] * len(d) + ["B"] * len(d), "task": tasks * 2, "outcome": np.r_[(1 + d) / 2, (1 - d) / 2]}
    )


def test_the_case_is_seed_sensitive_under_the_old_fallback() -> None:
    d = _differences()
    assert lattice_of(d) == 0
    promoted = [tail_probabilities(d, 0.0, method="bootstrap", n_resamples=200, rng=seed).r_promote <= 0.05 for seed in range(40)]
    assert 5 <= sum(promoted) <= 35  # B = 200 promotes under some seeds and not others


def test_exact_brackets_a_large_monte_carlo_and_ignores_the_seed() -> None:
    d = _differences()
    results = {tail_probabilities(d, 0.0, method="exact", rng=seed) for seed in range(5)}
    assert len(results) == 1
    (result,) = results
    low, high = map(float, re.search(r"R_promote in \[([0-9.]+), ([0-9.]+)\]", result.method).groups())
    assert result.method.startswith("exact on a 1/") and low <= result.r_promote <= high and high - low < 1e-3
    big = tail_probabilities(d, 0.0, method="bootstrap", n_resamples=400_000, rng=7).r_promote
    se = np.sqrt(big * (1 - big) / 400_000)
    assert low - 4 * se <= big <= high + 4 * se  # the Monte-Carlo limit, within 4 standard errors
    assert result.r_promote == pytest.approx(0.0525, abs=0.001)


def test_the_decision_no_longer_depends_on_the_seed() -> None:
    rows = _rows(_differences())
    rows = outcome_columns(rows).to_frame()
    records = [decide(rows, "A", "B", Policy.paper(), rng=seed) for seed in range(12)]  # the paper's exact bootstrap tail
    assert {r.action for r in records} == {records[0].action} and records[0].action != "promote"
    assert {r.r_promote for r in records} == {records[0].r_promote}
    assert records[0].tail_method.startswith("exact on a 1/")
    bootstrap = Policy.model_validate({"tail_method": "bootstrap"})
    tails = {decide(rows, "A", "B", bootstrap, rng=seed).r_promote for seed in range(10)}
    assert len(tails) > 1  # what the old fallback did: R_promote (so the action at a look) varied with the seed
