"""From checked runs to outcome rows: the link between finality and the decision layer."""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from stopwise.errors import InputError
from stopwise.finality._check import RunCheck
from stopwise.records import outcome_columns

__all__ = ["finality_rows"]


def finality_rows(checks: Iterable[RunCheck], *, source: str | None = None) -> pd.DataFrame:
    """Outcome rows for checked runs: a final label enters as ``final``, anything else as ``pending``.

    An unresolved or bounded run has no final label, so its row is ``pending`` with a blank
    outcome (:func:`stopwise.compare.decide` excludes it and counts it in ``record.excluded``).
    Runs grouped by the checker share a ``unit`` value, so pairing and resampling treat them as
    one cluster; a separate run leaves ``unit`` blank (the task is its own unit).

    Parameters
    ----------
    checks : iterable of RunCheck
        Verdicts from :func:`check_runs`.
    source : str, optional
        The ``source`` column (default ``finality:<argument name>``).

    Returns
    -------
    pandas.DataFrame
        Validated outcome rows (:data:`stopwise.records.OUTCOME_COLUMNS`), one per run.

    Raises
    ------
    InputError
        ``checks`` is empty.

    Examples
    --------
    >>> from stopwise.finality import check_runs, example_argument, finality_rows
    >>> checks = check_runs(example_argument("grouped-analysis"), [
    ...     dict(run="a1", system="A", task="t1", outcome=1, environment="pair-1"),
    ...     dict(run="b1", system="B", task="t1", outcome=0, environment="pair-1")])
    >>> finality_rows(checks)[["system", "task", "outcome", "status", "unit"]]
      system task  outcome status     unit
    0      A   t1      1.0  final  unit:a1
    1      B   t1      0.0  final  unit:a1
    >>> checks = check_runs(example_argument("async-no-reconciliation"),
    ...                     [dict(run="a1", system="A", task="t1", outcome=0)])
    >>> finality_rows(checks)[["outcome", "status", "source"]]
       outcome   status                            source
    0      NaN  pending  finality:async-no-reconciliation
    """
    items = list(checks)
    if not items:
        raise InputError("finality_rows needs at least one checked run")
    bad = [type(c).__name__ for c in items if not isinstance(c, RunCheck)]
    if bad:
        raise InputError(f"finality_rows takes RunCheck objects from check_runs; got {bad[0]}")
    rows = [
        {
            "system": c.system,
            "task": c.task,
            "outcome": c.outcome if c.label == "final" else math.nan,
            "group": c.group,
            "attempt": c.attempt,
            "status": "final" if c.label == "final" else "pending",
            "source": source if source is not None else f"finality:{c.argument}",
            "unit": c.unit_id,
        }
        for c in items
    ]
    return outcome_columns(rows).to_frame()
