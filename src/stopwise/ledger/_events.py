"""Outcome rows to event payloads: rows validated by the contract's one validator, payloads built from its columns.

:func:`stopwise.outcome_columns` validates the rows of an append (a live worker's few rows take its
plain-Python path, larger appends and frames its array validator); :func:`column_payloads` turns
validated columns into the plain JSON values whose digests the ledger stores, for an append and,
from the stored columns, for ``verify``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from stopwise.records import OutcomeColumns, outcome_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["column_payloads", "payloads"]


def column_payloads(rows: OutcomeColumns) -> list[dict[str, Any]]:
    """The payload of each row of validated columns (as :func:`stopwise.ledger._digest.event_payload` gives it).

    Examples
    --------
    >>> from stopwise.records import outcome_columns
    >>> from stopwise.ledger._events import column_payloads
    >>> column_payloads(outcome_columns([{"system": "A", "task": "t", "outcome": 1, "flags": "error"}]))[0]["flags"]
    'error'
    """
    text = {name: getattr(rows, name).tolist() for name in ("system", "task", "group", "status", "source", "unit", "flags")}
    numbers = {
        name: [None if v != v else float(v) for v in getattr(rows, name).tolist()]  # NaN -> None
        for name in ("outcome", "cost_usd", "elapsed_s")
    }
    attempts = [int(a) for a in rows.attempt.tolist()]
    out: list[dict[str, Any]] = []
    for i in range(len(rows)):
        payload: dict[str, Any] = {
            "system": text["system"][i],
            "task": text["task"][i],
            "outcome": numbers["outcome"][i],
            "group": text["group"][i],
            "attempt": attempts[i],
            "cost_usd": numbers["cost_usd"][i],
            "elapsed_s": numbers["elapsed_s"][i],
            "status": text["status"][i],
            "source": text["source"][i],
            "unit": text["unit"][i],
        }
        if text["flags"][i]:
            payload["flags"] = text["flags"][i]
        out.append(payload)
    return out


def payloads(rows: OutcomeColumns | pd.DataFrame | Iterable[Mapping[str, Any]], *, source: str) -> list[dict[str, Any]]:
    """Validated rows as payloads.

    Raises
    ------
    ValidationError
        A row breaks the outcome-row contract (the message of :func:`stopwise.outcome_columns`).
    """
    return column_payloads(outcome_columns(rows, source=source))
