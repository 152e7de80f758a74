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
from typing import Any

from stopwise.errors import InputError
from stopwise.inspect._ledger import LedgerArgument
from stopwise.inspect._manager import PairedComparison, Role, SystemEarlyStopping
from stopwise.inspect._spec import PairedSpec

__all__ = ["paired_manager"]

_COMPARISONS: dict[tuple[str, str], PairedComparison] = {}
_LOCK = threading.Lock()


_COMPARED = ("tested", "baseline", "policy", "universe", "group", "scorer")
"""What every call for one comparison must give alike (``refresh`` and ``pace`` are the first call's)."""


def _key(ledger: LedgerArgument, evaluation: str) -> tuple[str, str]:
    if isinstance(ledger, str | os.PathLike):
        from stopwise.ledger import ledger_url

        return ledger_url(ledger), evaluation
    return f"object:{id(ledger)}", evaluation


def _differences(have: PairedSpec, wanted: PairedSpec) -> list[str]:
    """The fields of ``wanted`` that differ from those the registered comparison was built with."""
    return [
        f"{name} {getattr(have, name)!r:.80} != {getattr(wanted, name)!r:.80}"
        for name in _COMPARED
        if getattr(have, name) != getattr(wanted, name)
    ]


def paired_manager(ledger: LedgerArgument, spec: PairedSpec | str, role: Role, /, **fields: Any) -> SystemEarlyStopping:
    """The early-stopping manager of one system, from the process's comparison for (ledger, evaluation).

    The first call for a ledger and evaluation builds the comparison (as
    :func:`paired_early_stopping`); later calls, from the other task of the run or another load of
    the task file, get the manager of their role on the same comparison. A comparison whose ledger
    failed, or whose two tasks have both ended, is replaced by a new one (its state is in the ledger).

    Parameters
    ----------
    ledger : str, path or Ledger
        A database URL (``"sqlite:///ledger.db"``, ``"postgresql+psycopg://..."``) or an opened ledger.
    spec : PairedSpec or str
        What is compared; or the evaluation id, with the other fields of :class:`PairedSpec` as keywords.
        Every call for one comparison must give the same ``tested``, ``baseline``, ``policy``,
        ``universe``, ``group`` and ``scorer``.
    role : {"tested", "baseline"}
        Which system's manager to return.
    **fields
        With an evaluation id: ``tested`` and ``baseline`` (required), ``policy``, ``universe``,
        ``group``, ``scorer``, ``refresh``, ``pace``.

    Returns
    -------
    SystemEarlyStopping

    Raises
    ------
    InputError
        A bad role, or a spec that differs from the one the comparison was built with.

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
    wanted = PairedSpec.of(spec, **fields)
    key = _key(ledger, wanted.evaluation)
    with _LOCK:
        comparison = _COMPARISONS.get(key)
        if comparison is not None and (comparison.error is not None or comparison.ended):
            comparison = None  # a new run: the pairing state is in the ledger
        if comparison is None:
            comparison = _COMPARISONS[key] = PairedComparison(ledger, wanted)
        else:
            different = _differences(comparison.spec, wanted)
            if different:
                raise InputError(
                    f"paired_manager({key[0]!r}, {wanted.evaluation!r}, {role!r}): the comparison of this ledger and "
                    f"evaluation was built with other arguments: {'; '.join(different)}; give both tasks the same "
                    "arguments (or use another evaluation id)"
                )
    return SystemEarlyStopping(comparison, role)
