"""Inspect AI logs, read directly (``inspect_ai`` is not imported).

Two containers hold the same ``EvalLog`` document:

* ``.eval``: a zip archive with ``header.json`` (eval spec, status, results, stats),
  ``samples/<id>_epoch_<n>.json`` (one ``EvalSample`` each) and journal files. Recent Inspect
  versions compress the members with Zstandard (zip method 93); Python reads that natively from
  3.14 on, earlier versions need the ``zstandard`` package. An in-progress log has no
  ``header.json`` yet; its eval spec is read from ``_journal/start.json``.
* ``.json``: one JSON object with ``version``, ``eval``, ``status``, ``results``, ``stats`` and
  a ``samples`` list.

One row per sample and epoch: task = sample id, attempt = epoch - 1, outcome = the chosen scorer's
value (``C`` 1, ``I`` 0, ``P`` 0.5, ``N`` 0, booleans 1/0, numbers kept), cost = the sum of
``model_usage[*].total_cost`` when recorded, elapsed = ``total_time`` (or ``working_time``).
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stopwise._limits import json_loads
from stopwise.errors import FileFormatError
from stopwise.ingest._common import Collector, nonneg, steps_from_messages, system_name, text_of, zip_member
from stopwise.ingest._common import _zstd_member as _zstd_member

_ZIP_ZSTANDARD = 93
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "correct": 1.0, "no": 0.0, "false": 0.0, "incorrect": 0.0}


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
    return zip_member(archive, path, name)  # bounded, refuses encrypted members (ingest/_common.py)


def _member_json(archive: zipfile.ZipFile, path: Path, name: str) -> Any:
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
            doc = _member_json(archive, path, "header.json")
        elif "_journal/start.json" in names:
            doc = _member_json(archive, path, "_journal/start.json")
            doc.setdefault("status", "started")
        else:
            raise FileFormatError(f"{path}: not an Inspect .eval log (no header.json or _journal/start.json)")
        if not isinstance(doc, dict):
            raise FileFormatError(f"{path}: header.json must be a JSON object")
        sample_names = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
        doc["samples"] = [_member_json(archive, path, n) for n in sample_names]
    return doc


def _map_value(value: Any) -> tuple[float | None, str | None]:
    """(outcome, problem) for one score value; (None, None) means unscored."""
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
            return _map_value(float(text))
        except ValueError:
            return None, "must be C, I, P, N, a boolean or a number in [0, 1]"
    return None, "must be a scalar (C, I, P, N, a boolean or a number); pick a key of a dict score with scorer='NAME:KEY'"


def _resolve(value: Any, attachments: Mapping[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("attachment://"):
        return attachments.get(value[len("attachment://") :], value)
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _tool_calls(message: Mapping[str, Any]) -> list[tuple[str, Any]]:
    calls = message.get("tool_calls") or []
    return [(str(c.get("function", "")), c.get("arguments")) for c in calls if isinstance(c, dict)]


def _task_text(sample: Mapping[str, Any]) -> str:
    value = sample.get("input")
    if isinstance(value, list):
        users = [m for m in value if isinstance(m, dict) and m.get("role") == "user"]
        return text_of(users[0].get("content")) if users else ""
    return text_of(value)


def read_log(collector: Collector, path: Path, doc: dict[str, Any]) -> None:
    """Add the samples of one Inspect log (already loaded) to ``collector``."""
    file = str(path)
    collector.files.append(file)
    eval_spec = doc.get("eval")
    if not isinstance(eval_spec, dict):
        collector.problem(file, None, "eval", "must be the eval spec object of an Inspect log", eval_spec)
        return
    samples = doc.get("samples")
    if not isinstance(samples, list) or not samples:
        collector.problem(
            file,
            None,
            "samples",
            "must hold the logged samples; this log has none (was it written with log_samples=False?)",
            None if samples is None else len(samples) if isinstance(samples, list) else samples,
        )
        return
    model = eval_spec.get("model")
    task_name = eval_spec.get("task")
    default = str(model) if isinstance(model, str) and model else ""
    fields = {
        "model": model,
        "task": task_name,
        "task_display_name": eval_spec.get("task_display_name") or task_name,
        "run_id": eval_spec.get("run_id"),
        "eval_id": eval_spec.get("eval_id"),
    }
    system = system_name(collector.options.system, fields, default, file)
    if not system:
        collector.problem(file, None, "eval.model", "must name the model (or pass `system`)", model)
        return

    available = sorted({name for s in samples if isinstance(s, dict) for name in (s.get("scores") or {})})
    spec_order = [s.get("name") for s in eval_spec.get("scorers") or [] if isinstance(s, dict)]
    requested = collector.options.scorer
    key: str | None = None
    if requested is not None:
        scorer, _, key_text = requested.partition(":")
        key = key_text or None
        if available and scorer not in available:
            collector.problem(
                file, None, "scores", f"must include the requested scorer; this log has {', '.join(available)}", requested
            )
            return
    else:
        ordered = [str(n) for n in spec_order if n in available] + [n for n in available if n not in spec_order]
        scorer = ordered[0] if ordered else ""

    for row, sample in enumerate(samples, start=1):
        if not isinstance(sample, dict):
            collector.problem(file, row, None, "a sample must be a JSON object", type(sample).__name__)
            continue
        sample_id, epoch = sample.get("id"), sample.get("epoch")
        if isinstance(sample_id, bool) or not isinstance(sample_id, str | int) or str(sample_id).strip() == "":
            collector.problem(file, row, "id", "must be a sample id (text or integer)", sample_id)
            continue
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
            collector.problem(file, row, "epoch", "must be an integer >= 1", epoch)
            continue
        task = str(sample_id)
        record = f"sample {task} epoch {epoch}"
        flags: list[str] = []
        error = sample.get("error")
        if error:
            flags.append("error")
        limit = sample.get("limit")
        if isinstance(limit, dict) and limit.get("type"):
            flags.append(f"limit:{limit['type']}")
        elif isinstance(limit, str) and limit:
            flags.append(f"limit:{limit}")

        outcome: float | None = None
        unknown: str | None = None
        score = (sample.get("scores") or {}).get(scorer) if scorer else None
        if isinstance(score, dict) and "value" in score:
            value = score["value"]
            if isinstance(value, dict):
                if key is None or key not in value:
                    collector.problem(
                        file,
                        row,
                        f"scores.{scorer}.value",
                        "is a dict; pick one of its keys with scorer='"
                        + scorer
                        + ":KEY' (keys: "
                        + ", ".join(sorted(map(str, value)))
                        + ")",
                        record,
                    )
                    continue
                value = value[key]
            outcome, rule = _map_value(value)
            if rule is not None:
                collector.problem(file, row, f"scores.{scorer}.value", rule, value)
                continue
            if outcome is None:
                unknown = "error" if error else "unscored"
        else:
            unknown = "error" if error else "unscored"

        cost = None
        usages = sample.get("model_usage") or {}
        if isinstance(usages, dict):
            costs = [nonneg(u.get("total_cost")) for u in usages.values() if isinstance(u, dict)]
            present = [c for c in costs if c is not None]
            cost = sum(present) if present else None
        elapsed = collector.options.pick_elapsed(nonneg(sample.get("total_time")), nonneg(sample.get("working_time")))

        steps = None
        if collector.options.trajectories:
            attachments = sample.get("attachments") or {}
            messages = [_resolve(m, attachments) for m in sample.get("messages") or [] if isinstance(m, dict)]
            steps = steps_from_messages(messages, tool_calls=_tool_calls)
        meta: dict[str, Any] = {"scorer": scorer, "epoch": epoch, "inspect_task": task_name}
        if isinstance(error, dict) and error.get("message"):
            meta["error"] = str(error["message"])[:500]
        if isinstance(limit, dict):
            meta["limit"] = limit
        collector.add(
            file=file,
            system=system,
            task=task,
            outcome=outcome,
            unknown=unknown,
            flags=flags,
            attempt=epoch - 1,
            cost_usd=cost,
            elapsed_s=elapsed,
            record=record,
            steps=steps,
            task_text=_task_text(sample) if collector.options.trajectories else "",
            meta=meta,
        )
    collector.notes.append(
        f"{file}: outcome from scorer '{scorer or '(none)'}'"
        + (f" (of {', '.join(available)})" if len(available) > 1 else "")
        + (f"; log status {doc.get('status')}" if doc.get("status") not in (None, "success") else "")
    )

