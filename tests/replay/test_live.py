"""Live-look replay: the vectorised first stops equal a per-look loop of the scalar decision functions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stopwise import OutputExistsError, Policy, outcome_columns, write_outcomes
from stopwise.cli.main import main
from stopwise.compare import REJECT, betting_boundary, coverage_state, tail_probabilities
from stopwise.records import read_outcomes, synthetic_benchmark
from stopwise.replay import live_looks, pair_orders, prepare_source, replay_looks, replay_source_looks

UNIFORM = Policy.model_validate({"order": {"kind": "uniform"}, "coverage": {"rule": "none"}})
STRATIFIED = Policy.paper(betting={"design": "stratified"})  # the paper's coverage-aware order
"""The coverage-aware order with the per-group process (the default before the top-up design)."""


def test_live_looks() -> None:
    assert live_looks(10, 4).tolist() == [4, 8, 10]
    assert live_looks(5).tolist() == [1, 2, 3, 4, 5]
    assert live_looks(6, 3).tolist() == [3, 6]
    with pytest.raises(ValueError, match="positive integer"):
        live_looks(10, 0)


def _first_betting_stop(differences: np.ndarray, threshold: float, alpha: float, groups: np.ndarray | None, sizes: dict[str, int] | None, universe: np.ndarray | None) -> tuple[int, int]:
    """Per-look loop of the scalar boundary (and the coverage rule when a universe is given)."""
    n = len(differences)
    for k in range(1, n + 1):
        if universe is not None and groups is not None and not coverage_state(universe, groups[:k]).satisfied:
            continue
        b = betting_boundary(differences[:k], threshold, population_size=n, alpha=alpha, groups=None if groups is None else groups[:k], group_sizes=sizes)
        if b.promote or b.reject:
            return (0 if b.promote and (not b.reject or b.p_promote <= b.p_reject) else 1), k
    return -1, -1


def _top_up_stop(differences: np.ndarray, groups: np.ndarray, threshold: float, alpha: float) -> tuple[int, int]:
    """Per-look loop of the pooled scalar boundary on pi, then the fewest top-up tasks of decide (:func:`top_up_tasks`)."""
    from stopwise.compare._topup import top_up_tasks

    action, k = _first_betting_stop(differences, threshold, alpha, None, None, None)
    if action < 0:
        return action, k
    labels, codes = np.unique(groups, return_inverse=True)
    observed = np.arange(len(differences)) < k
    return action, k + len(top_up_tasks(codes, observed, np.bincount(codes, minlength=len(labels))))


@pytest.mark.parametrize("policy", [UNIFORM, STRATIFIED, Policy(coverage={"rule": "proportional"})], ids=["uniform-pooled", "coverage-aware-stratified", "top-up"])
def test_betting_stops_match_scalar_loop(policy: Policy) -> None:
    source = prepare_source(synthetic_benchmark(120, 3, rng=1), "synthetic")
    live = replay_source_looks(source, policy, thresholds=[0.0, 0.05], n_orders=6, rules=["betting-wor"], batch_rows=7)
    top_up = policy.coverage.rule == "proportional" and policy.betting.design == "top-up"
    stratified = policy.order.kind != "uniform" and not top_up
    uniform = policy.model_copy(update={"order": policy.order.model_copy(update={"kind": "uniform"})})
    assert live.pairs["method"].str.contains("top-up").all() == top_up
    for pair in source.pairs[:3]:
        orders = pair_orders(source, pair, uniform if top_up else policy, 6)
        groups = source.groups[pair.tasks]
        labels, counts = np.unique(groups, return_counts=True)
        sizes = dict(zip(labels.tolist(), counts.tolist(), strict=True))
        tested, baseline = source.pair_label(pair)
        for threshold in (0.0, 0.05):
            expected = [
                _top_up_stop(pair.differences[order], groups[order], threshold, policy.tail_cutoff)
                if top_up
                else _first_betting_stop(
                    pair.differences[order],
                    threshold,
                    policy.tail_cutoff,
                    groups[order] if stratified else None,
                    sizes if stratified else None,
                    groups if stratified else None,
                )
                for order in orders
            ]
            row = live.pairs[(live.pairs["tested"] == tested) & (live.pairs["baseline"] == baseline) & (live.pairs["threshold"] == threshold)].iloc[0]
            assert row["promote"] == sum(a == 0 for a, _ in expected)
            assert row["reject"] == sum(a == 1 for a, _ in expected)
            stops = np.array([k if a >= 0 else pair.n_shared for a, k in expected]) / pair.n_shared
            assert row["stop_q50"] == pytest.approx(np.percentile(stops, 50))
            assert row["resolved_20"] == pytest.approx(np.mean([a >= 0 and k <= math.ceil(0.2 * pair.n_shared) for a, k in expected]))


@pytest.mark.parametrize("policy", [UNIFORM, STRATIFIED, Policy(coverage={"rule": "proportional"})], ids=["uniform-pooled", "coverage-aware-stratified", "top-up"])
def test_betting_batch_size_does_not_change_stops(policy: Policy) -> None:
    """Rows of several pairs in one call (the stratified loop over the looks) give the stops of small calls
    (a few rows: vectorised over the looks), to the last look and tie."""
    source = prepare_source(synthetic_benchmark(90, 4, rng=5), "synthetic")
    options = {"thresholds": [0.0, 0.05], "n_orders": 12, "rules": ["betting-wor"]}
    small = replay_source_looks(source, policy, batch_rows=2, **options)
    large = replay_source_looks(source, policy, batch_rows=4096, **options)
    pd.testing.assert_frame_equal(small.pairs, large.pairs)
    pd.testing.assert_frame_equal(small.curve, large.curve)
    assert small.pairs["promote"].sum() + small.pairs["reject"].sum() > 0


def test_fixed_budget_stops_match_per_look_exact_tails() -> None:
    source = prepare_source(synthetic_benchmark(100, 3, rng=2), "synthetic")
    live = replay_source_looks(source, UNIFORM, thresholds=[0.0, 0.05], n_orders=5, rules=["fixed-budget"], fixed_looks=10)
    for pair in source.pairs[:2]:
        tested, baseline = source.pair_label(pair)
        for threshold in (0.0, 0.05):
            promote = reject = 0
            for order in pair_orders(source, pair, UNIFORM, 5):
                d = pair.differences[order]
                for k in range(10, 101, 10):
                    tails = tail_probabilities(d[:k], threshold, method="exact")
                    above = round(d[:k].sum()) > k * threshold + 1e-9
                    if above and tails.r_promote <= 0.05:
                        promote += 1
                        break
                    if not above and tails.r_reject <= 0.05:
                        reject += 1
                        break
            pick = (live.pairs["tested"] == tested) & (live.pairs["baseline"] == baseline) & (live.pairs["threshold"] == threshold)
            row = live.pairs[pick].iloc[0]
            assert (row["promote"], row["reject"]) == (promote, reject)
            assert row["method"].startswith("fixed-budget, re-declared at every look (exact")


def test_live_replay_writes_tables(tmp_path: Path) -> None:
    live = replay_looks({"synthetic": synthetic_benchmark(150, 3, rng=0)}, thresholds=[0.0], n_orders=20, looks=3)
    written = live.write(tmp_path)
    assert {p.name for p in written} == {
        "live_pairs.csv", "live_summary.csv", "live_summary.json", "live_summary.md", "live_curve.csv", "live_settings.json"
    }
    summary = json.loads((tmp_path / "live_summary.json").read_text())
    assert {row["rule"] for row in summary} == {"betting-wor", "fixed-budget"}
    curve = pd.read_csv(tmp_path / "live_curve.csv")
    assert curve.groupby(["rule", "threshold"])["resolved"].apply(lambda s: bool(np.all(np.diff(s.to_numpy()) >= -1e-12))).all()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".stopwise-output", *(p.name for p in written)])


def test_cli_looks_every_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_outcomes(synthetic_benchmark(60, 3, rng=0), tmp_path / "bench" / "outcomes.csv")
    out = tmp_path / "live"
    code = main(["replay", str(path), "--looks", "every", "--orders", "8", "--thresholds", "0", "-o", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Live-look replay" in printed and "a + 2 SE" in printed.replace("\n", " ")
    pairs = pd.read_csv(out / "live_pairs.csv")
    assert len(pairs) == 6 * 2 and set(pairs["orders"]) == {8}
    code = main(["replay", str(path), "--looks", "5", "--orders", "4", "--thresholds", "0", "--policies", "all", "--rules", "betting-wor", "-o", str(out), "--force"])
    assert code == 0
    capsys.readouterr()
    policies = set(pd.read_csv(out / "live_pairs.csv")["policy"])
    assert {"primary", "forced-uniform", "betting", "betting-uniform"} <= policies and "neyman" not in policies
    for extra, fragment in [
        (["--looks", "sometimes"], "--looks must be 'every' or a positive integer"),
        (["--looks", "every", "--rules", "magic"], "--rules: choose from"),
        (["--fixed-looks", "5"], "apply to the live-look replay"),
        (["--looks", "every", "--budgets", "0.5"], "apply to the budget-grid replay"),
        (["--looks", "2", "--strategy", "yolo"], "--strategy must be"),
        (["--policies", "betting"], "replay it with live looks"),
        (["--looks", "every", "--policies", "neyman"], "uniform and coverage-aware orders"),
    ]:
        code = main(["replay", str(path), "--orders", "4", *extra])
        assert code == 4
        captured = capsys.readouterr()
        assert fragment in (captured.out + captured.err).replace("\n", " ")


def test_terminal_bench_2_betting_wrong_rates_within_bound(shared_data: Path) -> None:
    """Real record (shared data): every pair's betting wrong-decision rate <= a + 2 SE; the fixed-budget rule
    re-declared at every 5 % of the tasks exceeds it on some pairs."""
    rows = read_outcomes(shared_data / "records" / "terminal_bench_2" / "outcomes.csv")
    source = prepare_source(rows, "terminal_bench_2")
    live = replay_source_looks(source, Policy(), thresholds=[0.0], n_orders=100)
    betting = live.pairs[live.pairs["rule"] == "betting-wor"]
    fixed = live.pairs[live.pairs["rule"] == "fixed-budget"]
    assert len(betting) == 42
    assert (betting["wrong_rate"] <= betting["bound"]).all()
    assert (fixed["wrong_rate"] > fixed["bound"]).sum() >= 5


def test_fixed_budget_off_lattice_uses_paired_normal_tails() -> None:
    rows = synthetic_benchmark(80, 2, rng=3)
    rows["outcome"] = np.random.default_rng(4).uniform(0, 1, size=len(rows)).round(6)
    source = prepare_source(rows, "continuous")
    live = replay_source_looks(source, UNIFORM, thresholds=[0.0, 0.1], n_orders=4, fixed_looks=20, batch_rows=3)
    fixed = live.pairs[live.pairs["rule"] == "fixed-budget"]
    assert fixed["method"].str.contains("paired normal").all()
    pair = source.pairs[0]
    for threshold in (0.0, 0.1):
        expected = 0
        for order in pair_orders(source, pair, UNIFORM, 4):
            d = pair.differences[order]
            for k in (20, 40, 60, 80):
                tails = tail_probabilities(d[:k], threshold, method="normal")
                above = d[:k].mean() > threshold
                if (above and tails.r_promote <= 0.05) or (not above and tails.r_reject <= 0.05):
                    expected += 1
                    break
        row = fixed[(fixed["tested"] == source.pair_label(pair)[0]) & (fixed["baseline"] == source.pair_label(pair)[1]) & (fixed["threshold"] == threshold)].iloc[0]
        assert row["promote"] + row["reject"] == expected


def test_mirrored_pairs_at_zero_equal_their_own_replay() -> None:
    """At 0 pp the pooled replay runs one of (A, B) and (B, A) and mirrors the other; the mirror equals a replay."""
    from stopwise.replay._live import _BettingPlan, _replay_pairs, _run_betting

    source = prepare_source(synthetic_benchmark(150, 4, rng=5), "synthetic")
    orders = pair_orders(source, source.pairs[0], UNIFORM, 30)
    plan = _BettingPlan(orders, 0.0, None, None, None, live_looks(150), 0.05, "auto")
    mirrored = _run_betting(source.pairs, plan, 4096, None)
    action, stop, _ = _replay_pairs(source.pairs, plan, 4096, None)
    assert len(source.pairs) == 12 and (action >= 0).any() and (action == 0).any() and (action == 1).any()
    for i, run in enumerate(mirrored):
        np.testing.assert_array_equal(run.action, action[i])
        np.testing.assert_array_equal(run.stop, stop[i])


def test_write_never_touches_a_directory_stopwise_did_not_write(tmp_path: Path) -> None:
    live = replay_looks({"synthetic": synthetic_benchmark(60, 3, rng=0)}, thresholds=[0.0], n_orders=5, looks=5)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "live_summary.csv").write_text("my own table\n")
    with pytest.raises(OutputExistsError, match="is a directory stopwise did not write"):
        live.write(mine)
    assert [p.name for p in mine.iterdir()] == ["live_summary.csv"] and (mine / "live_summary.csv").read_text() == "my own table\n"
    ours = tmp_path / "ours"
    first = live.write(ours)
    assert [p.parent for p in first] == [ours] * 6 and (ours / ".stopwise-output").is_file()
    with pytest.raises(OutputExistsError, match="holds earlier stopwise output; pass --force"):
        live.write(ours)
    assert live.write(ours, force=True)[0] == ours / "live_pairs.csv"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".stopwise-tmp")]


@pytest.mark.parametrize("in_order", [False, True], ids=["top-up-first", "planned-order"])
def test_tolerant_top_up_stops_match_decides_rule(in_order: bool) -> None:
    """Issue 33: under the tolerant rule the replay's stop after a crossing at k is k plus decide's fewest top-up
    (the top-up run first), or, when the evaluation runs pi in order, the first prefix at which decide's check holds."""
    from stopwise.compare._topup import top_up_check, top_up_tasks

    policy = Policy.model_validate({"coverage": {"rule": "tolerant"}})
    source = prepare_source(synthetic_benchmark(120, 3, rng=1), "synthetic")
    live = replay_source_looks(source, policy, thresholds=[0.0], n_orders=6, rules=["betting-wor"], in_order=in_order)
    assert live.pairs["method"].str.contains("top-up run in planned order" if in_order else "coverage by top-up").all()
    uniform = policy.model_copy(update={"order": policy.order.model_copy(update={"kind": "uniform"})})
    for pair in source.pairs[:3]:
        groups = source.groups[pair.tasks]
        labels, codes = np.unique(groups, return_inverse=True)
        sizes = np.bincount(codes, minlength=len(labels))
        n = pair.n_shared
        expected = []
        for order in pair_orders(source, pair, uniform, 6):
            action, k = _first_betting_stop(pair.differences[order], 0.0, policy.tail_cutoff, None, None, None)
            if action >= 0 and in_order:
                k = next(p for p in range(k, n + 1) if top_up_check(codes[order], np.arange(n) < p, sizes, k, p, rule="tolerant").ready)
            elif action >= 0:
                k += len(top_up_tasks(codes[order], np.arange(n) < k, sizes, rule="tolerant"))
            expected.append((action, k))
        tested, baseline = source.pair_label(pair)
        row = live.pairs[(live.pairs["tested"] == tested) & (live.pairs["baseline"] == baseline)].iloc[0]
        assert (row["promote"], row["reject"]) == (sum(a == 0 for a, _ in expected), sum(a == 1 for a, _ in expected))
        stops = np.array([k if a >= 0 else n for a, k in expected]) / n
        assert row["stop_q50"] == pytest.approx(np.percentile(stops, 50)) and row["stop_q75"] == pytest.approx(np.percentile(stops, 75))


def test_a_pair_at_the_threshold_takes_the_certain_answer_at_n_both_ways() -> None:
    """Issue 37: a row not stopped by the look at N rejects there when the mean difference is at most delta
    (it is known exactly), as decide does; a pair with mean 0 and its mirror both reject (no mirroring)."""
    from stopwise.replay._live import _BettingPlan, _run_betting

    rows = [{"system": s, "task": f"t{i:02d}", "outcome": float(v)}
            for i in range(40) for s, v in (("A", i % 2), ("B", 1 - i % 2), ("C", 1))]  # A - B has mean 0
    source = prepare_source(outcome_columns(rows), "ties")
    orders = pair_orders(source, source.pairs[0], UNIFORM, 8)
    plan = _BettingPlan(orders, 0.0, None, None, None, live_looks(40), 0.05, "auto")
    runs = _run_betting(source.pairs, plan, 4096, None)
    by_pair = {source.pair_label(p)[:2]: run for p, run in zip(source.pairs, runs, strict=True)}
    for pair in (("A", "B"), ("B", "A")):
        run = by_pair[pair]  # before the fix, orders not crossed by N had no action (-1)
        at_n = run.stop == 40
        assert at_n.sum() >= 6 and (run.action[at_n] == REJECT).all() and (run.action >= 0).all()
