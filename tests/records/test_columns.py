"""OutcomeColumns: the pandas-free reader, validator and pairing input agree with pandas and with the frame path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import stopwise
from stopwise.compare import input_digest
from stopwise.errors import ValidationError
from stopwise.records import OutcomeColumns, factorize, read_outcomes
from stopwise.records._outcomes import QUICK_MAX_ROWS, _quick_columns, _validate


def test_factorize_matches_pandas_on_random_text() -> None:
    rng = np.random.default_rng(3)
    alphabet = np.array(list("abcXYZ_-/ é中\u00a0"), dtype=object)
    values = np.array(["".join(rng.choice(alphabet, rng.integers(1, 6))) for _ in range(3000)], dtype=object)
    codes, labels = factorize(values)
    expected_codes, expected_labels = pd.factorize(values, sort=True)
    assert labels.tolist() == list(expected_labels)
    assert codes.tolist() == expected_codes.tolist()
    assert (labels[codes] == values).all()


def test_numbers_follow_the_contract_not_pythons_float(tmp_path: Path) -> None:
    """Python's float() reads '1_0' and non-ASCII digits; pandas.to_numeric (the earlier reader) does not, nor do we."""
    path = tmp_path / "rows.csv"
    path.write_text("system,task,outcome,cost_usd\nA,t1, 1 ,1_0\nA,t2,-0,\nA,t3,0.5,\u0661\n", encoding="utf-8")
    with pytest.raises(ValidationError) as info:
        read_outcomes(path)
    problems = [(p.row, p.field) for p in info.value.problems]
    assert problems == [(1, "cost_usd"), (3, "cost_usd")]
    path.write_text("system,task,outcome,cost_usd\nA,t1, 1 ,10\nA,t2,-0,\nA,t3,0.5,1e-3\n", encoding="utf-8")
    rows = read_outcomes(path)
    assert rows.outcome.tolist() == [1.0, 0.0, 0.5]
    assert np.signbit(rows.outcome).tolist() == [False, False, False]  # "-0" is 0.0, as pandas read it
    assert rows.cost_usd[[0, 2]].tolist() == [10.0, 0.001] and np.isnan(rows.cost_usd[1])
    expected = pd.to_numeric(pd.Series([" 1 ", "-0", "0.5"]), errors="coerce").to_numpy(dtype=float) + 0.0
    np.testing.assert_array_equal(rows.outcome, expected)


def test_frame_and_columns_give_the_same_record_and_digest() -> None:
    frame = stopwise.records.synthetic_benchmark(80, 3, attempts=2, rng=5)
    columns = OutcomeColumns.from_frame(frame)
    systems = sorted(set(frame["system"]))
    universe = stopwise.TaskUniverse(sorted(set(frame["task"])))
    by_frame = stopwise.decide(frame, systems[0], systems[1], universe=universe)
    by_columns = stopwise.decide(columns, systems[0], systems[1], universe=universe)
    assert by_frame.digest() == by_columns.digest()
    assert input_digest(frame, tuple(systems[:2])) == input_digest(columns, tuple(systems[:2]))
    pd.testing.assert_frame_equal(columns.to_frame(), stopwise.outcome_columns(frame).to_frame())
    # the canonical frame's cheap checks and the full validator (any other frame) give the same rows
    full = stopwise.outcome_columns(frame.assign(attempt=frame["attempt"].astype(float)))
    pd.testing.assert_frame_equal(full.to_frame(), columns.to_frame())


def test_a_frame_breaking_the_contract_is_validated_not_trusted() -> None:
    frame = pd.DataFrame({"system": ["A", "B"], "task": ["t", "t"], "outcome": [1.0, 1.5]})
    with pytest.raises(ValidationError, match="must be a number in"):
        OutcomeColumns.from_frame(frame)


def test_take_and_concat_keep_rows_in_order() -> None:
    rows = stopwise.outcome_columns([{"system": s, "task": f"t{i}", "outcome": i % 2} for i in range(4) for s in "AB"])
    picked = rows.take(rows.system == "B")
    assert picked.task.tolist() == ["t0", "t1", "t2", "t3"]
    joined = OutcomeColumns.concat([picked, rows.take(np.array([0]))])
    assert joined.system.tolist() == ["B"] * 4 + ["A"] and len(joined) == 5
    assert joined.codes("system")[1].tolist() == ["A", "B"]


def test_swebench_lite_digest_matches_the_pandas_implementation(shared_data: Path) -> None:
    """Reference: the input sha256 the pandas pairing core (commit ed47f9b) stamped on this record and pair."""
    path = shared_data / "records" / "swebench_lite" / "outcomes.csv"
    rows = read_outcomes(path)
    systems = sorted(set(rows.system.tolist()))[:2]
    record = stopwise.decide(rows, systems[0], systems[1], stopwise.Policy.paper(), complete=True)  # the paper's tail then
    assert record.input_sha256 == "c904f25bf81a20988e45cb64e465ff37a4595eaa4695e310f2b09f064895bddf"
    assert record.action == "promote" and record.n_observed == 300
    assert record.r_promote == pytest.approx(0.0003009393777239998, rel=1e-12)


def test_decide_on_a_real_record_imports_neither_pandas_nor_scipy(shared_data: Path) -> None:
    """``stopwise decide`` in a fresh process, on the SWE-bench Lite record: the pandas-free reader and the default
    exact-wor test (issue 35) take the whole decision (the same record and digest as the pandas path above), loading
    no pandas or SciPy; at the complete record the mean is known, so its tail is 0 (the same as in-process)."""
    path = shared_data / "records" / "swebench_lite" / "outcomes.csv"
    systems = sorted({line.split(",", 1)[0] for line in path.read_text(encoding="utf-8").splitlines()[1:]})[:2]
    code = (
        "import json, sys\nfrom stopwise.cli.main import main\ncode = main(sys.argv[1:])\n"
        "print(json.dumps(sorted(m for m in ('pandas', 'scipy') if m in sys.modules)), file=sys.stderr)\nsys.exit(code)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(stopwise.__file__).resolve().parents[1])}
    args = ["decide", str(path), "-t", systems[0], "-b", systems[1], "--complete", "--json"]
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr  # exit 0: promote
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
    record = json.loads(done.stdout)
    assert record["input_sha256"] == "c904f25bf81a20988e45cb64e465ff37a4595eaa4695e310f2b09f064895bddf"
    assert record["action"] == "promote" and record["n_observed"] == 300
    in_process = stopwise.decide(read_outcomes(path), systems[0], systems[1], complete=True)
    assert in_process.tail is not None and in_process.tail.method == "exact-wor"
    assert record["r_promote"] == in_process.r_promote == 0.0 and record["tail"]["method"] == "exact-wor"


def test_the_plain_python_path_for_a_few_rows_gives_the_validators_columns() -> None:
    rows = [
        {"system": " A ", "task": "t1", "outcome": 1, "flags": ["limit:token", "error"], "attempt": 1.0},
        {"system": "A", "task": "t2", "outcome": -0.0, "cost_usd": 0.25, "status": " Pending ", "source": "s"},
        {"system": "B", "task": "t1", "outcome": None, "status": "pending", "group": None, "elapsed_s": float("nan")},
        {"system": "B", "task": "t1", "outcome": None, "status": "pending", "source": "other"},  # a repeat, kept
    ]
    quick = _quick_columns(rows)
    assert quick is not None
    names = list(dict.fromkeys(k for r in rows for k in r))
    cells = {}
    for name in names:
        cells[name] = np.empty(len(rows), dtype=object)
        cells[name][:] = [r.get(name) for r in rows]
    pd.testing.assert_frame_equal(quick.to_frame(), _validate(cells, "<rows>", None).to_frame())
    assert np.signbit(quick.outcome).tolist() == [False, False, False, False]  # -0.0 is 0.0, as in the validator
    assert stopwise.outcome_columns(rows).flags.tolist() == ["error;limit:token", "", "", ""]
    # anything the plain path does not judge goes to the validator, which names the problem
    assert _quick_columns([{"system": "A", "task": "t", "outcome": "1"}]) is None
    assert _quick_columns([{**rows[0], "attempt": 2.0**60}]) is None
    with pytest.raises(ValidationError, match="field 'attempt': must be an integer from 0 to 9007199254740992"):
        stopwise.outcome_columns([{**rows[0], "attempt": 2.0**60}])
    many = [{"system": "A", "task": f"t{i}", "outcome": 1} for i in range(QUICK_MAX_ROWS + 1)]
    assert stopwise.outcome_columns(many).task.tolist() == [f"t{i}" for i in range(QUICK_MAX_ROWS + 1)]


def test_outcome_columns_refuses_what_is_not_rows() -> None:
    with pytest.raises(ValidationError, match=r"outcome rows must be mappings, a pandas DataFrame or stopwise\.OutcomeColumns"):
        stopwise.outcome_columns("system,task,outcome")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"<rows>, row 2: must be a mapping of column names to values; got 'list'"):
        stopwise.outcome_columns([{"system": "A", "task": "t", "outcome": 1}, ["B", "t", 0]])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="must be a pandas DataFrame"):
        OutcomeColumns.from_frame([{"system": "A"}])  # type: ignore[arg-type]
    rows = stopwise.outcome_columns([{"system": "A", "task": "t", "outcome": 1}])
    assert stopwise.outcome_columns(rows) is rows
