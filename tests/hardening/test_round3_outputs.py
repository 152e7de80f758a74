"""Issue 37, outputs checked before the first byte is written: every output of a command is checked together
(two outputs on one path, a missing folder, a device / FIFO / socket) before any is written, and a special file
is never replaced, even with ``--force``. Each case: exit 4 naming the option, the path and the rule, and the
folder exactly as before."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from stopwise._atomic import Outputs, check_output_plan, special_file
from stopwise.cli.main import main
from stopwise.errors import OutputExistsError

from .conftest import Run, files, refused

ROOT = Path(__file__).parents[2]
TAU2 = ROOT / "tests/ingest/fixtures/tau2/airline_results.json"


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A decided ledger of 24 planned tasks (A vs B), in a folder no case writes to."""
    folder = tmp_path_factory.mktemp("ledger")
    rows = "".join(f"A,t{i},{int(i % 3 != 0)}\nB,t{i},{int(i % 4 == 0)}\n" for i in range(24))
    (folder / "rows.csv").write_text("system,task,outcome\n" + rows)
    db = folder / "l.db"
    assert main(["ledger", "init", str(db), "ev", "-t", "A", "-b", "B", "--n-tasks", "24"]) == 0
    assert main(["ledger", "append", str(db), "ev", str(folder / "rows.csv")]) == 0
    assert main(["ledger", "decide", str(db), "ev"]) in (0, 1, 2, 3)
    return db


def _device(path: Path) -> bool:
    """A character device node (the null device's numbers) at ``path``; False where mknod is not permitted."""
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        return False
    return True


def test_ledger_export_refuses_one_path_for_rows_and_decisions_before_writing_either(ledger: Path, tmp_path: Path, run: Run) -> None:
    target = tmp_path / "x.jsonl"
    refused(run("ledger", "export", ledger, "ev", "-o", target, "--decisions", target), f"--decisions {target}", "is also an output", "--out")
    assert list(tmp_path.iterdir()) == []  # before: the rows were written, then the clash refused


def test_ledger_export_refuses_a_missing_decisions_folder_before_writing_the_rows(ledger: Path, tmp_path: Path, run: Run) -> None:
    refused(
        run("ledger", "export", ledger, "ev", "-o", tmp_path / "x.csv", "--decisions", tmp_path / "nodir" / "d.jsonl"),
        "--decisions", "nodir", "does not exist",
    )
    assert list(tmp_path.iterdir()) == []  # before: x.csv was left behind


def test_ledger_export_writes_both_files_when_the_plan_holds(ledger: Path, tmp_path: Path, run: Run) -> None:
    result = run("ledger", "export", ledger, "ev", "-o", tmp_path / "x.csv", "--decisions", tmp_path / "d.jsonl")
    assert result.code == 0, result.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl", "x.csv"]
    assert (tmp_path / "x.csv").read_text().count("\n") == 1 + 48


def test_ingest_refuses_rows_and_trajectories_on_one_path(tmp_path: Path, run: Run) -> None:
    target = tmp_path / "same.jsonl"
    refused(run("ingest", TAU2, "-o", target, "--trajectories", target), str(target), "is also an output")
    assert list(tmp_path.iterdir()) == []  # before: the rows were left in same.jsonl


def test_an_output_inside_another_commands_output_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OutputExistsError, match=r"--outcomes .*ev/rows\.csv: is also an output of this command \(-o .*ev\)"):
        check_output_plan([("-o", tmp_path / "ev", "stopwise.early.evaluation"), ("--outcomes", tmp_path / "ev" / "rows.csv", None)], force=False)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_is_a_file_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("mine")
    with pytest.raises(OutputExistsError, match=r"its folder .*a\.txt is not a directory"):
        with Outputs(force=True) as outputs:
            outputs.file(tmp_path / "a.txt" / "sub" / "rows.csv")
    assert files(tmp_path) == {"a.txt": b"mine"}


@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize(
    "command",
    [
        lambda t: ["ingest", TAU2, "-o", t, "--out-format", "csv"],
        lambda t: ["policy", "init", t],
        lambda t: ["ingest", TAU2, "-o", t.with_name("rows.csv"), "--trajectories", t],
        lambda t: ["report", ROOT / "tests/finality/fixtures/runs.csv", "-o", t],
        lambda t: ["order", ROOT / "tests/finality/fixtures/runs.csv", "-o", t],
    ],
    ids=["ingest -o", "policy init", "ingest --trajectories", "report -o", "order -o"],
)
def test_a_special_file_is_never_replaced_even_with_force(kind: str, command, tmp_path: Path, run: Run) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "special"
    if kind == "fifo":
        os.mkfifo(target)
    elif not _device(target):
        pytest.skip("creating a device node needs CAP_MKNOD")
    what = special_file(target)
    assert what is not None
    refused(run(*command(target), "--force"), str(target), what, "never replaced")
    assert special_file(target) == what  # still the device / FIFO (before: replaced by a regular file)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["special"]


def test_ledger_export_never_replaces_a_device(ledger: Path, tmp_path: Path, run: Run) -> None:
    target = tmp_path / "rows.csv"
    if not _device(target):
        pytest.skip("creating a device node needs CAP_MKNOD")
    refused(run("ledger", "export", ledger, "ev", "-o", target, "--force"), str(target), "a character device")
    assert special_file(target) == "a character device"
