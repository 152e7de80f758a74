"""Added time per model call of the live-halting hook at step 100, beside recomputing from scratch.

Every shared trajectory with at least 100 steps is written as the Inspect conversation an agent would have
sent (the task as a user message; per step an assistant message with the action — and a tool call when the
step names a tool — followed by the observation as a tool or user message). The hook's per-call work,
``LiveHalting.before_generate`` (find the sample's monitor, convert the new messages to a step, update the
features, score both heads, apply the halting rule), is timed for the model call that follows step 100:
``--repeats`` times per trajectory, each from a copy of the state after step 99 (garbage collected before each
timed call: the copies are the benchmark's, not the hook's). Beside it, in the same run,
the from-scratch cost of the same call: convert all messages, featurize the whole 100-step prefix anew and
score it. Wall-clock and process CPU time are both reported (on a machine whose cores are shared, the
wall-clock tail is mostly waiting for a core). The issue's target: < 2 ms median per model call at step 100.

Run: ``.venv/bin/python -m benchmarks.inspect_halting_hook [--model out/early_model] [--repeats 200]``
(without ``--model`` a model with the paper's defaults is trained on all shared runs first, ~1 minute;
``--quick``: a small model trained on a seeded sample of the runs, 3 timed calls per trajectory: seconds, a check
that the benchmark runs, not its figure).
"""

from __future__ import annotations

import argparse
import copy
import gc
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.early_common import DATASETS, load, quick_params, quick_runs, saved_or_trained_model, timing_stats
from stopwise.early import EarlyOutcomeModel
from stopwise.records import Trajectory

STEP = 100


def conversation(run: Trajectory) -> tuple[list[Any], list[int]]:
    """The run as Inspect messages, and the index of each assistant message (a model call comes before each)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    messages: list[Any] = [ChatMessageUser(content=run.task_text or run.task)]
    calls: list[int] = []
    for k, step in enumerate(run.steps):
        calls.append(len(messages))
        if step.tool:
            call = ToolCall(id=f"c{k}", function=step.tool, arguments={})
            messages.append(ChatMessageAssistant(content=step.action, tool_calls=[call]))
            messages.append(ChatMessageTool(content=step.observation, tool_call_id=call.id, function=step.tool))
        else:
            messages.append(ChatMessageAssistant(content=step.action))
            messages.append(ChatMessageUser(content=step.observation))
    return messages, calls


def _snapshot(state: Any, model: EarlyOutcomeModel) -> Any:
    """Copy a sample's monitor state, sharing the (read-only) fitted model and the messages."""
    memo: dict[int, Any] = {id(model): model, id(model.featurizer_): model.featurizer_, id(model.classifier_): model.classifier_,
                            id(state.last): state.last}
    for block in model.featurizer_.blocks_.values():
        memo[id(block)] = block
    return copy.deepcopy(state, memo)


def measure(model: EarlyOutcomeModel, runs: list[Trajectory], repeats: int = 200) -> dict[str, Any]:
    """Time the hook's work for the model call after step 100, and the from-scratch recompute."""
    from inspect_ai.util import Store
    from inspect_ai.util._store import init_subtask_store

    from stopwise.inspect import LiveHalting, steps_from_inspect
    from stopwise.inspect._halting import _SampleMonitor, task_text_from_inspect

    halting = LiveHalting(model, success_threshold=1.0, failure_threshold=1.0)  # never halts: every call is timed
    featurizer, classifier, columns = model.featurizer_, model.classifier_, model.columns_
    hook: list[float] = []
    scratch: list[float] = []
    hook_cpu: list[float] = []  # CPU time of the process: what the call costs when other work shares the cores
    scratch_cpu: list[float] = []
    long_runs = [r for r in runs if len(r.steps) > STEP]
    try:
        for run in long_runs:
            messages, calls = conversation(run)
            before, at = messages[: calls[STEP - 1]], messages[: calls[STEP]]  # the calls after steps 99 and 100
            state = _SampleMonitor(model.monitor(task_text_from_inspect(messages), success_threshold=1.0, failure_threshold=1.0))
            state.advance(before)
            assert state.monitor.step == STEP - 1
            for _ in range(repeats):
                store = Store()
                init_subtask_store(store)
                halting._samples[id(store)] = _snapshot(state, model)
                gc.collect()  # the state copies' garbage is the benchmark's, not the hook's: collect it untimed
                c0, t0 = time.process_time(), time.perf_counter()
                halting.before_generate(at)
                hook.append(time.perf_counter() - t0)
                hook_cpu.append(time.process_time() - c0)
                assert halting._samples.pop(id(store)).monitor.step == STEP
            for _ in range(max(3, repeats // 20)):
                c0, t0 = time.process_time(), time.perf_counter()
                prefix = Trajectory(agent=run.agent, task=run.task, task_text=task_text_from_inspect(at), steps=steps_from_inspect(at))
                rows = featurizer.transform([prefix])[0]
                classifier.predict_one(rows[-1][columns])
                scratch.append(time.perf_counter() - t0)
                scratch_cpu.append(time.process_time() - c0)
    finally:
        halting.close()
    return {"n_runs": len(long_runs), "features": int(columns.shape[0]),
            "rounds": (classifier.best_iterations_["success"], classifier.best_iterations_["failure"]),
            "hook": hook, "scratch": scratch, "hook_cpu": hook_cpu, "scratch_cpu": scratch_cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="a saved model (default: train one on all shared runs)")
    parser.add_argument("--quick", action="store_true", help="a small model on a sample of the runs, 3 repeats: seconds")
    parser.add_argument("--repeats", type=int, default=200, help="timed model calls after step 100 per trajectory")
    args = parser.parse_args()
    runs: list[Trajectory] = [run for name in DATASETS for run in load(name)]
    if args.quick:
        runs, args.repeats = quick_runs(runs, STEP), min(args.repeats, 3)
    params = quick_params() if args.quick else {}
    model = saved_or_trained_model(args.model, runs, "small, --quick" if args.quick else "paper defaults", **params)
    r = measure(model, runs, args.repeats)
    print(f"{r['n_runs']} trajectories with > {STEP} steps; model has {r['features']} features, rounds {r['rounds']}")
    print(f"hook, model call after step {STEP} (convert + feature update + both heads + rule): {timing_stats(r['hook'])}")
    print(f"from scratch, same call (convert all + re-featurize prefix + heads)          : {timing_stats(r['scratch'])}")
    print(f"  CPU time of the process, hook        : {timing_stats(r['hook_cpu'])}")
    print(f"  CPU time of the process, from scratch: {timing_stats(r['scratch_cpu'])}")
    med = float(np.median(r["hook"])) * 1e3
    print(f"ratio from-scratch / hook (medians): {np.median(r['scratch']) / np.median(r['hook']):.0f}x")
    print(f"target: median < 2 ms -> {'OK' if med < 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
