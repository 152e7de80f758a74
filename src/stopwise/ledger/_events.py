"""Outcome events to payloads: a quick path for the few rows of a live append, the contract's validator otherwise.

A live worker appends one or a few events per call; :func:`stopwise.validate_outcomes` costs
milliseconds of pandas work per call whatever the size. :func:`quick_payloads` applies the same
rules in plain Python to rows of simple values (text, numbers, None) and gives up (returns None) on
anything else, including any broken rule: then the rows go through :func:`validate_outcomes`, which
gives the contract's own error message or result. Both paths give identical payloads (tested).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from stopwise.ledger._digest import event_payload
from stopwise.records import FLAG_SEPARATOR, OUTCOME_COLUMNS, STATUSES, validate_outcomes
from stopwise.records._outcomes import _canonical_flags

__all__ = ["QUICK_MAX_ROWS", "payloads", "quick_payloads"]

QUICK_MAX_ROWS = 256
"""Appends of at most this many rows try the quick path first."""

_ALLOWED = frozenset(OUTCOME_COLUMNS)
_REQUIRED = ("system", "task", "outcome")
_Missing = object()


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def _number(value: Any) -> float | object | None:
    """A finite float, None for blank, or _Missing when the value is not a plain finite number."""
    if _blank(value):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _Missing
    number = float(value)
    return number if math.isfinite(number) else _Missing


def _text(value: Any) -> str | object:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value.strip() if isinstance(value, str) else _Missing


def _flags(value: Any) -> str | object:
    """Canonical flags (distinct tokens, sorted, joined by ";") of text or a list; _Missing when malformed."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, list | tuple) and all(isinstance(t, str) and FLAG_SEPARATOR not in t for t in value):
        value = FLAG_SEPARATOR.join(value)  # as the validator joins listed flags
    if not isinstance(value, str):
        return _Missing
    canonical, ok = _canonical_flags(value)  # the validator's rule, in one place
    return canonical if ok else _Missing


def quick_payloads(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    """Payloads of simple, valid rows; None when any row needs the full validator."""
    out: list[dict[str, Any]] = []
    labels: dict[tuple[str, str, int], tuple[tuple[str, Any], ...]] = {}
    for row in rows:
        keys = row.keys()
        if not _ALLOWED.issuperset(keys) or any(k not in keys for k in _REQUIRED):
            return None
        system, task = _text(row["system"]), _text(row["task"])
        if not isinstance(system, str) or not isinstance(task, str) or not system or not task:
            return None
        status_raw = row.get("status")
        status = _text(status_raw)
        if not isinstance(status, str):
            return None
        status = status.lower() or "final"
        if status not in STATUSES:
            return None
        outcome = _number(row["outcome"])
        if outcome is _Missing or (outcome is None and status == "final"):
            return None
        if outcome is not None and not 0.0 <= outcome <= 1.0:  # type: ignore[operator]
            return None
        attempt_raw = row.get("attempt")
        attempt = _number(attempt_raw)
        if attempt is _Missing or (attempt is not None and (attempt < 0 or attempt != round(attempt))):  # type: ignore[operator,call-overload]
            return None
        extra: dict[str, Any] = {}
        for name in ("cost_usd", "elapsed_s"):
            value = _number(row.get(name))
            if value is _Missing or (value is not None and value < 0):  # type: ignore[operator]
                return None
            extra[name] = value
        for name in ("group", "source", "unit"):
            value = _text(row.get(name))
            if not isinstance(value, str):
                return None
            extra[name] = value
        flags = _flags(row.get("flags"))
        if not isinstance(flags, str):
            return None
        key = (system, task, 0 if attempt is None else int(attempt))  # type: ignore[call-overload]
        payload: dict[str, Any] = {
            "system": system,
            "task": task,
            "outcome": outcome,
            "group": extra["group"],
            "attempt": key[2],
            "cost_usd": extra["cost_usd"],
            "elapsed_s": extra["elapsed_s"],
            "status": status,
            "source": extra["source"],
            "unit": extra["unit"],
        }
        if flags:
            payload["flags"] = flags
        # repeats of a key within one call must agree in every field but source (the validator's rule)
        label = tuple((k, v) for k, v in payload.items() if k != "source")
        if labels.setdefault(key, label) != label:
            return None
        out.append(payload)
    return out


def payloads(rows: pd.DataFrame | Sequence[Mapping[str, Any]], *, source: str) -> tuple[pd.DataFrame | None, list[dict[str, Any]]]:
    """Validated rows as payloads; the validated frame too when the full validator ran.

    Raises
    ------
    ValidationError
        A row breaks the outcome-row contract (the message of :func:`stopwise.validate_outcomes`).
    """
    if len(rows) <= QUICK_MAX_ROWS:
        records = rows.to_dict(orient="records") if isinstance(rows, pd.DataFrame) else rows
        quick = quick_payloads(records)
        if quick is not None:
            return None, quick
    frame = validate_outcomes(rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows)), source=source)
    return frame, [event_payload(r) for r in frame.to_dict(orient="records")]
