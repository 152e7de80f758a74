"""Speed of the stratified betting process (coverage-aware orders): the reference implementation against the current one.

The stratified process reports, at every look, the infimum of its log-capital over the null: a
fractional knapsack over the G group means (stopwise.compare._strata). The REFERENCE below is the
implementation before issue 9's speed-up, kept verbatim in tests/support/betting_reference.py (where
tests/compare/test_betting_strata.py pins the current code to it): (rows, looks, G) cumulative arrays and a
full sort of the groups at every look. The current code sorts nothing from LOOP_ROWS capital paths on: it loops over the
looks with (sides, G, rows) state and updates the fill order in place, and ``betting_paths`` computes
at most 512 rows at a time while the live replay passes several pairs' rows to one call.

Side by side in one run, with the largest absolute difference of the log-capital paths and the ratio:

* a fixed seeded workload: 2,000 rows x 300 looks, 12 groups (376 tasks), coverage-aware orders, paths
  of both sides for ``max`` (the stratified default) and ``mixture``; the reference is timed in one call
  and in calls of 50 rows (its best batch on this machine);
* ``stopwise replay swebench_lite --looks every -k 20 --rules betting-wor`` (the primary policy's
  coverage-aware orders, thresholds 0, 0.05, 0.10), as ``replay_looks``, the function the CLI calls: the
  reference with the old call sizes (one pair's 20 orders per ``betting_paths`` call) against the
  current code; the first actions and stopping looks must be identical.

Usage: python -m benchmarks.stratified_betting [--rows 2000] [--looks 300] [--orders 20] [--skip-replay] [--quick]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np
from tests.support.betting_reference import reference_stratified  # kept with the tests that pin the current code to it

from stopwise.compare import _betting


def workload(rows: int, looks: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fixed seeded workload: values (rows, looks), thresholds (rows, 1), group codes (rows, looks), sizes (12,)."""
    from stopwise.compare import coverage_aware_orders

    rng = np.random.default_rng(seed)
    sizes = rng.integers(10, 60, 12)
    groups = np.repeat(np.arange(12), sizes)
    orders = coverage_aware_orders(groups, rows, rng=seed + 1)
    values = rng.choice([-1.0, 0.0, 1.0], p=(0.25, 0.45, 0.3), size=(rows, len(groups)))
    if looks > len(groups):
        raise SystemExit(f"--looks must be at most the {len(groups)} tasks")
    return values[:, :looks], rng.uniform(-0.2, 0.2, (rows, 1)), groups[orders][:, :looks], sizes


def _seconds(call: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def _difference(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """Largest absolute difference of two (promote, reject) path pairs; inf where only one is infinite."""
    worst = 0.0
    for p, q in zip(a, b, strict=True):
        if not np.array_equal(np.isinf(p), np.isinf(q)) or not np.array_equal(p[np.isinf(p)], q[np.isinf(q)]):
            return float("inf")
        finite = np.isfinite(p)
        worst = max(worst, float(np.abs(p[finite] - q[finite]).max(initial=0.0)))
    return worst


@contextmanager
def reference_in_place() -> Any:
    """Within the block, ``betting_paths`` computes the stratified process with the REFERENCE."""
    current = _betting._stratified
    _betting._stratified = reference_stratified
    try:
        yield
    finally:
        _betting._stratified = current


def bench_paths(rows: int, looks: int, chunk: int) -> None:
    x, m0, codes, sizes = workload(rows, looks)
    print(f"workload: {rows} rows x {looks} looks, {len(sizes)} groups ({int(sizes.sum())} tasks), coverage-aware orders")
    for strategy in ("max", "mixture"):
        new_s, new = _seconds(partial(_current_paths, x, m0, codes, sizes, strategy))
        ref_s, ref = _seconds(partial(reference_stratified, x, m0, codes, sizes, strategy, 0.05, None))
        chunk_s, chunked = _seconds(partial(_reference_in_calls, x, m0, codes, sizes, strategy, chunk))
        per = 1e6 / (rows * looks)
        print(
            f"  {strategy:8s} reference {ref_s:6.2f} s ({ref_s * per:.2f} us/row-look), in calls of {chunk} rows {chunk_s:6.2f} s"
            f" ({chunk_s * per:.2f}); current {new_s:6.2f} s ({new_s * per:.2f}); ratio {ref_s / new_s:.1f}x"
            f" ({chunk_s / new_s:.1f}x against the reference's best batch); max |difference| {max(_difference(new, ref), _difference(new, chunked)):.1e}"
        )


def _current_paths(x: np.ndarray, m0: np.ndarray, codes: np.ndarray, sizes: np.ndarray, strategy: str) -> tuple[np.ndarray, np.ndarray]:
    from stopwise.compare import betting_paths

    paths = betting_paths(x, m0[:, 0], population_size=int(sizes.sum()), group_codes=codes, group_sizes=sizes, strategy=strategy)
    return paths.log_promote, paths.log_reject


def _reference_in_calls(x: np.ndarray, m0: np.ndarray, codes: np.ndarray, sizes: np.ndarray, strategy: str, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    parts = [reference_stratified(x[lo : lo + chunk], m0[lo : lo + chunk], codes[lo : lo + chunk], sizes, strategy, 0.05, None) for lo in range(0, len(x), chunk)]
    return np.concatenate([p for p, _ in parts]), np.concatenate([r for _, r in parts])


def bench_replay(n_orders: int) -> None:
    from benchmarks._data import records_path
    from stopwise.records import read_outcomes
    from stopwise.replay import replay_looks

    records = {"swebench_lite": read_outcomes(records_path("swebench_lite"))}

    def run(**options: Any) -> Any:
        return replay_looks(records, n_orders=n_orders, looks="every", rules=["betting-wor"], **options)

    print(f"replay swebench_lite --looks every -k {n_orders} --rules betting-wor (primary policy, thresholds 0, 0.05, 0.10)")
    new_s, new = _seconds(run)
    with reference_in_place():
        # the old live replay passed one pair's orders per call: min(k, batch_rows // G) rows
        ref_s, ref = _seconds(lambda: run(batch_rows=min(n_orders, 4096 // 12)))
    same = new.pairs.equals(ref.pairs) and new.curve.equals(ref.curve)
    print(f"  reference {ref_s:6.1f} s; current {new_s:6.1f} s; ratio {ref_s / new_s:.1f}x; pairs and curve tables identical: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--looks", type=int, default=300)
    parser.add_argument("--chunk", type=int, default=50, help="rows per call of the reference's batched timing")
    parser.add_argument("--orders", type=int, default=20)
    parser.add_argument("--skip-replay", action="store_true")
    parser.add_argument("--quick", action="store_true", help="200 rows x 100 looks, 2 orders per pair in the replay: seconds")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.looks, args.orders = 200, 100, 2
    print(f"load average {os.getloadavg()[0]:.1f} (2 cores shared with other sessions: figures are under contention)")
    bench_paths(args.rows, args.looks, args.chunk)
    if not args.skip_replay:
        bench_replay(args.orders)


if __name__ == "__main__":
    main()
