"""Validation of trajectories before any computation (file, row, field, rule and value named)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from stopwise.errors import InputError, Problem, ValidationError
from stopwise.records import Trajectory, read_trajectories

__all__ = ["check_trajectories", "meta_value", "read_runs"]


def check_trajectories(
    trajectories: Any,
    *,
    source: str = "<trajectories>",
    require_outcome: bool = True,
    meta_keys: Sequence[str] = (),
) -> list[Trajectory]:
    """Check trajectories for training or evaluation and return them as a list.

    Parameters
    ----------
    trajectories : sequence of Trajectory
        The runs, e.g. from :func:`stopwise.records.read_trajectories`.
    source : str, optional
        Name used in messages (the file the runs came from); rows are 1-based positions.
    require_outcome : bool, default True
        Every run needs a binary final outcome (0 or 1).
    meta_keys : sequence of str, optional
        ``meta`` keys every run must carry (for leave-one-group-out by a ``meta`` key).

    Raises
    ------
    InputError
        ``trajectories`` is not a list of Trajectory objects or is empty.
    ValidationError
        A run breaks a rule; every problem names source, row, field, rule and value.

    Examples
    --------
    >>> from stopwise.records import Trajectory, read_trajectories
    >>> check_trajectories([Trajectory(agent="a", task="t", outcome=0.5)])
    Traceback (most recent call last):
    ...
    stopwise.errors.ValidationError: 1 problem in the input:
      <trajectories>, row 1, field 'outcome': must be 0 or 1 (a binary final label) to train or evaluate; got 0.5
    """
    if isinstance(trajectories, Trajectory) or not isinstance(trajectories, Sequence) or isinstance(trajectories, str):
        raise InputError(f"`trajectories` must be a list of Trajectory objects; got {type(trajectories).__name__}")
    runs = list(trajectories)
    if not runs:
        raise InputError(f"{source}: holds no trajectories")
    problems: list[Problem] = []
    for row, run in enumerate(runs, start=1):
        if not isinstance(run, Trajectory):
            raise InputError(f"`trajectories[{row - 1}]` must be a Trajectory; got {type(run).__name__}")
        if require_outcome and run.outcome not in (0.0, 1.0):
            problems.append(Problem(source, row, "outcome", "must be 0 or 1 (a binary final label) to train or evaluate", run.outcome))
        for key in meta_keys:
            value = meta_value(run, key)
            if value is None or (isinstance(value, str) and not value.strip()):
                problems.append(Problem(source, row, f"meta.{key}" if key not in ("agent", "task") else key, "must be present to group runs by it", value))
    if problems:
        raise ValidationError(problems)
    return runs


def meta_value(run: Trajectory, key: str) -> Any:
    """The grouping value of a run: ``agent`` / ``task`` fields, else ``meta[key]``."""
    if key == "agent":
        return run.agent
    if key == "task":
        return run.task
    value = run.meta.get(key)
    return None if value is None else (value if isinstance(value, str) else str(value))


def read_runs(
    paths: Sequence[str | os.PathLike[str]],
    *,
    require_outcome: bool = True,
    meta_keys: Sequence[str] = (),
) -> list[Trajectory]:
    """Read and check the trajectories of one or more JSONL files, naming the file in every problem.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from stopwise.records import Trajectory, write_trajectories
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
    >>> _ = write_trajectories([Trajectory(agent="a", task="t", outcome=1)], path)
    >>> [r.agent for r in read_runs([path])]
    ['a']
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    runs: list[Trajectory] = []
    for path in paths:
        runs += check_trajectories(read_trajectories(path), source=str(path), require_outcome=require_outcome, meta_keys=meta_keys)
    if not runs:
        raise InputError("no trajectory files given")
    return runs
