"""Which report an input asks for, and building it: decision records, a replay folder, an early evaluation, a finality check."""

from __future__ import annotations

import json
import os
from pathlib import Path

from stopwise._files import read_text
from stopwise._limits import json_loads
from stopwise._redact import redact_url
from stopwise.errors import FileFormatError, InputError
from stopwise.report._page import Report

__all__ = ["REPORT_KINDS", "build_report", "detect_kind", "ledger_report"]

REPORT_KINDS: tuple[str, ...] = ("decision", "ledger", "replay", "early", "finality", "family")
"""What a report can be made from: decision records (``decide --json``, JSON lines), a ledger's decision
history (``sqlite:///…``, a ``.db`` file or ``postgresql://…``), a replay output folder (``replay -o``),
an early evaluation folder (``early evaluate -o``), a finality check result (``finality check --json``) and a
family record (``leaderboard --json``)."""

_LEDGER_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_LEDGER_SCHEMES = ("sqlite:", "sqlite+pysqlite:", "postgresql:", "postgres:", "postgresql+psycopg:")


def _is_ledger(path: str | os.PathLike[str]) -> bool:
    text = os.fspath(path)
    return text.startswith(_LEDGER_SCHEMES) or Path(text).suffix.lower() in _LEDGER_SUFFIXES


def ledger_report(url: str | os.PathLike[str], evaluation: str | None = None) -> Report:
    """A report of a ledger's decision history: every recorded look of one evaluation, with its chain digests.

    Parameters
    ----------
    url : str or path
        ``sqlite:///path``, a SQLite file, or a ``postgresql://`` URL (see :func:`stopwise.ledger.open_ledger`).
        A SQLite file must exist: a report never creates a ledger.
    evaluation : str, optional
        The evaluation; may be omitted when the ledger holds exactly one.
    """
    from stopwise.ledger import open_ledger
    from stopwise.report._decision import answer_blocks, decision_report
    from stopwise.report._page import Section, Table, Text

    text = os.fspath(url)
    shown = redact_url(text)  # what messages and the page show: the URL without its password
    if text.startswith(("sqlite:", "sqlite+pysqlite:")):
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            database = make_url(text).database or ""
        except ArgumentError as exc:
            raise FileFormatError(f"{shown}: not a ledger URL: {redact_url(str(exc))}") from None
        if database in ("", ":memory:") or not Path(database).is_file():
            raise FileFormatError(f"{shown}: no such ledger file")
    elif "://" not in text and not Path(text).is_file():
        raise FileFormatError(f"{shown}: no such ledger file")
    with open_ledger(text, mode="read") as ledger:
        names = ledger.evaluations()
        if evaluation is None:
            if len(names) != 1:
                listing = ", ".join(names) if names else "none"
                raise InputError(f"{shown}: name the evaluation with --evaluation; the ledger holds {len(names)} ({listing})")
            evaluation = names[0]
        elif evaluation not in names:
            raise InputError(f"{shown}: no evaluation {evaluation!r}; the ledger holds {', '.join(names) or 'none'}")
        chain = ledger.decisions(evaluation)
    if not chain:
        raise InputError(f"{shown}: evaluation {evaluation!r} holds no decision yet")
    page = decision_report([link.record for link in chain], source=f"ledger {shown}, evaluation {evaluation}")
    page.title = f"Decision history of {evaluation}"
    first = next((i for i, link in enumerate(chain) if link.record.action in ("promote", "reject")), None)
    if first is not None:  # the history is headlined by the first look that decided, not by the last look
        decisive, later = chain[first], len(chain) - first - 1
        page.answer = [
            *answer_blocks(decisive.record),
            Text(f"First decided at look {first + 1} of {len(chain)} (recorded {decisive.created_at}); "
                 + (f"{later} later look(s) follow in the history below; the claim is the one of this first decisive look." if later else "it is the last look."),
                 style="note"),
        ]
    else:
        page.answer = [*answer_blocks(chain[-1].record), Text(f"No look of the {len(chain)} has decided yet; this is the latest.", style="note")]
    page.sections.append(
        Section(
            "Decision chain",
            [
                Table(
                    ["look", "recorded at (UTC)", "outcome events seen", "tested", "baseline", "action", "digest"],
                    [[d.sequence, d.created_at, d.outcome_seq, d.record.tested, d.record.baseline, d.record.action, d.digest] for d in chain],
                    caption="Every decision taken from the ledger, oldest first, as stored: each digest is sha256 of the previous "
                    "digest and the record's canonical JSON, so a changed record breaks every later link (`stopwise ledger verify` "
                    "recomputes the chain and the decisions).",
                    numeric=[True, False, True, False, False, False, False],
                )
            ],
        )
    )
    return page


_READS = (
    "stopwise report reads decision records (JSON from decide, demo or leaderboard --json), a finality check "
    "(finality check --json), a ledger, or a folder written by replay -o or early evaluate -o"
)
"""What every "not a report input" message says, so that the reader learns what to pass instead."""

_ROW_SUFFIXES = (".csv", ".csv.gz", ".parquet", ".tsv")


def _not_an_input(source: str, what: str, *, rows: bool = False) -> FileFormatError:
    """The error of an input no report is made of: what it is, what ``report`` reads, and for outcome rows the way there."""
    hint = (
        f"; outcome rows are decided first: stopwise decide {'-' if source == '<stdin>' else source} -t A -b B --json > decision.json, "
        "then stopwise report decision.json"
        if rows
        else ""
    )
    return FileFormatError(f"{source}: {what}; {_READS}{hint}")


def _looks_like_rows(first: object, line: str) -> bool:
    """Outcome rows: a JSON object with system, task and outcome, or a CSV header naming system and task."""
    if isinstance(first, dict):
        return {"system", "task", "outcome"} <= first.keys()
    columns = {c.strip().strip('"').lower() for c in line.split(",")}
    return {"system", "task"} <= columns


def _kind_of_text(text: str, source: str) -> str:
    stripped = text.lstrip()
    if not stripped:
        raise FileFormatError(f"{source}: empty; expected decision records or a finality check result (JSON)")
    try:
        data = json_loads(stripped, source)
    except json.JSONDecodeError:
        line = stripped.splitlines()[0]
        try:
            data = [json_loads(line, f"{source}: line 1")]  # JSON lines: judged by the first
        except json.JSONDecodeError as exc:
            rows = _looks_like_rows(None, line)
            raise _not_an_input(source, "outcome rows (CSV)" if rows else f"not JSON (line 1: {exc.msg})", rows=rows) from None
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(first, dict):
        if not isinstance(data, list) and {"pairs", "tiers", "control"} <= first.keys():
            return "family"
        if ("action" in first and "tested" in first) or (isinstance(first.get("record"), dict) and "digest" in first):
            return "decision"  # records, or the links of ``ledger export --decisions``
        if "label" in first and ("run" in first or "argument" in first):
            return "finality"
        if _looks_like_rows(first, ""):
            raise _not_an_input(source, "outcome rows (JSON)", rows=True)
    raise _not_an_input(
        source, "neither a decision record (fields tested, action, …) nor a finality check result (fields label, run or argument)"
    )


def detect_kind(path: str | os.PathLike[str], text: str | None = None) -> str:
    """What kind of report an input makes: one of :data:`REPORT_KINDS`.

    A ``sqlite:``/``postgresql:`` URL or a ``.db``/``.sqlite`` file is a ledger; a folder with
    ``summary.csv`` and ``settings.json`` (or a live-look replay's files) is a replay; a folder with
    ``evaluation.json`` and ``predictions.csv.gz`` is an early evaluation; a JSON file is read for
    its fields (``text`` stands for the file's contents, e.g. standard input).

    Examples
    --------
    >>> detect_kind("-", text='{"label": "final", "argument": "x"}')
    'finality'
    """
    if text is not None:
        return _kind_of_text(text, redact_url(path))
    if _is_ledger(path):
        return "ledger"
    folder = Path(path)
    if folder.is_dir():
        if (folder / "summary.csv").is_file() and (folder / "settings.json").is_file():
            return "replay"
        if (folder / "live_curve.csv").is_file() and (folder / "live_summary.csv").is_file():
            return "replay"
        if (folder / "evaluation.json").is_file() and (folder / "predictions.csv.gz").is_file():
            return "early"
        raise FileFormatError(
            f"{folder}: a folder, but neither a replay output (summary.csv, settings.json) nor an early evaluation "
            "(evaluation.json, predictions.csv.gz)"
        )
    if not folder.exists():
        raise FileFormatError(f"{redact_url(path)}: no such file or folder")
    if folder.name.lower().endswith(_ROW_SUFFIXES):
        raise _not_an_input(str(folder), "a table (outcome rows), not JSON", rows=True)
    return _kind_of_text(read_text(folder, "report input"), str(folder))


def build_report(
    path: str | os.PathLike[str], *, kind: str = "auto", text: str | None = None, threshold: float = 0.95, evaluation: str | None = None
) -> Report:
    """The report of one input, whatever its kind.

    Parameters
    ----------
    path : path
        A decision record file (JSON or JSON lines), a finality check result (JSON), a replay
        output folder or an early evaluation folder. With ``text``, only a name for messages.
    kind : str, optional
        ``"auto"`` (detect) or one of :data:`REPORT_KINDS`.
    text : str, optional
        The input's contents when they do not come from ``path`` (standard input).
    threshold : float, optional
        Dual threshold of the early report's per-agent table.
    evaluation : str, optional
        Ledger reports: the evaluation (may be omitted when the ledger holds one).

    Returns
    -------
    Report
        Write it with :meth:`Report.write`.

    Raises
    ------
    InputError
        ``kind`` is not known.
    FileFormatError
        The input is missing, unreadable or of another kind.
    """
    if kind != "auto" and kind not in REPORT_KINDS:
        raise InputError(f"report kind must be auto or one of {', '.join(REPORT_KINDS)}; got {kind!r}")
    chosen = detect_kind(path, text) if kind == "auto" else kind
    name = redact_url(path)
    if chosen == "ledger":
        return ledger_report(path, evaluation)
    if chosen in ("replay", "early"):
        if text is not None or not Path(path).is_dir():
            raise FileFormatError(f"{name}: a {chosen} report is made from a folder")
        if chosen == "replay":
            from stopwise.report._replay import replay_report

            return replay_report(path)
        from stopwise.report._early import early_report

        return early_report(path, threshold=threshold)
    body = text if text is not None else read_text(path, "report input")
    if chosen == "decision":
        from stopwise.report._decision import decision_report, parse_decisions

        return decision_report(parse_decisions(body, name), source=name)
    if chosen == "family":
        from stopwise.report._family import family_report, parse_family

        return family_report(parse_family(body, name), source=name)
    from stopwise.report._finality import finality_report, parse_finality

    return finality_report(parse_finality(body, name), source=name)
