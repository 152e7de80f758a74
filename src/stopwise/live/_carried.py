"""The live decision an Inspect log carries: what the paired manager decided while the evaluation ran.

The paired managers of :mod:`stopwise.inspect` write, when their task ends, the comparison's
decision into the log's ``results.early_stopping.metadata`` (``manager`` starts with ``stopwise``):
``decision`` (the full decision record, with the ledger position it was taken at), ``action``,
``evaluation`` and ``ledger_decisions`` (records in the ledger's decision chain when the task
ended). That decision -- the first final one in the ledger's chain, or the latest one while none is
final -- is *the* decision of the evaluation: deciding again from the logs' rows can differ, because
the samples in flight when it was taken finished and were logged afterwards.

:func:`carried_decision` reads one log's live decision; :func:`live_decision` chooses among the
logs': the decision taken at the later look wins (a log that finished before its partner carries
the decision of its end, which a later look may have overtaken), and a :class:`LiveDecision` says
which log carried it and whether the logs agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from stopwise.errors import FileFormatError
from stopwise.records import DecisionRecord

__all__ = ["Carried", "LiveDecision", "carried_decision", "live_decision"]

_FIELD = "results.early_stopping.metadata"


@dataclass(frozen=True)
class Carried:
    """The live decision one log carries."""

    log: str
    """The log (its path relative to the watched directory)."""
    record: DecisionRecord
    """The decision record the manager wrote."""
    look: int | None
    """Its sequence in the ledger's decision chain (None when the log does not say)."""

    def order(self) -> tuple[int, int, int]:
        """Sort key: later looks last (chain sequence, then ledger position, then observed tasks)."""
        position = -1 if self.record.ledger is None else self.record.ledger.outcome_seq
        return (-1 if self.look is None else self.look, position, self.record.n_observed)


@dataclass(frozen=True, kw_only=True)
class LiveDecision:
    """The decision the paired manager took while the evaluation ran, as the logs carry it."""

    record: DecisionRecord
    """The decision record (from the log that carries the latest look)."""
    look: int | None
    """Its sequence in the ledger's decision chain (None when the log does not say)."""
    digest: str
    """``record.digest()``: equal to the digest of the ledger's record of that decision."""
    log: str
    """The log that carried it (relative to the watched directory)."""
    logs: tuple[str, ...]
    """Every log carrying a live decision of the compared pair."""
    agree: bool
    """True when every such log carries the same decision (the same digest)."""
    note: str | None
    """Why the logs differ and which decision was kept (None when they agree)."""

    @property
    def action(self) -> str:
        """The decision's action."""
        return self.record.action


def carried_decision(early_stopping: Any, log: str) -> Carried | None:
    """The live decision of one log's ``results.early_stopping`` (None when it carries none).

    Parameters
    ----------
    early_stopping : object
        The log's ``results.early_stopping`` as JSON (a mapping with ``manager`` and ``metadata``).
    log : str
        The log's name, for messages.

    Returns
    -------
    Carried or None
        None unless a stopwise manager wrote the metadata and it holds a decision.

    Raises
    ------
    FileFormatError
        The metadata's ``decision`` is not a decision record.

    Examples
    --------
    >>> from stopwise.live._carried import carried_decision
    >>> carried_decision({"manager": "stopwise (e: tested A)", "metadata": {"decision": None}}, "a.eval") is None
    True
    """
    if not isinstance(early_stopping, Mapping) or not str(early_stopping.get("manager") or "").startswith("stopwise"):
        return None
    metadata = early_stopping.get("metadata")
    if not isinstance(metadata, Mapping) or metadata.get("decision") is None:
        return None
    try:
        record = DecisionRecord.model_validate(metadata["decision"])
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(record)"
        raise FileFormatError(
            f"{log}: {_FIELD}.decision is not a stopwise decision record: field {where!r}: {first.get('msg')} "
            "(a log written by another stopwise version, or edited)"
        ) from exc
    return Carried(log, record, _look(record, metadata.get("ledger_decisions")))


def _look(record: DecisionRecord, chain: object) -> int | None:
    """The record's chain sequence: the first final decision's for promote/reject, the chain's end for continue."""
    if record.action in ("promote", "reject") and record.ledger is not None and record.ledger.decision is not None:
        return record.ledger.decision
    if record.action == "continue" and isinstance(chain, int) and not isinstance(chain, bool) and chain > 0:
        return chain  # the manager keeps the latest link while nothing is final
    return None


def live_decision(carried: Sequence[Carried], tested: str, baseline: str) -> tuple[LiveDecision | None, str | None]:
    """The live decision of the evaluation among the logs' (the later look wins), and a note on logs left out.

    Parameters
    ----------
    carried : sequence of Carried
        The live decisions of the finished logs.
    tested, baseline : str
        The compared systems: decisions of another pair are left out (and the note says so).

    Returns
    -------
    (LiveDecision or None, str or None)

    Examples
    --------
    >>> from stopwise.live._carried import live_decision
    >>> live_decision([], "A", "B")
    (None, None)
    """
    ours = [c for c in carried if (c.record.tested, c.record.baseline) == (tested, baseline)]
    others = sorted({f"{c.record.tested} vs {c.record.baseline}" for c in carried} - {f"{tested} vs {baseline}"})
    skipped = (
        f"logs carry live decisions of {', '.join(others)}, not of {tested} vs {baseline}: name the systems as the "
        "paired manager did (--tested/--baseline, --system-from) to report them"
        if others and not ours else None
    )
    if not ours:
        return None, skipped
    ordered = sorted(ours, key=Carried.order)
    latest = ordered[-1]
    digests = {c.record.digest() for c in ours}
    note = None
    if len(digests) > 1:
        seen = "; ".join(f"{c.log}: {c.record.action} at look {_text(c.look)} ({c.record.n_observed} tasks)" for c in ordered)
        note = (
            f"the logs carry different live decisions ({seen}); the later look's is the decision "
            "(a log that finished before its partner carries the decision of its end)"
        )
    live = LiveDecision(
        record=latest.record, look=latest.look, digest=latest.record.digest(), log=latest.log,
        logs=tuple(c.log for c in ours), agree=len(digests) == 1, note=note,
    )
    return live, skipped


def _text(look: int | None) -> str:
    return "?" if look is None else str(look)
