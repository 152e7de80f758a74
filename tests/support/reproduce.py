"""The live decision of a ledger, reproduced from its own events (issue 20: one decision, reproducible).

Used by the live-evaluation tests (Inspect runs, worker processes): whatever the scenario, ``stopwise ledger
export --upto-decision K`` followed by ``stopwise decide`` on that export gives the ledger's first final decision
(the same record digest), and the full export marks the rows stored after it (``after_decision``).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pandas as pd

import stopwise
from stopwise.cli.main import main
from stopwise.ledger import LedgerDecision, open_ledger
from stopwise.records import DecisionRecord

__all__ = ["assert_live_decision_reproduced"]


def _run(arguments: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(arguments)
    return code, out.getvalue()


def assert_live_decision_reproduced(ledger: Path, evaluation: str, policy: Path, order: Path, folder: Path) -> LedgerDecision:
    """Assert that the ledger's first promote/reject decision is reproduced by ``decide`` on its events up to it.

    ``policy`` and ``order`` are the files the live run used (``decide -p``, ``--tasks``); exports go to ``folder``.
    Returns the ledger's first final decision (the assertion fails when there is none).
    """
    with open_ledger(ledger, mode="read") as opened:
        live = opened.first_decision(evaluation)
    assert live is not None, f"{evaluation}: the ledger holds no promote or reject decision"
    upto, full = folder / f"{evaluation}-upto-{live.sequence}.csv", folder / f"{evaluation}-all.csv"
    assert _run(["ledger", "export", str(ledger), evaluation, "-o", str(upto), "--upto-decision", str(live.sequence), "--force"])[0] == 0
    assert _run(["ledger", "export", str(ledger), evaluation, "-o", str(full), "--force"])[0] == 0
    code, printed = _run(["decide", str(upto), "-t", live.record.tested, "-b", live.record.baseline, "-p", str(policy),
                          "--tasks", str(order), "--json"])
    again = DecisionRecord.model_validate_json(printed)
    assert code == stopwise.ACTIONS.index(live.record.action)
    assert again.digest() == live.record.digest(), (again.action, live.record.action)
    marked = pd.read_csv(full)["after_decision"].astype(bool)
    assert live.record.ledger is not None and int((~marked).sum()) == live.record.ledger.n_events
    return live
