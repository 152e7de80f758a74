"""Issue 37, memory bounded before parsing: a JSON document's size and values are checked before it is parsed,
the decide forecast and the order's coverage tables no longer grow with the planned tasks times anything.

Reference values come from independent computations written here: the values of a parsed document counted by
walking it, and the coverage tables of the (N, G) formulas the old code used (``required_counts`` per prefix)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stopwise._limits as limits
from stopwise import Policy
from stopwise.compare import _forecast as forecast
from stopwise.compare import required_counts
from stopwise.compare._orders import coverage_deadlines
from stopwise.compare._plan import covered_prefixes
from stopwise.errors import LimitError

from .conftest import Run, refused, run_limited


def _walk_count(value: Any) -> int:
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        stack.extend(item.values() if isinstance(item, dict) else item if isinstance(item, list) else [])
    return count


def _document(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.4:
        return rng.choice([1, -2.5, None, True, "a,b", 'q"x,[{', "\\", '\\"', "\\\\\\\"", "é,]", "", "[]", "{}"])
    if roll < 0.7:
        return [_document(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["k,", "[", '"', "\\", "x"]) + str(i): _document(rng, depth + 1) for i in range(rng.randint(0, 4))}


@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 21])
def test_the_value_count_of_a_document_equals_the_parsed_count(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact on valid JSON, whatever the block boundaries cut (inside a string, an escape, between [ and ])."""
    monkeypatch.setattr(limits, "_SCAN_CHUNK", block)
    rng = random.Random(block)
    for _ in range(400):
        value = _document(rng)
        text = json.dumps(value, indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5)
        assert limits.count_json_values(text) == _walk_count(value), text
        assert limits.count_json_values(text.encode()) == _walk_count(value)


def test_a_document_past_the_value_limit_is_refused_without_being_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOPWISE_MAX_NODES", "1000")
    inside, past = json.dumps(list(range(999))), json.dumps(list(range(1000)))  # 1 + 999 and 1 + 1000 values
    assert len(limits.json_loads(inside, "doc")) == 999

    def parse(*args: object, **kwargs: object) -> object:
        raise AssertionError("parsed")

    monkeypatch.setattr(limits.json, "loads", parse)
    with pytest.raises(LimitError, match=r"doc: holds more than 1,000 values \(STOPWISE_MAX_NODES"):
        limits.json_loads(past, "doc")


def test_a_json_file_past_the_byte_cap_is_refused_before_it_is_read(tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    report = tmp_path / "model.run1.json"
    report.write_text(json.dumps({"resolved_ids": [f"django__django-{i}" for i in range(100)], "unresolved_ids": []}))
    monkeypatch.setenv("STOPWISE_MAX_DECOMPRESSED_BYTES", "1000")
    refused(run("ingest", report, "-o", "-"), str(report), f"{report.stat().st_size:,} bytes", "past the limit of 1,000 bytes")
    with pytest.raises(LimitError, match="past the limit of 1,000 bytes"):
        limits.json_loads(" " * 1001, "doc")


def test_the_forecast_in_blocks_draws_what_one_array_drew(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    d = rng.choice([1.0, 0.0, -1.0], p=[0.3, 0.5, 0.2], size=40)
    policies = [Policy.model_validate({"decision": {"boundary": "betting-wor"}}), Policy(), Policy(tail_method="exact-wor")]
    whole = [forecast.remaining_forecast(d, policy=p, population_size=600, limit_tasks=300) for p in policies]
    monkeypatch.setattr(forecast, "_BLOCK_DRAWS", 7)  # one completion a block
    assert [forecast.remaining_forecast(d, policy=p, population_size=600, limit_tasks=300) for p in policies] == whole


def test_the_forecast_simulates_fewer_completions_past_its_cap_and_none_far_past(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forecast, "FORECAST_MAX_DRAWS", 50_000)
    d = np.array([1.0, 0.0, -1.0, 1.0] * 10)
    betting = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
    reduced = forecast.remaining_forecast(d, policy=betting, population_size=1040, limit_tasks=1040)
    assert reduced is not None and reduced.n_simulations == 50  # 50,000 // 1,000 remaining tasks
    assert forecast.remaining_forecast(d, policy=betting, population_size=10_040, limit_tasks=10_040) is None  # 5 < 20 fit


def _dense_covered(codes: np.ndarray) -> np.ndarray:
    seen = np.cumsum(np.eye(codes.max() + 1, dtype=np.int64)[codes], axis=0)
    k = np.arange(1, len(codes) + 1)
    required = required_counts(np.bincount(codes), k)
    return (required.sum(axis=1) <= k) & (seen >= required).all(axis=1)


def _dense_deadlines(sizes: np.ndarray) -> np.ndarray:
    n = int(sizes.sum())
    k = np.arange(1, n + 1)
    required = required_counts(sizes, k)
    binding = np.maximum.accumulate(np.where((required.sum(axis=1) <= k)[:, None], required, 0), axis=0)
    deadlines = np.full((len(sizes), int(sizes.max())), n + 1, dtype=np.int64)
    for g, size in enumerate(sizes):
        deadlines[g, :size] = np.searchsorted(binding[:, g], np.arange(1, size + 1), side="left") + 1
    return np.minimum(deadlines, n + 1)


def test_coverage_tables_in_linear_memory_equal_the_n_by_g_formulas() -> None:
    rng = np.random.default_rng(11)
    for _ in range(1500):
        n = int(rng.integers(1, 50))
        _, codes = np.unique(rng.integers(0, int(rng.integers(1, min(n, 9) + 1)), n), return_inverse=True)
        assert covered_prefixes(codes).tolist() == _dense_covered(codes).tolist(), codes
        sizes = np.bincount(codes)
        assert coverage_deadlines(sizes).tolist() == _dense_deadlines(sizes).tolist(), sizes


def test_a_ten_million_task_universe_decides_within_1_gib(tmp_path: Path) -> None:
    rows = tmp_path / "o.csv"
    rows.write_text("system,task,outcome,group\n" + "".join(f"{s},t{i},{(i + (s == 'A')) % 2},{'g1' if i < 6 else 'g2'}\n" for i in range(12) for s in "AB"))
    done = run_limited("decide", rows, "-t", "A", "-b", "B", "--n-tasks", "10000000", "--group-size", "g1=9999990",
                       "--group-size", "g2=10", cwd=tmp_path, cap_gib=1)
    assert done.returncode == 2, done.stderr  # continue (before: 3.7 GiB forecast arrays, internal error)
    assert "10000000 planned tasks" in done.stdout


def test_an_order_of_tasks_each_in_its_own_group_runs_within_1_gib(tmp_path: Path) -> None:
    n = 30_000  # the (N, G) tables took 7.2 GB each
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("task,group\n" + "".join(f"t{i},g{i}\n" for i in range(n)))
    done = run_limited("order", tasks, "-o", tmp_path / "order.csv", cwd=tmp_path, cap_gib=1)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "order.csv").read_text().splitlines()
    assert len(lines) == n + 1 and lines[-1].split(",")[3] == "True" and lines[-2].split(",")[3] == "False"


@pytest.mark.slow
def test_a_run_report_at_the_value_limit_is_ingested_within_1_gib(tmp_path: Path) -> None:
    """999,990 ids (with the object and its two lists, 999,993 values of the 1,000,000 allowed), read whole under a
    1 GiB address-space cap: it peaked at 1.6 GiB while every row was held as a mapping before becoming columns."""
    n = 999_990
    ids = [f"django__django-{i:016d}" for i in range(n)]
    report = tmp_path / "model.run1.json"
    report.write_text(json.dumps({"resolved_ids": ids[: n // 2], "unresolved_ids": ids[n // 2 :]}))
    done = run_limited("ingest", report, "-o", tmp_path / "rows.csv", cwd=tmp_path, cap_gib=1)
    assert done.returncode == 0, done.stderr
    cells = [line.split(",") for line in (tmp_path / "rows.csv").read_text().splitlines()[1:]]
    assert [c[1] for c in cells] == ids  # every id once, in task order (the ids are written sorted)
    assert [c[2] for c in cells] == ["1.0"] * (n // 2) + ["0.0"] * (n - n // 2)
    assert {(c[0], c[3]) for c in cells} == {("model", "django/django")}
