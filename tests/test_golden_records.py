"""The restructure pin: decision records of ``stopwise demo`` and of ``decide`` on the shared records are
byte-identical across refactors.

Each case hashes the records' canonical JSON (``model_dump_json`` without ``decided_at`` and the library
version, the only fields that legitimately change) and their ``digest()``s. The expected values were computed
before the 0.1 restructure (issue 19) from the code at 3c078f6; a change here is a behaviour change and needs
its own justification, not a new hash.

Issue 21 (order provenance): the betting-wor records of the shared records (the 20 % and 50 % looks; 40 of
the 120) now carry one more warning, ``order-provenance``: their universe is built in Python from
``coverage_aware_orders(..., rng=7)`` and has no ``stopwise order`` stamp. Everything else in them (action,
p-values, process, reason) and every other record is unchanged.

Issue 33 (0.2, the tolerant coverage rule and the retired stratified process): the betting-wor records (the 20 %
and 50 % looks, 8 of the 24 of each record, 40 of the 120) change, deliberately, and nothing else. Their policy,
the default with betting-wor, now has the ``tolerant`` coverage rule (its sha256 changes), and their universe
(a Python-built coverage-aware order without a stamp) is decided with the pooled process, the top-up design and
an ``order-provenance`` warning that the guarantee assumes a uniform order, instead of the retired stratified
process: p-values, coverage, reason and tail method change; 6 of the 40 actions change, each from continue to a
final action (swebench_verified_bashonly 2, terminal_bench_1_5 2, terminal_bench_2 2). docs/history.md (0.2).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
from tests.conftest import shared_path

from stopwise.cli.main import main
from stopwise.compare import coverage_aware_orders, decide
from stopwise.records import DecisionRecord, Policy, TaskUniverse, read_outcomes

RECORDS = ("swebench_lite", "swebench_verified", "swebench_verified_bashonly", "terminal_bench_1_5", "terminal_bench_2")
VOLATILE = {"decided_at", "stopwise_version"}
CLAIM_FIELDS = {"interval", "claim", "forecast", "estimand"}
"""Issue 24 added these derived fields; the original pins hash the records without them (every old field of every
record byte-identical, every digest() unchanged) and the ``*_WITH_CLAIMS`` pins hash the whole JSON."""


PINNED_VERSION = "0.1.0"
"""The library version the pins were computed with: ``digest()`` covers ``stopwise_version``, so each record's digest is
taken with its version set back to this one (0.2 bumped the version and nothing else of the records)."""


def _canonical(records: list[DecisionRecord], *, with_claims: bool = False) -> str:
    """sha256 over each record's JSON without the volatile fields (and, unless asked, the issue-24 fields), then its
    digest() at the pinned version."""
    h = hashlib.sha256()
    for record in records:
        h.update(record.model_dump_json(exclude=VOLATILE if with_claims else VOLATILE | CLAIM_FIELDS).encode())
        h.update(record.model_copy(update={"stopwise_version": PINNED_VERSION}).digest().encode())
    return h.hexdigest()


def _pairs(systems: list[str]) -> list[tuple[str, str]]:
    """A fixed spread of directed pairs: first/last, middle neighbours, and the two best-named."""
    s = sorted(systems)
    picks = [(s[-1], s[0]), (s[0], s[-1]), (s[len(s) // 2], s[len(s) // 2 - 1]), (s[-2], s[-1])]
    return list(dict.fromkeys(picks))


def test_demo_records_are_pinned(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--json"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    records = [DecisionRecord.model_validate(json.loads(line)) for line in lines]
    assert [r.action for r in records] == DEMO_ACTIONS
    assert _canonical(records) == DEMO_SHA256
    assert _canonical(records, with_claims=True) == DEMO_SHA256_WITH_CLAIMS


def _shared_records(name: str) -> list[DecisionRecord]:
    loaded = read_outcomes(shared_path("records", name, "outcomes.csv"))
    rows = loaded if isinstance(loaded, pd.DataFrame) else loaded.to_frame()
    out: list[DecisionRecord] = []
    betting = Policy.model_validate({"decision": {"boundary": "betting-wor"}})
    tasks = np.asarray(sorted(rows["task"].unique()))
    groups = rows.drop_duplicates("task").set_index("task").loc[tasks, "group"].to_numpy()
    order = coverage_aware_orders(groups, 1, rng=7)[0]
    tasks, groups = tasks[order], groups[order]
    for tested, baseline in _pairs(rows["system"].unique().tolist()):
        out.append(decide(rows, tested, baseline, complete=True))
        out.append(decide(rows, tested, baseline, Policy.model_validate({"tail_method": "normal", "threshold": 0.05}), complete=True))
        universe = TaskUniverse(tasks.tolist(), groups.tolist())
        for fraction in (0.2, 0.5):
            k = round(fraction * len(tasks))
            seen = rows[rows["task"].isin(tasks[:k])]
            out.append(decide(seen, tested, baseline, betting, universe=universe))
            at_limit = Policy.model_validate({"budget": {"limit": fraction}})
            out.append(decide(seen, tested, baseline, at_limit, universe=universe))
    return out


@pytest.mark.data
@pytest.mark.parametrize("name", RECORDS)
def test_shared_record_decisions_are_pinned(name: str) -> None:
    records = _shared_records(name)
    assert _canonical(records) == SHARED_SHA256[name]
    assert _canonical(records, with_claims=True) == SHARED_SHA256_WITH_CLAIMS[name]


DEMO_ACTIONS = ["abstain", "abstain", "promote", "promote", "promote", "promote"]
DEMO_SHA256 = "0ae62007a137ad2d4af747f44726d72d485f3b1766a7b033c9cecfa4df2b0869"
SHARED_SHA256 = {
    # issue 33 (0.2): the betting-wor records change (see the module docstring); the fixed-budget ones do not
    "swebench_lite": "278189d7cd07493d9a883d866fd393825b028dcf19f0e1be9305945c1121be4b",
    "swebench_verified": "578f73b2697465b212650e85e6fb24bc9d625a8f334b4d076f3332c280fe3e5a",
    "swebench_verified_bashonly": "4f16d4460135295fb149fac0063ea2bb5e1b9c9e257bd5d6082116274a923146",
    # issue 21 (i21-onelook): terminal_bench_1_5 record 9 and terminal_bench_2 record 15 (fixed-budget reject at 0.2
    # on 2 discordant tasks) gain the rare-discordance warning; nothing else in them, and no other record, changed
    "terminal_bench_1_5": "7377b11e90bddd4f7e6891d4ed972143026d1ba19aed2c34762792d2b9723c95",
    "terminal_bench_2": "2cfcba7243d354ab1e546eb0fdbd4f95a4969145f0e48fab16681c4fefc261f7",
}
# issue 24 (i24-claims): the records with their interval, claim sentence and forecast (issue 33: the betting-wor ones change)
DEMO_SHA256_WITH_CLAIMS = "c97a6f352e501e8d6804cd9c8afb433a1fc8c1fcf6db1200064ceda1bf933e9e"
SHARED_SHA256_WITH_CLAIMS = {
    "swebench_lite": "22119f1699b1d518ae4d8fdcda63866340923ba65a94f205d86928782c60302a",
    "swebench_verified": "fa0e521eb73569e8413cd9693d0d56227f42127ac09b853d4d0c645abc8a14db",
    "swebench_verified_bashonly": "1246f0083b72c56fd62db82e3bfa130a678f648bfbe89175192ab726c46d3414",
    "terminal_bench_1_5": "e718090c45cffb5ea35cff552fe255e16b34ce233597b567d258353ce6df9bf4",
    "terminal_bench_2": "308fb3b7c457b0b58b325c04ea81d3fabf466b2e79dae4dc92db0e0f77fb007e",
}
