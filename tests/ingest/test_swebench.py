"""SWE-bench run reports, leaderboard results.json and per-instance reports."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from stopwise.errors import ValidationError
from stopwise.ingest import read_swebench
from stopwise.ingest._common import repository_of


def flags_of(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The flags of an ingested row (the ``flags`` column: canonical tokens joined by ';')."""
    return tuple(row["flags"].split(";")) if row["flags"] else ()


FIXTURES = Path(__file__).parent / "fixtures" / "swebench"
RUN_REPORT = FIXTURES / "run_report" / "openai__gpt-4o.eval-2024.json"
LEADERBOARD = FIXTURES / "leaderboard" / "20240620_sweagent_claude3.5sonnet" / "results" / "results.json"
INSTANCES = [line for line in (FIXTURES / "instances.txt").read_text().splitlines() if line and not line.startswith("#")]


def _by_task(rows):
    return {task: row for task, row in zip(rows["task"], rows.to_dict("records"), strict=True)}


@pytest.mark.parametrize(
    ("instance", "repository"),
    [
        ("django__django-11099", "django/django"),
        ("scikit-learn__scikit-learn-10297", "scikit-learn/scikit-learn"),
        ("sphinx-doc__sphinx-8721", "sphinx-doc/sphinx"),
        ("pytest-dev__pytest-5103", "pytest-dev/pytest"),
        ("Automattic__wp-calypso-21409", "Automattic/wp-calypso"),
        ("hello-world", ""),
        ("django__django", ""),
    ],
)
def test_repository_from_instance_id(instance: str, repository: str) -> None:
    assert repository_of(instance) == repository


def test_run_report_keeps_errors_and_empty_patches_apart() -> None:
    result = read_swebench(RUN_REPORT)
    rows = _by_task(result.rows)
    assert set(result.rows["system"]) == {"openai__gpt-4o"}
    assert sorted(rows) == [
        "astropy__astropy-12907",
        "django__django-11099",
        "django__django-11133",
        "sphinx-doc__sphinx-8721",
        "sympy__sympy-20590",
        "sympy__sympy-24066",
    ]
    assert rows["django__django-11099"]["outcome"] == 1.0 and rows["sympy__sympy-20590"]["outcome"] == 1.0
    assert rows["astropy__astropy-12907"]["outcome"] == 0.0 and rows["django__django-11133"]["outcome"] == 0.0
    # the harness error: pending, blank outcome, flagged
    error = rows["sympy__sympy-24066"]
    assert error["status"] == "pending" and math.isnan(error["outcome"])
    assert flags_of(error) == ("error",)
    assert error["flags"] == "error"  # the structured column a policy reads
    # source names the file only: flags are no longer copied into it (stopwise 0.1)
    assert error["source"] == f"swebench:{RUN_REPORT}"
    assert set(result.rows["source"]) == {f"swebench:{RUN_REPORT}"}
    # the rows are held as validated columns; `rows` is their frame
    assert result.columns["task"].tolist() == result.rows["task"].tolist() and result.n_rows == 6
    assert result.flag_counts() == {"empty_patch": 1, "error": 1}
    # the empty patch: a failure by default, flagged so a policy can tell it apart
    empty = rows["sphinx-doc__sphinx-8721"]
    assert (empty["status"], empty["outcome"]) == ("final", 0.0)
    assert flags_of(empty) == ("empty_patch",)
    assert empty["flags"] == "empty_patch"
    assert rows["django__django-11099"]["group"] == "django/django"
    assert rows["sphinx-doc__sphinx-8721"]["group"] == "sphinx-doc/sphinx"
    assert set(result.rows["attempt"]) == {0}
    # nothing silently dropped: the incomplete and the unplaced submitted instance are listed
    assert [(s.record, s.reason) for s in result.skipped] == [
        ("pytest-dev__pytest-5103", "not submitted (incomplete_ids)"),
        ("scikit-learn__scikit-learn-10297", "submitted but in no result list"),
    ]
    assert result.flag_counts() == {"empty_patch": 1, "error": 1}
    assert result.status_counts() == {"final": 5, "pending": 1}


@pytest.mark.parametrize(
    ("errors", "empty_patch", "n_rows", "error_row", "empty_row", "skipped"),
    [
        ("fail", "fail", 6, ("final", 0.0), ("final", 0.0), 2),
        ("drop", "pending", 5, None, ("pending", None), 3),
        ("pending", "drop", 5, ("pending", None), None, 3),
    ],
)
def test_error_and_empty_patch_policies(errors, empty_patch, n_rows, error_row, empty_row, skipped) -> None:
    result = read_swebench(RUN_REPORT, errors=errors, empty_patch=empty_patch)
    rows = _by_task(result.rows)
    assert len(result.rows) == n_rows
    assert len(result.skipped) == skipped
    for task, expected, flag in (("sympy__sympy-24066", error_row, "error"), ("sphinx-doc__sphinx-8721", empty_row, "empty_patch")):
        if expected is None:
            assert task not in rows
            assert any(s.record == task and "drop" in s.reason for s in result.skipped)
        else:
            status, outcome = expected
            assert rows[task]["status"] == status
            assert (math.isnan(rows[task]["outcome"]) if outcome is None else rows[task]["outcome"] == outcome)
            assert flag in flags_of(rows[task])


def test_leaderboard_results_need_the_instance_list() -> None:
    with pytest.raises(ValidationError) as info:
        read_swebench(LEADERBOARD)
    problem = info.value.problems[0]
    assert problem.file == str(LEADERBOARD) and problem.field == "resolved"
    assert "pass the dataset's instance ids as `instances`" in problem.rule
    assert problem.value == "3 resolved ids"


def test_leaderboard_results_with_instances() -> None:
    result = read_swebench(LEADERBOARD, instances=INSTANCES)
    rows = _by_task(result.rows)
    assert len(rows) == len(INSTANCES) == 8
    assert set(result.rows["system"]) == {"20240620_sweagent_claude3.5sonnet"}
    assert [t for t, r in rows.items() if r["outcome"] == 1.0] == [
        "astropy__astropy-12907",
        "django__django-11099",
        "scikit-learn__scikit-learn-10297",
    ]
    assert flags_of(rows["django__django-11133"]) == ("empty_patch",)  # no_generation
    assert rows["sympy__sympy-24066"]["status"] == "pending"  # no_logs: the harness failed
    assert rows["pytest-dev__pytest-5103"]["outcome"] == 0.0  # unresolved = absent from every list
    assert flags_of(rows["pytest-dev__pytest-5103"]) == ()


def test_leaderboard_ids_outside_the_instances_are_an_error() -> None:
    with pytest.raises(ValidationError) as info:
        read_swebench(LEADERBOARD, instances=[i for i in INSTANCES if i != "django__django-11099"])
    assert [(p.field, p.value) for p in info.value.problems] == [("resolved", "django__django-11099")]


def test_old_leaderboard_format_has_its_own_universe() -> None:
    path = FIXTURES / "leaderboard_old" / "20231010_rag_gpt35" / "results" / "results.json"
    result = read_swebench(path)
    rows = _by_task(result.rows)
    assert sorted(rows) == [
        "astropy__astropy-12907",
        "django__django-11099",
        "django__django-11133",
        "sphinx-doc__sphinx-8721",
        "sympy__sympy-20590",
    ]
    assert rows["django__django-11099"]["outcome"] == 1.0
    assert flags_of(rows["django__django-11133"]) == ("not_applied",)
    assert flags_of(rows["astropy__astropy-12907"]) == ("test_timeout",)
    assert rows["sympy__sympy-20590"]["status"] == "pending"  # install_fail
    assert flags_of(rows["sphinx-doc__sphinx-8721"]) == ("empty_patch",)


def test_harness_per_instance_reports_name_the_model_directory() -> None:
    result = read_swebench(FIXTURES / "logs")
    rows = _by_task(result.rows)
    assert set(result.rows["system"]) == {"my-agent"}
    assert rows["django__django-11099"]["outcome"] == 1.0
    assert (rows["astropy__astropy-12907"]["outcome"], flags_of(rows["astropy__astropy-12907"])) == (
        0.0,
        ("not_applied",),
    )
    assert flags_of(rows["sympy__sympy-20590"]) == ("empty_patch",)
    assert len(result.files) == 3


def test_per_instance_details_carry_cost() -> None:
    result = read_swebench(FIXTURES / "bash-only")
    rows = _by_task(result.rows)
    assert set(result.rows["system"]) == {"20250726_mini-v1.0.0_gpt-5"}
    assert {t: (r["outcome"], r["cost_usd"]) for t, r in rows.items()} == {
        "astropy__astropy-12907": (1.0, 0.72),
        "django__django-11099": (1.0, 0.15),
        "django__django-11133": (0.0, 1.5),
    }


def test_system_override_and_template(tmp_path: Path) -> None:
    assert set(read_swebench(RUN_REPORT, system="baseline").rows["system"]) == {"baseline"}
    assert set(read_swebench(RUN_REPORT, system="{system}-v2").rows["system"]) == {"openai__gpt-4o-v2"}


def test_an_instance_in_two_lists_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "m.r.json"
    path.write_text(json.dumps({"resolved_ids": ["a__b-1"], "unresolved_ids": ["a__b-1"], "error_ids": []}))
    with pytest.raises(ValidationError) as info:
        read_swebench(path)
    problem = info.value.problems[0]
    assert (problem.file, problem.field, problem.value) == (str(path), "unresolved_ids", "a__b-1")
    assert "only one of the lists" in problem.rule
