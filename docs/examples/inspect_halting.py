"""Halt running Inspect samples once their outcome is predictable (runs offline).

Two mock agents (Inspect's ``mockllm/model`` with scripted tool calls, no network, no API key) repair
the same 24 modules in 8 tool steps each. A run that will fail shows it early (its reads are refused);
a run that will succeed edits and tests. A small early-outcome model is trained on synthetic runs of
other agents and tasks, then watches every sample before each model call: once a head crosses its
threshold the sample ends with a custom limit and is scored with the predicted outcome. The same
evaluation is run once without halting, to count the model calls saved, and the halted logs are read
back with ``stopwise ingest``: the halted samples are ``predicted`` rows.

    python docs/examples/inspect_halting.py --out runs/inspect-halting
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import Tool, ToolCall, tool

from stopwise.early import DualHeadClassifier, EarlyOutcomeModel
from stopwise.ingest import ingest, system_template
from stopwise.inspect import LiveHalting, steps_from_inspect
from stopwise.records import Trajectory

STEPS = 8
OBSERVATIONS = {"read_file": "[isError] permission denied", "edit_file": "file updated", "run_tests": "3 passed in 0.2s",
                "search_code": "found 2 matches"}


def draw(*key: object) -> float:
    """A uniform number in [0, 1) fixed by ``key`` (no global random state)."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, key)).encode()).digest()[:8], "big") / 2**64


def prompt(task: int) -> str:
    return f"Repair module {task} of the service so that its checks pass. Answer FIXED when done."


def plan(agent: str, task: int, fail_rate: float) -> tuple[bool, list[tuple[str, dict[str, Any]]]]:
    """Whether the run succeeds, and its tool calls: failing runs hit refused reads, others edit and test.

    One run in five changes course after ``turn`` steps (1 to 3): until then it looks like the other kind.
    """
    ok = draw(agent, task, "ok") >= fail_rate
    turn = 1 + int(3 * draw(agent, task, "turn")) if draw(agent, task, "late") < 0.2 else 0
    calls: list[tuple[str, dict[str, Any]]] = []
    for k in range(STEPS):
        r = draw(agent, task, k)
        if r < 0.25:
            calls.append(("search_code", {"query": f"module {task} part {k % 3}"}))
        elif ok == (k < turn):
            calls.append(("read_file", {"path": f"src/m{task}.py"}))
        else:
            calls.append(("edit_file", {"path": f"src/m{task}.py"}) if k % 2 == 0 else ("run_tests", {}))
    return ok, calls


def final_answer(ok: bool) -> str:
    return "FIXED" if ok else "I could not finish."


def transcript(agent: str, task: int, fail_rate: float) -> tuple[bool, list[ChatMessage]]:
    """The messages of a whole run, as the mock agent below produces them in Inspect."""
    ok, calls = plan(agent, task, fail_rate)
    messages: list[ChatMessage] = [ChatMessageUser(content=prompt(task))]
    for k, (name, args) in enumerate(calls):
        call = ToolCall(id=f"c{k}", function=name, arguments=args)
        messages += [ChatMessageAssistant(content="", tool_calls=[call]),
                     ChatMessageTool(content=OBSERVATIONS[name], tool_call_id=call.id, function=name)]
    return ok, [*messages, ChatMessageAssistant(content=final_answer(ok))]


def training_runs(n_agents: int = 6, n_tasks: int = 30) -> list[Trajectory]:
    """Synthetic runs of other agents on other tasks, read with the converter the live monitor uses."""
    runs = []
    for a in range(n_agents):
        for t in range(100, 100 + n_tasks):
            ok, messages = transcript(f"trainer-{a}", t, 0.3 + 0.1 * a)
            runs.append(Trajectory(agent=f"trainer-{a}", task=f"m{t}", outcome=int(ok), task_text=prompt(t),
                                   steps=steps_from_inspect(messages)))
    return runs


def train() -> EarlyOutcomeModel:
    """A small model: 180 runs, 4 SVD components, 20 trees per head, no halt before step 3.

    Toy-sized on purpose: 180 runs validate too few prefixes for the unfamiliar-run guard, which would then
    hold every halt, so it is off here (``guard_quantile=None``); train on real runs with the guard on.
    """
    heads = DualHeadClassifier(min_child_samples=5, n_estimators=20)
    model = EarlyOutcomeModel(n_components=4, min_df=1, min_steps=5, min_halt_step=3, classifier=heads, guard_quantile=None)
    return model.fit(training_runs())


@tool
def read_file() -> Tool:
    async def execute(path: str) -> str:
        """Read a file.

        Args:
            path: The file.
        """
        return OBSERVATIONS["read_file"]

    return execute


@tool
def edit_file() -> Tool:
    async def execute(path: str) -> str:
        """Edit a file.

        Args:
            path: The file.
        """
        return OBSERVATIONS["edit_file"]

    return execute


@tool
def run_tests() -> Tool:
    async def execute() -> str:
        """Run the tests."""
        return OBSERVATIONS["run_tests"]

    return execute


@tool
def search_code() -> Tool:
    async def execute(query: str) -> str:
        """Search the code.

        Args:
            query: What to look for.
        """
        return OBSERVATIONS["search_code"]

    return execute


def mock_agent(name: str, fail_rate: float) -> Model:
    """A ``mockllm/model`` that makes the run's next scripted tool call, then answers."""

    def respond(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        task = int(next(m for m in messages if m.role == "user").text.split()[2])  # "Repair module N ..."
        ok, calls = plan(name, task, fail_rate)
        k = sum(1 for m in messages if m.role == "assistant")
        if k < len(calls):
            output = ModelOutput.for_tool_call("mockllm/model", calls[k][0], calls[k][1], tool_call_id=f"c{k}", content="")
        else:
            output = ModelOutput.from_content("mockllm/model", final_answer(ok))
        output.usage = ModelUsage(input_tokens=50, output_tokens=10, total_tokens=60)  # no tokenizer download
        return output

    return get_model("mockllm/model", custom_outputs=respond)


def agent_task(name: str, fail_rate: float, n: int) -> Task:
    dataset = MemoryDataset([Sample(id=f"m{t}", input=prompt(t), target="FIXED") for t in range(n)])
    return Task(dataset=dataset, solver=[use_tools(read_file(), edit_file(), run_tests(), search_code()),
                                         generate(tool_calls="loop")],
                scorer=includes(), model=mock_agent(name, fail_rate), name=name)


AGENTS = {"careful": 0.25, "hasty": 0.6}


def run(out: Path, *, n: int = 24, model: EarlyOutcomeModel | None = None) -> dict[str, Any]:
    """Train (unless given a model), evaluate both agents with and without halting, read the halted logs back."""
    model = train() if model is None else model
    full = eval([agent_task(a, rate, n) for a, rate in AGENTS.items()], log_dir=str(out / "full"), display="none")
    with LiveHalting(model) as halting:
        halted = eval([halting.task(agent_task(a, rate, n)) for a, rate in AGENTS.items()],
                      log_dir=str(out / "halted"), display="none")
    calls = {  # one assistant message per model call
        kind: {log.eval.task: sum(m.role == "assistant" for s in log.samples or [] for m in s.messages) for log in logs}
        for kind, logs in (("full", full), ("halted", halted))
    }
    rows = ingest([out / "halted"], system=system_template("task")).rows
    summary = {
        "model_calls": calls,
        "halted_samples": {log.eval.task: sum(1 for s in log.samples or [] if s.limit and s.limit.type == "custom")
                           for log in halted},
        "wrong_halts": sum(h["outcome"] != plan(h["task"], int(str(h["sample"])[1:]), AGENTS[h["task"]])[0]
                           for h in halting.halts),
        "rows": rows.groupby(["system", "status"]).size().unstack(fill_value=0).to_dict("index"),
        "model_digest": halting.digest[:16],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/inspect-halting"), help="output folder")
    parser.add_argument("-n", type=int, default=24, help="modules per agent (default 24)")
    args = parser.parse_args()
    print(json.dumps(run(args.out, n=args.n), indent=2))


if __name__ == "__main__":
    main()
