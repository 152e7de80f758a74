"""Versioned JSON schemas of the finality documents."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from stopwise.errors import InputError
from stopwise.finality._argument import CompletionArgument
from stopwise.finality._effects import OpenEffectsRecord
from stopwise.finality._replay_record import DelayedWriteReplay

__all__ = ["SCHEMA_NAMES", "SchemaName", "finality_schema"]

SchemaName = Literal["effects-record", "completion-argument", "replay-result"]
SCHEMA_NAMES: tuple[SchemaName, ...] = ("effects-record", "completion-argument", "replay-result")
"""Documents with a published JSON schema."""

_MODELS: dict[str, tuple[type[BaseModel], str]] = {
    "effects-record": (OpenEffectsRecord, "stopwise open-effects record"),
    "completion-argument": (CompletionArgument, "stopwise completion argument"),
    "replay-result": (DelayedWriteReplay, "stopwise controlled-replay record"),
}


def finality_schema(name: str = "effects-record") -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of a finality document, with a versioned ``$id``.

    Parameters
    ----------
    name : {"effects-record", "completion-argument", "replay-result"}
        Which document.

    Raises
    ------
    InputError
        Unknown ``name``.

    Examples
    --------
    >>> from stopwise.finality import finality_schema
    >>> schema = finality_schema("effects-record")
    >>> schema["$id"], schema["properties"]["version"]["const"]
    ('urn:stopwise:schema:effects-record:1', 1)
    """
    if name not in _MODELS:
        raise InputError(f"schema name must be one of {', '.join(SCHEMA_NAMES)}; got {name!r}")
    model, title = _MODELS[name]
    body = model.model_json_schema(mode="validation")
    version = model.model_fields["version"].default
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:stopwise:schema:{name}:{version}",
        **body,
        "title": title,
    }
