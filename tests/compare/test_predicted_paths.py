"""The prediction-powered boundary over many orders at once (powered_paths) against powered_boundary order by order,
and the audited bound solved once per distinct (W_a, cap) against the bound of each look alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stopwise.compare import AuditTallies, powered_boundary, powered_paths, powered_scale
from stopwise.compare._audit_bound import audited_wrong_bound
from stopwise.errors import ArgumentError, ComparisonError


def _orders(seed: int, k: int, n: int, rho: float, *, attempts: int = 1, accuracy: float = 0.9, gap: float = 0.3) -> dict[str, np.ndarray]:
    """K orders of one pair's N tasks, each with its own audit draw, computed here from the estimator's definition.

    A's runs succeed with probability 0.5 + gap, B's with 0.5; 70 % of runs are halting candidates, predicted right
    with probability ``accuracy``; a candidate is audited with probability rho. Per task and order: X (attempts
    averaged), its bounds l and h (predicted runs at their worst), P (predictions as outcomes) and the audited wrong
    weight of each adverse group (A predicted 1 or B predicted 0 for promote; the reverse for reject).
    """
    rng = np.random.default_rng(seed)
    shape = (2, attempts, n)
    y = (rng.random(shape) < np.array([0.5 + gap, 0.5])[:, None, None]).astype(float)
    candidate = rng.random(shape) < 0.7
    f = np.where(rng.random(shape) < accuracy, y, 1.0 - y)
    out: dict[str, list[np.ndarray]] = {name: [] for name in ("x", "low", "high", "point", "wrong_low", "wrong_high")}
    for _ in range(k):
        audited = rng.random(shape) < rho
        predicted = candidate & ~audited
        value = np.where(candidate & audited, f + (y - f) / rho, np.where(predicted, f, y))
        worst_low = np.where(predicted, np.array([0.0, 1.0])[:, None, None], y)
        worst_high = np.where(predicted, np.array([1.0, 0.0])[:, None, None], y)
        wrong = candidate & audited & (f != y)
        adverse_low = np.where(np.array([True, False])[:, None, None], f == 1.0, f == 0.0)
        order = rng.permutation(n)
        per_task = {
            "x": value, "low": worst_low, "high": worst_high, "point": np.where(predicted, f, y),
            "wrong_low": np.where(wrong & adverse_low, 1.0, 0.0) * np.array([1.0, -1.0])[:, None, None],
            "wrong_high": np.where(wrong & ~adverse_low, 1.0, 0.0) * np.array([1.0, -1.0])[:, None, None],
        }  # fmt: skip
        for name, v in per_task.items():
            out[name].append((v[0].mean(axis=0) - v[1].mean(axis=0))[order])
    return {name: np.stack(rows) for name, rows in out.items()}


def _tallies(o: dict[str, np.ndarray], rows: slice | int = slice(None)) -> AuditTallies:
    return AuditTallies(point=o["point"][rows], wrong_low=o["wrong_low"][rows], wrong_high=o["wrong_high"][rows])


SETTINGS = [
    # (rho, centre, threshold, alpha, strategy, population beyond the observed prefix, attempts)
    (0.5, "audited-bound", 0.0, 0.05, "auto", 0, 1),
    (0.2, "audited-bound", 0.0, 0.05, "auto", 0, 1),
    (0.35, "worst-case", -0.2, 0.05, "auto", 0, 1),
    (0.7, "audited-bound", 0.1, 0.01, "max", 30, 2),
    (0.5, "audited-bound", -0.05, 0.05, "agrapa", 0, 3),
    (0.9, "worst-case", 0.05, 0.1, "horizon", 10, 1),
    (1.0, "audited-bound", 0.0, 0.05, "auto", 0, 1),
    (0.5, "audited-bound", 0.6, 0.05, "auto", 0, 1),  # above the pair's difference (0.3): reject crossings
]


@pytest.mark.parametrize(("rho", "centre", "threshold", "alpha", "strategy", "unseen", "attempts"), SETTINGS)
def test_every_row_is_the_boundary_of_its_order(rho: float, centre: str, threshold: float, alpha: float, strategy: str,
                                                unseen: int, attempts: int) -> None:
    k, n = 40, 90
    o = _orders(int(rho * 100) + attempts, k, n, rho, attempts=attempts)
    n_pop = n + unseen
    options = {"population_size": n_pop, "alpha": alpha, "scale": powered_scale(rho), "strategy": strategy, "centre": centre, "audit_fraction": rho}
    paths = powered_paths(o["x"], o["low"], o["high"], threshold, audit=_tallies(o), batch=16, **options)  # 3 batches
    level = np.log(1.0 / alpha)
    promote, reject = paths.crossed(alpha)
    crossed = 0
    for row in range(k):
        one = powered_boundary(o["x"][row], o["low"][row], o["high"][row], threshold, audit=_tallies(o, row), **options)
        # the same arithmetic: the same numbers, bit for bit, so the same first crossing and action
        assert np.array_equal(paths.log_promote[row], one.log_capital_promote)
        assert np.array_equal(paths.log_reject[row], one.log_capital_reject)
        assert np.array_equal(promote[row], np.maximum.accumulate(one.log_capital_promote) >= level)
        assert np.array_equal(reject[row], np.maximum.accumulate(one.log_capital_reject) >= level)
        crossed += bool(promote[row].any() or reject[row].any())
    assert paths.log_promote.shape == (k, n) and not paths.stratified
    assert 0 < crossed  # the comparison covers orders that stop, not only orders that never cross


def test_the_batch_size_does_not_change_the_paths() -> None:
    o = _orders(3, 25, 60, 0.4)
    options = {"population_size": 60, "alpha": 0.05, "scale": powered_scale(0.4), "centre": "audited-bound", "audit": _tallies(o), "audit_fraction": 0.4}
    whole = powered_paths(o["x"], o["low"], o["high"], 0.0, batch=100, **options)
    for batch in (1, 7, 24):
        part = powered_paths(o["x"], o["low"], o["high"], 0.0, batch=batch, **options)
        assert np.array_equal(part.log_promote, whole.log_promote) and np.array_equal(part.log_reject, whole.log_reject)
    # the first order alone: the same row (the audited bound does not depend on the other orders)
    alone = powered_paths(o["x"][:1], o["low"][:1], o["high"][:1], 0.0, **{**options, "audit": _tallies(o, slice(0, 1))})
    assert np.array_equal(alone.log_promote[0], whole.log_promote[0])


def test_a_strong_pair_promotes_and_a_reversed_one_rejects() -> None:
    o = _orders(5, 30, 200, 0.5, accuracy=0.95, gap=0.35)
    options = {"population_size": 200, "alpha": 0.05, "scale": powered_scale(0.5), "centre": "audited-bound", "audit_fraction": 0.5}
    promote, reject = powered_paths(o["x"], o["low"], o["high"], 0.0, audit=_tallies(o), **options).crossed(0.05)
    assert promote.any(axis=1).all() and not reject.any()
    flipped = AuditTallies(point=-o["point"], wrong_low=o["wrong_high"], wrong_high=o["wrong_low"])
    promote, reject = powered_paths(-o["x"], -o["high"], -o["low"], 0.0, audit=flipped, **options).crossed(0.05)
    assert reject.any(axis=1).all() and not promote.any()


def test_no_look_gives_empty_paths() -> None:
    paths = powered_paths(np.zeros((3, 0)), np.zeros((3, 0)), np.zeros((3, 0)), 0.0, population_size=10, alpha=0.05, scale=1.0)
    assert paths.log_promote.shape == paths.log_reject.shape == (3, 0)


def test_bad_input_is_named() -> None:
    x = np.zeros((2, 5))
    ok = {"population_size": 5, "alpha": 0.05, "scale": 3.0}
    with pytest.raises(ArgumentError, match="one shape"):
        powered_paths(x, np.zeros((2, 4)), x, 0.0, **ok)
    with pytest.raises(ComparisonError, match="only 4 tasks"):
        powered_paths(x, x, x, 0.0, **{**ok, "population_size": 4})
    with pytest.raises(ComparisonError, match=r"lie in \[-3, 3\]"):
        powered_paths(np.full((2, 5), 3.5), x, x, 0.0, **ok)
    with pytest.raises(ComparisonError, match="finite"):
        powered_paths(np.full((2, 5), np.nan), x, x, 0.0, **ok)
    with pytest.raises(ArgumentError, match="`alpha`"):
        powered_paths(x, x, x, 0.0, **{**ok, "alpha": 1.5})
    with pytest.raises(ArgumentError, match="`scale`"):
        powered_paths(x, x, x, 0.0, **{**ok, "scale": 0.5})
    with pytest.raises(ArgumentError, match="`batch`"):
        powered_paths(x, x, x, 0.0, batch=0, **ok)
    not_tallies: Any = (x, x, x)
    with pytest.raises(ArgumentError, match="AuditTallies"):
        powered_paths(x, x, x, 0.0, audit=not_tallies, centre="audited-bound", audit_fraction=0.5, **ok)
    with pytest.raises(ArgumentError, match="shape of `values`"):
        powered_paths(x, x, x, 0.0, audit=AuditTallies(x[:1], x, x), centre="audited-bound", audit_fraction=0.5, **ok)
    with pytest.raises(ComparisonError, match="needs the audit tallies"):
        powered_paths(x, x, x, 0.0, centre="audited-bound", **ok)


def test_the_audited_bound_of_many_looks_is_each_look_alone() -> None:
    # repeated (W_a, cap) pairs, 0.0 beside -0.0, caps below and above the root, one- and two-dimensional input
    rng = np.random.default_rng(11)
    w_a = rng.integers(0, 4, (6, 50)) / rng.choice([1.0, 2.0, 3.0], (6, 50))
    cap = rng.integers(0, 12, (6, 50)) / 2.0
    w_a[0, :5], cap[1, :5] = -0.0, -0.0
    for rho, c in ((0.5, cap), (0.2, None), (0.8, 4.0)):
        together = audited_wrong_bound(w_a, rho, 0.01, c)
        caps = np.broadcast_to(np.asarray(np.inf if c is None else c, dtype=float), w_a.shape)
        alone = np.array([audited_wrong_bound(np.array([w]), rho, 0.01, None if c is None else np.array([m]))[0]
                          for w, m in zip(w_a.ravel(), caps.ravel(), strict=True)]).reshape(w_a.shape)  # fmt: skip
        assert np.array_equal(together, alone)
        assert np.array_equal(audited_wrong_bound(w_a[2], rho, 0.01, None if c is None else np.broadcast_to(c, w_a.shape)[2]), alone[2])


def test_the_boundary_and_the_interval_of_one_look_share_the_centre(monkeypatch: pytest.MonkeyPatch) -> None:
    from stopwise.compare import _predicted

    computed = []
    original = _predicted._centre_sums

    def counted(*args: Any) -> Any:
        computed.append(1)
        return original(*args)

    monkeypatch.setattr(_predicted, "_centre_sums", counted)
    o = _orders(9, 2, 80, 0.5)
    options = {"population_size": 100, "alpha": 0.05, "scale": powered_scale(0.5), "centre": "audited-bound", "audit_fraction": 0.5}
    look = (o["x"][0], o["low"][0], o["high"][0])
    first = _predicted.powered_boundary(*look, 0.0, audit=_tallies(o, 0), **options)
    _predicted.powered_interval(*look, audit=_tallies(o, 0), **options)
    assert len(computed) == 1  # the interval of the same look reused the boundary's centre
    other = (o["x"][1], o["low"][1], o["high"][1])
    _predicted.powered_boundary(*other, 0.0, audit=_tallies(o, 1), **options)
    again = _predicted.powered_boundary(*look, 0.0, audit=_tallies(o, 0), **options)
    changed = o["point"][0].copy()
    changed[-1] += 0.5  # one tally differs: another centre
    _predicted.powered_boundary(*look, 0.0, audit=AuditTallies(changed, o["wrong_low"][0], o["wrong_high"][0]), **options)
    _predicted.powered_boundary(*look, 0.0, audit=_tallies(o, 0), **{**options, "centre": "worst-case"})
    assert len(computed) == 5
    assert np.array_equal(again.log_capital_promote, first.log_capital_promote) and again.p_reject == first.p_reject
