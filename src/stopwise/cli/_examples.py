"""One example per command, shown at the end of its ``--help`` (a test checks every command has one).

Kept in one table so that every command reads alike and the command modules stay thin; a command
that sets its own ``epilog`` keeps it.
"""

from __future__ import annotations

import typer

__all__ = ["EXAMPLES", "attach_examples"]

_DATA = "../shared/data/records/swebench_lite/outcomes.csv"

EXAMPLES: dict[str, list[str]] = {
    "decide": [
        f"stopwise decide {_DATA} -t 20240402_sweagent_gpt4 -b 20240402_rag_gpt4 --policy policy.toml; echo $?",
        "stopwise decide outcomes.csv -t A -b B --json | jq .action",
        "cat outcomes.csv | stopwise decide - -t A -b B",
    ],
    "order": ["stopwise order tasks.csv -p policy.toml -o order.csv"],
    "leaderboard": [
        "stopwise leaderboard ../shared/data/records/swebench_verified/outcomes.csv --complete --html leaderboard.html",
        "stopwise leaderboard outcomes.csv --tasks order.csv -p policy.toml --baseline production --json | jq '.pairs[] | [.tested, .action]'",
    ],
    "demo": ["stopwise demo --seed 0 --n-tasks 400 --out demo/ && stopwise report demo/decisions.jsonl"],
    "replay": [
        "stopwise replay ../shared/data/records/*/outcomes.csv -k 500 -o replay/",
        "stopwise replay outcomes.csv --policies all --thresholds 0,0.05 --json | jq '.sufficiency[0]'",
    ],
    "ingest": [
        "stopwise ingest logs/*.eval -o outcomes.parquet --trajectories runs.jsonl.gz",
        "stopwise ingest results/ --format swebench -o outcomes.csv --json",
    ],
    "policy init": ["stopwise policy init policy.toml"],
    "policy check": ["stopwise policy check policy.toml"],
    "early train": ["stopwise early train runs.jsonl.gz -o model/ --max-halt-error 0.05"],
    "early evaluate": ["stopwise early evaluate runs.jsonl.gz -o evaluation/ && stopwise report evaluation/"],
    "early monitor": ["stopwise early monitor model/ runs.jsonl.gz --agent my-agent --summary"],
    "finality schema": ["stopwise finality schema completion-argument > argument.schema.json"],
    "finality example": ["stopwise finality example closed-simulator > argument.toml"],
    "finality check": [
        "stopwise finality check argument.toml --runs runs.csv --record effects.json --rows outcomes.csv",
        "stopwise finality check argument.toml --runs runs.csv --json | stopwise report - -o finality.html",
    ],
    "finality replay": ["stopwise finality replay -r 10 --out replay/"],
    "ledger init": ["stopwise ledger init ledger.db nightly -t A -b B --tasks order.csv --policy policy.toml"],
    "ledger append": ["stopwise ledger append ledger.db nightly new_rows.csv"],
    "ledger decide": ["stopwise ledger decide ledger.db nightly --json; echo $?"],
    "ledger verify": ["stopwise ledger verify ledger.db nightly --json"],
    "ledger conflicts": ["stopwise ledger conflicts ledger.db nightly --json"],
    "watch": [
        "stopwise watch ledger.db nightly --interval 5 && echo promoted",
        "stopwise watch logs/ --tested tested --baseline baseline --system-from file --tasks order.csv --policy policy.toml",
    ],
}
"""Command path (``"early train"``) -> example command lines."""


def _epilog(lines: list[str]) -> str:
    # Click keeps a paragraph that starts with \b as written (no re-wrapping); Rich's help shows it as text.
    return "Example" + ("s" if len(lines) > 1 else "") + ":\n\n" + "\n\n".join(f"  {line}" for line in lines)


def attach_examples(app: typer.Typer, prefix: str = "") -> list[str]:
    """Give every command of ``app`` (and of its groups) the example of :data:`EXAMPLES` as its help epilog.

    Returns the command paths that have no example, so that a test can name them.
    """
    missing = []
    for command in app.registered_commands:
        name = prefix + (command.name or (command.callback.__name__ if command.callback else ""))
        own = command.help or (command.callback.__doc__ if command.callback else None) or ""
        if command.epilog or "Example" in own:
            continue
        if name in EXAMPLES:
            command.epilog = _epilog(EXAMPLES[name])
        else:
            missing.append(name)
    for group in app.registered_groups:
        if group.typer_instance is None:
            continue
        name = group.name or group.typer_instance.info.name or ""
        missing += attach_examples(group.typer_instance, prefix + name + " ")
    return missing
