"""One look at a fixed budget: exact action rates of the paper's bootstrap rule and of exact-wor (issue 21).

Every figure is an exact sum over all samples of n of the N planned tasks (multivariate
hypergeometric), no simulation. For each population (W wins, L losses, the rest ties) it prints the
probability of each final action under the paper's fixed-budget rule (exact bootstrap tails) and
under the ``exact-wor`` test, at delta = 0 and a = 0.05, and the time of one exact-wor table.

    python -m benchmarks.one_look_level          # N = 500, n = 20, 50, 100, 150
    python -m benchmarks.one_look_level --quick  # n = 20, 50 and one timed table: seconds
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from stopwise.compare import exact_tails_from_counts
from stopwise.compare._wor_exact import exact_wor_pvalues

A = 0.05


def samples(big_n: int, wins: int, losses: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = np.arange(n + 1)[:, None]
    l = np.arange(n + 1)[None, :]  # noqa: E741
    p = stats.hypergeom.pmf(w, big_n, wins, n) * stats.hypergeom.pmf(l, big_n - wins, losses, np.maximum(n - w, 0))
    p = np.where(w + l <= n, np.nan_to_num(p), 0.0)
    ws, ls = np.nonzero(p > 0)
    return ws, ls, p[ws, ls]


def rates(big_n: int, wins: int, losses: int, n: int) -> tuple[float, float, float, float]:
    """P(promote), P(reject) of the paper's rule, then of exact-wor."""
    ws, ls, ps = samples(big_n, wins, losses, n)
    counts = np.stack([ls, n - ws - ls, ws], axis=1)
    r_promote = exact_tails_from_counts(counts, 1, 0.0)
    above = ws > ls
    paper_promote = float(ps[above & (r_promote <= A)].sum())
    paper_reject = float(ps[~above & (1.0 - r_promote <= A)].sum())
    p_promote, p_reject = exact_wor_pvalues(n, big_n, 0.0)
    exact_promote = float(ps[above & (p_promote[ws, ls] <= A)].sum())
    exact_reject = float(ps[~above & (p_reject[ws, ls] <= A)].sum())
    return paper_promote, paper_reject, exact_promote, exact_reject


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-tasks", type=int, default=500)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50, 100, 150])
    parser.add_argument("--quick", action="store_true", help="sizes 20 and 50, one table timed: seconds, for CI")
    args = parser.parse_args()
    if args.quick:
        args.sizes = [20, 50]
    big_n = args.n_tasks
    populations = [(10, 0), (15, 5), (30, 20), (25, 25), (60, 60), (50, 25), (75, 25), (100, 50)]
    print(f"N = {big_n}, delta = 0, a = {A}: P(promote) / P(reject), paper's rule vs exact-wor (wrong action marked *)")
    print(f"{'W':>4} {'L':>4} {'Delta':>6} {'n':>4}  {'paper promote':>13} {'paper reject':>12}  {'exact promote':>13} {'exact reject':>12}")
    for wins, losses in populations:
        delta = (wins - losses) / big_n
        for n in args.sizes:
            pp, pr, ep, er = rates(big_n, wins, losses, n)
            wrong_promote, wrong_reject = delta <= 0, delta > 0

            def cell(value: float, wrong: bool) -> str:
                return f"{100 * value:.1f} %" + ("*" if wrong else " ")

            print(
                f"{wins:>4} {losses:>4} {delta:>+6.3f} {n:>4}  {cell(pp, wrong_promote):>13} {cell(pr, wrong_reject):>12}  "
                f"{cell(ep, wrong_promote):>13} {cell(er, wrong_reject):>12}"
            )
    for n in (50,) if args.quick else (50, 150, 300, big_n):
        start = time.perf_counter()
        exact_wor_pvalues(n, big_n, 0.01)  # a threshold not used above: a fresh table
        print(f"exact-wor tables (promote and reject) for n = {n} of N = {big_n}: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
