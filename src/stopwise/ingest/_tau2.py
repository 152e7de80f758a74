"""tau2-bench results: the monolithic ``results.json`` or the directory format.

* monolithic: ``{"timestamp", "info", "tasks", "simulations": [SimulationRun, ...]}``
* directory: ``results.json`` (that name: another file beside a ``simulations/`` folder is never its
  header) holds ``info``, ``tasks`` and (in recent versions) a ``simulation_index`` (id, task_id, trial, reward, termination_reason, agent_cost, duration per
  simulation); the simulations live in ``simulations/<id>.json`` beside it. A simulation whose
  file is missing still becomes a row from its index entry (without a trajectory); without an
  index, the simulation files are read as they are.

One row per simulation: task = ``task_id``, attempt = ``trial``, outcome = ``reward_info.reward``,
cost = ``agent_cost``, elapsed = ``duration``, group = the domain
(``info.environment_info.domain_name``), system = the agent's LLM (``info.agent_info.llm``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stopwise._limits import json_loads
from stopwise._logs import steps_from_messages, text_of
from stopwise.ingest._common import (
    Collector,
    Kwargs,
    nonneg,
    number,
    obj,
    path_fields,
    system_name,
)

NORMAL_ENDINGS = frozenset({"user_stop", "agent_stop"})
"""Termination reasons of a conversation that ended normally."""
NON_EVALUABLE = frozenset({"infrastructure_error", "context_window_exceeded"})
"""Termination reasons tau2-bench itself leaves out of its metrics: the outcome is unknown."""


def is_results(doc: Any) -> bool:
    """True for a tau2 results document (either format; the directory format may lack ``simulation_index``)."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("info"), dict)
        and ("simulations" in doc or "simulation_index" in doc or "tasks" in doc)
        and ("agent_info" in doc["info"] or "environment_info" in doc["info"])
    )


def is_simulation(doc: Any) -> bool:
    """True for one simulation file of the directory format."""
    return isinstance(doc, dict) and "task_id" in doc and "termination_reason" in doc and "info" not in doc


def orphan_reason(path: Path, ignored: Mapping[str, str]) -> str:
    """Why a simulation file is not read: no ``results.json`` in the folder above, or one that is no tau2 results."""
    folder = path.resolve().parent
    results = folder.parent / "results.json"
    if folder.name != "simulations" or not results.is_file():
        return "a tau2 simulation file without its results.json (expected in the folder above simulations/)"
    why = ignored.get(str(results)) or next((v for k, v in ignored.items() if Path(k).resolve() == results), None)
    if why is None:
        return f"a tau2 simulation file whose results.json ({results}) was not given"
    return f"a tau2 simulation file whose results.json ({results}) was not read: {why}"


def _tool_calls(message: Mapping[str, Any]) -> list[tuple[str, Any]]:
    calls = message.get("tool_calls") or []
    return [(str(c.get("name", "")), c.get("arguments")) for c in calls if isinstance(c, dict)]


def _tokens(message: Mapping[str, Any]) -> tuple[int | None, int | None]:
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None, None

    def count(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return None

    return count("prompt_tokens", "input_tokens"), count("completion_tokens", "output_tokens")


def _simulations(collector: Collector, path: Path, doc: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(where, simulation) pairs: inline ones, else the directory format's files and index."""
    file = str(path)
    inline = doc.get("simulations")
    if isinstance(inline, list) and inline:
        return [(file, s) for s in inline]
    if path.name != "results.json" and ("simulations" in doc or "simulation_index" not in doc):
        return []  # monolithic: the simulations/ folder beside belongs to the results.json there (directory format)
    sims_dir = path.parent / "simulations"
    out: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    if sims_dir.is_dir():
        for sim_file in sorted(sims_dir.glob("*.json")):
            try:
                sim = json_loads(sim_file.read_text(encoding="utf-8"), str(sim_file))
            except (json.JSONDecodeError, UnicodeDecodeError, OSError) as exc:
                collector.problem(str(sim_file), None, None, f"must be a JSON simulation file ({exc})")
                continue
            out.append((str(sim_file), sim))
            if isinstance(sim, dict):
                seen.add(str(sim.get("id", sim_file.stem)))
    index = doc.get("simulation_index")
    if isinstance(index, list):
        for entry in index:
            if isinstance(entry, dict) and str(entry.get("id")) not in seen:
                out.append((file, {**entry, "_from_index": True}))
    elif index is not None:
        collector.problem(file, None, "simulation_index", "must be a list of simulation summaries", type(index).__name__)
    return out


def read_results(collector: Collector, path: Path, doc: dict[str, Any]) -> None:
    """Add the simulations of one tau2 results document to ``collector``."""
    file = str(path)
    collector.files.append(file)
    info = doc["info"]
    agent = obj(info.get("agent_info"))
    user = obj(info.get("user_info"))
    env = obj(info.get("environment_info"))
    domain = str(env.get("domain_name") or "")
    default = str(agent.get("llm") or agent.get("implementation") or "")
    fields = {
        **path_fields(path),
        "llm": agent.get("llm"),
        "model": agent.get("llm"),
        "agent": agent.get("implementation"),
        "domain": domain,
        "user_llm": user.get("llm"),
        "run_id": doc.get("timestamp"),
        "kwargs": Kwargs(file, obj(agent.get("llm_args"))),
    }
    system = system_name(collector.options.system, fields, default, file)
    if not system:
        collector.problem(file, None, "info.agent_info.llm", "must name the agent's model (or pass `system`)", None)
        return
    simulations = _simulations(collector, path, doc)
    if not simulations:
        collector.problem(file, None, "simulations", "must hold at least one simulation", None)
        return
    for row, (where, sim) in enumerate(simulations, start=1):
        at = row if where == file else None
        if not isinstance(sim, dict):
            collector.problem(where, at, None, "a simulation must be a JSON object", type(sim).__name__)
            continue
        task_id = sim.get("task_id")
        if isinstance(task_id, bool) or not isinstance(task_id, str | int) or not str(task_id).strip():
            collector.problem(where, at, "task_id", "must be a task id", task_id)
            continue
        task = str(task_id).strip()
        trial = sim.get("trial")
        if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int) or trial < 0):
            collector.problem(where, at, "trial", "must be an integer >= 0 or null", trial)
            continue
        reason = sim.get("termination_reason")
        reason = str(reason) if reason is not None else ""
        reward_info = sim.get("reward_info")
        raw_reward = reward_info.get("reward") if isinstance(reward_info, dict) else sim.get("reward")
        reward = number(raw_reward)
        if raw_reward is not None and reward is None:
            collector.problem(where, at, "reward_info.reward", "must be a number", raw_reward)
            continue
        if reward is not None and not 0.0 <= reward <= 1.0:
            collector.problem(where, at, "reward_info.reward", "must be in [0, 1] (the outcome contract)", raw_reward)
            continue
        flags = [] if not reason or reason in NORMAL_ENDINGS else [f"termination:{reason}"]
        unknown = "error" if reward is None or reason in NON_EVALUABLE else None
        steps = None
        task_text = ""
        messages = sim.get("messages")
        if collector.options.trajectories and isinstance(messages, list):
            messages = [m for m in messages if isinstance(m, dict)]
            steps = steps_from_messages(messages, tool_calls=_tool_calls, tokens=_tokens)
            users = [m for m in messages if m.get("role") == "user"]
            task_text = text_of(users[0].get("content")) if users else ""
        meta: dict[str, Any] = {"simulation_id": sim.get("id"), "termination_reason": reason, "domain": domain}
        if sim.get("_from_index"):
            meta["from_index"] = True
        collector.add(
            file=where,
            system=system,
            task=task,
            outcome=None if unknown else reward,
            unknown=unknown,
            flags=flags,
            group=domain,
            attempt=trial,
            order=(str(sim.get("start_time") or ""), str(sim.get("id") or "")),
            cost_usd=nonneg(sim.get("agent_cost")),
            elapsed_s=nonneg(sim.get("duration")),
            record=f"simulation {sim.get('id')} (task {task}, trial {trial})",
            steps=steps,
            task_text=task_text,
            meta=meta,
        )
