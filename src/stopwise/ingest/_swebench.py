"""SWE-bench: the harness run report, leaderboard ``results.json`` and per-instance reports.

Three shapes are read, told apart by their keys:

* **run report** (``<model>.<run_id>.json`` written by ``swebench.harness.run_evaluation``):
  ``resolved_ids``, ``unresolved_ids``, ``error_ids``, ``empty_patch_ids``, ``incomplete_ids``, ...
  The Multi-SWE-bench leaderboard's ``results/results.json`` has this shape with the resolved list
  named ``resolved``; it is read the same way, its system named by the submission folder.
* **leaderboard results** (``evaluation/<split>/<submission>/results/results.json`` of the
  experiments repository): a ``resolved`` list, with ``no_generation`` / ``no_logs`` (and, in old
  submissions, ``generated``, ``applied``, ``no_apply``, ``test_errored``, ... lists).
* **instance map**: ``{instance_id: {"resolved": bool, ...}}`` -- the harness's per-instance
  ``report.json`` (``patch_is_None``, ``patch_exists``, ``patch_successfully_applied``) or a
  ``per_instance_details.json`` (``cost``, ``api_calls``).

A list the reader does not know, in a run report or leaderboard file, is refused by name: it may
hold outcomes that would otherwise be misread. A run report's counts (``resolved_instances``, ...)
must agree with its lists.

Runs. The run id of a run report (``<model>.<run_id>.json``) or of a ``logs/run_evaluation/<run_id>/``
tree makes the rows of two runs of one model distinct attempts (numbered in run id order); a run's
per-instance reports are set aside (listed in ``ignored_files``) when its run report is read too.

Group is the repository parsed from the instance id (``django__django-11099`` -> ``django/django``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stopwise.ingest._common import COVERED, Collector, nonneg, path_fields, repository_of, system_name

RUN_REPORT_KEYS = ("resolved_ids", "unresolved_ids", "error_ids", "empty_patch_ids")
"""The outcome lists of a run report (the resolved one may be named ``resolved``)."""
_RESOLVED_ALIAS = "resolved"
_RUN_REPORT_UNIVERSE = ("submitted_ids", "completed_ids", "incomplete_ids")
_RUN_REPORT_OTHER_LISTS = ("unstopped_containers", "unremoved_images")
_RUN_REPORT_COUNTS = {
    "resolved_instances": "resolved_ids",
    "unresolved_instances": "unresolved_ids",
    "empty_patch_instances": "empty_patch_ids",
    "error_instances": "error_ids",
}
_LEADERBOARD_ERROR_LISTS = ("no_logs", "install_fail", "reset_failed")
_LEADERBOARD_FLAG_LISTS = {"no_apply": "not_applied", "test_errored": "test_errored", "test_timeout": "test_timeout"}
_OLD_UNIVERSE_LISTS = ("generated", "with_logs", "applied")
_LEADERBOARD_LISTS = (
    "resolved",
    "no_generation",
    *_LEADERBOARD_ERROR_LISTS,
    *_LEADERBOARD_FLAG_LISTS,
    *_OLD_UNIVERSE_LISTS,
)
_RUN_REPORT_SIGNS = (*RUN_REPORT_KEYS, *_RUN_REPORT_UNIVERSE)


def kind_of(doc: Any) -> str | None:
    """``run_report``, ``leaderboard`` or ``instances`` for a SWE-bench document, else None."""
    if not isinstance(doc, dict) or not doc:
        return None
    if any(key in doc for key in _RUN_REPORT_SIGNS):
        return "run_report"
    if isinstance(doc.get("resolved"), list) and all(isinstance(v, list) for v in doc.values()):
        return "leaderboard"
    if all(isinstance(v, dict) and "resolved" in v for v in doc.values()):
        return "instances"
    return None


def _run_report_names(path: Path) -> tuple[str, str | None]:
    """(model, run id) from a run report's file name ``<model>.<run_id>.json``; run id None without a dot."""
    stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.stem
    if "." in stem:
        model, run_id = stem.rsplit(".", 1)
        if model and run_id:
            return model, run_id
    return _folder_system(path), None


def _folder_system(path: Path) -> str:
    parent = path.resolve().parent
    return parent.parent.name if parent.name == "results" else parent.name


def _instance_tree(path: Path, doc: Mapping[str, Any]) -> tuple[str, str] | None:
    """(model, run id) of ``logs/run_evaluation/<run_id>/<model>/<instance_id>/report.json``, else None."""
    parent = path.resolve().parent
    if len(doc) == 1 and next(iter(doc)) == parent.name:
        return parent.parent.name, parent.parent.parent.name
    return None


def _misplaced_instance_report(path: Path, kind: str, doc: Mapping[str, Any]) -> str | None:
    """The instance of a per-instance ``report.json`` lying in a folder named after another instance, else None."""
    if kind != "instances" or path.name != "report.json" or len(doc) != 1:
        return None
    key, folder = str(next(iter(doc))), path.resolve().parent.name
    return key if key != folder and repository_of(folder) else None  # the folder has an instance id's shape


def _identity(path: Path, kind: str, doc: Mapping[str, Any]) -> tuple[str, str | None]:
    """(default system, run id) of one document."""
    if kind == "run_report":
        return _run_report_names(path)
    if kind == "instances":
        tree = _instance_tree(path, doc)
        if tree is not None:
            return tree
    return _folder_system(path), None


def read_documents(collector: Collector, units: Sequence[tuple[Path, str, Any]], ignored: dict[str, str]) -> None:
    """Read SWE-bench documents; a run's per-instance reports are set aside when its run report is read."""
    reports: dict[tuple[str, str], Path] = {}
    for path, kind, _doc in units:
        if kind == "run_report":
            model, run_id = _run_report_names(path)
            if run_id is not None:
                reports[(model, run_id)] = path
    for path, kind, doc in units:
        if kind == "instances":
            tree = _instance_tree(path, doc)
            if tree is not None and tree in reports:
                ignored[str(path)] = f"{COVERED}the run report {reports[tree]} (run {tree[1]})"
                continue
        read_document(collector, path, doc, kind=kind)
    covered = sum(1 for reason in ignored.values() if reason.startswith(f"{COVERED}the run report"))
    if covered:
        collector.notes.append(f"{covered} per-instance report.json files not read: their run report covers them")


def read_document(
    collector: Collector,
    path: Path,
    doc: Any,
    *,
    kind: str | None = None,
    system: str | None = None,
) -> None:
    """Add the runs of one SWE-bench document to ``collector``.

    ``system`` is the system name when the caller has resolved it (HAL); else it is taken from the
    path (or the ``system`` template over the path's fields).
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
    if system is not None:  # named by the caller (HAL), its run id the caller's: one attempt per task
        name, run = system, None
    else:
        misplaced = _misplaced_instance_report(path, kind, doc)
        if misplaced is not None and collector.options.system is None:
            collector.problem(
                file, None, misplaced,
                f"a per-instance report.json must sit in its instance's folder, logs/run_evaluation/<run>/<model>/{misplaced}/; "
                f"it is in {path.resolve().parent.name!r}, another instance's folder, which would be taken as its system "
                "(move it, or name the system with `system`)",
                misplaced,
            )
            return
        default, run = _identity(path, kind, doc)
        offered = {**path_fields(path), "system": default, "model": default, "run_id": run}
        name = system_name(collector.options.system, offered, default, file)
    if not name:
        collector.problem(file, None, "system", "must name the system (pass `system`)", name)
        return
    if kind == "run_report":
        _run_report(collector, file, doc, name, run)
    elif kind == "leaderboard":
        _leaderboard(collector, file, doc, name)
    else:
        _instances(collector, file, doc, name, run)


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


def _unknown_lists(collector: Collector, file: str, doc: Mapping[str, Any], known: Sequence[str], what: str) -> bool:
    """Refuse lists the reader does not know (they may carry outcomes); True when there were none."""
    unknown = [k for k, v in doc.items() if k not in known and (isinstance(v, list) or str(k).endswith("_ids"))]
    for key in unknown:
        collector.problem(
            file,
            None,
            key,
            f"is a list this reader does not know in a {what}, so its instances' outcomes cannot be read; "
            f"expected only {', '.join(known)}",
            f"{len(doc[key])} ids" if isinstance(doc[key], list) else doc[key],
        )
    return not unknown


def _run_report_lists(collector: Collector, file: str, doc: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """The outcome lists of a run report, ``resolved`` read as ``resolved_ids``; None after a problem."""
    known = (*RUN_REPORT_KEYS, _RESOLVED_ALIAS, *_RUN_REPORT_UNIVERSE, *_RUN_REPORT_OTHER_LISTS)
    if not _unknown_lists(collector, file, doc, known, "SWE-bench run report"):
        return None
    if "resolved_ids" in doc and _RESOLVED_ALIAS in doc:
        collector.problem(file, None, _RESOLVED_ALIAS, "must not be given beside resolved_ids (which list holds the resolved ids?)")
        return None
    lists = {key: _ids(collector, file, doc, key) for key in RUN_REPORT_KEYS}
    if "resolved_ids" not in doc and _RESOLVED_ALIAS in doc:
        lists["resolved_ids"] = _ids(collector, file, doc, _RESOLVED_ALIAS)
    ok = True
    for count_key, list_key in _RUN_REPORT_COUNTS.items():
        count, n = doc.get(count_key), len(set(lists[list_key]))
        if isinstance(count, int) and not isinstance(count, bool) and count != n:
            named = _RESOLVED_ALIAS if list_key == "resolved_ids" and list_key not in doc else list_key
            collector.problem(file, None, count_key, f"must equal the number of ids in {named} ({n})", count)
            ok = False
    return lists if ok else None


def _run_report(collector: Collector, file: str, doc: Mapping[str, Any], system: str, run: str | None) -> None:
    lists = _run_report_lists(collector, file, doc)
    if lists is None:
        return
    _exclusive(collector, file, lists)
    attempt, order = (0, ()) if run is None else (None, (run,))
    for key, outcome, unknown in (
        ("resolved_ids", 1.0, None),
        ("unresolved_ids", 0.0, None),
        ("error_ids", None, "error"),
        ("empty_patch_ids", None, "empty_patch"),
    ):
        for instance in lists[key]:
            collector.add(
                file=file,
                system=system,
                task=instance,
                outcome=outcome,
                unknown=unknown,
                group=repository_of(instance),
                attempt=attempt,
                order=order,
                run=run,
            )
    placed = {i for ids in lists.values() for i in ids}
    for instance in sorted(set(_ids(collector, file, doc, "incomplete_ids")) - placed):
        collector.skip(file, instance, "not submitted (incomplete_ids)")
    for instance in sorted(set(_ids(collector, file, doc, "submitted_ids")) - placed):
        collector.skip(file, instance, "submitted but in no result list")


def _leaderboard(collector: Collector, file: str, doc: Mapping[str, Any], system: str) -> None:
    if not _unknown_lists(collector, file, doc, _LEADERBOARD_LISTS, "SWE-bench leaderboard results.json"):
        return
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


def _instances(collector: Collector, file: str, doc: Mapping[str, Any], system: str, run: str | None) -> None:
    attempt, order = (0, ()) if run is None else (None, (run,))
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
                attempt=attempt,
                order=order,
                cost_usd=cost_usd,
                run=run,
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
            attempt=attempt,
            order=order,
            cost_usd=cost_usd,
            run=run,
        )
