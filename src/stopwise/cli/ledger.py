"""``stopwise ledger init|append|decide|verify|export|conflicts`` and ``stopwise watch``: thin commands over :mod:`stopwise.ledger`.

URL is ``sqlite:///path/ledger.db`` (or a plain path) or ``postgresql+psycopg://user@host:port/db``.
Exit codes: ``decide`` and ``watch`` exit with the decision's code (promote 0, reject 1, continue 2,
abstain 3); ``verify`` exits 1 when the ledger does not verify; ``append`` exits 4 when an event was
refused as a conflict; every user error exits 4.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from stopwise.cli._common import EXIT_ERROR, console, err_console, user_errors
from stopwise.errors import LedgerError

if TYPE_CHECKING:
    from stopwise.ledger import Ledger
    from stopwise.ledger._follow import Look

ledger_app = typer.Typer(
    help="A durable decision ledger (SQLite or PostgreSQL): register, append, decide, verify, export.",
    no_args_is_help=True,
)

Url = Annotated[str, typer.Argument(help="Ledger: a path or sqlite:///path (SQLite), or postgresql+psycopg://user@host:port/db.")]
Evaluation = Annotated[str, typer.Argument(help="The evaluation's name.")]


def _open(url: str) -> Ledger:
    from stopwise.ledger import open_ledger

    return open_ledger(url)


def _group_sizes(values: list[str]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for value in values:
        name, sep, count = value.rpartition("=")
        if not sep or not count.strip().isdigit():
            raise LedgerError(f"--group-size must be NAME=COUNT (a whole number); got {value!r}")
        sizes[name.strip()] = int(count)
    return sizes


@ledger_app.command("init")
def init_command(
    url: Url,
    evaluation: Evaluation,
    tested: Annotated[str, typer.Option("--tested", "-t", help="The tested system A.")],
    baseline: Annotated[str, typer.Option("--baseline", "-b", help="The baseline system B.")],
    tasks: Annotated[
        Path | None, typer.Option("--tasks", help="Planned tasks: the `stopwise order` output or a tasks file.")
    ] = None,
    n_tasks: Annotated[int | None, typer.Option("--n-tasks", help="Planned task count, when task names are not known.")] = None,
    group_size: Annotated[
        list[str] | None, typer.Option("--group-size", help="NAME=COUNT planned tasks of a group (with --n-tasks; repeat).")
    ] = None,
    policy: Annotated[Path | None, typer.Option("--policy", "-p", help="Policy TOML (default: the paper's primary policy).")] = None,
) -> None:
    """Register an evaluation: its policy and planned task universe are locked from now on.

    Running it again with the same policy, tasks and systems does nothing; any change is refused.

    Example: stopwise ledger init ledger.db my-eval --tasks order.csv --tested A --baseline B --policy policy.toml
    """
    from stopwise.records import Policy, TaskUniverse, load_policy, read_task_universe

    with user_errors():
        chosen = load_policy(policy) if policy is not None else Policy()
        if (tasks is None) == (n_tasks is None):
            raise LedgerError("give the planned task universe: either --tasks FILE or --n-tasks N (with --group-size)")
        if tasks is not None:
            if group_size:
                raise LedgerError("--group-size goes with --n-tasks; a tasks file carries its own groups")
            universe = read_task_universe(tasks, group_column=chosen.coverage.group_column)
        else:
            universe = TaskUniverse.from_counts(int(n_tasks or 0), _group_sizes(group_size or []) or None)
        with _open(url) as ledger:
            ledger.register(evaluation, policy=chosen, universe=universe, tested=tested, baseline=baseline)
            reg = ledger.registration(evaluation)
    console.print(
        f"registered [bold]{escape(reg.name)}[/]: {escape(reg.tested)} vs {escape(reg.baseline)}, "
        f"{reg.universe.n_tasks} planned tasks; policy sha256 {reg.policy_sha256[:16]}…, "
        f"universe sha256 {reg.universe_sha256[:16]}…"
    )


@ledger_app.command("append")
def append_command(
    url: Url,
    evaluation: Evaluation,
    rows: Annotated[Path, typer.Argument(help="Outcome rows (.csv, .jsonl or .parquet).")],
) -> None:
    """Append outcome rows (idempotent: a repeat is acknowledged, a changed repeat is refused as a conflict).

    Example: stopwise ledger append ledger.db my-eval outcomes.csv
    """
    from stopwise.records import read_outcomes

    with user_errors():
        frame = read_outcomes(rows)
        with _open(url) as ledger:
            result = ledger.append(evaluation, frame)
    console.print(f"{result.accepted} accepted, {result.duplicates} already stored (acknowledged), {result.conflicts} conflicts")
    if result.conflicts:
        shown = ", ".join(f"({s}, {t}, {a})" for s, t, a in result.conflict_keys[:10])
        err_console.print(
            f"[bold red]error:[/] {result.conflicts} event(s) refused: the key is stored with different content "
            f"(kept in the conflicts table, nothing overwritten): {escape(shown)}"
        )
        raise typer.Exit(EXIT_ERROR)


@ledger_app.command("decide")
def decide_command(
    url: Url,
    evaluation: Evaluation,
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision record as JSON.")] = False,
    no_record: Annotated[bool, typer.Option("--no-record", help="Compute the decision without appending it to the chain.")] = False,
) -> None:
    """Decide from the stored outcomes with the registered policy and universe; append the record to the chain.

    Exit code: promote 0, reject 1, continue 2, abstain 3, error 4.
    """
    from stopwise.cli.compare import print_record
    from stopwise.records import ACTIONS

    with user_errors(), _open(url) as ledger:
        record = ledger.decide(evaluation, record=not no_record)
    if as_json:
        typer.echo(record.model_dump_json(indent=2))
    else:
        print_record(record)
    raise typer.Exit(ACTIONS.index(record.action))


@ledger_app.command("verify")
def verify_command(
    url: Url,
    evaluation: Evaluation,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verification result as JSON.")] = False,
) -> None:
    """Recompute the registration, every outcome digest, the decision chain and every decision.

    Exit code: 0 when everything recomputes, 1 at the first mismatch (which is printed), 4 on error.
    """
    with user_errors(), _open(url) as ledger:
        result = ledger.verify(evaluation)
    if as_json:
        from dataclasses import asdict, is_dataclass

        from stopwise.cli._common import print_json

        print_json(asdict(result) if is_dataclass(result) and not isinstance(result, type) else result)
        if not result.ok:
            raise typer.Exit(1)
        return
    if result.ok:
        console.print(
            f"[bold green]OK[/] {escape(result.evaluation)}: {result.n_outcomes} outcome events and "
            f"{result.n_decisions} decisions recompute; head digest {result.head_digest}"
        )
        return
    console.print(
        f"[bold red]MISMATCH[/] {escape(result.evaluation)}: {escape(str(result.first_mismatch))}\n"
        f"  checked before it: {result.n_decisions} decisions; last good digest {result.head_digest}"
    )
    raise typer.Exit(1)


@ledger_app.command("export")
def export_command(
    url: Url,
    evaluation: Evaluation,
    out: Annotated[Path, typer.Option("--out", "-o", help="Outcome rows to write (.csv, .jsonl or .parquet).")],
    decisions: Annotated[Path | None, typer.Option("--decisions", help="Also write the decision history (JSON lines).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
) -> None:
    """Write the outcome rows (readable by `stopwise decide` and `replay` unchanged) and the decision history.

    Files are written atomically; an existing file is refused without --force.

    Example: stopwise ledger export ledger.db my-eval -o rows.csv --decisions decisions.jsonl
    """
    with user_errors(), _open(url) as ledger:
        written = ledger.export(evaluation, out, decisions_path=decisions, force=force)
    for path in written:
        console.print(f"wrote {escape(path)}")


@ledger_app.command("conflicts")
def conflicts_command(
    url: Url,
    evaluation: Evaluation,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """List the refused (conflicting) events of an evaluation."""
    with user_errors(), _open(url) as ledger:
        frame = ledger.conflicts(evaluation)
    if as_json:
        for record in frame.to_dict(orient="records"):
            typer.echo(json.dumps(record))
        return
    if frame.empty:
        console.print("no conflicts")
        return
    table = Table(box=None, padding=(0, 2))
    for column in ("system", "task", "attempt", "received_at", "row_json"):
        table.add_column(column)
    for r in frame.itertuples():
        table.add_row(escape(r.system), escape(r.task), str(r.attempt), r.received_at, escape(r.row_json))
    console.print(table)


def _look_table(evaluation: str, look: Look | None, status: str) -> Table:
    table = Table(title=f"stopwise watch · {evaluation}", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("status", status)
    if look is None:
        return table
    table.add_row("outcome events", str(look.outcome_seq))
    table.add_row("elapsed", f"{look.elapsed_s:.1f} s")
    record = look.record
    if record is None:
        table.add_row("waiting", escape(look.waiting or ""))
        return table
    colour = {"promote": "green", "reject": "red", "continue": "yellow", "abstain": "magenta"}[record.action]
    table.add_row("action", f"[bold {colour}]{record.action.upper()}[/]")
    table.add_row("reason", escape(record.reason))
    table.add_row("observed", f"{record.n_observed} of {record.n_shared} tasks")
    fmt = (lambda v: "-" if v is None else f"{v:.4g}")  # noqa: E731
    table.add_row("delta_hat", fmt(record.delta_hat))
    table.add_row("R_promote / R_reject", f"{fmt(record.r_promote)} / {fmt(record.r_reject)}")
    return table


def watch_command(
    url: Url,
    evaluation: Evaluation,
    interval: Annotated[float, typer.Option("--interval", help="Seconds between polls.")] = 1.0,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Give up after this many seconds (exit 2).")] = None,
    once: Annotated[bool, typer.Option("--once", help="Take one look and exit with its code.")] = False,
    no_record: Annotated[bool, typer.Option("--no-record", help="Do not append the looks' decisions to the chain.")] = False,
) -> None:
    """Follow a ledger: decide at every new outcome, show it live, and exit with the decision's code once decided.

    Exit code: promote 0, reject 1, abstain 3; continue 2 after --timeout or --once; error 4.

    Example: stopwise watch ledger.db my-eval --timeout 3600
    """
    from rich.live import Live

    from stopwise.cli.compare import print_record
    from stopwise.ledger._follow import follow
    from stopwise.records import ACTIONS

    last: Look | None = None
    with user_errors(), _open(url) as ledger:
        looks = follow(ledger, evaluation, interval=interval, timeout=0.0 if once else timeout, record=not no_record)
        with Live(_look_table(evaluation, None, "starting"), console=console, transient=not console.is_terminal, auto_refresh=False) as live:
            for look in looks:
                last = look
                live.update(_look_table(evaluation, look, "decided" if look.final else "following"), refresh=True)
    if last is None or last.record is None:
        console.print(f"no decision yet: {escape(last.waiting if last is not None and last.waiting else 'no outcomes')}")
        raise typer.Exit(2)
    print_record(last.record)
    raise typer.Exit(ACTIONS.index(last.record.action))


def register(app: typer.Typer) -> None:
    """Add ``ledger`` (a command group) and ``watch`` to the top-level app."""
    app.add_typer(ledger_app, name="ledger")
    app.command("watch")(watch_command)
