"""The family race's spec and manager mechanics, without running Inspect (its four calls made directly)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import stopwise
from stopwise.errors import InputError, PolicyError
from stopwise.inspect import FamilyRace, FamilySpec, family_early_stopping
from stopwise.ledger import open_ledger

TASKS = [f"q{i:02d}" for i in range(40)]


def _score(value: str) -> dict[str, object]:
    from inspect_ai.scorer import SampleScore, Score

    return {"match": SampleScore(score=Score(value=value), sample_id="x")}


def _samples() -> list[object]:
    from inspect_ai.dataset import Sample

    return [Sample(id=t, input="?", target="1") for t in TASKS]


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"systems": ["A"]}, InputError, "at least 2 different"),
        ({"systems": "AB"}, InputError, "list of system names"),
        ({"systems": ["A", ""]}, InputError, "non-empty"),
        ({"systems": ["A", "B"], "refresh": -1}, InputError, "refresh"),
        ({"systems": ["A", "B"], "pace": 0}, InputError, "pace"),
        ({"systems": ["A", "B"], "policy": stopwise.Policy.model_validate({"family": {"kind": "baseline", "baseline": "C"}})},
         InputError, "'C' is not among"),
        ({"systems": ["A", "B"], "policy": stopwise.Policy.model_validate({"budget": {"measure": "cost_usd", "limit": 5.0}})},
         PolicyError, "cannot be used live"),
    ],
)
def test_a_bad_spec_is_refused_with_the_field_named(fields: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        FamilySpec("race", **fields)  # type: ignore[arg-type]


def test_keywords_or_a_spec_not_both() -> None:
    spec = FamilySpec("race", systems=["B", "A"])
    assert FamilySpec.of(spec) is spec and FamilySpec.of("race", systems=["A", "B"]) == spec
    with pytest.raises(InputError, match="not both"):
        FamilySpec.of(spec, pace=None)
    with pytest.raises(InputError, match="unknown argument `tested`"):
        FamilySpec.of("race", systems=["A", "B"], tested="A")


def test_a_system_stops_once_the_look_no_longer_needs_it(tmp_path: object) -> None:
    """Three systems: A always right, B and C always wrong and tied; A's pairs decide early, B and C stay needed."""
    policy = stopwise.Policy.model_validate({"decision": {"boundary": "betting-wor"}, "coverage": {"rule": "none"}})
    url = f"sqlite:///{tmp_path}/l.db"
    race = FamilyRace(url, "race", systems=["A", "B", "C"], policy=policy, universe=TASKS, pace=None)
    spec = SimpleNamespace(task="t", eval_id="e")
    samples = _samples()
    for system in "ABC":
        race.start(system, spec, samples)  # type: ignore[arg-type]
    assert race.budget_tasks == len(TASKS) and race.record is None
    stopped_at = None
    for i, task in enumerate(TASKS):
        if race.schedule("A", task, 1) is not None:
            stopped_at = i
            break
        for system in "ABC":
            race.complete(system, task, 1, _score("C" if system == "A" else "I"))  # type: ignore[arg-type]
    assert stopped_at is not None and 0 < stopped_at < len(TASKS) and race.record is not None
    assert race.record.needed == ["B", "C"] and race.record.best == "A"
    skip = race.schedule("A", TASKS[stopped_at], 1)
    assert skip is not None and skip.metadata["action"] == "decided" and "every comparison" in skip.reason
    assert race.schedule("B", TASKS[stopped_at], 1) is None
    with open_ledger(url) as ledger:
        assert ledger.decide_family("race").digest() == race.record.digest()
    metadata = race.finish("A")
    assert metadata["needed"] == ["B", "C"] and metadata["record_sha256"] == race.record.digest()
    assert metadata["stopped"] == 2 and metadata["stopped_after"] == stopped_at


def test_samples_beyond_a_task_count_budget_are_skipped(tmp_path: object) -> None:
    policy = stopwise.Policy.model_validate({"budget": {"measure": "task_count", "limit": 10}})
    managers = family_early_stopping(f"sqlite:///{tmp_path}/l.db", "race", systems=["A", "B"], policy=policy)
    race = managers["A"].race
    race.start("A", SimpleNamespace(task="t", eval_id="e"), _samples())  # type: ignore[arg-type]
    assert race.schedule("A", TASKS[9], 1) is None
    skip = race.schedule("A", TASKS[10], 1)
    assert skip is not None and skip.metadata["action"] == "budget" and "budget of 10 tasks" in skip.reason
    with pytest.raises(InputError, match="outside the planned universe"):
        race.start("B", SimpleNamespace(task="t", eval_id="e"), [*_samples(), *_samples_extra()])  # type: ignore[arg-type]


def _samples_extra() -> list[object]:
    from inspect_ai.dataset import Sample

    return [Sample(id="zz", input="?", target="1")]


def test_a_candidate_beaten_by_the_control_stops_and_the_open_ones_run_on(tmp_path: object) -> None:
    """kind = "baseline": prod solves every other task, `bad` none, `same` exactly what prod solves."""
    policy = stopwise.Policy.model_validate({
        "decision": {"boundary": "betting-wor"}, "coverage": {"rule": "none"}, "family": {"kind": "baseline", "baseline": "prod"},
    })
    race = FamilyRace(f"sqlite:///{tmp_path}/l.db", "race", systems=["prod", "bad", "same"], policy=policy, universe=TASKS, pace=None)
    samples = _samples()
    for system in ("prod", "bad", "same"):
        race.start(system, SimpleNamespace(task="t", eval_id="e"), samples)  # type: ignore[arg-type]
    running = {"prod", "bad", "same"}
    ran = dict.fromkeys(running, 0)
    for i, task in enumerate(TASKS):
        for system in sorted(running):
            if race.schedule(system, task, 1) is not None:
                running.discard(system)
                continue
            right = system != "bad" and i % 2 == 0
            race.complete(system, task, 1, _score("C" if right else "I"))  # type: ignore[arg-type]
            ran[system] += 1
    assert race.record is not None and race.record.pair("bad", "prod").action == "reject"
    assert race.record.needed == ["prod", "same"] and race.record.pair("same", "prod").action == "continue"
    assert ran["prod"] == ran["same"] == len(TASKS) and ran["bad"] < len(TASKS) // 2


def test_best_of_k_eliminates_beaten_arms_and_stops_once_the_best_is_named(tmp_path: object) -> None:
    """kind = "best": A solves every task, B every other one, C none; C is out first, then B, and A is named."""
    policy = stopwise.Policy.model_validate({
        "decision": {"boundary": "betting-wor"}, "coverage": {"rule": "none"}, "family": {"kind": "best"},
    })
    race = FamilyRace(f"sqlite:///{tmp_path}/l.db", "race", systems=["A", "B", "C"], policy=policy, universe=TASKS, pace=None)
    for system in "ABC":
        race.start(system, SimpleNamespace(task="t", eval_id="e"), _samples())  # type: ignore[arg-type]
    ran = dict.fromkeys("ABC", 0)
    for i, task in enumerate(TASKS):
        for system in "ABC":
            if race.schedule(system, task, 1) is None:
                right = system == "A" or (system == "B" and i % 2 == 0)
                race.complete(system, task, 1, _score("C" if right else "I"))  # type: ignore[arg-type]
                ran[system] += 1
    record = race.record
    assert record is not None and record.best == "A" and record.answered and record.needed == []
    assert ran["C"] <= ran["B"] <= ran["A"] < len(TASKS)


def test_a_failing_ledger_stops_every_system_and_each_log_ends_in_error(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37 for a family: a ledger call failing before the question is settled stops every system, and each
    log ends in error naming the failure (a log ending in success would read as a finished race; eval_set retries
    an error log), as the paired managers' do."""
    from stopwise.errors import StopwiseError

    policy = stopwise.Policy.model_validate({"decision": {"boundary": "betting-wor"}, "coverage": {"rule": "none"}})
    race = FamilyRace(f"sqlite:///{tmp_path}/l.db", "race", systems=["A", "B", "C"], policy=policy, universe=TASKS, pace=None)
    spec = SimpleNamespace(task="t", eval_id="e")
    for system in "ABC":
        race.start(system, spec, _samples())  # type: ignore[arg-type]
    append, calls = race.ledger.append, []

    def broken(evaluation: str, rows: object) -> object:
        calls.append(rows)
        if len(calls) > 7:
            raise OSError("disk I/O error")
        return append(evaluation, rows)

    monkeypatch.setattr(race.ledger, "append", broken)
    for task in TASKS[:3]:  # the 8th append (task q02 of B) fails: C's q02 is no longer scheduled
        for system in "ABC":
            if race.schedule(system, task, 1) is None:
                race.complete(system, task, 1, _score("C" if system == "A" else "I"))  # type: ignore[arg-type]
    assert race.error is not None and race.error.startswith("ledger append failed: OSError: disk I/O error")
    skip = race.schedule("A", TASKS[3], 1)
    assert skip is not None and skip.metadata["action"] == "error" and "disk I/O error" in skip.reason
    for system, ran, skipped in (("A", 3, 1), ("B", 3, 0), ("C", 2, 1)):
        with pytest.raises(StopwiseError) as caught:
            race.finish(system)
        message = str(caught.value)
        assert f"system {system!r} ran {ran} sample(s) and skipped {skipped}" in message, message
        assert "(family 'race', not settled): no later sample of any system was scheduled (fail closed)" in message
    with open_ledger(f"sqlite:///{tmp_path}/l.db") as ledger:
        assert ledger.progress("race") == {"A": 3, "B": 2, "C": 2}  # the 7 appends before the failure are kept
