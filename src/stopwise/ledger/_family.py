"""A family evaluation in the ledger: k systems under one family policy, decided together (issue 32).

A pair is registered with its ``tested`` and ``baseline`` columns. A family of k >= 2 systems is registered in
the same ``stopwise_evaluations`` row, without a schema change: its ``tested`` column holds the systems as a
canonical JSON list (``["A","B","C"]``) and its ``baseline`` column is empty (a pair's never is). A ledger
written before families stays readable as it is, and :meth:`stopwise.ledger.Ledger.verify` recomputes a family's
genesis digest from the stored columns like a pair's.

A family look is :func:`stopwise.compare.decide_family` on the stored events with the registered policy (its
``[family]`` section) and planned universe; it is computed, not appended to the decision chain (the chain
holds pair decisions), so that ``ledger export`` and ``decide_family`` (or ``stopwise ledger decide --family``)
on the export give the same record.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from stopwise._canonical import canonical_json
from stopwise.errors import LedgerError
from stopwise.ledger._results import Registration
from stopwise.records import FamilyRecord, OutcomeColumns, Policy

__all__ = ["check_family_systems", "decide_family_registered", "decode_family", "encode_family"]


def encode_family(systems: Sequence[str]) -> tuple[str, str]:
    """The (tested, baseline) columns of a family registration: the systems' canonical JSON list, and "".

    Examples
    --------
    >>> from stopwise.ledger._family import decode_family, encode_family
    >>> encode_family(["B", "A", "C"])
    ('["A","B","C"]', '')
    >>> decode_family(*encode_family(["B", "A", "C"])), decode_family("A", "B")
    (('A', 'B', 'C'), ())
    """
    return canonical_json(sorted(systems)), ""


def decode_family(tested: str, baseline: str) -> tuple[str, ...]:
    """The family's systems from the stored columns; ``()`` for a pair registration."""
    if baseline or not tested.startswith("["):
        return ()
    try:
        systems = json.loads(tested)
    except ValueError:
        return ()
    return tuple(str(s) for s in systems) if isinstance(systems, list) else ()


def check_family_systems(name: str, systems: object, policy: Policy) -> list[str]:
    """The family's systems, sorted, after checking them (k >= 2 distinct non-empty names, the policy's baseline among them)."""
    if isinstance(systems, str) or not isinstance(systems, Sequence):
        raise LedgerError(f"evaluation {name!r}: `systems` must be a list of system names; got {type(systems).__name__}")
    chosen = [str(s).strip() for s in systems]
    if len(chosen) < 2 or not all(chosen) or any(s.startswith("[") for s in chosen):
        raise LedgerError(
            f"evaluation {name!r}: a family needs at least 2 non-empty system names (not starting with '['); got {chosen!r}"
        )
    twice = sorted({s for s in chosen if chosen.count(s) > 1})
    if twice:
        raise LedgerError(f"evaluation {name!r}: the family names system(s) {twice} twice")
    family = policy.family
    if family.kind == "baseline" and family.baseline not in chosen:
        raise LedgerError(
            f"evaluation {name!r}: the policy's [family] baseline {family.baseline!r} is not among the systems {sorted(chosen)}"
        )
    if policy.budget.measure not in ("task_fraction", "task_count"):
        raise LedgerError(
            f"evaluation {name!r}: a family's budget is counted in tasks (task_fraction or task_count); the policy "
            f"measures {policy.budget.measure}"
        )
    return sorted(chosen)


def decide_family_registered(reg: Registration, rows: OutcomeColumns) -> FamilyRecord:
    """:func:`stopwise.compare.decide_family` on ``rows`` with the registered systems, policy and planned universe."""
    from stopwise.compare import decide_family

    if not reg.family:
        raise LedgerError(
            f"evaluation {reg.name!r} is a pair ({reg.tested} vs {reg.baseline}), not a family: decide it with "
            "Ledger.decide (stopwise ledger decide without --family)"
        )
    present = set(rows.codes("system")[1].tolist()) if len(rows) else set()
    missing = [s for s in reg.family if s not in present]
    if missing:
        raise LedgerError(
            f"evaluation {reg.name!r}: system(s) {missing} have no outcome events yet; a family look needs an outcome "
            "of every system"
        )
    return decide_family(rows, list(reg.family), reg.policy, universe=reg.universe)
