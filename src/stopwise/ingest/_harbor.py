"""Harbor (Terminal-Bench 2) trial and job results, and the legacy Terminal-Bench harness results.

* **trial** ``<job>/<trial>/result.json`` (``TrialResult``): ``task_name``, ``trial_name``,
  ``agent_info`` (name, model_info), ``agent_result`` (``cost_usd``, tokens), ``verifier_result``
  (``rewards`` map, or ``reward`` in early versions), ``exception_info``, ``started_at`` /
  ``finished_at`` and phase timings (``environment_setup``, ``agent_setup``, ``agent_execution``,
  ``verifier``).
* **job** ``<job>/result.json`` (``JobResult``): ``n_total_trials``, ``stats.evals`` with per-agent
  ``reward_stats`` (reward key -> value -> trial names) and ``exception_stats``, and sometimes the
  ``trial_results`` themselves. When the trial directories are read too, the job file adds nothing
  and is not counted twice.
* **legacy Terminal-Bench** ``results.json`` (``results`` list of ``TrialResults``:
  ``task_id``, ``trial_name``, ``is_resolved``, ``failure_mode``, ``trial_started_at``, ...).

One row per trial; attempts number the trials of one (system, task) by run (the Harbor job folder,
the Terminal-Bench run folder), then start time: several jobs or runs of one agent read in one call
are one system with distinct attempts.

Task ids. Harbor names a registry task ``<dataset>/<task>`` (``terminal-bench/cobol-modernization``)
in a trial's ``task_name`` but only ``<task>`` in trial names (so in job summaries) and in legacy
Terminal-Bench; the canonical task id is the part after the last ``/``, so that the rows of a trial,
a job summary and a legacy run pair up. ``task_ids="raw"`` keeps ``task_name`` as written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stopwise._logs import load_json
from stopwise.ingest._common import (
    COVERED,
    Collector,
    Kwargs,
    nonneg,
    number,
    obj,
    path_fields,
    repository_of,
    seconds_between,
    system_name,
)

_TB_OK_MODES = frozenset({"unset", "none", ""})
_TRIAL_NAME_TASK_CHARS = 32
"""Harbor names a trial ``<first 32 characters of the task name>__<7 random characters>``."""


def kind_of(doc: Any) -> str | None:
    """``trial``, ``job``, ``tb_run`` or ``tb_trial`` for a Harbor / Terminal-Bench document, else None."""
    if not isinstance(doc, dict):
        return None
    if "trial_name" in doc and "task_name" in doc and ("agent_info" in doc or "verifier_result" in doc):
        return "trial"
    if "n_total_trials" in doc and isinstance(doc.get("stats"), dict):
        return "job"
    results = doc.get("results")
    if isinstance(results, list) and ("n_resolved" in doc or "accuracy" in doc or "resolved_ids" in doc):
        return "tb_run"
    if "trial_name" in doc and "task_id" in doc and "is_resolved" in doc:
        return "tb_trial"
    return None


def _group(task: str, dataset: str) -> str:
    return repository_of(task) if "swe" in dataset.lower() else ""


def task_id(collector: Collector, name: str) -> str:
    """The canonical task id of a Harbor task name (the dataset prefix removed), or the raw name."""
    name = name.strip()
    return name if collector.options.task_ids == "raw" else name.rsplit("/", 1)[-1]


def _covering_run(path: Path, tb_run_dirs: Sequence[Path]) -> Path | None:
    here = path.resolve().parent
    return next((d for d in tb_run_dirs if d in here.parents or d == here), None)


def read_documents(collector: Collector, units: Sequence[tuple[Path, str, Any]], ignored: dict[str, str]) -> None:
    """Add the trials of Harbor / Terminal-Bench documents (``(path, kind, doc)``) to ``collector``.

    Trial files that a run-level Terminal-Bench ``results.json`` covers are listed in ``ignored``.
    """
    trial_dirs = [p.resolve().parent for p, kind, _ in units if kind in ("trial", "tb_trial")]
    tb_run_dirs = [p.resolve().parent for p, kind, _ in units if kind == "tb_run"]
    covered = 0
    for path, kind, doc in units:
        file = str(path)
        here = path.resolve().parent
        if kind == "trial":
            collector.files.append(file)
            _trial(collector, path, None, doc, job=here.parent.name)
        elif kind == "job":
            collector.files.append(file)
            if any(here in d.parents for d in trial_dirs):
                collector.notes.append(f"{file}: job summary not used; its trials were read from their own result.json")
                continue
            embedded = doc.get("trial_results")
            if isinstance(embedded, list) and embedded:
                for row, trial in enumerate(embedded, start=1):
                    if isinstance(trial, dict):
                        _trial(collector, path, row, trial, job=here.name)
                    else:
                        collector.problem(file, row, "trial_results", "a trial result must be a JSON object", trial)
            else:
                _job_stats(collector, path, doc)
        elif kind == "tb_run":
            collector.files.append(file)
            _tb_run(collector, path, doc)
        elif kind == "tb_trial":
            run_dir = _covering_run(path, tb_run_dirs)
            if run_dir is not None:
                ignored[file] = f"{COVERED}the run's {run_dir / 'results.json'}"
                covered += 1
                continue
            collector.files.append(file)
            run = _tb_run_dir(path.resolve().parent, doc)
            _tb_trial(collector, file, None, doc, _tb_system(collector, run, path), run.name)
    if covered:
        collector.notes.append(f"{covered} Terminal-Bench trial results.json files not read: their run's results.json covers them")
    if collector.options.task_ids == "canonical":
        _complete_cut_tasks(collector)


def _complete_cut_tasks(collector: Collector) -> None:
    """Give job-summary rows the full task id when a trial row read in the same call shows it (Harbor cuts names)."""
    full = {r.task for r in collector.records if r.meta.get("task_name") is not None}
    by_prefix: dict[str, set[str]] = {}
    for task in full:
        by_prefix.setdefault(task[:_TRIAL_NAME_TASK_CHARS].rstrip("_-"), set()).add(task)
    completed: dict[str, str] = {}
    for record in collector.records:
        if record.meta.get("from_summary") and record.task not in full:
            matches = by_prefix.get(record.task, set())
            if len(matches) == 1:
                completed[record.task] = record.task = next(iter(matches))
    if completed:
        collector.notes.append(
            "task ids of job summaries completed from the trials read: "
            + ", ".join(f"{cut} -> {whole}" for cut, whole in sorted(completed.items()))
        )


def _trial(collector: Collector, path: Path, row: int | None, doc: Mapping[str, Any], *, job: str) -> None:
    file = str(path)
    task = doc.get("task_name")
    trial_name = doc.get("trial_name")
    if not isinstance(task, str) or not task.strip():
        collector.problem(file, row, "task_name", "must be the task name", task)
        return
    agent_info = obj(doc.get("agent_info"))
    model_info = obj(agent_info.get("model_info"))
    agent, model = agent_info.get("name"), model_info.get("name")
    dataset = str(doc.get("source") or "")
    default = "/".join(str(x) for x in (agent, model) if x)
    agent_config = obj(obj(doc.get("config")).get("agent"))
    fields = {
        **path_fields(path),
        "agent": agent,
        "model": model,
        "provider": model_info.get("provider"),
        "dataset": dataset,
        "run_id": job,
        "kwargs": Kwargs(file, obj(agent_config.get("kwargs"))),
    }
    system = system_name(collector.options.system, fields, default, file)
    if not system:
        collector.problem(file, row, "agent_info.name", "must name the agent (or pass `system`)", agent)
        return

    verifier = doc.get("verifier_result")
    rewards: dict[str, Any] = {}
    if isinstance(verifier, dict):
        if isinstance(verifier.get("rewards"), dict):
            rewards = dict(verifier["rewards"])
        elif "reward" in verifier and verifier["reward"] is not None:
            rewards = {"reward": verifier["reward"]}
    elif verifier is not None:
        collector.problem(file, row, "verifier_result", "must be an object or null", verifier)
        return
    key = collector.options.scorer
    raw = None
    if rewards:
        if key is None:
            key = "reward" if "reward" in rewards else (next(iter(rewards)) if len(rewards) == 1 else None)
            if key is None:
                collector.problem(
                    file, row, "verifier_result.rewards", "has several rewards; choose one with `scorer`", sorted(rewards)
                )
                return
        if key not in rewards:
            collector.problem(file, row, "verifier_result.rewards", f"must hold the reward '{key}'", sorted(rewards))
            return
        raw = rewards[key]
    reward = number(raw)
    if raw is not None and reward is None:
        collector.problem(file, row, f"verifier_result.rewards.{key}", "must be a number", raw)
        return
    if reward is not None and not 0.0 <= reward <= 1.0:
        collector.problem(file, row, f"verifier_result.rewards.{key}", "must be in [0, 1] (the outcome contract)", raw)
        return

    flags: list[str] = []
    exception = doc.get("exception_info")
    meta: dict[str, Any] = {"trial_name": trial_name, "dataset": dataset, "task_name": task, "job": job}
    if isinstance(exception, dict) and exception.get("exception_type"):
        flags.append(f"exception:{exception['exception_type']}")
        meta["exception"] = str(exception.get("exception_message") or "")[:500]

    agent_result = obj(doc.get("agent_result"))
    phase = obj(doc.get("agent_execution"))
    total = seconds_between(doc.get("started_at"), doc.get("finished_at"))
    agent_time = seconds_between(phase.get("started_at"), phase.get("finished_at"))
    elapsed = collector.options.pick_elapsed(total, agent_time)
    canonical = task_id(collector, task)
    collector.add(
        file=file,
        system=system,
        task=canonical,
        outcome=reward,
        unknown="error" if reward is None else None,
        flags=flags,
        group=_group(canonical, dataset),
        order=(job, str(doc.get("started_at") or ""), str(trial_name or "")),
        cost_usd=nonneg(agent_result.get("cost_usd")),
        elapsed_s=elapsed,
        record=f"trial {trial_name}",
        meta=meta,
        run=f"{job}/{trial_name}",
    )


def _job_stats(collector: Collector, path: Path, doc: Mapping[str, Any]) -> None:
    file = str(path)
    job = path.resolve().parent.name
    evals = doc["stats"].get("evals")
    if not isinstance(evals, dict) or not evals:
        collector.problem(file, None, "stats.evals", "must hold per-agent statistics (or pass the trial result.json files)")
        return
    collector.notes.append(f"{file}: job summary only (no trial result.json): no cost or time per trial")
    for eval_key, stats in sorted(evals.items()):
        if not isinstance(stats, dict):
            collector.problem(file, None, f"stats.evals.{eval_key}", "must be an object", stats)
            continue
        parts = str(eval_key).split("__")
        agent, model, dataset = (parts[0], "__".join(parts[1:-1]), parts[-1]) if len(parts) >= 3 else (parts[0], "", parts[-1])
        default = "/".join(x for x in (agent, model) if x)
        fields = {**path_fields(path), "agent": agent, "model": model, "dataset": dataset, "run_id": job,
                  "kwargs": Kwargs(file, None)}
        system = system_name(collector.options.system, fields, default, file)
        reward_stats = obj(stats.get("reward_stats"))
        key = collector.options.scorer or ("reward" if "reward" in reward_stats else None)
        if key is None and len(reward_stats) == 1:
            key = next(iter(reward_stats))
        outcome_of: dict[str, float] = {}
        if reward_stats:
            if key not in reward_stats:
                collector.problem(
                    file, None, f"stats.evals.{eval_key}.reward_stats", "must hold the reward 'reward' (or choose one with `scorer`)", sorted(reward_stats)
                )
                continue
            for value_text, names in reward_stats[key].items():
                value = number(_to_float(value_text))
                if value is None or not 0.0 <= value <= 1.0:
                    collector.problem(
                        file, None, f"stats.evals.{eval_key}.reward_stats.{key}", "must be rewards in [0, 1]", value_text
                    )
                    continue
                for name in names or []:
                    outcome_of[str(name)] = value
        exceptions: dict[str, str] = {}
        for exc_type, names in obj(stats.get("exception_stats")).items():
            for name in names or []:
                exceptions[str(name)] = str(exc_type)
        cut = []
        for trial_name in sorted(set(outcome_of) | set(exceptions)):
            task = trial_name.rsplit("__", 1)[0] if "__" in trial_name else trial_name
            if len(task) >= _TRIAL_NAME_TASK_CHARS - 2:
                cut.append(task)
            reward = outcome_of.get(trial_name)
            collector.add(
                file=file,
                system=system,
                task=task,
                outcome=reward,
                unknown="error" if reward is None else None,
                flags=[f"exception:{exceptions[trial_name]}"] if trial_name in exceptions else [],
                group=_group(task, dataset),
                order=(job, "", trial_name),
                record=f"trial {trial_name}",
                meta={"trial_name": trial_name, "dataset": dataset, "job": job, "from_summary": True},
                run=f"{job}/{trial_name}",
            )
        if cut:
            collector.notes.append(
                f"{file}: task ids taken from trial names, which Harbor cuts at {_TRIAL_NAME_TASK_CHARS} characters; "
                f"these may be cut: {', '.join(sorted(set(cut)))} (read the trial result.json files for full ids)"
            )


def _to_float(text: Any) -> Any:
    try:
        return float(text)
    except (TypeError, ValueError):
        return text


def _tb_run_dir(trial_dir: Path, doc: Mapping[str, Any]) -> Path:
    """The run folder of a legacy Terminal-Bench trial file (``<run>/<task_id>/<trial_name>/results.json``)."""
    for candidate in (trial_dir, *list(trial_dir.parents)[:3]):
        if (candidate / "run_metadata.json").is_file():
            return candidate
    if trial_dir.parent.name == str(doc.get("task_id") or "").strip() and trial_dir.parent != trial_dir.parent.parent:
        return trial_dir.parent.parent
    return trial_dir


def _tb_run_name(path: Path) -> tuple[Path, str]:
    """(the folder holding the runs, the run's name) of a legacy Terminal-Bench run file.

    ``<submission>/<run>/results.json``: the run folder, in the folder of the submission's runs. A run kept as a
    file of its own, ``<submission>/<timestamp>_results.json``: the file (name without ``.json``), in the
    submission folder -- never the benchmark folder above it, which holds every submission.
    """
    here = path.resolve().parent
    if path.name == "results.json":
        return here.parent, here.name
    return here, path.name[: -len(".json")] if path.name.lower().endswith(".json") else path.name


def _tb_system(collector: Collector, run_dir: Path, path: Path) -> str:
    """The system of a legacy Terminal-Bench run: ``run_metadata.json`` in the run folder, else the folder holding the runs."""
    file = str(path)
    holder, run = _tb_run_name(path) if run_dir == path.resolve().parent else (run_dir.parent, run_dir.name)
    agent = model = None
    kwargs: dict[str, Any] = {}
    meta_path = run_dir / "run_metadata.json"
    if meta_path.is_file():
        meta = load_json(meta_path)
        if isinstance(meta, dict):
            agent, model = meta.get("agent_name"), meta.get("model_name")
            kwargs = obj(meta.get("agent_kwargs"))
    default = "/".join(str(x) for x in (agent, model) if x)
    if not default:
        default = holder.name or run
        if collector.options.system is None:
            collector.notes.append(
                f"{file}: no run_metadata.json in its run folder {run_dir.name}; system named by the folder holding "
                f"the runs ({default}); the runs are its attempts (name the system with `system`)"
            )
    fields = {
        **path_fields(path),
        "agent": agent,
        "model": model,
        "run": run,
        "run_id": run,
        "kwargs": Kwargs(file, kwargs),
    }
    return system_name(collector.options.system, fields, default, file)


def _tb_run(collector: Collector, path: Path, doc: Mapping[str, Any]) -> None:
    file = str(path)
    run_dir = path.resolve().parent
    system = _tb_system(collector, run_dir, path)
    n_resolved = doc.get("n_resolved")
    resolved = sum(1 for t in doc["results"] if isinstance(t, dict) and t.get("is_resolved") is True)
    if isinstance(n_resolved, int) and not isinstance(n_resolved, bool) and n_resolved != resolved:
        collector.problem(
            file, None, "n_resolved", f"must equal the number of trials with is_resolved true ({resolved})", n_resolved
        )
        return
    for row, trial in enumerate(doc["results"], start=1):
        if not isinstance(trial, dict):
            collector.problem(file, row, "results", "a trial result must be a JSON object", trial)
            continue
        _tb_trial(collector, file, row, trial, system, _tb_run_name(path)[1])


def _tb_trial(collector: Collector, file: str, row: int | None, doc: Mapping[str, Any], system: str, run: str) -> None:
    task = doc.get("task_id")
    if not isinstance(task, str) or not task.strip():
        collector.problem(file, row, "task_id", "must be the task id", task)
        return
    resolved = doc.get("is_resolved")
    if resolved is not None and not isinstance(resolved, bool):
        collector.problem(file, row, "is_resolved", "must be true, false or null", resolved)
        return
    mode = str(doc.get("failure_mode") or "unset")
    flags = [] if mode in _TB_OK_MODES else [f"failure:{mode}"]
    total = seconds_between(doc.get("trial_started_at"), doc.get("trial_ended_at"))
    agent_time = seconds_between(doc.get("agent_started_at"), doc.get("agent_ended_at"))
    elapsed = collector.options.pick_elapsed(total, agent_time)
    collector.add(
        file=file,
        system=system,
        task=task.strip(),
        outcome=None if resolved is None else float(resolved),
        unknown="error" if resolved is None else None,
        flags=flags,
        order=(run, str(doc.get("trial_started_at") or ""), str(doc.get("trial_name") or "")),
        elapsed_s=elapsed,
        record=f"trial {doc.get('trial_name')}",
        meta={"trial_name": doc.get("trial_name"), "failure_mode": mode, "run": run},
        run=f"{run}/{doc.get('trial_name')}",
    )
