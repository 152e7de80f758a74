"""Completion arguments: the examples parse, bad documents are rejected with file, field, rule and value."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise.errors import CompletionArgumentError, FileFormatError, InputError
from stopwise.finality import (
    EXAMPLE_ARGUMENTS,
    CompletionArgument,
    example_argument,
    example_text,
    load_argument,
    parse_argument,
)

FIXTURES = Path(__file__).parent / "fixtures"


MINIMAL = """
name = "m"
[outcome]
scored = "s"
period = "terminal"
[protocol]
observation_unit = "one run"
stop_rule = "the agent stops"
tools = "synchronous"
environment = "closed"
state = "fresh"
[scoring]
basis = "endpoint"
method = "compare with the goal"
"""


@pytest.mark.parametrize("name", EXAMPLE_ARGUMENTS)
def test_every_example_parses(name: str) -> None:
    argument = example_argument(name)
    assert isinstance(argument, CompletionArgument)
    assert argument.name == name and argument.version == 1


def test_minimal_document_takes_defaults() -> None:
    argument = parse_argument(MINIMAL)
    assert argument.outcome.pass_at == 1.0 and argument.routes == [] and argument.protocol.shared_credentials is None


def test_toml_and_yaml_give_the_same_argument() -> None:
    yaml_arg = load_argument(FIXTURES / "async-namespaced.yaml")
    toml_arg = parse_argument(
        example_text("namespaced-runs").replace('name = "namespaced-runs"', 'name = "async-namespaced"')
    )
    assert yaml_arg.routes_of("outcome")[0].handling == toml_arg.routes_of("outcome")[0].handling == "reconcile"
    fields = ("tools", "environment", "state", "shared_credentials")
    assert [getattr(yaml_arg.protocol, f) for f in fields] == [getattr(toml_arg.protocol, f) for f in fields]
    assert yaml_arg.scoring.basis == toml_arg.scoring.basis == "terminal"


def test_schema_errors_name_file_field_rule_value() -> None:
    path = FIXTURES / "bad-schema.toml"
    with pytest.raises(CompletionArgumentError) as info:
        load_argument(path)
    lines = str(info.value).splitlines()
    assert lines[0] == "4 problems in the completion argument:"
    assert lines[1:] == [
        f"  {path}, field 'outcome.period': must be one of endpoint, terminal or window; got 'eventually'",
        f"  {path}, field 'outcome.pass_at': must be <= 1; got 1.5",
        f"  {path}, field 'protocol.shared_credential': is not a known field (check its spelling and its section); got False",
        f"  {path}, field 'scoring': is required",
    ]
    assert [p.field for p in info.value.problems] == [
        "outcome.period",
        "outcome.pass_at",
        "protocol.shared_credential",
        "scoring",
    ]


def test_rule_errors_name_file_field_rule_value() -> None:
    path = FIXTURES / "bad-rules.toml"
    with pytest.raises(CompletionArgumentError) as info:
        load_argument(path)
    text = str(info.value)
    expected = [
        f"{path}, field 'routes[0].handling': 'reconcile' needs scoring.basis = 'terminal' (the score must be read "
        "after the effect settles); got 'reconcile'",
        f"{path}, field 'routes[1].name': must be unique (also routes[0]); got 'delayed write'",
        f"{path}, field 'routes[1].handling': must be one of reconcile, cancel, bound, none for an outcome route; got 'isolate'",
        f"{path}, field 'routes[2].bound': must be two numbers, low then high, with low <= high; got [0.7, 0.2]",
        f"{path}, field 'routes[3].evidence': is required with handling 'isolate' (how does the system show it worked?)",
        f"{path}, field 'protocol.shared_credentials': is required because route 'service state' is isolated",
    ]
    for line in expected:
        assert line in text, line
    assert len(info.value.problems) == 6


def test_yaml_rule_errors() -> None:
    path = FIXTURES / "bad-rules.yaml"
    with pytest.raises(CompletionArgumentError) as info:
        load_argument(path)
    text = str(info.value)
    assert f"{path}, field 'outcome.window_s': is required when outcome.period is 'window'" in text
    assert (
        f"{path}, field 'routes[0].handling': must be one of isolate, reset, group, none for a carryover route; "
        "got 'cancel'" in text
    )


@pytest.mark.parametrize(
    ("edit", "field", "rule"),
    [
        (('period = "terminal"', 'period = "endpoint"\n'), None, None),
        (('basis = "endpoint"', 'basis = "terminal"'), None, None),
        (
            ('period = "terminal"', 'period = "window"'),
            "outcome.window_s",
            "is required when outcome.period is 'window'",
        ),
        (('period = "terminal"', 'period = "terminal"\nwindow_s = 60'), "outcome.window_s", "is allowed only when"),
        (('state = "fresh"', 'state = "persistent"'), "routes", "must list at least one carryover route"),
        (
            ('tools = "synchronous"', 'tools = "sometimes"'),
            "protocol.tools",
            "must be one of synchronous or asynchronous",
        ),
        (('name = "m"', 'name = ""'), "name", "must be non-empty text"),
        (('name = "m"', "name = 3"), "name", "must be text"),
        (('name = "m"', 'name = "m"\nversion = 2'), "version", "must be one of 1"),
    ],
)
def test_single_rule(edit: tuple[str, str], field: str | None, rule: str | None) -> None:
    text = MINIMAL.replace(*edit)
    if field is None:
        parse_argument(text)
        return
    with pytest.raises(CompletionArgumentError) as info:
        parse_argument(text, source="a.toml")
    problem = info.value.problems[0]
    assert (problem.file, problem.field) == ("a.toml", field)
    assert problem.rule.startswith(rule)  # type: ignore[arg-type]


def test_endpoint_claim_needs_endpoint_basis() -> None:
    text = MINIMAL.replace('period = "terminal"', 'period = "endpoint"').replace(
        'basis = "endpoint"', 'basis = "terminal"'
    )
    with pytest.raises(CompletionArgumentError, match=r"field 'scoring.basis': must be 'endpoint' when outcome.period"):
        parse_argument(text)


def test_route_bound_rules() -> None:
    base = MINIMAL + '[[routes]]\nname = "r"\nkind = "outcome"\nevidence = "e"\n'
    parse_argument(base + 'handling = "bound"\nbound = [0.0, 0.4]\n')
    with pytest.raises(CompletionArgumentError, match=r"routes\[0\].bound': is required with handling 'bound'"):
        parse_argument(base + 'handling = "bound"\n')
    with pytest.raises(CompletionArgumentError, match=r"routes\[0\].bound': is allowed only with handling 'bound'"):
        parse_argument(base + 'handling = "cancel"\nbound = [0.0, 0.4]\n')
    with pytest.raises(CompletionArgumentError, match=r"both in \[0, 1\]; got \[0.0, 1.4\]"):
        parse_argument(base + 'handling = "bound"\nbound = [0.0, 1.4]\n')


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad-syntax.toml", r"bad-syntax.toml: must be valid TOML \("),
        ("not-a-mapping.yaml", r"not-a-mapping.yaml: must be a table \(mapping\) of sections; got 'list'"),
    ],
)
def test_unreadable_documents(name: str, message: str) -> None:
    with pytest.raises(CompletionArgumentError, match=message):
        load_argument(FIXTURES / name)


def test_bad_yaml_syntax() -> None:
    with pytest.raises(CompletionArgumentError, match=r"<argument>: must be valid YAML"):
        parse_argument("name: [unclosed", format="yaml")


def test_files_that_cannot_be_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FileFormatError, match="no such completion argument"):
        load_argument(tmp_path / "missing.toml")
    (tmp_path / "arg.txt").write_text(MINIMAL)
    with pytest.raises(FileFormatError, match=r"use a .toml, .yaml or .yml suffix"):
        load_argument(tmp_path / "arg.txt")
    assert load_argument(tmp_path / "arg.txt", format="toml").name == "m"
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(FileFormatError, match="is a directory"):
        load_argument(tmp_path / "dir.toml")


def test_unknown_example() -> None:
    with pytest.raises(InputError, match="example argument must be one of async-no-reconciliation"):
        example_argument("nope")
