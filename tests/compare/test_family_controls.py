"""The family controls of ``stopwise.compare._multiple``: e-BH, closed e-testing, stopped e-BH, Holm and BY.

Reference values: the 15 p-values of Benjamini & Hochberg (1995, JRSS-B 57, section 4.1), where BH at 0.05 rejects
4 and Bonferroni 3; e-BH on e = 1/p is BH (Wang & Ramdas 2022, section 3), so it rejects the same 4. The closure is
checked against a brute-force closed test over every subset; stopped e-BH against a loop written here.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stopwise.compare import claim_looks, closed_e_test, e_bh, p_value_claims, stopped_e_bh
from stopwise.errors import ArgumentError

BH_1995 = np.array([0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0])


def test_e_bh_on_inverse_p_values_is_bh_on_the_published_example() -> None:
    rejected = e_bh(np.log(1.0 / BH_1995), 0.05)
    assert rejected.tolist() == [True] * 4 + [False] * 11


def _e_bh_reference(e: np.ndarray, alpha: float) -> np.ndarray:
    m = len(e)
    best = 0
    for k in range(1, m + 1):  # k* = max{k : the k-th largest e-value >= M / (a k)}
        if np.sort(e)[::-1][k - 1] >= m / (alpha * k):
            best = k
    return e >= m / (alpha * best) if best else np.zeros(m, dtype=bool)


def test_e_bh_matches_its_definition_on_random_families() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(1, 30))
        e = np.exp(rng.normal(2.0, 3.0, m))
        e[rng.random(m) < 0.1] = np.inf  # logically settled nulls
        got = e_bh(np.log(e), 0.05)
        assert got.tolist() == _e_bh_reference(e, 0.05).tolist()
        assert int(got.sum()) == 0 or e[got].min() >= m / (0.05 * got.sum()) * (1 - 1e-12)


def _closure_reference(e: np.ndarray, alpha: float) -> np.ndarray:
    """Reject j iff every subset S containing j has mean e-value >= 1/a (every one of the 2^(M-1) subsets)."""
    m = len(e)
    out = np.zeros(m, dtype=bool)
    for j in range(m):
        others = [i for i in range(m) if i != j]
        out[j] = all(np.mean(e[[j, *subset]]) >= 1.0 / alpha for r in range(m) for subset in itertools.combinations(others, r))
    return out


def test_closed_e_test_is_the_brute_force_closure() -> None:
    rng = np.random.default_rng(1)
    for _ in range(150):
        m = int(rng.integers(1, 8))
        e = np.exp(rng.normal(3.0, 2.0, m))  # many values around 1/a = 20
        assert closed_e_test(np.log(e), 0.05).tolist() == _closure_reference(e, 0.05).tolist()


def test_closed_e_test_contains_bonferroni_and_equals_it_alone() -> None:
    rng = np.random.default_rng(2)
    e = np.exp(rng.normal(2.0, 3.0, (500, 12)))
    closed = closed_e_test(np.log(e), 0.05)
    bonferroni = e >= 12 / 0.05
    assert (closed | ~bonferroni).all()  # every Bonferroni rejection is a closure rejection
    assert closed.sum() > bonferroni.sum()
    nothing = -np.inf  # log of an e-value of 0: alone above 1/a, a hypothesis needs 1/a + 2/a = M/a = 60
    assert closed_e_test([np.log(59.9), nothing, nothing], 0.05).tolist() == [False, False, False]
    assert closed_e_test([np.log(60.0), nothing, nothing], 0.05).tolist() == [True, False, False]


def _stopped_reference(paths: np.ndarray, alpha: float) -> np.ndarray:
    m, looks = paths.shape
    first = np.full(m, -1)
    stopped = np.zeros(m)
    for t in range(looks):
        e = np.where(first >= 0, stopped, paths[:, t])
        chosen = _e_bh_reference(e, alpha)
        for j in np.flatnonzero(chosen & (first < 0)):
            first[j], stopped[j] = t, e[j]
    return first


def test_stopped_e_bh_matches_a_loop_and_only_grows() -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        m, looks = int(rng.integers(2, 15)), int(rng.integers(1, 25))
        paths = np.exp(np.cumsum(rng.normal(0.3, 1.5, (m, looks)), axis=1))
        first = stopped_e_bh(np.log(paths), 0.05)
        assert first.tolist() == _stopped_reference(paths, 0.05).tolist()
    batched = stopped_e_bh(np.log(np.exp(np.cumsum(rng.normal(0.3, 1.5, (4, 6, 9)), axis=-1))), 0.05)
    assert batched.shape == (4, 6)


def test_stopped_e_bh_at_one_look_is_e_bh() -> None:
    e = np.log(1.0 / BH_1995)
    assert (stopped_e_bh(e[:, None], 0.05) == 0).tolist() == e_bh(e, 0.05).tolist()


def test_claim_looks_none_is_each_running_maximum_at_one_over_a() -> None:
    paths = np.log([[1.0, 25.0, 3.0], [1.0, 2.0, 19.0], [30.0, 1.0, 1.0]])
    assert claim_looks(paths, 0.05, "none").tolist() == [1, -1, 0]


def test_claim_looks_fwer_is_the_closure_at_each_look_accumulated() -> None:
    rng = np.random.default_rng(4)
    paths = np.cumsum(rng.normal(0.2, 1.2, (10, 30)), axis=1)
    first = claim_looks(paths, 0.05, "fwer")
    per_look = np.stack([closed_e_test(paths[:, t], 0.05) for t in range(30)], axis=1)
    expected = np.where(per_look.any(axis=1), per_look.argmax(axis=1), -1)
    assert first.tolist() == expected.tolist()


def test_a_gate_delays_a_claim_to_the_next_gated_look() -> None:
    paths = np.log([[30.0, 30.0, 30.0, 30.0], [1.0, 1.0, 1.0, 25.0]])
    gate = np.array([False, False, True, False])
    assert claim_looks(paths, 0.05, "none", gate=gate).tolist() == [2, -1]  # the second's look 3 has no gated look after it
    rows = claim_looks(np.stack([paths, paths]), 0.05, "none", gate=np.array([gate, [False, True, False, True]]))
    assert rows.tolist() == [[2, -1], [1, 3]]


def test_of_two_contradicting_claims_the_later_is_dropped() -> None:
    paths = np.log([[1.0, 30.0, 30.0], [1.0, 1.0, 40.0], [25.0, 25.0, 25.0], [21.0, 1.0, 1.0]])
    opposite = np.array([1, 0, 3, 2])
    assert claim_looks(paths, 0.05, "none").tolist() == [1, 2, 0, 0]
    assert claim_looks(paths, 0.05, "none", opposite=opposite).tolist() == [1, -1, 0, -1]  # same look: the larger e wins


def test_holm_and_by_on_the_published_example() -> None:
    # Holm: 0.0001 <= a/15, 0.0004 <= a/14, 0.0019 <= a/13, 0.0095 > a/12; BY: c(15) = 3.318, k* = 3
    assert p_value_claims(BH_1995, 0.05, "fwer").sum() == 3
    assert p_value_claims(BH_1995, 0.05, "fdr").sum() == 3
    assert p_value_claims(BH_1995, 0.05, "none").sum() == 9


def test_p_value_controls_match_their_definitions() -> None:
    rng = np.random.default_rng(5)
    for _ in range(200):
        m = int(rng.integers(1, 20))
        p = np.minimum(1.0, rng.exponential(0.05, m))
        ranked = np.sort(p)
        holm = 0
        while holm < m and ranked[holm] <= 0.05 / (m - holm):
            holm += 1
        c = sum(1.0 / i for i in range(1, m + 1))
        by = max([k for k in range(1, m + 1) if ranked[k - 1] <= k * 0.05 / (m * c)], default=0)
        assert p_value_claims(p, 0.05, "fwer").sum() == holm
        assert p_value_claims(p, 0.05, "fdr").sum() == by


@pytest.mark.parametrize("call", [lambda: e_bh(np.zeros(3), 1.5), lambda: claim_looks(np.zeros((2, 3)), 0.05, "holm"), lambda: claim_looks(np.zeros(3), 0.05, "none")])
def test_bad_arguments_are_argument_errors(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ArgumentError):
        call()
