"""Both systems are told (issue 20, item 5): a failed task stops its partner, in this process or through the ledger,
and a faster system is paced by its partner's progress in the ledger.

Two ``PairedComparison`` objects on one ledger in one ``eval()`` call stand for two worker processes (as
``inspect eval tasks.py@a tasks.py@b`` builds them: one per task, sharing nothing but the ledger).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from stopwise.inspect import paired_early_stopping
from stopwise.ledger import open_ledger

pytestmark = pytest.mark.integration  # full Inspect evaluations of two tasks (up to 43 samples each) per test

N = 40
HELD = 4
"""The tested system's samples generated before the baseline's (failing) start; it holds from then on until the
baseline failed, so with at most two samples in flight it completes HELD or HELD + 1 (whether Inspect had started
the next sample when the start failed) before it is told."""


def _task(example: ModuleType, manager: Any, role: str, dataset: Any, solver: Any = None) -> Any:
    from inspect_ai import Task
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    return Task(dataset=dataset, solver=solver or generate(), scorer=match(),
                model=example.mock_system(role, 0.9 if role == "tested" else 0.55), early_stopping=manager, name=role)


class Gate:
    """A one-shot signal between the two tasks of one ``eval()`` call (one event loop): a hand-shake, not a delay.

    The anyio event is made on first use, inside the loop."""

    def __init__(self) -> None:
        self._event: Any = None

    def _get(self) -> Any:
        import anyio

        if self._event is None:
            self._event = anyio.Event()
        return self._event

    def open(self) -> None:
        self._get().set()

    async def wait(self) -> None:
        await self._get().wait()


def _starts_after(manager: Any, ran: Gate, failed: Gate) -> Any:
    """The manager, whose task starts once ``ran`` opens (as a second worker would, later); ``failed`` opens when
    that start has failed (the failure is recorded before the start raises)."""

    class After(type(manager)):  # type: ignore[misc]
        async def start_task(self, task: Any, samples: Any, epochs: int) -> str:
            await ran.wait()
            try:
                return await super().start_task(task, samples, epochs)
            finally:
                failed.open()

    return After(manager.comparison, manager.role)


def _ends_then(manager: Any, done: Gate) -> Any:
    """The manager, opening ``done`` once its task has completed (its log's summary is written)."""

    class Then(type(manager)):  # type: ignore[misc]
        async def complete_task(self) -> dict[str, Any]:
            try:
                return await super().complete_task()
            finally:
                done.open()

    return Then(manager.comparison, manager.role)


def _gated(*, after: int = 0, opens: Gate | None = None, waits: Gate | None = None) -> Any:
    """A solver that opens ``opens`` when its ``after``-th sample has generated and holds every sample from then
    on (before returning it, so before its outcome is stored) until ``waits`` opens; ``after=0`` holds from the
    first sample on, before generating."""
    from inspect_ai.solver import Generate, TaskState, solver

    served = 0

    @solver
    def gated() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            nonlocal served
            if after == 0 and waits is not None:
                await waits.wait()
            state = await generate(state)
            served += 1
            if after and served == after and opens is not None:
                opens.open()
            if after and served >= after and waits is not None:
                await waits.wait()
            return state

        return solve

    return gated()


def _counted(n: int, opens: Gate) -> Any:
    """A solver that opens ``opens`` once ``n`` samples have generated."""
    return _gated(after=n, opens=opens)


def _slow(seconds: float = 0.04) -> Any:
    import anyio
    from inspect_ai.solver import Generate, TaskState, solver

    @solver
    def slow() -> Any:  # as a model call would take
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            await anyio.sleep(seconds)
            return await generate(state)

        return solve

    return slow()


def _eval(tasks: list[Any], tmp_path: Path, **kwargs: Any) -> dict[str, Any]:
    from inspect_ai import eval

    logs = eval(tasks, display="none", log_dir=str(tmp_path / "logs"), max_tasks=2, max_samples=2, **kwargs)
    return {log.eval.task: log for log in logs}


def _check_partner_stopped(logs: dict[str, Any]) -> tuple[str, Any]:
    failed = [name for name, log in logs.items() if log.status == "error"]
    assert len(failed) == 2, [log.status for log in logs.values()]  # the refused task, and its partner fails closed
    (refused,) = [name for name, log in logs.items() if "the paired task failed" not in log.error.message]
    (other,) = [log for name, log in logs.items() if name != refused]
    assert len(other.samples) < N // 2, "the partner was never told"
    # the partner's log says why it stopped: its partner's refusal, with the refusal's own words
    message = other.error.message
    assert f"the paired task failed ({refused} system {refused!r}: its task was refused at start: " in message
    assert logs[refused].error.message.splitlines()[-1].split(": ", 1)[-1][:50] in " ".join(message.split())
    return refused, other


def test_other_sample_ids_stop_the_partner_in_this_process(example: ModuleType, tmp_path: Path, cue_ledger: Any) -> None:
    tested, baseline = paired_early_stopping(cue_ledger(), "ev", tested="tested", baseline="baseline")
    ran, refused = Gate(), Gate()
    logs = _eval([_task(example, tested, "tested", example.questions(N), _gated(after=HELD, opens=ran, waits=refused)),
                  _task(example, _starts_after(baseline, ran, refused), "baseline", example.questions(N + 3))], tmp_path)
    failed, _ = _check_partner_stopped(logs)
    assert failed == "baseline"


def test_other_sample_ids_stop_the_partner_in_another_process_through_the_ledger(
    example: ModuleType, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    # refresh 0: every scheduling reads the notices from the ledger (the default reads them at most once a second)
    tested, _ = paired_early_stopping(url, "ev", tested="tested", baseline="baseline", refresh=0)
    _, baseline = paired_early_stopping(url, "ev", tested="tested", baseline="baseline", refresh=0)  # another "process"
    assert tested.comparison is not baseline.comparison
    ran, refused = Gate(), Gate()
    logs = _eval([_task(example, tested, "tested", example.questions(N), _gated(after=HELD, opens=ran, waits=refused)),
                  _task(example, _starts_after(baseline, ran, refused), "baseline", example.questions(N + 3))], tmp_path)
    failed, _ = _check_partner_stopped(logs)
    assert failed == "baseline"
    with open_ledger(url) as ledger:
        states = [(n.system, n.state) for n in ledger.notices("ev")]
    assert (failed, "failed") in states and states[-1][1] == "finished"  # the partner ended after the failure


def test_a_failure_of_an_earlier_attempt_does_not_stop_a_new_run(example: ModuleType, tmp_path: Path) -> None:
    """A failure stored more than a minute before this worker started is an earlier attempt's; one just before
    (two workers started together, the failing one first) is this run's."""
    from sqlalchemy import create_engine, text

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with open_ledger(url) as ledger:
        ledger.notify("ev", system="baseline", state="failed", message="an earlier attempt broke")
    engine = create_engine(url)  # the notice was stored long before this run
    with engine.begin() as conn:
        conn.execute(text("UPDATE stopwise_notices SET created_at = :at"), {"at": "2000-01-01T00:00:00.000000+00:00"})
    engine.dispose()
    managers = paired_early_stopping(url, "ev", tested="tested", baseline="baseline")
    logs = _eval([_task(example, managers[0], "tested", example.questions(12))], tmp_path / "old")
    assert len(logs["tested"].samples) == 12 and logs["tested"].results.early_stopping.early_stops == []

    with open_ledger(url) as ledger:
        ledger.notify("ev", system="baseline", state="failed", message="sample ids differ")
    again = paired_early_stopping(url, "ev", tested="tested", baseline="baseline")
    logs = _eval([_task(example, again[0], "tested", example.questions(12))], tmp_path / "new")
    # every sample skipped at once: the log says why (Inspect writes no results, hence no summary, for 0 samples)
    assert logs["tested"].samples == [] and logs["tested"].status == "error"
    assert "sample ids differ" in logs["tested"].error.message
    assert again[0].comparison._sides["tested"].counts.stopped == 12


def _gap(url: str) -> int:
    """The largest lead of one system over the other in stored events, once both have stored one, in storing order."""
    with open_ledger(url) as ledger:
        systems = ledger.outcomes("ev")["system"].tolist()
    lead, worst, seen = 0, 0, set()
    for system in systems:
        lead += 1 if system == "baseline" else -1
        seen.add(system)
        if len(seen) == 2:
            worst = max(worst, abs(lead))
    return worst


def test_a_faster_system_is_paced_by_its_partner_in_another_process(example: ModuleType, tmp_path: Path) -> None:
    """The baseline answers at once, the tested system takes 100 ms per sample; the comparison is not decided
    before the end (fixed-budget boundary over all 40 tasks). Paced through the ledger (pace 2), neither system
    leads by more than pace + 2 in flight (max_samples) + 1 started while its partner's progress was being read
    (the pacing holds the baseline whatever the speeds: it lets go only after 30 s without the tested system's
    progress). Unpaced, nothing holds the baseline: the tested system is held (a hand-shake) until the baseline
    has generated all 40, and the baseline leads by at least 15 (about 38)."""
    gaps = {}
    for pace in (2, None):
        url = f"sqlite:///{tmp_path / f'ledger-{pace}.db'}"
        tested, _ = paired_early_stopping(url, "ev", tested="tested", baseline="baseline", pace=pace)
        _, baseline = paired_early_stopping(url, "ev", tested="tested", baseline="baseline", pace=pace)
        done = Gate()
        slower, faster = (_slow(0.1), None) if pace is not None else (_gated(waits=done), _counted(N, done))
        logs = _eval([_task(example, tested, "tested", example.questions(N), slower),
                      _task(example, baseline, "baseline", example.questions(N), faster)], tmp_path / str(pace))
        assert all(log.status == "success" and len(log.samples) == N for log in logs.values())
        gaps[pace] = _gap(url)
    assert gaps[2] <= 2 + 2 + 1, gaps
    assert gaps[None] >= 15, gaps


def test_the_first_log_to_end_says_the_final_decision_is_in_the_ledger(example: ModuleType, tmp_path: Path) -> None:
    """Two comparisons on one ledger (two "processes"), unpaced: the tested task ends first, undecided (the
    baseline's samples are held until the tested task has completed: a hand-shake); its log says that the paired
    task still runs and that the final decision will be in the ledger, which holds it."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    n = 12
    tested, _ = paired_early_stopping(url, "ev", tested="tested", baseline="baseline", pace=None)
    _, baseline = paired_early_stopping(url, "ev", tested="tested", baseline="baseline", pace=None)
    done = Gate()
    logs = _eval([_task(example, _ends_then(tested, done), "tested", example.questions(n)),
                  _task(example, baseline, "baseline", example.questions(n), _gated(waits=done))], tmp_path)
    first = logs["tested"].results.early_stopping.metadata
    last = logs["baseline"].results.early_stopping.metadata
    assert first["action"] != last["action"] == "promote"  # fixed budget: decided at the limit, by the baseline
    assert any("later decisions are in the ledger's decision chain" in note or "final decision will be in the ledger"
               in note for note in first["notes"]), first["notes"]
    assert last["notes"] == []
    with open_ledger(url) as ledger:
        assert ledger.decisions("ev")[-1].record.model_dump(mode="json") == last["decision"]
