"""The completion checker: label status and analysis unit, from the argument alone and with evidence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stopwise.errors import ValidationError
from stopwise.finality import (
    EffectRoute,
    OpenEffectsRecord,
    Probe,
    ScoredRun,
    Sweep,
    check_argument,
    check_runs,
    example_argument,
    example_text,
    load_effects_record,
    parse_argument,
)

FIXTURES = Path(__file__).parent / "fixtures"


T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)


def ms(n: float) -> datetime:
    return T0 + timedelta(milliseconds=n)


def edited(name: str, *replacements: tuple[str, str]) -> object:
    text = example_text(name)
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    return parse_argument(text, format="yaml" if name == "bounded-window" else "toml")


# -- the examples -------------------------------------------------------------------


def test_synchronous_closed_simulator_is_final_by_construction() -> None:
    check = check_argument(example_argument("closed-simulator"))
    assert (check.label, check.unit) == ("final", "separate")
    assert check.label_reasons[0].startswith("final by construction: synchronous tools in a closed simulator")
    assert "blocked by a verified reset" in check.unit_reasons[0]


def test_asynchronous_service_without_reconciliation_is_unresolved() -> None:
    check = check_argument(example_argument("async-no-reconciliation"))
    assert check.label == "unresolved"
    assert check.label_reasons == [
        "route 'delayed write' is not handled: the effect can still change the score after the endpoint"
    ]


def test_namespaced_runs_without_shared_credentials_are_separate() -> None:
    check = check_argument(example_argument("namespaced-runs"))
    assert (check.label, check.unit) == ("final", "separate")
    assert check.unit_reasons[0].startswith("route 'service state' is blocked: runs are isolated")
    assert check.unit_reasons[0].endswith("and share no credentials")


def test_namespaces_with_shared_credentials_do_not_separate_runs() -> None:
    argument = edited("namespaced-runs", ("shared_credentials = false", "shared_credentials = true"))
    check = check_argument(argument)  # type: ignore[arg-type]
    assert check.unit == "grouped"
    assert "share credentials, which reach across namespaces" in check.unit_reasons[0]


# -- the argument's other rules ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "label", "unit"),
    [
        ("terminal-reconciliation", "final", "separate"),
        ("verified-cancellation", "final", "separate"),
        ("shared-state", "final", "grouped"),
        ("verified-reset", "final", "separate"),
        ("b-before-a", "final", "grouped"),
        ("grouped-analysis", "final", "grouped"),
        ("bounded-window", "final", "separate"),
    ],
)
def test_examples(name: str, label: str, unit: str) -> None:
    check = check_argument(example_argument(name))
    assert (check.label, check.unit) == (label, unit)


def test_a_bound_is_final_only_when_every_value_gives_the_same_label() -> None:
    fixed = check_argument(example_argument("bounded-window"))
    assert fixed.label == "final"
    assert "every value in it gives a fail (pass at >= 0.5)" in fixed.label_reasons[0]
    passing = check_argument(edited("bounded-window", ("bound: [0.0, 0.4]", "bound: [0.5, 1.0]")))  # type: ignore[arg-type]
    assert passing.label == "final" and "gives a pass" in passing.label_reasons[0]
    straddles = check_argument(edited("bounded-window", ("bound: [0.0, 0.4]", "bound: [0.3, 0.7]")))  # type: ignore[arg-type]
    assert straddles.label == "bounded"
    assert "holds both passing and failing values" in straddles.label_reasons[0]


def test_an_open_environment_without_outcome_routes_is_unresolved() -> None:
    argument = parse_argument(
        example_text("closed-simulator").replace('environment = "closed"', 'environment = "open"')
    )
    check = check_argument(argument)
    assert check.label == "unresolved"
    assert check.label_reasons[0].startswith("an open environment can leave operations running at the endpoint")
    # ... and a reset cannot protect later runs from what it cannot see settle
    assert check.unit == "grouped"
    assert "unlisted operations of asynchronous tools may still land after it" in check.unit_reasons[0]


def test_a_reset_protects_later_runs_only_after_pending_effects_have_settled() -> None:
    unsettled = edited("verified-reset", ('handling = "reconcile"', 'handling = "none"'))
    check = check_argument(unsettled)  # type: ignore[arg-type]
    assert (check.label, check.unit) == ("unresolved", "grouped")
    assert "relies on a reset, but 'delayed write' may still land after it" in check.unit_reasons[0]


def test_endpoint_claims_are_final_and_narrower() -> None:
    argument = edited("async-no-reconciliation", ('period = "terminal"', 'period = "endpoint"'))
    check = check_argument(argument)  # type: ignore[arg-type]
    assert check.label == "final"
    assert "narrower than task completion" in check.label_reasons[0]


def test_check_argument_rejects_other_types() -> None:
    with pytest.raises(TypeError, match="argument must be a CompletionArgument"):
        check_argument("closed-simulator")  # type: ignore[arg-type]


# -- per run, with runs and evidence ----------------------------------------------------------


def pair_record(delay_pending: bool) -> OpenEffectsRecord:
    """A's write (pending or applied at A's endpoint) with a route to B; B's write applied at once."""
    status = "pending" if delay_pending else "terminal"
    rec = (
        OpenEffectsRecord()
        .open("a", kind="operation", run="A", at=ms(0), routes=[EffectRoute(to="B", via="shared ns")])
        .update("a", Probe(at=ms(1), attempt="assess", query="GET /ns/s?run=A", status=status))
        .add_sweep(Sweep(run="A", at=ms(1), query="GET /ns/s?run=A", open_handles=["a"] if delay_pending else []))
        .open("b", kind="operation", run="B", at=ms(3))
        .update("b", Probe(at=ms(4), attempt="assess", query="GET /ns/s", status="terminal"))
        .add_sweep(Sweep(run="B", at=ms(4), query="GET /ns/s", open_handles=["a"] if delay_pending else []))
    )
    if delay_pending:
        rec = rec.update("a", Probe(at=ms(120), attempt="observe", query="GET /ns/s?wait_ms=9", status="terminal"))
        rec = rec.add_sweep(Sweep(run="B", at=ms(120), query="GET /ns/s?wait_ms=9"))
    return rec


def runs(a_at: float, b_at: float, env: str = "pair") -> list[ScoredRun]:
    return [
        ScoredRun(run="A", system="A", task="t", outcome=0, scored_at=ms(a_at), environment=env),
        ScoredRun(run="B", system="B", task="t", outcome=1, scored_at=ms(b_at), environment=env),
    ]


def test_endpoint_evidence_settles_or_leaves_labels_open() -> None:
    argument = example_argument("async-no-reconciliation")
    pending = check_runs(argument, runs(2, 5), record=pair_record(delay_pending=True))
    assert [c.label for c in pending] == ["unresolved", "unresolved"]
    assert any(
        r.startswith("entry 'a' (operation) was pending before the score was read") for r in pending[0].label_reasons
    )
    assert any("has an open route to this run via shared ns" in r for r in pending[1].label_reasons)
    applied = check_runs(argument, runs(2, 5), record=pair_record(delay_pending=False))
    assert [c.label for c in applied] == ["final", "final"]
    assert any("found nothing open that could change the score" in r for r in applied[0].label_reasons)


def test_evidence_is_read_as_it_stood_when_the_score_was_read() -> None:
    argument = example_argument("terminal-reconciliation")
    record = pair_record(delay_pending=True)
    early = check_runs(argument, runs(2, 5), record=record)
    late = check_runs(argument, runs(130, 130), record=record)
    assert [c.label for c in early] == ["unresolved", "unresolved"]
    assert [c.label for c in late] == ["final", "final"]
    whenever = check_runs(argument, [r.model_copy(update={"scored_at": None}) for r in runs(0, 0)], record=record)
    assert [c.label for c in whenever] == ["final", "final"]


def test_connected_runs_form_one_unit() -> None:
    checks = check_runs(example_argument("namespaced-runs"), runs(130, 130), record=pair_record(delay_pending=True))
    assert [(c.unit, c.unit_id, c.unit_size) for c in checks] == [("grouped", "unit:A", 2)] * 2
    assert any("entry 'a' of run A has an open route to run B via shared ns" in r for r in checks[1].unit_reasons)
    blocked = pair_record(delay_pending=True).update(
        "a", Probe(at=ms(200), attempt="isolate", query="GET /ns/b", blocks_routes=True)
    )
    separate = check_runs(example_argument("namespaced-runs"), runs(300, 300), record=blocked)
    assert [(c.unit, c.unit_id, c.unit_size) for c in separate] == [("separate", "", 1)] * 2


def test_shared_environments_are_grouped_without_a_record() -> None:
    argument = example_argument("shared-state")
    rows = [
        ScoredRun(run=f"{env}-{role}", system=role, task=env or "solo", outcome=1, environment=env)
        for env in ("e1", "e2", "")
        for role in ("A", "B")
    ]
    checks = check_runs(argument, rows)
    assert [c.unit_id for c in checks] == ["unit:e1-A", "unit:e1-A", "unit:e2-A", "unit:e2-A", "", ""]
    assert checks[-1].unit_reasons[-2] == "no other run is known to share its environment"


def test_a_record_without_probes_cannot_support_a_final_label() -> None:
    argument = example_argument("async-no-reconciliation")
    empty = check_runs(argument, runs(2, 5), record=OpenEffectsRecord())
    assert [c.label for c in empty] == ["unresolved", "unresolved"]
    assert "an empty record proves nothing" in empty[0].label_reasons[-1]
    unprobed = OpenEffectsRecord().open("a", kind="operation", run="A", at=ms(0))
    by_construction = check_runs(example_argument("closed-simulator"), runs(2, 5), record=unprobed)
    assert by_construction[0].label == "unresolved"
    assert by_construction[0].label_reasons[0].startswith("entry 'a' (operation) was never answered by a system probe")
    assert by_construction[1].label == "final"


def test_effects_opened_after_scoring_do_not_hold_the_label_open() -> None:
    record = OpenEffectsRecord().open("late", kind="operation", run="A", at=ms(50))
    check = check_runs(example_argument("closed-simulator"), runs(10, 10), record=record)[0]
    assert check.label == "final"


def test_bounded_entries() -> None:
    record = (
        OpenEffectsRecord()
        .open("refund", kind="operation", run="A", at=ms(0))
        .update("refund", Probe(at=ms(1), attempt="assess", query="GET /refunds/7", status="pending"))
        .add_sweep(Sweep(run="A", at=ms(1), query="GET /refunds?run=A", open_handles=["refund"]))
    )
    argument = example_argument("async-no-reconciliation")
    run = [ScoredRun(run="A", system="A", task="t", outcome=0.2, scored_at=ms(2))]
    assert check_runs(argument, run, record=record.treat("refund", "bounded", bound=(0.0, 0.4)))[0].label == "final"
    assert check_runs(argument, run, record=record.treat("refund", "bounded", bound=(0.1, 1.0)))[0].label == "bounded"
    outside = check_runs(argument, run, record=record.treat("refund", "bounded", bound=(0.3, 0.4)))[0]
    assert outside.label == "unresolved"
    assert any("does not contain the recorded score 0.2" in r for r in outside.label_reasons)
    modeled = check_runs(argument, run, record=record.treat("refund", "modeled"))[0]
    assert modeled.label == "unresolved"
    assert any("(treated as modeled)" in r for r in modeled.label_reasons)


def test_fixture_record_and_runs() -> None:
    from stopwise.finality import read_scored_runs

    checks = check_runs(
        example_argument("async-no-reconciliation"),
        read_scored_runs(FIXTURES / "runs.csv"),
        record=load_effects_record(FIXTURES / "record-good.json"),
    )
    assert [(c.run, c.label, c.unit) for c in checks] == [
        ("A", "unresolved", "grouped"),
        ("B", "unresolved", "grouped"),
    ]
    # A was scored while its write was pending; B has no probe of its own, so nothing supports a final label
    assert any(r.startswith("entry 'op-000001' (operation) was pending") for r in checks[0].label_reasons)
    assert "an empty record proves nothing" in checks[1].label_reasons[-1]
    assert "entry 'op-000001' of run A has an open route to run B" in checks[1].unit_reasons[1]


def test_bad_runs_are_rejected_with_row_field_rule_value() -> None:
    argument = example_argument("closed-simulator")
    with pytest.raises(ValidationError) as info:
        check_runs(argument, [{"run": "A", "system": "A", "task": "t", "outcome": 2}, {"run": "A"}])
    text = str(info.value)
    assert "<runs>, row 1, field 'outcome': must be <= 1; got 2" in text
    assert "<runs>, row 2, field 'system': is required" in text
    with pytest.raises(ValidationError, match=r"row 2, field 'run': must be unique \(also row 1\); got 'A'"):
        check_runs(argument, [dict(run="A", system="A", task="t", outcome=1)] * 2)
    with pytest.raises(ValidationError, match="must hold at least one run"):
        check_runs(argument, [])
    with pytest.raises(TypeError, match="record must be an OpenEffectsRecord"):
        check_runs(argument, [dict(run="A", system="A", task="t", outcome=1)], record={})  # type: ignore[arg-type]
