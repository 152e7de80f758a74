"""The words of a family record: its estimand, its method and the family claim sentence."""

from __future__ import annotations

from stopwise.records import FamilyRecord

__all__ = ["control_phrase", "estimand_note", "family_claim", "method_text"]


def _pct(value: float) -> str:
    return f"{100 * value:g} %"


def control_phrase(control: str, level: float) -> str:
    """``at FWER 5 %``, ``at FDR 5 %`` or the uncontrolled per-pair phrase.

    Examples
    --------
    >>> from stopwise.compare._family_text import control_phrase
    >>> control_phrase("fwer", 0.05), control_phrase("none", 0.05)
    ('at FWER 5 %', 'per pair at 5 %, UNCONTROLLED across the family')
    """
    if control == "none":
        return f"per pair at {_pct(level)}, UNCONTROLLED across the family"
    return f"at {control.upper()} {_pct(level)}"


def estimand_note(estimand: str, n_tasks: int) -> str:
    """What a record's claims are about, with what that assumes."""
    if estimand == "task-distribution":
        return (
            "the benchmark's task distribution: the expected score difference of new runs on tasks drawn like these, "
            f"the record's {n_tasks} tasks taken as an i.i.d. sample of the distribution and each run as a draw of its "
            "system's run-to-run randomness (attempts averaged). A curated benchmark is not a random sample, so this is an "
            "assumption; on these very tasks and runs every non-zero gap is known exactly"
        )
    return f"the mean over these {n_tasks} planned tasks (the task universe's finite population)"


def method_text(control: str, evidence: str, n_hypotheses: int, level: float) -> str:
    """How the family's claims were made, in words."""
    source = {
        "e-process": "the pairs' betting capitals on the shared planned order (anytime-valid e-processes)",
        "e-value": "one-look mixture e-values of the task distribution's mean (order-free)",
        "p-value": "the fixed-budget tails at the budget limit (one-look p-values)",
    }[evidence]
    m = f"{n_hypotheses:,}"
    if control == "none":
        return f"each of the {m} claims at {_pct(level)} on its own, from {source}: no family-wise or false-discovery guarantee"
    if evidence == "p-value":
        name = "Holm's step-down procedure" if control == "fwer" else "the Benjamini–Yekutieli procedure (valid under any dependence)"
        return f"{name} on the {m} claims, from {source}"
    if control == "fwer":
        return (
            f"closed testing of the {m} claims with arithmetic-mean e-merging (Vovk & Wang 2021): family-wise error at most "
            f"{_pct(level)} at every look, each claim no later than Bonferroni's at M/a on Ville's bound; from {source}"
        )
    stopped = ", each stopped when it enters the e-BH set (a claim is never withdrawn)" if evidence == "e-process" else ""
    return f"e-BH (Wang & Ramdas 2022) on the {m} claims' e-values{stopped}: false discovery rate at most {_pct(level)}; from {source}"


def _names(systems: list[str], limit: int = 4) -> str:
    shown = ", ".join(systems[:limit])
    return shown + (f", … ({len(systems)} in all)" if len(systems) > limit else "")


def _where(record: FamilyRecord) -> str:
    if record.estimand == "task-distribution":
        return f"on the benchmark's task distribution ({record.n_planned} tasks as a sample)"
    if record.look >= record.n_planned:
        return f"on these {record.n_planned} planned tasks"
    return f"on these {record.n_planned} planned tasks ({record.look} observed{'' if record.final else ' so far'})"


def _waiting(record: FamilyRecord) -> str:
    waiting = [pair for pair in record.pairs if pair.top_up]
    if not waiting:
        return ""
    pairs = {frozenset((pair.tested, pair.baseline)) for pair in waiting}
    tasks = {task for pair in waiting for task in pair.top_up or []}
    return f"; {len(pairs)} more pair(s) are decided once {len(tasks)} top-up task(s) bring coverage"


def family_claim(record: FamilyRecord) -> str:
    """The family's claim in one sentence: what is claimed, under which control, about which estimand.

    Examples
    --------
    >>> import stopwise
    >>> from stopwise.compare import decide_family
    >>> rows = stopwise.outcome_columns(
    ...     [{"system": s, "task": f"t{i}", "outcome": int(i < n)} for s, n in (("A", 180), ("B", 60), ("C", 55)) for i in range(200)])
    >>> print(decide_family(rows, complete=True).claim)
    2 of 3 pairs separated at FWER 5 % on the benchmark's task distribution (200 tasks as a sample): A is best; the next 2 (B, C) are one tier.
    """
    control = control_phrase(record.control, record.level)
    by = f" by more than {100 * record.threshold:g} pp" if record.threshold else ""
    where = _where(record)
    if record.kind == "best":
        if record.best is not None:
            return f"{record.best} is best of these {len(record.systems)}{by} {control} {where}."
        possible = [r.system for r in record.ranks if r.rank_low == 1]
        return f"No best system yet {control} {where}: {_names(possible)} remain possible."
    if record.kind == "baseline":
        groups: dict[str, list[str]] = {"promote": [], "reject": [], "open": []}
        for pair in record.pairs:
            groups[pair.action if pair.action in ("promote", "reject") else "open"].append(pair.tested)
        parts = [f"{len(groups['promote'])} of {len(record.pairs)} candidates beat {record.baseline}{by} {control}"
                 + (f" ({_names(groups['promote'])})" if groups["promote"] else "")]
        if groups["reject"]:
            parts.append(f"{len(groups['reject'])} do not ({_names(groups['reject'])})")
        if groups["open"]:
            parts.append(f"{len(groups['open'])} not yet separated ({_names(groups['open'])})")
        return "; ".join(parts) + f" {where}{_waiting(record)}."
    claims = sum(pair.action == "promote" for pair in record.pairs)  # at delta = 0 one per separated pair
    k = len(record.systems)
    if record.threshold == 0:
        sentence = f"{claims} of {k * (k - 1) // 2} pairs separated {control} {where}"
    else:
        sentence = f"{claims} of {k * (k - 1)} ordered pairs claimed \"A beats B{by}\" {control} {where}"
    return sentence + _tier_phrase(record) + _equivalent_phrase(record) + _waiting(record) + "."


def _tier_phrase(record: FamilyRecord) -> str:
    if not record.tiers:
        return ""
    first = record.tiers[0].systems
    if len(record.tiers) == 1:
        return f": all {len(first)} are one tier"
    if record.best is not None and first == [record.best]:
        rest = record.tiers[1].systems if len(record.tiers) > 1 else []
        tail = f"; the next {len(rest)} ({_names(rest)}) are one tier" if len(rest) > 1 else ""
        return f": {record.best} is best{tail}"
    if len(first) > 1:
        return f": the top {len(first)} ({_names(first)}) are one tier of {len(record.tiers)}"
    return f": {len(record.tiers)} tiers, {first[0]} alone on top"


def _equivalent_phrase(record: FamilyRecord) -> str:
    if record.equivalence <= 0:
        return ""
    pairs = sum(pair.equivalent and pair.tested < pair.baseline for pair in record.pairs)
    return f"; {pairs} pair(s) equivalent within ±{100 * record.equivalence:g} pp"
