"""A solver for the live-evaluation failure tests: do something to the ledger when the k-th sample starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def act_at_sample(k: int, action: Callable[[], object]) -> Any:
    """An Inspect solver that runs ``action`` (in a worker thread) when the k-th sample it serves starts, then generates.

    One solver object shared by both tasks counts the samples of both; ``action`` runs once.
    """
    import anyio.to_thread
    from inspect_ai.solver import Generate, TaskState, solver

    calls = 0

    @solver
    def act_at() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            nonlocal calls
            calls += 1
            if calls == k:
                await anyio.to_thread.run_sync(action)
            return await generate(state)

        return solve

    return act_at()
