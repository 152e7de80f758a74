"""Which report an input asks for, and building it: decision records, a replay folder, an early evaluation, a finality check."""

from __future__ import annotations

import json
import os
from pathlib import Path

from stopwise.errors import FileFormatError, InputError
from stopwise.report._page import Report

__all__ = ["REPORT_KINDS", "build_report", "detect_kind"]

REPORT_KINDS: tuple[str, ...] = ("decision", "replay", "early", "finality")
"""What a report can be made from: decision records (``decide --json``, JSON lines), a replay output
folder (``replay -o``), an early evaluation folder (``early evaluate -o``) and a finality check
result (``finality check --json``)."""


def _kind_of_text(text: str, source: str) -> str:
    stripped = text.lstrip()
    if not stripped:
        raise FileFormatError(f"{source}: empty; expected decision records or a finality check result (JSON)")
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        return "decision"  # JSON lines: one decision record per line (parse_decisions names a bad line)
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(first, dict):
        if "action" in first and "tested" in first:
            return "decision"
        if "label" in first and ("run" in first or "argument" in first):
            return "finality"
    raise FileFormatError(
        f"{source}: neither a decision record (fields tested, action, …) nor a finality check result (fields label, run or argument)"
    )


def detect_kind(path: str | os.PathLike[str], text: str | None = None) -> str:
    """What kind of report an input makes: one of :data:`REPORT_KINDS`.

    A folder with ``summary.csv`` and ``settings.json`` is a replay; a folder with
    ``evaluation.json`` and ``predictions.csv.gz`` is an early evaluation; a JSON file is read for
    its fields (``text`` stands for the file's contents, e.g. standard input).

    Examples
    --------
    >>> detect_kind("-", text='{"label": "final", "argument": "x"}')
    'finality'
    """
    if text is not None:
        return _kind_of_text(text, str(path))
    folder = Path(path)
    if folder.is_dir():
        if (folder / "summary.csv").is_file() and (folder / "settings.json").is_file():
            return "replay"
        if (folder / "evaluation.json").is_file() and (folder / "predictions.csv.gz").is_file():
            return "early"
        raise FileFormatError(
            f"{folder}: a folder, but neither a replay output (summary.csv, settings.json) nor an early evaluation "
            "(evaluation.json, predictions.csv.gz)"
        )
    if not folder.exists():
        raise FileFormatError(f"{folder}: no such file or folder")
    return _kind_of_text(_read(folder), str(folder))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"{path}: cannot be read: {exc}") from None


def build_report(path: str | os.PathLike[str], *, kind: str = "auto", text: str | None = None, threshold: float = 0.95) -> Report:
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
    name = str(path)
    if chosen in ("replay", "early"):
        if text is not None or not Path(path).is_dir():
            raise FileFormatError(f"{name}: a {chosen} report is made from a folder")
        if chosen == "replay":
            from stopwise.report._replay import replay_report

            return replay_report(path)
        from stopwise.report._early import early_report

        return early_report(path, threshold=threshold)
    body = text if text is not None else _read(Path(path))
    if chosen == "decision":
        from stopwise.report._decision import decision_report, parse_decisions

        return decision_report(parse_decisions(body, name), source=name)
    from stopwise.report._finality import finality_report, parse_finality

    return finality_report(parse_finality(body, name), source=name)
