"""The ``[family]`` policy section and the family record's schema (``stopwise.records``)."""

from __future__ import annotations

import json
import math

import pytest

from stopwise.errors import PolicyError
from stopwise.records import (
    DEFAULT_POLICY_TOML,
    FamilyPair,
    FamilyPolicy,
    FamilyRecord,
    Policy,
    SystemRank,
    parse_policy,
)

PRIMARY_SHA256 = Policy().sha256()


def test_the_default_family_keeps_every_policy_digest() -> None:
    assert "family" not in Policy().canonical_json()
    assert parse_policy(DEFAULT_POLICY_TOML).family == Policy().family  # the commented [family] section of `policy init` is the default
    assert "[family]" in DEFAULT_POLICY_TOML and 'kind = "all-pairs"' in DEFAULT_POLICY_TOML
    changed = parse_policy('[family]\ncontrol = "fdr"\npublication = 0.2')
    assert '"family":{' in changed.canonical_json() and changed.sha256() != PRIMARY_SHA256
    assert changed.family == FamilyPolicy(control="fdr", publication=0.2)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[family]\nkind = "baseline"', "needs `baseline`"),
        ('[family]\nbaseline = "prod"', 'used only with kind = "baseline"'),
        ('[family]\nkind = "best"\ncontrol = "fdr"', "family-wise statement"),
        ('[family]\ncontrol = "holm"', "field 'family.control'"),
        ("[family]\npublication = 0", "field 'family.publication'"),
        ('[family]\npublication = "0.5"', "field 'family.publication'"),  # strict: text is not a number
        ("[family]\nequivalence = 1.0", "field 'family.equivalence'"),
        ("[family]\nalpha = 0.1", "unknown setting"),
    ],
)
def test_bad_family_sections_name_the_field(text: str, fragment: str) -> None:
    with pytest.raises(PolicyError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        parse_policy(text)


def _record(**changes: object) -> FamilyRecord:
    base = dict(
        kind="all-pairs", control="fwer", level=0.05, threshold=0.0, estimand="task-distribution", estimand_note="x",
        boundary="fixed-budget", evidence="e-value", method="m", systems=["A", "B"], n_hypotheses=2, n_claims=1, n_planned=10,
        look=10, final=True, status="answered",
        pairs=[FamilyPair(tested="A", baseline="B", action="promote", e_promote=math.inf, e_reject=0.0),
               FamilyPair(tested="B", baseline="A", action="reject", e_promote=0.0, e_reject=math.inf)],
        ranks=[SystemRank(system="A", mean=1.0, rank=1, rank_low=1, rank_high=1, tier=1),
               SystemRank(system="B", mean=0.0, rank=2, rank_low=2, rank_high=2, tier=2)],
        tiers=[], needed=[], interval_level=0.95, interval_method="m", policy_sha256="p", input_sha256="i", stopwise_version="0",
    )  # fmt: skip
    base.update(changes)
    return FamilyRecord.model_validate(base)


def test_infinite_e_values_are_written_as_infinity_and_read_back() -> None:
    record = _record()
    data = json.loads(record.model_dump_json())
    assert data["pairs"][0]["e_promote"] == "Infinity" and data["version"] == 1
    assert FamilyRecord.model_validate(data) == record


def test_the_digest_leaves_out_the_time_and_the_claim_sentence() -> None:
    from datetime import UTC, datetime

    record = _record()
    assert _record(claim="another wording", decided_at=datetime.now(UTC)).digest() == record.digest()
    assert _record(n_claims=2).digest() != record.digest()
    with pytest.raises(KeyError):
        record.pair("A", "C")
    assert record.pair("B", "A").action == "reject" and record.answered
