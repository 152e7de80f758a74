"""The controlled replay: the paper's counts, read from a real local service, and what they feed."""

from __future__ import annotations

import json
import signal
import socket

import jsonschema
import pandas as pd
import pytest

import stopwise.finality._replay_runner as runner_module
from stopwise.compare import decide
from stopwise.errors import InputError, ServiceError
from stopwise.finality import (
    DelayedWriteReplay,
    LocalService,
    ReplaySchedule,
    finality_schema,
    load_effects_record,
    run_controlled_replay,
)
from stopwise.records import read_outcomes

# The paper's counts (Casheekar, section 4 and appendix B), by (condition, measure).
PAPER = {
    ("snapshot scoring", "run A successes"): (50, 200),
    ("terminal reconciliation", "run A successes"): (200, 200),
    ("snapshot vs terminal", "labels that differ, nonzero delay"): (150, 200),
    ("snapshot vs terminal", "labels that differ, zero delay"): (0, 200),
    ("verified cancellation", "pending writes cancelled, scored failure"): (150, 200),
    ("verified cancellation", "run A successes"): (50, 200),
    ("shared state", "run B exposed to A's delayed write"): (150, 200),
    ("per-run namespaces", "run B exposed to A's delayed write"): (0, 200),
    ("verified reset", "run B exposed to A's delayed write"): (0, 200),
    ("B before A", "run B exposed to A's delayed write"): (0, 200),
    ("grouped analysis", "run B exposed to A's delayed write"): (150, 200),
    ("grouped analysis", "analysis units from the run rows"): (200, 400),
}


def n(replay: DelayedWriteReplay, at_paper_scale: int) -> int:
    """A count of the paper's 200-trial schedule at this replay's scale (every count is proportional to the
    repetitions: the schedule repeats the same 20 (identifier, delay) trials)."""
    scaled, rest = divmod(at_paper_scale * replay.schedule.n_trials, 200)
    assert rest == 0
    return scaled


def test_the_replay_reproduces_every_count_of_the_paper(replay: DelayedWriteReplay) -> None:
    measured = {(c.condition, c.measure): (c.count, c.of) for c in replay.counts}
    assert measured == {key: (n(replay, count), n(replay, of)) for key, (count, of) in PAPER.items()}
    assert replay.matches
    if replay.schedule.n_trials == 200:  # the paper's schedule: each line also shows the paper's figure
        assert all(c.paper == f"{count}/{of}" for c, (count, of) in zip(replay.counts, PAPER.values(), strict=True))


@pytest.mark.integration
def test_the_counts_hold_with_every_core_busy(loaded_replay) -> None:  # type: ignore[no-untyped-def]
    # The same replay next to one CPU-burning process per core: every burner was spinning before it started
    # (each created its file) and still running when it returned, and the counts are still the paper's.
    replay, load = loaded_replay
    assert load.spinning_before and load.spinning_after
    measured = {(c.condition, c.measure): (c.count, c.of) for c in replay.counts}
    assert measured == {key: (n(replay, count), n(replay, of)) for key, (count, of) in PAPER.items()}
    assert replay.rerun_trials == 0 and replay.late_trials == 0


def test_plain_text_table(replay: DelayedWriteReplay) -> None:
    lines = replay.to_text().splitlines()
    assert lines[0].split() == ["condition", "measure", "measured", "expected", "paper"]
    figure = f"{n(replay, 50)}/{n(replay, 200)}"
    paper = "50/200" if replay.schedule.n_trials == 200 else "-"
    assert lines[2].startswith("snapshot scoring") and lines[2].split()[-3:] == [figure, figure, paper]
    assert len(lines) == 2 + len(PAPER)


def test_every_trial_honoured_the_schedule(replay: DelayedWriteReplay) -> None:
    assert replay.late_trials == 0
    for result in replay.conditions:
        assert len(result.trials) == n(replay, 200)
        assert all(o.lag_ms is None or o.delay_ms == 0 or o.lag_ms < o.delay_ms for o in result.trials)


def test_the_whole_replay_finishes(replay: DelayedWriteReplay) -> None:
    # about 20 s idle at the paper's scale (benchmarks/finality_replay_load.py); the bound is the replay's own timeout
    assert replay.elapsed_s < 1200
    assert replay.requests > 7 * n(replay, 200) * 5  # every count came from real requests


def test_disagreements_are_exactly_the_delayed_writes(replay: DelayedWriteReplay) -> None:
    snapshot, terminal = replay.condition("snapshot").trials, replay.condition("terminal").trials
    differ = {s.trial for s, t in zip(snapshot, terminal, strict=True) if s.scores["A"] != t.scores["A"]}
    assert differ == {s.trial for s in snapshot if s.delay_ms > 0}
    assert {o.a_endpoint for o in snapshot if o.delay_ms == 0} == {"applied"}
    assert {o.a_endpoint for o in snapshot if o.delay_ms > 0} == {"pending"}
    cancelled = replay.condition("cancel").trials
    assert {(o.delay_ms > 0, o.cancelled, o.scores["A"]) for o in cancelled} == {(False, False, 1.0), (True, True, 0.0)}


def test_exposure_follows_the_boundary_policy(replay: DelayedWriteReplay) -> None:
    for name in ("shared", "grouped"):
        trials = replay.condition(name).trials
        assert {o.trial for o in trials if o.exposed} == {o.trial for o in trials if o.delay_ms > 0}
        assert all(o.scores["B"] == (0.0 if o.exposed else 1.0) for o in trials)  # A's write changed B's score
    for name in ("namespaced", "reset", "b-before-a"):
        assert not any(o.exposed for o in replay.condition(name).trials)
        assert all(o.scores == {"A": 1.0, "B": 1.0} for o in replay.condition(name).trials)


def test_the_checker_reads_the_replayed_evidence(replay: DelayedWriteReplay) -> None:
    labels = {r.summary.condition: r.summary.labels for r in replay.conditions}
    assert labels["snapshot"] == {"final": n(replay, 250), "unresolved": n(replay, 150), "bounded": 0}
    for name in ("terminal", "cancel", "shared", "namespaced", "reset", "b-before-a", "grouped"):
        assert labels[name] == {"final": n(replay, 400), "unresolved": 0, "bounded": 0}, name
    units = {r.summary.condition: (r.summary.units, r.summary.rows) for r in replay.conditions}
    per_run, per_pair = (n(replay, 400), n(replay, 400)), (n(replay, 200), n(replay, 400))
    assert units == {
        "snapshot": per_run,
        "terminal": per_run,
        "cancel": per_run,
        "shared": per_pair,
        "namespaced": per_run,
        "reset": per_run,
        "b-before-a": per_pair,
        "grouped": per_pair,
    }
    snapshot = replay.condition("snapshot")
    unresolved = {(c.system, c.task) for c in snapshot.checks if c.label == "unresolved"}
    assert unresolved == {("A", o.trial) for o in snapshot.trials if o.delay_ms > 0}


def test_records_are_built_from_system_answers(replay: DelayedWriteReplay) -> None:
    for result in replay.conditions:
        record = result.record
        assert len(record.entries) == n(replay, 400)
        for entry in record.entries:
            sources = [p.source for p in entry.evidence]
            assert sources[0] == "wrapper" and "system" in sources  # the tool's ack, then the system's answers
            assert not entry.is_open()
        assert {s.run for s in record.sweeps} == {r.run for r in result.runs}
    shared = replay.condition("shared").record
    assert all(not r.blocked for e in shared.entries for r in e.routes)
    namespaced = replay.condition("namespaced").record
    assert all(r.blocked for e in namespaced.entries for r in e.routes)
    reset = replay.condition("reset").record
    assert {e.status for e in reset.entries if e.run.endswith(".A")} == {"removed"}


def test_pending_rows_are_excluded_and_counted_by_decide(replay: DelayedWriteReplay) -> None:
    rows = replay.condition("snapshot").outcome_rows()
    assert len(rows) == n(replay, 400) and (rows["status"] == "pending").sum() == n(replay, 150)
    assert rows.loc[rows["status"] == "pending", "outcome"].isna().all()
    record = decide(rows, "A", "B")
    pending = [e for e in record.excluded if "pending" in e.reason]
    assert [(e.rows, e.tasks) for e in pending] == [(n(replay, 150), n(replay, 150))]
    assert record.n_shared == n(replay, 200) and record.n_observed == n(replay, 50)


def test_grouped_runs_share_one_unit_per_pair(replay: DelayedWriteReplay) -> None:
    rows = replay.condition("grouped").outcome_rows()
    assert len(rows) == n(replay, 400) and rows["unit"].nunique() == n(replay, 200)
    assert (rows.groupby("unit")["task"].nunique() == 1).all()
    assert (rows.groupby("unit")["system"].apply(sorted).map(tuple) == ("A", "B")).all()
    record = decide(rows, "A", "B")
    assert record.n_observed == n(replay, 200) and record.excluded == []
    separate = replay.condition("namespaced").outcome_rows()
    assert (separate["unit"] == "").all()


def test_write_and_read_back(replay: DelayedWriteReplay, tmp_path) -> None:  # type: ignore[no-untyped-def]
    files = replay.write(tmp_path / "out")
    assert len(files) == 1 + 3 * len(replay.conditions)
    summary = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert summary["matches"] is True and len(summary["counts"]) == 12
    rows = read_outcomes(tmp_path / "out" / "snapshot.outcomes.csv").to_frame()
    pd.testing.assert_frame_equal(rows, replay.condition("snapshot").outcome_rows(), check_dtype=False)
    assert load_effects_record(tmp_path / "out" / "reset.effects.json") == replay.condition("reset").record
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        replay.write(tmp_path / "file")


def test_a_small_schedule_and_its_schema() -> None:
    schedule = ReplaySchedule(identifiers=(3,), delays_ms=(0, 30), repetitions=2)
    result = run_controlled_replay(schedule, conditions=["reset", "cancel", "reset"])
    assert [c.summary.condition for c in result.conditions] == ["cancel", "reset"]
    measured = {(c.measure, c.count, c.of, c.expected, c.paper) for c in result.counts}
    assert ("pending writes cancelled, scored failure", 2, 4, 2, None) in measured
    assert ("run B exposed to A's delayed write", 0, 4, 0, None) in measured
    jsonschema.validate(result.model_dump(mode="json"), finality_schema("replay-result"))


def test_a_single_condition_has_its_own_lines() -> None:
    result = run_controlled_replay(
        ReplaySchedule(identifiers=(1,), delays_ms=(0, 20), repetitions=1), conditions="snapshot"
    )
    assert [(c.condition, c.count, c.of, c.expected) for c in result.counts] == [("snapshot scoring", 1, 2, 1)]
    assert result.condition("snapshot").summary.labels == {"final": 3, "unresolved": 1, "bounded": 0}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"conditions": ["snapshot", "nope"]}, "conditions must be among snapshot, terminal"),
        ({"conditions": []}, "conditions must be among"),
        ({"max_active": 0}, "max_active must be an integer from 1 to 1000"),
        ({"attempts": 0}, "attempts must be an integer from 1 to 10"),
        ({"timeout_s": 0.5}, "timeout_s must be a number of seconds"),
        ({"schedule": "paper"}, "schedule must be a ReplaySchedule"),
    ],
)
def test_invalid_replay_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        run_controlled_replay(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"delays_ms": (0, 5)}, "nonzero delays must be at least 15 ms"),
        ({"delays_ms": (0, 0)}, "distinct integers"),
        ({"identifiers": ()}, "distinct integers >= 1"),
        ({"repetitions": 0}, "greater than or equal to 1"),
    ],
)
def test_invalid_schedules(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ReplaySchedule(**fields)  # type: ignore[arg-type]


def test_the_service_stops_and_frees_its_port_when_the_replay_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    services: list[LocalService] = []
    ports: list[int] = []
    start = LocalService.start

    async def recording_start(self: LocalService) -> None:
        await start(self)
        services.append(self)
        assert self.port is not None
        ports.append(self.port)

    send = runner_module.Runner._send
    calls = {"n": 0}

    async def failing_send(self, method: str, url: str, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 40:
            raise ServiceError("injected failure")
        return await send(self, method, url, **kwargs)

    monkeypatch.setattr(LocalService, "start", recording_start)
    monkeypatch.setattr(runner_module.Runner, "_send", failing_send)
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(ServiceError, match="injected failure"):
        run_controlled_replay(ReplaySchedule(repetitions=1))
    assert len(ports) == 1 and services[0].port is None
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", ports[0])) != 0
    assert signal.getsignal(signal.SIGINT) is handler
