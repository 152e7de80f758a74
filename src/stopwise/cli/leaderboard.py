"""``stopwise leaderboard``: a family of systems decided together, with its ranks, tiers and pairwise claims."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.table import Table

from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise.cli._common import (
    GroupSizes,
    Inputs,
    PlannedCount,
    PlannedTasks,
    PolicyFile,
    console,
    task_universe,
    user_errors,
)
from stopwise.errors import InputError

if TYPE_CHECKING:  # the library is imported inside the command: `stopwise --help` stays light
    from stopwise.records import FamilyRecord, Policy

__all__ = ["register"]

EXIT_ANSWERED, EXIT_MORE_TASKS = 0, 2
"""Exit codes: the family's question is answered; it needs more tasks (4: an input error)."""
_MATRIX = {"promote": ">", "reject": "<"}
"""Matrix cells: the row beats the column (>), the column beats the row (<), equivalent (=), not separated (·)."""
MAX_MATRIX = 60
"""Largest family whose pairwise matrix is printed (wider ones are in --json and --html)."""


def _family_policy(policy: Policy, kind: str | None, baseline: str | None, control: str | None, equivalence: float | None) -> Policy:
    """The policy with the options' overrides of its ``[family]`` section, validated like the file."""
    from stopwise.records import FamilyPolicy

    given = {"kind": kind, "baseline": baseline, "control": control, "equivalence": equivalence}
    changes = {name: value for name, value in given.items() if value is not None}
    if baseline is not None and kind is None:
        changes["kind"] = "baseline"
    if not changes:
        return policy
    import pydantic

    try:
        family = FamilyPolicy.model_validate({**policy.family.model_dump(), **changes})
    except pydantic.ValidationError as exc:
        problem = exc.errors()[0]
        raise InputError(f"--{str(problem['loc'][0]) if problem['loc'] else 'kind'}: {problem['msg']}") from None
    return policy.model_copy(update={"family": family})


def _ranks_table(record: FamilyRecord) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    for column in ("#", "system", "mean", "rank", "rank interval", "tier"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for index, row in enumerate(record.ranks, start=1):
        mean = "-" if row.mean is None else f"{100 * row.mean:.1f} %"
        table.add_row(str(index), escape(row.system), mean, str(row.rank), f"[{row.rank_low}, {row.rank_high}]", str(row.tier or "-"))
    return table


def _matrix(record: FamilyRecord) -> list[str]:
    """The pairwise matrix as lines: rows and columns in rank order, numbered as the ranks table."""
    names = [row.system for row in record.ranks]
    index = {name: i for i, name in enumerate(names)}
    cells = [["·" if i != j else " " for j in range(len(names))] for i in range(len(names))]
    for pair in record.pairs:
        i, j = index[pair.tested], index[pair.baseline]
        mark = _MATRIX.get(pair.action, "=" if pair.equivalent else "·")
        cells[i][j] = mark
        if pair.action in _MATRIX and record.kind == "baseline":
            cells[j][i] = "<" if mark == ">" else ">"
    width = len(str(len(names)))
    head = " " * (width + 1) + "".join(str((j + 1) % 10) for j in range(len(names)))
    return [head] + [f"{i + 1:>{width}} " + "".join(row) for i, row in enumerate(cells)]


def print_family(record: FamilyRecord) -> None:
    """The family record in readable form: the control and the claim first, then ranks, tiers and the pairwise matrix."""
    status = "answered" if record.answered else "needs more tasks"
    colour = "green" if record.answered else "yellow"
    kind = {"all-pairs": "all ordered pairs", "baseline": f"candidates against {record.baseline}", "best": "which system is best"}[record.kind]
    control = {"fwer": f"FWER {100 * record.level:g} %", "fdr": f"FDR {100 * record.level:g} %", "none": "UNCONTROLLED (per pair)"}[record.control]
    console.print(f"[bold {colour}]{status.upper()}[/]  {len(record.systems)} systems, {kind}; control {control}")
    console.print(f"  claim      {escape(record.claim)}")
    console.print(f"  control    {escape(record.method)}")
    console.print(f"  estimand   {escape(record.estimand_note)}")
    look = f"{record.look} of {record.n_planned} tasks" + (" (final)" if record.final else "")
    console.print(f"  look       {look}; {record.n_claims} of {record.n_hypotheses:,} claims made; pair intervals at level {record.interval_level:.6g}")
    if record.needed:
        console.print(f"  needed     {escape(', '.join(record.needed[:12]))}" + (f", … ({len(record.needed)})" if len(record.needed) > 12 else ""))
    console.print(_ranks_table(record))
    for number, tier in enumerate(record.tiers, start=1):
        what = "equivalent" if tier.equivalent else "not separated"
        console.print(f"  tier {number}  {escape(', '.join(tier.systems))} ({what})")
    if len(record.systems) <= MAX_MATRIX:
        console.print("  pairwise (row vs column, numbered as above: > row beats column, < column beats row, = equivalent, · not separated)")
        for line in _matrix(record):
            console.print("    " + line, highlight=False)
    for warning in record.warnings:
        console.print(f"  [bold yellow]warning[/]    {escape(warning)}")
    console.print(f"  policy     sha256 {record.policy_sha256[:16]}…  input sha256 {record.input_sha256[:16]}…")


def exit_with_family(record: FamilyRecord, *, as_json: bool) -> NoReturn:
    """Print the family record (``--json``: its JSON) and exit 0 when the family's question is answered, else 2."""
    if as_json:
        typer.echo(record.model_dump_json(indent=2))
    else:
        print_family(record)
    raise typer.Exit(EXIT_ANSWERED if record.answered else EXIT_MORE_TASKS)


def leaderboard_command(
    outcomes: Annotated[list[Path], typer.Argument(help="Outcome rows (.csv, .jsonl or .parquet) of the family's systems; '-' reads standard input.")],
    policy: PolicyFile = None,
    tasks: PlannedTasks = None,
    n_tasks: PlannedCount = None,
    group_size: GroupSizes = None,
    complete: Annotated[
        bool, typer.Option("--complete", help="The files are a finished record: claims about the benchmark's task distribution.")
    ] = False,
    systems: Annotated[str | None, typer.Option("--systems", help="Comma-separated systems of the family (default: every system).")] = None,
    kind: Annotated[str | None, typer.Option("--kind", help="all-pairs, baseline or best (default: the policy's \\[family] kind).")] = None,
    baseline: Annotated[str | None, typer.Option("--baseline", "-b", help="The baseline system (implies --kind baseline).")] = None,
    control: Annotated[str | None, typer.Option("--control", help="fwer, fdr or none (default: the policy's \\[family] control).")] = None,
    equivalence: Annotated[float | None, typer.Option("--equivalence", help="delta_eq > 0: also claim equivalence within +/- delta_eq.")] = None,
    html: Annotated[Path | None, typer.Option("--html", help="Also write the self-contained HTML page here.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --html file that stopwise did not write.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the family record as JSON.")] = False,
) -> None:
    r"""Decide a family of systems together: ranks with simultaneous intervals, tiers and the pairwise claims.

    One error level covers every claim (the policy's \[family] control, or --control): fwer, fdr, or none (per pair,
    printed as uncontrolled). Give the planned tasks (--tasks) for claims about them, or --complete for a finished
    record (claims about the benchmark's task distribution). Exit code: 0 the family's question is answered, 2 it
    needs more tasks, 4 an input error.
    """
    from stopwise.compare import decide_family
    from stopwise.records import Policy, load_policy, read_outcomes

    with user_errors(), Inputs(outcomes) as inputs:
        chosen = _family_policy(load_policy(policy) if policy is not None else Policy(), kind, baseline, control, equivalence)
        universe = task_universe(tasks, n_tasks, group_size, chosen.coverage.group_column)
        members = [s.strip() for s in systems.split(",") if s.strip()] if systems is not None else None
        rows = read_outcomes(inputs.files(outcomes))
        record = decide_family(rows, members, chosen, universe=universe, complete=complete)
        if html is not None:
            _write_page(record, html, force=force)
    if html is not None and not as_json:
        console.print(f"wrote {escape(str(html))}")
    exit_with_family(record, as_json=as_json)


def _write_page(record: FamilyRecord, path: Path, *, force: bool) -> None:
    from stopwise.cli.report import _written_by_stopwise
    from stopwise.errors import FileFormatError
    from stopwise.report import family_report

    if path.is_dir():
        raise FileFormatError(f"{path}: is a folder; --html takes a file name such as leaderboard.html")
    if path.exists() and not force and not _written_by_stopwise(path):
        raise FileFormatError(f"{path}: exists and was not written by stopwise; pass --force to replace it")
    family_report(record).write(path)


def register(app: typer.Typer) -> None:
    """Add ``leaderboard`` to the top-level app."""
    app.command("leaderboard")(leaderboard_command)
