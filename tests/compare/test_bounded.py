"""``[decision] predicted = "bounded"`` (issue 34 item 3): predictions as outcomes, the margin widened by 2 eps, labelled."""

from __future__ import annotations

import numpy as np
import pytest

import stopwise
from stopwise.compare import betting_paths
from stopwise.compare._bounded import bounded_margin
from stopwise.compare._predicted import powered_interval
from stopwise.errors import ComparisonError
from stopwise.records import TaskUniverse, parse_policy

ALPHA = 0.05
BOUNDED = (
    '[decision]\nboundary = "betting-wor"\npredicted = "bounded"\n[coverage]\nrule = "none"\n'
    "[early]\nhalt_error_bound = {eps}\n"
)


def _rows(n: int, seed: int) -> tuple[list[dict[str, object]], np.ndarray, list[str]]:
    """Two systems, A better; half of each system's runs halted with a prediction (10 % wrong). Returns the rows, the
    recorded differences P per task in the planned order (computed here) and that order."""
    rng = np.random.default_rng(seed)
    y = (rng.random((n, 2)) < np.array([0.7, 0.4])).astype(float)
    halted = rng.random(y.shape) < 0.5
    f = np.where(rng.random(y.shape) < 0.1, 1.0 - y, y)
    rows: list[dict[str, object]] = []
    for i in range(n):
        for k, s in enumerate("AB"):
            if halted[i, k]:
                rows.append(
                    {"system": s, "task": f"t{i}", "outcome": f[i, k], "status": "predicted", "flags": "predicted"}
                )
            else:
                rows.append({"system": s, "task": f"t{i}", "outcome": y[i, k]})
    recorded = np.where(halted, f, y)
    order = rng.permutation(n)
    return rows, (recorded[:, 0] - recorded[:, 1])[order], [f"t{i}" for i in order]


def test_the_margin_is_twice_the_certified_rate() -> None:
    assert bounded_margin(0.05) == pytest.approx(0.1, abs=1e-15)
    assert bounded_margin(0.125) == pytest.approx(0.25, abs=1e-15)
    with pytest.raises(ComparisonError, match="halt_error_bound"):
        bounded_margin(0.0)


@pytest.mark.parametrize("eps", [0.02, 0.05])
def test_decide_tests_the_recorded_differences_at_the_widened_margin(eps: float) -> None:
    """The record's p-values are the plain betting-wor test of the recorded differences at delta +/- 2 eps (an
    independent path: :func:`stopwise.compare.betting_paths`, tolerance 1e-9), its interval the recorded mean's
    confidence sequence widened by 2 eps at each end, and the record, the claim and the warning say what it rests on."""
    n = 120
    rows, p, names = _rows(n, 3)
    policy = parse_policy(BOUNDED.format(eps=eps))
    record = stopwise.decide(stopwise.outcome_columns(rows), "A", "B", policy, universe=TaskUniverse(names))
    up = betting_paths(p[None], 2 * eps, population_size=n, alpha=ALPHA)
    down = betting_paths(p[None], -2 * eps, population_size=n, alpha=ALPHA)
    assert record.r_promote == pytest.approx(min(1.0, float(np.exp(-np.max(up.log_promote)))), rel=1e-9)
    assert record.r_reject == pytest.approx(min(1.0, float(np.exp(-np.max(down.log_reject)))), rel=1e-9)
    plain = powered_interval(p, p, p, population_size=n, alpha=ALPHA, scale=1.0)
    assert record.interval is not None
    assert record.interval.low == pytest.approx(max(-1.0, plain.low - 2 * eps), abs=1e-12)
    assert record.interval.high == pytest.approx(min(1.0, plain.high + 2 * eps), abs=1e-12)
    assert record.predicted is not None and record.predicted.treatment == "bounded"
    assert f"widened by {2 * eps:g}" in record.predicted.note and "calibration distribution" in record.predicted.note
    assert sum(w.startswith('predicted = "bounded"') and "calibration distribution" in w for w in record.warnings) == 1
    assert "calibration distribution" in record.claim


def test_bounded_needs_the_certified_rate_and_keeps_old_digests() -> None:
    rows, _, names = _rows(20, 1)
    policy = parse_policy(BOUNDED.format(eps=0.05).replace("halt_error_bound = 0.05\n", "audit_fraction = 0.2\n"))
    with pytest.raises(ComparisonError, match="halt_error_bound"):
        stopwise.decide(stopwise.outcome_columns(rows), "A", "B", policy, universe=TaskUniverse(names))
    assert "halt_error_bound" not in policy.canonical_json()  # the default leaves earlier digests as they were
    assert '"halt_error_bound":0.05' in parse_policy(BOUNDED.format(eps=0.05)).canonical_json()


def _false_promotes(n_bench: int, n_tasks: int, eps: float, wrong_share: float, seed: int) -> float:
    """Null benchmarks (B's outcomes a permutation of A's: mean difference exactly 0), every run halted, the
    predictions wrong on ``wrong_share`` of each system's runs, all in A's favour (A's failures predicted passes,
    B's passes predicted failures): the recorded mean is 2 x wrong_share. Computed here, independently of stopwise."""
    rng = np.random.default_rng(seed)
    a = (rng.random((n_bench, n_tasks)) < 0.5).astype(float)
    b = np.take_along_axis(a, np.argsort(rng.random(a.shape), axis=1), axis=1)
    k = round(wrong_share * n_tasks)

    def flip(y: np.ndarray, value: float) -> np.ndarray:
        key = np.where(y == value, rng.random(y.shape), 2.0)  # the first k of the runs at `value`, at random
        chosen = np.zeros(y.shape, dtype=bool)
        np.put_along_axis(chosen, np.argsort(key, axis=1)[:, :k], True, axis=1)
        return np.where(chosen & (y == value), 1.0 - y, y)

    recorded = flip(a, 0.0) - flip(b, 1.0)
    promote, _ = betting_paths(recorded, 2 * eps, population_size=n_tasks, alpha=ALPHA).crossed(ALPHA)
    return float(promote.any(axis=1).mean())


def test_valid_when_the_certificate_holds_and_not_otherwise() -> None:
    """2,000 null benchmarks of 200 tasks: with exactly eps = 5 % wrong halts (the certificate at its limit) the
    bounded test promotes at most a + 2 SE; with 30 % wrong (a halting model off its calibration distribution) it
    promotes nearly always."""
    se = float(np.sqrt(ALPHA * (1 - ALPHA) / 2000))
    held = _false_promotes(2000, 200, 0.05, 0.05, 11)
    broken = _false_promotes(2000, 200, 0.05, 0.30, 12)
    print(
        f"bounded: false promotes {held:.4f} with the certificate holding, {broken:.4f} with 30 % wrong; a + 2 SE = {ALPHA + 2 * se:.4f}"
    )
    assert held <= ALPHA + 2 * se
    assert broken > 0.9
