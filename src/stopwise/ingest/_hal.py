"""HAL (Holistic Agent Leaderboard) harness: ``<run_id>_UPLOAD.json``.

The upload file holds ``config`` (``agent_name``, ``benchmark_name``, ``run_id``, ...),
``results`` (the benchmark's metrics, often ``successful_tasks`` / ``failed_tasks``, plus
``latencies``: per task ``total_time`` between the first and last model call),
``raw_eval_results`` (the benchmark's own per-task results), ``wall_clock_times`` (per task
seconds), ``task_metrics`` (per task, from the agent) and the run's ``total_cost``.

Per task the outcome is read from ``raw_eval_results[task]``: a number or boolean, or an object
with ``score`` / ``reward`` / ``success`` / ``correct`` / ``resolved`` (or the key given as
``scorer``); a list of such values (prompt variations) gives one attempt each; a string (HAL
writes the error message there) is a harness error. When ``raw_eval_results`` is a SWE-bench run
report (HAL's SWE-bench benchmarks), it is read as one, so errors and empty patches stay apart.
Tasks only named in ``results.successful_tasks`` / ``failed_tasks`` get 1 / 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stopwise.ingest import _swebench
from stopwise.ingest._common import Collector, nonneg, number, obj, repository_of, system_name

_SCORE_KEYS = ("score", "reward", "success", "correct", "resolved", "accuracy")
_COST_KEYS = ("cost_usd", "cost", "total_cost")


def is_upload(doc: Any) -> bool:
    """True for a HAL upload document."""
    return isinstance(doc, dict) and "raw_eval_results" in doc and isinstance(doc.get("config"), dict)


def _value(raw: Any, key: str | None) -> tuple[float | None, str | None, bool]:
    """(outcome, problem, is_error) of one raw eval result."""
    if isinstance(raw, str):
        return None, None, True
    if isinstance(raw, bool):
        return float(raw), None, False
    if isinstance(raw, int | float):
        value = number(raw)
        if value is None or not 0.0 <= value <= 1.0:
            return None, "must be a number in [0, 1] (the outcome contract)", False
        return value, None, False
    if isinstance(raw, dict):
        keys = [key] if key else [k for k in _SCORE_KEYS if k in raw]
        if not keys or keys[0] not in raw:
            return None, "must hold a score (" + ", ".join(_SCORE_KEYS) + ") or the key given as `scorer`", False
        return _value(raw[keys[0]], None)
    if raw is None:
        return None, None, True
    return None, "must be a number, a boolean, an object with a score, or a list of them", False


def read_upload(collector: Collector, path: Path, doc: dict[str, Any]) -> None:
    """Add the tasks of one HAL upload document to ``collector``."""
    file = str(path)
    config = doc["config"]
    benchmark = str(config.get("benchmark_name") or "")
    default = str(config.get("agent_name") or "")
    fields = {"agent_name": config.get("agent_name"), "benchmark": benchmark, "run_id": config.get("run_id")}
    system = system_name(collector.options.system, fields, default, file)
    raw_results = doc["raw_eval_results"]
    if isinstance(raw_results, dict) and _swebench.kind_of(raw_results) == "run_report":
        if not system:
            collector.files.append(file)
            collector.problem(file, None, "config.agent_name", "must name the agent (or pass `system`)", None)
            return
        collector.notes.append(f"{file}: raw_eval_results is a SWE-bench run report")
        _swebench.read_document(collector, path, raw_results, kind="run_report", system=system, fields=fields)
        return
    collector.files.append(file)
    if not system:
        collector.problem(file, None, "config.agent_name", "must name the agent (or pass `system`)", None)
        return
    if not isinstance(raw_results, dict):
        collector.problem(file, None, "raw_eval_results", "must map task ids to results", type(raw_results).__name__)
        return
    results = obj(doc.get("results"))
    latencies = obj(results.get("latencies"))
    wall = obj(doc.get("wall_clock_times"))
    task_metrics = obj(doc.get("task_metrics"))
    listed: dict[str, float] = {}
    for key, value in (("successful_tasks", 1.0), ("failed_tasks", 0.0)):
        names = results.get(key)
        if isinstance(names, list):
            for name in names:
                listed.setdefault(str(name), value)
    swe = "swe" in benchmark.lower()

    def timing(task: str) -> float | None:
        latency = latencies.get(task)
        agent_time = nonneg(latency.get("total_time")) if isinstance(latency, dict) else None
        total = nonneg(wall.get(task))
        return collector.options.pick_elapsed(total, agent_time)

    def cost_of(task: str) -> float | None:
        metrics = task_metrics.get(task)
        if isinstance(metrics, dict):
            for key in _COST_KEYS:
                if nonneg(metrics.get(key)) is not None:
                    return nonneg(metrics.get(key))
        return None

    tasks = list(raw_results) + sorted(set(listed) - set(raw_results))
    for row, task in enumerate(tasks, start=1):
        group = repository_of(task) if swe else ""
        if task not in raw_results:
            collector.add(
                file=file,
                system=system,
                task=task,
                outcome=listed[task],
                flags=["listed_only"],
                group=group,
                attempt=0,
                cost_usd=cost_of(task),
                elapsed_s=timing(task),
                meta={"benchmark": benchmark, "from": "results lists"},
            )
            continue
        raw = raw_results[task]
        variations = raw if isinstance(raw, list) else [raw]
        if not variations:
            collector.problem(file, row, f"raw_eval_results.{task}", "must not be an empty list", raw)
            continue
        for attempt, item in enumerate(variations):
            outcome, rule, is_error = _value(item, collector.options.scorer)
            if rule is not None:
                collector.problem(file, row, f"raw_eval_results.{task}", rule, item)
                continue
            meta: dict[str, Any] = {"benchmark": benchmark}
            if is_error and isinstance(item, str):
                meta["error"] = item[:500]
            collector.add(
                file=file,
                system=system,
                task=task,
                outcome=outcome,
                unknown="error" if is_error else None,
                group=group,
                attempt=attempt,
                cost_usd=cost_of(task) if len(variations) == 1 else None,
                elapsed_s=timing(task) if len(variations) == 1 else None,
                record=f"task {task}" + (f" variation {attempt}" if len(variations) > 1 else ""),
                meta=meta,
            )
    total_cost = nonneg(doc.get("total_cost"))
    collector.notes.append(
        f"{file}: {benchmark or 'HAL'} run"
        + (f"; total cost {total_cost:.4g} USD (per-task cost only where task_metrics has it)" if total_cost else "")
    )

