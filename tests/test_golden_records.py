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
CLAIM_FIELDS = {"interval", "claim", "forecast"}
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
    "swebench_lite": "5be5734138daf6ebc9b60d2811e9c805702fb2e5db38f5343223b78347ce4f0e",
    "swebench_verified": "b64cb353d1af33a2155f8bc79fe2881415b7cf2096384d71076400fb7f8ab10f",
    "swebench_verified_bashonly": "02e6b5622a885e0e6ad0afe52b1285abfaa3b938f26d384f1d0aec9b27bb9cdc",
    # issue 21 (i21-onelook): terminal_bench_1_5 record 9 and terminal_bench_2 record 15 (fixed-budget reject at 0.2
    # on 2 discordant tasks) gain the rare-discordance warning; nothing else in them, and no other record, changed
    "terminal_bench_1_5": "fe94e2719a85c1bf488cf6c0be4734b510d7fcdf1a97730c500600d4a369b09a",
    "terminal_bench_2": "8c6e3bd8c63daaf2389a418ebed60f4e0b00d89b84404e6becefb61b9b4198e1",
}
# issue 24 (i24-claims): the records with their interval, claim sentence and forecast
DEMO_SHA256_WITH_CLAIMS = "c97a6f352e501e8d6804cd9c8afb433a1fc8c1fcf6db1200064ceda1bf933e9e"
SHARED_SHA256_WITH_CLAIMS = {
    "swebench_lite": "6d4d3ccc8d3768f82ecb7bca1f6684f22e957e88f02082fa4ffc3f4d43b3ef85",
    "swebench_verified": "5f407d0aaac7da1054a08799ce05ac00212abe5147384a1ff60e52739e23bc25",
    "swebench_verified_bashonly": "3a06b3e28d614671733e2ecf595dde081f99aa8d3f1110e3ed7a28fb4237502f",
    "terminal_bench_1_5": "834d7785c1115c890a9dbc93fd433fb41a5d0d8f041e684cc1c7a50c54bea77d",
    "terminal_bench_2": "bd3c7c92fa4aa9fd5503b68b64e907da1218176677e5c6d56890b548d1a688d7",
}
