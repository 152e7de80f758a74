"""Event payloads: the validator's plain-Python path for small appends gives exactly the payloads of its array path, or defers to it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stopwise.errors import ValidationError
from stopwise.ledger._digest import event_payload
from stopwise.ledger._events import column_payloads, payloads
from stopwise.records import outcome_columns
from stopwise.records._outcomes import _quick_columns, _validate_frame


def slow(rows: list[dict]) -> list[dict]:
    """Payloads by the array validator and the row-by-row payload function (independent of the quick path)."""
    frame = _validate_frame(pd.DataFrame(rows), "<DataFrame>", None).to_frame()
    return [event_payload(r) for r in frame.to_dict(orient="records")]


def quick_payloads(rows: list[dict]) -> list[dict] | None:
    columns = _quick_columns(rows)
    return None if columns is None else column_payloads(columns)


text = st.one_of(st.none(), st.just(""), st.just("  "), st.sampled_from(["a", " b ", "Grp", "é"]), st.just(float("nan")), st.just(3))
number = st.one_of(
    st.none(), st.just(float("nan")), st.just(float("inf")), st.booleans(), st.just("0.5"),
    st.integers(-2, 3), st.floats(-1, 2, allow_nan=False, allow_infinity=False),
)
row = st.fixed_dictionaries(
    {"system": st.sampled_from(["A", "B", " A ", "", None]), "task": st.sampled_from(["t1", "t2", " t3", ""]), "outcome": number},
    optional={
        "group": text, "source": text, "unit": text, "attempt": number, "cost_usd": number, "elapsed_s": number,
        "status": st.sampled_from(["final", "Pending", " predicted ", "", None, "done", 1]),
        "flags": st.one_of(
            st.none(), st.just(""), st.just(float("nan")), st.just(3),
            st.sampled_from(["error", "limit:token;error", " b ;a", "a b", "x;;x", "\x1b"]),
            st.lists(st.sampled_from(["error", "a;b", "z", "", " y"]), max_size=3),
        ),
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(row, min_size=1, max_size=4))
def test_quick_path_agrees_with_the_validator(rows: list[dict]) -> None:
    quick = quick_payloads(rows)
    try:
        expected = slow(rows)
    except ValidationError:
        assert quick is None  # a broken rule always goes to the validator for its message
        return
    if quick is not None:
        assert len(quick) == len(expected)
        for q, e in zip(quick, expected, strict=True):
            assert q.keys() == e.keys()
            for key in q:
                assert (q[key] is None and e[key] is None) or q[key] == e[key], (key, q, e)


def test_payloads_give_the_validator_message() -> None:
    with pytest.raises(ValidationError, match=r"<x>, row 1, field 'outcome': must be a number in \[0, 1\]; got 2"):
        payloads([{"system": "A", "task": "t", "outcome": 2}], source="<x>")
    one = payloads(pd.DataFrame({"system": ["A"], "task": ["t"], "outcome": [np.float64(1)]}), source="<x>")
    assert one == [
        {"system": "A", "task": "t", "outcome": 1.0, "group": "", "attempt": 0, "cost_usd": None, "elapsed_s": None,
         "status": "final", "source": "", "unit": ""}
    ]
    big = pd.DataFrame({"system": ["A"] * 300, "task": [f"t{i}" for i in range(300)], "outcome": 0.0})
    assert payloads(big, source="<x>") == slow(big.to_dict(orient="records"))
    columns = outcome_columns(big)
    assert payloads(columns, source="<x>") == payloads(big.to_dict(orient="records"), source="<x>")


def test_flags_enter_the_payload_canonical_and_only_when_present() -> None:
    rows = [
        {"system": "A", "task": "t1", "outcome": 0, "flags": "limit:token; error;error"},
        {"system": "A", "task": "t2", "outcome": 1, "flags": ["unscored", "error"]},
        {"system": "B", "task": "t1", "outcome": 1, "flags": ""},
    ]
    quick = quick_payloads(rows)
    assert quick is not None
    assert [q.get("flags") for q in quick] == ["error;limit:token", "error;unscored", None]
    assert quick == slow(rows)
    # repeats of a key that differ only in flags are the validator's error, not a silent pick
    assert quick_payloads([rows[0], {**rows[0], "flags": ""}]) is None


def test_event_columns_give_the_validators_frame_across_chunks_and_merges() -> None:
    """Events added in 50 uneven batches give exactly the validator's rows after every batch."""
    from stopwise.ledger._columns import EventColumns

    rng = np.random.default_rng(5)
    n = 300
    rows = pd.DataFrame(
        {
            "system": rng.choice(["A", "B"], n),
            "task": [f"t{i}" for i in range(n)],
            "outcome": rng.choice([0.0, 0.5, 1.0, np.nan], n),
            "group": rng.choice(["", "g1", "g2"], n),
            "attempt": rng.integers(0, 3, n),
            "cost_usd": rng.choice([np.nan, 0.25], n),
            "elapsed_s": rng.choice([np.nan, 3.5], n),
            "source": "s",
            "unit": rng.choice(["", "u1"], n),
            "flags": rng.choice(["", "error", "error;limit:token"], n),
        }
    )
    rows["status"] = np.where(rows["outcome"].isna(), "pending", "final")
    expected = outcome_columns(rows).to_frame()
    fetched = [
        (i + 1, r["system"], r["task"], int(r["attempt"]), None if np.isnan(r["outcome"]) else r["outcome"], r["group"],
         None if np.isnan(r["cost_usd"]) else r["cost_usd"], None if np.isnan(r["elapsed_s"]) else r["elapsed_s"],
         r["status"], r["source"], r["unit"], r["flags"])
        for i, r in enumerate(expected.to_dict(orient="records"))
    ]
    columns = EventColumns()
    cuts = np.sort(rng.choice(np.arange(1, n), 49, replace=False))
    for chunk in np.split(np.arange(n), cuts):
        columns.extend([fetched[i] for i in chunk])
        held, seqs = columns.columns()
        frame = held.to_frame()
        assert len(frame) == chunk[-1] + 1 and seqs[-1] == columns.high_water == chunk[-1] + 1
    pd.testing.assert_frame_equal(frame, expected)
    assert seqs.tolist() == list(range(1, n + 1))
    no_rows, no_seqs = EventColumns().columns()
    empty = no_rows.to_frame()
    pd.testing.assert_frame_equal(empty, expected.iloc[:0].reset_index(drop=True), check_index_type=False)
    assert len(no_seqs) == 0
