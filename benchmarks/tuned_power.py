"""Issue 34: tasks to promote under the power-tuned prediction-powered boundary with active audits, beside the previous
treatment and the full evaluation, on a real SWE-bench Verified pair and the same seeded orders, at two seeds.

The pair: ``20241029_OpenHands-CodeAct-2.1-sonnet-20241022`` (tested, 53.0 %) against
``20240628_autocoderover-v20240620`` (38.4 %) on the 500 shared tasks: Delta = +14.6 pp. (The issue's
"20240924_solver vs 20240824_gru" differ by 0.2 pp; the closest pairs to +14.6 pp are four, this is one.)

The seeded good halting model: each run is halted with probability 0.5; its prediction is wrong with probability
0.05 whatever the outcome (unbiased); its confidence is uniform on [0.9, 1]. Each task has two audit uniforms: the
runs' own (independent audits) and, for the antithetic design, one w with the baseline's draw 1 - w.

- ``full evaluation``: the pooled betting-wor boundary on the true differences (:func:`stopwise.compare.betting_paths`).
- ``previous``: ``prediction-powered`` with the audited-bound centre at a uniform audit rho
  (:func:`stopwise.compare.powered_paths`), audited iff u < rho.
- ``tuned``: :mod:`stopwise.compare._tuned` with the active rule (:class:`ActiveAudits`) at the rate whose realised
  mean audit probability of the halts is exactly rho (the rule keeps rho when half the halts favour the tested
  system; here more do), with antithetic audits (the treatment's figure), and for reference with independent ones
  (the design of the previous session) and at the rule's nominal rate.

Printed per seed and rho: the median number of tasks to promote (over the orders; inf when fewer than half promote
within the 500), its ratio to the full evaluation's on the same orders, the share promoted by 20 % of the tasks, and
the realised mean audit probability of the halts.

Usage: python -m benchmarks.tuned_power [--orders 400] [--seeds 1,2] [--rhos 0.5,0.3] [--quick] [--break-even]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks._data import records_path
from stopwise.compare import AuditTallies, betting_paths, powered_paths, powered_scale
from stopwise.compare._tuned import ActiveAudits, design_range, tuned_paths, tuned_values
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


def antithetic(sim: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same runs with antithetic audit draws: the tested system's uniform w, the baseline's 1 - w."""
    draw = sim["draw"].copy()
    draw[..., 1] = 1.0 - draw[..., 0]
    return {**sim, "draw": draw}


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
    if rule.coupling == "antithetic":
        sim = antithetic(sim)
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


def matched(sim: dict[str, np.ndarray], rho: float, coupling: str) -> ActiveAudits:
    """The default active rule at the rate whose realised mean audit probability of the halts is rho (pi is linear
    in the rate while no probability is clipped, as here)."""
    _, mean_pi = tuned_looks(sim, ActiveAudits(rho, coupling=coupling))
    return ActiveAudits(rho * rho / mean_pi, coupling=coupling)


def seed_lines(y: np.ndarray, n_orders: int, seed: int, rhos: list[float]) -> list[str]:
    """The figures of one seed: per rho, the full evaluation, the previous treatment and the tuned ones."""
    n = len(y)
    sim = simulate(y, n_orders, seed)
    full = full_looks(sim)
    full_med = float(np.median(full))
    lines = [f"seed {seed}:"]
    for rho in rhos:
        lines.append(f" rho = {rho:g}:")
        lines.append(_line("full evaluation", full, full_med, n))
        lines.append(_line("previous (prediction-powered)", previous_looks(sim, rho), full_med, n))
        for name, coupling in (("tuned, active audits", "antithetic"), ("tuned, independent audits", "independent")):
            rule = matched(sim, rho, coupling)
            looks, mean_pi = tuned_looks(sim, rule)
            extra = f"  (mean pi of the halts {mean_pi:.3f}; least difference the design allows {design_range(rule)[0]:.3g})"
            lines.append(_line(name, looks, full_med, n, extra))
        looks, mean_pi = tuned_looks(sim, ActiveAudits(rho, coupling="antithetic"))
        lines.append(
            _line("tuned, antithetic, nominal rate", looks, full_med, n, f"  (mean pi of the halts {mean_pi:.3f})")
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=400)
    parser.add_argument("--seeds", default="1,2", help="comma-separated seeds of the orders and runs")
    parser.add_argument("--rhos", default="0.5,0.3")
    parser.add_argument("--quick", action="store_true", help="100 orders, the first seed only")
    parser.add_argument(
        "--break-even", action="store_true", help="print the break-even table (docs/joint-replay.md) instead"
    )
    args = parser.parse_args(argv)
    n_orders = 100 if args.quick else args.orders
    seeds = [int(s) for s in args.seeds.split(",")][: 1 if args.quick else None]
    y = pair_outcomes()
    n = len(y)
    print(
        f"{TESTED} vs {BASELINE}: N = {n}, Delta = {100 * (y[:, 0].mean() - y[:, 1].mean()):+.1f} pp; {n_orders} orders, seeds {seeds}"
    )
    if args.break_even:
        print(
            "| halting share s | model accuracy | rho | mean pi | task ratio (tuned / full) | steps a halt must save, r* |"
        )
        print("|---|---|---|---|---|---|")
        print("\n".join(break_even_rows(y, n_orders, seeds[0])))
        return
    print("halting model: half the runs halted, 5 % wrong (unbiased), confidence U[0.9, 1]; a = 0.05, delta = 0")
    started = time.perf_counter()
    for seed in seeds:
        print("\n".join(seed_lines(y, n_orders, seed, [float(r) for r in args.rhos.split(",")])))
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
