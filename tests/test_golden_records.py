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

0.2, machine-independent pins: the hashes were of full-precision floats, whose last bits depend on the CPU's vector
unit (they failed on an AVX-512 machine for every record, the code unchanged since CI passed on another). Floats are
now hashed rounded (:func:`_rounded`) and ``digest()`` is no longer hashed; the pins were re-taken from the same code and
are equal with numpy's AVX-512, AVX2 and baseline kernels (``NPY_DISABLE_CPU_FEATURES``), and the demo's pin equals
the one taken from e974111 (before 0.2).

Issue 35 item 3 (0.2, one-look rules that keep their level by default): ``Policy()`` is now the exact-wor one-look test
on a uniform order (``stopwise policy init``); the paper's primary policy is ``Policy.paper()``. The shared-record cases
were built with the default policy, which was the paper's; they now name it (``Policy.paper(...)``) and their pins, both
sets, are unchanged: the change is only the default. The demo shows the default, so it observes a seeded uniform order
(the sample exact-wor assumes) under ``Policy()`` with the tolerant coverage rule: its pins are re-taken and its actions
move from abstain, abstain, promote x 4 to abstain x 3, promote x 3 (the 25 % look: exact-wor R_promote 0.10 against the
bootstrap's 0.025 on a coverage-aware order). docs/history.md (0.2).
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


SIGNIFICANT_DIGITS = 10
ABSOLUTE_DECIMALS = 12
"""Floats are hashed at 10 significant digits after rounding to 12 decimals: their last bits depend on the machine's
vector unit (numpy's AVX-512 and AVX2 kernels give R_promote 0.04259060931968062 and 0.0425906093196806 on the demo's
25 % look, and tails near 1e-14 that differ in their second digit: 8.6896e-15 and 8.7215e-15 on swebench_lite), and
the pins must hold on every machine CI may use. Both keep every decision-relevant difference (a = 0.05)."""


def _rounded(value: object) -> object:
    """``value`` with every float rounded to :data:`ABSOLUTE_DECIMALS` decimals, then :data:`SIGNIFICANT_DIGITS`
    significant digits (recursively)."""
    if isinstance(value, float):
        return float(f"{round(value, ABSOLUTE_DECIMALS):.{SIGNIFICANT_DIGITS}g}") + 0.0
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def _canonical(records: list[DecisionRecord], *, with_claims: bool = False) -> str:
    """sha256 over each record's JSON without the volatile fields (and, unless asked, the issue-24 fields), floats
    rounded (:func:`_rounded`).

    (Before 0.2 the hash also covered each record's ``digest()``, which hashes the floats' full precision: the pins then
    held on one machine only. ``digest()``'s own stability is tested in tests/records.)"""
    h = hashlib.sha256()
    for record in records:
        dumped = json.loads(record.model_dump_json(exclude=VOLATILE if with_claims else VOLATILE | CLAIM_FIELDS))
        h.update(json.dumps(_rounded(dumped), separators=(",", ":")).encode())
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
    betting = Policy.paper(decision={"boundary": "betting-wor"})
    tasks = np.asarray(sorted(rows["task"].unique()))
    groups = rows.drop_duplicates("task").set_index("task").loc[tasks, "group"].to_numpy()
    order = coverage_aware_orders(groups, 1, rng=7)[0]
    tasks, groups = tasks[order], groups[order]
    for tested, baseline in _pairs(rows["system"].unique().tolist()):
        out.append(decide(rows, tested, baseline, Policy.paper(), complete=True))
        out.append(decide(rows, tested, baseline, Policy.paper(tail_method="normal", threshold=0.05), complete=True))
        universe = TaskUniverse(tasks.tolist(), groups.tolist())
        for fraction in (0.2, 0.5):
            k = round(fraction * len(tasks))
            seen = rows[rows["task"].isin(tasks[:k])]
            out.append(decide(seen, tested, baseline, betting, universe=universe))
            at_limit = Policy.paper(budget={"limit": fraction})
            out.append(decide(seen, tested, baseline, at_limit, universe=universe))
    return out


@pytest.mark.data
@pytest.mark.parametrize("name", RECORDS)
def test_shared_record_decisions_are_pinned(name: str) -> None:
    records = _shared_records(name)
    assert _canonical(records) == SHARED_SHA256[name]
    assert _canonical(records, with_claims=True) == SHARED_SHA256_WITH_CLAIMS[name]


DEMO_ACTIONS = ["abstain", "abstain", "abstain", "promote", "promote", "promote"]  # issue 35: the default policy (exact-wor)
DEMO_SHA256 = "f83d6e8d40839c75031d40aa2d25dbaafcfb75c979846e119079d6ba7e52b9dd"
SHARED_SHA256 = {
    # issue 33 (0.2): the betting-wor records change (see the module docstring); the fixed-budget ones do not
    "swebench_lite": "49622545b04865a70c0e0fcc8c8c678e215c5ad47e397aa3c6166d88a3b5043e",
    "swebench_verified": "f11f7a7d73445bda6cbe8684b674494e29fb39081ecc023077b972f221034dbc",
    "swebench_verified_bashonly": "10b8781bf8ac23f9fc25bcf00b96367efe4816b49fde7ba8049110e06d995d69",
    # issue 21 (i21-onelook): terminal_bench_1_5 record 9 and terminal_bench_2 record 15 (fixed-budget reject at 0.2
    # on 2 discordant tasks) gain the rare-discordance warning; nothing else in them, and no other record, changed
    "terminal_bench_1_5": "bf1a943d4c4c78961e101daa8daf4ecbe6c7fdc2e367467417151d9295c65f7b",
    "terminal_bench_2": "858ce3fa898352949f536db0124daeabab7efff07a2e1a2722af17ca20b06582",
}
# issue 24 (i24-claims): the records with their interval, claim sentence and forecast (issue 33: the betting-wor ones change;
# issue 35: every record gains its estimand, and intervals and claims change with it: docs/history.md)
DEMO_SHA256_WITH_CLAIMS = "40d1dbc11eca333274e40574747af5b951fd4f7b26c0687d14c98fe90fa5564f"
SHARED_SHA256_WITH_CLAIMS = {
    "swebench_lite": "7374d6b15f1b513b80669afe050fd25c975ad957e8307dacdfb3d331eda036c5",
    "swebench_verified": "887e742d2a68d2450f8ba1b6141ba66a0d36cb10cbabbf7431120f140f9e395d",
    "swebench_verified_bashonly": "97cb6030f0c53ec47c2fd987012e0b7ffe4163547aec56be7930f9f165e4935a",
    "terminal_bench_1_5": "424fbaf81e69d67d6fc70463074bfa8556848b1128110b2a0d6e6cf702e1a30e",
    "terminal_bench_2": "c824f3ed88096c607264ef8bd069b8cf858fac2a4be2d667fd320b46501bfdfc",
}
