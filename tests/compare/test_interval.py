"""The interval of a decision record (issue 24): coverage, consistency with the action, and the same numbers everywhere."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import stopwise
from stopwise.cli.main import main
from stopwise.compare import betting_boundary, task_order
from stopwise.compare._claim import interval_text
from stopwise.compare._interval import one_look_interval
from stopwise.compare._wor_exact import exact_wor_pvalue
from stopwise.records import PAPER_POLICY_TOML, DecisionRecord, Policy, load_policy

N = 500
POPULATION = np.r_[np.ones(110), np.zeros(330), -np.ones(60)]  # mean +0.10 on N = 500 tasks


def _two_se(rate: float, reps: int) -> float:
    return 2.0 * math.sqrt(rate * (1.0 - rate) / reps)


@pytest.mark.parametrize(("method", "reps"), [("exact", 300), ("normal", 300), ("serfling", 300), ("bootstrap", 150)])
def test_one_look_interval_covers_the_planned_mean_at_its_look(method: str, reps: int) -> None:
    """Seeded simulation: n = 100 of N = 500 drawn without replacement, level 0.95 (a = 0.025).

    Coverage must be at least 0.95 - 2 SE, SE = sqrt(0.95 * 0.05 / reps) (0.0126 at 300, 0.0178 at 150).
    Observed (seed 24): exact 0.983 (SE 0.007), normal 0.970 (0.010), serfling 1.0, bootstrap 0.973 (0.013).
    """
    rng = np.random.default_rng(24)
    mu = float(POPULATION.mean())
    covered = 0
    for _ in range(reps):
        sample = rng.choice(POPULATION, size=100, replace=False)
        ci = one_look_interval(sample, method=method, alpha=0.025, population_size=N)  # type: ignore[arg-type]
        assert ci.level == 0.95 and ci.kind == "one-look" and -1 <= ci.low <= ci.high <= 1
        covered += ci.low <= mu <= ci.high
    assert covered / reps >= 0.95 - _two_se(0.95, reps), (method, covered / reps)


def test_betting_confidence_sequence_covers_at_every_look_at_once() -> None:
    """Time-uniform coverage of the anytime-valid interval over every look of a run, level 0.95 (a = 0.025).

    The bounds are running intersections over looks, so the mean is outside the interval at SOME look exactly when it
    is outside the set of the whole run (before the logical bounds, which are exact at t = N, are intersected). 200
    uniformly random orders of N = 300 tasks: coverage >= 0.95 - 2 SE (SE = 0.0154). Observed: 0.980 (196 of 200).
    """
    rng = np.random.default_rng(7)
    population = np.r_[np.ones(66), np.zeros(198), -np.ones(36)]
    mu = float(population.mean())
    reps, covered = 200, 0
    for _ in range(reps):
        run = rng.permutation(population)
        b = betting_boundary(run, 0.0, population_size=len(population), alpha=0.025)
        covered += b.lower <= mu + 1e-9 and b.upper >= mu - 1e-9
    assert covered / reps >= 0.95 - _two_se(0.95, reps)


def test_the_interval_matches_the_action() -> None:
    """Promote at delta exactly when delta lies below the interval (fixed-budget, exact tails on the lattice)."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        sample = rng.choice(POPULATION, size=120, replace=False)
        ci = one_look_interval(sample, method="exact", alpha=0.05, population_size=N)
        tails = stopwise.tail_probabilities(sample, ci.low - 1e-6)
        assert tails.r_promote <= 0.05
        assert stopwise.tail_probabilities(sample, ci.low + 1e-6).r_promote > 0.05 or ci.low == 1.0


def test_exact_wor_interval_ends_are_the_inverted_tests() -> None:
    d = np.random.default_rng(1).permutation(np.r_[np.ones(30), np.zeros(60), -np.ones(10)])
    ci = one_look_interval(d, method="exact-wor", alpha=0.025, population_size=N)
    c_low, c_high = round(ci.low * N), round(ci.high * N)
    # promote at c = low*N - 1 (mu <= c / N rejected), not at c = low*N
    assert exact_wor_pvalue(30, 10, 100, N, (c_low - 0.5) / N)[0] <= 0.025 < exact_wor_pvalue(30, 10, 100, N, (c_low + 0.5) / N)[0]
    assert exact_wor_pvalue(30, 10, 100, N, (c_high + 0.5) / N)[1] <= 0.025 < exact_wor_pvalue(30, 10, 100, N, (c_high - 0.5) / N)[1]


def _write(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    rng = np.random.default_rng(3)
    tasks = [f"t{i:03d}" for i in range(N)]
    b = rng.random(N) < 0.45
    a = np.where(rng.random(N) < 0.2, 1, b.astype(int))
    lines = ["system,task,outcome"] + [f"A,{t},{int(x)}" for t, x in zip(tasks, a, strict=True)] + [f"B,{t},{int(x)}" for t, x in zip(tasks, b, strict=True)]
    every = tmp_path / "all.csv"
    every.write_text("\n".join(lines) + "\n")
    policy = tmp_path / "betting.toml"
    policy.write_text('[decision]\nboundary = "betting-wor"\n')
    order = task_order(pd.DataFrame({"task": tasks}), load_policy(policy))  # the seeded uniform permutation, stamped
    first = set(order["task"][:120])
    seen = tmp_path / "seen.csv"
    seen.write_text("\n".join([lines[0]] + [line for line in lines[1:] if line.split(",")[1] in first]) + "\n")
    planned = tmp_path / "tasks.csv"
    order.to_csv(planned, index=False)
    return every, seen, planned, policy


@pytest.mark.parametrize("boundary", ["fixed-budget", "betting-wor"])
def test_json_and_console_show_the_same_interval_and_claim(boundary: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    every, seen, planned, policy = _write(tmp_path)
    paper = tmp_path / "paper.toml"  # the paper's bootstrap tail: a one-look interval at the complete record
    paper.write_text(PAPER_POLICY_TOML, encoding="utf-8")
    args = ["decide", str(every), "-t", "A", "-b", "B", "--complete", "--policy", str(paper)]
    if boundary == "betting-wor":
        args = ["decide", str(seen), "-t", "A", "-b", "B", "--tasks", str(planned), "--policy", str(policy)]
    main([*args, "--json"])
    record = DecisionRecord.model_validate(json.loads(capsys.readouterr().out))
    main(args)
    console = " ".join(capsys.readouterr().out.split())
    assert record.boundary == boundary and record.action == "promote" and record.interval is not None
    assert record.interval.kind == ("anytime-valid" if boundary == "betting-wor" else "one-look")
    assert record.interval.low > record.threshold
    assert " ".join(record.claim.split()) in console
    assert interval_text(record.interval) in console
    assert record.claim.startswith("A beats B by more than 0 pp")
    assert "0.0000" not in console  # significant digits for the tails


def test_old_records_load_and_the_new_names_read_the_old_fields() -> None:
    rows = stopwise.outcome_columns([{"system": s, "task": f"t{i}", "outcome": int(s == "A" or i < 5)} for s in "AB" for i in range(30)])
    record = stopwise.decide(rows, "A", "B", complete=True)
    data = json.loads(record.model_dump_json())
    for key in ("interval", "claim", "forecast"):  # a record written before issue 24
        data.pop(key)
    old = DecisionRecord.model_validate(data)
    assert old.claim == "" and old.interval is None and old.digest() == record.digest()
    data["n_planned"] = data.pop("n_shared")
    assert DecisionRecord.model_validate(data).n_shared == record.n_planned == 30
    assert record.p_promote is None  # fixed-budget: R_promote is a bootstrap tail, not a p-value
    betting = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
    universe = stopwise.TaskUniverse([f"t{i}" for i in range(30)])
    b = stopwise.decide(rows, "A", "B", betting, universe=universe)
    assert b.p_promote == b.r_promote and b.p_reject == b.r_reject and b.interval is not None and b.interval.kind == "anytime-valid"


def _wor_coverage(population: np.ndarray, n: int, alpha: float, reps: int, seed: int) -> tuple[float, float]:
    """Coverage of the exact-wor interval over ``reps`` samples of n tasks drawn without replacement, and its SE.

    The interval depends on the sample only through its wins and losses (the test's sufficient counts), so each
    (wins, losses) cell's interval is computed once, from the first sample that shows it.
    """
    rng = np.random.default_rng(seed)
    mu, big_n = float(population.sum()) / len(population), len(population)
    intervals: dict[tuple[int, int], tuple[float, float]] = {}
    covered = 0
    for _ in range(reps):
        sample = rng.choice(population, size=n, replace=False)
        cell = int((sample > 0).sum()), int((sample < 0).sum())
        if cell not in intervals:
            ci = one_look_interval(sample, method="exact-wor", alpha=alpha, population_size=big_n)
            assert ci.level == round(1 - 2 * alpha, 12) and ci.kind == "one-look"
            intervals[cell] = ci.low, ci.high
        low, high = intervals[cell]
        covered += low <= mu <= high
    rate = covered / reps
    return rate, math.sqrt(rate * (1 - rate) / reps)


@pytest.mark.parametrize("alpha", [0.025, 0.05])
def test_exact_wor_interval_covers_on_finite_populations_drawn_without_replacement(alpha: float) -> None:
    """Seeded simulation at levels 0.95 and 0.90: 400 samples of n = 20 from N = 60 tasks (12 wins, 6 losses).

    Coverage must be at least the level - 2 SE. Observed (seed 24): 0.988 (SE 0.006) at 0.95, 0.968 (SE 0.009) at 0.90.
    """
    population = np.r_[np.ones(12), np.zeros(42), -np.ones(6)]
    rate, se = _wor_coverage(population, 20, alpha, 400, seed=24)
    assert rate >= 1 - 2 * alpha - 2 * se, (rate, se)


@pytest.mark.parametrize("alpha", [0.025, 0.05])
def test_exact_wor_interval_misses_each_side_at_most_a_on_every_population(alpha: float) -> None:
    """Exact, not simulated: for EVERY population of N = 30 tasks with wins, ties and losses, and n = 10 drawn without
    replacement, the probability that the interval lies wholly above (below) the planned mean is at most a.

    The probabilities are multivariate hypergeometric sums (scipy.stats) over the 66 (wins, losses) cells; tolerance 1e-12.
    Worst found: 0.0242 per side at a = 0.025, 0.0497 at a = 0.05.
    """
    from scipy.stats import multivariate_hypergeom

    big_n, n = 30, 10
    cells = np.array([(w, l) for w in range(n + 1) for l in range(n + 1 - w)])  # noqa: E741

    def ends_of(wins: int, losses: int) -> tuple[float, float]:
        ci = one_look_interval(np.r_[np.ones(wins), -np.ones(losses), np.zeros(n - wins - losses)], method="exact-wor", alpha=alpha, population_size=big_n)
        return ci.low, ci.high

    ends = np.array([ends_of(int(w), int(l)) for w, l in cells])  # noqa: E741
    worst = 0.0
    for wins in range(big_n + 1):
        for losses in range(big_n + 1 - wins):
            counts = np.c_[cells, n - cells.sum(axis=1)]
            p = multivariate_hypergeom.pmf(counts, m=[wins, losses, big_n - wins - losses], n=n)
            mu = (wins - losses) / big_n
            above, below = float(p[ends[:, 0] > mu].sum()), float(p[ends[:, 1] < mu].sum())
            worst = max(worst, above, below)
            assert above <= alpha + 1e-12 and below <= alpha + 1e-12, (wins, losses, above, below)
    assert worst > alpha / 2  # the check reaches near the level: the test is not vacuous


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.025, 0.05])
def test_exact_wor_interval_covers_at_full_scale(alpha: float) -> None:
    """1,000 samples of n = 50 from N = 200 tasks (44 wins, 24 losses): coverage >= level - 2 SE at 0.95 and 0.90.

    Observed (seed 24): 0.976 (SE 0.005) at 0.95, 0.948 (SE 0.007) at 0.90.
    """
    population = np.r_[np.ones(44), np.zeros(132), -np.ones(24)]
    rate, se = _wor_coverage(population, 50, alpha, 1000, seed=24)
    assert rate >= 1 - 2 * alpha - 2 * se, (rate, se)


@pytest.mark.parametrize("method", ["exact", "bootstrap", "normal", "serfling"])
def test_the_one_look_interval_is_the_direct_bisection(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """The exact tails of the bisection come from one cumulative distribution (recomputed within GUARD of a): the
    ends are those of the direct computation at every step (GUARD = 2: every tail recomputed)."""
    from stopwise.compare import _interval

    rng = np.random.default_rng(3)
    cases = [rng.choice([-1.0, 0.0, 1.0], 400, p=[0.2, 0.5, 0.3]), rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], 120), rng.uniform(-1, 1, 60)]
    fast = [_interval.one_look_interval(d, method=method, alpha=0.05, population_size=1000, n_resamples=50) for d in cases]
    monkeypatch.setattr(_interval, "GUARD", 2.0)
    direct = [_interval.one_look_interval(d, method=method, alpha=0.05, population_size=1000, n_resamples=50) for d in cases]
    assert fast == direct
