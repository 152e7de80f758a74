"""``stopwise watch --stop-command CMD``: run a user command once when the followed comparison is decided.

So that a job can be cancelled (``harbor jobs cancel ...``, ``kill``, ``kubectl delete job ...``) the moment the
decision is final. The command runs through the shell once, after the decision is printed and before
``watch`` exits with the decision's code, with ``STOPWISE_ACTION`` (promote, reject, abstain) and
``STOPWISE_EXIT_CODE`` in its environment. Its own exit status is reported, not propagated: the exit code
of ``watch`` stays the decision's.
"""

from __future__ import annotations

import os
import subprocess

from stopwise.cli._common import err_console
from stopwise.records import ACTIONS

__all__ = ["DECIDED_CODES", "run_stop_command"]

DECIDED_CODES = {ACTIONS.index(action): action for action in ACTIONS if action != "continue"}
"""Exit codes of ``watch`` that mean decided (promote 0, reject 1, abstain 3) -> the action."""


def run_stop_command(command: str, exit_code: int) -> int | None:
    """Run ``command`` when ``exit_code`` is a decision's (None when it is not: nothing runs); its exit status."""
    action = DECIDED_CODES.get(exit_code)
    if action is None or not command.strip():
        return None
    env = {**os.environ, "STOPWISE_ACTION": action, "STOPWISE_EXIT_CODE": str(exit_code)}
    done = subprocess.run(command, shell=True, env=env, check=False)
    if done.returncode != 0:
        err_console.print(f"stopwise watch: the stop command exited with status {done.returncode}: {command}")
    return done.returncode
