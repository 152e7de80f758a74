"""The stopwise CI gate: run ``stopwise decide`` or ``stopwise leaderboard`` on a results file, fail on chosen actions.

Used by the composite action next to it (``action.yml``); runnable alone (standard library only)::

    python gate.py decide results.csv --tested agent-v2 --baseline agent-v1 --policy policy.toml --fail-on reject,continue
    python gate.py leaderboard results.csv --baseline production --tasks order.csv --fail-on reject

``decide`` fails when the decision's action is in ``--fail-on``; ``leaderboard`` when any pair's action is (with
``--baseline``, the pairs against it). Exit code: 0 passed, 1 failed on an action, 4 stopwise refused the input
(its message is shown), 5 anything else. The action, the claim and the record path go to ``$GITHUB_OUTPUT`` and a
summary to ``$GITHUB_STEP_SUMMARY`` when those are set.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ACTIONS = ("promote", "reject", "continue", "abstain")


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("decide", "leaderboard"))
    parser.add_argument("results", nargs="+", help="outcome rows (.csv, .jsonl, .parquet)")
    parser.add_argument("--tested", "-t")
    parser.add_argument("--baseline", "-b")
    parser.add_argument("--policy", "-p")
    parser.add_argument("--tasks")
    parser.add_argument("--complete", action="store_true")
    parser.add_argument("--fail-on", default="reject", help="comma-separated actions that fail the gate")
    parser.add_argument("--record", default="stopwise-record.json", help="where to write the record (JSON)")
    parser.add_argument("--stopwise", default="stopwise", help="the stopwise command (e.g. 'python -m stopwise')")
    args = parser.parse_args(argv)
    args.fail = {a.strip() for a in args.fail_on.split(",") if a.strip()}
    unknown = sorted(args.fail - set(ACTIONS))
    if unknown:
        parser.error(f"--fail-on: unknown action {unknown[0]!r}; the actions are {', '.join(ACTIONS)}")
    if args.command == "decide" and not (args.tested and args.baseline):
        parser.error("decide needs --tested and --baseline")
    return args


def _command(args: argparse.Namespace) -> list[str]:
    command = [*shlex.split(args.stopwise), args.command, *args.results, "--json"]
    for flag, value in (("--tested", args.tested), ("--baseline", args.baseline), ("--policy", args.policy),
                        ("--tasks", args.tasks)):
        if value and not (flag == "--tested" and args.command == "leaderboard"):
            command += [flag, value]
    if args.tested and args.command == "leaderboard":
        command += ["--systems", ",".join(s for s in (args.tested, args.baseline) if s)]
    if args.complete:
        command.append("--complete")
    return command


def _verdicts(command: str, record: dict) -> list[tuple[str, str, str]]:
    """(what, action, claim) of each decision in the record."""
    if command == "decide":
        return [(f"{record['tested']} vs {record['baseline']}", record["action"], record.get("claim") or record["reason"])]
    return [
        (f"{p['tested']} vs {p['baseline']}", p["action"],
         f"difference {100 * p['delta_hat']:+.1f} pp, interval [{100 * p['low']:+.1f}, {100 * p['high']:+.1f}] pp, n = {p['n']}")
        for p in record["pairs"]
    ] + ([("family", record["status"], record["claim"])] if record.get("claim") else [])


def _report(name: str, text: str) -> None:
    target = os.environ.get(name)
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(text)


def main(argv: list[str]) -> int:
    """Run the gate; its exit code (see the module docstring)."""
    args = _arguments(argv)
    done = subprocess.run(_command(args), capture_output=True, text=True, check=False)
    if done.returncode >= 4 or not done.stdout.strip():
        sys.stderr.write(done.stderr or done.stdout)
        print(f"stopwise gate: stopwise {args.command} failed (exit {done.returncode})", file=sys.stderr)
        return 4 if done.returncode == 4 else 5
    record = json.loads(done.stdout)
    Path(args.record).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    verdicts = _verdicts(args.command, record)
    failed = [(what, action) for what, action, _ in verdicts if action in args.fail]
    lines = [f"- **{action}** {what}: {claim}" for what, action, claim in verdicts]
    summary = "\n".join([f"### stopwise gate ({args.command}): {'FAILED' if failed else 'passed'}", *lines,
                         f"\nfails on: {', '.join(sorted(args.fail)) or 'nothing'}\n"])
    print(summary)
    _report("GITHUB_STEP_SUMMARY", summary + "\n")
    first = verdicts[0] if verdicts else ("", "", "")
    claim = first[2].replace("\n", " ")
    _report("GITHUB_OUTPUT", f"action={first[1]}\nclaim={claim}\nrecord={args.record}\nfailed={'true' if failed else 'false'}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
