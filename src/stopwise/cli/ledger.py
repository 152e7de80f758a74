"""``stopwise ledger init|append|decide|verify|export|conflicts`` and ``stopwise watch``: thin commands over :mod:`stopwise.ledger`.

URL is ``sqlite:///path/ledger.db`` (or a plain path) or ``postgresql+psycopg://user@host:port/db``.
``stopwise watch`` follows a ledger (``watch URL EVALUATION``) or an Inspect log directory
(``watch LOGDIR --tested A --baseline B``: :func:`stopwise.live.follow_inspect_logs`).
Exit codes: ``decide`` and ``watch`` exit with the decision's code (promote 0, reject 1, continue 2,
abstain 3); ``verify`` exits 1 when the ledger does not verify; ``append`` exits 4 when an event was
refused as a conflict; every user error exits 4.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.table import Table

from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise.cli._common import (
    EXIT_ERROR,
    GroupSizes,
    Inputs,
    PlannedCount,
    PlannedTasks,
    PolicyFile,
    baseline_option,
    console,
    elapsed_option,
    err_console,
    errors_option,
    group_size_option,
    hint_system_naming,
    n_tasks_option,
    policy_option,
    print_json,
    scorer_option,
    system_from_option,
    system_naming,
    system_option,
    task_universe,
    tasks_option,
    tested_option,
    user_errors,
)
from stopwise.errors import InputError, LedgerError

if TYPE_CHECKING:
    from stopwise.ledger import Ledger, LedgerDecision, LedgerMode
    from stopwise.live import FollowLook, LogLook, Look
    from stopwise.records import DecisionRecord

ledger_app = typer.Typer(
    help="A durable decision ledger (SQLite or PostgreSQL): register, append, decide, verify, export.",
    no_args_is_help=True,)

Url = Annotated[str, typer.Argument(help="Ledger: a path or sqlite:///path (SQLite), or postgresql+psycopg://user@host:port/db.")]
Evaluation = Annotated[str, typer.Argument(help="The evaluation's name.")]


def _open(url: str, mode: LedgerMode) -> Ledger:
    """The ledger at ``url``: only ``ledger init`` creates one (``create``); reading commands open it read-only."""
    from stopwise.ledger import open_ledger

    return open_ledger(url, mode=mode)


def _refuse_in_memory(url: str) -> None:
    """``ledger init sqlite://``: an in-memory database is gone when the command ends, so nothing would be registered."""
    from sqlalchemy.engine import make_url

    from stopwise._redact import redact_url
    from stopwise.ledger import ledger_url

    normalised = ledger_url(url)
    if normalised.startswith("sqlite") and make_url(normalised).database in (None, "", ":memory:"):
        raise LedgerError(
            f"ledger {redact_url(url)}: is an in-memory SQLite database, gone when this command ends, so nothing would be "
            "registered; give a file: a path such as ledger.db or sqlite:///path/ledger.db"
        )


@ledger_app.command("init")
def init_command(
    url: Url,
    evaluation: Evaluation,
    tested: Annotated[str | None, tested_option()] = None,
    baseline: Annotated[str | None, baseline_option()] = None,
    family: Annotated[
        list[str] | None,
        typer.Option("--family", help="Register a family of systems instead of a pair: its systems (repeat, or comma-separated).")
    ] = None,
    tasks: PlannedTasks = None,
    n_tasks: PlannedCount = None,
    group_size: GroupSizes = None,
    policy: PolicyFile = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print {evaluation, tested, baseline, n_tasks, policy_sha256, universe_sha256} as JSON.")
    ] = False,
) -> None:
    r"""Register an evaluation: its policy and planned task universe are locked from now on.

    Running it again with the same policy, tasks and systems does nothing; any change is refused. A family of k
    systems (decided together under the policy's \[family] section: ledger decide --family) takes --family instead
    of --tested and --baseline.

    Example: stopwise ledger init ledger.db my-eval --tasks order.csv --tested A --baseline B --policy policy.toml

    Example: stopwise ledger init ledger.db race --tasks order.csv --family A,B,C,D --policy policy.toml
    """
    from stopwise.records import Policy, load_policy

    with user_errors():
        chosen = load_policy(policy) if policy is not None else Policy()
        universe = task_universe(tasks, n_tasks, group_size, chosen.coverage.group_column)
        if universe is None:
            raise LedgerError("give the planned task universe: --tasks FILE or --n-tasks N (and/or --group-size NAME=COUNT)")
        systems = [name.strip() for given in family or [] for name in given.split(",") if name.strip()]
        if family is not None and (tested is not None or baseline is not None):
            raise InputError("give --family (a family of systems) or --tested and --baseline (a pair), not both")
        if family is None and (tested is None or baseline is None):
            raise InputError(f"--{'tested' if tested is None else 'baseline'} is required (or --family A,B,C for a family)")
        _refuse_in_memory(url)
        with _open(url, "create") as ledger:
            if family is not None:
                ledger.register_family(evaluation, policy=chosen, universe=universe, systems=systems)
            else:
                ledger.register(evaluation, policy=chosen, universe=universe, tested=str(tested), baseline=str(baseline))
            reg = ledger.registration(evaluation)
    if as_json:
        print_json({
            "evaluation": reg.name, "tested": reg.tested, "baseline": reg.baseline, "n_tasks": reg.universe.n_tasks,
            "policy_sha256": reg.policy_sha256, "universe_sha256": reg.universe_sha256,
            **({"family": list(reg.family)} if reg.family else {}),
        })
        return
    compared = f"family of {escape(', '.join(reg.family))}" if reg.family else f"{escape(reg.tested)} vs {escape(reg.baseline)}"
    console.print(
        f"registered [bold]{escape(reg.name)}[/]: {compared}, "
        f"{reg.universe.n_tasks} planned tasks; policy sha256 {reg.policy_sha256[:16]}…, "
        f"universe sha256 {reg.universe_sha256[:16]}…"
    )


@ledger_app.command("append")
def append_command(
    url: Url,
    evaluation: Evaluation,
    rows: Annotated[
        list[Path], typer.Argument(help="Outcome rows (.csv, .jsonl or .parquet); several files are joined; '-' reads standard input.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print {accepted, duplicates, conflicts, conflict_keys} as JSON.")] = False,
) -> None:
    """Append outcome rows (idempotent: a repeat is acknowledged, a changed repeat is refused as a conflict).

    Several files are appended as one batch, as ``decide`` joins them.

    Example: stopwise ledger append ledger.db my-eval outcomes.csv
    """
    from stopwise.records import read_outcomes

    with user_errors(), Inputs(rows) as inputs:
        frame = read_outcomes(inputs.files(rows))
        with _open(url, "write") as ledger:
            result = ledger.append(evaluation, frame)
            decided = ledger.first_decision(evaluation) if result.accepted else None
    if as_json:
        print_json({
            "accepted": result.accepted, "duplicates": result.duplicates, "conflicts": result.conflicts,
            "conflict_keys": [{"system": s, "task": t, "attempt": a} for s, t, a in result.conflict_keys],
            "after_decision": result.accepted if decided is not None else 0,
        })
    else:
        console.print(f"{result.accepted} accepted, {result.duplicates} already stored (acknowledged), {result.conflicts} conflicts")
    if decided is not None:  # only looked up when rows were accepted
        _warn_after_decision(url, evaluation, result.accepted, decided)
    if result.conflicts:
        shown = ", ".join(f"({s}, {t}, {a})" for s, t, a in result.conflict_keys[:10])
        err_console.print(
            f"[bold red]error:[/] {result.conflicts} event(s) refused: the key is stored with different content "
            f"(kept in the conflicts table, nothing overwritten): {escape(shown)}"
        )
        raise typer.Exit(EXIT_ERROR)


def _warn_after_decision(url: str, evaluation: str, n: int, decided: LedgerDecision) -> None:
    """The warning line of rows stored after an evaluation's first promote/reject record."""
    from stopwise._redact import redact_url

    err_console.print(
        f"[bold yellow]warning:[/] {n} row(s) arrived after evaluation {escape(evaluation)} was decided "
        f"({decided.record.action.upper()} at decision #{decided.sequence}, taken on the events up to sequence "
        f"{decided.outcome_seq}); they are kept, counted in later records and marked after_decision in a full export. "
        f"The decision's own events: stopwise ledger export {escape(redact_url(url))} {escape(evaluation)} "
        f"--upto-decision {decided.sequence} -o FILE",
        soft_wrap=True,
    )


@ledger_app.command("decide")
def decide_command(
    url: Url,
    evaluation: Evaluation,
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision record as JSON.")] = False,
    no_record: Annotated[bool, typer.Option("--no-record", help="Compute the decision without appending it to the chain.")] = False,
    family: Annotated[
        bool, typer.Option("--family", help="A family evaluation (ledger init --family): print its family look (as stopwise leaderboard).")
    ] = False,
    upto: Annotated[
        int | None,
        typer.Option("--upto", min=1, help="With --family: the look on the events up to this outcome sequence (a log's outcome_seq)."),
    ] = None,
) -> None:
    r"""Decide from the stored outcomes with the registered policy and universe; append the record to the chain.

    With --family, take a look at a family evaluation (every system decided together under the policy's \[family]
    section): the claims stopwise leaderboard makes on the ledger export with the policy and the tasks; it is
    not appended to the chain. Exit code: promote 0, reject 1, continue 2, abstain 3, error 4; with --family:
    0 the family's question is answered, 2 it needs more tasks.
    """
    from stopwise.cli.compare import exit_with_record

    if upto is not None and not family:
        with user_errors():
            raise InputError("--upto takes a family look at a past high-water mark: give it with --family")
    if family:
        from stopwise.cli.leaderboard import exit_with_family

        with user_errors(), _open(url, "read") as ledger:
            look = ledger.decide_family(evaluation, upto=upto)
        exit_with_family(look, as_json=as_json)

    with user_errors(), _open(url, "read" if no_record else "write") as ledger:
        record = ledger.decide(evaluation, record=not no_record)
        decided = ledger.first_decision(evaluation) if record.ledger is not None and record.ledger.after_decision else None
    if decided is not None and record.ledger is not None:
        err_console.print(
            f"[bold yellow]note:[/] {record.ledger.after_decision} of the {record.ledger.n_events} events this record "
            f"counts were stored after decision #{decided.sequence} ({decided.record.action.upper()}, the first that "
            f"decided); that decision is reproduced from its own events by ledger export --upto-decision {decided.sequence}",
            soft_wrap=True,
        )
    exit_with_record(record, as_json=as_json)


@ledger_app.command("verify")
def verify_command(
    url: Url,
    evaluation: Evaluation,
    expect_head: Annotated[
        str | None,
        typer.Option("--expect-head", help="A head kept from an earlier verify, decide or export (e<events>-d<decisions>-<digest>): "
                     "the ledger must extend it (detects events or decisions removed from its end)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verification result as JSON.")] = False,
) -> None:
    """Recompute the registration, every outcome digest, the decision chain, every decision and its position.

    Prints the evaluation's head: keep it outside the ledger and pass it back with --expect-head to
    detect truncation (what a writer with database access can and cannot forge: docs/ledger.md).

    Exit code: 0 when everything recomputes, 1 at the first mismatch (which is printed), 4 on error.
    """
    with user_errors(), _open(url, "read") as ledger:
        result = ledger.verify(evaluation, expect_head=expect_head)
    if as_json:
        from dataclasses import asdict

        payload = asdict(result)
        payload["head"] = None if result.head is None else {**asdict(result.head), "token": str(result.head)}
        print_json(payload)
        if not result.ok:
            raise typer.Exit(1)
        return
    if result.ok:
        against = " and extend the head you kept" if expect_head else ""
        console.print(
            f"[bold green]OK[/] {escape(result.evaluation)}: {result.n_outcomes} outcome events and "
            f"{result.n_decisions} decisions recompute{against}; chain digest {result.head_digest}"
        )
        console.print(f"head {result.head} (keep it; check later with --expect-head)", soft_wrap=True)
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
    upto_decision: Annotated[
        int | None,
        typer.Option("--upto-decision", min=1, help="Export exactly the events decision K (its sequence, 1, 2, ...) was "
                     "taken on, and the history up to it: stopwise decide on them gives that record again."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print {wrote: the list of paths written, head} as JSON.")] = False,
) -> None:
    """Write the outcome rows (readable by `stopwise decide` and `replay` unchanged) and the decision history.

    Files are written atomically; an existing file is refused without --force. Once the evaluation is
    decided, rows stored after its first promote/reject record are marked in a column after_decision.
    Prints the evaluation's head (keep it; ledger verify --expect-head checks the ledger still extends it).

    Example: stopwise ledger export ledger.db my-eval -o rows.csv --decisions decisions.jsonl --upto-decision 3
    """
    from stopwise._atomic import Outputs, check_output_plan

    with user_errors():  # every output refused before either is written: a clash, a missing folder, a device
        check_output_plan([("--out", out, None), ("--decisions", decisions, None)], force=force, create_folders=False)
    with user_errors(), _open(url, "read") as ledger, Outputs(force=force) as outputs:
        rows_tmp = outputs.file(out)
        decisions_tmp = outputs.file(decisions) if decisions is not None else None
        ledger.export(evaluation, rows_tmp, decisions_path=decisions_tmp, force=True, upto_decision=upto_decision)  # moved into place together
        head = ledger.head(evaluation)
    written = [str(path) for path in (out, decisions) if path is not None]
    if as_json:
        print_json({"wrote": written, "head": str(head)})
        return
    for path in written:
        console.print(f"wrote {escape(path)}")
    console.print(f"head {head} (keep it; check later with stopwise ledger verify --expect-head)", soft_wrap=True)


@ledger_app.command("conflicts")
def conflicts_command(
    url: Url,
    evaluation: Evaluation,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """List the refused (conflicting) events of an evaluation: each field where one differs, stored value beside refused."""
    with user_errors(), _open(url, "read") as ledger:
        frame = ledger.conflicts(evaluation)
    if as_json:
        for record in frame.to_dict(orient="records"):
            typer.echo(json.dumps(record))
        return
    if frame.empty:
        console.print("no conflicts")
        return
    table = Table(box=None, padding=(0, 2))
    for column in ("system", "task", "attempt", "received_at", "field", "stored", "refused"):
        table.add_column(column)
    for r in frame.itertuples():
        for field, stored, refused in _differences(r.stored_json, r.row_json):
            table.add_row(escape(r.system), escape(r.task), str(r.attempt), r.received_at, escape(field), escape(stored), escape(refused))
    console.print(table)


def _differences(stored_json: str, refused_json: str) -> list[tuple[str, str, str]]:
    """(field, stored value, refused value) of every field where a refused event differs from the stored one."""
    refused = json.loads(refused_json)
    stored = json.loads(stored_json) if stored_json else {}
    fields = [k for k in sorted(set(stored) | set(refused)) if k != "source" and stored.get(k) != refused.get(k)]
    shown = [(k, json.dumps(stored.get(k)), json.dumps(refused.get(k))) for k in fields]
    return shown or [("source", json.dumps(stored.get("source")), json.dumps(refused.get("source")))]


def _look_table(title: str, counters: list[tuple[str, str]], record: DecisionRecord | None, waiting: str | None, status: str) -> Table:
    """The live table of ``stopwise watch`` (a ledger or an Inspect log directory)."""
    table = Table(title=f"stopwise watch · {escape(title)}", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("status", status)
    for label, value in counters:
        table.add_row(label, value)
    if not counters:
        return table
    if record is None:
        table.add_row("waiting", escape(waiting or ""))
        return table
    colour = {"promote": "green", "reject": "red", "continue": "yellow", "abstain": "magenta"}[record.action]
    table.add_row("action", f"[bold {colour}]{record.action.upper()}[/]")
    table.add_row("reason", escape(record.reason))
    table.add_row("observed", f"{record.n_observed} of {record.n_shared} tasks")
    fmt = (lambda v: "-" if v is None else f"{v:.4g}")  # noqa: E731
    table.add_row("delta_hat", fmt(record.delta_hat))
    table.add_row("R_promote / R_reject", f"{fmt(record.r_promote)} / {fmt(record.r_reject)}")
    return table


def _ledger_counters(look: Look) -> list[tuple[str, str]]:
    return [("outcome events", str(look.outcome_seq)), ("elapsed", f"{look.elapsed_s:.1f} s")]


_SHOWN_WAITING = 5


def _log_counters(look: LogLook) -> list[tuple[str, str]]:
    rows = [
        ("logs read", f"{look.logs_read} finished ({look.n_rows} rows; systems: {escape(', '.join(look.systems)) or 'none'})"),
        ("elapsed", f"{look.elapsed_s:.1f} s"),
    ]
    if look.waiting:
        shown = "\n".join(escape(w) for w in look.waiting[:_SHOWN_WAITING])
        more = len(look.waiting) - _SHOWN_WAITING
        rows.append((f"not finished ({len(look.waiting)})", shown + (f"\n... and {more} more" if more > 0 else "")))
    from stopwise.cli._live import live_counters

    return rows + live_counters(look)


_AnyLook = TypeVar("_AnyLook", bound="FollowLook")


def _follow_live(
    title: str,
    looks: Iterable[_AnyLook],
    counters: Callable[[_AnyLook], list[tuple[str, str]]],
    waiting: Callable[[_AnyLook], str | None],
    *,
    as_json: bool = False,
) -> _AnyLook | None:
    """Show each look in the live table of ``stopwise watch`` as it comes (on standard error with --json); the last look (None when there was none)."""
    from rich.live import Live

    last: _AnyLook | None = None
    on = err_console if as_json else console  # with --json, standard output holds the record alone
    with Live(_look_table(title, [], None, None, "starting"), console=on, transient=not on.is_terminal, auto_refresh=False) as live:
        for look in looks:
            last = look
            rows = counters(look) + _next_counters(look)
            live.update(_look_table(title, rows, look.record, waiting(look), "decided" if look.final else "following"), refresh=True)
    if last is not None and not last.final and last.next is not None and last.next.tasks:
        on.print("\n".join(escape(line) for line in ["next tasks: " + last.next.lines()[0], *last.next.lines()[1:]]), soft_wrap=True)
    return last


_SHOWN_NEXT = 5


def _next_counters(look: FollowLook) -> list[tuple[str, str]]:
    """The live table's row of the tasks to run next, top-up first (none once decided or without a planned order)."""
    upcoming = look.next
    if upcoming is None or not upcoming.tasks:
        return []
    first = upcoming.tasks[:_SHOWN_NEXT]
    shown = ", ".join(f"{escape(t.task)} ({t.why})" for t in first)
    more = upcoming.remaining - len(first)
    return [("next tasks", shown + (f", ... {more} more" if more > 0 else ""))]


def _finish(record: DecisionRecord | None, waiting: str | None, *, as_json: bool = False) -> NoReturn:
    """Print the last decision (JSON with ``as_json``) and exit with its code (2 while there is none)."""
    from stopwise.cli.compare import exit_with_record

    if record is None:
        if as_json:
            print_json({"action": None, "waiting": waiting or "no outcomes"})
        else:
            console.print(f"no decision yet: {escape(waiting or 'no outcomes')}")
        raise typer.Exit(2)
    exit_with_record(record, as_json=as_json)


Target = Annotated[
    str,
    typer.Argument(
        help="A ledger (a path, sqlite:///path or postgresql+psycopg://user@host:port/db), or an Inspect log directory.",
        metavar="LEDGER|LOGDIR",
        show_default=False,
    ),
]
_PANEL = "Inspect log directory"


def watch_command(
    target: Target,
    evaluation: Annotated[str | None, typer.Argument(help="The evaluation's name (a ledger only).", metavar="EVALUATION", show_default=False)] = None,
    tested: Annotated[str | None, tested_option(_PANEL)] = None,
    baseline: Annotated[str | None, baseline_option(_PANEL)] = None,
    policy: Annotated[Path | None, policy_option(_PANEL)] = None,
    tasks: Annotated[Path | None, tasks_option(_PANEL)] = None,
    n_tasks: Annotated[int | None, n_tasks_option(_PANEL)] = None,
    group_size: Annotated[list[str] | None, group_size_option(_PANEL)] = None,
    system: Annotated[str | None, system_option(_PANEL)] = None,
    system_from: Annotated[list[str] | None, system_from_option(_PANEL)] = None,
    scorer: Annotated[str | None, scorer_option(_PANEL, help="The scorer whose value is the outcome (NAME or NAME:KEY).")] = None,
    errors: Annotated[str, errors_option(_PANEL)] = "pending",
    elapsed: Annotated[str, elapsed_option(_PANEL)] = "total",
    interval: Annotated[float, typer.Option("--interval", help="Seconds between polls.")] = 1.0,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Give up after this many seconds (exit 2).")] = None,
    once: Annotated[bool, typer.Option("--once", help="Take one look and exit with its code.")] = False,
    no_record: Annotated[bool, typer.Option("--no-record", help="Do not append the looks' decisions to the chain (a ledger).")] = False,
    force_record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="Take and record a first look even without new evidence (a ledger; by default a look whose events the chain's "
            "last decision already saw, or of a decided evaluation, reports that decision and appends nothing).",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the last decision record as JSON (the live table goes to standard error).")
    ] = False,
    stop_command: Annotated[
        str | None, typer.Option("--stop-command", help="Run this shell command once when decided (e.g. cancel the job); "
                                 "STOPWISE_ACTION holds the action.", metavar="CMD")
    ] = None,
) -> None:
    """Follow a ledger, or an Inspect log directory as its logs finish; exit with the decision's code once decided.

    A ledger: decide at every new outcome event with the registered policy and universe; each look is appended to the decision chain unless --no-record.

    An Inspect log directory: read each log once it has finished (running or half-written files are looked at again later) and decide on the rows of all finished logs with --policy and the planned tasks (--tasks or --n-tasks). Name the systems as `stopwise ingest` does (--system-from file when the logs come from one model).

    A Harbor job folder or a SWE-bench logs/run_evaluation/<run_id> tree: read each trial / instance once its result is complete (trials in progress and half-written files are looked at again later), and decide as for a log directory.

    Exit code: promote 0, reject 1, abstain 3; continue 2 after --timeout or --once; error 4.
    """
    try:
        _watch(target, evaluation, tested, baseline, policy, tasks, n_tasks, group_size, system, system_from, scorer,
               errors, elapsed, interval, timeout, once, no_record, force_record, as_json)
    except typer.Exit as done:
        if stop_command:
            from stopwise.cli._stop import run_stop_command

            run_stop_command(stop_command, done.exit_code)
        raise


def _watch(
    target: str, evaluation: str | None, tested: str | None, baseline: str | None, policy: Path | None,
    tasks: Path | None, n_tasks: int | None, group_size: list[str] | None, system: str | None,
    system_from: list[str] | None, scorer: str | None, errors: str, elapsed: str, interval: float,
    timeout: float | None, once: bool, no_record: bool, force_record: bool, as_json: bool,
) -> NoReturn:
    """The body of ``watch`` (its exit is the decision's)."""
    log_dir = "://" not in target and Path(target).is_dir()
    log_options = {
        "--tested": tested, "--baseline": baseline, "--policy": policy, "--tasks": tasks, "--n-tasks": n_tasks,
        "--group-size": group_size, "--system": system, "--system-from": system_from, "--scorer": scorer,
        "--errors": None if errors == "pending" else errors, "--elapsed": None if elapsed == "total" else elapsed,
    }
    given = [name for name, value in log_options.items() if value]
    with user_errors():  # every argument rule of both kinds of target, before anything is opened
        if log_dir:
            if evaluation is not None:
                raise InputError(
                    f"{target}: is an Inspect log directory, which has no evaluations; give the systems instead: "
                    f"stopwise watch {target} --tested A --baseline B (got the extra argument {evaluation!r})"
                )
            if no_record or force_record:
                raise InputError(
                    f"{'--no-record' if no_record else '--record'} applies to a ledger; following an Inspect log "
                    "directory records nothing"
                )
            if not tested or not baseline:
                raise InputError(f"{target}: is an Inspect log directory; give the systems to compare with --tested and --baseline")
        else:
            if given:
                raise InputError(
                    f"{target}: is not a directory, so it is read as a ledger, whose evaluation has its systems, "
                    f"policy and universe registered; {', '.join(given)} apply to an Inspect log directory"
                )
            if evaluation is None:
                raise InputError("give the evaluation to follow: stopwise watch LEDGER EVALUATION (or an Inspect log directory)")
            if no_record and force_record:
                raise InputError("--record and --no-record exclude each other")
    if log_dir:
        assert tested and baseline
        _watch_logs(
            target, tested=tested, baseline=baseline, policy=policy, tasks=tasks, n_tasks=n_tasks,
            group_size=group_size or [], system=system, system_from=system_from or [], scorer=scorer, errors=errors,
            elapsed=elapsed, interval=interval, timeout=0.0 if once else timeout, as_json=as_json,
        )
    assert evaluation is not None
    _watch_ledger(target, evaluation, interval=interval, timeout=0.0 if once else timeout, no_record=no_record,
                  force=force_record, as_json=as_json)


def _watch_ledger(
    url: str, evaluation: str, *, interval: float, timeout: float | None, no_record: bool, force: bool = False,
    as_json: bool = False,
) -> NoReturn:
    from stopwise.live import follow

    with user_errors(), _open(url, "read" if no_record else "write") as ledger:
        looks = follow(ledger, evaluation, interval=interval, timeout=timeout, record=not no_record, force=force)
        last = _follow_live(evaluation, looks, _ledger_counters, lambda look: look.waiting, as_json=as_json)
    if last is None:
        _finish(None, "no outcomes", as_json=as_json)
    _finish(last.record, last.waiting, as_json=as_json)


def _watch_logs(
    directory: str,
    *,
    tested: str,
    baseline: str,
    policy: Path | None,
    tasks: Path | None,
    n_tasks: int | None,
    group_size: list[str],
    system: str | None,
    system_from: list[str],
    scorer: str | None,
    errors: str,
    elapsed: str,
    interval: float,
    timeout: float | None,
    as_json: bool = False,
) -> NoReturn:
    from stopwise.errors import ValidationError
    from stopwise.live import follow_inspect_logs, follow_run_folder, run_folder_kind
    from stopwise.records import Policy, load_policy

    with user_errors():
        system = system_naming(system, system_from)
        chosen = load_policy(policy) if policy is not None else Policy()
        universe = task_universe(tasks, n_tasks, group_size, chosen.coverage.group_column)
        follower = follow_run_folder if run_folder_kind(directory) else follow_inspect_logs  # Harbor, SWE-bench
        looks = follower(
            directory, tested, baseline, chosen, universe=universe, system=system, scorer=scorer, errors=errors,
            elapsed=elapsed, interval=interval, timeout=timeout,
        )
        try:
            last = _follow_live(f"{directory}: {tested} vs {baseline}", looks, _log_counters, lambda look: look.reason, as_json=as_json)
        except ValidationError as exc:
            hint_system_naming(exc, system)
            raise
    if last is None:
        _finish(None, "no finished Inspect log", as_json=as_json)
    with user_errors():
        _check_systems_read(directory, last, tested, baseline)
    if last.live is not None:  # the paired manager's decision, carried by the logs, is the evaluation's
        from stopwise.cli._live import finish_live

        finish_live(last, as_json=as_json)
    _finish(last.record, last.reason, as_json=as_json)


def _check_systems_read(directory: str, look: Any, tested: str, baseline: str) -> None:
    """Refuse (exit 4) a look that read finished logs but no row of ``tested`` or ``baseline``.

    Only once nothing is left to read (or the logs carry a live decision): the logs name the systems otherwise
    (``--system-from``).
    """
    from stopwise.ingest import SYSTEM_SOURCES

    missing = [name for name in (tested, baseline) if name not in look.systems]
    if not look.logs_read or not missing or (look.waiting and look.live is None):
        return
    named = ", ".join(repr(s) for s in look.systems[:6]) + (" ..." if len(look.systems) > 6 else "") or "no system"
    raise InputError(
        f"{directory}: read {look.n_rows} rows from {look.logs_read} finished log(s) but none of "
        f"{' or '.join(repr(m) for m in missing)}; the rows name {named}. Name the systems as the logs do "
        f"(--tested/--baseline), or name each log's system with --system-from ({', '.join(SYSTEM_SOURCES)}), e.g. "
        "--system-from task when each system ran as its own task"
    )


def register(app: typer.Typer) -> None:
    """Add ``ledger`` (a command group) and ``watch`` to the top-level app."""
    app.add_typer(ledger_app, name="ledger")
    app.command("watch")(watch_command)
