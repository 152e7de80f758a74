"""Inspect AI logs to outcome rows (``inspect_ai`` is not imported).

The format itself (``.eval`` archives and ``.json`` documents, eval sets, score values, messages) is read by
:mod:`stopwise._logs`, which the log-directory watcher (:mod:`stopwise.live`) and the live managers
(:mod:`stopwise.inspect`) share; this module makes rows of it.

One row per sample and epoch: task = sample id, attempt = epoch - 1, outcome = the chosen scorer's
value (``C`` 1, ``I`` 0, ``P`` 0.5, ``N`` 0, booleans 1/0, numbers kept), cost = the sum of
``model_usage[*].total_cost`` when recorded, elapsed = ``total_time`` (or ``working_time``).

System names. The default is the log's ``model``; two logs of one model (two solvers, two task
variants, two ``mockllm/model`` runs) would then read as one system. :func:`system_template` turns
``--system-from`` choices into a ``system`` template over a log's fields: ``model``, ``file`` (the
log's file name without suffix), ``dir`` (its folder's name), ``task``, ``task-arg:NAME``,
``tag`` (the log's only tag), ``tag:PREFIX`` (the tag that starts with PREFIX, PREFIX removed),
``solver`` and ``metadata:KEY``; several choices are joined with ``/``. A field a log lacks is an
error naming the file and what the log has. Control characters (terminal escape sequences) in a
name are written as hex escapes (ESC as backslash-x-1-b), so a log cannot drive the terminal through its ``model`` field.

Eval sets. A folder written by ``inspect_ai.eval_set`` holds ``eval-set.json``, ``logs.json`` and
one log per task and model, plus the logs of attempts that a retry replaced. Of the logs that share
a ``task_id`` in such a folder, only the newest is read (by ``created``:
:func:`stopwise._logs.select_eval_set_logs`); the others are listed as ignored, with the log that replaced them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from stopwise._logs import (
    early_stopping_of,
    load_eval,
    message_steps,
    score_audit_flags,
    score_outcome,
    score_predicted,
    score_probability_flags,
    select_eval_set_logs,
    text_of,
)
from stopwise._text import printable
from stopwise.errors import InputError
from stopwise.ingest._common import Collector, Progress, nonneg, system_name

SYSTEM_SOURCES = ("model", "file", "dir", "task", "task-arg:NAME", "tag", "tag:PREFIX", "solver", "metadata:KEY")
"""What ``--system-from`` may name (NAME, PREFIX and KEY are yours)."""

_SIMPLE = {"model": "{model}", "file": "{file}", "dir": "{dir}", "task": "{task}", "tag": "{tag}", "solver": "{solver}"}
_KEYED = {"task-arg": "task_args", "tag": "tag_prefix", "metadata": "metadata"}
_KEY = re.compile(r"[A-Za-z0-9_.=@+\-]+")


def system_template(sources: str | Sequence[str]) -> str:
    """The ``system`` template for ``--system-from`` choices (several are joined with ``/``).

    Parameters
    ----------
    sources : str or sequence of str
        Each one of :data:`SYSTEM_SOURCES`; a single string may list several separated by commas.

    Returns
    -------
    str
        A template over an Inspect log's fields, for the ``system`` option.

    Raises
    ------
    InputError
        An unknown choice, or a NAME / PREFIX / KEY with characters outside ``A-Z a-z 0-9 _ . = @ + -``.

    Examples
    --------
    >>> from stopwise.ingest import system_template
    >>> system_template("file")
    '{file}'
    >>> system_template(["model", "task-arg:variant"])
    '{model}/{task_args[variant]}'
    >>> system_template("tag:system=")
    '{tag_prefix[system=]}'
    """
    items = [sources] if isinstance(sources, str) else list(sources)
    parts = [p.strip() for item in items for p in (item.split(",") if isinstance(item, str) else [item])]
    if not parts or any(not isinstance(p, str) or not p for p in parts):
        raise InputError(f"`system_from` must name at least one of {', '.join(SYSTEM_SOURCES)}; got {sources!r}")
    out = []
    for part in parts:
        if part in _SIMPLE:
            out.append(_SIMPLE[part])
            continue
        kind, sep, key = part.partition(":")
        if sep and kind in _KEYED:
            if not _KEY.fullmatch(key):
                raise InputError(
                    f"`system_from` {part!r}: the {kind} key must be non-empty and use only A-Z a-z 0-9 _ . = @ + -"
                )
            out.append("{" + _KEYED[kind] + "[" + key + "]}")
            continue
        raise InputError(f"`system_from` must be one of {', '.join(SYSTEM_SOURCES)}; got {part!r}")
    return "/".join(out)


class _Keyed(dict[str, Any]):
    """A log's mapping field (task args, metadata) whose missing key is an error naming the file."""

    def __init__(self, file: str, field: str, values: Mapping[str, Any], hint: str = "") -> None:
        super().__init__({str(k): v for k, v in values.items()})
        self.file, self.field, self.hint = file, field, hint

    def __getitem__(self, key: str) -> Any:
        value = super().__getitem__(key)
        if isinstance(value, dict | list) or value is None:
            raise InputError(
                f"{self.file}: {self.field}[{key!r}] must be a scalar to name a system; got {json.dumps(value)[:80]}"
            )
        return value

    def __missing__(self, key: str) -> Any:
        have = ", ".join(sorted(self)) or "none"
        raise InputError(f"{self.file}: the log has no {self.field}[{key!r}] to name the system ({self.field}: {have}){self.hint}")


class _TagPrefix(dict[str, Any]):
    def __init__(self, file: str, tags: list[str]) -> None:
        super().__init__()
        self.file, self.tags = file, tags

    def __missing__(self, prefix: str) -> str:
        found = [t[len(prefix) :] for t in self.tags if t.startswith(prefix) and len(t) > len(prefix)]
        if len(found) != 1:
            raise InputError(
                f"{self.file}: must have exactly one tag starting with {prefix!r} to name the system; "
                f"it has {len(found)} (tags: {', '.join(self.tags) or 'none'})"
            )
        return found[0]


class _OneTag:
    def __init__(self, file: str, tags: list[str]) -> None:
        self.file, self.tags = file, tags

    def __format__(self, spec: str) -> str:
        if len(self.tags) != 1:
            raise InputError(
                f"{self.file}: must have exactly one tag to name the system by tag; it has {len(self.tags)} "
                f"({', '.join(self.tags) or 'none'}); use --system-from tag:PREFIX to pick one"
            )
        return format(self.tags[0], spec)


def _name_fields(path: Path, eval_spec: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a ``system`` template may use for one log."""
    file = str(path)
    tags = [str(t) for t in eval_spec.get("tags") or [] if isinstance(t, str | int | float)]
    task_args = eval_spec.get("task_args") if isinstance(eval_spec.get("task_args"), dict) else {}
    metadata = eval_spec.get("metadata") if isinstance(eval_spec.get("metadata"), dict) else {}
    solver = eval_spec.get("solver")
    task_name = eval_spec.get("task")
    return {
        "model": eval_spec.get("model"),
        "task": task_name,
        "task_display_name": eval_spec.get("task_display_name") or task_name,
        "run_id": eval_spec.get("run_id"),
        "eval_id": eval_spec.get("eval_id"),
        "file": path.stem,
        "dir": path.resolve().parent.name,
        "solver": solver if isinstance(solver, str) and solver else _Missing(file, "solver"),
        "task_args": _Keyed(file, "task_args", task_args or {}),
        "metadata": _Keyed(file, "metadata", metadata or {}),
        "tag": _OneTag(file, tags),
        "tags": ",".join(tags),
        "tag_prefix": _TagPrefix(file, tags),
    }


class _OutputModel:
    """The ``{output_model}`` field: the one model the samples' ``output.model`` names.

    Custom model APIs logged as ``mockllm/model`` say there which model produced the samples.
    """

    def __init__(self, file: str, samples: Sequence[Any]) -> None:
        self.file = file
        self.models = sorted(
            {
                str(model)
                for s in samples
                if isinstance(s, dict)
                for model in [(s.get("output") or {}).get("model") if isinstance(s.get("output"), dict) else None]
                if isinstance(model, str) and model
            }
        )

    def __format__(self, spec: str) -> str:
        if len(self.models) != 1:
            raise InputError(
                f"{self.file}: must have one model in its samples' output.model to name the system by it; "
                f"its samples name {len(self.models)} models in output.model ({', '.join(self.models) or 'none'})"
            )
        return format(self.models[0], spec)


class _Missing:
    def __init__(self, file: str, field: str) -> None:
        self.file, self.field = file, field

    def __format__(self, spec: str) -> str:
        raise InputError(f"{self.file}: the log names no {self.field} (the eval used the task's default solver)")


def read_logs(
    collector: Collector, items: Iterable[tuple[Path, str, Any]], ignored: dict[str, str], *, progress: Progress | None = None,
) -> None:
    """Read Inspect logs (``(path, kind, parsed document)``), eval-set folders resolved; ``progress`` counts the ``.eval`` archives."""
    chosen, notes = select_eval_set_logs(list(items), ignored)
    archives, done = sum(kind == "eval" for _, kind, _ in chosen), 0
    for path, kind, doc in chosen:
        if progress is not None and kind == "eval":
            progress(done, archives, "Inspect .eval logs read")
            done += 1
        read_log(collector, path, load_eval(path) if kind == "eval" else doc)
    collector.notes.extend(notes)


def _resolve(value: Any, attachments: Mapping[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("attachment://"):
        return attachments.get(value[len("attachment://") :], value)
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _task_text(sample: Mapping[str, Any]) -> str:
    value = sample.get("input")
    if isinstance(value, list):
        users = [m for m in value if isinstance(m, dict) and m.get("role") == "user"]
        return text_of(users[0].get("content")) if users else ""
    return text_of(value)


def read_log(collector: Collector, path: Path, doc: dict[str, Any]) -> None:
    """Add the samples of one Inspect log (already loaded) to ``collector``.

    A log without samples (cancelled before any sample finished, or written with
    ``log_samples=False``) gives no rows and a note; the other logs of a folder are still read.
    """
    file = str(path)
    collector.files.append(file)
    eval_spec = doc.get("eval")
    if not isinstance(eval_spec, dict):
        collector.problem(file, None, "eval", "must be the eval spec object of an Inspect log", eval_spec)
        return
    samples = doc.get("samples")
    if samples is not None and not isinstance(samples, list):
        collector.problem(file, None, "samples", "must be a list of samples", type(samples).__name__)
        return
    if not samples:
        collector.notes.append(
            f"{file}: no samples (log status {doc.get('status') or 'unknown'}); no rows from this log"
            + ("" if doc.get("status") in ("cancelled", "error", "started") else
               " (was it written with log_samples=False, or were all its samples skipped by an early-stopping manager?)")
        )
        return
    system = _log_system(collector, path, eval_spec, samples)
    if not system:
        return
    chosen = _choose_scorer(collector, file, eval_spec, samples)
    if chosen is None:
        return
    scorer, key, available = chosen
    for row, sample in enumerate(samples, start=1):
        _read_sample(collector, file, row, sample, system=system, scorer=scorer, key=key, task_name=eval_spec.get("task"))
    _read_early_stops(collector, file, early_stopping_of(doc))
    collector.notes.append(
        f"{file}: outcome from scorer '{scorer or '(none)'}'"
        + (f" (of {', '.join(available)})" if len(available) > 1 else "")
        + (f"; log status {doc.get('status')}" if doc.get("status") not in (None, "success") else "")
    )


def _read_early_stops(collector: Collector, file: str, early: Any) -> None:
    """Count the samples an early-stopping manager skipped (``results.early_stopping.early_stops``) as skipped runs.

    A skipped sample never ran, so it is no row; it is reported with the manager's reason (e.g.
    ``stopwise promote: ...``). Inspect writes the early-stopping summary only when a sample of the
    task was scored, so a log whose every sample was skipped has none.
    """
    if not isinstance(early, dict) or not isinstance(stops := early.get("early_stops"), list):
        return
    manager = str(early.get("manager") or "an early-stopping manager")
    for stop in stops:
        if not isinstance(stop, dict):
            continue
        reason = str(stop.get("reason") or "no reason given")
        reason = reason if len(reason) <= 160 else reason[:157] + "..."
        collector.skip(
            file,
            f"sample {stop.get('id')} epoch {stop.get('epoch')}",
            f"early-stopping manager {manager}: {reason}",
            f"skipped by the early-stopping manager: {_stop_cause(stop, reason)}",
        )


def _stop_cause(stop: Mapping[str, Any], reason: str) -> str:
    """A one-word cause of an early stop: stopwise's ``action`` metadata, the reason's first word after "stopwise", else "other".

    Examples
    --------
    >>> _stop_cause({"metadata": {"action": "budget"}}, "stopwise budget: planned task 21 of 40 ..."), _stop_cause({}, "stopwise promote: ...")
    ('budget', 'promote')
    >>> _stop_cause({}, "enough samples")
    'other'
    """
    metadata = stop.get("metadata")
    action = metadata.get("action") if isinstance(metadata, dict) else None
    if isinstance(action, str) and action.strip():
        return action.strip()
    words = reason.split(":", 1)[0].split()
    return words[1] if len(words) >= 2 and words[0] == "stopwise" else "other"


def _log_system(collector: Collector, path: Path, eval_spec: Mapping[str, Any], samples: Sequence[Any]) -> str:
    """The system name of one log (its model, or the ``system`` template); "" after a problem."""
    file = str(path)
    model = eval_spec.get("model")
    default = str(model) if isinstance(model, str) and model else ""
    fields = {**_name_fields(path, eval_spec), "output_model": _OutputModel(file, samples)}
    system = printable(system_name(collector.options.system, fields, default, file))
    if not system:
        collector.problem(file, None, "eval.model", "must name the model (or pass `system`)", model)
    return system


def _choose_scorer(
    collector: Collector, file: str, eval_spec: Mapping[str, Any], samples: Sequence[Any]
) -> tuple[str, str | None, list[str]] | None:
    """(scorer, dict key, scorers available) for one log; None after a problem."""
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
            return None
    else:
        ordered = [str(n) for n in spec_order if n in available] + [n for n in available if n not in spec_order]
        scorer = ordered[0] if ordered else ""
    return scorer, key, available


def _sample_flags(sample: Mapping[str, Any]) -> list[str]:
    flags: list[str] = []
    if sample.get("error"):
        flags.append("error")
    limit = sample.get("limit")
    if isinstance(limit, dict) and limit.get("type"):
        flags.append(f"limit:{limit['type']}")
    elif isinstance(limit, str) and limit:
        flags.append(f"limit:{limit}")
    return flags


def _sample_outcome(
    collector: Collector, file: str, row: int, sample: Mapping[str, Any], scorer: str, key: str | None, record: str
) -> tuple[float | None, str | None] | None:
    """(outcome, why unknown) of one sample; None after a problem."""
    error = sample.get("error")
    score = (sample.get("scores") or {}).get(scorer) if scorer else None
    if not (isinstance(score, dict) and "value" in score):
        return None, "error" if error else "unscored"
    value = score["value"]
    if isinstance(value, dict):
        if key is None or key not in value:
            keys = ", ".join(sorted(map(str, value)))
            rule = f"is a dict; pick one of its keys with scorer='{scorer}:KEY' (keys: {keys})"
            collector.problem(file, row, f"scores.{scorer}.value", rule, record)
            return None
        value = value[key]
    outcome, problem = score_outcome(value)
    if problem is not None:
        collector.problem(file, row, f"scores.{scorer}.value", problem, value)
        return None
    return outcome, (("error" if error else "unscored") if outcome is None else None)


def _sample_cost(sample: Mapping[str, Any]) -> float | None:
    usages = sample.get("model_usage") or {}
    if not isinstance(usages, dict):
        return None
    present = [c for c in (nonneg(u.get("total_cost")) for u in usages.values() if isinstance(u, dict)) if c is not None]
    return sum(present) if present else None


def _read_sample(
    collector: Collector,
    file: str,
    row: int,
    sample: Any,
    *,
    system: str,
    scorer: str,
    key: str | None,
    task_name: Any,
) -> None:
    """Add one sample (one epoch of one task) of a log."""
    if not isinstance(sample, dict):
        collector.problem(file, row, None, "a sample must be a JSON object", type(sample).__name__)
        return
    sample_id, epoch = sample.get("id"), sample.get("epoch")
    if isinstance(sample_id, bool) or not isinstance(sample_id, str | int) or str(sample_id).strip() == "":
        collector.problem(file, row, "id", "must be a sample id (text or integer)", sample_id)
        return
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        collector.problem(file, row, "epoch", "must be an integer >= 1", epoch)
        return
    task = str(sample_id)
    record = f"sample {task} epoch {epoch}"
    for name in ("total_time", "working_time"):  # a negative time is a damaged log, not a blank elapsed_s
        value = sample.get(name)
        if not isinstance(value, bool) and isinstance(value, int | float) and value < 0:
            collector.problem(file, row, name, "must be a non-negative number of seconds", value)
            return
    scored = _sample_outcome(collector, file, row, sample, scorer, key, record)
    if scored is None:
        return
    outcome, unknown = scored
    score = (sample.get("scores") or {}).get(scorer)
    predicted = unknown is None and score_predicted(score)
    score_flags = ["predicted", *score_probability_flags(score)] if predicted else score_audit_flags(score) if unknown is None else []
    steps = None
    if collector.options.trajectories:
        attachments = sample.get("attachments") or {}
        messages = [_resolve(m, attachments) for m in sample.get("messages") or [] if isinstance(m, dict)]
        steps = message_steps(messages)
    meta: dict[str, Any] = {"scorer": scorer, "epoch": epoch, "inspect_task": task_name}
    error, limit = sample.get("error"), sample.get("limit")
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
        flags=[*_sample_flags(sample), *score_flags],
        status="predicted" if predicted else "final",
        attempt=epoch - 1,
        cost_usd=_sample_cost(sample),
        elapsed_s=collector.options.pick_elapsed(nonneg(sample.get("total_time")), nonneg(sample.get("working_time"))),
        record=record,
        steps=steps,
        task_text=_task_text(sample) if collector.options.trajectories else "",
        meta=meta,
    )
