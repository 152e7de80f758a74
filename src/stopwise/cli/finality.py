"""``stopwise finality``: completion arguments, open-effects records and the controlled replay."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from stopwise._text import escape_text
from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise.cli._common import Inputs, Quiet, console, err_console, progress, user_errors

__all__ = ["register"]

_HELP = "Is a scored outcome final, and are runs separate trials? (outcome finality, cross-unit separation)"


def _schema(
    name: Annotated[
        str, typer.Argument(help="effects-record, completion-argument or replay-result.")
    ] = "effects-record",
) -> None:
    """Print the versioned JSON schema of a finality document."""
    from stopwise.finality import finality_schema

    with user_errors():
        schema = finality_schema(name)
    console.print_json(json.dumps(schema))


def _example(
    name: Annotated[str | None, typer.Argument(help="Example to print; omit to list them.")] = None,
) -> None:
    """List the example completion arguments, or print one (a starting point for your own)."""
    from stopwise.finality import EXAMPLE_ARGUMENTS, example_text

    if name is None:
        for example in EXAMPLE_ARGUMENTS:
            console.print(example)
        return
    with user_errors():
        text = example_text(name)
    console.print(text, end="", markup=False, highlight=False)


def _reasons(label: str, reasons: list[str]) -> None:
    console.print(f"[bold]{escape(label)}[/]")
    for reason in reasons:
        console.print(f"  - {escape_text(reason)}", markup=False)


_TOML_KEY = rb"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
_TOML_LINE = re.compile(rb"^\s*(?:\[|" + _TOML_KEY + rb"(?:\s*\.\s*" + _TOML_KEY + rb")*\s*=)")
"""A TOML table header or key = value."""


def _argument_syntax(head: bytes) -> str:
    """``.toml`` or ``.yaml`` for a completion argument read from standard input: its first line that is not a comment.

    TOML opens with a table (``[...]``) or ``key = value``; anything else is taken for YAML
    (``key: value``, ``---``, a list), whose parser then names what is wrong.
    """
    for line in head.lstrip(b"\xef\xbb\xbf").splitlines():
        if line.strip() and not line.lstrip().startswith(b"#"):
            return ".toml" if _TOML_LINE.match(line) else ".yaml"
    return ".toml"


def _check(
    argument: Annotated[
        Path, typer.Argument(help="Completion argument (.toml, .yaml or .yml); '-' reads standard input (TOML or YAML).")
    ],
    runs: Annotated[
        Path | None,
        typer.Option("--runs", help="Runs to check (.csv or .jsonl: run, system, task, outcome, ...); '-' reads standard input."),
    ] = None,
    record: Annotated[
        Path | None, typer.Option("--record", help="Open-effects record (JSON) with the evidence; '-' reads standard input.")
    ] = None,
    rows: Annotated[
        Path | None, typer.Option("--rows", help="Write outcome rows here (.csv, .jsonl or .parquet); needs --runs.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --rows file.")] = False,
) -> None:
    """Check a completion argument: label status (final/unresolved/bounded) and analysis unit, with reasons.

    Without --runs, says what the argument establishes by itself. With --runs (and optionally
    --record), gives a verdict per run; --rows writes them as outcome rows (unresolved -> pending,
    grouped runs share a unit).
    """
    from stopwise._atomic import Outputs
    from stopwise.errors import InputError
    from stopwise.finality import (
        check_argument,
        check_runs,
        finality_rows,
        load_argument,
        load_effects_record,
        read_scored_runs,
    )
    from stopwise.records import write_outcomes

    with user_errors(), Outputs(force=force) as outputs, Inputs(argument, runs, record) as inputs:
        if (record is not None or rows is not None) and runs is None:
            raise InputError("--record and --rows need --runs (the runs to check)")
        rows_tmp = outputs.file(rows) if rows is not None else None
        parsed = load_argument(inputs.file(argument, sniff=_argument_syntax))
        if runs is None:
            verdict = check_argument(parsed)
            if as_json:
                console.print_json(verdict.model_dump_json())
                return
            console.print(f"argument [bold]{escape(verdict.argument)}[/] ({escape(str(argument))})")
            _reasons(f"label: {verdict.label}", verdict.label_reasons)
            _reasons(f"unit: {verdict.unit}", verdict.unit_reasons)
            return
        evidence = load_effects_record(inputs.file(record, suffix=".json")) if record is not None else None
        checks = check_runs(parsed, read_scored_runs(inputs.file(runs)), record=evidence)
        if rows_tmp is not None:
            write_outcomes(finality_rows(checks), rows_tmp)
    if as_json:
        console.print_json(json.dumps([c.model_dump(mode="json") for c in checks]))
        return
    table = Table(title=escape(f"{parsed.name}: {len(checks)} runs"))
    for column in ("run", "system", "task", "label", "unit", "decisive reason"):
        table.add_column(column)
    for c in checks[:50]:
        cells = (c.run, c.system, c.task, c.label, c.unit_id or c.unit, c.label_reasons[0] if c.label_reasons else "")
        table.add_row(*(escape(cell) for cell in cells))
    console.print(table)
    if len(checks) > 50:
        console.print(f"... and {len(checks) - 50} more runs (use --json for all)")
    counts = {s: sum(c.label == s for c in checks) for s in ("final", "unresolved", "bounded")}
    units = len({c.unit_id or c.run for c in checks})
    console.print(
        f"labels: {counts['final']} final, {counts['unresolved']} unresolved, {counts['bounded']} bounded; "
        f"{units} analysis units from {len(checks)} runs"
    )
    if rows is not None:
        console.print(f"outcome rows written to {rows}")


def _replay(
    as_json: Annotated[bool, typer.Option("--json", help="Print the replay record (summary) as JSON.")] = False,
    repetitions: Annotated[
        int, typer.Option("--repetitions", "-r", help="Repetitions of every identifier x delay (the paper: 10).")
    ] = 10,
    condition: Annotated[
        list[str] | None, typer.Option("--condition", "-c", help="Run only this condition (repeatable).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Also write the record, open-effects records, checks and outcome rows here."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an earlier --out directory of stopwise.")] = False,
    quiet: Quiet = False,
) -> None:
    """Run the paper's controlled replay against a local HTTP service and print its table.

    A fresh service is started on 127.0.0.1 (ephemeral port) and stopped at the end. Exit code 0
    when every measured count equals the expected one, 1 otherwise.
    """
    from stopwise._atomic import check_output
    from stopwise._extras import require_extra
    from stopwise.errors import InputError
    from stopwise.finality import ReplaySchedule, run_controlled_replay

    with user_errors():
        require_extra("service", "stopwise finality replay")  # before the progress line: the hint is the only line
        if not 1 <= repetitions <= 100:
            raise InputError(f"--repetitions must be an integer from 1 to 100; got {repetitions}")
        if out is not None:
            check_output(out, force=force, directory=True)  # before the replay; written atomically at the end
        with progress("finality replay", quiet=quiet, detail=f"trials ({repetitions} repetition{'s' if repetitions != 1 else ''} of every condition)") as update:
            result = run_controlled_replay(
                ReplaySchedule(repetitions=repetitions), conditions=condition or None, progress=lambda done, total: update(done, total)
            )
        files = result.write(out, force=force) if out is not None else []
    if as_json:
        console.print_json(json.dumps(result.summary()))
    else:
        s = result.schedule
        table = Table(
            title=(
                f"Controlled replay: identifiers {min(s.identifiers)}-{max(s.identifiers)}, delays "
                f"{'/'.join(map(str, s.delays_ms))} ms, {s.repetitions} repetitions ({s.n_trials} trials per condition)"
            )
        )
        for column in ("condition", "measure", "measured", "expected", "paper", ""):
            table.add_column(column, justify="right" if column in ("measured", "expected", "paper") else "left")
        for c in result.counts:
            mark = "[green]ok[/]" if c.matches else "[red]differs[/]"
            table.add_row(c.condition, c.measure, f"{c.count}/{c.of}", f"{c.expected}/{c.of}", c.paper or "-", mark)
        console.print(table)
        checks = Table(title="Completion checker on the replayed runs")
        for column in ("condition", "argument", "final", "unresolved", "bounded", "units / rows"):
            checks.add_column(column)
        for r in result.conditions:
            m = r.summary
            checks.add_row(
                m.title,
                m.argument,
                str(m.labels["final"]),
                str(m.labels["unresolved"]),
                str(m.labels["bounded"]),
                f"{m.units}/{m.rows}",
            )
        console.print(checks)
        console.print(
            f"{result.requests} requests in {result.elapsed_s:.1f} s; trials rerun because the machine stalled: "
            f"{result.rerun_trials}; trials off schedule: {result.late_trials}"
        )
        for f in files[:1]:
            console.print(f"record and evidence written to {f.parent}")
    if not result.matches:
        err_console.print("[bold yellow]warning:[/] a measured count differs from the expected one")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the ``finality`` command group to ``app``."""
    group = typer.Typer(name="finality", help=_HELP, no_args_is_help=True)
    group.command("schema")(_schema)
    group.command("example")(_example)
    group.command("check")(_check)
    group.command("replay")(_replay)
    app.add_typer(group, name="finality")
