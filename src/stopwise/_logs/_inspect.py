"""Inspect AI logs, read directly (``inspect_ai`` is not imported): the documents, their eval sets, scores and messages.

Two containers hold the same ``EvalLog`` document:

* ``.eval``: a zip archive with ``header.json`` (eval spec, status, results, stats),
  ``samples/<id>_epoch_<n>.json`` (one ``EvalSample`` each) and journal files. Recent Inspect
  versions compress the members with Zstandard (zip method 93); Python reads that natively from
  3.14 on, earlier versions need the ``zstandard`` package. An in-progress log has no
  ``header.json`` yet; its eval spec is read from ``_journal/start.json``. Every member is read with
  a bound on what it decompresses to (:mod:`stopwise._logs._zip`).
* ``.json``: one JSON object with ``version``, ``eval``, ``status``, ``results``, ``stats`` and
  a ``samples`` list.

Eval sets. A folder written by ``inspect_ai.eval_set`` holds ``eval-set.json``, ``logs.json`` and
one log per task and model, plus the logs of attempts that a retry replaced. Of the logs that share
a ``task_id`` in such a folder, only the newest is read (by ``created``): :func:`select_eval_set_logs`.

Scores and messages. :func:`score_outcome` is the one mapping from an Inspect ``Score.value`` to an outcome;
:func:`score_predicted` and :func:`score_audit_flags` read what :class:`stopwise.inspect.LiveHalting` stores in a
score's metadata; :func:`message_steps` turns a sample's messages into trajectory steps. The log reader of
:mod:`stopwise.ingest`, the log-directory watcher of :mod:`stopwise.live` and the live managers of
:mod:`stopwise.inspect` all read Inspect's format here, so the three read it alike.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stopwise._limits import json_loads
from stopwise._logs._transcript import steps_from_messages
from stopwise._logs._zip import zip_member
from stopwise.errors import FileFormatError
from stopwise.records import Step

__all__ = [
    "early_stopping_of",
    "is_json_log",
    "load_eval",
    "member_json",
    "message_steps",
    "score_audit_flags",
    "score_outcome",
    "score_predicted",
    "score_probability_flags",
    "select_eval_set_logs",
]

_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "correct": 1.0, "no": 0.0, "false": 0.0, "incorrect": 0.0}


# ---------------------------------------------------------------- documents


def is_json_log(doc: Any) -> bool:
    """True for an Inspect ``.json`` log document."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("eval"), dict)
        and "model" in doc["eval"]
        and "task" in doc["eval"]
        and ("version" in doc or "samples" in doc)
    )


def _member(archive: zipfile.ZipFile, path: Path, name: str) -> bytes:
    return zip_member(archive, path, name)  # bounded for every method, refuses encrypted members (_zip.py)


def member_json(archive: zipfile.ZipFile, path: Path, name: str) -> Any:
    try:
        return json_loads(_member(archive, path, name), f"{path}: member {name}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"{path}: member {name} is not valid JSON ({exc})") from exc


def load_eval(path: Path) -> dict[str, Any]:
    """Read a ``.eval`` archive into the shape of a ``.json`` log (header fields plus ``samples``)."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise FileFormatError(f"{path}: not a readable .eval log (a zip archive): {exc}") from exc
    with archive:
        names = archive.namelist()
        if "header.json" in names:
            doc = member_json(archive, path, "header.json")
        elif "_journal/start.json" in names:
            doc = member_json(archive, path, "_journal/start.json")
            doc.setdefault("status", "started")
        else:
            raise FileFormatError(f"{path}: not an Inspect .eval log (no header.json or _journal/start.json)")
        if not isinstance(doc, dict):
            raise FileFormatError(f"{path}: header.json must be a JSON object")
        sample_names = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
        doc["samples"] = [member_json(archive, path, n) for n in sample_names]
    return doc


def early_stopping_of(doc: Any) -> Any:
    """``results.early_stopping`` of a log document or ``.eval`` header (None when it has none).

    Examples
    --------
    >>> early_stopping_of({"results": {"early_stopping": {"manager": "m"}}}), early_stopping_of({"results": None})
    ({'manager': 'm'}, None)
    """
    results = doc.get("results") if isinstance(doc, dict) else None
    return results.get("early_stopping") if isinstance(results, dict) else None


# ---------------------------------------------------------------- eval sets


def _eval_set_root(path: Path) -> Path | None:
    folder = path.resolve().parent
    return folder if (folder / "eval-set.json").is_file() else None


def _header(path: Path, kind: str, doc: Any) -> Mapping[str, Any]:
    """The eval spec of a log without reading its samples."""
    if kind != "eval":
        return doc.get("eval") or {} if isinstance(doc, dict) else {}
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            for name in ("header.json", "_journal/start.json"):
                if name in names:
                    head = member_json(archive, path, name)
                    return head.get("eval") or {} if isinstance(head, dict) else {}
    except (zipfile.BadZipFile, OSError):
        return {}
    return {}


def select_eval_set_logs(
    items: Sequence[tuple[Path, str, Any]], ignored: dict[str, str]
) -> tuple[list[tuple[Path, str, Any]], list[str]]:
    """Keep the newest log of each task in an ``eval_set`` folder; list the replaced ones in ``ignored``.

    Returns the logs to read (in the given order) and notes on each eval-set folder.
    """
    groups: dict[tuple[Path, str], list[tuple[str, Path]]] = {}
    for path, kind, doc in items:
        root = _eval_set_root(path)
        if root is None:
            continue
        spec = _header(path, kind, doc)
        task_id = spec.get("task_id") or spec.get("eval_id")
        if not task_id:
            continue
        key = (root, f"{task_id}|{spec.get('model')}")
        groups.setdefault(key, []).append((str(spec.get("created") or ""), path))
    replaced: set[Path] = set()
    for logs in groups.values():
        logs.sort(key=lambda item: (item[0], str(item[1])))
        newest = logs[-1][1]
        for _, older in logs[:-1]:
            replaced.add(older)
            ignored[str(older)] = f"replaced in its eval set by a later attempt ({newest.name})"
    notes = []
    for root in sorted({root for root, _ in groups}):
        for name in ("eval-set.json", "logs.json"):
            ignored.pop(str(root / name), None)
        kept = sum(1 for (r, _), logs in groups.items() if r == root)
        dropped = sum(len(logs) - 1 for (r, _), logs in groups.items() if r == root)
        notes.append(
            f"{root}: an eval set; read the newest log of each of its {kept} tasks"
            + (f" ({dropped} replaced attempts left out)" if dropped else "")
        )
    return [item for item in items if item[0] not in replaced], notes


# ---------------------------------------------------------------- scores and messages


def score_outcome(value: Any) -> tuple[float | None, str | None]:
    """(outcome, problem) for one Inspect score value; (None, None) means unscored.

    The one mapping from an Inspect ``Score.value`` to an outcome in [0, 1], shared by the log
    reader and the live early-stopping manager (:mod:`stopwise.inspect`): ``C`` 1, ``I`` 0,
    ``P`` 0.5, ``N`` 0, ``yes``/``true``/``correct`` 1, ``no``/``false``/``incorrect`` 0,
    booleans 1/0, numbers (or numeric text) in [0, 1] kept, NaN or ``None`` unscored. Anything
    else (a number outside [0, 1], other text, a list or dict) is a problem, never a silent 0.

    Examples
    --------
    >>> from stopwise._logs import score_outcome
    >>> score_outcome("C"), score_outcome(0.25), score_outcome(None)
    ((1.0, None), (0.25, None), (None, None))
    >>> score_outcome(3)[1]
    'must map to a number in [0, 1] (the outcome contract); rescale the scorer'
    """
    if value is None:
        return None, None
    if isinstance(value, bool):
        return (1.0 if value else 0.0), None
    if isinstance(value, int | float):
        out = float(value)
        if math.isnan(out):
            return None, None
        if not math.isfinite(out) or not 0.0 <= out <= 1.0:
            return None, "must map to a number in [0, 1] (the outcome contract); rescale the scorer"
        return out, None
    if isinstance(value, str):
        text = value.strip()
        if text in _LETTERS:
            return _LETTERS[text], None
        if text.lower() in _WORDS:
            return _WORDS[text.lower()], None
        try:
            return score_outcome(float(text))
        except ValueError:
            return None, "must be C, I, P, N, a boolean or a number in [0, 1]"
    return (
        None,
        "must be a scalar (C, I, P, N, a boolean or a number); pick a key of a dict score with scorer='NAME:KEY'",
    )


def score_predicted(score: Any) -> bool:
    """Whether an Inspect score is a predicted outcome: ``metadata["predicted"] is True``.

    :class:`stopwise.inspect.LiveHalting` scores a halted sample so; its row has ``status = "predicted"``.
    """
    metadata = score.get("metadata") if isinstance(score, Mapping) else getattr(score, "metadata", None)
    return isinstance(metadata, Mapping) and metadata.get("predicted") is True


def score_audit_flags(score: Any) -> list[str]:
    """The flags of an audited sample's score: ``audited`` and, if the monitor would have halted it, ``would-halt:f``.

    :class:`stopwise.inspect.LiveHalting` marks an audited sample's score ``metadata["audited"] = True`` and
    ``metadata["would_halt"] = f`` (the prediction it would have stored); [] for any other score.

    Examples
    --------
    >>> from stopwise._logs import score_audit_flags
    >>> score_audit_flags({"metadata": {"audited": True, "would_halt": 0}}), score_audit_flags({"value": "C"})
    (['audited', 'would-halt:0'], [])
    """
    metadata = score.get("metadata") if isinstance(score, Mapping) else getattr(score, "metadata", None)
    if not isinstance(metadata, Mapping) or metadata.get("audited") is not True:
        return []
    would = metadata.get("would_halt")
    flags = ["audited", f"would-halt:{int(would)}"] if would in (0, 1) and not isinstance(would, bool) else ["audited"]
    return flags + score_probability_flags(score)


def score_probability_flags(score: Any) -> list[str]:
    """``["audit-p:<pi>"]`` when a halted or would-halt score records its audit probability (active audits), else [].

    :class:`stopwise.inspect.LiveHalting` with ``audit_rule = "active"`` stores ``metadata["audit_probability"]``.

    Examples
    --------
    >>> from stopwise._logs import score_probability_flags
    >>> score_probability_flags({"metadata": {"predicted": True, "audit_probability": 0.25}}), score_probability_flags({})
    (['audit-p:0.25'], [])
    """
    metadata = score.get("metadata") if isinstance(score, Mapping) else getattr(score, "metadata", None)
    if not isinstance(metadata, Mapping):
        return []
    value = metadata.get("audit_probability")
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 < value <= 1.0:
        return []
    return [f"audit-p:{float(value)!r}"]


def _tool_calls(message: Mapping[str, Any]) -> list[tuple[str, Any]]:
    calls = message.get("tool_calls") or []
    return [(str(c.get("function", "")), c.get("arguments")) for c in calls if isinstance(c, dict)]


def message_steps(messages: Sequence[Mapping[str, Any]]) -> list[Step]:
    """Trajectory steps of an Inspect sample's messages (as dicts): the log reader and live halting read messages alike."""
    return steps_from_messages(messages, tool_calls=_tool_calls)
