"""The prediction-powered treatment of predicted rows (issue 22): estimator, contract, decide, and its error under the null."""

from __future__ import annotations

import numpy as np
import pytest

import stopwise
from stopwise.compare import betting_boundary
from stopwise.compare._audit_bound import AUDIT_BOUND_SHARE, audited_wrong_bound
from stopwise.compare._predicted import AuditTallies, _centre_sums, powered_boundary, powered_interval, powered_scale
from stopwise.errors import ComparisonError
from stopwise.records import DecisionRecord, Policy, TaskUniverse, audit_draw, parse_policy

POWERED = '[decision]\nboundary = "betting-wor"\npredicted = "prediction-powered"\n[coverage]\nrule = "none"\n[early]\naudit_fraction = {rho}\n'


def _policy(rho: float, seed: int = 0, centre: str | None = None) -> Policy:
    named = POWERED.replace("[coverage]", f'predicted_centre = "{centre}"\n[coverage]') if centre else POWERED
    return parse_policy(named.format(rho=rho) + f"audit_seed = {seed}\n")


def _tallies(bench: dict) -> AuditTallies:
    return AuditTallies(point=bench["as_truth"], wrong_low=bench["wrong_low"], wrong_high=bench["wrong_high"])


def _row(system: str, task: str, y: float, *, halt: int | None = None, audited: bool = False, attempt: int = 0) -> dict[str, object]:
    """One run's row by the data contract: halted (predicted), audited (with would-halt), or plain final."""
    if halt is not None and not audited:
        return {"system": system, "task": task, "outcome": halt, "status": "predicted", "flags": "predicted", "attempt": attempt}
    flags = ["audited"] if audited else []
    if halt is not None:
        flags.append(f"would-halt:{halt}")
    return {"system": system, "task": task, "outcome": y, "flags": ";".join(flags), "attempt": attempt}


def _decide_one_task(rows: list[dict[str, object]], rho: float) -> DecisionRecord:
    return stopwise.decide(stopwise.outcome_columns(rows), "A", "B", _policy(rho), universe=TaskUniverse(["t"]))


@pytest.mark.parametrize("rho", [0.1, 0.25, 0.5])
@pytest.mark.parametrize(("y", "f"), [(1, 0), (0, 1), (1, 1), (0, 0)])
def test_the_audit_correction_is_unbiased_whatever_the_prediction(y: int, f: int, rho: float) -> None:
    # E over the audit draw: rho * (value if audited) + (1 - rho) * (value if halted) must be Y exactly
    audited = _decide_one_task([_row("A", "t", y, halt=f, audited=True), _row("B", "t", 0)], rho).delta_hat
    halted = _decide_one_task([_row("A", "t", y, halt=f), _row("B", "t", 0)], rho).delta_hat
    assert audited == pytest.approx(f + (y - f) / rho, abs=1e-12)
    assert halted == pytest.approx(f, abs=1e-12)
    assert rho * audited + (1 - rho) * halted == pytest.approx(y, abs=1e-12)


def test_the_range_is_two_over_rho_minus_one_and_is_reached() -> None:
    rho = 0.2
    # A audited, would have predicted 0, succeeded: 1/rho; B audited, would have predicted 1, failed: 1 - 1/rho
    rows = [_row("A", "t", 1, halt=0, audited=True), _row("B", "t", 0, halt=1, audited=True)]
    assert _decide_one_task(rows, rho).delta_hat == pytest.approx(2 / rho - 1) == powered_scale(rho)


def test_the_record_counts_predicted_audited_and_corrected_rows() -> None:
    rows = [
        _row("A", "t1", 1, halt=1), _row("B", "t1", 0, audited=True),
        _row("A", "t2", 0, halt=1, audited=True), _row("B", "t2", 1),
        _row("A", "t3", 1), _row("B", "t3", 0, halt=0),
    ]  # fmt: skip
    record = stopwise.decide(stopwise.outcome_columns(rows), "A", "B", _policy(0.5), universe=TaskUniverse(["t1", "t2", "t3"]))
    state = record.predicted
    assert state is not None
    assert (state.treatment, state.predicted_rows, state.audited_rows, state.corrected_rows, state.used_rows) == ("prediction-powered", 2, 2, 1, 3)
    assert "whatever the halting model's accuracy" in state.note
    # t1: 1 - 0 = 1; t2: (1 + (0 - 1) / 0.5) - 1 = -2; t3: 1 - 0 = 1
    assert record.delta_hat == pytest.approx(0.0, abs=1e-12)
    # the default treatment counts them too, and says they were excluded
    default = stopwise.decide(stopwise.outcome_columns(rows), "A", "B", universe=TaskUniverse(["t1", "t2", "t3"]))
    assert default.predicted is not None and default.predicted.treatment == "exclude" and default.predicted.used_rows == 0
    assert default.n_observed == 1  # only t2 has final rows for both systems


def test_records_without_halting_keep_their_json() -> None:
    rows = stopwise.outcome_columns([_row("A", "t", 1), _row("B", "t", 0)])
    record = stopwise.decide(rows, "A", "B", complete=True)
    assert record.predicted is None and '"predicted"' not in record.model_dump_json()
    assert DecisionRecord.model_validate_json(record.model_dump_json()) == record


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{**_row("A", "t", 1, halt=1), "flags": "predicted;audited"}, _row("B", "t", 0)], "cannot have status 'predicted'.*row 1"),
        ([{**_row("A", "t", 1), "flags": "would-halt:1"}, _row("B", "t", 0)], "must be an audited run.*row 1"),
        ([_row("A", "t", 1), {**_row("B", "t", 0), "flags": "audited;would-halt:0;would-halt:1"}], "one would-halt flag.*row 2"),
    ],
)
def test_rows_breaking_the_contract_are_refused_by_row(rows: list[dict[str, object]], message: str) -> None:
    with pytest.raises(ComparisonError, match=message):
        _decide_one_task(rows, 0.5)


def test_prediction_powered_needs_audits_and_the_betting_boundary() -> None:
    rows = stopwise.outcome_columns([_row("A", "t", 1, halt=1), _row("B", "t", 0)])
    with pytest.raises(ComparisonError, match="audit_fraction > 0"):
        stopwise.decide(rows, "A", "B", _policy(0.0), universe=TaskUniverse(["t"]))
    one_look = parse_policy('[decision]\npredicted = "prediction-powered"\n[early]\naudit_fraction = 0.2')
    with pytest.raises(ComparisonError, match='needs boundary = "betting-wor"'):
        stopwise.decide(rows, "A", "B", one_look, complete=True)
    stratified = parse_policy(POWERED.format(rho=0.2).replace('rule = "none"', 'rule = "proportional"') + '[betting]\ndesign = "stratified"\norder_check = "warn"\n')
    universe = TaskUniverse(["t", "u"], ["g", "h"])
    with pytest.raises(ComparisonError, match="stratified process"):
        stopwise.decide(rows, "A", "B", stratified, universe=universe)


def test_without_predicted_rows_and_scale_one_it_is_the_betting_boundary() -> None:
    # no predicted row: l = h = D, and with rho = 1 the scale is 1: the same bets and centres as betting_boundary
    d = np.r_[np.ones(30), -np.ones(8), np.zeros(12)][np.random.default_rng(3).permutation(50)]
    ours = powered_boundary(d, d, d, 0.0, population_size=200, alpha=0.05, scale=1.0)
    theirs = betting_boundary(d, 0.0, population_size=200, alpha=0.05, confidence_bounds=False)
    np.testing.assert_allclose(ours.log_capital_promote, theirs.log_capital_promote, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.log_capital_reject, theirs.log_capital_reject, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_without_predicted_rows_the_interval_is_the_betting_confidence_sequence(seed: int) -> None:
    from stopwise.compare._interval import betting_interval

    d = np.random.default_rng(seed).permutation(np.r_[np.ones(30), np.zeros(60), -np.ones(10)])[: 60 + 10 * seed]
    ours = powered_interval(d, d, d, population_size=500, alpha=0.05, scale=1.0)
    theirs = betting_interval(d, population_size=500, alpha=0.05)
    assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high), abs=1e-9)


def test_the_interval_covers_the_true_mean_under_wrong_halts() -> None:
    # 300 seeded benchmarks of the null simulation (true mean 0), 80 tasks, the interval after all of them
    rng = np.random.default_rng(4)
    misses = 0
    for b in range(300):
        bench = _benchmark(rng, n_tasks=80, rho=0.3, seed=b)
        ci = powered_interval(bench["x"], bench["low"], bench["high"], population_size=80, alpha=0.05, scale=powered_scale(0.3))
        misses += not ci.low <= 0.0 <= ci.high
    assert misses / 300 <= 0.10 + 2 * np.sqrt(0.1 * 0.9 / 300), misses  # level 1 - 2a = 0.90


@pytest.mark.parametrize("centre", ["worst-case", "audited-bound"])
def test_decide_uses_the_powered_boundary_on_the_observed_prefix(centre: str) -> None:
    bench = _benchmark(np.random.default_rng(11), n_tasks=60, rho=0.3, seed=5)
    order = [f"t{i}" for i in bench["order"]]
    rows = stopwise.outcome_columns(bench["rows"])
    record = stopwise.decide(rows, "A", "B", _policy(0.3, seed=5, centre=centre), universe=TaskUniverse(order))
    options = {"centre": centre, "audit": _tallies(bench), "audit_fraction": 0.3}
    direct = powered_boundary(
        bench["x"], bench["low"], bench["high"], 0.0, population_size=60, alpha=0.05, scale=powered_scale(0.3), **options
    )
    assert centre in direct.method.replace("within the audited bound", "audited-bound").replace("at their worst case", "worst-case")
    assert record.r_promote == pytest.approx(direct.p_promote, rel=1e-12)
    assert record.r_reject == pytest.approx(direct.p_reject, rel=1e-12)
    assert record.delta_hat == pytest.approx(float(np.mean(bench["x"])), abs=1e-12)
    assert not any("audit draw" in w for w in record.warnings)  # the rows' audits are the pre-registered draw
    assert record.interval is not None and record.interval.kind == "anytime-valid"
    direct_ci = powered_interval(bench["x"], bench["low"], bench["high"], population_size=60, alpha=0.05, scale=powered_scale(0.3), **options)
    assert (record.interval.low, record.interval.high) == (direct_ci.low, direct_ci.high)  # nothing crossed: not tightened
    other = stopwise.decide(rows, "A", "B", _policy(0.3, seed=6, centre=centre), universe=TaskUniverse(order))
    assert (other.r_promote, other.r_reject) == (record.r_promote, record.r_reject)
    expected = f"{_disagreeing(bench['rows'], 0.3, 6)} row(s) disagree with the audit draw of [early] audit_seed = 6"
    assert any(w.startswith(expected) for w in other.warnings)
    truth = parse_policy('statuses = ["final", "predicted"]\n[decision]\nboundary = "betting-wor"\n[coverage]\nrule = "none"')
    naive = stopwise.decide(rows, "A", "B", truth, universe=TaskUniverse(order))
    as_truth = betting_boundary(bench["as_truth"], 0.0, population_size=60, alpha=0.05, confidence_bounds=False)
    assert naive.r_promote == pytest.approx(as_truth.p_promote, rel=1e-12)


def _disagreeing(rows: list[dict[str, object]], rho: float, seed: int) -> int:
    """Rows whose audited flag differs from the draw, counted here row by row."""
    return sum(("audited" in str(r["flags"]).split(";")) != (audit_draw(seed, str(r["system"]), str(r["task"]), 0) < rho) for r in rows)


# -- the guarantee under the null, measured ------------------------------------------------------------


def _benchmark(rng: np.random.Generator, *, n_tasks: int, rho: float, seed: int, halt: float = 0.6, wrong: float = 0.6) -> dict:
    """One null benchmark (mu = 0 exactly) with a halting model badly wrong on the tested system A.

    B's successes are a random permutation of A's (the finite-population mean difference is exactly 0). A run
    is a halting candidate with probability ``halt``; B's candidates are predicted right, A's failed candidates
    are predicted successes with probability ``wrong`` (about 30 % wrong halts for A, all in A's favour).
    Audits by the real pre-registered draw (:func:`stopwise.records.audit_draw`, seed ``seed``).
    The x / low / high arrays are computed here, independently of stopwise's code, in the planned order.
    """
    y_a = (rng.random(n_tasks) < 0.5).astype(float)
    y_b = rng.permutation(y_a)
    candidate = rng.random((2, n_tasks)) < halt
    y = np.stack([y_a, y_b])
    f = y.copy()
    flip = candidate[0] & (y_a == 0) & (rng.random(n_tasks) < wrong)
    f[0, flip] = 1.0
    audited = np.array([[audit_draw(seed, s, f"t{i}", 0) < rho for i in range(n_tasks)] for s in "AB"])
    predicted = candidate & ~audited
    value = np.where(candidate & audited, f + (y - f) / rho, np.where(predicted, f, y))
    # the least and greatest true difference: A's predicted runs at 0 (1), B's at 1 (0)
    low = np.where(predicted, np.array([[0.0], [1.0]]), y)
    high = np.where(predicted, np.array([[1.0], [0.0]]), y)
    rows = [
        _row(s, f"t{i}", y[k, i], halt=int(f[k, i]) if candidate[k, i] else None, audited=bool(audited[k, i]))
        for k, s in enumerate("AB")
        for i in range(n_tasks)
    ]
    order = rng.permutation(n_tasks)
    as_truth = np.where(predicted, f, y)
    # audited would-halt runs predicted wrongly: A's predicted 1 or B's predicted 0 lower the true difference
    wrong = candidate & audited & (f != y)
    wrong_low = (wrong[0] & (f[0] == 1)).astype(float) + (wrong[1] & (f[1] == 0))
    wrong_high = (wrong[0] & (f[0] == 0)).astype(float) + (wrong[1] & (f[1] == 1))
    return {
        "rows": rows,
        "order": order,
        "x": (value[0] - value[1])[order],
        "low": (low[0] - low[1])[order],
        "high": (high[0] - high[1])[order],
        "as_truth": (as_truth[0] - as_truth[1])[order],
        "truth": (y[0] - y[1])[order],
        "wrong_low": wrong_low[order],
        "wrong_high": wrong_high[order],
        "wrong_share": float(flip.sum() / max(1, candidate[0].sum())),
        "y": y,
    }


def _false_promotes(n_benchmarks: int, *, n_tasks: int, rho: float, seed: int, centre: str) -> tuple[float, float, float, float]:
    """False-promote rates (ever crossed at level a = 0.05, any look) of prediction-powered and of predictions as truth."""
    rng = np.random.default_rng(seed)
    powered = truth = 0
    wrong = []
    for b in range(n_benchmarks):
        bench = _benchmark(rng, n_tasks=n_tasks, rho=rho, seed=seed * 100_003 + b)
        wrong.append(bench["wrong_share"])
        ours = powered_boundary(
            bench["x"], bench["low"], bench["high"], 0.0, population_size=n_tasks, alpha=0.05, scale=powered_scale(rho),
            centre=centre, audit=_tallies(bench), audit_fraction=rho,
        )  # fmt: skip
        powered += ours.p_promote <= 0.05
        truth += betting_boundary(bench["as_truth"], 0.0, population_size=n_tasks, alpha=0.05, confidence_bounds=False).p_promote <= 0.05
    return powered / n_benchmarks, truth / n_benchmarks, float(np.mean(wrong)), float(np.sqrt(0.05 * 0.95 / n_benchmarks))


def _check_null(n_benchmarks: int, n_tasks: int, centre: str) -> None:
    powered, truth, wrong, se = _false_promotes(n_benchmarks, n_tasks=n_tasks, rho=0.3, seed=22, centre=centre)
    report = f"prediction-powered ({centre}) {powered:.4f}, predictions as truth {truth:.4f}, a + 2 SE = {0.05 + 2 * se:.4f}, A's wrong halts {wrong:.0%}"
    print(report)
    assert 0.25 < wrong < 0.35, report  # the halting model is as badly wrong as the issue asks
    assert powered <= 0.05 + 2 * se, report
    assert truth > 0.05 + 2 * se, report


@pytest.mark.parametrize("centre", ["worst-case", "audited-bound"])
def test_false_promotes_under_the_null_quick(centre: str) -> None:
    _check_null(300, 80, centre)


@pytest.mark.slow
@pytest.mark.parametrize("centre", ["worst-case", "audited-bound"])
def test_false_promotes_under_the_null_2000_benchmarks(centre: str) -> None:
    _check_null(2000, 200, centre)


def test_with_the_coverage_rule_it_runs_the_top_up_design() -> None:
    import pandas as pd

    from stopwise.compare import order_universe, task_order

    bench = _benchmark(np.random.default_rng(2), n_tasks=120, rho=0.3, seed=9)
    rows = [{**r, "group": f"g{int(str(r['task'])[1:]) % 3}"} for r in bench["rows"]]
    policy = parse_policy(
        '[order]\nkind = "uniform"\nseed = 4\n[decision]\nboundary = "betting-wor"\npredicted = "prediction-powered"\n'
        "[early]\naudit_fraction = 0.3\naudit_seed = 9\n"
    )
    tasks = pd.DataFrame({"task": [f"t{i}" for i in range(120)], "group": [f"g{i % 3}" for i in range(120)]})
    universe = order_universe(task_order(tasks, policy))
    record = stopwise.decide(stopwise.outcome_columns(rows), "A", "B", policy, universe=universe)
    assert "prediction-powered" in record.tail_method and "coverage by top-up" in record.tail_method
    assert record.warnings == []  # a stamped uniform order, and the rows' audits are the draw of seed 9


# -- the audited-bound centre (predicted_centre = "audited-bound") ---------------------------------------


def _root(w_a: float, rho: float, alpha: float) -> float:
    """U(W_a) computed independently: scipy's brentq on the mixture's equation, written out from the docstring."""
    from scipy.optimize import brentq

    from stopwise.compare._audit_bound import AUDIT_BOUND_U, AUDIT_BOUND_WEIGHTS

    def excess(w_u: float) -> float:
        total = sum(p * np.exp(-np.log(rho * np.exp(-u) + 1 - rho) * (w_u + w_a) - u * w_a) for u, p in zip(AUDIT_BOUND_U, AUDIT_BOUND_WEIGHTS, strict=True))
        return float(np.log(total) - np.log(1 / alpha))

    return float(brentq(excess, 0.0, 500.0, xtol=1e-10))


@pytest.mark.parametrize(("w_a", "rho"), [(0.0, 0.5), (0.0, 0.2), (1.0, 0.5), (3.5, 0.3), (20.0, 0.7)])
def test_the_audit_bound_solves_the_mixture_equation(w_a: float, rho: float) -> None:
    # tolerance 1e-6: the bisection's 40 halvings of an interval of at most a few thousand
    assert audited_wrong_bound(np.array([w_a]), rho, 0.01)[0] == pytest.approx(_root(w_a, rho, 0.01), abs=1e-6)
    # with no audited wrong prediction it is close to log(1/alpha_1) / -log(1 - rho), the all-escaped bound
    if w_a == 0.0:
        assert np.log(100) / -np.log(1 - rho) < audited_wrong_bound(0.0, rho, 0.01) < (np.log(100) - np.log(0.45)) / -np.log(1 - rho)
    assert audited_wrong_bound(np.array([w_a]), rho, 0.01, cap=0.5)[0] == pytest.approx(min(0.5, _root(w_a, rho, 0.01)), abs=1e-6)


def _bound_misses(n_sequences: int, n_runs: int, rho: float, alpha: float, seed: int) -> tuple[float, float, float]:
    """Share of sequences where the unaudited wrong weight reaches the bound at some run (any time), and the SE.

    Every run is wrong (the bound's hardest case: W_u grows as fast as it can), weights 1 or 1/2 (two attempts).
    """
    rng = np.random.default_rng(seed)
    weight = np.where(rng.random((n_sequences, n_runs)) < 0.5, 1.0, 0.5)
    audited = rng.random((n_sequences, n_runs)) < rho
    w_u, w_a = np.cumsum(weight * ~audited, axis=1), np.cumsum(weight * audited, axis=1)
    missed = (w_u >= audited_wrong_bound(w_a, rho, alpha)).any(axis=1)
    also_fixed = (w_u[:, -1] >= audited_wrong_bound(w_a[:, -1], rho, alpha)).mean()  # at the last run only
    return float(missed.mean()), float(np.sqrt(alpha * (1 - alpha) / n_sequences)), float(also_fixed)


@pytest.mark.parametrize("rho", [0.2, 0.5, 0.8])
def test_the_audit_bound_holds_at_every_run_under_simulation(rho: float) -> None:
    miss, se, at_end = _bound_misses(2000, 150, rho, 0.05, seed=int(rho * 10))
    assert miss <= 0.05 + 2 * se, (miss, at_end)
    assert miss >= at_end  # holding at every run is the harder event


@pytest.mark.slow
def test_the_audit_bound_holds_at_every_run_under_simulation_4000() -> None:
    for rho in (0.1, 0.3, 0.5, 0.9):
        miss, se, _ = _bound_misses(4000, 300, rho, 0.05, seed=int(rho * 100))
        assert miss <= 0.05 + 2 * se, (rho, miss)


def _centre_misses(n_benchmarks: int, n_tasks: int, rho: float) -> tuple[float, float, float]:
    """Under the badly wrong halting model: share of benchmarks where the audited-bound centre's lower (upper) bound
    of the past true sum fails at some look, and the share where it is tighter than the worst case at the end."""
    rng = np.random.default_rng(7)
    missed = tighter = 0
    for b in range(n_benchmarks):
        bench = _benchmark(rng, n_tasks=n_tasks, rho=rho, seed=700_001 + b, halt=0.8, wrong=0.3)
        sums = _centre_sums(bench["low"], bench["high"], 0.05, "audited-bound", _tallies(bench), rho)
        true_sum = np.cumsum(bench["truth"])
        missed += bool((sums.low_sum > true_sum + 1e-9).any() or (sums.high_sum < true_sum - 1e-9).any())
        tighter += bool(sums.low_sum[-1] > np.cumsum(bench["low"])[-1] + 1.0)
    return missed / n_benchmarks, float(np.sqrt(0.01 * 0.99 / n_benchmarks)), tighter / n_benchmarks


def test_the_audited_bound_centre_bounds_the_true_sum_under_wrong_halts() -> None:
    # the event E of the proof, measured: both bounds hold at every look in all but a_1 = a/5 = 0.01 (+ 2 SE)
    miss, se, tighter = _centre_misses(400, 120, 0.5)
    assert miss <= 0.01 + 2 * se, miss
    assert tighter > 0.5, tighter  # and the bound is used: tighter than the worst case by over a unit at the end


def test_the_audited_bound_centre_on_a_tiny_example() -> None:
    # Two attempts per system, rho = 0.5, a = 0.05 (a_1 = 0.01). Rows by task:
    # t1: A1 predicted 1, A2 audited would-halt:1 failed (wrong, adverse for promote), B1 final 0, B2 predicted 0
    # t2: A1 final 1, A2 predicted 1, B1 audited would-halt:1 failed (wrong, adverse for reject), B2 final 1
    rows = [
        _row("A", "t1", 1, halt=1, attempt=1), _row("A", "t1", 0, halt=1, audited=True, attempt=2),
        _row("B", "t1", 0, attempt=1), _row("B", "t1", 0, halt=0, attempt=2),
        _row("A", "t2", 1, attempt=1), _row("A", "t2", 1, halt=1, attempt=2),
        _row("B", "t2", 0, halt=1, audited=True, attempt=1), _row("B", "t2", 1, attempt=2),
    ]  # fmt: skip
    from stopwise.compare import pair_outcomes
    from stopwise.compare._predicted import powered_pairs

    p = powered_pairs(stopwise.outcome_columns(rows), "A", 0.5, lambda r: pair_outcomes(r, "A", "B", statuses=("final", "predicted")))
    # by hand, attempts averaged: P_1 = (1 + 0)/2 - (0 + 0)/2 = 0.5; P_2 = (1 + 1)/2 - (0 + 1)/2 = 0.5
    # worst case: l_1 = (0 + 0)/2 - (0 + 1)/2 = -0.5, l_2 = (1 + 0)/2 - (0 + 1)/2 = 0; h_1 = (1 + 0)/2 - 0 = 0.5, h_2 = 1 - 0.5 = 0.5
    # audited wrong weights: t1's A2 (predicted 1, failed): 1/2 on the promote side; t2's B1 (predicted 1, failed): 1/2 on the reject side
    assert p.audit is not None
    np.testing.assert_allclose(p.audit.point, [0.5, 0.5])
    np.testing.assert_allclose(p.low, [-0.5, 0.0])
    np.testing.assert_allclose(p.high, [0.5, 0.5])
    np.testing.assert_allclose(p.audit.wrong_low, [0.5, 0.0])
    np.testing.assert_allclose(p.audit.wrong_high, [0.0, 0.5])
    sums = _centre_sums(p.low, p.high, 0.05, "audited-bound", p.audit, 0.5)
    u_low = [_root(0.5, 0.5, 0.01), _root(0.5, 0.5, 0.01)]  # W_a after t1 and after t2 (nothing new on the promote side)
    # the bound (about 10) exceeds the adverse predicted weight (A_1 = 1.0, A_2 = 1.0 + 0.5): the worst case stays
    assert min(u_low) > 1.5
    np.testing.assert_allclose(sums.low_sum, [-0.5, -0.5])
    np.testing.assert_allclose(sums.high_sum, [0.5, 1.0])
    assert sums.test_alpha == pytest.approx(0.05 * (1 - AUDIT_BOUND_SHARE))
    # many tasks like t1 without wrong audits: the bound caps the adverse shift at U(0) instead of 1/2 per task
    n = 60
    point, low, high = np.full(n, 0.5), np.full(n, -0.5), np.full(n, 0.5)
    tallies = AuditTallies(point=point, wrong_low=np.zeros(n), wrong_high=np.zeros(n))
    tight = _centre_sums(low, high, 0.05, "audited-bound", tallies, 0.5)
    expected = np.maximum(np.cumsum(low), np.cumsum(point) - _root(0.0, 0.5, 0.01))
    np.testing.assert_allclose(tight.low_sum, expected, atol=1e-6)
    assert tight.low_sum[-1] > np.cumsum(low)[-1] + 20  # far tighter than the worst case late
    np.testing.assert_allclose(tight.high_sum, np.cumsum(high))  # the reject side's worst case equals P here


def test_the_centre_choice_is_in_the_policy_digest_only_where_it_acts() -> None:
    exclude = parse_policy("")
    assert "predicted_centre" not in exclude.canonical_json()
    assert parse_policy('[decision]\npredicted_centre = "worst-case"').sha256() == exclude.sha256()
    worst, default = _policy(0.3, centre="worst-case"), _policy(0.3)
    assert default.decision.predicted_centre == "audited-bound"
    assert "predicted_centre" not in worst.canonical_json() and '"predicted_centre":"audited-bound"' in default.canonical_json()
    with pytest.raises(Exception, match="predicted_centre"):
        _policy(0.3, centre="optimistic")


@pytest.mark.slow
@pytest.mark.parametrize("rho", [0.3, 0.5, 0.8])
def test_the_audited_bound_centre_bounds_the_true_sum_under_wrong_halts_2000(rho: float) -> None:
    miss, se, _ = _centre_misses(2000, 200, rho)
    assert miss <= 0.01 + 2 * se, (rho, miss)


# -- missing tasks under the prediction-powered boundary -------------------------------------------


def _errored(rows: list[dict[str, object]], system: str, tasks: set[str]) -> list[dict[str, object]]:
    """``rows`` with ``system``'s run on each of ``tasks`` errored: a pending row flagged ``error``, no outcome."""
    out = []
    for r in rows:
        if r["system"] == system and r["task"] in tasks:
            r = {"system": system, "task": r["task"], "outcome": None, "status": "pending", "flags": "error", "attempt": r["attempt"]}
        out.append(r)
    return out


def _powered_missing(missing: str) -> Policy:
    return parse_policy(POWERED.replace("[coverage]", f'missing = "{missing}"\n[coverage]').format(rho=0.3) + "audit_seed = 5\n")


def test_an_errored_run_no_longer_freezes_a_prediction_powered_decision() -> None:
    """An errored run at planned position 3 stopped the prediction-powered boundary there (it waited, silently);
    under ``missing = "worst-case"`` the task enters at -1 for the promote test, exactly as a task whose runs were
    a plain failure of A and success of B (no prediction, no audit) would."""
    rng = np.random.default_rng(3)
    n = 120
    y_a, y_b = (rng.random(n) < 0.85).astype(float), (rng.random(n) < 0.35).astype(float)
    halt = rng.random((2, n)) < 0.5
    rows = [
        _row(s, f"t{i}", y[i], halt=int(y[i]) if halt[k, i] else None, audited=audit_draw(5, s, f"t{i}", 0) < 0.3)
        for k, (s, y) in enumerate((("A", y_a), ("B", y_b)))
        for i in range(n)
    ]
    order = TaskUniverse([f"t{i}" for i in rng.permutation(n)])
    gone = str(order.tasks[2])
    broken = stopwise.outcome_columns(_errored(rows, "A", {gone}))
    waiting = stopwise.decide(broken, "A", "B", _powered_missing("wait"), universe=order)
    head = set(order.tasks[:2].tolist())
    first_two = stopwise.decide(stopwise.outcome_columns([r for r in rows if r["task"] in head]), "A", "B", _powered_missing("wait"), universe=order)
    assert waiting.action == "continue" and waiting.r_promote == first_two.r_promote  # the prefix stops at the error
    assert waiting.missing is not None and waiting.missing.tasks == [gone] and waiting.missing.treatment == "wait"
    worst = stopwise.decide(broken, "A", "B", _powered_missing("worst-case"), universe=order)
    assert worst.action == "promote" and worst.missing is not None and worst.missing.judged == 1
    filled = [r for r in rows if r["task"] != gone] + [_row("A", gone, 0.0), _row("B", gone, 1.0)]
    reference = stopwise.decide(stopwise.outcome_columns(filled), "A", "B", _powered_missing("wait"), universe=order)
    assert worst.r_promote == reference.r_promote and reference.action == "promote"
    # B's side is no help: whatever its row on the task (a predicted row's true outcome is unknown), the fill is -1
    b_final = [r if (r["system"], r["task"]) != ("B", gone) else _row("B", gone, 0.0) for r in _errored(rows, "A", {gone})]
    again = stopwise.decide(stopwise.outcome_columns(b_final), "A", "B", _powered_missing("worst-case"), universe=order)
    assert again.r_promote == worst.r_promote


def _missing_false_promotes(n_benchmarks: int, n_tasks: int, seed: int) -> dict[str, float]:
    """False-promote rates of decide() on the null benchmarks of :func:`_benchmark` (halting model wrong in A's
    favour on a tenth of A's halts) whose errors also hide A's losses: A's run on a task A failed and B passed errors with probability 0.8."""
    rng = np.random.default_rng(seed)
    hits = {"worst-case": 0, "exclude": 0}
    for b in range(n_benchmarks):
        audit_seed = seed * 100_003 + b
        bench = _benchmark(rng, n_tasks=n_tasks, rho=0.5, seed=audit_seed, halt=0.5, wrong=0.2)
        y = bench["y"]
        hidden = np.flatnonzero((y[0] == 0) & (y[1] == 1) & (rng.random(n_tasks) < 0.8))
        rows = stopwise.outcome_columns(_errored(bench["rows"], "A", {f"t{i}" for i in hidden}))
        universe = TaskUniverse([f"t{i}" for i in bench["order"]])
        for treatment in hits:
            policy = parse_policy(
                POWERED.replace("[coverage]", f'missing = "{treatment}"\n[coverage]').format(rho=0.5) + f"audit_seed = {audit_seed}\n"
            )
            hits[treatment] += stopwise.decide(rows, "A", "B", policy, universe=universe, forecast=False).action == "promote"
    return {k: v / n_benchmarks for k, v in hits.items()}


def _check_missing_null(n_benchmarks: int, n_tasks: int) -> None:
    rates = _missing_false_promotes(n_benchmarks, n_tasks, seed=31)
    se = float(np.sqrt(0.05 * 0.95 / n_benchmarks))
    report = f"worst-case {rates['worst-case']:.4f}, exclude {rates['exclude']:.4f}, a + 2 SE = {0.05 + 2 * se:.4f} ({n_benchmarks} benchmarks)"
    print(report)
    assert rates["worst-case"] <= 0.05 + 2 * se, report
    assert rates["exclude"] > 0.05 + 2 * se, report  # errors that hide losses bias the excluded universe


def test_false_promotes_with_errors_hiding_losses_quick() -> None:
    _check_missing_null(100, 200)


@pytest.mark.slow
def test_false_promotes_with_errors_hiding_losses_2000_benchmarks() -> None:
    _check_missing_null(2000, 200)
