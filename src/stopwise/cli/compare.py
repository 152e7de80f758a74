"""``stopwise decide``, ``stopwise policy init`` and ``stopwise demo``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.table import Table

from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise.cli._common import (
    BaselineSystem,
    GroupSizes,
    Inputs,
    PlannedCount,
    PlannedTasks,
    PolicyFile,
    TestedSystem,
    console,
    input_path,
    print_json,
    task_universe,
    user_errors,
)
from stopwise.errors import InputError

if TYPE_CHECKING:  # the library is imported inside the commands: `stopwise --help` stays light

    from stopwise.records import DecisionRecord

policy_app = typer.Typer(help="Write and check comparison policies.", no_args_is_help=True)

PER_PAIR_SCOPE = "guarantee per pair: this comparison only; claims about several pairs need a family control (stopwise leaderboard)"
"""What a single-pair record's guarantee covers, printed under its claim (the record's JSON is unchanged)."""


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_record(record: DecisionRecord) -> None:
    """Print a decision record as a short readable summary: the claim sentence first, then the interval and the details.

    Probabilities are printed with significant digits (``3.9e-05``, never ``0.0000``), the interval as the
    record's claim prints it (:func:`stopwise.compare.interval_text`), so console, JSON and report agree.
    """
    from stopwise.compare import interval_text

    def sig(value: float | None) -> str:
        return "-" if value is None else f"{value:.3g}"

    colour = {"promote": "green", "reject": "red", "continue": "yellow", "abstain": "magenta"}[record.action]
    console.print(
        f"[bold {colour}]{record.action.upper()}[/]  {escape(record.tested)} vs {escape(record.baseline)}  "
        f"(delta = {record.threshold:g}, a = {record.tail_cutoff:g}, boundary {record.boundary})"
    )
    if record.claim:
        console.print(f"  claim      {escape(record.claim)}")
    console.print(f"  scope      {PER_PAIR_SCOPE}")
    estimand = record.estimand
    if estimand is not None:
        rerun = "" if estimand.rerun_sd is None else (
            f"; new runs (one attempt per task) would move the difference by about {estimand.rerun_sd * 100:.1f} pp (SD, estimated "
            f"from within-task attempt variance, {estimand.attempts:.3g} attempts per task)"
        )
        console.print(f"  estimand   {escape(estimand.text)}{rerun}")
    ci = record.interval
    if ci is not None and estimand is not None and estimand.kind == "planned-tasks" and ci.low == ci.high and record.n_observed == record.n_planned:
        console.print(f"  exact      every planned task observed: the mean difference over them is {ci.low * 100:+.2f} pp (no interval to estimate)")
    elif ci is not None:
        console.print(f"  interval   {escape(interval_text(ci, record.threshold))} ({escape(ci.method)})")
    if record.forecast is not None:
        f = record.forecast
        if f.n_simulations == 0:
            console.print(f"  forecast   {f.median:.0f} more tasks: the top-up tasks the crossed boundary waits for")
        else:
            when = "before the limit" if record.boundary == "betting-wor" else "at the limit (the fixed-budget rule acts only there)"
            console.print(
                f"  forecast   {f.median:.0f} more tasks (median; 80 % range {f.low:.0f}-{f.high:.0f}); "
                f"{f.decided_share * 100:.0f} % of {f.n_simulations} simulated completions decide {when} (seed {f.seed})"
            )
    console.print(f"  reason     {escape(record.reason)}")
    universe = record.universe
    if universe is None:
        console.print(f"  universe   none given: N = {record.n_planned} inferred from the rows")
    else:
        kind = {"tasks": "planned tasks", "counts": "counts", "complete-record": "complete record (declared)"}[universe.source]
        console.print(f"  universe   {kind}: N = {universe.n_tasks}; sha256 {universe.sha256[:16]}…")
    console.print(
        f"  observed   {record.n_observed} of {record.n_planned} planned tasks"
        + (f" ({record.waiting} waiting beyond the observed prefix)" if record.waiting else "")
        + f"; budget {record.budget.used:.4g} of {record.budget.limit:.4g} {record.budget.measure}"
        + (" (at limit)" if record.budget.at_limit else "")
    )
    names = ("p_promote", "p_reject") if record.boundary == "betting-wor" else ("R_promote", "R_reject")
    console.print(
        f"  margin     delta_hat = {_fmt(record.delta_hat)}; {names[0]} = {sig(record.r_promote)}, "
        f"{names[1]} = {sig(record.r_reject)} ({escape(record.tail_method)})"
    )
    cov = record.coverage
    status = (
        "satisfied"
        if cov.satisfied
        else ("impossible at this count" if not cov.possible else "missing " + ", ".join(cov.missing_groups))
    )
    if record.top_up:  # issue 35: one list -- the tasks the action waits for, the groups they fill (the reason's own)
        shown = ", ".join(record.top_up[:20]) + (f", ... ({len(record.top_up)} in all)" if len(record.top_up) > 20 else "")
        status = f"the crossed boundary waits for {len(record.top_up)} top-up task(s) {shown} (group(s) {', '.join(cov.missing_groups)})"
    elif cov.deferred:  # the top-up design before its crossing: no group is waited for (issue 35)
        status = ("no group waited for before the boundary crosses: run the next tasks of the planned order "
                  "(the crossing names the top-up tasks that bring coverage)")
    console.print(f"  coverage   {cov.rule}: {escape(status)}")
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    for column in ("group", "planned", "required", "seen"):
        table.add_column(column, justify="left" if column == "group" else "right")
    waited = set(cov.missing_groups)
    for g in cov.groups:
        marker = " !" if g.group in waited else ""
        table.add_row(escape(g.group) or "(none)", str(g.size), str(g.required), f"{g.seen}{marker}")
    console.print(table)
    for e in record.excluded:
        console.print(f"  excluded   {e.rows} row(s) on {e.tasks} task(s): {escape(e.reason)}")
    for warning in record.warnings:
        console.print(f"  [bold yellow]warning[/]    {escape(warning)}")
    console.print(f"  policy     sha256 {record.policy_sha256[:16]}…  input sha256 {record.input_sha256[:16]}…")


def exit_with_record(record: DecisionRecord, *, as_json: bool = False) -> NoReturn:
    """Print a decision record (JSON, or the readable summary) and exit with its action's code (promote 0 … abstain 3)."""
    from stopwise.records import ACTIONS

    if as_json:
        typer.echo(record.model_dump_json(indent=2))
    else:
        print_record(record)
    raise typer.Exit(ACTIONS.index(record.action))


def decide_command(
    outcomes: Annotated[
        list[Path], typer.Argument(help="Outcome rows (.csv, .jsonl or .parquet); several files are joined; '-' reads standard input.")
    ],
    tested: TestedSystem,
    baseline: BaselineSystem,
    policy: PolicyFile = None,
    tasks: PlannedTasks = None,
    n_tasks: PlannedCount = None,
    group_size: GroupSizes = None,
    complete: Annotated[
        bool, typer.Option("--complete", help="The files are a finished record: the shared tasks are the whole universe.")
    ] = False,
    budget_used: Annotated[
        float | None, typer.Option("--budget-used", help="Budget used so far, in the policy's measure (0 to the limit).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision record as JSON (with a UTC decided_at).")] = False,
) -> None:
    """Decide one comparison from the outcomes seen so far.

    Give the planned tasks (--tasks, or --n-tasks and --group-size): without them no final action
    is taken before the budget limit, unless --complete says the files hold a finished record.
    Exit code: promote 0, reject 1, continue 2, abstain 3, error 4.
    """
    from stopwise.compare import decide
    from stopwise.records import Policy, load_policy, read_outcomes

    with user_errors(), Inputs(outcomes) as inputs:
        chosen = load_policy(policy) if policy is not None else Policy()
        universe = task_universe(tasks, n_tasks, group_size, chosen.coverage.group_column)
        rows = read_outcomes(inputs.files(outcomes))
        record = decide(rows, tested, baseline, chosen, universe=universe, budget_used=budget_used, complete=complete)
    exit_with_record(record, as_json=as_json)


@policy_app.command("init")
def policy_init(
    path: Annotated[Path | None, typer.Argument(help="Where to write the policy; stdout when omitted.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    preset: Annotated[
        str,
        typer.Option(
            "--preset",
            metavar="default|paper",
            help="'default': the paper's rule with the exact-wor one-look test on a uniform order (keeps level a); "
            "'paper': the paper's primary policy as published (exact bootstrap tail), for reproduction.",
        ),
    ] = "default",
) -> None:
    """Write a commented policy: the default (exact-wor one-look test) or the paper's primary one (--preset paper)."""
    from stopwise.records import DEFAULT_POLICY_TOML, PAPER_POLICY_TOML

    presets = {"default": DEFAULT_POLICY_TOML, "paper": PAPER_POLICY_TOML}
    if preset not in presets:
        with user_errors():
            raise InputError(f"--preset must be one of {', '.join(presets)}; got {preset!r}")
    text = presets[preset]
    if path is None:
        typer.echo(text, nl=False)
        return
    from stopwise._atomic import Outputs

    with user_errors(), Outputs(force=force) as outputs:
        outputs.file(path).write_text(text, encoding="utf-8")
    console.print(f"wrote {escape(str(path))}")


@policy_app.command("check")
def policy_check(
    path: Annotated[Path, typer.Argument(help="Policy TOML to validate; '-' reads standard input.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print {policy, sha256} as JSON.")] = False,
) -> None:
    """Validate a policy and print its canonical JSON and sha256."""
    import json

    from stopwise.records import load_policy

    with user_errors(), input_path(path, suffix=".toml") as readable:
        policy = load_policy(readable)
    if as_json:
        print_json({"policy": json.loads(policy.canonical_json()), "sha256": policy.sha256()})
        return
    typer.echo(policy.canonical_json())
    typer.echo(f"sha256 {policy.sha256()}")


MAX_DEMO_TASKS = 10_000
MAX_DEMO_SYSTEMS = 20
MIN_DEMO_TASKS = 6  # one task per group of stopwise.records.synthetic_benchmark (a test keeps them equal)
MIN_DEMO_SYSTEMS = 2
"""Bounds of ``stopwise demo`` (memory grows with tasks x systems)."""


def demo_command(
    seed: Annotated[int, typer.Option(min=0, help="Seed of the synthetic record and the task order.")] = 0,
    n_tasks: Annotated[int, typer.Option("--n-tasks", help="Tasks in the synthetic benchmark (N).")] = 400,
    systems: Annotated[int, typer.Option(help="Systems in the synthetic benchmark.")] = 8,
    out: Annotated[
        Path | None, typer.Option(help="Also write the record and decision records into this (new or empty) directory.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an earlier --out directory of stopwise.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision records as JSON lines.")] = False,
) -> None:
    """Run one comparison on a seeded synthetic benchmark (labelled synthetic) at several budgets.

    --n-tasks is a count; elsewhere --tasks names a planned-tasks file.
    """
    from stopwise._atomic import Outputs
    from stopwise.compare import demo_comparison
    from stopwise.records import write_outcomes

    with user_errors(), Outputs(force=force) as outputs:
        folder = outputs.directory(out) if out is not None else None
        if not (MIN_DEMO_TASKS <= n_tasks <= MAX_DEMO_TASKS and MIN_DEMO_SYSTEMS <= systems <= MAX_DEMO_SYSTEMS):
            raise InputError(
                f"the demo takes --n-tasks {MIN_DEMO_TASKS} to {MAX_DEMO_TASKS:,} and --systems {MIN_DEMO_SYSTEMS} to "
                f"{MAX_DEMO_SYSTEMS}; got --n-tasks {n_tasks:,}, --systems {systems:,}"
                + (" (stopwise.records.synthetic_benchmark has no upper limit)" if n_tasks > MAX_DEMO_TASKS or systems > MAX_DEMO_SYSTEMS else "")
            )
        demo = demo_comparison(seed, n_tasks, systems)
        records = demo.decisions
        if folder is not None:
            write_outcomes(demo.rows, folder / "synthetic_outcomes.csv")
            (folder / "decisions.jsonl").write_text("".join(r.model_dump_json() + "\n" for _, r in records), encoding="utf-8")
    if as_json:
        for _, record in records:
            typer.echo(record.model_dump_json())
    else:
        console.print(
            f"[bold]stopwise demo[/] — SYNTHETIC benchmark (item-response model, seed {seed}): "
            f"{n_tasks} tasks in 6 groups, {systems} systems. Comparing {demo.tested} (A) against {demo.baseline} (B); "
            "each budget is treated as the limit; the first tasks of a seeded uniformly random order of the planned "
            "tasks (the task universe) are observed; the default policy (the exact-wor one-look test) with the tolerant "
            "coverage rule (a uniform order meets it up to sampling noise)."
        )
        table = Table(header_style="bold")
        for column in ("budget", "observed", "delta_hat", "R_promote", "R_reject", "coverage", "action"):
            table.add_column(column, justify="right")
        for budget, r in records:
            table.add_row(
                f"{budget:.0%}",
                f"{r.n_observed}/{r.n_shared}",
                _fmt(r.delta_hat, 3),
                _fmt(r.r_promote),
                _fmt(r.r_reject),
                "ok" if r.coverage.satisfied else ("impossible" if not r.coverage.possible else "missing"),
                r.action,
            )
        console.print(table)
        full = records[-1][1]
        console.print("Decision record at 100 % budget:")
        print_record(full)
    if out is not None:
        console.print(f"wrote {escape(str(out / 'synthetic_outcomes.csv'))} and {escape(str(out / 'decisions.jsonl'))}")


def order_command(
    tasks: Annotated[
        Path, typer.Argument(help="Task list or outcome rows (.csv, .jsonl, .parquet) with a task column; '-' reads standard input.")
    ],
    policy: Annotated[Path | None, typer.Option("--policy", "-p", help="Policy TOML (its \\[order] kind and seed).")] = None,
    cost_system: Annotated[str | None, typer.Option(help="For a cost-first order: the system whose cost_usd ranks tasks.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the order as CSV here (default: print it).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out file.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the order and its policy sha256 as JSON.")] = False,
) -> None:
    """Write the task order a live evaluation should follow, fixed by the policy before any outcome.

    The output is stamped with the kind drawn, its seed and a digest (columns order_kind, order_seed,
    order_sha256), which decide checks under the betting-wor boundary.
    """
    import pandas as pd

    from stopwise._atomic import Outputs
    from stopwise._csv_cells import protect_frame
    from stopwise.compare import task_order
    from stopwise.records import Policy, TaskUniverse, load_policy, read_table

    with user_errors(), Outputs(force=force) as outputs, input_path(tasks) as readable:
        out_tmp = outputs.file(out) if out is not None else None
        chosen = load_policy(policy) if policy is not None else Policy()
        cells = read_table(readable, what="task list", lists=("flags",)).cells
        if "system" not in cells and "task" in cells:  # a task list, not outcome rows: each task once, as decide --tasks requires
            TaskUniverse(["" if t is None else str(t) for t in cells["task"]], source=str(tasks))
        frame = pd.DataFrame(cells)
        order = task_order(frame, chosen, cost_system=cost_system)
        if out_tmp is not None:
            protect_frame(order).to_csv(out_tmp, index=False)  # task and group names a spreadsheet would run are quoted
    first = order.loc[order["covered"], "position"]
    kind, digest = str(order["order_kind"].iloc[0]), str(order["order_sha256"].iloc[0])  # the kind drawn (uniform under top-up)
    if as_json:
        print_json({"policy_sha256": chosen.sha256(), "kind": kind, "seed": chosen.order.seed, "order_sha256": digest, "order": order})
        return
    design = " (the betting boundary's top-up design: a uniformly random permutation)" if kind != chosen.order.kind else ""
    console.print(
        f"{len(order)} tasks in {order['group'].nunique()} group(s); order {kind}{design} (seed {chosen.order.seed}, sha256 {digest[:16]}…); "
        f"policy sha256 {chosen.sha256()[:16]}…; coverage rule first met after {int(first.iloc[0]) if len(first) else '—'} tasks"
    )
    if out is not None:
        console.print(f"wrote {escape(str(out))}")
    else:
        typer.echo(protect_frame(order).to_csv(index=False), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``decide``, ``order``, ``next``, ``policy`` and ``demo`` to the top-level app."""
    from stopwise.cli._next import next_command

    app.command("decide")(decide_command)
    app.command("order")(order_command)
    app.command("next")(next_command)
    app.command("demo")(demo_command)
    app.add_typer(policy_app, name="policy")
