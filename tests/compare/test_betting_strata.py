"""The stratified betting process's per-group terms (compare/_strata.py) and paths, against independent computations.

* a per-row Python loop: running group sums and counts, and the null maximum by sorting the groups with
  ``sorted`` and filling the budget greedily in mean units (the textbook fractional knapsack);
* the REFERENCE implementation before the speed-up, kept in tests/support/betting_reference.py;
* the two computations of _strata (vectorised over the looks, and the loop over the looks) against each other.

Inputs cover ties of the fill order (equal group sizes and equal or zero increments), groups of one or two
tasks, groups exhausted early (group-by-group orders) and the whole population, thresholds at -1, near 1 and
exactly at a logical bound, both sides, and every strategy. Tolerance: |difference| <= 1e-12 (1 + |value|).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.support import betting_reference as REFERENCE

from stopwise.compare import _betting, _strata, betting_boundary, betting_paths, coverage_aware_orders
from stopwise.compare._betting import STRATEGIES


def _close(fast: np.ndarray, slow: np.ndarray, tol: float = 1e-12) -> None:
    fast, slow = np.asarray(fast), np.asarray(slow)
    assert fast.shape == slow.shape
    assert np.array_equal(np.isinf(fast), np.isinf(slow))
    assert np.array_equal(fast[np.isinf(fast)], slow[np.isinf(slow)])
    finite = np.isfinite(slow)
    assert np.all(np.abs(fast[finite] - slow[finite]) <= tol * (1.0 + np.abs(slow[finite])))


def naive_prefix(x: np.ndarray, codes: np.ndarray) -> tuple[list[float], list[float]]:
    """Running sum of the look's group including the look, less the look's difference; draw index j."""
    sums: dict[int, float] = {}
    counts: dict[int, int] = {}
    own, j = [], []
    for value, g in zip(x.tolist(), codes.tolist(), strict=True):
        sums[g] = sums.get(g, 0.0) + value
        counts[g] = counts.get(g, 0) + 1
        own.append(sums[g] - value)
        j.append(float(counts[g]))
    return own, j


def naive_maxima(increments: np.ndarray, sign: float, x: np.ndarray, codes: np.ndarray, sizes: np.ndarray, m0: float) -> list[float]:
    """max sum_g C_g m_g over {sum_g w_g m_g <= m0, lo <= m <= hi} (on sign * D, sign * m0) at each look, greedily."""
    n_pop = int(sizes.sum())
    w = sizes / n_pop
    coef = np.zeros(len(sizes))
    seen_sum = np.zeros(len(sizes))
    seen = np.zeros(len(sizes))
    out = []
    for inc, value, g in zip(increments.tolist(), x.tolist(), codes.tolist(), strict=True):
        coef[g] += inc
        seen_sum[g] += sign * value
        seen[g] += 1
        lo = (seen_sum - (sizes - seen)) / sizes
        hi = (seen_sum + (sizes - seen)) / sizes
        budget = sign * m0 - float(w @ lo)
        if budget < -1e-9:
            out.append(-math.inf)
            continue
        total = float(coef @ lo)
        for h in sorted(range(len(sizes)), key=lambda h: -coef[h] / w[h]):
            take = min(max(budget, 0.0), w[h] * (hi[h] - lo[h]))
            total += coef[h] / w[h] * take
            budget -= take
        out.append(total)
    return out


def _case(kind: str, n_rows: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x, codes, sizes, thresholds) of one kind of input, ``n_rows`` rows over the whole population."""
    rng = np.random.default_rng(seed)
    sizes = {
        "ties": np.array([6, 6, 6, 6]),
        "tiny": np.array([1, 2, 1, 9, 2, 5]),
        "exhausted": np.array([3, 7, 4, 2]),
        "mixed": np.array([14, 9, 5, 3, 1]),
    }[kind]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    n_pop = len(groups)
    if kind == "exhausted":  # group by group: each group is exhausted before the next starts
        orders = np.stack([np.concatenate([np.flatnonzero(groups == g) for g in rng.permutation(len(sizes))]) for _ in range(n_rows)])
    elif kind == "tiny":
        orders = np.stack([rng.permutation(n_pop) for _ in range(n_rows)])
    else:
        orders = coverage_aware_orders(groups, n_rows, rng=seed)
    lattice = {"ties": [-1.0, 0.0, 1.0], "tiny": [-1.0, -0.5, 0.0, 0.5, 1.0], "exhausted": [-1.0, 1.0]}
    if kind in lattice:
        x = rng.choice(lattice[kind], size=(n_rows, n_pop))
    else:
        x = rng.uniform(-1.0, 1.0, size=(n_rows, n_pop))
        x[:, ::3] = np.round(x[:, ::3])
    # thresholds at -1, near 1 and exactly at a row's logical bound after a third of the tasks (each side)
    t = n_pop // 3
    total = x[:, :t].sum(axis=1)
    extremes = np.r_[-1.0, 0.999, 0.0, (total - (n_pop - t)) / n_pop, (total + (n_pop - t)) / n_pop, x.mean(axis=1)]
    thresholds = np.r_[extremes, rng.uniform(-0.3, 0.3, n_rows)][:n_rows]
    return x, groups[orders], sizes, thresholds


KINDS = ["ties", "tiny", "exhausted", "mixed"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("loop", [False, True])
def test_group_prefix_matches_python_loop_bit_for_bit(kind: str, loop: bool) -> None:
    x, codes, sizes, _ = _case(kind, 7, seed=1)
    own, j = _strata.group_prefix(x, codes, len(sizes), loop=loop)
    for b in range(x.shape[0]):
        slow_own, slow_j = naive_prefix(x[b], codes[b])
        assert own[b].tolist() == slow_own
        assert j[b].tolist() == slow_j


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("increments", ["random", "equal", "sparse"])
def test_null_maxima_match_greedy_knapsack(kind: str, increments: str) -> None:
    x, codes, sizes, thresholds = _case(kind, 12, seed=2)
    rng = np.random.default_rng(3)
    inc = {
        "random": rng.uniform(0.0, 2.0, (2, *x.shape)),
        "equal": np.full((2, *x.shape), 0.3),  # equal coefficients in equal groups: tied ratios
        "sparse": rng.uniform(0.0, 1.0, (2, *x.shape)) * (rng.random((2, *x.shape)) < 0.3),  # mostly zero bets
    }[increments]
    signs = np.array([1.0, -1.0])
    fast = [_strata.null_maxima(inc, signs, x, codes, sizes, thresholds[:, None], loop=loop) for loop in (False, True)]
    for side, sign in enumerate(signs):
        for b in range(x.shape[0]):
            slow = naive_maxima(inc[side, b], sign, x[b], codes[b], sizes, float(thresholds[b]))
            _close(fast[0][side, b], np.array(slow))
            _close(fast[1][side, b], np.array(slow))
    assert np.isinf(fast[1]).any() and np.isfinite(fast[1]).any()


@pytest.mark.parametrize("kind", KINDS)
def test_both_computations_agree(kind: str) -> None:
    """The loop over the looks and the vectorised sort give the same maxima on many rows (tol 1e-13)."""
    x, codes, sizes, thresholds = _case(kind, 60, seed=4)
    inc = np.random.default_rng(5).uniform(0.0, 1.0, (4, *x.shape))
    signs = np.array([1.0, -1.0, 1.0, -1.0])
    by_loop = _strata.null_maxima(inc, signs, x, codes, sizes, thresholds[:, None], loop=True)
    vectorised = _strata.null_maxima(inc, signs, x, codes, sizes, thresholds[:, None], loop=False)
    _close(by_loop, vectorised, tol=1e-13)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_rows", [6, 40])
def test_paths_match_reference(strategy: str, kind: str, n_rows: int) -> None:
    """6 rows (vectorised over the looks) and 40 rows (the loop), over the whole population, against the REFERENCE."""
    assert not _strata.by_look(4, 6) and _strata.by_look(2, 40)
    x, codes, sizes, thresholds = _case(kind, n_rows, seed=6)
    x[:, :2] = x[:, :2] * 0.0  # an early tie of the pooled mean
    paths = betting_paths(x, thresholds, population_size=int(sizes.sum()), group_codes=codes, group_sizes=sizes, strategy=strategy)
    used = "max" if strategy == "auto" else strategy
    ref_p, ref_r = REFERENCE.reference_stratified(x, thresholds[:, None], codes, sizes, used, 0.05, None)
    _close(paths.log_promote, ref_p)
    _close(paths.log_reject, ref_r)


def test_paths_match_reference_with_truncation_and_alpha() -> None:
    x, codes, sizes, thresholds = _case("mixed", 30, seed=7)
    paths = betting_paths(x, thresholds, population_size=int(sizes.sum()), group_codes=codes, group_sizes=sizes, strategy="mixture", alpha=0.01, truncation=0.9)
    ref_p, ref_r = REFERENCE.reference_stratified(x, thresholds[:, None], codes, sizes, "mixture", 0.01, 0.9)
    _close(paths.log_promote, ref_p)
    _close(paths.log_reject, ref_r)


def test_prefixes_of_a_row_give_the_same_paths() -> None:
    """The paths at a look depend only on the prefix (the replay's growing prefixes rely on it)."""
    x, codes, sizes, thresholds = _case("mixed", 40, seed=8)
    n_pop = int(sizes.sum())
    whole = betting_paths(x, thresholds, population_size=n_pop, group_codes=codes, group_sizes=sizes)
    part = betting_paths(x[:, :11], thresholds, population_size=n_pop, group_codes=codes[:, :11], group_sizes=sizes)
    _close(part.log_promote, whole.log_promote[:, :11], tol=1e-13)
    _close(part.log_reject, whole.log_reject[:, :11], tol=1e-13)


@pytest.mark.parametrize("grouped", [False, True])
def test_row_chunks_do_not_change_paths(monkeypatch: pytest.MonkeyPatch, grouped: bool) -> None:
    x, codes, sizes, thresholds = _case("mixed", 70, seed=9)
    options = {"group_codes": codes, "group_sizes": sizes} if grouped else {}
    whole = betting_paths(x, thresholds, population_size=int(sizes.sum()), **options)
    monkeypatch.setattr(_betting, "STRATIFIED_ROWS", 35)  # two chunks, both computed by the loop over the looks
    monkeypatch.setattr(_betting, "POOLED_ROWS", 3)
    chunked = betting_paths(x, thresholds, population_size=int(sizes.sum()), **options)
    np.testing.assert_array_equal(chunked.log_promote, whole.log_promote)
    np.testing.assert_array_equal(chunked.log_reject, whole.log_reject)


def reference_boundary(x: np.ndarray, codes: np.ndarray, sizes: np.ndarray, threshold: float, alpha: float) -> tuple[float, float, float, float, np.ndarray]:
    """(p_promote, p_reject, lower, upper, log-capital promote) as betting_boundary computed them before issue 31:
    every coarse mean (with the threshold), then every fine mean of each bracket, each row by the REFERENCE paths."""
    n_pop, resolution = int(sizes.sum()), 0.01

    def run(m0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = (len(m0), len(x))
        return REFERENCE.reference_stratified(np.broadcast_to(x, rows), m0[:, None], np.broadcast_to(codes, rows), sizes, "max", alpha, None)

    level, steps = np.log(1.0 / alpha), round(_betting.COARSE_STEP / resolution)
    coarse = np.round(np.arange(-1.0 + steps * resolution, 1.0 - resolution / 2, steps * resolution), 12)
    log_p, log_r = run(np.r_[threshold, coarse])
    kept_p, kept_r = np.max(log_p[1:], axis=1) < level, np.max(log_r[1:], axis=1) < level
    edges = np.r_[-1.0, coarse, 1.0]
    k_low = int(np.argmax(kept_p)) if kept_p.any() else len(coarse)
    k_high = int(np.flatnonzero(kept_r)[-1]) + 1 if kept_r.any() else 0
    fine = np.round(np.arange(1, steps) * resolution, 12)
    fine_p, fine_r = run(np.r_[edges[k_low] + fine, edges[k_high] + fine])
    rejected_low = np.r_[True, np.max(fine_p[: len(fine)], axis=1) >= level, False]
    lower = float(np.r_[edges[k_low], edges[k_low] + fine, edges[k_low + 1]][int(np.argmin(rejected_low)) - 1])
    rejected_high = np.r_[False, np.max(fine_r[len(fine) :], axis=1) >= level, True]
    upper = float(np.r_[edges[k_high], edges[k_high] + fine, edges[k_high + 1]][int(np.flatnonzero(~rejected_high)[-1]) + 1])
    total = float(x.sum())
    logical = ((total - (n_pop - len(x))) / n_pop, (total + (n_pop - len(x))) / n_pop)
    p_promote, p_reject = (float(min(1.0, np.exp(-np.max(path[0])))) for path in (log_p, log_r))
    return p_promote, p_reject, max(lower, logical[0]), min(upper, logical[1]), log_p[0]


@pytest.mark.parametrize("kind", ["ties", "mixed"])
@pytest.mark.parametrize("fraction", [1 / 6, 2 / 3])
def test_boundary_matches_reference(kind: str, fraction: float) -> None:
    """betting_boundary with confidence bounds (a search of the coarse and fine grids that screens most means at a few
    looks, issue 31) gives the decision and the bounds of every grid mean computed by the REFERENCE."""
    x, codes, sizes, _ = _case(kind, 1, seed=10)
    labels = np.array([f"g{c}" for c in codes[0]])
    group_sizes = {f"g{g}": int(n) for g, n in enumerate(sizes)}
    n = round(fraction * int(sizes.sum()))
    current = betting_boundary(x[0, :n], 0.05, population_size=int(sizes.sum()), alpha=0.05, groups=labels[:n], group_sizes=group_sizes)
    p_promote, p_reject, lower, upper, log_promote = reference_boundary(x[0, :n], codes[0, :n], sizes, 0.05, 0.05)
    assert (current.lower, current.upper) == (lower, upper)
    assert (current.promote, current.reject) == (p_promote <= 0.05, p_reject <= 0.05)
    assert current.p_promote == pytest.approx(p_promote, rel=1e-12)
    assert current.p_reject == pytest.approx(p_reject, rel=1e-12)
    _close(current.log_capital_promote, log_promote)


@pytest.mark.parametrize("grouped", [False, True])
def test_no_rows_give_empty_paths(grouped: bool) -> None:
    options = {"group_codes": np.zeros(5, dtype=int), "group_sizes": [6, 4]} if grouped else {}
    paths = betting_paths(np.zeros((0, 5)), 0.0, population_size=10, **options)
    assert paths.log_promote.shape == paths.log_reject.shape == (0, 5)
    assert paths.stratified is grouped


@pytest.mark.parametrize("n_rows", [3, 40])
def test_one_and_two_groups_match_reference(n_rows: int) -> None:
    """Two groups: the reference stratified process. One group: the pooled process (issue 33; a one-group schedule is
    no schedule, and the pooled test is the stronger one)."""
    rng = np.random.default_rng(11)
    for sizes in (np.array([30]), np.array([1, 29])):
        groups = np.repeat(np.arange(len(sizes)), sizes)
        orders = np.stack([rng.permutation(len(groups)) for _ in range(n_rows)])
        x = rng.choice([-1.0, 0.0, 1.0], size=(n_rows, len(groups)))
        thresholds = rng.uniform(-0.5, 0.5, n_rows)
        paths = betting_paths(x, thresholds, population_size=len(groups), group_codes=groups[orders], group_sizes=sizes)
        if len(sizes) == 1:
            pooled = betting_paths(x, thresholds, population_size=len(groups))
            assert not paths.stratified and np.array_equal(paths.log_promote, pooled.log_promote) and np.array_equal(paths.log_reject, pooled.log_reject)
            continue
        ref_p, ref_r = REFERENCE.reference_stratified(x, thresholds[:, None], groups[orders], sizes, "max", 0.05, None)
        _close(paths.log_promote, ref_p)
        _close(paths.log_reject, ref_r)


def full_grid_bounds(x: np.ndarray, n_pop: int, alpha: float, codes: np.ndarray | None, sizes: np.ndarray | None, strategy: str) -> tuple[float, float]:
    """The confidence bounds of every coarse mean and every fine mean of both brackets, as computed before issue 31."""
    level, steps, resolution = np.log(1.0 / alpha), round(_betting.COARSE_STEP / 0.01), 0.01
    coarse = np.round(np.arange(-1.0 + steps * resolution, 1.0 - resolution / 2, steps * resolution), 12)
    log_p, log_r = _betting._threshold_paths(x, coarse, n_pop, codes, sizes, strategy, alpha)
    kept_p, kept_r = np.max(log_p, axis=1) < level, np.max(log_r, axis=1) < level
    edges = np.r_[-1.0, coarse, 1.0]
    k_low = int(np.argmax(kept_p)) if kept_p.any() else len(coarse)
    k_high = int(np.flatnonzero(kept_r)[-1]) + 1 if kept_r.any() else 0
    fine = np.round(np.arange(1, steps) * resolution, 12)
    fine_p = _betting._threshold_paths(x, edges[k_low] + fine, n_pop, codes, sizes, strategy, alpha)[0]
    fine_r = _betting._threshold_paths(x, edges[k_high] + fine, n_pop, codes, sizes, strategy, alpha)[1]
    rejected_low = np.r_[True, np.max(fine_p, axis=1) >= level, False]
    lower = np.r_[edges[k_low], edges[k_low] + fine, edges[k_low + 1]][int(np.argmin(rejected_low)) - 1]
    rejected_high = np.r_[False, np.max(fine_r, axis=1) >= level, True]
    upper = np.r_[edges[k_high], edges[k_high] + fine, edges[k_high + 1]][int(np.flatnonzero(~rejected_high)[-1]) + 1]
    total = float(x.sum())
    return max(float(lower), (total - (n_pop - len(x))) / n_pop), min(float(upper), (total + (n_pop - len(x))) / n_pop)


@pytest.mark.parametrize("seed", range(12))
def test_the_bound_search_finds_the_ends_of_the_full_grid(seed: int) -> None:
    """The confidence bounds skip the settled coarse means, screen the others at a few looks and stop each search at
    its first kept mean (issue 31): the ends are those of every grid mean computed, pooled and stratified, any bet."""
    rng = np.random.default_rng(100 + seed)
    n_pop = int(rng.integers(30, 400))
    n = int(rng.integers(1, n_pop + 1))
    x = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=n, p=rng.dirichlet([2, 1, 2, 1, 2]))
    n_groups = int(rng.integers(2, 9))
    labels = np.array([f"g{i % n_groups}" for i in range(n_pop)])[rng.permutation(n_pop)]
    names = sorted(set(labels.tolist()))
    sizes = np.array([int((labels == g).sum()) for g in names])
    codes = np.searchsorted(np.array(names), labels[:n])
    strategy = ["auto", "agrapa", "plug-in", "horizon", "mixture", "max"][seed % 6]
    for grouped in (False, True):
        options = {"groups": labels[:n], "group_sizes": dict(zip(names, sizes.tolist(), strict=True))} if grouped else {}
        got = betting_boundary(x, 0.0, population_size=n_pop, alpha=0.05, strategy=strategy, **options)
        assert (got.lower, got.upper) == full_grid_bounds(x, n_pop, 0.05, codes if grouped else None, sizes if grouped else None, strategy)


def test_the_knapsack_at_some_looks_is_the_knapsack_of_every_look_there() -> None:
    """side_maxima at chosen looks (the bounds' screening) gives the numbers of the whole computation, bit for bit."""
    rng = np.random.default_rng(12)
    sizes = np.array([40, 25, 35, 10, 30])
    codes = np.repeat(np.arange(5), sizes)[rng.permutation(int(sizes.sum()))][None, :90]
    x = rng.choice([-1.0, 0.0, 1.0], size=(1, 90))
    increments = rng.random((7, 90)) * (rng.random((7, 90)) < 0.9)
    budget = rng.uniform(-0.2, 1.0, (7, 90))
    groups = _strata.sequence_groups(x, codes, len(sizes))
    whole = _strata.side_maxima(increments, budget, 1.0, groups, sizes)
    looks = np.array([0, 7, 8, 44, 89])
    np.testing.assert_array_equal(_strata.side_maxima(increments, budget, 1.0, groups, sizes, looks), whole[:, looks])
    np.testing.assert_array_equal(_strata.side_maxima(increments[2:4], budget[2:4], 1.0, groups, sizes), whole[2:4])
