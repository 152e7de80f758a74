"""Chat transcripts to trajectory steps, as every harness adapter that keeps the messages reads them.

One step per assistant message: its action is the assistant's text and its tool calls (``name(args)``), its
observation the text of every tool, user or environment message up to the next assistant message. The tau2-bench
and Inspect AI readers of :mod:`stopwise.ingest` use it, and so does :mod:`stopwise.inspect`'s live halting (a
running sample's messages read as ``stopwise ingest`` reads them from its log).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stopwise.records import Step

__all__ = ["render_call", "steps_from_messages", "text_of"]


def text_of(value: Any) -> str:
    """Text of a message content that may be a string or a list of content parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif isinstance(part.get("reasoning"), str):
                    parts.append(part["reasoning"])
                elif kind:
                    parts.append(f"[{kind}]")
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        return text_of([value])
    return str(value)


def render_call(name: str, arguments: Any) -> str:
    """``name(arguments-as-json)``: how a tool call is written into a step's action."""
    if isinstance(arguments, str):
        args = arguments
    else:
        try:
            args = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError):
            args = str(arguments)
    return f"{name}({args})"


def steps_from_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    content: Callable[[Any], str] = text_of,
    tool_calls: Callable[[Mapping[str, Any]], list[tuple[str, Any]]],
    tokens: Callable[[Mapping[str, Any]], tuple[int | None, int | None]] | None = None,
) -> list[Step]:
    """Turn a chat transcript into steps: one per assistant message, observing what follows it.

    The action is the assistant's text and its tool calls (``name(args)``); the observation is
    the text of every tool, user or environment message up to the next assistant message.
    Messages before the first assistant message (system prompt, task) are not steps.
    """
    steps: list[Step] = []
    pending: dict[str, Any] | None = None
    observed: list[str] = []

    def close() -> None:
        if pending is not None:
            steps.append(Step(observation="\n".join(o for o in observed if o), **pending))

    for message in messages:
        role = message.get("role")
        if role == "assistant":
            close()
            calls = tool_calls(message)
            text = content(message.get("content"))
            action = "\n".join([text, *(render_call(n, a) for n, a in calls)]).strip("\n")
            t_in, t_out = tokens(message) if tokens is not None else (None, None)
            pending = {"action": action, "tool": calls[0][0] if calls else None, "tokens_in": t_in, "tokens_out": t_out}
            observed = []
        elif pending is not None and role in ("tool", "user", "environment"):
            observed.append(content(message.get("content")))
    close()
    return steps
