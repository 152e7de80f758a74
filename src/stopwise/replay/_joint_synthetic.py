"""A seeded synthetic benchmark with trajectories: outcomes from an item-response model, steps with a learnable tell."""

from __future__ import annotations

import numpy as np

from stopwise.errors import ArgumentError
from stopwise.records import Step, Trajectory

__all__ = ["synthetic_trajectories"]

_NEUTRAL = ("search_code", "read_file", "list_dir")


def _check(n_tasks: int, n_agents: int, attempts: int, predictable: float, misleading: float) -> None:
    for name, value, low in (("n_tasks", n_tasks, 4), ("n_agents", n_agents, 2), ("attempts", attempts, 1)):
        if isinstance(value, bool) or int(value) != value or value < low:
            raise ArgumentError(f"`{name}` must be an integer >= {low}; got {value!r}")
    for name, share in (("predictable", predictable), ("misleading", misleading)):
        if not 0.0 <= share <= 1.0:
            raise ArgumentError(f"`{name}` must be a share in [0, 1]; got {share!r}")


def _steps(ok: bool, n: int, tell: int | None, lie: bool, task: int, rng: np.random.Generator) -> list[Step]:
    """One run's steps: neutral exploration, then (from step ``tell`` on) the outcome's tell most of the time."""
    shown = (not ok) if lie else ok
    context = 400 + 40 * (task % 7)
    steps = []
    for k in range(n):
        out = int(rng.integers(40, 240))
        if tell is not None and k >= tell and rng.random() < 0.7:
            if shown:
                step = Step(action="python -m pytest -q", tool="bash", observation=f"{k + 3} passed in 0.2s",
                            tokens_in=context, tokens_out=out)
            else:
                step = Step(action=f'read_file({{"path": "src/m{task % 9}.py"}})', tool="read_file",
                            observation="[isError] permission denied", tokens_in=context, tokens_out=out)
        else:
            tool = _NEUTRAL[int(rng.integers(len(_NEUTRAL)))]
            step = Step(action=f'Looking around.\n{tool}({{"query": "item {k % 5}"}})', tool=tool,
                        observation=f"found {int(rng.integers(1, 30))} matches in module {task % 9}",
                        tokens_in=context, tokens_out=out)
        steps.append(step)
        context += out + 60
    return steps


def synthetic_trajectories(
    n_tasks: int = 200,
    n_agents: int = 4,
    *,
    attempts: int = 1,
    spread: float = 1.0,
    predictable: float = 0.7,
    misleading: float = 0.03,
    min_steps: int = 12,
    max_steps: int = 40,
    max_failed_steps: int | None = None,
    rng: np.random.Generator | int | None = 0,
) -> list[Trajectory]:
    """Generate a labelled benchmark of agent runs whose early steps make some outcomes predictable.

    Outcomes follow a two-parameter logistic item-response model (task difficulty N(0, 1), agent abilities
    evenly spread over [-spread, spread]); each run has ``min_steps``..``max_steps`` steps with recorded tokens
    (input: the growing context; output: 40-239 per step). A share ``predictable`` of the runs shows a
    *tell* from a random step in its first third on: 70 % of its later steps show passing tests (a
    success) or a tool error (a failure); a share ``misleading`` of those shows the opposite outcome's
    tell. The other runs explore neutrally to their end. Agents alternate between two ``meta["pool"]``
    values (``pool-a``, ``pool-b``), so a model trained on one pool never saw the agents of the other.

    Parameters
    ----------
    n_tasks, n_agents, attempts : int
        Benchmark size: agents ``agent-1`` (weakest) upwards, attempts numbered from 1.
    spread : float
        Half the range of the agents' abilities (smaller: closer agents, harder comparisons).
    predictable, misleading : float
        Shares of runs with a tell, and of tells that show the wrong outcome.
    min_steps, max_steps : int
        Run lengths (uniform).
    max_failed_steps : int, optional
        The longest failing run (failing runs' lengths uniform in ``min_steps..max_failed_steps``; default
        ``max_steps``). Agents that fail often keep trying until a step or cost limit, so their runs are the
        long ones: a larger value models that (and makes within-task halting save more).
    rng : numpy.random.Generator or int, optional
        Generator or seed; the same seed gives the same runs.

    Returns
    -------
    list of Trajectory

    Examples
    --------
    >>> from stopwise.replay import synthetic_trajectories
    >>> runs = synthetic_trajectories(6, 2, rng=1)
    >>> len(runs), sorted({r.agent for r in runs}), runs[0].meta["pool"]
    (12, ['agent-1', 'agent-2'], 'pool-a')
    """
    _check(n_tasks, n_agents, attempts, predictable, misleading)
    if not 0.0 <= spread <= 10.0:
        raise ArgumentError(f"`spread` must be in [0, 10]; got {spread!r}")
    if int(min_steps) != min_steps or int(max_steps) != max_steps or not 3 <= min_steps <= max_steps:
        raise ArgumentError(f"`min_steps` and `max_steps` must be integers with 3 <= min_steps <= max_steps; got {min_steps!r}, {max_steps!r}")
    longest_failed = max_steps if max_failed_steps is None else max_failed_steps
    if isinstance(longest_failed, bool) or int(longest_failed) != longest_failed or longest_failed < min_steps:
        raise ArgumentError(f"`max_failed_steps` must be an integer >= min_steps ({min_steps}); got {max_failed_steps!r}")
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    difficulty = generator.normal(0.0, 1.0, n_tasks)
    ability = np.linspace(-float(spread), float(spread), n_agents)
    runs = []
    for a in range(n_agents):
        for t in range(n_tasks):
            for attempt in range(1, attempts + 1):
                ok = bool(generator.random() < 1.0 / (1.0 + np.exp(-1.7 * (ability[a] - difficulty[t]))))
                n = int(generator.integers(min_steps, (max_steps if ok else longest_failed) + 1))
                tell = int(generator.integers(0, max(1, n // 3))) if generator.random() < predictable else None
                lie = tell is not None and bool(generator.random() < misleading)
                runs.append(
                    Trajectory(
                        agent=f"agent-{a + 1}", task=f"task-{t:04d}", attempt=attempt, outcome=int(ok),
                        task_text=f"Repair module {t % 9} so that the checks of task {t} pass.",
                        steps=_steps(ok, n, tell, lie, t, generator), meta={"pool": ("pool-a", "pool-b")[a % 2]},
                    )
                )
    return runs
