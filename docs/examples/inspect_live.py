"""Stop a live Inspect AI evaluation once a paired comparison is decided (runs offline).

Two mock systems (Inspect's ``mockllm/model`` with scripted answers, no network, no API key)
answer the same 200 arithmetic questions; the tested system is right about 90 % of the time, the
baseline about 55 %. Each system runs as its own Task with its own stopwise manager; both managers
write to one SQLite ledger, and once the anytime-valid boundary is crossed every later sample of
both systems is skipped. Then the ledger's rows are exported and decided again, as an auditor
would, with the planned universe.

    python docs/examples/inspect_live.py --out runs/inspect-live
    stopwise decide runs/inspect-live/outcomes.csv --tested tested --baseline baseline \\
        --policy runs/inspect-live/policy.toml --tasks runs/inspect-live/order.csv
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

import stopwise
from stopwise.inspect import paired_early_stopping, planned_order

POLICY_TOML = """\
# Chosen before the run; its sha256 is locked in the ledger at registration.
threshold = 0.0          # promote when the tested system beats the baseline by more than 0 pp
tail_cutoff = 0.05

[decision]
boundary = "betting-wor" # anytime-valid: a decision may be taken at any look

[order]                  # the pre-registered task order: drawn from the dataset with this seed
kind = "coverage-aware"
seed = 7
"""


def questions(n: int = 200, *, seed: int = 7) -> MemoryDataset:
    """``n`` addition questions (seeded), each in a coverage group (sum below 100 or not)."""
    draw = random.Random(seed)
    samples = [
        Sample(
            id=f"q{i:03d}",
            input=f"What is {a} + {b}? Answer with the number only.",
            target=str(a + b),
            metadata={"group": "small" if a + b < 100 else "large"},
        )
        for i, (a, b) in enumerate((draw.randint(1, 99), draw.randint(1, 99)) for _ in range(n))
    ]
    return MemoryDataset(samples)


def mock_system(name: str, accuracy: float) -> Model:
    """A ``mockllm/model`` that answers right with probability ``accuracy``, fixed per question."""

    def answer(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        text = messages[-1].text
        a, b = (int(word) for word in text.removeprefix("What is ").split("?")[0].split(" + "))
        digest = hashlib.sha256(f"{name}|{text}".encode()).digest()
        right = int.from_bytes(digest[:8], "big") / 2**64 < accuracy
        output = ModelOutput.from_content("mockllm/model", str(a + b if right else a + b + 1))
        output.usage = ModelUsage(input_tokens=12, output_tokens=1, total_tokens=13)  # no tokenizer download
        return output

    return get_model("mockllm/model", custom_outputs=answer)


def run(
    out: Path, *, n: int = 200, seed: int = 7, max_samples: int = 4, policy_toml: str = POLICY_TOML
) -> dict[str, Any]:
    """Run the paired evaluation into ``out`` and return what was decided and logged."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "policy.toml").write_text(policy_toml)
    policy = stopwise.load_policy(out / "policy.toml")
    ledger_url = f"sqlite:///{out / 'ledger.db'}"

    # The planned order, drawn from the policy before any outcome exists; order.csv records it.
    dataset, universe = planned_order(questions(n, seed=seed), policy, group="group")
    stamp = universe.stamp  # kind, seed and digest of the draw: decide checks them under betting-wor
    pd.DataFrame({"position": range(1, n + 1), "task": universe.tasks, "group": universe.groups, "order_kind": stamp.kind,
                  "order_seed": stamp.seed, "order_sha256": stamp.sha256}).to_csv(out / "order.csv", index=False)
    tested, baseline = paired_early_stopping(
        ledger_url, "arith-demo", tested="tested", baseline="baseline", policy=policy, universe=universe
    )
    tasks = [
        Task(dataset=dataset, solver=generate(), scorer=match(), model=mock_system("tested", 0.90),
             early_stopping=tested, name="tested"),
        Task(dataset=dataset, solver=generate(), scorer=match(), model=mock_system("baseline", 0.55),
             early_stopping=baseline, name="baseline"),
    ]
    # max_tasks=2: both systems run side by side, so pairs complete while the evaluation runs;
    # max_samples bounds the samples in flight (they finish and are recorded after a decision).
    logs = eval(tasks, max_tasks=2, max_samples=max_samples, log_dir=str(out / "logs"), display="none")

    # As an auditor would: export the ledger and decide again from the rows and the planned universe.
    from stopwise.ledger import open_ledger

    comparison = tested.comparison
    with open_ledger(ledger_url) as ledger:
        ledger.export("arith-demo", out / "outcomes.csv", decisions_path=out / "decisions.jsonl", force=True)
        verified = ledger.verify("arith-demo")
    rows = stopwise.read_outcomes(out / "outcomes.csv")
    again = stopwise.decide(rows, "tested", "baseline", policy, universe=stopwise.read_task_universe(out / "order.csv"))

    summary = {
        "decision": None if comparison.decision is None else comparison.decision.action,
        "reason": None if comparison.decision is None else comparison.decision.reason,
        "looks": comparison.looks,
        "ran": {log.eval.task: len(log.samples or []) for log in logs},
        "skipped": {
            log.eval.task: len(log.results.early_stopping.early_stops)
            for log in logs
            if log.results is not None and log.results.early_stopping is not None
        },
        "logs": [log.location for log in logs],
        "ledger_rows": len(rows),
        "ledger_verified": verified.ok,
        "export_decision": again.action,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/inspect-live"), help="output folder")
    parser.add_argument("-n", type=int, default=200, help="questions (default 200)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the questions and their order")
    args = parser.parse_args()
    summary = run(args.out, n=args.n, seed=args.seed)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
