"""Issue 32, done when: seeded families of k = 4 and k = 12 systems under a global null, a partial null (half equal)
and a ladder (small steps) keep FWER <= a + 2 SE for ``fwer`` at every look and FDR <= a + 2 SE for ``fdr`` at the
publication looks (half and all of the tasks), while the per-pair mode's FWER exceeds a on the 12-system null.

SE = sqrt(a (1 - a) / R), as in the per-pair live replay: R = 2,000 replications in the slow lane (a + 2 SE = 5.97 %)
and R = 300 in the default lane (a + 2 SE = 7.52 %). Each replication is a new benchmark of N = 200 tasks with exact
solved counts (:func:`stopwise.replay.family_populations`) and a new uniformly random order, a look after every task.
"""

from __future__ import annotations

import math

import pytest

from stopwise.replay import simulate_family

ALPHA = 0.05
N_TASKS = 200
SCENARIOS = {
    "global null": lambda k: [100] * k,
    "partial null": lambda k: [100] * (k // 2) + [100 + 12 * j for j in range(1, k - k // 2 + 1)],
    "ladder": lambda k: [80 + 6 * s for s in range(k)],  # 3 pp steps
}


def _check(k: int, scenario: str, replications: int, seed: int) -> None:
    counts = SCENARIOS[scenario](k)
    table = simulate_family(counts, N_TASKS, replications, alpha=ALPHA, rng=seed).set_index("control")
    bound = ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / replications)
    assert table.loc["fwer", "fwer_max"] <= bound, table.loc["fwer"]
    for publication in ("0.5", "1"):
        assert table.loc["fdr", f"fdr_{publication}"] <= bound, table.loc["fdr"]
    if scenario == "global null" and k == 12:
        assert table.loc["none", "fwer_max"] > bound  # per pair, 132 claims: the family is not controlled
    if scenario != "global null":  # the controls still find real gaps by the end (finite population: N settles all)
        assert table.loc["fwer", "power_1"] > 0.95 and table.loc["fdr", "power_0.5"] >= table.loc["fwer", "power_0.5"]


@pytest.mark.parametrize("k", [4, 12])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_family_controls_on_seeded_families(k: int, scenario: str) -> None:
    _check(k, scenario, 300, seed=k)


@pytest.mark.slow
@pytest.mark.parametrize("k", [4, 12])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_family_controls_on_seeded_families_full_scale(k: int, scenario: str) -> None:
    _check(k, scenario, 2000, seed=100 + k)
