"""The anytime-valid betting boundary against naive re-implementations and null simulations.

The oracle: ``confseq`` does not build from PyPI on this machine (C++ extension), so the
papers' formulas are written separately and naively here (Python loops, scipy's LP solver for the
stratified infimum) and compared with the vectorised implementation to 1e-9.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linprog

from stopwise.compare import betting_boundary, betting_paths, coverage_aware_orders
from stopwise.compare._betting import HORIZON, HORIZON_TRUNCATION, TRUNCATION
from stopwise.errors import ComparisonError

ALPHA = 0.05


def naive_bets(mu: float, m_wor: float, var: float, t: int, strategy: str, n_pop: int) -> tuple[float, float]:
    """Untruncated promote and reject bet sizes (>= 0) of each single strategy."""
    kelly = (mu - m_wor) / (var + (mu - m_wor) ** 2)
    if strategy == "horizon":  # WSR (2023)'s fixed-n plug-in tuned to n = H = h N up to H, then t log(1 + t) rescaled
        big_h = max(1.0, HORIZON * n_pop)
        scale = big_h if t <= big_h else t * math.log(1 + t) / math.log(1 + big_h)
    else:
        scale = t * math.log(1 + t)
    plug = math.sqrt(2 * math.log(1 / ALPHA) / (var * scale))
    if strategy == "agrapa":
        return max(kelly, 0.0), max(-kelly, 0.0)
    if strategy == "plug-in":
        return plug, plug
    return max(kelly, 0.0, plug), max(-kelly, 0.0, plug)


def components(strategy: str) -> list[tuple[str, float]]:
    """(single strategy, truncation c) of each capital process a strategy averages."""
    truncation = {"max": TRUNCATION, "agrapa": TRUNCATION, "plug-in": TRUNCATION, "horizon": HORIZON_TRUNCATION}
    names = ["max", "horizon"] if strategy == "mixture" else [strategy]
    return [(name, truncation[name]) for name in names]


def log_mean_exp(values: list[float]) -> float:
    return math.log(sum(math.exp(v) for v in values) / len(values))


def naive_pooled(x: np.ndarray, n_pop: int, m0: float, strategy: str = "mixture") -> tuple[list[float], list[float]]:
    """WSR 2020 without-replacement capital, one task at a time; a mixture averages the components' capitals."""
    parts = [_naive_pooled_single(x, n_pop, m0, name, c) for name, c in components(strategy)]
    out_p, out_r = [], []
    for t in range(len(x)):
        seen = x[: t + 1].sum()
        unseen = n_pop - t - 1
        settled_p = seen - unseen > n_pop * m0 + 1e-9 * n_pop
        settled_r = seen + unseen < n_pop * m0 - 1e-9 * n_pop
        out_p.append(math.inf if settled_p else log_mean_exp([p[0][t] for p in parts]))
        out_r.append(math.inf if settled_r else log_mean_exp([p[1][t] for p in parts]))
    return out_p, out_r


def _naive_pooled_single(x: np.ndarray, n_pop: int, m0: float, strategy: str, c: float) -> tuple[list[float], list[float]]:
    kp, kr = 1.0, 1.0
    out_p, out_r = [], []
    for t in range(1, len(x) + 1):
        prev = x[: t - 1]
        m_wor = (n_pop * m0 - prev.sum()) / (n_pop - t + 1)
        mu = prev.sum() / t
        var = max((1.0 + ((prev - mu) ** 2).sum()) / t, 1e-12)
        up, down = naive_bets(mu, m_wor, var, t, strategy, n_pop)
        if -1 < m_wor < 1:
            kp *= 1 + min(up, c / (1 + m_wor)) * (x[t - 1] - m_wor)
            kr *= 1 - min(down, c / (1 - m_wor)) * (x[t - 1] - m_wor)
        out_p.append(math.log(kp))
        out_r.append(math.log(kr))
    return out_p, out_r


def naive_stratified(x: np.ndarray, codes: np.ndarray, sizes: np.ndarray, m0: float, strategy: str = "max") -> tuple[list[float], list[float]]:
    """Per-group empirical-Bernstein factors, log K linear in m, infimum over the null by scipy's LP; a mixture
    averages the components' infima (a lower bound of the mixture's infimum)."""
    parts = [_naive_stratified_single(x, codes, sizes, m0, name, c) for name, c in components(strategy)]
    return (
        [log_mean_exp([p[0][t] for p in parts]) for t in range(len(x))],
        [log_mean_exp([p[1][t] for p in parts]) for t in range(len(x))],
    )


def _naive_stratified_single(x: np.ndarray, codes: np.ndarray, sizes: np.ndarray, m0: float, strategy: str, c: float) -> tuple[list[float], list[float]]:
    n_pop = int(sizes.sum())
    w = sizes / n_pop
    n_groups = len(sizes)
    a_p = a_r = 0.0
    c_p, c_r = np.zeros(n_groups), np.zeros(n_groups)
    out_p, out_r = [], []
    for t in range(1, len(x) + 1):
        prev = x[: t - 1]
        m_wor = (n_pop * m0 - prev.sum()) / (n_pop - t + 1)
        mu = prev.sum() / t
        var = max((1.0 + ((prev - mu) ** 2).sum()) / t, 1e-12)
        up, down = naive_bets(mu, m_wor, var, t, strategy, n_pop)
        lam_p, lam_r = min(up, c / 2), min(down, c / 2)
        g = codes[t - 1]
        own = x[: t - 1][codes[: t - 1] == g]
        j = len(own) + 1
        n_g = sizes[g]
        centre = (own.sum() + mu) / j
        psi = lambda u: -math.log1p(-u) - u  # noqa: E731
        spread = (x[t - 1] - centre) ** 2 / 4
        # lambda (x - m_wor_g) with m_wor_g = (n_g m_g - S_own) / (n_g - j + 1): split into a constant and m_g's slope
        a_p += lam_p * (x[t - 1] + own.sum() / (n_g - j + 1)) - psi(2 * lam_p) * spread
        a_r += -lam_r * (x[t - 1] + own.sum() / (n_g - j + 1)) - psi(2 * lam_r) * spread
        c_p[g] += lam_p * n_g / (n_g - j + 1)
        c_r[g] += lam_r * n_g / (n_g - j + 1)
        seen_sum = np.array([x[:t][codes[:t] == h].sum() for h in range(n_groups)])
        seen_n = np.array([(codes[:t] == h).sum() for h in range(n_groups)])
        lo = (seen_sum - (sizes - seen_n)) / sizes
        hi = (seen_sum + (sizes - seen_n)) / sizes
        bounds = list(zip(lo, hi, strict=True))
        # promote: inf over sum w m <= m0 of a_p - c_p . m  <=>  a_p + min(-c_p . m)
        res = linprog(-c_p, A_ub=[w], b_ub=[m0], bounds=bounds, method="highs")
        out_p.append(a_p + res.fun if res.status == 0 else math.inf)
        res = linprog(c_r, A_ub=[-w], b_ub=[-m0], bounds=bounds, method="highs")
        out_r.append(a_r + res.fun if res.status == 0 else math.inf)
    return out_p, out_r


def direct_stratified_log_capital(x: np.ndarray, codes: np.ndarray, sizes: np.ndarray, m0: float, m: np.ndarray, strategy: str) -> float:
    """Promote log-capital at one group-mean vector m, factor by factor (no linear decomposition); a mixture
    averages the components' capitals."""
    n_pop = int(sizes.sum())
    totals = []
    for name, c in components(strategy):
        total = 0.0
        for t in range(1, len(x) + 1):
            prev = x[: t - 1]
            m_wor = (n_pop * m0 - prev.sum()) / (n_pop - t + 1)
            mu = prev.sum() / t
            var = max((1.0 + ((prev - mu) ** 2).sum()) / t, 1e-12)
            lam = min(naive_bets(mu, m_wor, var, t, name, n_pop)[0], c / 2)
            g = codes[t - 1]
            own = x[: t - 1][codes[: t - 1] == g]
            j = len(own) + 1
            m_group_wor = (sizes[g] * m[g] - own.sum()) / (sizes[g] - j + 1)
            centre = (own.sum() + mu) / j
            total += lam * (x[t - 1] - m_group_wor) - (-math.log1p(-2 * lam) - 2 * lam) * (x[t - 1] - centre) ** 2 / 4
        totals.append(total)
    return log_mean_exp(totals)


def _close(fast: np.ndarray, slow: list[float]) -> None:
    slow_arr = np.asarray(slow)
    assert np.array_equal(np.isinf(fast), np.isinf(slow_arr))
    finite = np.isfinite(slow_arr)
    np.testing.assert_allclose(fast[finite], slow_arr[finite], rtol=0, atol=1e-9)


@pytest.mark.parametrize("strategy", ["auto", "mixture", "max", "horizon", "agrapa", "plug-in"])
@pytest.mark.parametrize(("m0", "probs"), [(0.0, (0.2, 0.5, 0.3)), (0.05, (0.35, 0.4, 0.25)), (-0.3, (0.5, 0.4, 0.1))])
def test_pooled_matches_naive(strategy: str, m0: float, probs: tuple[float, float, float]) -> None:
    rng = np.random.default_rng(1)
    n_pop = 120
    x = rng.choice([-1.0, 0.0, 1.0], p=probs, size=n_pop)
    x[:10] = rng.uniform(-1, 1, size=10)  # off-lattice values too
    paths = betting_paths(x[None, :90], m0, population_size=n_pop, strategy=strategy)
    slow_p, slow_r = naive_pooled(x[:90], n_pop, m0, "mixture" if strategy == "auto" else strategy)
    _close(paths.log_promote[0], slow_p)
    _close(paths.log_reject[0], slow_r)


def test_pooled_full_population_is_settled_logically() -> None:
    x = np.r_[np.ones(30), -np.ones(20), np.zeros(50)]
    paths = betting_paths(x[None, :], 0.0, population_size=100)
    slow_p, _ = naive_pooled(x, 100, 0.0)
    _close(paths.log_promote[0], slow_p)
    # the mean is 0.1 > 0: promote is certain once 30 + 20 - ... the remaining cannot pull it below 0
    first_inf = int(np.argmax(np.isinf(paths.log_promote[0])))
    assert first_inf + 1 == 100 - 10 + 1  # S_t - (N - t) > 0 first when t = 91 (S = 10, 9 unseen)
    assert betting_boundary(x, 0.0, population_size=100, alpha=ALPHA).p_promote == 0.0


@pytest.mark.parametrize("strategy", ["auto", "mixture", "max", "horizon"])
@pytest.mark.parametrize("m0", [0.0, 0.1])
def test_stratified_matches_naive_lp(m0: float, strategy: str) -> None:
    rng = np.random.default_rng(2)
    sizes = np.array([40, 25, 15, 12, 6, 2])
    groups = np.repeat(np.arange(6), sizes)
    order = coverage_aware_orders(groups, 1, rng=3)[0]
    values = np.clip(rng.choice([-1.0, 0.0, 1.0], p=(0.25, 0.4, 0.35), size=len(groups)) + 0.0, -1, 1)
    x, codes = values[order][:70], groups[order][:70]
    paths = betting_paths(x[None, :], m0, population_size=int(sizes.sum()), group_codes=codes, group_sizes=sizes, strategy=strategy)
    slow_p, slow_r = naive_stratified(x, codes, sizes, m0, "max" if strategy == "auto" else strategy)
    _close(paths.log_promote[0], slow_p)
    _close(paths.log_reject[0], slow_r)


@pytest.mark.parametrize("strategy", ["mixture", "max"])
def test_stratified_settled_paths_match_naive(strategy: str) -> None:
    """A tested system that wins nearly everywhere: the null becomes logically impossible (+inf) mid-way."""
    sizes = np.array([12, 8, 5])
    groups = np.repeat(np.arange(3), sizes)
    order = coverage_aware_orders(groups, 1, rng=8)[0]
    values = np.ones(25)
    values[[3, 17]] = -1.0
    x, codes = values[order], groups[order]
    paths = betting_paths(x[None, :], 0.0, population_size=25, group_codes=codes, group_sizes=sizes, strategy=strategy)
    slow_p, slow_r = naive_stratified(x, codes, sizes, 0.0, strategy)
    assert np.isinf(paths.log_promote[0, -1])
    _close(paths.log_promote[0], slow_p)
    _close(paths.log_reject[0], slow_r)


@pytest.mark.parametrize("strategy", ["max", "mixture"])
def test_stratified_infimum_is_below_every_null_point(strategy: str) -> None:
    """The reported log-capital is the infimum (for a mixture: the average of the components' infima, a lower
    bound of the mixture's): no group-mean vector in the null gives less."""
    rng = np.random.default_rng(4)
    sizes = np.array([30, 20, 10])
    groups = np.repeat(np.arange(3), sizes)
    order = coverage_aware_orders(groups, 1, rng=5)[0]
    values = rng.choice([-1.0, 0.0, 1.0], p=(0.2, 0.4, 0.4), size=60)
    x, codes = values[order][:40], groups[order][:40]
    log_p = betting_paths(x[None, :], 0.0, population_size=60, group_codes=codes, group_sizes=sizes, strategy=strategy).log_promote[0, -1]
    seen = np.array([x[codes == g].sum() for g in range(3)])
    count = np.bincount(codes, minlength=3)
    lo, hi = (seen - (sizes - count)) / sizes, (seen + (sizes - count)) / sizes
    values_at = []
    for _ in range(200):
        m = rng.uniform(lo, hi) ** 1  # a random box point, pulled toward lo until sum w m <= 0
        w = sizes / 60
        assert w @ lo <= 0
        m = lo + min(1.0, -(w @ lo) / (w @ (m - lo))) * (m - lo)
        assert w @ m <= 1e-12
        values_at.append(direct_stratified_log_capital(x, codes, sizes, 0.0, m, strategy))
    assert log_p <= min(values_at) + 1e-9
    assert log_p >= min(values_at) - 1.0  # and not vacuous


def test_boundary_fields_and_bounds() -> None:
    rng = np.random.default_rng(6)
    x = rng.choice([-1.0, 0.0, 1.0], p=(0.15, 0.45, 0.4), size=150)
    b = betting_boundary(x, 0.0, population_size=400, alpha=ALPHA)
    slow_p, slow_r = naive_pooled(x, 400, 0.0)
    assert b.p_promote == pytest.approx(min(1.0, math.exp(-max(slow_p))), rel=1e-9)
    assert b.p_reject == pytest.approx(min(1.0, math.exp(-max(slow_r))), rel=1e-9)
    assert (b.n, b.population_size, b.promote, b.reject) == (150, 400, True, False)
    assert b.logical_lower == pytest.approx((x.sum() - 250) / 400)
    assert b.logical_lower <= b.lower < x.mean() < b.upper <= b.logical_upper
    # promote rejected delta = 0, so the lower bound lies above it, and the level-alpha promote test at the lower
    # bound's grid point is rejected while one grid step above it is not
    assert b.lower >= 0.0
    quick = betting_boundary(x, 0.0, population_size=400, alpha=ALPHA, confidence_bounds=False)
    assert (quick.p_promote, quick.p_reject) == (b.p_promote, b.p_reject)
    assert (quick.lower, quick.upper) == (b.logical_lower, b.logical_upper)
    np.testing.assert_array_equal(quick.log_capital_promote, b.log_capital_promote)
    above = betting_boundary(x, b.lower + 0.01, population_size=400, alpha=ALPHA)
    assert not above.promote
    assert betting_boundary(x, b.lower, population_size=400, alpha=ALPHA).promote


def test_confidence_sequence_covers_the_population_mean() -> None:
    """Running bounds contain the finite-population mean at every look in >= 1 - 2 alpha of populations."""
    rng = np.random.default_rng(7)
    misses = 0
    n_sims = 60
    for _ in range(n_sims):
        population = rng.choice([-1.0, 0.0, 1.0], p=(0.3, 0.3, 0.4), size=200)
        mu = population.mean()
        x = rng.permutation(population)
        missed = False
        for n in (20, 60, 120, 199):
            b = betting_boundary(x[:n], 0.0, population_size=200, alpha=ALPHA, resolution=0.02)
            missed |= not (b.lower <= mu <= b.upper)
        misses += missed
    assert misses / n_sims <= 2 * ALPHA + 2 * math.sqrt(2 * ALPHA * (1 - 2 * ALPHA) / n_sims)


def test_stratified_boundary_api_and_errors() -> None:
    x = np.array([1.0, 1.0, 0.0, -1.0, 1.0])
    groups = np.array(["a", "b", "a", "c", "b"])
    b = betting_boundary(x, 0.0, population_size=20, alpha=ALPHA, groups=groups, group_sizes={"a": 10, "b": 6, "c": 4})
    assert b.method == "betting-wor (max(aGRAPA, plug-in), stratified, 3 groups)"
    assert 0.0 < b.p_promote <= 1.0 and b.log_capital_promote.shape == (5,)
    with pytest.raises(ComparisonError, match="sum to the population size 20"):
        betting_boundary(x, 0.0, population_size=20, alpha=ALPHA, groups=groups, group_sizes={"a": 10, "b": 6, "c": 5})
    with pytest.raises(ComparisonError, match="not in the planned groups"):
        betting_boundary(x, 0.0, population_size=20, alpha=ALPHA, groups=groups, group_sizes={"a": 10, "b": 10})
    with pytest.raises(ComparisonError, match="only 1 planned"):
        betting_boundary(x, 0.0, population_size=20, alpha=ALPHA, groups=groups, group_sizes={"a": 1, "b": 15, "c": 4})
    with pytest.raises(ComparisonError, match=r"\[-1, 1\]; found 2"):
        betting_boundary([0.5, 2.0], 0.0, population_size=20, alpha=ALPHA)
    with pytest.raises(ComparisonError, match="only 3 tasks"):
        betting_boundary(np.zeros(5), 0.0, population_size=3, alpha=ALPHA)
    with pytest.raises(ComparisonError, match="alpha"):
        betting_boundary(np.zeros(5), 0.0, population_size=30, alpha=1.5)
    empty = betting_boundary([], 0.0, population_size=30, alpha=ALPHA)
    assert (empty.p_promote, empty.p_reject, empty.n, empty.lower, empty.upper) == (1.0, 1.0, 0, -1.0, 1.0)


# ---------------------------------------------------------------- null simulations (small versions)

SIZES = np.array([110, 70, 50, 35, 25, 10])  # N = 300 in 6 unequal groups


def sharp_null(rng: np.random.Generator, delta: float, n_sims: int, group_targets: np.ndarray | None = None) -> np.ndarray:
    """Finite populations with heterogeneous difficulty whose mean difference is exactly delta.

    Each task has a difficulty p ~ Beta(a_g, b_g) varying by group; B passes with p and A with
    p + delta (clipped), one attempt each; then single outcomes are nudged until each group's sum
    of D hits its target (default: N_g delta, i.e. every group at delta). Returns (n_sims, N).
    """
    groups = np.repeat(np.arange(len(SIZES)), SIZES)
    shape_a = np.array([0.5, 1.0, 2.0, 4.0, 1.0, 0.7])[groups]
    shape_b = np.array([2.0, 1.0, 1.0, 1.0, 3.0, 0.7])[groups]
    targets = np.rint(SIZES * delta) if group_targets is None else group_targets
    out = np.empty((n_sims, len(groups)))
    for s in range(n_sims):
        p = rng.beta(shape_a, shape_b)
        d = (rng.random(len(p)) < np.clip(p + delta, 0, 1)).astype(float) - (rng.random(len(p)) < p)
        for g, target in enumerate(targets):
            idx = np.flatnonzero(groups == g)
            excess = int(d[idx].sum() - target)
            while excess != 0:
                movable = idx[d[idx] > -1] if excess > 0 else idx[d[idx] < 1]
                i = rng.choice(movable)
                d[i] += -1.0 if excess > 0 else 1.0
                excess += -1 if excess > 0 else 1
        out[s] = d
    return out


def _false_promotes(populations: np.ndarray, delta: float, order: str, stratified: bool, rng: np.random.Generator) -> float:
    groups = np.repeat(np.arange(len(SIZES)), SIZES)
    n_sims, n = populations.shape
    if order == "uniform":
        orders = np.argsort(rng.random((n_sims, n)), axis=1)
    elif order == "coverage-aware":
        orders = coverage_aware_orders(groups, n_sims, rng=rng)
    else:  # group-blocked: a predictable schedule that runs the groups one after another, largest group last
        blocks = np.concatenate([rng.permutation(np.flatnonzero(groups == g)) for g in range(len(SIZES) - 1, -1, -1)])
        orders = np.broadcast_to(blocks, (n_sims, n))
    values = np.take_along_axis(populations, orders, axis=1)
    codes = groups[orders] if stratified else None
    paths = betting_paths(values, delta, population_size=n, group_codes=codes, group_sizes=SIZES if stratified else None)
    promote, _ = paths.crossed(ALPHA)
    return float(promote.any(axis=1).mean())


def _bound(n_sims: int) -> float:
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / n_sims)


@pytest.mark.parametrize("delta", [0.0, 0.05])
@pytest.mark.parametrize(("order", "stratified"), [("uniform", False), ("coverage-aware", True)])
def test_null_simulation_false_promote_rate(delta: float, order: str, stratified: bool) -> None:
    """Looks after every task; false-promote rate <= a + 2 SE (400 simulated benchmarks)."""
    rng = np.random.default_rng(11)
    populations = sharp_null(rng, delta, 400)
    assert np.allclose(populations.mean(axis=1), delta)
    rate = _false_promotes(populations, delta, order, stratified, rng)
    assert rate <= _bound(400)


def test_null_with_differing_group_means() -> None:
    """Group means differ (overall mean = 0): the stratified process holds under the coverage-aware order and
    under a group-blocked schedule, where the pooled process fails."""
    rng = np.random.default_rng(12)
    targets = np.array([-40, -10, 15, 20, 10, 5])  # group mean differences -0.36 .. +0.57, sum 0
    assert targets.sum() == 0
    populations = sharp_null(rng, 0.0, 400, group_targets=targets)
    assert np.allclose(populations.mean(axis=1), 0.0)
    assert _false_promotes(populations, 0.0, "coverage-aware", True, rng) <= _bound(400)
    assert _false_promotes(populations, 0.0, "blocked", True, rng) <= _bound(400)
    assert _false_promotes(populations, 0.0, "blocked", False, rng) > 0.5


def test_power_under_an_alternative() -> None:
    """Mean difference 0.15 on N = 300: both strategies always promote by N, never reject, and mostly stop by half."""
    rng = np.random.default_rng(13)
    populations = sharp_null(rng, 0.15, 200)
    orders = np.argsort(rng.random(populations.shape), axis=1)
    values = np.take_along_axis(populations, orders, axis=1)
    for strategy in ("mixture", "max", "horizon", "agrapa", "plug-in"):
        promote, reject = betting_paths(values, 0.0, population_size=300, strategy=strategy).crossed(ALPHA)
        assert not reject.any()
        assert promote[:, -1].all()  # the population mean 0.15 > 0 is always found by N
        assert np.median(np.argmax(promote, axis=1) + 1) < 100


def test_one_group_is_the_pooled_process() -> None:
    """Issue 33: with one group a group schedule is no schedule, and the stratified call is the pooled process."""
    import numpy as np

    from stopwise.compare import betting_boundary, betting_paths

    rng = np.random.default_rng(4)
    x = rng.choice([1.0, 0.0, -1.0], p=[0.3, 0.5, 0.2], size=(6, 80))
    pooled = betting_paths(x, 0.0, population_size=300)
    one = betting_paths(x, 0.0, population_size=300, group_codes=np.zeros(80, dtype=np.int64), group_sizes=[300])
    assert np.array_equal(one.log_promote, pooled.log_promote) and np.array_equal(one.log_reject, pooled.log_reject)
    assert not one.stratified and one.strategy == pooled.strategy == "mixture"
    b_pooled = betting_boundary(x[0], 0.0, population_size=300, alpha=0.05)
    b_one = betting_boundary(x[0], 0.0, population_size=300, alpha=0.05, groups=["g"] * 80, group_sizes={"g": 300})
    assert (b_one.p_promote, b_one.p_reject, b_one.lower, b_one.upper, b_one.method) == (
        b_pooled.p_promote, b_pooled.p_reject, b_pooled.lower, b_pooled.upper, b_pooled.method
    )
