"""``stopwise report``: one self-contained HTML page from a decision record, a replay, an early evaluation or a finality check."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise.cli._common import console, is_stdin, print_json, user_errors

__all__ = ["register"]

_EPILOG = """Examples:

  stopwise decide outcomes.csv -t A -b B --json > decision.json; stopwise report decision.json

  stopwise replay outcomes.csv -k 100 -o replay/ && stopwise report replay/ -o replay.html

  stopwise early evaluate runs.jsonl.gz -o evaluation/ && stopwise report evaluation/

  stopwise report sqlite:///ledger.db --evaluation nightly -o nightly.html

  stopwise finality check argument.toml --runs runs.csv --json | stopwise report - -o finality.html
"""

_MARKER = b'<meta name="generator" content="stopwise'


def _default_out(source: str) -> Path:
    """report.html in a folder; the input's name with .html beside a file (a ledger URL needs --out)."""
    if "://" in source:
        from stopwise.errors import InputError

        raise InputError(f"{source}: a ledger URL; pass --out FILE.html for the report")
    path = Path(source)
    return path / "report.html" if path.is_dir() else path.with_suffix(".html")


def _written_by_stopwise(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return _MARKER in handle.read(2048)
    except OSError:
        return False


def report_command(
    source: Annotated[
        str,
        typer.Argument(
            help="Decision records (.json / .jsonl from decide or demo --json), a ledger (sqlite:///path, a .db file, "
            "postgresql://…), a finality check (--json output), a family record (leaderboard --json), "
            "a replay folder (replay -o) or an early evaluation folder (early evaluate -o); '-' reads JSON from standard input.",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="HTML file to write (default: report.html in a folder, or the input's name with .html)."),
    ] = None,
    kind: Annotated[str, typer.Option(help="auto, decision, ledger, replay, early, finality or family.")] = "auto",
    evaluation: Annotated[str | None, typer.Option(help="Ledger input: the evaluation (when the ledger holds several).")] = None,
    threshold: Annotated[float, typer.Option(help="Early reports: dual threshold of the per-agent table.")] = 0.95,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file that stopwise did not write.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was written as JSON.")] = False,
) -> None:
    """Write one self-contained HTML report (charts and data inlined; opens without network access).

    An existing report written by stopwise is replaced; any other existing file only with --force.
    """
    from stopwise._atomic import check_output_plan
    from stopwise.errors import FileFormatError, InputError
    from stopwise.report import build_report

    with user_errors():
        text = None
        if is_stdin(source):
            if out is None:
                raise InputError("reading standard input ('-'): pass --out FILE.html for the report")
            text = sys.stdin.read()
            source = "<stdin>"
        target = out if out is not None else _default_out(source)
        if target.is_dir():
            raise FileFormatError(f"{target}: is a folder; --out takes a file name such as report.html")
        check_output_plan([("--out", target, None)], force=True)  # a device or FIFO is never replaced (nor read to see who wrote it)
        if target.exists() and not force and not _written_by_stopwise(target):
            raise FileFormatError(f"{target}: exists and was not written by stopwise; pass --force to replace it")
        page = build_report(source, kind=kind, text=text, threshold=threshold, evaluation=evaluation)
        written = page.write(target)
    if as_json:
        print_json({"report": str(written), "kind": page.kind, "charts": page.n_charts, "sections": [s.title for s in page.sections], "bytes": written.stat().st_size})
        return
    console.print(f"wrote {escape(str(written))}: {page.kind} report, {page.n_charts} chart(s), {written.stat().st_size / 1e6:.1f} MB, self-contained")


def register(app: typer.Typer) -> None:
    """Add ``report`` to the top-level app."""
    app.command("report", epilog=_EPILOG)(report_command)
