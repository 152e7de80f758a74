"""``eval(task, model=[tested, baseline])`` with one manager that routes each call to the active model's system (issue 20)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import stopwise
from stopwise.errors import InputError
from stopwise.inspect import paired_model_early_stopping, planned_order
from stopwise.ledger import open_ledger


def _run(example: ModuleType, tmp_path: Path, models: list[Any], manager: Any, dataset: Any) -> dict[str, Any]:
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    task = Task(dataset=dataset, solver=generate(), scorer=match(), early_stopping=manager, name="arith")
    logs = eval(task, model=models, max_tasks=2, max_samples=4, display="none", log_dir=str(tmp_path / "logs"))
    return {(log.results.early_stopping.metadata["system"] if log.results else str(i)): log for i, log in enumerate(logs)}


def test_one_task_run_for_two_models_decides_and_stops_both(example: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "policy.toml").write_text(example.POLICY_TOML)
    policy = stopwise.load_policy(tmp_path / "policy.toml")
    dataset, universe = planned_order(example.questions(200), policy, group="group")
    # two mockllm/model objects: one name, told apart by identity; their rows are named by `systems`
    tested, baseline = example.mock_system("tested", 0.9), example.mock_system("baseline", 0.55)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    manager = paired_model_early_stopping(url, "ev", tested=tested, baseline=baseline, systems=("tested", "baseline"),
                                          policy=policy, universe=universe)
    logs = _run(example, tmp_path, [tested, baseline], manager, dataset)
    with open_ledger(url) as ledger:
        first_final = next(link for link in ledger.decisions("ev") if link.record.action != "continue")
        rows = ledger.outcomes("ev")
        assert ledger.verify("ev").ok
    assert first_final.record.action == "promote"
    assert sorted(logs) == ["baseline", "tested"]
    for system, log in logs.items():
        summary = log.results.early_stopping
        assert log.status == "success" and summary.manager == f"stopwise (ev: {system} {system})"
        assert len(log.samples) + len(summary.early_stops) == 200 and len(log.samples) < 100
        assert summary.metadata["decision"] == first_final.record.model_dump(mode="json")
        # each model's samples went to its own system's rows: the scores of the log are the rows of the ledger
        in_log = {(str(s.id), {"C": 1.0, "I": 0.0}[s.scores["match"].value]) for s in log.samples}
        mine = rows[rows["system"] == system]
        assert set(zip(mine["task"], mine["outcome"], strict=True)) == in_log
    # and each row is the answer of the model of its system: the mocks' scripted right/wrong, recomputed
    text = {str(s.id): s.input for s in example.questions(200)}
    accuracy = {"tested": 0.9, "baseline": 0.55}

    def right(system: str, task: str) -> float:
        digest = hashlib.sha256(f"{system}|{text[task]}".encode()).digest()
        return float(int.from_bytes(digest[:8], "big") / 2**64 < accuracy[system])

    assert [right(s, t) for s, t in zip(rows["system"], rows["task"], strict=True)] == rows["outcome"].tolist()


def test_a_model_outside_the_pair_is_an_error(example: ModuleType, tmp_path: Path) -> None:
    manager = paired_model_early_stopping(f"sqlite:///{tmp_path / 'l.db'}", "ev", tested="mockllm/tested",
                                          baseline="mockllm/baseline")
    logs = _run(example, tmp_path, [example.mock_system("x", 1.0)], manager, example.questions(4))
    (log,) = logs.values()
    assert log.status == "error" and "which is neither of the paired models" in log.error.message


def test_two_models_of_one_name_need_system_names(example: ModuleType) -> None:
    a, b = example.mock_system("a", 1.0), example.mock_system("b", 0.0)
    with pytest.raises(InputError, match="have one name, 'mockllm/model': give the system names"):
        paired_model_early_stopping("sqlite:///:memory:", "ev", tested=a, baseline=b)
    with pytest.raises(InputError, match="same Model object"):
        paired_model_early_stopping("sqlite:///:memory:", "ev", tested=a, baseline=a, systems=("A", "B"))
