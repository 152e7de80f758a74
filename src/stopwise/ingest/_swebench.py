"""SWE-bench: the harness run report, leaderboard ``results.json`` and per-instance reports.

Three shapes are read, told apart by their keys:

* **run report** (``<model>.<run_id>.json`` written by ``swebench.harness.run_evaluation``):
  ``resolved_ids``, ``unresolved_ids``, ``error_ids``, ``empty_patch_ids``, ``incomplete_ids``, ...
* **leaderboard results** (``evaluation/<split>/<submission>/results/results.json`` of the
  experiments repository): a ``resolved`` list, with ``no_generation`` / ``no_logs`` (and, in old
  submissions, ``generated``, ``applied``, ``no_apply``, ``test_errored``, ... lists).
* **instance map**: ``{instance_id: {"resolved": bool, ...}}`` -- the harness's per-instance
  ``report.json`` (``patch_is_None``, ``patch_exists``, ``patch_successfully_applied``) or a
  ``per_instance_details.json`` (``cost``, ``api_calls``).

Group is the repository parsed from the instance id (``django__django-11099`` -> ``django/django``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stopwise.ingest._common import Collector, nonneg, repository_of, system_name

RUN_REPORT_KEYS = ("resolved_ids", "unresolved_ids", "error_ids", "empty_patch_ids")
_LEADERBOARD_ERROR_LISTS = ("no_logs", "install_fail", "reset_failed")
_LEADERBOARD_FLAG_LISTS = {"no_apply": "not_applied", "test_errored": "test_errored", "test_timeout": "test_timeout"}
_OLD_UNIVERSE_LISTS = ("generated", "with_logs", "applied")


def kind_of(doc: Any) -> str | None:
    """``run_report``, ``leaderboard`` or ``instances`` for a SWE-bench document, else None."""
    if not isinstance(doc, dict) or not doc:
        return None
    if any(key in doc for key in RUN_REPORT_KEYS):
        return "run_report"
    if isinstance(doc.get("resolved"), list) and all(isinstance(v, list) for v in doc.values()):
        return "leaderboard"
    if all(isinstance(v, dict) and "resolved" in v for v in doc.values()):
        return "instances"
    return None


def _default_system(path: Path, kind: str, doc: Mapping[str, Any]) -> str:
    if kind == "run_report":
        # <model_name_or_path with / as __>.<run_id>.json
        stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.stem
        return stem.rsplit(".", 1)[0] if "." in stem else stem
    parent = path.resolve().parent
    if kind == "instances" and len(doc) == 1 and next(iter(doc)) == parent.name:
        # logs/run_evaluation/<run_id>/<model>/<instance_id>/report.json
        return parent.parent.name
    if parent.name == "results":
        return parent.parent.name
    return parent.name


def read_document(
    collector: Collector,
    path: Path,
    doc: Any,
    *,
    kind: str | None = None,
    system: str | None = None,
    fields: Mapping[str, Any] | None = None,
) -> None:
    """Add the runs of one SWE-bench document to ``collector``.

    ``system`` is the default system name (else taken from the path); HAL passes its own.
    """
    file = str(path)
    kind = kind or kind_of(doc)
    collector.files.append(file)
    if kind is None:
        collector.problem(
            file,
            None,
            None,
            "must be a SWE-bench run report (resolved_ids, ...), leaderboard results (a resolved list) "
            "or an instance map ({instance_id: {resolved: ...}})",
            type(doc).__name__,
        )
        return
    default = system or _default_system(path, kind, doc)
    name = system_name(collector.options.system, {"system": default, **(fields or {})}, default, file)
    if not name:
        collector.problem(file, None, "system", "must name the system (pass `system`)", name)
        return
    if kind == "run_report":
        _run_report(collector, file, doc, name)
    elif kind == "leaderboard":
        _leaderboard(collector, file, doc, name)
    else:
        _instances(collector, file, doc, name)


def _ids(collector: Collector, file: str, doc: Mapping[str, Any], key: str) -> list[str]:
    value = doc.get(key, [])
    if not isinstance(value, list):
        collector.problem(file, None, key, "must be a list of instance ids", value)
        return []
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            collector.problem(file, None, f"{key}[{i}]", "must be a non-empty instance id", item)
        else:
            out.append(item.strip())
    return out


def _exclusive(collector: Collector, file: str, lists: Mapping[str, list[str]]) -> None:
    owner: dict[str, str] = {}
    for key, ids in lists.items():
        for instance in ids:
            if instance in owner and owner[instance] != key:
                collector.problem(
                    file, None, key, f"an instance must be in only one of the lists; also in {owner[instance]}", instance
                )
            owner.setdefault(instance, key)


def _run_report(collector: Collector, file: str, doc: Mapping[str, Any], system: str) -> None:
    lists = {key: _ids(collector, file, doc, key) for key in RUN_REPORT_KEYS}
    _exclusive(collector, file, lists)
    for instance in lists["resolved_ids"]:
        collector.add(file=file, system=system, task=instance, outcome=1.0, group=repository_of(instance), attempt=0)
    for instance in lists["unresolved_ids"]:
        collector.add(file=file, system=system, task=instance, outcome=0.0, group=repository_of(instance), attempt=0)
    for instance in lists["error_ids"]:
        collector.add(
            file=file, system=system, task=instance, outcome=None, unknown="error", group=repository_of(instance), attempt=0
        )
    for instance in lists["empty_patch_ids"]:
        collector.add(
            file=file,
            system=system,
            task=instance,
            outcome=None,
            unknown="empty_patch",
            group=repository_of(instance),
            attempt=0,
        )
    placed = {i for ids in lists.values() for i in ids}
    for instance in sorted(set(_ids(collector, file, doc, "incomplete_ids")) - placed):
        collector.skip(file, instance, "not submitted (incomplete_ids)")
    for instance in sorted(set(_ids(collector, file, doc, "submitted_ids")) - placed):
        collector.skip(file, instance, "submitted but in no result list")


def _leaderboard(collector: Collector, file: str, doc: Mapping[str, Any], system: str) -> None:
    lists = {key: _ids(collector, file, doc, key) for key in doc}
    resolved = set(lists["resolved"])
    instances = collector.options.instances
    if instances is not None:
        universe = list(dict.fromkeys(instances))
        outside = sorted({i for ids in lists.values() for i in ids} - set(universe))
        for instance in outside:
            collector.problem(file, None, "resolved", "must list only ids of `instances` (the dataset's instance ids)", instance)
    elif any(key in doc for key in _OLD_UNIVERSE_LISTS):
        universe = sorted({i for ids in lists.values() for i in ids})
    else:
        collector.problem(
            file,
            None,
            "resolved",
            "lists only the resolved instances, so the unresolved ones cannot be told from absent ones; "
            "pass the dataset's instance ids as `instances` (CLI: --instances FILE)",
            f"{len(resolved)} resolved ids",
        )
        return
    empty = set(lists.get("no_generation", []))
    errors = {i for key in _LEADERBOARD_ERROR_LISTS for i in lists.get(key, [])}
    flagged: dict[str, list[str]] = {}
    for key, flag in _LEADERBOARD_FLAG_LISTS.items():
        for instance in lists.get(key, []):
            flagged.setdefault(instance, []).append(flag)
    for instance in universe:
        group = repository_of(instance)
        if instance in resolved:
            conflict = sorted(k for k in ("no_generation", *_LEADERBOARD_ERROR_LISTS) if instance in lists.get(k, []))
            if conflict:
                collector.problem(file, None, "resolved", f"a resolved instance must not also be in {conflict[0]}", instance)
            collector.add(file=file, system=system, task=instance, outcome=1.0, group=group, attempt=0)
        elif instance in empty:
            collector.add(file=file, system=system, task=instance, outcome=None, unknown="empty_patch", group=group, attempt=0)
        elif instance in errors:
            collector.add(file=file, system=system, task=instance, outcome=None, unknown="error", group=group, attempt=0)
        else:
            collector.add(
                file=file, system=system, task=instance, outcome=0.0, flags=flagged.get(instance, ()), group=group, attempt=0
            )


def _instances(collector: Collector, file: str, doc: Mapping[str, Any], system: str) -> None:
    for row, (instance, entry) in enumerate(doc.items(), start=1):
        group = repository_of(instance)
        resolved = entry.get("resolved")
        cost = entry.get("cost")
        cost_usd = nonneg(cost)
        if cost is not None and cost_usd is None:
            collector.problem(file, row, f"{instance}.cost", "must be a number >= 0", cost)
        if entry.get("patch_is_None") is True or entry.get("patch_exists") is False:
            collector.add(
                file=file,
                system=system,
                task=instance,
                outcome=None,
                unknown="empty_patch",
                group=group,
                attempt=0,
                cost_usd=cost_usd,
            )
            continue
        if not isinstance(resolved, bool):
            collector.problem(file, row, f"{instance}.resolved", "must be true or false", resolved)
            continue
        flags = ["not_applied"] if entry.get("patch_successfully_applied") is False else []
        collector.add(
            file=file,
            system=system,
            task=instance,
            outcome=1.0 if resolved else 0.0,
            flags=flags,
            group=group,
            attempt=0,
            cost_usd=cost_usd,
        )
