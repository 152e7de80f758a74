"""The top-up design: its top-up tables, its validity by seeded simulation, decide reproducing it, order provenance."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stopwise import ComparisonError, Policy, PolicyError, TaskUniverse, read_task_universe
from stopwise.compare import betting_paths, decide, order_universe, required_counts, task_order, uniform_orders
from stopwise.compare._coverage import coverage_from_sizes
from stopwise.compare._plan import order_check
from stopwise.compare._topup import in_order_ends, top_up_check, top_up_ends, top_up_tasks
from stopwise.records import CoverageRule, outcome_columns

TOP_UP = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
SIZES = np.array([60, 30, 15, 10, 5])  # N = 120, five groups of unequal size


def _coverage_met(codes: np.ndarray, observed: np.ndarray, sizes: np.ndarray, rule: CoverageRule = "proportional") -> bool:
    labels = np.array([f"g{g}" for g in range(len(sizes))])
    state = coverage_from_sizes(labels, sizes, labels[codes[observed]], rule=rule)
    return bool(state.satisfied)


@pytest.mark.parametrize("rule", ["proportional", "tolerant", "every-group"])
def test_top_up_ends_agree_with_the_fewest_top_up_tasks_and_meet_coverage(rule: CoverageRule) -> None:
    rng = np.random.default_rng(3)
    base = np.repeat(np.arange(len(SIZES)), SIZES)
    codes = base[uniform_orders(len(base), 20, rng=rng)]
    ends = top_up_ends(codes, SIZES, rule=rule, chunk=7)
    n = len(base)
    for r in range(20):
        for tau in rng.integers(1, n + 1, 8):
            observed = np.arange(n) < tau
            picked = top_up_tasks(codes[r], observed, SIZES, rule=rule)
            assert ends[r, tau - 1] == tau + len(picked)
            after = observed.copy()
            after[picked] = True
            assert _coverage_met(codes[r], after, SIZES, rule)  # coverage holds when the action is issued
            if len(picked):  # and no smaller top-up would do: one task fewer leaves some group short at that count
                k = tau + len(picked) - 1
                seen = np.bincount(codes[r][observed], minlength=len(SIZES))
                assert np.maximum(required_counts(SIZES, k, rule=rule) - seen, 0).sum() > len(picked) - 1
    # a prefix that already meets the rule needs no top-up
    covered = np.array([_coverage_met(codes[0], np.arange(n) < t, SIZES, rule) for t in range(1, n + 1)])
    assert (ends[0][covered] == np.arange(1, n + 1)[covered]).all()


def test_in_order_ends_follow_decide_on_the_planned_order() -> None:
    """Running pi in order, a crossing at tau acts at the first look L' at which some L in [tau, L'] has its
    top-up inside pi's first L' tasks (:func:`top_up_check`): :func:`in_order_ends` against that check, look by look."""
    rng = np.random.default_rng(11)
    base = np.repeat(np.arange(len(SIZES)), SIZES)
    codes = base[uniform_orders(len(base), 6, rng=rng)]
    n = len(base)
    for rule in ("proportional", "tolerant"):
        ends, design = in_order_ends(codes, SIZES, rule=rule, chunk=4), top_up_ends(codes, SIZES, rule=rule)
        assert (ends >= design).all() and (ends[:, -1] == n).all()
        for r in range(len(codes)):
            for tau in rng.integers(1, n + 1, 6):
                prefix = next(p for p in range(tau, n + 1) if top_up_check(codes[r], np.arange(n) < p, SIZES, tau, p, rule=rule).ready)
                assert ends[r, tau - 1] == prefix


def _null_population(delta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Win/tie/loss differences with mean exactly delta, group means far apart (the pooled process's hard case)."""
    base = np.repeat(np.arange(len(SIZES)), SIZES)
    n = len(base)
    target = round(delta * n)  # wins - losses
    d = np.zeros(n)
    # group 0 mostly losses, the small groups mostly wins; then fix the total to exactly target
    d[base == 0] = np.where(rng.random(SIZES[0]) < 0.6, -1.0, 0.0)
    for g in range(1, len(SIZES)):
        d[base == g] = np.where(rng.random(SIZES[g]) < 0.7, 1.0, 0.0)
    while d.sum() != target:
        i = rng.integers(n)
        step = 1.0 if d.sum() < target else -1.0
        if -1.0 <= d[i] + step <= 1.0:
            d[i] += step
    return base, d


@pytest.mark.parametrize("delta", [0.0, 0.05])
def test_the_top_up_design_is_valid_per_pair_by_seeded_simulation(delta: float) -> None:
    """At mu = delta both nulls hold: each action's rate over K orders is at most a + 2 SE.

    The top-up design issues promote only if the pooled promote capital crossed on pi's prefix (the top-up
    never changes which test crossed first), so the per-action rates are those of the pooled crossings.
    K = 4000, SE = sqrt(0.05 * 0.95 / 4000) = 0.0034, a + 2 SE = 0.0569.
    """
    rng = np.random.default_rng(11)
    alpha, k = 0.05, 4000
    se = math.sqrt(alpha * (1 - alpha) / k)
    for population in range(3):
        base, d = _null_population(delta, rng)
        assert d.mean() == pytest.approx(delta)
        orders = uniform_orders(len(d), k, rng=rng)
        paths = betting_paths(d[orders], delta, population_size=len(d), alpha=alpha)
        promote, reject = paths.crossed(alpha)
        first_p = np.where(promote.any(axis=1), np.argmax(promote, axis=1), len(d))
        first_r = np.where(reject.any(axis=1), np.argmax(reject, axis=1), len(d))
        promoted = promote.any(axis=1) & (first_p <= first_r)
        rejected = reject.any(axis=1) & ~promoted
        assert promoted.mean() <= alpha + 2 * se, (population, promoted.mean())
        assert rejected.mean() <= alpha + 2 * se, (population, rejected.mean())
        # the top-up only moves the stop later, never past N
        ends = top_up_ends(base[orders[:200]], SIZES)
        assert (ends >= np.arange(1, len(d) + 1)).all() and (ends <= len(d)).all()


def _rows(tasks: list[str], groups: list[str], d: dict[str, float]) -> pd.DataFrame:
    made = []
    for t, g in zip(tasks, groups, strict=True):
        a, b = (1, 0) if d[t] > 0 else (0, 1) if d[t] < 0 else (1, 1)
        made += [{"system": "A", "task": t, "outcome": a, "group": g}, {"system": "B", "task": t, "outcome": b, "group": g}]
    return outcome_columns(made).to_frame()


@pytest.mark.parametrize("rule", ["proportional", "tolerant"])
def test_decide_on_a_prefix_of_rows_reproduces_the_replayed_top_up(rule: CoverageRule) -> None:
    """Run pi's prefix; after each task decide; when it names top-up tasks, run them; the action comes at the
    task count the vectorised replay computes (the crossing look's top-up end)."""
    TOP_UP = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "coverage": {"rule": rule}})
    rng = np.random.default_rng(5)
    base = np.repeat(np.arange(len(SIZES)), SIZES)
    names = np.array([f"t{i:03d}" for i in range(len(base))])
    labels = np.array([f"g{g}" for g in base])
    d = np.where(rng.random(len(base)) < 0.45, 1.0, np.where(rng.random(len(base)) < 0.3, -1.0, 0.0))
    d[base == 4] = -1.0  # the smallest group disagrees: coverage matters
    value = dict(zip(names.tolist(), d.tolist(), strict=True))
    universe = order_universe(task_order(pd.DataFrame({"task": names, "group": labels}), TOP_UP))
    assert universe.stamp is not None and universe.stamp.kind == "uniform"
    pi = universe.tasks
    groups = universe.groups
    codes = np.searchsorted(np.array([f"g{g}" for g in range(len(SIZES))]), groups)
    x = np.array([value[t] for t in pi])
    paths = betting_paths(x[None, :], 0.0, population_size=len(pi), alpha=0.05)
    promote, reject = paths.crossed(0.05)
    tau = int(np.argmax(promote[0] | reject[0])) + 1
    assert (promote[0] | reject[0]).any()
    expected_end = int(top_up_ends(codes[None, :], SIZES, rule=rule)[0, tau - 1])
    expected = "promote" if promote[0, tau - 1] else "reject"
    assert expected_end > tau  # coverage was short at the crossing: the record named top-up tasks
    run: list[str] = []
    record = None
    for task in pi:
        run.append(str(task))
        record = decide(_rows(run, [groups[list(pi).index(t)] for t in run], value), "A", "B", TOP_UP, universe=universe)
        if record.action != "continue":
            break
        if "top-up task(s)" in record.reason:
            extra = record.reason.split("top-up task(s) ")[1].split(", then")[0].split(", ")
            # the record names them in a field too: the top-up tasks in planned order, the rest not needed
            assert record.top_up == extra and [list(pi).index(t) for t in extra] == sorted(list(pi).index(t) for t in extra)
            assert set(extra).isdisjoint(run) and json.loads(record.model_dump_json())["top_up"] == extra
            # the coverage section describes the set the action waits for (issue 33): its short groups and their
            # shortfall are exactly the top-up tasks' groups and number, and the rule is the policy's
            short = {g.group: g.required - g.seen for g in record.coverage.groups if g.seen < g.required}
            extra_groups = [str(groups[list(pi).index(t)]) for t in extra]
            assert record.coverage.missing_groups == sorted(set(extra_groups)) and short == {g: extra_groups.count(g) for g in short}
            assert record.coverage.rule == rule and (record.coverage.slack == 2.0) == (rule == "tolerant")
            run += extra
            record = decide(_rows(run, [groups[list(pi).index(t)] for t in run], value), "A", "B", TOP_UP, universe=universe)
            break
    assert record is not None and record.action == expected and record.n_observed == len(run) == expected_end
    assert record.top_up is None and "top_up" not in json.loads(record.model_dump_json())  # only while waiting
    assert f"crossed at look {tau} of the planned order" in record.reason and record.coverage.satisfied
    assert "pooled on a uniform order, coverage by top-up" in record.tail_method
    # more rows never undo the action (samples in flight finish after it: the export is a superset)
    more = run + [str(t) for t in pi if str(t) not in run][:15]
    later = decide(_rows(more, [groups[list(pi).index(t)] for t in more], value), "A", "B", TOP_UP, universe=universe)
    assert later.action == expected and f"crossed at look {tau} of the planned order" in later.reason and later.coverage.satisfied


def test_order_provenance_is_stamped_read_back_and_checked(tmp_path: Path) -> None:
    tasks = pd.DataFrame({"task": [f"t{i}" for i in range(40)], "group": ["a"] * 25 + ["b"] * 15})
    order = task_order(tasks, TOP_UP)
    assert set(order["order_kind"]) == {"uniform"} and set(order["order_seed"]) == {0}
    path = tmp_path / "order.csv"
    order.to_csv(path, index=False)
    universe = read_task_universe(path)
    assert universe.from_file and universe.stamp is not None and order_check(universe, ("uniform",)) is None
    rows = _rows(universe.tasks.tolist()[:10], universe.groups.tolist()[:10], dict.fromkeys(universe.tasks.tolist(), 1.0))
    assert "order-provenance" not in " ".join(decide(rows, "A", "B", TOP_UP, universe=universe).warnings)
    # a hand-written tasks file (no stamp) and a cost-first order are refused, with order_check = "warn" too (issue 33:
    # the stratified process it fell back to is retired)
    # the exact seeded draw without its stamp is recognised (the policy's kind and seed redraw it)
    order[["position", "task", "group"]].to_csv(tmp_path / "unstamped.csv", index=False)
    unstamped = decide(rows, "A", "B", TOP_UP, universe=read_task_universe(tmp_path / "unstamped.csv"))
    assert not any("provenance" in w for w in unstamped.warnings)
    hand = order[["task", "group"]].iloc[::-1]  # any other order written by hand is not
    hand.to_csv(tmp_path / "hand.csv", index=False)
    costs = pd.DataFrame({"system": "A", "task": tasks["task"], "group": tasks["group"], "cost_usd": np.arange(40.0)})
    cheap = task_order(costs, Policy.model_validate({"order": {"kind": "cost-first"}}), cost_system="A")
    cheap.drop(columns=["system", "cost_usd"], errors="ignore").to_csv(tmp_path / "cheap.csv", index=False)
    edited = order.copy()
    edited.loc[[0, 1], "position"] = [2, 1]
    edited.to_csv(tmp_path / "edited.csv", index=False)
    for name, message in (
        ("hand.csv", "carries no provenance stamp"),
        ("cheap.csv", "is a 'cost-first' order"),
        ("edited.csv", "does not match its stamped digest"),
    ):
        planned = read_task_universe(tmp_path / name)
        with pytest.raises(ComparisonError, match=message):
            decide(rows, "A", "B", TOP_UP, universe=planned)
        warn = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "betting": {"order_check": "warn"}})
        with pytest.raises(ComparisonError, match=f'{message}.*order_check = "warn" no longer decides'):
            decide(rows, "A", "B", warn, universe=planned)
    # a universe built in Python without a stamp is decided with the pooled process (top-up) and a warning
    python_built = TaskUniverse(universe.tasks.tolist()[:10][::-1] + universe.tasks.tolist()[10:], universe.groups.tolist()[:10][::-1] + universe.groups.tolist()[10:])
    flagged = decide(rows, "A", "B", TOP_UP, universe=python_built)
    assert any("assumes a uniformly random permutation" in w for w in flagged.warnings) and "coverage by top-up" in flagged.tail_method
    # the fixed-budget rule does not need a random order
    assert decide(rows, "A", "B", universe=read_task_universe(tmp_path / "cheap.csv")).action == "continue"


def test_the_stratified_design_is_retired_and_the_policy_digest_is_unchanged() -> None:
    stratified = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "betting": {"design": "stratified"}})
    assert '"betting":' not in TOP_UP.canonical_json() and '"betting":{"design":"stratified"' in stratified.canonical_json()
    assert TOP_UP.sha256() == Policy.model_validate({"decision": {"boundary": "betting-wor"}, "betting": {}}).sha256()
    tasks = pd.DataFrame({"task": [f"t{i}" for i in range(40)], "group": ["a"] * 25 + ["b"] * 15})
    with pytest.raises(PolicyError, match="stratified process is retired"):  # stopwise order refuses the design
        task_order(tasks, stratified)
    # a coverage-aware order written by `stopwise order` (for the fixed-budget rule) is refused by the betting boundary
    universe = order_universe(task_order(tasks, Policy.paper()))  # the paper's policy draws coverage-aware orders
    assert universe.stamp is not None and universe.stamp.kind == "coverage-aware"
    rows = _rows(universe.tasks.tolist()[:12], universe.groups.tolist()[:12], dict.fromkeys(universe.tasks.tolist(), 1.0))
    for policy in (TOP_UP, stratified):
        with pytest.raises(ComparisonError, match="stratified process is retired"):
            decide(rows, "A", "B", policy, universe=universe)
    # one group: a coverage-aware order is a uniform one, and the pooled process tests it
    one = order_universe(task_order(tasks.assign(group="g"), Policy.paper()))
    assert "pooled" in decide(_rows(one.tasks.tolist()[:12], ["g"] * 12, dict.fromkeys(one.tasks.tolist(), 1.0)), "A", "B", TOP_UP, universe=one).tail_method


def test_stopwise_order_writes_the_top_up_permutation_with_its_stamp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stopwise.cli.main import main
    from stopwise.records import PAPER_POLICY_TOML

    tasks = tmp_path / "tasks.csv"
    tasks.write_text("task,group\n" + "".join(f"t{i:02d},{'ab'[i % 2]}\n" for i in range(30)))
    policy = tmp_path / "policy.toml"
    policy.write_text(PAPER_POLICY_TOML.replace('boundary = "fixed-budget"', 'boundary = "betting-wor"'))  # a coverage-aware order
    assert main(["order", str(tasks), "-p", str(policy), "-o", str(tmp_path / "order.csv")]) == 0
    assert "order uniform (the betting boundary's top-up design" in capsys.readouterr().out.replace("\n", " ")
    universe = read_task_universe(tmp_path / "order.csv")
    assert universe.stamp is not None and (universe.stamp.kind, universe.stamp.seed) == ("uniform", 0)
    assert order_check(universe, ("uniform",)) is None
    expected = uniform_orders(30, 1, rng=0)[0]  # the seeded draw over the sorted task names
    assert universe.tasks.tolist() == [f"t{i:02d}" for i in expected]
