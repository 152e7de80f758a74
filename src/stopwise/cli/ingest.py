"""``stopwise ingest``: harness logs in, outcome rows (and trajectories) out."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stopwise._atomic import Outputs
from stopwise._limits import json_loads
from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise._vocabulary import INGEST_FORMATS
from stopwise.cli._common import (
    Inputs,
    Quiet,
    console,
    elapsed_option,
    err_console,
    errors_option,
    hint_system_naming,
    is_stdin,
    print_json,
    progress,
    scorer_option,
    system_from_option,
    system_naming,
    system_option,
    user_errors,
)
from stopwise.errors import FileFormatError, InputError, ValidationError

if TYPE_CHECKING:
    from stopwise.ingest import IngestResult, SkippedRecord
    from stopwise.records import OutcomeColumns

_SHOWN = 10
_STDOUT_FORMATS = ("csv", "jsonl")


def _write_stdout(columns: OutcomeColumns, fmt: str) -> None:
    """Write outcome rows to standard output as CSV or JSON lines (through a private temporary file)."""
    from stopwise.records import write_outcomes

    folder = tempfile.mkdtemp(prefix="stopwise-out-")
    try:
        target = Path(folder) / f"rows.{fmt}"
        write_outcomes(columns, target, format=fmt)
        sys.stdout.flush()
        with target.open("rb") as handle:
            shutil.copyfileobj(handle, sys.stdout.buffer, 1 << 20)
        sys.stdout.buffer.flush()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _instance_ids(path: Path) -> list[str]:
    """Instance ids from a JSON list or a text file with one id per line (``#`` starts a comment)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"{path}: cannot read the instance ids: {exc}") from exc
    if path.suffix.lower() == ".json":
        try:
            ids = json_loads(text, str(path))
        except json.JSONDecodeError as exc:
            raise FileFormatError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from exc
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise FileFormatError(f"{path}: must be a JSON list of instance ids")
        return ids
    ids = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    ids = [i for i in ids if i]
    if not ids:
        raise FileFormatError(f"{path}: holds no instance ids (one per line expected)")
    return ids


def ingest_command(
    paths: Annotated[list[Path], typer.Argument(help="Harness files or run directories; '-' reads one log from standard input.", show_default=False)],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Outcome rows to write (.parquet, .csv or .jsonl); '-' writes them to standard output."),
    ],
    format: Annotated[
        str, typer.Option("--format", "-f", help="auto, or one of: " + ", ".join(INGEST_FORMATS) + ".")
    ] = "auto",
    trajectories: Annotated[
        Path | None, typer.Option("--trajectories", help="Also write trajectories here (.jsonl or .jsonl.gz).")
    ] = None,
    system: Annotated[str | None, system_option()] = None,
    system_from: Annotated[list[str] | None, system_from_option()] = None,
    scorer: Annotated[str | None, scorer_option()] = None,
    errors: Annotated[str, errors_option()] = "pending",
    empty_patch: Annotated[
        str, typer.Option("--empty-patch", help="SWE-bench runs without a patch: fail (default), pending or drop.")
    ] = "fail",
    elapsed: Annotated[str, elapsed_option()] = "total",
    instances: Annotated[
        Path | None,
        typer.Option("--instances", help="Dataset instance ids (one per line or a JSON list), for SWE-bench results.json."),
    ] = None,
    out_format: Annotated[
        str | None,
        typer.Option("--out-format", help="Format of the rows written: csv, jsonl (or parquet for a file); default: "
                     "the --out suffix, csv for '-'."),
    ] = None,
    raw_task_ids: Annotated[
        bool,
        typer.Option("--raw-task-ids", help="Keep each file's own task ids (Harbor: 'dataset/task') instead of the canonical ones."),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace existing output files.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was read, skipped and written as JSON.")] = False,
    quiet: Quiet = False,
) -> None:
    """Read harness logs (SWE-bench, Inspect AI, tau2-bench, Harbor / Terminal-Bench, HAL) into outcome rows.

    Runs whose outcome is unknown are never a silent 0: they become pending rows (or what --errors
    says) and carry a flag in the source column; runs left out are counted and listed. A folder
    written by Inspect's eval_set is read whole (the newest attempt of each task).

    Example: stopwise ingest logs/ --system-from file -o outcomes.csv

    With -o - the rows go to standard output (CSV, or JSON lines with --out-format jsonl) and the
    summary to standard error: stopwise ingest logs/ -o - | stopwise decide - --tested A --baseline B
    """
    from stopwise.ingest import ingest
    from stopwise.records import write_outcomes, write_trajectories

    to_stdout = is_stdin(out)
    with user_errors(), Outputs(force=force) as outputs, Inputs(paths) as inputs:
        if is_stdin(trajectories):
            raise InputError("--trajectories must name a file (.jsonl or .jsonl.gz); standard output is for -o -")
        if to_stdout and as_json:
            raise InputError("--json prints to standard output, where -o - writes the rows; write the rows to a file")
        if to_stdout and (out_format or "csv") not in _STDOUT_FORMATS:
            raise InputError(f"`--out-format` must be one of {', '.join(_STDOUT_FORMATS)} with -o -; got {out_format!r}")
        paths = inputs.files(paths)
        system = system_naming(system, system_from)
        out_tmp = None if to_stdout else outputs.file(out)  # checked before anything is read; moved into place at the end
        traj_tmp = outputs.file(trajectories) if trajectories is not None else None
        ids = _instance_ids(instances) if instances is not None else None
        try:
            with progress("ingest", quiet=quiet, detail=f"reading {len(paths):,} path(s)", after=True) as update:
                result = ingest(
                    paths,
                    format=format,
                    system=system,
                    scorer=scorer,
                    errors=errors,
                    empty_patch=empty_patch,
                    elapsed=elapsed,
                    instances=ids,
                    trajectories=trajectories is not None,
                    task_ids="raw" if raw_task_ids else "canonical",
                    progress=update,
                )
        except ValidationError as exc:
            hint_system_naming(exc, system)
            raise
        if out_tmp is None:
            _write_stdout(result.columns, out_format or "csv")
            wrote = ["<stdout>"]
        else:
            write_outcomes(result.columns, out_tmp, format=out_format)
            wrote = [str(out)]
        if trajectories is not None and traj_tmp is not None and result.trajectories:
            write_trajectories(result.trajectories, traj_tmp)
            wrote.append(str(trajectories))
    _report(result, wrote, as_json=as_json, to_stdout=to_stdout, want_trajectories=trajectories is not None)


def _report(result: IngestResult, wrote: list[str], *, as_json: bool, to_stdout: bool, want_trajectories: bool) -> None:
    """Print what was read, noted, skipped, ignored and written (to standard error when the rows own standard output)."""
    if as_json:
        print_json(
            {
                "summary": result.summary(),
                "rows": len(result.rows),
                "trajectories": len(result.trajectories or []),
                "notes": list(result.notes),
                "skipped": [{"file": i.file, "record": i.record, "reason": i.reason, "cause": i.cause} for i in result.skipped],
                "ignored_files": dict(result.ignored_files),
                "wrote": wrote,
            }
        )
        return
    show = err_console if to_stdout else console  # the rows own standard output
    show.print(escape(result.summary()))
    for note in result.notes:
        show.print(f"  note: {escape(note)}")
    skipped = _skipped_lines(result)
    for line in skipped[:_SHOWN]:
        show.print(f"  skipped: {escape(line)}")
    if len(skipped) > _SHOWN:
        show.print(f"  ... and {len(skipped) - _SHOWN} more lines of skipped runs")
    for file, reason in list(result.ignored_files.items())[:_SHOWN]:
        show.print(f"  ignored: {escape(file)}: {escape(reason)}")
    if len(result.ignored_files) > _SHOWN:
        show.print(f"  ... and {len(result.ignored_files) - _SHOWN} more ignored files")
    if want_trajectories and not result.trajectories:
        err_console.print("warning: these logs hold no steps; no trajectories written")
    show.print("wrote " + " and ".join(escape(w) for w in wrote))


def _skipped_lines(result: IngestResult, named: int = 3) -> list[str]:
    """One line per skipped run, or per cause within a file when more than ``named`` runs share it (count, first runs, first reason)."""
    groups: dict[tuple[str, str], list[SkippedRecord]] = {}
    for item in result.skipped:
        groups.setdefault((item.file, item.cause), []).append(item)
    lines = []
    for (file, _), same in groups.items():
        if len(same) <= named:
            lines += [f"{i.file}: {i.record}: {i.reason}" for i in same]
        else:
            first = ", ".join(i.record for i in same[:named])
            lines.append(f"{file}: {len(same):,} runs ({first}, …): {same[0].reason} (the first run's reason)")
    return lines


def register(app: typer.Typer) -> None:
    """Add ``ingest`` to the top-level app."""
    app.command("ingest")(ingest_command)
