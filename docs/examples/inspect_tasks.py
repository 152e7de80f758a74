"""A task file for the ``inspect eval`` command line: two systems, one paired comparison (runs offline).

    inspect eval inspect_tasks.py@tested inspect_tasks.py@baseline --max-tasks 2 \\
        -T ledger=sqlite:///ledger.db -T evaluation=arith-cli

Inspect loads this file once per task; ``paired_manager`` keeps the comparison in stopwise, keyed by
the ledger and the evaluation given with ``-T``, so both tasks share it. The questions and the mock
systems are those of ``inspect_live.py`` (beside this file).
"""

import importlib.util
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.scorer import match
from inspect_ai.solver import generate

import stopwise
from stopwise.inspect import paired_manager, planned_order
from stopwise.records import parse_policy

_spec = importlib.util.spec_from_file_location("inspect_live", Path(__file__).with_name("inspect_live.py"))
assert _spec is not None and _spec.loader is not None
live = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live)


def system_task(role: str, ledger: str, evaluation: str, policy: str | None) -> Task:
    rules = stopwise.load_policy(policy) if policy else parse_policy(live.POLICY_TOML)
    dataset, universe = planned_order(live.questions(200), rules, group="group")
    return Task(
        dataset=dataset, solver=generate(), scorer=match(), name=role,
        model=live.mock_system(role, 0.90 if role == "tested" else 0.55),
        early_stopping=paired_manager(ledger, evaluation, role, tested="tested", baseline="baseline",
                                      policy=rules, universe=universe),
    )


@task
def tested(ledger: str = "sqlite:///ledger.db", evaluation: str = "arith-cli", policy: str | None = None) -> Task:
    return system_task("tested", ledger, evaluation, policy)


@task
def baseline(ledger: str = "sqlite:///ledger.db", evaluation: str = "arith-cli", policy: str | None = None) -> Task:
    return system_task("baseline", ledger, evaluation, policy)
