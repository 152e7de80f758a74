"""``stopwise next``: the tasks to run next, top-up first, for any harness (:func:`stopwise.compare.next_tasks`).

Two sources of rows: outcome files with the planned order (``stopwise next rows.csv -t A -b B --tasks order.csv``)
or a ledger's evaluation (``stopwise next --ledger URL --evaluation EVAL``: its registered systems, policy and
planned order). Prints the tasks one per line (``--json``: the list with its decision); exit 0, 4 on a user error.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stopwise._text import for_terminal as escape
from stopwise.cli._common import (
    Inputs,
    PlannedTasks,
    PolicyFile,
    baseline_option,
    console,
    print_json,
    task_universe,
    tested_option,
    user_errors,
)
from stopwise.errors import InputError

if TYPE_CHECKING:
    from stopwise.compare import NextTasks

__all__ = ["next_command"]


def next_command(
    outcomes: Annotated[
        list[Path] | None,
        typer.Argument(help="Outcome rows so far (.csv, .jsonl or .parquet); several files are joined; '-' reads standard input. "
                       "None yet: leave out."),
    ] = None,
    tested: Annotated[str | None, tested_option()] = None,
    baseline: Annotated[str | None, baseline_option()] = None,
    policy: PolicyFile = None,
    tasks: PlannedTasks = None,
    ledger: Annotated[str | None, typer.Option("--ledger", help="Read the rows of a ledger's evaluation instead (a path or URL).")] = None,
    evaluation: Annotated[str | None, typer.Option("--evaluation", "-e", help="The ledger's evaluation (with --ledger).")] = None,
    n: Annotated[int, typer.Option("-n", min=1, help="Print at most this many tasks.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print {action, note, remaining, tasks} as JSON.")] = False,
) -> None:
    """Print the tasks to run next: the top-up tasks a crossed boundary waits for first, then the planned order.

    The betting boundary's early stop depends on running them as soon as they are named: a harness that keeps
    running the planned order reaches them where they lie (docs/live_looks.md). Give the rows so far with the
    planned order (--tasks, the `stopwise order` output), or a ledger's evaluation (--ledger URL --evaluation EVAL).

    Example: stopwise next rows.csv -t A -b B --tasks order.csv -p policy.toml -n 5
    """
    from stopwise.compare import next_tasks

    with user_errors(), Inputs(outcomes) as inputs:
        if ledger is not None or evaluation is not None:
            given = [name for name, value in (("OUTCOMES", outcomes), ("--tested", tested), ("--baseline", baseline),
                                              ("--policy", policy), ("--tasks", tasks)) if value]  # fmt: skip
            if ledger is None or evaluation is None:
                raise InputError("a ledger's next tasks need both --ledger URL and --evaluation NAME")
            if given:
                raise InputError(f"--ledger reads the evaluation's registered systems, policy and planned order; {', '.join(given)} do not apply")
            answer = _from_ledger(ledger, evaluation, n)
        else:
            from stopwise.records import Policy, load_policy, read_outcomes

            if not tested or not baseline:
                raise InputError("give the compared systems: --tested A --baseline B (or --ledger URL --evaluation NAME)")
            chosen = load_policy(policy) if policy is not None else Policy()
            universe = task_universe(tasks, None, None, chosen.coverage.group_column)
            if universe is None:
                raise InputError("give the planned order: --tasks FILE (the `stopwise order` output)")
            rows = read_outcomes(inputs.files(outcomes)) if outcomes else None
            answer = next_tasks(rows, tested, baseline, chosen, universe=universe, n=n)
    if as_json:
        print_json(answer.to_dict())
        return
    for line in answer.lines():
        console.print(escape(line), soft_wrap=True)
    if answer.remaining > len(answer.tasks):
        console.print("  (-n to show more)")


def _from_ledger(url: str, evaluation: str, n: int) -> NextTasks:
    """The next tasks of a ledger's evaluation (its rows, registration and a decision not appended to the chain)."""
    from stopwise.compare import next_tasks
    from stopwise.ledger import open_ledger

    with open_ledger(url, mode="read") as opened:
        reg = opened.registration(evaluation)
        rows = opened.outcomes(evaluation) if opened.high_water(evaluation) else None
    return next_tasks(rows, reg.tested, reg.baseline, reg.policy, universe=reg.universe, n=n)
