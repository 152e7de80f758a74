"""The interval of a decision record (issue 24): coverage, consistency with the action, and the same numbers everywhere."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import stopwise
from stopwise.cli.main import main
from stopwise.compare import betting_boundary, exact_wor_pvalue
from stopwise.compare._interval import interval_text, one_look_interval
from stopwise.records import DecisionRecord, Policy

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
    order = rng.permutation(N)
    lines = ["system,task,outcome"] + [f"A,{t},{int(x)}" for t, x in zip(tasks, a, strict=True)] + [f"B,{t},{int(x)}" for t, x in zip(tasks, b, strict=True)]
    every = tmp_path / "all.csv"
    every.write_text("\n".join(lines) + "\n")
    first = {tasks[i] for i in order[:120]}
    seen = tmp_path / "seen.csv"
    seen.write_text("\n".join([lines[0]] + [line for line in lines[1:] if line.split(",")[1] in first]) + "\n")
    planned = tmp_path / "tasks.csv"
    planned.write_text("task\n" + "\n".join(tasks[i] for i in order) + "\n")
    policy = tmp_path / "betting.toml"
    policy.write_text('[decision]\nboundary = "betting-wor"\n[betting]\norder_check = "warn"\n')
    return every, seen, planned, policy


@pytest.mark.parametrize("boundary", ["fixed-budget", "betting-wor"])
def test_json_and_console_show_the_same_interval_and_claim(boundary: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    every, seen, planned, policy = _write(tmp_path)
    args = ["decide", str(every), "-t", "A", "-b", "B", "--complete"]
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
