"""Which runs a model was trained on: a short digest of each training run's identity, kept with the model.

A run replayed through the monitor that was one of the model's training runs gets in-sample verdicts,
which look better than the verdicts on a new run; ``stopwise early monitor`` warns about them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

import numpy as np

from stopwise.records import Trajectory

__all__ = ["run_key", "run_keys"]


def run_key(run: Trajectory) -> str:
    """A 16-hex-digit digest of a run's identity: agent, task, attempt and number of steps.

    Examples
    --------
    >>> from stopwise.records import Step
    >>> run = Trajectory(agent="a", task="t", outcome=1, steps=[Step(action="ls")])
    >>> len(run_key(run)), run_key(run) == run_key(run.model_copy(update={"attempt": 1}))
    (16, False)
    """
    identity = json.dumps([run.agent, run.task, run.attempt, len(run.steps)], ensure_ascii=True)
    return hashlib.sha256(identity.encode("ascii")).hexdigest()[:16]


def run_keys(runs: Iterable[Trajectory]) -> np.ndarray:
    """The sorted distinct :func:`run_key` of ``runs`` (as a model keeps them)."""
    return np.array(sorted({run_key(r) for r in runs}), dtype=str)
