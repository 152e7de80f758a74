"""Issue 33 item 4 (optional, measured): a prior-posterior-ratio (PPR) test on the (win, tie, loss) counts against the
default mixture bet, under uniform orders (sampling without replacement), on the shared win/tie/loss records.

The population of N tasks has W wins, T ties and L losses (paired 0/1 outcomes); mu = (W - L) / N. Under a prior pi
over the compositions c = (W, T, L), the prior-posterior ratio ``R_t(c) = pi(c) / pi_t(c)`` at the true composition is
a nonnegative martingale with R_0 = 1 under uniform sampling without replacement (Waudby-Smith & Ramdas 2020,
"Confidence sequences for sampling without replacement", section 2, the categorical case), so the promote test
``inf over the null {W - L <= delta N} of R_t(c) >= 1/a`` errs with probability at most a at any look (Ville), and
reject likewise. With a Dirichlet(1, 1, 1)-multinomial prior, ``R_t(c) = m_t / lik_t(c)``: the Polya-urn marginal of
the observed sequence over the hypergeometric likelihood of c (falling factorials). ``lik_t`` is log-concave in
(W, L) (lgamma(x + 1) - lgamma(x - k + 1) is concave), so its maximum over the null lies on the null's boundary
``W - L = delta N`` whenever the unconstrained maximum is outside the null: a one-dimensional search over W per
look (for delta = 0: W = L), exact up to the lattice.

Printed side by side on the same uniform orders: the share of (pair, order) runs resolved by 5, 10, 20 and 50 % of
the tasks (no coverage rule), for the mixture bet (the pooled default) and the PPR test, and the wrong-decision rate.
The issue's rule: keep the PPR test only if it resolves more at every budget. Not shipped (a benchmark only): see the
figures in docs/live_looks.md.

Usage: python -m benchmarks.ppr_martingale [--records swebench_verified,swebench_lite] [--pairs 200] [--orders 20] [--quick]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.special import gammaln

from benchmarks._data import records_path
from stopwise.compare import betting_paths, uniform_orders
from stopwise.records import read_outcomes

BUDGETS = (0.05, 0.1, 0.2, 0.5)
ALPHA = 0.05
PRIORS = ((1.0, 1.0, 1.0), (0.5, 0.5, 0.5), (1.0, 8.0, 1.0))
"""Dirichlet priors of (wins, ties, losses): uniform, Jeffreys, and one that expects mostly ties (as agent pairs show)."""


def _falling(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log of n (n - 1) ... (n - k + 1); -inf where k > n."""
    with np.errstate(invalid="ignore"):
        out = gammaln(n + 1.0) - gammaln(np.maximum(n - k, 0.0) + 1.0)
    return np.where(k <= n, out, -np.inf)


def ppr_log_evidence(x: np.ndarray, population: int, looks: int, prior: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """(R, looks) log of ``inf over the null of R_t`` for the promote and the reject test at delta = 0.

    ``x`` is (R, >= looks) in {-1, 0, 1}; ``prior`` the Dirichlet parameters of (wins, ties, losses). The null
    boundary is W = L (T = N - 2W), searched over every W.
    """
    x = x[:, :looks]
    w = np.cumsum(x > 0, axis=1).astype(float)[..., None]
    l_ = np.cumsum(x < 0, axis=1).astype(float)[..., None]
    t = np.arange(1, looks + 1, dtype=float)[None, :, None]
    tau = t - w - l_
    a_w, a_t, a_l = prior
    total = a_w + a_t + a_l
    log_m = (  # the Dirichlet-multinomial (Polya urn) probability of the observed sequence
        gammaln(total) - gammaln(total + t) + gammaln(a_w + w) - gammaln(a_w) + gammaln(a_t + tau) - gammaln(a_t) + gammaln(a_l + l_) - gammaln(a_l)
    )
    big_w = np.arange(0, population // 2 + 1, dtype=float)[None, None, :]  # W = L on the boundary
    big_t = population - 2.0 * big_w
    norm = gammaln(population + 1.0) - gammaln(population - t + 1.0)
    both = _falling(big_t, tau) - norm
    lik_promote = np.max(_falling(big_w, w) + _falling(big_w, l_) + both, axis=-1)  # the same on the boundary W = L
    evidence = (log_m - lik_promote[..., None])[..., 0]
    above, below = (w > l_)[..., 0], (w < l_)[..., 0]
    # the boundary maximum is the null's maximum only on the side the data point to; elsewhere report no evidence
    return np.where(above, evidence, 0.0), np.where(below, evidence, 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", default="swebench_verified,swebench_lite")
    parser.add_argument("--pairs", type=int, default=200, help="directed pairs sampled per record (seeded)")
    parser.add_argument("--orders", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="30 pairs x 5 orders of swebench_verified")
    args = parser.parse_args()
    names = ["swebench_verified"] if args.quick else args.records.split(",")
    n_pairs, n_orders = (30, 5) if args.quick else (args.pairs, args.orders)
    level = math.log(1.0 / ALPHA)
    for name in names:
        frame = read_outcomes(records_path(name)).to_frame()
        table = frame.pivot_table(index="task", columns="system", values="outcome", aggfunc="mean")
        values = table.to_numpy(dtype=float)
        if np.isnan(values).any() or not np.isin(values, (0.0, 1.0)).all():
            print(f"{name}: not a complete 0/1 record; skipped")
            continue
        big_n, systems = values.shape
        rng = np.random.default_rng(33)
        chosen = [(i, j) for i, j in rng.choice(systems, size=(4 * n_pairs, 2)) if i != j][:n_pairs]
        orders = uniform_orders(big_n, n_orders, rng=7)
        x = np.stack([(values[:, i] - values[:, j])[order] for i, j in chosen for order in orders])
        truth = np.repeat([np.sign(values[:, i].mean() - values[:, j].mean()) for i, j in chosen], n_orders)
        looks = math.ceil(max(BUDGETS) * big_n)
        start = time.perf_counter()
        paths = betting_paths(x[:, :looks], 0.0, population_size=big_n, alpha=ALPHA)
        mix_p, mix_r = paths.crossed(ALPHA)
        mix_s = time.perf_counter() - start
        start = time.perf_counter()
        results = {"mixture (default)": (mix_p, mix_r)}
        for prior in PRIORS:
            ppr_p, ppr_r = [], []
            for lo in range(0, len(x), 20):
                p, r = ppr_log_evidence(x[lo : lo + 20], big_n, looks, prior)
                ppr_p.append(np.maximum.accumulate(p, axis=1) >= level)
                ppr_r.append(np.maximum.accumulate(r, axis=1) >= level)
            results[f"PPR, Dirichlet{prior}"] = (np.concatenate(ppr_p), np.concatenate(ppr_r))
        ppr_s = time.perf_counter() - start
        print(f"\n{name}: N = {big_n}, {len(chosen)} directed pairs x {n_orders} uniform orders, delta = 0 (mixture {mix_s:.1f} s, PPR {ppr_s:.1f} s for {len(PRIORS)} priors)")
        shares = {}
        for label, (promote, reject) in results.items():
            crossed = promote | reject
            first = np.where(crossed.any(axis=1), np.argmax(crossed, axis=1) + 1, looks + 1)
            action = np.where(promote[np.arange(len(first)), np.minimum(first, looks) - 1] & (first <= looks), 1, np.where(first <= looks, -1, 0))
            wrong = ((action == 1) & (truth <= 0)) | ((action == -1) & (truth > 0))
            shares[label] = [float(np.mean(first <= math.ceil(b * big_n - 1e-9))) for b in BUDGETS]
            cells = "  ".join(f"{100 * s:5.1f} %" for s in shares[label])
            print(f"  {label:34s} resolved by {', '.join(f'{100 * b:g}' for b in BUDGETS)} %: {cells}; wrong {100 * wrong.mean():.2f} % of runs")
        for prior in PRIORS:
            better = all(p > m for p, m in zip(shares[f"PPR, Dirichlet{prior}"], shares["mixture (default)"], strict=True))
            print(f"  PPR, Dirichlet{prior} resolves more than the mixture at every budget: {better}")


if __name__ == "__main__":
    main()
