"""Issue 34: tasks to promote under the power-tuned prediction-powered boundary with active audits, beside the previous
treatment and the full evaluation, on a real SWE-bench Verified pair and the same seeded orders.

The pair: ``20241029_OpenHands-CodeAct-2.1-sonnet-20241022`` (tested, 53.0 %) against
``20240628_autocoderover-v20240620`` (38.4 %) on the 500 shared tasks: Delta = +14.6 pp. (The issue's
"20240924_solver vs 20240824_gru" differ by 0.2 pp; the closest pairs to +14.6 pp are four, this is one.)

The seeded good halting model: each run is halted with probability 0.5; its prediction is wrong with probability
0.05 whatever the outcome (unbiased); its confidence is uniform on [0.9, 1]. Each run has its own audit uniform.

- ``full evaluation``: the pooled betting-wor boundary on the true differences (:func:`stopwise.compare.betting_paths`).
- ``previous``: ``prediction-powered`` with the audited-bound centre at a uniform audit rho
  (:func:`stopwise.compare.powered_paths`), audited iff u < rho.
- ``tuned``: :mod:`stopwise.compare._tuned` with the active rule of mean rho (:class:`ActiveAudits`), audited iff u < pi.

Printed: the median number of tasks to promote (over the orders; inf when fewer than half promote within the 500),
its ratio to the full evaluation's, the share promoted by 20 % of the tasks, and the realised mean audit probability.

Usage: python -m benchmarks.tuned_power [--orders 400] [--seed 1] [--rhos 0.5,0.3] [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks._data import records_path
from stopwise.compare import AuditTallies, betting_paths, powered_paths, powered_scale
from stopwise.compare._tuned import ActiveAudits, tuned_paths, tuned_values
from stopwise.records import read_outcomes

TESTED, BASELINE = "20241029_OpenHands-CodeAct-2.1-sonnet-20241022", "20240628_autocoderover-v20240620"
ALPHA = 0.05


def pair_outcomes() -> np.ndarray:
    """(N, 2) outcomes of the tested and the baseline system on their shared tasks (task order of the file)."""
    rows = read_outcomes(records_path("swebench_verified"))
    frame = rows.to_frame()
    table = frame[frame["system"].isin([TESTED, BASELINE])].pivot_table(
        index="task", columns="system", values="outcome"
    )
    table = table.dropna()
    return table[[TESTED, BASELINE]].to_numpy(dtype=float)


def simulate(
    y: np.ndarray, n_orders: int, seed: int, *, halt: float = 0.5, wrong: float = 0.05
) -> dict[str, np.ndarray]:
    """Seeded orders and runs: (R, N, 2) outcomes in look order, halts, predictions, confidences and audit uniforms."""
    rng = np.random.default_rng(seed)
    n = len(y)
    orders = np.argsort(rng.random((n_orders, n)), axis=1)
    outcome = y[orders]
    shape = outcome.shape
    halted = rng.random(shape) < halt
    prediction = np.where(rng.random(shape) < wrong, 1.0 - outcome, outcome)
    return {
        "outcome": outcome,
        "halted": halted,
        "prediction": prediction,
        "confidence": 0.9 + 0.1 * rng.random(shape),
        "draw": rng.random(shape),
    }


def first_promote(log_promote: np.ndarray) -> np.ndarray:
    """The look (1-based) at which each row's promote test first crosses 1/a; inf when it never does."""
    crossed = np.maximum.accumulate(log_promote, axis=1) >= np.log(1.0 / ALPHA)
    return np.where(crossed.any(axis=1), crossed.argmax(axis=1) + 1.0, np.inf)


def previous_looks(sim: dict[str, np.ndarray], rho: float) -> np.ndarray:
    """The previous treatment (uniform audit rho, g = f, audited-bound centre at a / 5) on the same runs."""
    y, h, f, u = sim["outcome"], sim["halted"], sim["prediction"], sim["draw"]
    audited = h & (u < rho)
    predicted = h & ~audited
    value = np.where(audited, f + (y - f) / rho, np.where(predicted, f, y))
    low = np.where(predicted, np.array([0.0, 1.0]), y)
    high = np.where(predicted, np.array([1.0, 0.0]), y)
    point = np.where(predicted, f, y)
    wrong = audited & (f != y)
    fav = f == np.array([1.0, 0.0])

    def d(v: np.ndarray) -> np.ndarray:
        return v[..., 0] - v[..., 1]

    tallies = AuditTallies(
        point=d(point), wrong_low=(wrong & fav).sum(-1).astype(float), wrong_high=(wrong & ~fav).sum(-1).astype(float)
    )
    n = y.shape[1]
    paths = powered_paths(d(value), d(low), d(high), 0.0, population_size=n, alpha=ALPHA, scale=powered_scale(rho),
                          centre="audited-bound", audit=tallies, audit_fraction=rho)  # fmt: skip
    return first_promote(paths.log_promote)


def tuned_looks(sim: dict[str, np.ndarray], rule: ActiveAudits) -> tuple[np.ndarray, float]:
    """The tuned treatment's first promotes and the realised mean audit probability of the halts."""
    values = tuned_values(sim["outcome"], sim["halted"], sim["prediction"], sim["confidence"], sim["draw"], rule)
    paths = tuned_paths(values, 0.0, population_size=sim["outcome"].shape[1], alpha=ALPHA, rule=rule)
    return first_promote(paths.log_promote), float(np.nanmean(values.probability))


def full_looks(sim: dict[str, np.ndarray]) -> np.ndarray:
    y = sim["outcome"]
    return first_promote(betting_paths(y[..., 0] - y[..., 1], 0.0, population_size=y.shape[1], alpha=ALPHA).log_promote)


def _line(name: str, looks: np.ndarray, full: float, n: int, extra: str = "") -> str:
    med = float(np.median(looks))
    ratio = med / full if np.isfinite(med) else np.inf
    early = float(np.mean(looks <= 0.2 * n))
    return f"  {name:<34} median {med:6.1f} tasks  ({ratio:4.2f}x full)  promoted by 20 %: {early:5.1%}{extra}"


def break_even_rows(y: np.ndarray, n_orders: int, seed: int) -> list[str]:
    """Markdown rows: per halting share, model accuracy and rho, the task ratio of the tuned mode (median tasks to promote
    over the full evaluation's, same orders) and the steps a halt must save (share of its run) for the joined mode to spend
    fewer agent steps than across-task stopping alone: s (1 - mean pi) r > 1 - 1 / ratio."""
    rows = []
    for halt in (0.5, 0.8):
        for wrong in (0.05, 0.2):
            sim = simulate(y, n_orders, seed, halt=halt, wrong=wrong)
            full = float(np.median(full_looks(sim)))
            for rho in (0.3, 0.5, 0.7):
                looks, mean_pi = tuned_looks(sim, ActiveAudits(rho))
                ratio = float(np.median(looks)) / full
                need = (1.0 - 1.0 / ratio) / (halt * (1.0 - mean_pi)) if np.isfinite(ratio) else np.inf
                verdict = "never (> 1)" if need > 1 else f"{need:.2f}"
                rows.append(f"| {halt:.0%} | {1 - wrong:.0%} | {rho:g} | {mean_pi:.2f} | {ratio:.2f} | {verdict} |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rhos", default="0.5,0.3")
    parser.add_argument("--quick", action="store_true", help="100 orders")
    parser.add_argument("--break-even", action="store_true", help="print the break-even table (docs/joint-replay.md) instead")
    args = parser.parse_args(argv)
    n_orders = 100 if args.quick else args.orders
    y = pair_outcomes()
    n = len(y)
    print(
        f"{TESTED} vs {BASELINE}: N = {n}, Delta = {100 * (y[:, 0].mean() - y[:, 1].mean()):+.1f} pp; {n_orders} orders, seed {args.seed}"
    )
    if args.break_even:
        print("| halting share s | model accuracy | rho | mean pi | task ratio (tuned / full) | steps a halt must save, r* |")
        print("|---|---|---|---|---|---|")
        print("\n".join(break_even_rows(y, n_orders, args.seed)))
        return
    print("halting model: half the runs halted, 5 % wrong (unbiased), confidence U[0.9, 1]; a = 0.05, delta = 0")
    started = time.perf_counter()
    sim = simulate(y, n_orders, args.seed)
    full = full_looks(sim)
    full_med = float(np.median(full))
    for rho in (float(r) for r in args.rhos.split(",")):
        print(f"rho = {rho:g}:")
        print(_line("full evaluation", full, full_med, n))
        print(_line("previous (prediction-powered)", previous_looks(sim, rho), full_med, n))
        rule = ActiveAudits(rho)
        looks, mean_pi = tuned_looks(sim, rule)
        print(_line("tuned, active audits", looks, full_med, n, f"  (mean pi of the halts {mean_pi:.3f})"))
        # the rule keeps the mean at rho when half the halts favour the tested system; here more do (the tested system
        # passes more): the same rule at the rate whose realised mean is rho, to compare at equal audit cost
        matched = ActiveAudits(rho * rho / mean_pi)
        looks, matched_pi = tuned_looks(sim, matched)
        print(
            _line(
                "tuned, active, mean matched to rho", looks, full_med, n, f"  (mean pi of the halts {matched_pi:.3f})"
            )
        )
        uniform = ActiveAudits(rho, favour=1.0, slope=0.0)
        looks, mean_pi = tuned_looks(sim, uniform)
        print(_line("tuned, uniform audit", looks, full_med, n, f"  (mean pi {mean_pi:.3f})"))
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
