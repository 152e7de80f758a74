"""How ``stopwise watch LOGDIR`` reports the live decision the paired Inspect manager wrote into the logs.

When the logs carry one (:attr:`stopwise.live.LogLook.live`), it is the decision of the evaluation:
the live table and the final summary show it with its look, digest and log, beside the decision
taken again on the logs' rows when that differs; ``--json`` prints an envelope (see
:func:`live_payload`) instead of the bare record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import typer

from stopwise._text import for_terminal as escape
from stopwise.cli._common import console, print_json

if TYPE_CHECKING:
    from stopwise.live import LogLook

__all__ = ["finish_live", "live_counters", "live_payload"]


def _agreement(look: LogLook) -> str:
    assert look.live is not None
    live = look.live
    if len(live.logs) == 1:
        return f"carried by {live.log} (the only log carrying one)"
    return f"carried by {live.log}; " + ("every log carries it" if live.agree else "the logs differ: the later look wins")


def live_counters(look: LogLook) -> list[tuple[str, str]]:
    """Rows of the live table about the live decision (none without one, but the notes)."""
    rows = [("note", escape(note)) for note in look.notes]
    if look.live is None:
        return rows
    live = look.live
    look_text = "?" if live.look is None else str(live.look)
    rows.insert(0, (
        "live decision",
        f"{live.action.upper()} at look {look_text} of the ledger's chain (digest {live.digest[:16]}); {escape(_agreement(look))}",
    ))
    if look.difference is not None:
        rows.insert(1, ("re-decided", escape(look.difference)))
    return rows


def live_payload(look: LogLook) -> dict[str, Any]:
    """The ``--json`` output when the logs carry a live decision.

    Keys: ``source`` (``"inspect-manager"``), ``action``, ``look`` (the decision's sequence in the
    ledger's decision chain), ``digest``, ``log`` (the log that carried it), ``logs`` (every log carrying
    one), ``agree``, ``notes``, ``decision`` (the live decision record), ``redecided`` (the record taken
    again on the logs' rows, or null), ``redecided_digest`` and ``difference`` (why they differ, or null).
    """
    assert look.live is not None
    live, again = look.live, look.redecided
    return {
        "source": "inspect-manager",
        "action": live.action,
        "look": live.look,
        "digest": live.digest,
        "log": live.log,
        "logs": list(live.logs),
        "agree": live.agree,
        "notes": list(look.notes),
        "decision": live.record.model_dump(mode="json"),
        "redecided": None if again is None else again.model_dump(mode="json"),
        "redecided_digest": None if again is None else again.digest(),
        "difference": look.difference,
    }


def finish_live(look: LogLook, *, as_json: bool = False) -> NoReturn:
    """Print the live decision (with the re-decision beside it when they differ) and exit with its action's code."""
    from stopwise.cli.compare import print_record
    from stopwise.records import ACTIONS

    assert look.live is not None
    if as_json:
        print_json(live_payload(look))
    else:
        live = look.live
        console.print(
            f"live decision of the paired Inspect manager (look {'?' if live.look is None else live.look}, "
            f"digest {live.digest[:16]}, {escape(_agreement(look))}):"
        )
        print_record(live.record)
        for note in look.notes:
            console.print(f"note: {escape(note)}")
        if look.difference is not None:
            console.print(f"re-decided from the logs: {escape(look.difference)}")
    raise typer.Exit(ACTIONS.index(look.live.action))
