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
from stopwise.ingest._common import Collector, Kwargs, nonneg, number, obj, path_fields, repository_of, system_name

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


def _run_id(path: Path, doc: dict[str, Any]) -> str:
    """The run id: ``config.run_id``, ``metadata.run_id``, else the file name before ``_UPLOAD.json``."""
    for holder in (obj(doc.get("config")), obj(doc.get("metadata"))):
        if isinstance(holder.get("run_id"), str) and holder["run_id"].strip():
            return str(holder["run_id"]).strip()
    name = path.name
    for suffix in ("_UPLOAD.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _system(collector: Collector, path: Path, doc: dict[str, Any]) -> str:
    """The system of one upload: ``config.agent_name`` (else the run id, noted), or the ``system`` template."""
    file = str(path)
    config = doc["config"]
    agent_args = obj(config.get("agent_args"))
    run_id = _run_id(path, doc)
    agent_name = config.get("agent_name")
    default = str(agent_name or "").strip()
    if not default:
        default = run_id
        if collector.options.system is None:
            collector.notes.append(f"{file}: no config.agent_name; system named by the run id {run_id} (name it with `system`)")
    fields = {
        **path_fields(path),
        "agent_name": agent_name,
        "agent": agent_name,
        "benchmark": str(config.get("benchmark_name") or ""),
        "run_id": run_id,
        "model": agent_args.get("model_name"),
        "kwargs": Kwargs(file, agent_args),
    }
    return system_name(collector.options.system, fields, default, file)


class _PerTask:
    """Per-task cost and time of an upload, from wherever its HAL version wrote them."""

    def __init__(self, collector: Collector, doc: dict[str, Any]) -> None:
        results = obj(doc.get("results"))
        self.options = collector.options
        self.latencies = obj(results.get("latencies"))
        self.costs = obj(results.get("costs"))
        self.wall = obj(doc.get("wall_clock_times"))
        self.task_metrics = obj(doc.get("task_metrics"))
        self.raw = obj(doc.get("raw_eval_results"))

    def elapsed(self, task: str) -> float | None:
        """``wall_clock_times[task]``; the agent's time is ``results.latencies[task]`` (``total_time``, or a number)."""
        latency = self.latencies.get(task)
        agent_time = nonneg(latency.get("total_time")) if isinstance(latency, dict) else nonneg(latency)
        return self.options.pick_elapsed(nonneg(self.wall.get(task)), agent_time)

    def cost(self, task: str) -> float | None:
        """``task_metrics[task]``'s cost, else ``results.costs[task]``, else the task result's own ``cost``."""
        for holder in (self.task_metrics.get(task), self.raw.get(task)):
            if isinstance(holder, dict):
                for key in _COST_KEYS:
                    if nonneg(holder.get(key)) is not None:
                        return nonneg(holder.get(key))
        return nonneg(self.costs.get(task))


def read_upload(collector: Collector, path: Path, doc: dict[str, Any]) -> None:
    """Add the tasks of one HAL upload document to ``collector``."""
    file = str(path)
    config = doc["config"]
    benchmark = str(config.get("benchmark_name") or "")
    system = _system(collector, path, doc)
    raw_results = doc["raw_eval_results"]
    if isinstance(raw_results, dict) and _swebench.kind_of(raw_results) == "run_report":
        if not system:
            collector.files.append(file)
            collector.problem(file, None, "config.agent_name", "must name the agent (or pass `system`)", None)
            return
        collector.notes.append(f"{file}: raw_eval_results is a SWE-bench run report")
        _swebench.read_document(collector, path, raw_results, kind="run_report", system=system)
        return
    collector.files.append(file)
    if not system:
        collector.problem(file, None, "config.agent_name", "must name the agent (or pass `system`)", None)
        return
    if not isinstance(raw_results, dict):
        collector.problem(file, None, "raw_eval_results", "must map task ids to results", type(raw_results).__name__)
        return
    _read_tasks(collector, file, doc, system, benchmark)
    total_cost = nonneg(doc.get("total_cost"))
    collector.notes.append(
        f"{file}: {benchmark or 'HAL'} run"
        + (f"; total cost {total_cost:.4g} USD (per-task cost where the upload records it)" if total_cost else "")
    )


def _listed(doc: dict[str, Any]) -> dict[str, float]:
    results = obj(doc.get("results"))
    listed: dict[str, float] = {}
    for key, value in (("successful_tasks", 1.0), ("failed_tasks", 0.0)):
        names = results.get(key)
        if isinstance(names, list):
            for name in names:
                listed.setdefault(str(name), value)
    return listed


def _read_tasks(collector: Collector, file: str, doc: dict[str, Any], system: str, benchmark: str) -> None:
    raw_results = doc["raw_eval_results"]
    per_task = _PerTask(collector, doc)
    listed = _listed(doc)
    swe = "swe" in benchmark.lower()
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
                cost_usd=per_task.cost(task),
                elapsed_s=per_task.elapsed(task),
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
            one = len(variations) == 1
            collector.add(
                file=file,
                system=system,
                task=task,
                outcome=outcome,
                unknown="error" if is_error else None,
                group=group,
                attempt=attempt,
                cost_usd=per_task.cost(task) if one else None,
                elapsed_s=per_task.elapsed(task) if one else None,
                record=f"task {task}" + ("" if one else f" variation {attempt}"),
                meta=meta,
            )
