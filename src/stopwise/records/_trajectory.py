"""Trajectories: step-by-step agent runs with their final outcome (JSONL, optionally gzip).

One JSON object per line::

    {"agent": ..., "task": ..., "attempt": 0, "outcome": 1, "task_text": ...,
     "steps": [{"action": ..., "observation": ..., "tool": ..., "tokens_in": ..., "tokens_out": ...}],
     "cost_usd": null, "meta": {...}}

``meta`` may hold anything; nothing in it reaches a prefix feature unless it is known at that step.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, cast

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from stopwise._atomic import write_file
from stopwise._limits import json_loads, read_lines
from stopwise._pydantic import problems_from_pydantic
from stopwise.errors import FileFormatError, Problem, Shown, ValidationError, shown

__all__ = ["Step", "Trajectory", "iter_trajectories", "read_trajectories", "write_trajectories"]


class Step(BaseModel):
    """One agent step: the action it took and what it observed in return."""

    model_config = ConfigDict(extra="forbid")

    action: str = ""
    """The step's action text: visible reasoning and the tool call (``tool(arguments)``) or shell command."""
    observation: str = ""
    """What the environment returned to the agent for this action."""
    tool: str | None = None
    """Tool or function name, when the harness records one; ``None`` for a plain message."""
    tokens_in: int | None = Field(default=None, ge=0)
    """Prompt tokens of the model call that produced this step, when recorded."""
    tokens_out: int | None = Field(default=None, ge=0)
    """Completion tokens of the model call that produced this step, when recorded."""


class Trajectory(BaseModel):
    """One run of one agent on one task, with its final outcome.

    Examples
    --------
    >>> from stopwise import Trajectory
    >>> from stopwise.records import Step
    >>> t = Trajectory(agent="a", task="t", outcome=1, steps=[Step(action="ls", observation="x.py")])
    >>> t.steps[0].action
    'ls'
    """

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(min_length=1)
    """The agent system that produced the run."""
    task: str = Field(min_length=1)
    """The task identifier."""
    attempt: int = Field(default=0, ge=0)
    """Attempt (run) index of this agent on this task."""
    outcome: float | None = Field(default=None, ge=0.0, le=1.0)
    """The verifier's final score in [0, 1]; ``None`` when the run has no label (yet)."""
    task_text: str = ""
    """The task prompt given to the agent."""
    steps: list[Step] = Field(default_factory=list)
    """The steps in order."""
    cost_usd: float | None = Field(default=None, ge=0.0)
    """Whole-run cost in USD, when recorded (known only at the end of the run)."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Anything else the source recorded; may leak the outcome, so never a prefix feature."""


def _open_text(path: Path, mode: str) -> IO[str]:
    if path.suffix.lower() == ".gz":
        return cast(IO[str], gzip.open(path, mode + "t", encoding="utf-8"))
    return open(path, mode, encoding="utf-8")


def _open_binary(path: Path) -> IO[bytes]:
    if path.suffix.lower() == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return open(path, "rb")


def iter_trajectories(path: str | os.PathLike[str]) -> Iterator[Trajectory]:
    """Yield the trajectories of a JSONL file (``.jsonl`` or ``.jsonl.gz``) one at a time.

    Raises
    ------
    FileFormatError
        The file is missing or not valid gzip / UTF-8.
    ValidationError
        A line is not JSON or breaks the trajectory contract (file, line and field named).
    """
    file = Path(path)
    if not file.exists():
        raise FileFormatError(f"{file}: no such file")
    source = str(file)
    seen = 0
    try:
        with _open_binary(file) as handle:
            for number, raw in read_lines(handle, source):
                line = raw.decode("utf-8")
                if not line.strip():
                    continue
                try:
                    obj = json_loads(line, f"{source}, line {number}")
                except json.JSONDecodeError as exc:
                    raise ValidationError([Problem(source, number, None, f"must be one JSON object per line ({exc.msg})")]) from exc
                if not isinstance(obj, dict):
                    raise ValidationError([Problem(source, number, None, "must be a JSON object", type(obj).__name__)])
                try:
                    yield Trajectory.model_validate(obj)
                except pydantic.ValidationError as exc:
                    problems = problems_from_pydantic(exc, source, number)
                    raise ValidationError([dataclasses.replace(p, value=_short(p.value)) for p in problems]) from exc
                seen += 1
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as exc:
        raise FileFormatError(f"{file}: cannot be read as (gzip) UTF-8 JSONL: {str(exc)[:300]}") from exc
    if seen == 0:
        raise FileFormatError(f"{file}: holds no trajectories")


def _short(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    return Shown(shown(value, 80))


def read_trajectories(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Read every trajectory of a JSONL file (``.jsonl`` or ``.jsonl.gz``).

    See :func:`iter_trajectories` for the errors raised.
    """
    return list(iter_trajectories(path))


def write_trajectories(trajectories: Iterable[Trajectory], path: str | os.PathLike[str]) -> Path:
    """Write trajectories as JSONL (gzip when the name ends in ``.gz``), atomically."""

    def write(tmp: Path) -> None:
        with _open_text(tmp, "w") as handle:
            for trajectory in trajectories:
                handle.write(trajectory.model_dump_json() + "\n")

    return write_file(path, write)
