"""The next tasks (issue 33): a harness that runs them in order stops where the live-look replay stops.

The replay's stop of the top-up design on an order pi (``stopwise.replay.replay_source_looks``): the pooled betting
process crosses at look tau (the first look at which either capital reaches 1/a; a promote when both cross
together), and the action comes when the crossing's top-up ends, ``top_up_ends(codes along pi)[tau - 1]``. Here a
harness loop runs ``next_tasks``'s first task, decides, and repeats, on a real record (SWE-bench Verified).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.conftest import shared_path

from stopwise import ComparisonError, Policy, TaskUniverse
from stopwise.compare import betting_paths, decide, in_order_ends, next_tasks, order_universe, task_order, top_up_ends
from stopwise.records import OutcomeColumns, outcome_columns, read_outcomes

DEFAULT = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
PROPORTIONAL = Policy.model_validate({"decision": {"boundary": "betting-wor"}, "coverage": {"rule": "proportional"}})


def _replayed_stop(x: np.ndarray, codes: np.ndarray, sizes: np.ndarray, policy: Policy, ending=top_up_ends) -> tuple[str, int, int]:  # type: ignore[no-untyped-def]
    """(action, crossing look tau, stop) of the replay's design on one order (the replay's own vectorised pieces)."""
    promote, reject = betting_paths(x[None, :], policy.threshold, population_size=len(x), alpha=policy.tail_cutoff).crossed(policy.tail_cutoff)
    either = promote[0] | reject[0]
    assert either.any()
    tau = int(np.argmax(either)) + 1
    ends = ending(codes[None, :], sizes, rule=policy.coverage.rule, slack=policy.coverage.slack)
    return ("promote" if promote[0, tau - 1] else "reject"), tau, int(ends[0, tau - 1])


def _harness(pair_rows: OutcomeColumns, tested: str, baseline: str, policy: Policy, universe: TaskUniverse, *, skip: bool) -> tuple[str, int]:
    """Run next_tasks's first task (``skip``) or the planned order, deciding after each task; (action, tasks run)."""
    task_of_row = pair_rows.task
    run: list[str] = []
    while True:
        rows = pair_rows.take(np.isin(task_of_row, run)) if run else None
        if skip:
            answer = next_tasks(rows, tested, baseline, policy, universe=universe, n=1)
            record = answer.record
        else:
            record = None if rows is None else decide(rows, tested, baseline, policy, universe=universe, forecast=False)
        if record is not None and record.action != "continue":
            assert record.n_observed == len(run) and record.coverage.satisfied
            return record.action, len(run)
        run.append(answer.tasks[0].task if skip else str(universe.tasks[len(run)]))  # type: ignore[index]


@pytest.mark.data
@pytest.mark.parametrize("policy", [DEFAULT, PROPORTIONAL], ids=["tolerant", "proportional"])
def test_a_harness_running_next_stops_where_the_replay_stops(policy: Policy) -> None:
    rows = read_outcomes(shared_path("records", "swebench_verified", "outcomes.csv"))
    frame = rows.to_frame()
    tasks = frame.drop_duplicates("task")[["task", "group"]]
    universe = order_universe(task_order(tasks, policy))  # stamped: the seeded uniform permutation pi
    pi, groups = universe.tasks, universe.groups
    _, codes = np.unique(groups, return_inverse=True)
    sizes = np.bincount(codes)
    table = frame.pivot_table(index="task", columns="system", values="outcome").loc[pi]
    systems = sorted(table.columns)
    rng = np.random.default_rng(33)
    checked = topped = 0
    for i, j in rng.choice(len(systems), size=(40, 2)):
        if i == j:
            continue
        tested, baseline = systems[i], systems[j]
        x = (table[tested] - table[baseline]).to_numpy()
        if not (np.abs(x) > 0).any():
            continue
        action, tau, stop = _replayed_stop(x, codes, sizes, policy)
        if stop > 150:  # keep the loop short: the early crossings are the ones the top-up decides
            continue
        pair_rows = rows.take(np.isin(rows.system, [tested, baseline]))
        assert _harness(pair_rows, tested, baseline, policy, universe, skip=True) == (action, stop)
        checked += 1
        topped += stop > tau
        if checked == 6:
            break
    assert checked == 6 and topped >= 2  # several pairs needed a top-up after their crossing


@pytest.mark.data
def test_a_harness_running_the_planned_order_waits_for_the_top_up_where_it_lies() -> None:
    """The same loop without ``next``: the action comes at in_order_ends (much later: the docs' in-order figure)."""
    rows = read_outcomes(shared_path("records", "swebench_verified", "outcomes.csv"))
    frame = rows.to_frame()
    universe = order_universe(task_order(frame.drop_duplicates("task")[["task", "group"]], DEFAULT))
    pi = universe.tasks
    _, codes = np.unique(universe.groups, return_inverse=True)
    table = frame.pivot_table(index="task", columns="system", values="outcome").loc[pi]
    tested, baseline = "20240620_sweagent_claude3.5sonnet", "20231010_rag_swellama7b"
    x = (table[tested] - table[baseline]).to_numpy()
    action, _, design = _replayed_stop(x, codes, np.bincount(codes), DEFAULT)
    _, _, in_order = _replayed_stop(x, codes, np.bincount(codes), DEFAULT, ending=in_order_ends)
    assert in_order > design + 50  # the single task of a small group lies far down pi
    pair_rows = rows.take(np.isin(rows.system, [tested, baseline]))
    assert _harness(pair_rows, tested, baseline, DEFAULT, universe, skip=False) == (action, in_order)


def _rows(results: dict[str, tuple[float, float]], groups: dict[str, str]) -> pd.DataFrame:
    made = []
    for task, (a, b) in results.items():
        made += [{"system": "A", "task": task, "outcome": a, "group": groups[task]}, {"system": "B", "task": task, "outcome": b, "group": groups[task]}]
    return outcome_columns(made).to_frame()


def test_next_lists_top_up_first_then_the_planned_order_and_nothing_once_decided() -> None:
    names = [f"t{i:02d}" for i in range(40)]
    group_of = {t: ("a" if i < 36 else "b") for i, t in enumerate(names)}
    universe = order_universe(task_order(pd.DataFrame({"task": names, "group": [group_of[t] for t in names]}), DEFAULT))
    pi = universe.tasks.tolist()
    a_first = [t for t in pi if group_of[t] == "a"]
    b_first = [t for t in pi if group_of[t] == "b"]
    # A wins every "a" task of pi's prefix: the boundary crosses before any "b" task is run
    prefix = pi[: pi.index(b_first[0])]
    assert len(prefix) >= 6
    won = {t: (1.0, 0.0) for t in prefix}
    answer = next_tasks(_rows(won, group_of), "A", "B", DEFAULT, universe=universe, n=3)
    record = answer.record
    assert record is not None and record.action == "continue" and record.top_up == [b_first[0]]
    assert answer.names == [b_first[0], *[t for t in pi[len(prefix) :] if t != b_first[0]][:2]]
    assert [t.why for t in answer.tasks] == ["top-up", "planned order", "planned order"]
    assert answer.tasks[0].position == pi.index(b_first[0]) + 1 and answer.tasks[0].group == "b"
    assert "top-up" in answer.note and answer.remaining == 40 - len(prefix)
    assert record.coverage.missing_groups == ["b"]  # the coverage section names the same needed tasks' group
    # the top-up run: decided, nothing more to run
    won[b_first[0]] = (1.0, 1.0)
    done = next_tasks(_rows(won, group_of), "A", "B", DEFAULT, universe=universe)
    assert done.record is not None and done.record.action == "promote" and done.tasks == [] and done.remaining == 0
    assert a_first[0] in prefix and done.to_dict()["action"] == "promote"


def test_next_names_the_systems_still_to_run_and_stops_at_the_budget_limit() -> None:
    names = [f"t{i:02d}" for i in range(20)]
    group_of = dict.fromkeys(names, "g")
    policy = Policy.model_validate({"budget": {"limit": 0.25}})  # fixed-budget: 5 tasks
    universe = order_universe(task_order(pd.DataFrame({"task": names, "group": "g"}), policy))
    pi = universe.tasks.tolist()
    half = pd.concat([_rows({pi[0]: (1.0, 0.0)}, group_of), pd.DataFrame([{"system": "A", "task": pi[1], "outcome": 1.0, "group": "g"}])])
    answer = next_tasks(half, "A", "B", policy, universe=universe, n=None)
    assert answer.names == pi[1:5] and answer.tasks[0].systems == ("B",) and answer.tasks[1].systems == ("A", "B")
    assert "budget limit, 5 tasks" in answer.note


def test_next_retries_a_missing_outcome_the_prefix_waits_for() -> None:
    names = [f"t{i:02d}" for i in range(30)]
    group_of = dict.fromkeys(names, "g")
    wait = Policy.model_validate({"decision": {"boundary": "betting-wor", "missing": "wait"}})
    universe = order_universe(task_order(pd.DataFrame({"task": names, "group": "g"}), wait))
    pi = universe.tasks.tolist()
    frame = _rows({t: (1.0, 0.0) for t in pi[:3]}, group_of)
    errored = pd.DataFrame([{"system": "A", "task": pi[1], "outcome": None, "status": "pending", "flags": "error", "group": "g"}])
    frame = pd.concat([frame[frame["task"] != pi[1]], errored, frame[(frame["task"] == pi[1]) & (frame["system"] == "B")]], ignore_index=True)
    answer = next_tasks(frame, "A", "B", wait, universe=universe, n=2)
    assert answer.names == [pi[1], pi[3]] and answer.tasks[0].why == "retry" and answer.tasks[0].systems == ("A",)


def test_next_needs_the_planned_order_and_a_count() -> None:
    rows = _rows({"t0": (1.0, 0.0)}, {"t0": "g"})
    with pytest.raises(ComparisonError, match="planned task order"):
        next_tasks(rows, "A", "B", universe=TaskUniverse.from_counts(10))  # type: ignore[arg-type]
    with pytest.raises(ComparisonError, match="`n`"):
        next_tasks(rows, "A", "B", universe=TaskUniverse(["t0", "t1"]), n=0)
    with pytest.raises(ComparisonError, match="different systems"):
        next_tasks(rows, "A", "A", universe=TaskUniverse(["t0", "t1"]))
