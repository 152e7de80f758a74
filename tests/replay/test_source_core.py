"""Replay and decide share one pairing core: N, attempts averaging, sums, group conflicts."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import stopwise
from stopwise import ComparisonError, decide, outcome_columns, pair_outcomes
from stopwise.compare import outcome_cells, task_order
from stopwise.compare._pairing import task_groups
from stopwise.records import synthetic_benchmark
from stopwise.replay import prepare_source


def _with_pending(n_tasks: int = 60, n_pending: int = 10) -> pd.DataFrame:
    rows = synthetic_benchmark(n_tasks, 3, rng=0)
    first = sorted(rows["system"].unique())[0]
    late = (rows["system"] == first) & rows["task"].isin(sorted(rows["task"].unique())[-n_pending:])
    rows.loc[late, ["status", "outcome"]] = ["pending", np.nan]
    return rows


def test_replay_and_decide_agree_on_n_with_pending_rows() -> None:
    rows = _with_pending()
    a, b = sorted(rows["system"].unique())[:2]
    record = decide(rows, a, b, complete=True)
    assert (record.n_shared, record.n_observed) == (60, 50)
    source = prepare_source(rows, "s", min_coverage=0.0)
    # before the shared core the replay paired the 50 tasks with outcomes and called that N
    assert all(source.pair_label(p) != (a, b) for p in source.pairs)
    assert source.excluded_pairs[(a, b)].startswith("10 of the pair's 60 shared tasks have no usable outcome")
    kept = {source.pair_label(p): p.n_shared for p in source.pairs}
    c = sorted(rows["system"].unique())[2]
    assert kept[(b, c)] == decide(rows, b, c, complete=True).n_shared == 60


def test_one_group_conflict_check_everywhere() -> None:
    rows = synthetic_benchmark(20, 2, rng=0)
    first = rows.index[rows["task"] == rows["task"].iloc[0]]
    rows.loc[first[0], "group"] = "other-group"
    task = rows.loc[first[0], "task"]
    expected = f"task {task!r} has rows with different group values"
    with pytest.raises(ComparisonError, match=expected):
        decide(rows, *sorted(rows["system"].unique()), complete=True)
    with pytest.raises(ComparisonError, match=expected):
        prepare_source(rows, "s")
    with pytest.raises(ComparisonError, match=expected):
        task_order(rows[["task", "group"]])
    with pytest.raises(ComparisonError, match="task 'x' has rows with different group values \\('a', 'b'\\)"):
        task_groups(["x", "y", "x"], ["a", "", "b"])


def test_vectorised_cells_equal_a_groupby_reference() -> None:
    rng = np.random.default_rng(11)
    n = 4000
    raw = pd.DataFrame(
        {
            "system": rng.choice(["A", "B", "C"], n),
            "task": rng.choice([f"t{i}" for i in range(300)], n),
            "outcome": rng.integers(0, 5, n) / 4,
            "attempt": rng.integers(0, 6, n),
            "cost_usd": np.where(rng.random(n) < 0.1, np.nan, rng.random(n)),
            "elapsed_s": rng.random(n) * 10,
            "status": rng.choice(["final", "final", "final", "pending"], n),
        }
    )
    raw = raw.drop_duplicates(["system", "task", "attempt"])
    raw.loc[raw["status"] == "pending", "outcome"] = np.nan
    rows = outcome_columns(raw).to_frame()
    cells = outcome_cells(rows)
    # reference: the pandas groupby (with per-group lambdas) the pairing used before
    final = rows[rows["status"] == "final"]
    reference = final.groupby(["system", "task"]).agg(
        outcome=("outcome", "mean"),
        attempts=("outcome", "size"),
        cost=("cost_usd", lambda s: s.sum(min_count=len(s))),
        elapsed=("elapsed_s", lambda s: s.sum(min_count=len(s))),
    )
    s = cells.systems.searchsorted(reference.index.get_level_values(0))
    t = cells.tasks.searchsorted(reference.index.get_level_values(1))
    np.testing.assert_allclose(cells.outcome[s, t], reference["outcome"], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(cells.attempts[s, t], reference["attempts"])
    np.testing.assert_allclose(cells.cost[s, t], reference["cost"], rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(cells.elapsed[s, t], reference["elapsed"], rtol=1e-12)
    assert int(cells.attempts.sum()) == len(final)
    assert {e.reason: e.rows for e in cells.excluded} == {"status pending (policy uses final)": int((rows["status"] == "pending").sum())}
    paired = pair_outcomes(rows, "A", "B")
    both = pd.merge(
        reference.xs("A", level="system")[["outcome"]],
        reference.xs("B", level="system")[["outcome"]],
        left_index=True,
        right_index=True,
        suffixes=("_a", "_b"),
    )
    assert paired.tasks.tolist() == both.index.tolist()
    np.testing.assert_allclose(paired.differences, both["outcome_a"] - both["outcome_b"], atol=1e-12)


def test_the_order_command_and_the_decision_layer_do_not_import_replay() -> None:
    root = Path(stopwise.__file__).parent
    for path in [*sorted((root / "compare").glob("*.py")), root / "cli" / "compare.py"]:
        tree = ast.parse(path.read_text())
        imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if m.startswith("stopwise.replay")], path
