"""``stopwise watch LOGDIR``: follow an Inspect log directory as real logs (``mockllm/model``) finish.

Two real Inspect evaluations (the scripted mock systems of ``docs/examples/inspect_live.py``: the
tested one right on ~90 % of 40 questions, the baseline on ~55 %) are run once per module; the tests
then place their ``.eval`` logs into a watched folder step by step -- a half-written copy first, a
running log (only ``_journal/start.json``), the finished logs -- between polls. The expected decision
is computed independently: each mock answer is re-derived from the same sha256 rule the mock systems
use, and ``stopwise.decide`` runs on those hand-built rows.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest
from tests.conftest import skip_without

import stopwise
from stopwise.cli.main import main
from stopwise.errors import FileFormatError, InputError
from stopwise.live import InspectLogDir, follow_inspect_logs

skip_without("inspect_ai", "pip install -e '.[test]'")

N = 40
ACCURACY = {"tested": 0.90, "baseline": 0.55}


@pytest.fixture(scope="module")
def logs(example: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Finished .eval logs of both systems (one model, mockllm/model) and the planned tasks file."""
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    root = tmp_path_factory.mktemp("inspect-watch")
    dataset = example.questions(N)
    out: dict[str, Path] = {}
    for name, accuracy in ACCURACY.items():
        task = Task(dataset=dataset, solver=generate(), scorer=match(), model=example.mock_system(name, accuracy), name="arith")
        [log] = eval(task, log_dir=str(root / name), display="none")
        assert log.status == "success" and len(log.samples or []) == N
        out[name] = shutil.copy(log.location, root / f"{name}.eval")
    pd.DataFrame({"task": [s.id for s in dataset]}).to_csv(root / "tasks.csv", index=False)
    out["tasks"] = root / "tasks.csv"
    return out


@pytest.fixture(scope="module")
def expected_rows(example: ModuleType) -> pd.DataFrame:
    """The outcomes, re-derived from the mock systems' rule (sha256 of 'name|prompt' below the accuracy)."""
    rows = []
    for sample in example.questions(N):
        for name, accuracy in ACCURACY.items():
            digest = hashlib.sha256(f"{name}|{sample.input}".encode()).digest()
            rows.append({"system": name, "task": sample.id, "outcome": float(int.from_bytes(digest[:8], "big") / 2**64 < accuracy)})
    return pd.DataFrame(rows)


def half_written(source: Path, dest: Path) -> None:
    dest.write_bytes(source.read_bytes()[: source.stat().st_size // 2])


def running(source: Path, dest: Path) -> None:
    """What Inspect holds while a task runs: the journal's start.json and some samples, no header.json."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(dest, "w") as out:
        for name in src.namelist():
            if name == "_journal/start.json" or name.startswith("samples/q00"):
                out.writestr(name, src.read(name))


def place(source: Path, dest: Path) -> None:
    tmp = dest.with_suffix(".part")
    shutil.copy(source, tmp)
    os.replace(tmp, dest)


def scenario(steps: list[Callable[[], None]]) -> Callable[[float], None]:
    """A `sleep` for follow_inspect_logs that performs the next file operation at each poll."""
    pending = list(steps)

    def sleep(_: float) -> None:
        if pending:
            pending.pop(0)()

    return sleep


def test_looks_follow_the_logs_as_they_finish(logs: dict[str, Path], expected_rows: pd.DataFrame, tmp_path: Path) -> None:
    watched = tmp_path / "logs"
    watched.mkdir()
    tested, baseline = watched / "tested.eval", watched / "baseline.eval"
    steps = [
        lambda: half_written(logs["tested"], tested),  # a copy in progress: not a zip archive yet
        lambda: place(logs["tested"], tested),  # finished
        lambda: running(logs["baseline"], baseline),  # running: no header.json
        lambda: half_written(logs["baseline"], baseline),
        lambda: place(logs["baseline"], baseline),
    ]
    universe = stopwise.read_task_universe(logs["tasks"])
    looks = list(
        follow_inspect_logs(
            watched, "tested", "baseline", universe=universe, system="{file}", interval=0.01, timeout=60, sleep=scenario(steps)
        )
    )
    assert looks[0].record is None and looks[0].reason == "no finished Inspect log yet" and looks[0].waiting == ()
    assert looks[1].logs_read == 0 and looks[1].waiting[0].startswith("tested.eval: not a complete .eval archive yet")
    assert looks[2].logs_read == 1 and looks[2].n_rows == N and looks[2].systems == ("tested",)
    assert looks[2].record is None and "baseline" in (looks[2].reason or "")
    upcoming = looks[2].next  # issue 33: the tasks to run next, the planned order for the system without rows
    assert upcoming is not None and upcoming.record is None and upcoming.names == universe.tasks[:10].tolist()
    assert {t.systems for t in upcoming.tasks} == {("baseline",)} and upcoming.remaining == N
    assert looks[3].waiting == ("baseline.eval: running (status started)",)
    assert looks[4].waiting[0].startswith("baseline.eval: not a complete .eval archive yet")
    last = looks[-1]
    assert len(looks) == 6 and last.final and last.waiting == () and last.logs_read == 2 and last.n_rows == 2 * N
    assert last.next is not None and last.next.tasks == []  # decided: nothing more to run

    reference = stopwise.decide(expected_rows, "tested", "baseline", universe=universe)
    truth = expected_rows.pivot(index="task", columns="system", values="outcome")
    delta = float((truth["tested"] - truth["baseline"]).mean())
    assert last.record is not None and last.record.action == reference.action == "promote"
    assert last.record.n_observed == N and last.record.delta_hat == pytest.approx(delta, abs=1e-12)
    assert last.record.r_promote == pytest.approx(reference.r_promote, abs=1e-12)


def test_a_log_rewritten_later_is_read_again(logs: dict[str, Path], expected_rows: pd.DataFrame, tmp_path: Path) -> None:
    """Rows are kept per (path, mtime, size): an unchanged file is not read again, a replaced one is."""
    place(logs["tested"], tmp_path / "tested.eval")
    place(logs["tested"], tmp_path / "baseline.eval")  # the wrong log first
    watched = InspectLogDir(tmp_path, system="{file}")
    assert watched.poll() is True
    first = watched.rows()
    assert watched.poll() is False and watched.rows() is first  # nothing changed: nothing read
    copying = tmp_path / "copying.eval"
    half_written(logs["baseline"], copying)  # a file still being copied: a new state, the same rows
    assert watched.poll() is True and watched.rows() is first and watched.waiting()[0].startswith("copying.eval: not a complete")
    copying.unlink()  # a waiting file that goes: the rows stay too (nothing decided on them changed)
    assert watched.poll() is True and watched.rows() is first and watched.waiting() == []
    by_system = first.pivot(index="task", columns="system", values="outcome")
    assert (by_system["baseline"] == by_system["tested"]).all()
    place(logs["baseline"], tmp_path / "baseline.eval")
    assert watched.poll() is True
    again = watched.rows().pivot(index="task", columns="system", values="outcome")
    truth = expected_rows.pivot(index="task", columns="system", values="outcome")
    pd.testing.assert_series_equal(again["baseline"], truth["baseline"], check_names=False)
    (tmp_path / "baseline.eval").unlink()
    assert watched.poll() is True and set(watched.rows()["system"]) == {"tested"}
    assert [p.name for p in watched.logs_read()] == ["tested.eval"]


def test_watch_command_exits_with_the_decision(logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    watched = tmp_path / "logs"
    watched.mkdir()
    args = ["watch", str(watched), "--tested", "tested", "--baseline", "baseline", "--system-from", "file", "--tasks", str(logs["tasks"])]
    half_written(logs["tested"], watched / "tested.eval")
    assert main([*args, "--once"]) == 2  # nothing finished: continue, no crash
    assert "no decision yet: no finished Inspect log yet" in capsys.readouterr().out
    place(logs["tested"], watched / "tested.eval")
    half_written(logs["baseline"], watched / "baseline.eval")
    assert main([*args, "--interval", "0.05", "--timeout", "0.3"]) == 2  # the baseline never finishes
    assert "baseline" in capsys.readouterr().out
    place(logs["baseline"], watched / "baseline.eval")
    assert main([*args, "--interval", "0.05", "--timeout", "60"]) == 0
    out = capsys.readouterr().out
    assert "PROMOTE  tested vs baseline" in out and "observed   40 of 40 planned tasks" in out


def test_logs_that_name_no_row_of_a_system_are_refused(logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35: `--system-from file` on logs named as Inspect names them re-checked 0 rows and exited 0."""
    watched = tmp_path / "logs"
    watched.mkdir()
    place(logs["tested"], watched / "2026-12-06T10-00-00-00-00_tested_AbC.eval")
    place(logs["baseline"], watched / "2026-12-06T10-00-00-00-00_baseline_DeF.eval")
    args = ["watch", str(watched), "-t", "tested", "-b", "baseline", "--tasks", str(logs["tasks"]), "--once"]
    assert main([*args, "--system-from", "file"]) == 4
    err = " ".join(capsys.readouterr().err.split())
    assert "read 80 rows from 2 finished log(s) but none of 'tested' or 'baseline'" in err
    assert "2026-12-06T10-00-00-00-00_baseline_DeF" in err and "--system-from task" in err
    (watched / "2026-12-06T10-00-00-00-00_tested_AbC.eval").rename(watched / "tested.eval")
    (watched / "2026-12-06T10-00-00-00-00_baseline_DeF.eval").rename(watched / "baseline.eval")
    assert main([*args, "--system-from", "file"]) == 0  # files named after the systems


def test_one_model_without_naming_is_an_error_with_a_hint(logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    watched = tmp_path / "logs"
    watched.mkdir()
    place(logs["tested"], watched / "a.eval")
    place(logs["baseline"], watched / "b.eval")
    code = main(["watch", str(watched), "-t", "tested", "-b", "baseline", "--once"])
    err = capsys.readouterr().err
    assert code == 4 and "logs a.eval, b.eval name the same (system, task, attempt)" in err
    assert "('mockllm/model', 'q000', 0)" in err and "--system-from" in err


def test_watch_argument_errors(logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    watched = tmp_path / "logs"
    watched.mkdir()
    assert main(["watch", str(watched), "ev", "-t", "A", "-b", "B"]) == 4
    assert "is an Inspect log directory, which has no evaluations" in capsys.readouterr().err
    assert main(["watch", str(watched), "-t", "A"]) == 4
    assert "--tested and --baseline" in capsys.readouterr().err
    assert main(["watch", str(tmp_path / "ledger.db"), "ev", "--tested", "A"]) == 4
    assert "apply to an Inspect log directory" in capsys.readouterr().err
    assert main(["watch", str(watched), "-t", "A", "-b", "B", "--errors", "maybe"]) == 4
    assert "errors" in capsys.readouterr().err
    with pytest.raises(FileFormatError, match="no such directory"):
        next(follow_inspect_logs(tmp_path / "missing", "A", "B"))
    with pytest.raises(InputError, match="two different"):
        next(follow_inspect_logs(watched, "A", "A"))


def test_truncated_and_foreign_json_files_do_not_stop_the_watch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "eval-set.json").write_text('{"eval_set_id": "x", "tasks": []}')
    (tmp_path / "cut.json").write_text('{"version": 2, "status": "success", "eval": {"task": "t", "mod')
    (tmp_path / "empty.eval").write_bytes(b"")
    look = next(follow_inspect_logs(tmp_path, "A", "B", timeout=0))
    assert look.record is None and look.logs_read == 0
    assert [w.split(":")[0] for w in look.waiting] == ["cut.json", "empty.eval"]
    assert main(["watch", str(tmp_path), "-t", "A", "-b", "B", "--once"]) == 2
