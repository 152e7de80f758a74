"""Ranks, simultaneous rank intervals and tiers from a family's claims (``stopwise.compare._ranks``)."""

from __future__ import annotations

import itertools

import numpy as np

from stopwise.compare._ranks import best_system, observed_ranks, rank_intervals, tiers, transitive_claims


def test_transitive_closure_is_reachability() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        k = int(rng.integers(2, 10))
        order = rng.permutation(k)
        position = np.argsort(order)
        beats = (position[:, None] < position[None, :]) & (rng.random((k, k)) < 0.3)  # claims consistent with an order
        reach = beats.copy()
        for _ in range(k):  # reachability by repeated boolean matrix products
            reach = reach | ((reach.astype(int) @ beats.astype(int)) > 0)
        assert np.array_equal(transitive_claims(beats), reach)


def test_rank_intervals_contain_the_true_rank_when_every_claim_is_true() -> None:
    rng = np.random.default_rng(1)
    for _ in range(100):
        k = int(rng.integers(2, 12))
        means = rng.permutation(k).astype(float)  # distinct true means
        true_rank = observed_ranks(means)
        beats = (means[:, None] > means[None, :]) & (rng.random((k, k)) < 0.5)
        low, high = rank_intervals(transitive_claims(beats))
        assert ((low <= true_rank) & (true_rank <= high)).all()


def test_tiers_are_consecutive_and_no_claim_separates_two_members() -> None:
    rng = np.random.default_rng(2)
    for _ in range(100):
        k = int(rng.integers(1, 12))
        beats = np.triu(rng.random((k, k)) < 0.3, 1)
        groups = tiers(beats, range(k))
        assert [s for g in groups for s in g] == list(range(k))
        for g in groups:
            assert not (beats[np.ix_(g, g)] | beats[np.ix_(g, g)].T).any()
        for before, after in itertools.pairwise(groups):  # a tier starts at a system separated from the previous tier
            assert (beats[before, after[0]] | beats[after[0], before]).any()


def test_observed_ranks_share_ties_and_the_best_system_beats_all() -> None:
    assert observed_ranks([0.5, 0.7, 0.5, np.nan]).tolist() == [2, 1, 2, 4]
    beats = np.zeros((3, 3), dtype=bool)
    beats[0, 1] = beats[1, 2] = True
    assert best_system(beats) is None and best_system(transitive_claims(beats)) == 0
