"""One paired comparison per (ledger, evaluation) in a process: a task file builds its manager in one line.

``inspect eval tasks.py@tested tasks.py@baseline -T ledger=... -T evaluation=...`` loads the task file
once per task, so state kept in the task module is not shared between the two tasks. The
comparison is kept here instead, keyed by the ledger URL and the evaluation id: the second task of
the run finds the comparison the first one made (one ``PairedComparison``, paced and told in this
process), whichever task file or module built it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from stopwise.errors import InputError
from stopwise.inspect._manager import PairedComparison, Role, SystemEarlyStopping, _policy_iv, _universe_tasks
from stopwise.records import Policy, TaskUniverse

__all__ = ["paired_manager"]

_COMPARISONS: dict[tuple[str, str], PairedComparison] = {}
_LOCK = threading.Lock()


def _key(ledger: Any, evaluation: str) -> tuple[str, str]:
    if isinstance(ledger, str | os.PathLike):
        from stopwise.ledger import ledger_url

        return ledger_url(ledger), evaluation
    return f"object:{id(ledger)}", evaluation


def _differences(comparison: PairedComparison, wanted: dict[str, Any]) -> list[str]:
    """The arguments that differ from those the registered comparison was built with."""
    have = {
        "tested": comparison.tested,
        "baseline": comparison.baseline,
        "policy": comparison.policy,
        "universe": comparison._given,
        "group": comparison.group,
        "scorer": comparison.scorer_arg,
    }
    return [f"{name} {have[name]!r:.80} != {value!r:.80}" for name, value in wanted.items() if have[name] != value]


def paired_manager(
    ledger: Any,
    evaluation: str,
    role: Role,
    *,
    tested: str,
    baseline: str,
    policy: Policy | str | os.PathLike[str] | None = None,
    universe: TaskUniverse | Sequence[str] | None = None,
    group: str | None = None,
    scorer: str | None = None,
    refresh: float = 1.0,
    pace: int | None = 2,
) -> SystemEarlyStopping:
    """The early-stopping manager of one system, from the process's comparison for (ledger, evaluation).

    The first call for a ledger and evaluation builds the comparison (as
    :func:`paired_early_stopping`); later calls, from the other task of the run or another load of
    the task file, get the manager of their role on the same comparison. A comparison whose ledger
    failed, or whose two tasks have both ended, is replaced by a new one (its state is in the ledger).

    Parameters
    ----------
    ledger : str or ledger
        A database URL (``"sqlite:///ledger.db"``, ``"postgresql+psycopg://..."``) or an opened ledger.
    evaluation : str
        The evaluation id in the ledger.
    role : {"tested", "baseline"}
        Which system's manager to return.
    tested, baseline, policy, universe, group, scorer, refresh, pace
        As for :func:`paired_early_stopping`; every call for one comparison must give the same
        ``tested``, ``baseline``, ``policy``, ``universe``, ``group`` and ``scorer``.

    Returns
    -------
    SystemEarlyStopping

    Raises
    ------
    InputError
        A bad role, or arguments that differ from those the comparison was built with.

    Examples
    --------
    In a task file (``inspect eval tasks.py@tested tasks.py@baseline --max-tasks 2 -T ledger=...``)::

        @task
        def tested(ledger: str = "sqlite:///ledger.db", evaluation: str = "my-eval") -> Task:
            return Task(dataset=dataset, solver=agent_v2(), scorer=scorer, name="tested",
                        early_stopping=paired_manager(ledger, evaluation, "tested", tested="tested", baseline="baseline"))

    >>> from stopwise.inspect import paired_manager
    >>> a = paired_manager("sqlite:///:memory:", "demo", "tested", tested="A", baseline="B")
    >>> b = paired_manager("sqlite:///:memory:", "demo", "baseline", tested="A", baseline="B")
    >>> a.comparison is b.comparison, b.system
    (True, 'B')
    """
    if role not in ("tested", "baseline"):
        raise InputError(f"`role` must be 'tested' or 'baseline'; got {role!r}")
    if not isinstance(evaluation, str) or not evaluation.strip():
        raise InputError(f"`evaluation` must be a non-empty id; got {evaluation!r}")
    key = _key(ledger, evaluation)
    with _LOCK:
        comparison = _COMPARISONS.get(key)
        if comparison is not None and (comparison.error is not None or comparison.ended):
            comparison = None  # a new run: the pairing state is in the ledger
        if comparison is None:
            comparison = PairedComparison(ledger, evaluation, tested=tested, baseline=baseline, policy=policy,
                                          universe=universe, group=group, scorer=scorer, refresh=refresh, pace=pace)
            _COMPARISONS[key] = comparison
        else:
            wanted = {"tested": tested, "baseline": baseline, "policy": _policy_iv(policy),
                      "universe": None if universe is None else _universe_tasks(universe), "group": group,
                      "scorer": scorer}
            different = _differences(comparison, wanted)
            if different:
                raise InputError(
                    f"paired_manager({key[0]!r}, {evaluation!r}, {role!r}): the comparison of this ledger and "
                    f"evaluation was built with other arguments: {'; '.join(different)}; give both tasks the same "
                    "arguments (or use another evaluation id)"
                )
    return SystemEarlyStopping(comparison, role)
