"""Issue 33: ``stopwise next`` and the followers print the tasks to run next, top-up first.

A ledger evaluation under the default policy with betting-wor: A wins every task of group "a", the boundary crosses
before any task of the small group "b" is run, and the record waits for one top-up task (the first "b" of pi), which
``stopwise next``, :func:`stopwise.live.follow` and ``stopwise watch`` all name first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from stopwise import Policy
from stopwise.cli.main import main
from stopwise.compare import order_universe, task_order
from stopwise.ledger import open_ledger
from stopwise.live import follow

N = 40
BETTING = Policy.model_validate({"decision": {"boundary": "betting-wor"}})


@pytest.fixture
def evaluation(tmp_path: Path) -> dict[str, object]:
    tasks = pd.DataFrame({"task": [f"t{i:02d}" for i in range(N)], "group": ["a"] * 36 + ["b"] * 4})
    order = task_order(tasks, BETTING)
    order_path = tmp_path / "order.csv"
    order.to_csv(order_path, index=False)
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text('[decision]\nboundary = "betting-wor"\n', encoding="utf-8")
    pi = order["task"].tolist()
    group = dict(zip(order["task"], order["group"], strict=True))
    first_b = next(t for t in pi if group[t] == "b")
    prefix = pi[: pi.index(first_b)]
    rows = pd.DataFrame(
        [{"system": s, "task": t, "outcome": int(s == "A"), "group": group[t]} for t in prefix for s in ("A", "B")]
    )
    rows_path = tmp_path / "rows.csv"
    rows.to_csv(rows_path, index=False)
    db = tmp_path / "ledger.db"
    with open_ledger(db) as ledger:
        ledger.register("ev", policy=BETTING, universe=order_universe(order), tested="A", baseline="B")
        ledger.append("ev", rows)
    return {"order": order_path, "policy": policy_path, "rows": rows_path, "db": db, "pi": pi, "first_b": first_b, "prefix": prefix}


def test_stopwise_next_names_the_top_up_first_from_files_and_from_a_ledger(evaluation: dict, capsys: pytest.CaptureFixture[str]) -> None:
    assert len(evaluation["prefix"]) >= 6  # the boundary has crossed on A's wins before the first "b" task
    files = [str(evaluation["rows"]), "-t", "A", "-b", "B", "--tasks", str(evaluation["order"]), "-p", str(evaluation["policy"])]
    assert main(["next", *files, "-n", "2", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    later = [t for t in evaluation["pi"][len(evaluation["prefix"]) :] if t != evaluation["first_b"]]
    assert answer["action"] == "continue" and [t["task"] for t in answer["tasks"]] == [evaluation["first_b"], later[0]]
    assert [t["why"] for t in answer["tasks"]] == ["top-up", "planned order"] and answer["tasks"][0]["systems"] == ["A", "B"]
    assert answer["remaining"] == N - len(evaluation["prefix"]) and "top-up" in answer["note"]
    assert main(["next", "--ledger", str(evaluation["db"]), "--evaluation", "ev", "-n", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == answer  # the ledger's rows, registered policy and order: the same list
    assert main(["next", *files, "-n", "1"]) == 0
    out = capsys.readouterr().out
    assert f"1  {evaluation['first_b']}" not in out and evaluation["first_b"] in out and "(-n to show more)" in out
    # before any row: the planned order from its start
    assert main(["next", "-t", "A", "-b", "B", "--tasks", str(evaluation["order"]), "-n", "3", "--json"]) == 0
    assert [t["task"] for t in json.loads(capsys.readouterr().out)["tasks"]] == evaluation["pi"][:3]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["-t", "A", "-b", "B"], "give the planned order"),
        (["--tasks", "ORDER"], "give the compared systems"),
        (["--ledger", "DB"], "both --ledger URL and --evaluation"),
        (["--ledger", "DB", "--evaluation", "ev", "-t", "A"], "--tested do not apply"),
        (["--ledger", "DB", "--evaluation", "nope"], "not registered"),
    ],
)
def test_stopwise_next_refuses_bad_input_with_exit_4(evaluation: dict, arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    replaced = [str(evaluation["order"]) if a == "ORDER" else str(evaluation["db"]) if a == "DB" else a for a in arguments]
    assert main(["next", *replaced]) == 4
    assert message in capsys.readouterr().err


def test_the_ledger_follower_and_watch_print_the_next_tasks(evaluation: dict, capsys: pytest.CaptureFixture[str]) -> None:
    with open_ledger(evaluation["db"]) as ledger:
        look = next(follow(ledger, "ev", timeout=0, record=False, n_next=3))
    assert look.record is not None and look.record.action == "continue" and look.record.top_up == [evaluation["first_b"]]
    assert look.next is not None and look.next.names[0] == evaluation["first_b"] and len(look.next.tasks) == 3
    assert look.next.tasks[0].why == "top-up" and look.next.lines()[1].startswith(f"  {evaluation['pi'].index(evaluation['first_b']) + 1}  ")
    with open_ledger(evaluation["db"]) as ledger:
        assert next(follow(ledger, "ev", timeout=0, record=False, n_next=0)).next is None
    assert main(["watch", str(evaluation["db"]), "ev", "--once", "--no-record"]) == 2
    out = capsys.readouterr().out
    assert "next tasks" in out and evaluation["first_b"] in out and "top-up" in out
