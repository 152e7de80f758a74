"""Turning pydantic's validation errors into stopwise problems (file, field, rule, value): the one helper."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic

from stopwise.errors import Problem

__all__ = ["field_path", "problems_from_pydantic"]


def field_path(loc: Sequence[int | str]) -> str:
    """``("routes", 1, "handling")`` -> ``"routes[1].handling"``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text or "(document)"


def _rule(err: Any) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not a known field (check its spelling and its section)"
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "")
        return f"must be one of {expected}"
    if kind in ("string_type", "string_sub_type"):
        return "must be text"
    if kind == "string_too_short":
        return "must be non-empty text"
    if kind in ("bool_type", "bool_parsing"):
        return "must be true or false"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "must be an integer"
    if kind in ("float_type", "float_parsing", "finite_number"):
        return "must be a finite number"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        sign = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}[kind]
        bound = next(iter(ctx.values())) if ctx else "?"
        shown = f"{bound:g}" if isinstance(bound, int | float) and not isinstance(bound, bool) else str(bound)
        return f"must be {sign} {shown}"
    if kind in ("list_type", "tuple_type"):
        return "must be a list"
    if kind in ("too_short", "too_long"):
        return "must be a list of the right length" if "tuple" in err["msg"].lower() else err["msg"].lower()
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "must be a table (mapping) of fields"
    if kind in ("datetime_type", "datetime_parsing", "datetime_from_date_parsing"):
        return "must be an ISO 8601 date-time"
    if kind == "timezone_aware":
        return "must be an ISO 8601 date-time with a time zone (e.g. 2026-01-01T12:00:00Z)"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    return str(err["msg"])


def problems_from_pydantic(exc: pydantic.ValidationError, source: str, row: int | None = None) -> list[Problem]:
    """One :class:`~stopwise.errors.Problem` per pydantic error, naming file, row, field, rule, value.

    Examples
    --------
    >>> import pydantic
    >>> from stopwise._pydantic import problems_from_pydantic
    >>> class M(pydantic.BaseModel):
    ...     n: int
    >>> try:
    ...     M.model_validate({"n": "x"})
    ... except pydantic.ValidationError as exc:
    ...     print(problems_from_pydantic(exc, "f.json", row=2)[0])
    f.json, row 2, field 'n': must be an integer; got 'x'
    """
    problems: list[Problem] = []
    for err in exc.errors():
        value = err.get("input")
        if err["type"] == "missing" or isinstance(value, dict):
            value = None
        problems.append(Problem(source, row, field_path(err["loc"]), _rule(err), value))
    return problems
