"""The power-tuned prediction-powered boundary with active audits (issue 34): range, unbiasedness, validity under the null."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stopwise.compare import betting_paths
from stopwise.compare._tuned import ActiveAudits, TunedValues, design_range, tuned_paths, tuned_values
from stopwise.errors import ArgumentError

ALPHA = 0.05


def _null_runs(
    rng: np.random.Generator, n_bench: int, n_tasks: int, *, harsh: bool, wrong_confidence: float = 1.0
) -> dict[str, np.ndarray]:
    """(R, T, 2) runs of null benchmarks (mu = 0 exactly) with a halting model wrong only in the tested system's favour.

    B's outcomes are a permutation of A's. Each run is halted with probability 0.8. A's halted failures are predicted
    successes with probability 0.6 (about 30 % of A's halts wrong); under ``harsh`` B's halted successes are also
    predicted failures with probability 0.6. Wrong predictions are made with confidence ``wrong_confidence`` (1: the
    least audited under the active rule; 0.5: the most, so that a task's two wrong runs can both be audited under
    antithetic audits at rho = 0.3), right ones with confidence uniform on [0.9, 1]. Computed here, independently of stopwise's code.
    """
    a = (rng.random((n_bench, n_tasks)) < 0.5).astype(float)
    b = np.take_along_axis(a, np.argsort(rng.random((n_bench, n_tasks)), axis=1), axis=1)
    y = np.stack([a, b], axis=-1)
    halted = rng.random(y.shape) < 0.8
    flip = rng.random(y.shape) < 0.6
    wrong = halted & flip & (y == np.array([0.0, 1.0]))
    if not harsh:
        wrong[..., 1] = False
    f = np.where(wrong, 1.0 - y, y)
    confidence = np.where(wrong, wrong_confidence, 0.9 + 0.1 * rng.random(y.shape))
    share = float(wrong[..., 0].sum() / halted[..., 0].sum())
    return {
        "outcome": y,
        "halted": halted,
        "prediction": f,
        "confidence": confidence,
        "draw": rng.random(y.shape),
        "share": np.array(share),
    }


def _false_promotes(
    n_bench: int, n_tasks: int, rho: float, seed: int, *, harsh: bool = False, coupling: str = "independent",
    wrong_confidence: float = 1.0,
) -> tuple[float, float, float, float]:
    runs = _null_runs(np.random.default_rng(seed), n_bench, n_tasks, harsh=harsh, wrong_confidence=wrong_confidence)
    rule = ActiveAudits(rho, coupling=coupling)
    if coupling == "antithetic":
        runs["draw"][..., 1] = 1.0 - runs["draw"][..., 0]
    values = tuned_values(runs["outcome"], runs["halted"], runs["prediction"], runs["confidence"], runs["draw"], rule)
    promote, _ = tuned_paths(values, 0.0, population_size=n_tasks, alpha=ALPHA, rule=rule).crossed(ALPHA)
    y, f, h = runs["outcome"], runs["prediction"], runs["halted"]
    as_truth = np.where(h, f, y)
    truth, _ = betting_paths(as_truth[..., 0] - as_truth[..., 1], 0.0, population_size=n_tasks, alpha=ALPHA).crossed(
        ALPHA
    )
    se = float(np.sqrt(ALPHA * (1 - ALPHA) / n_bench))
    return float(promote.any(axis=1).mean()), float(truth.any(axis=1).mean()), float(runs["share"]), se


def _check_null(
    n_bench: int, n_tasks: int, rho: float, seed: int, harsh: bool, coupling: str = "independent", wrong_confidence: float = 1.0
) -> None:
    tuned, truth, share, se = _false_promotes(
        n_bench, n_tasks, rho, seed, harsh=harsh, coupling=coupling, wrong_confidence=wrong_confidence
    )
    report = f"rho {rho} ({coupling}, harsh {harsh}): tuned {tuned:.4f}, predictions as truth {truth:.4f}, a + 2 SE = {ALPHA + 2 * se:.4f}, A's wrong halts {share:.0%}"
    print(report)
    assert 0.25 < share < 0.35, report  # the halting model is as badly wrong as the issue asks
    assert tuned <= ALPHA + 2 * se, report
    assert truth > ALPHA + 2 * se, report


@pytest.mark.parametrize("coupling", ["independent", "antithetic"])
def test_false_promotes_under_the_null_quick(coupling: str) -> None:
    _check_null(300, 80, 0.3, 5, harsh=False, coupling=coupling)


@pytest.mark.slow
def test_antithetic_false_promotes_when_both_wrong_runs_can_be_audited() -> None:
    """Harsh model, wrong predictions at confidence 0.5 (pi up to 0.52 at rho = 0.3: a task's two wrong favouring runs
    can both be audited, the design's pair extreme), 2,000 null benchmarks."""
    _check_null(2000, 200, 0.3, 40, True, "antithetic", wrong_confidence=0.5)


@pytest.mark.slow
@pytest.mark.parametrize("coupling", ["independent", "antithetic"])
@pytest.mark.parametrize("harsh", [False, True])
@pytest.mark.parametrize("rho", [0.1, 0.3])
def test_false_promotes_under_the_null_2000_benchmarks(rho: float, harsh: bool, coupling: str) -> None:
    _check_null(2000, 200, rho, 34 + int(10 * rho) + harsh, harsh, coupling)


def _brute_range(rule: ActiveAudits) -> tuple[float, float]:
    """The least and greatest X over every case of one task: outcomes, predictions, confidences on a grid of 51, and
    which runs are audited where the draws allow it (independent: any; antithetic, one w with the baseline at 1 - w:
    both only when pi_A + pi_B > 1, neither only when pi_A + pi_B <= 1), and the prediction's weight lam in
    {1, 0.5, 0}. Computed here."""
    conf = np.linspace(0.5, 1.0, 51)
    lows, highs = [], []
    for ya, yb, fa, fb, lam in itertools.product((0.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0), (1.0, 0.5, 0.0)):
        pa = rule.probability(np.full(conf.size, fa == 1.0), conf)[:, None]
        pb = rule.probability(np.full(conf.size, fb == 0.0), conf)[None, :]
        total = pa + pb
        for audit_a, audit_b in itertools.product((False, True), repeat=2):
            ga, gb = lam * fa, 1.0 - lam * (1.0 - fb)  # the shrunk guesses of the module docstring
            value_a = ga + (ya - ga) / pa if audit_a else np.full_like(pa, ga)
            value_b = gb + (yb - gb) / pb if audit_b else np.full_like(pb, gb)
            x = value_a - value_b
            if rule.coupling == "antithetic" and audit_a == audit_b:
                x = np.where(total > 1.0 if audit_a else total <= 1.0, x, np.nan)
            if np.isfinite(x).any():
                lows.append(np.nanmin(x))
                highs.append(np.nanmax(x))
    return min(lows), max(highs)


@pytest.mark.parametrize(
    "rule",
    [ActiveAudits(0.3), ActiveAudits(0.28, coupling="antithetic"), ActiveAudits(0.3, coupling="antithetic"),
     ActiveAudits(0.5, coupling="antithetic"), ActiveAudits(0.2, favour=1.9, floor=0.05, coupling="antithetic")],
)  # fmt: skip
def test_design_range_is_the_worst_case_over_every_run(rule: ActiveAudits) -> None:
    """design_range equals the brute-force extreme over all cases (tolerance 0.02: the grids of w and confidence
    reach the extremes' pi within 0.0005 and 0.025 rho; the closed form is never exceeded)."""
    low, high = design_range(rule)
    brute_low, brute_high = _brute_range(rule)
    assert brute_low >= low - 1e-9 and brute_high <= high + 1e-9
    assert brute_low == pytest.approx(low, abs=0.02) and brute_high == pytest.approx(high, abs=0.02)


def test_antithetic_audits_narrow_the_promote_range_at_rho_0_3() -> None:
    """Antithetic draws: at most one favouring run of a task audited while pi <= 0.5, so x_min = -1 / least."""
    rule = ActiveAudits(0.28, coupling="antithetic")
    assert rule.greatest(True) == pytest.approx(0.28 * (1.5 + 0.5 * 0.45))
    assert design_range(rule)[0] == pytest.approx(-1.0 / (0.28 * 1.475), rel=1e-12)
    assert design_range(ActiveAudits(0.28))[0] == pytest.approx(1.0 - 2.0 / (0.28 * 1.475), rel=1e-12)


@pytest.mark.parametrize("coupling", ["independent", "antithetic"])
def test_values_lie_in_the_design_range_and_are_unbiased(coupling: str) -> None:
    """Every corrected difference lies in the design's range; over the audit draws its mean is the true difference.

    20,000 audit draws of fixed runs (all halted, prediction wrong on some, power tuning off so that g = f is fixed):
    the mean of X per task within 4 standard errors of D.
    """
    rng = np.random.default_rng(3)
    n_tasks, draws = 12, 20_000
    y = (rng.random((1, n_tasks, 2)) < 0.5).astype(float)
    f = np.where(rng.random(y.shape) < 0.3, 1.0 - y, y)
    conf = 0.5 + 0.5 * rng.random(y.shape)
    rule = ActiveAudits(0.3, coupling=coupling)
    rep = np.broadcast_to
    shape = (draws, n_tasks, 2)
    u = rng.random(shape)
    if coupling == "antithetic":
        u[..., 1] = 1.0 - u[..., 0]
    values = tuned_values(rep(y, shape), np.ones(shape), rep(f, shape), rep(conf, shape), u, rule, tune=False)
    low, high = design_range(rule)
    assert values.x.min() >= low - 1e-12 and values.x.max() <= high + 1e-12
    d = y[0, :, 0] - y[0, :, 1]
    se = values.x.std(axis=0) / np.sqrt(draws)
    assert np.all(np.abs(values.x.mean(axis=0) - d) <= 4 * se + 1e-12)


def test_power_tuning_learns_a_small_weight_from_a_useless_model() -> None:
    """A prediction independent of the outcome: once 20 audited halts are past, lam is near 0 (the slope of Y on f)."""
    rng = np.random.default_rng(4)
    shape = (1, 400, 2)
    y = (rng.random(shape) < 0.5).astype(float)
    f = (rng.random(shape) < 0.5).astype(float)
    values = tuned_values(y, np.ones(shape), f, np.full(shape, 0.95), rng.random(shape), ActiveAudits(0.5))
    assert values.weight[0, 0] == 1.0
    assert abs(values.weight[0, -1]) < 0.15  # slope of Y on f: SE about 0.05 with ~400 audited halts


def test_the_rule_and_the_bets_are_validated() -> None:
    with pytest.raises(ArgumentError, match="`rate`"):
        ActiveAudits(1.2)
    with pytest.raises(ArgumentError, match="`rate`"):
        ActiveAudits(0.0)
    with pytest.raises(ArgumentError, match="`favour`"):
        ActiveAudits(0.3, favour=2.5)
    with pytest.raises(ArgumentError, match="`coupling`"):
        ActiveAudits(0.3, coupling="paired")
    one = np.ones((1, 1, 2))
    with pytest.raises(ArgumentError, match="1 - its tested draw"):
        tuned_values(one, one, one, one, np.full((1, 1, 2), 0.3), ActiveAudits(0.3, coupling="antithetic"))
    with pytest.raises(ArgumentError, match="`confidence`"):
        tuned_values(one, one, one, 0.4 * one, one, ActiveAudits(0.3))
    z = np.zeros((1, 2))
    values = TunedValues(z, z, z, z, z, z, z + 1.0, np.zeros((1, 2, 2)))
    with pytest.raises(ArgumentError, match="`truncation`"):
        tuned_paths(values, 0.0, population_size=2, alpha=0.05, rule=ActiveAudits(0.3), truncation=1.0)


TUNED = (
    '[decision]\nboundary = "betting-wor"\npredicted = "prediction-powered-tuned"\n[coverage]\nrule = "none"\n'
    '[early]\naudit_fraction = {rho}\naudit_seed = {seed}\naudit_rule = "{rule}"\n'
)


def _active_rows(
    n_tasks: int, rho: float, seed: int, coupling: str = "independent"
) -> tuple[list[dict[str, object]], dict[str, np.ndarray]]:
    """Runs of two systems halted with probability 0.6 (20 % wrong), active audits by the real seeded draw, as rows.

    Returns the rows and, per task in task order, X, l, h, P and the sub-audited wrong weights computed here from
    the run arrays (independently of stopwise's pairing).
    """
    from stopwise.records import audit_draw

    rng = np.random.default_rng(seed)
    rule = ActiveAudits(rho, coupling=coupling)
    y = (rng.random((n_tasks, 2)) < np.array([0.7, 0.4])).astype(float)
    halted = rng.random(y.shape) < 0.6
    f = np.where(rng.random(y.shape) < 0.2, 1 - y, y)
    conf = 0.9 + 0.1 * rng.random(y.shape)
    favours = f == np.array([1.0, 0.0])
    pi = rule.probability(favours, conf)
    u = np.array(
        [[audit_draw(seed, s, f"t{i}", 0, tested="A", coupling=coupling) for s in "AB"] for i in range(n_tasks)]
    )
    if coupling == "antithetic":  # one uniform per task: the baseline's draw is 1 - the tested system's
        np.testing.assert_allclose(u[:, 1], 1.0 - u[:, 0], rtol=0, atol=1e-15)
    audited = halted & (u < pi)
    rows = []
    for i in range(n_tasks):
        for k, s in enumerate("AB"):
            if not halted[i, k]:
                rows.append({"system": s, "task": f"t{i}", "outcome": y[i, k]})
            elif audited[i, k]:
                flags = f"audited;would-halt:{int(f[i, k])};audit-p:{float(pi[i, k])!r}"
                rows.append({"system": s, "task": f"t{i}", "outcome": y[i, k], "flags": flags})
            else:
                rows.append(
                    {
                        "system": s,
                        "task": f"t{i}",
                        "outcome": f[i, k],
                        "status": "predicted",
                        "flags": f"predicted;audit-p:{float(pi[i, k])!r}",
                    }
                )
    predicted = halted & ~audited
    value = np.where(audited, f + (y - f) / pi, np.where(predicted, f, y))
    wrong = audited & (f != y)
    sub_low = (wrong & favours & (u < rule.least(True))).sum(axis=1)
    sub_high = (wrong & ~favours & (u < rule.least(False))).sum(axis=1)

    def d(v: np.ndarray) -> np.ndarray:
        return v[:, 0] - v[:, 1]

    arrays = {
        "x": d(value), "low": d(np.where(predicted, [0.0, 1.0], y)), "high": d(np.where(predicted, [1.0, 0.0], y)),
        "point": d(np.where(predicted, f, y)), "wrong_low": sub_low.astype(float), "wrong_high": sub_high.astype(float),
    }  # fmt: skip
    return rows, arrays


@pytest.mark.parametrize("coupling", ["independent", "antithetic"])
def test_decide_uses_the_tuned_boundary_with_the_recorded_probabilities(coupling: str) -> None:
    import stopwise
    from stopwise.compare import AuditTallies
    from stopwise.compare._tuned import tuned_boundary
    from stopwise.records import TaskUniverse, parse_policy

    n, rho, seed = 80, 0.3, 7
    rows, arrays = _active_rows(n, rho, seed, coupling)
    order = np.random.default_rng(1).permutation(n)
    names = [f"t{i}" for i in order]
    text = TUNED + f'audit_coupling = "{coupling}"\n'
    policy = parse_policy(text.format(rho=rho, seed=seed, rule="active"))
    record = stopwise.decide(stopwise.outcome_columns(rows), "A", "B", policy, universe=TaskUniverse(names))
    a = {k: v[order] for k, v in arrays.items()}
    tallies = AuditTallies(point=a["point"], wrong_low=a["wrong_low"], wrong_high=a["wrong_high"])
    direct = tuned_boundary(
        a["x"],
        a["low"],
        a["high"],
        tallies,
        0.0,
        population_size=n,
        alpha=0.05,
        rule=ActiveAudits(rho, coupling=coupling),
    )
    assert record.r_promote == pytest.approx(direct.p_promote, rel=1e-12)
    assert record.r_reject == pytest.approx(direct.p_reject, rel=1e-12)
    assert record.delta_hat == pytest.approx(float(np.mean(arrays["x"])), abs=1e-12)
    assert record.predicted is not None and record.predicted.treatment == "prediction-powered-tuned"
    assert "active audits" in record.predicted.note and "g = f" in record.predicted.note
    assert not any("audit draw" in w for w in record.warnings)  # every audited flag agrees with draw < recorded pi
    other = stopwise.decide(
        stopwise.outcome_columns(rows),
        "A",
        "B",
        parse_policy(text.format(rho=rho, seed=seed + 1, rule="active")),
        universe=TaskUniverse(names),
    )
    assert any("audit draw" in w for w in other.warnings)


def test_active_rows_without_their_probability_are_refused() -> None:
    import stopwise
    from stopwise.errors import ComparisonError
    from stopwise.records import TaskUniverse, parse_policy

    rows = [
        {"system": "A", "task": "t", "outcome": 1, "status": "predicted", "flags": "predicted"},
        {"system": "B", "task": "t", "outcome": 0},
    ]
    policy = parse_policy(TUNED.format(rho=0.3, seed=0, rule="active"))
    with pytest.raises(ComparisonError, match="audit-p"):
        stopwise.decide(stopwise.outcome_columns(rows), "A", "B", policy, universe=TaskUniverse(["t"]))
    rows[0]["flags"] = "predicted;audit-p:0.05"  # below the rule's least for a favouring prediction (0.3 x 1.475)
    with pytest.raises(ComparisonError, match="below the rule's least"):
        stopwise.decide(stopwise.outcome_columns(rows), "A", "B", policy, universe=TaskUniverse(["t"]))
    old = parse_policy(
        TUNED.format(rho=0.3, seed=0, rule="active").replace("prediction-powered-tuned", "prediction-powered")
    )
    with pytest.raises(ComparisonError, match="prediction-powered-tuned"):
        stopwise.decide(stopwise.outcome_columns(rows), "A", "B", old, universe=TaskUniverse(["t"]))


def test_decide_warns_when_halting_cannot_pay() -> None:
    """One halted run in four at rho = 0.5: 1 / (1 - 0.25 x 0.5) = 1.14 < 1.24, so the record warns; the tuned
    decision's 60 % halted at mean pi about 0.3 (break-even 1.7) does not."""
    import stopwise
    from stopwise.records import TaskUniverse, parse_policy

    rows = [
        {"system": "A", "task": "t", "outcome": 1, "status": "predicted", "flags": "predicted"},
        {"system": "B", "task": "t", "outcome": 0}, {"system": "A", "task": "u", "outcome": 1}, {"system": "B", "task": "u", "outcome": 0},
    ]  # fmt: skip
    policy = parse_policy(TUNED.format(rho=0.5, seed=0, rule="uniform"))
    record = stopwise.decide(stopwise.outcome_columns(rows), "A", "B", policy, universe=TaskUniverse(["t", "u"]))
    warned = [w for w in record.warnings if w.startswith("joined halting is on the losing side")]
    assert len(warned) == 1 and "25 %" in warned[0] and "1.14" in warned[0]
    active_rows, _ = _active_rows(80, 0.3, 7)
    policy = parse_policy(TUNED.format(rho=0.3, seed=7, rule="active"))
    names = [f"t{i}" for i in range(80)]
    record = stopwise.decide(stopwise.outcome_columns(active_rows), "A", "B", policy, universe=TaskUniverse(names))
    assert not any("losing side" in w for w in record.warnings)


def test_antithetic_audits_need_the_tuned_treatment() -> None:
    import stopwise
    from stopwise.errors import ComparisonError
    from stopwise.records import TaskUniverse, parse_policy

    rows, _ = _active_rows(10, 0.3, 7, "antithetic")
    text = (TUNED + 'audit_coupling = "antithetic"\n').format(rho=0.3, seed=7, rule="active")
    assert '"audit_coupling":"antithetic"' in parse_policy(text).canonical_json()
    assert "audit_coupling" not in parse_policy(TUNED.format(rho=0.3, seed=7, rule="active")).canonical_json()
    old = parse_policy(text.replace("prediction-powered-tuned", "prediction-powered").replace('"active"', '"uniform"'))
    with pytest.raises(ComparisonError, match="audit_coupling"):
        stopwise.decide(
            stopwise.outcome_columns(rows), "A", "B", old, universe=TaskUniverse([f"t{i}" for i in range(10)])
        )


def test_antithetic_audits_need_matched_attempts() -> None:
    """A task with attempts {0, 1} of A and {0} of B: A's second run has no partner draw, refused by name."""
    import stopwise
    from stopwise.errors import ComparisonError
    from stopwise.records import TaskUniverse, parse_policy

    rows, _ = _active_rows(10, 0.3, 7, "antithetic")
    rows.append({"system": "A", "task": "t3", "outcome": 1.0, "attempt": 1})
    text = (TUNED + 'audit_coupling = "antithetic"\n').format(rho=0.3, seed=7, rule="active")
    with pytest.raises(ComparisonError, match="task 't3' has attempts \\[0, 1\\]"):
        stopwise.decide(stopwise.outcome_columns(rows), "A", "B", parse_policy(text), universe=TaskUniverse([f"t{i}" for i in range(10)]))
