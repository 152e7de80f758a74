"""The open-effects record: lifecycle, evidence rules, bad records, the JSON schema."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonschema
import pytest

from stopwise.errors import EffectsRecordError, FileFormatError, InputError, ValidationError
from stopwise.finality import (
    EffectRoute,
    OpenEffectsRecord,
    Probe,
    Sweep,
    finality_schema,
    load_effects_record,
    parse_effects_record,
)

FIXTURES = Path(__file__).parent / "fixtures"


T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)


def ms(n: float) -> datetime:
    return T0 + timedelta(milliseconds=n)


def probe(at: float, status: str | None, attempt: str = "assess", **kw: object) -> Probe:
    return Probe(at=ms(at), attempt=attempt, query="GET /ops/x", status=status, **kw)  # type: ignore[arg-type]


def opened() -> OpenEffectsRecord:
    return OpenEffectsRecord(evaluation="t").open(
        "op-1", kind="operation", run="A", at=T0, later_states=["applied"], routes=[EffectRoute(to="B", via="ns")]
    )


def test_open_starts_unknown_and_open() -> None:
    rec = opened()
    entry = rec.entry("op-1")
    assert entry.status == "unknown" and entry.is_open()
    assert [e.handle for e in rec.open_entries("A")] == ["op-1"]
    assert rec.runs == ["A"]
    assert not rec.has_system_evidence("A")


def test_lifecycle_assess_observe_remove() -> None:
    rec = opened().update("op-1", probe(1, "pending"))
    assert rec.entry("op-1").status == "pending" and rec.open_entries() != []
    rec = rec.update("op-1", probe(120, "terminal", "observe"))
    rec = rec.update("op-1", probe(130, "removed", "remove", blocks_routes=True))
    entry = rec.entry("op-1")
    assert entry.status == "removed" and not entry.is_open()
    assert [r.blocked for r in entry.routes] == [True]
    assert entry.status_at(ms(0)) == "unknown"
    assert entry.status_at(ms(50)) == "pending"
    assert entry.status_at(ms(125)) == "terminal"
    assert rec.has_system_evidence("A") and not rec.has_system_evidence("A", at=ms(0))


def test_records_are_immutable_versions() -> None:
    before = opened().update("op-1", probe(1, "pending"))
    after = before.update("op-1", probe(2, "cancelled", "cancel"))
    assert before.entry("op-1").status == "pending"
    assert after.entry("op-1").status == "cancelled"


def test_only_system_answers_move_the_status_or_block_routes() -> None:
    rec = opened().update("op-1", probe(1, "terminal", "observe", source="wrapper", blocks_routes=True))
    rec = rec.update("op-1", probe(2, "terminal", "observe", source="agent"))
    entry = rec.entry("op-1")
    assert entry.status == "unknown" and len(entry.evidence) == 2
    assert entry.open_routes() == entry.routes
    assert not rec.has_system_evidence("A")


def test_assess_queries_every_entry_and_sweeps() -> None:
    rec = opened().open("op-2", kind="process", run="A", at=T0).open("op-3", kind="file", run="B", at=T0)
    asked: list[str] = []

    def ask(entry):  # type: ignore[no-untyped-def]
        asked.append(entry.handle)
        return probe(5, "pending" if entry.handle == "op-1" else "terminal")

    rec = rec.assess("A", ask, sweep=lambda run: Sweep(run=run, at=ms(5), query="ps", open_handles=["op-1"]))
    assert asked == ["op-1", "op-2"]
    assert [e.handle for e in rec.open_entries()] == ["op-1", "op-3"]
    assert rec.sweeps_of("A")[0].open_handles == ["op-1"]


def test_settled_effect_does_not_reopen() -> None:
    rec = opened().update("op-1", probe(1, "terminal"))
    with pytest.raises(EffectsRecordError, match=r"field 'status': cannot move entry 'op-1' from 'terminal'"):
        rec.update("op-1", probe(2, "pending", "observe"))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.open("op-1", kind="operation", run="A", at=T0), r"field 'handle': must be unique in the record"),
        (lambda r: r.update("op-9", probe(1, "pending")), r"field 'handle': must name an entry .*; got 'op-9'"),
        (
            lambda r: r.update("op-1", Probe(at=T0 - timedelta(seconds=1), attempt="assess", query="q")),
            r"must not precede",
        ),
        (lambda r: r.open("x", kind="job", run="A", at=T0), r"field 'kind': must be one of operation, .*; got 'job'"),
        (lambda r: r.open("x", kind="file", run="", at=T0), r"field 'run': must be non-empty text"),
        (
            lambda r: r.open("x", kind="file", run="A", at=T0, routes=[EffectRoute(to="B", via="v", blocked=True)]),
            r"field .routes.: must start unblocked",
        ),
        (lambda r: r.open("x", kind="file", run="A", at=T0, routes=[EffectRoute(to="A", via="v")]), r"another run"),
        (lambda r: r.treat("op-1", "bounded"), r"field 'entries\[0\].bound': is required when treatment is 'bounded'"),
        (lambda r: r.treat("op-1", "bounded", bound=(0.9, 0.1)), r"low <= high"),
        (lambda r: r.treat("op-1", "unresolved", bound=(0.0, 0.1)), r"allowed only when treatment is 'bounded'"),
        (lambda r: r.add_sweep(Sweep(run="A", at=T0, query="ps", open_handles=["pid-7"])), r"does not list"),
    ],
)
def test_lifecycle_misuse_is_a_clear_error(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(EffectsRecordError, match=message) as info:
        call(opened())
    assert isinstance(info.value, ValidationError) and isinstance(info.value, InputError)
    assert "<record>" in str(info.value)


def test_treatment_keeps_the_status() -> None:
    rec = opened().update("op-1", probe(1, "pending")).treat("op-1", "bounded", bound=(0.0, 0.4))
    entry = rec.entry("op-1")
    assert (entry.status, entry.treatment, entry.bound) == ("pending", "bounded", (0.0, 0.4))
    grouped = opened().treat("op-1", "grouped")
    assert grouped.entry("op-1").treatment == "grouped"
    with pytest.raises(EffectsRecordError, match="needs at least one route"):
        OpenEffectsRecord().open("x", kind="file", run="A", at=T0).treat("x", "grouped")


def test_good_record_file_round_trips() -> None:
    rec = load_effects_record(FIXTURES / "record-good.json")
    entry = rec.entry("op-000001")
    assert (
        entry.status == "terminal" and entry.status_at(datetime(2026, 1, 1, 12, 0, 0, 100000, tzinfo=UTC)) == "pending"
    )
    assert parse_effects_record(rec.to_json()) == rec


def test_bad_record_file_lists_every_problem_with_file_field_rule_value() -> None:
    path = FIXTURES / "record-bad.json"
    with pytest.raises(EffectsRecordError) as info:
        load_effects_record(path)
    text = str(info.value)
    expected = [
        f"{path}, field 'entries[0].evidence[1].status': cannot follow status 'terminal' (a settled effect does not reopen); got 'pending'",
        f"{path}, field 'entries[0].status': must equal the status of the latest system probe ('pending'); got 'terminal'",
        f"{path}, field 'entries[0].bound': is required when treatment is 'bounded'",
        f"{path}, field 'entries[0].routes[0].to': must name another run than the one that created the effect; got 'A'",
        f"{path}, field 'entries[0].routes[0].blocked': can be true only after a system probe with blocks_routes; got True",
        f"{path}, field 'entries[1].handle': must be unique (also entries[0]); got 'op-1'",
        f"{path}, field 'sweeps[0].open_handles[0]': must be the handle of an entry",
    ]
    for line in expected:
        assert line in text, line
    assert text.startswith("7 problems in the open-effects record:")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"must be JSON \(line 1, column 2"),
        ("[1, 2]", r"must be a JSON object; got 'list'"),
        ('{"version": 2}', r"field 'version': must be one of 1; got 2"),
        ('{"entries": [{"handle": "h"}]}', r"field 'entries\[0\].kind': is required"),
        ('{"entris": []}', r"field 'entris': is not a known field"),
        (
            '{"entries": [{"handle": "h", "kind": "file", "run": "A", "opened_at": "2026-01-01T00:00:00"}]}',
            r"field 'entries\[0\].opened_at': must be an ISO 8601 date-time with a time zone",
        ),
    ],
)
def test_bad_record_text(text: str, message: str) -> None:
    with pytest.raises(EffectsRecordError, match=message):
        parse_effects_record(text, source="r.json")


def test_missing_record_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FileFormatError, match="no such open-effects record"):
        load_effects_record(tmp_path / "none.json")


def test_exported_schema_is_versioned_and_validates_records() -> None:
    schema = finality_schema("effects-record")
    assert schema["$id"] == "urn:stopwise:schema:effects-record:1"
    assert schema["$schema"].endswith("2020-12/schema")
    jsonschema.Draft202012Validator.check_schema(schema)
    good = json.loads((FIXTURES / "record-good.json").read_text())
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good, "version": 2}, schema)
    described = schema["$defs"]["EffectEntry"]["properties"]
    assert all(field.get("description") for field in described.values())


@pytest.mark.parametrize("name", ["completion-argument", "replay-result"])
def test_other_schemas(name: str) -> None:
    schema = finality_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == f"urn:stopwise:schema:{name}:1"


def test_unknown_schema_name() -> None:
    with pytest.raises(InputError, match="schema name must be one of effects-record"):
        finality_schema("policy")
