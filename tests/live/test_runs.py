"""Following Harbor job folders and SWE-bench run trees while they are written (``stopwise watch`` on either).

A writer adds one task per poll in the planned order, in two stages: first the tested system's file half-written
and the baseline's trial still running (Harbor: a result without ``finished_at``; SWE-bench: only
``run_instance.log``), then both complete. At every look the follower's decision must be the one ``decide``
gives on ``ingest`` of exactly the files the writer had completed (an independent cut kept by the writer), and
the first final look must be the first cut whose decision is final.
"""

from __future__ import annotations

import contextlib
import io
import json
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

import stopwise
from stopwise.cli.main import main
from stopwise.ingest import ingest
from stopwise.live import RunFolder, follow_run_folder, run_folder_kind
from stopwise.records import Policy, TaskUniverse

POLICY_TOML = 'threshold = 0.0\ntail_cutoff = 0.05\n\n[decision]\nboundary = "betting-wor"\n'
N = 60
PLANNED = [f"proj__proj-{(i * 37) % N:03d}" for i in range(N)]  # the planned order (not the writing of names)


def solved(system: str, task: str) -> bool:
    """The tested system solves 90 % of the tasks, the baseline 50 % (fixed per task)."""
    return zlib.crc32(task.encode()) % 100 < (90 if system.startswith("good") else 50)


class HarborWriter:
    """Writes a Harbor job: systems ``good/m1`` (tested) and ``fair/m2`` (baseline), one trial per task."""

    kind = "harbor"
    tested, baseline = "good/m1", "fair/m2"

    def __init__(self, root: Path) -> None:
        self.folder = root / "job-1"
        self.folder.mkdir(parents=True)
        (self.folder / "config.json").write_text("{}")
        self.complete: list[Path] = []

    def doc(self, system: str, task: str, *, finished: bool) -> str:
        agent, model = system.split("/")
        return json.dumps({
            "task_name": f"terminal-bench/{task}", "trial_name": f"{task}__{agent}",
            "agent_info": {"name": agent, "model_info": {"name": model, "provider": "x"}},
            "verifier_result": {"rewards": {"reward": float(solved(system, task))}} if finished else None,
            "exception_info": None, "started_at": "2025-09-01T10:00:00Z",
            "finished_at": "2025-09-01T10:03:00Z" if finished else None,
        })

    def path(self, system: str, task: str) -> Path:
        trial = self.folder / f"{task}__{system.split('/')[0]}"
        trial.mkdir(exist_ok=True)
        return trial / "result.json"

    def start(self, task: str) -> None:
        """The tested trial's result half-written, the baseline's trial running."""
        text = self.doc(self.tested, task, finished=True)
        self.path(self.tested, task).write_text(text[: len(text) // 2])
        self.path(self.baseline, task).write_text(self.doc(self.baseline, task, finished=False))

    def finish(self, task: str) -> None:
        for system in (self.tested, self.baseline):
            self.path(system, task).write_text(self.doc(system, task, finished=True))
            self.complete.append(self.path(system, task))


class SwebenchWriter(HarborWriter):
    """Writes ``logs/run_evaluation/run-1/<model>/<instance>/report.json`` for models ``good`` and ``fair``."""

    kind = "swebench"
    tested, baseline = "good", "fair"

    def __init__(self, root: Path) -> None:
        self.folder = root / "logs" / "run_evaluation" / "run-1"
        self.folder.mkdir(parents=True)
        self.complete = []

    def doc(self, system: str, task: str, *, finished: bool) -> str:
        return json.dumps({task: {"patch_is_None": False, "patch_exists": True, "resolved": solved(system, task)}})

    def path(self, system: str, task: str) -> Path:
        instance = self.folder / system / task
        instance.mkdir(parents=True, exist_ok=True)
        return instance / "report.json"

    def start(self, task: str) -> None:
        text = self.doc(self.tested, task, finished=True)
        self.path(self.tested, task).write_text(text[: len(text) // 2])
        (self.path(self.baseline, task).parent / "run_instance.log").write_text("running\n")


def steps(writer: HarborWriter, planned: list[str] = PLANNED) -> list[Callable[[], None]]:
    """One step per poll: start task k and finish task k - 1 (in planned order)."""
    out: list[Callable[[], None]] = []
    for k in range(N + 1):
        def step(k: int = k) -> None:
            if k > 0:
                writer.finish(planned[k - 1])
            if k < N:
                writer.start(planned[k])
        out.append(step)
    return out


@pytest.mark.parametrize("make", [HarborWriter, SwebenchWriter], ids=["harbor", "swebench"])
def test_each_look_decides_as_decide_on_the_files_finished_at_that_point(tmp_path: Path, make: type[HarborWriter]) -> None:
    writer = make(tmp_path)
    policy = Policy.model_validate({"threshold": 0.0, "tail_cutoff": 0.05, "decision": {"boundary": "betting-wor"}})
    universe = TaskUniverse(PLANNED)
    pending = steps(writer)
    pending.pop(0)()  # the first task started before following begins
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds
        if pending:
            pending.pop(0)()

    assert run_folder_kind(writer.folder) == writer.kind
    looks = []
    for look in follow_run_folder(writer.folder, writer.tested, writer.baseline, policy, universe=universe,
                                  interval=1.0, timeout=200.0, clock=lambda: now[0], sleep=sleep):
        cut = list(writer.complete)
        reference = stopwise.decide(ingest(cut, format=writer.kind).rows, writer.tested, writer.baseline, policy,
                                    universe=universe) if cut else None
        assert look.logs_read == len(cut)
        assert (None if look.record is None else look.record.digest()) == (None if reference is None else reference.digest())
        # the half-written and running files are waited for, never read
        assert len(look.waiting) == (1 if writer.kind == "swebench" else 2) * (len(cut) < 2 * N)
        looks.append((len(cut) // 2, look))
    pairs, last = looks[-1]
    assert last.final and last.record is not None and last.record.action == "promote"
    # decided at the first cut that decides: every earlier look continued
    assert all(look.record is None or look.record.action == "continue" for _, look in looks[:-1])
    assert 10 < pairs < N and last.record.n_observed == pairs
    assert last.next is not None and list(last.next.tasks) == []  # nothing to run once decided


def test_a_half_written_file_is_read_once_complete(tmp_path: Path) -> None:
    writer = HarborWriter(tmp_path)
    writer.start(PLANNED[0])
    folder = RunFolder(writer.folder)
    assert folder.poll() and folder.finished() == [] and len(folder.waiting()) == 2
    assert not folder.poll()  # nothing changed
    writer.finish(PLANNED[0])
    assert folder.poll() and folder.finished() == sorted(writer.complete)
    assert sorted(folder.rows()["system"]) == ["fair/m2", "good/m1"]


@pytest.mark.parametrize("make", [HarborWriter, SwebenchWriter], ids=["harbor", "swebench"])
def test_watch_cli_on_a_run_being_written_runs_the_stop_command_once(tmp_path: Path, make: type[HarborWriter]) -> None:
    writer = make(tmp_path / "run")
    (tmp_path / "policy.toml").write_text(POLICY_TOML)
    (tmp_path / "tasks.csv").write_text("task\n" + "".join(f"{t}\n" for t in sorted(PLANNED)))
    with contextlib.redirect_stdout(io.StringIO()):  # the stamped planned order the betting boundary checks
        assert main(["order", str(tmp_path / "tasks.csv"), "-p", str(tmp_path / "policy.toml"), "-o", str(tmp_path / "order.csv")]) == 0
    planned = pd.read_csv(tmp_path / "order.csv")["task"].tolist()
    marker = tmp_path / "stopped.txt"
    done = threading.Event()

    def write() -> None:
        for step in steps(writer, planned):
            if done.is_set():
                return
            step()
            time.sleep(0.02)

    thread = threading.Thread(target=write)
    thread.start()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            code = main(["watch", str(writer.folder), "--tested", writer.tested, "--baseline", writer.baseline,
                         "-p", str(tmp_path / "policy.toml"), "--tasks", str(tmp_path / "order.csv"), "--interval", "0.01",
                         "--timeout", "20", "--json", "--stop-command", f"echo $STOPWISE_ACTION >> {marker}"])
    finally:
        done.set()
        thread.join()
    record = json.loads(out.getvalue())
    assert record.get("action") == "promote", record
    assert code == stopwise.ACTIONS.index("promote") and record["action"] == "promote"
    assert marker.read_text() == "promote\n"  # once
    # the printed record is decide on the finished files of the pairs it observed
    assert record["n_observed"] < N


def test_the_stop_command_runs_only_for_a_decision(tmp_path: Path) -> None:
    from stopwise.cli._stop import run_stop_command

    marker = tmp_path / "ran.txt"
    command = f"echo $STOPWISE_ACTION $STOPWISE_EXIT_CODE >> {marker}"
    assert run_stop_command(command, stopwise.ACTIONS.index("continue")) is None and not marker.exists()
    assert run_stop_command(command, 4) is None and not marker.exists()  # an error is no decision
    assert run_stop_command(command, stopwise.ACTIONS.index("abstain")) == 0
    assert run_stop_command("exit 7", 1) == 7  # reported, not raised
    assert marker.read_text() == "abstain 3\n"
