"""`system` templates: plain fields, one kwargs attribute or one mapping key; nothing else is template syntax."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise.errors import InputError
from stopwise.ingest import read_inspect
from stopwise.ingest._common import MAX_SYSTEM_CHARS, Kwargs, system_name

FIXTURE = Path(__file__).parent / "fixtures" / "inspect" / "gsm_small.json"
FIELDS = {
    "model": "openai/gpt-4o",
    "task": "gsm",
    "run_id": None,
    "task_args": {"level": 3, "split": None},
    "kwargs": Kwargs("log.json", {"temperature": 0.5, "tools": ["bash"]}),
}


def name(template: str) -> str:
    return system_name(template, FIELDS, "default", "log.json")


def test_the_allowed_forms_render() -> None:
    assert name("{task}/{model}") == "gsm/openai/gpt-4o"
    assert name("{model}@{run_id}") == "openai/gpt-4o@"
    assert name("{model}-L{task_args[level]}{task_args[split]}") == "openai/gpt-4o-L3"
    assert name("t={kwargs.temperature} {kwargs.tools}") == 't=0.5 ["bash"]'
    assert name("{{literal}} {model}") == "{literal} openai/gpt-4o"
    assert name("plain name") == "plain name"
    assert system_name(None, FIELDS, "default", "log.json") == "default"


@pytest.mark.parametrize(
    ("template", "fragment"),
    [
        ("{model:>3000000000}", "field '{model:>3000000000}': format specs (':...') and conversions ('!r') are not allowed"),
        ("{model!r}", "field '{model!r}': format specs"),
        ("{model!s:^9}", "field '{model!s:^9}': format specs"),
        ("{model.__class__.__mro__}", "field '{model.__class__.__mro__}': only {name}, {kwargs.NAME} or {name[KEY]} may be used"),
        ("{kwargs.__dict__}", "field '{kwargs.__dict__}': only"),
        ("{kwargs._values}", "field '{kwargs._values}': only"),
        ("{task_args[level][0]}", "field '{task_args[level][0]}': only"),
        ("{}", "field '{}': only"),
        ("{0}", "field '{0}': only"),
        ("{model.upper}", "{model.upper}: attribute access is allowed only as {kwargs.NAME}"),
        ("{model[0]}", "{model[0]}: {model} is not a mapping"),
        ("{task_args[seed]}", "{task_args[seed]}: task_args has no key 'seed' (keys: level, split)"),
        ("{agent}", "unknown field {agent}; this format offers {kwargs.NAME}, {model}, {run_id}, {task}, {task_args[KEY]}"),
        ("{model", "`system` is not a valid template (expected '}' before end of string)"),
    ],
)
def test_format_specs_conversions_and_object_access_are_refused(template: str, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        name(template)
    assert fragment in str(info.value)


def test_a_syntax_refusal_names_the_fields_the_format_offers() -> None:
    with pytest.raises(InputError, match=r"\(this format offers \{kwargs\.NAME\}, \{model\}, \{run_id\}, \{task\}, \{task_args\[KEY\]\}\)"):
        name("{model:>9}")


def test_the_rendered_name_is_bounded() -> None:
    assert len(name("x" * (MAX_SYSTEM_CHARS - 20) + "{model}")) == MAX_SYSTEM_CHARS - 7
    with pytest.raises(InputError, match=r"renders a name longer than 1,000 characters"):
        name("{model}" * 100)
    with pytest.raises(InputError, match=r"longer than 1,000 characters"):
        system_name("{model}", {"model": "m" * 10**6}, "d", "log.json")


def test_a_refused_template_stops_the_ingest() -> None:
    with pytest.raises(InputError, match=r"format specs"):
        read_inspect(FIXTURE, system="{model:>3000000000}")
    assert set(read_inspect(FIXTURE, system="{task}").rows["system"]) == {"gsm_small"}
