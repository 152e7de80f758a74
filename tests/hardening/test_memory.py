"""Small files that used to need more than 4 GiB: each command now stops at a documented limit,
with exit code 4, inside 2 GiB of address space (RLIMIT_AS in a subprocess)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from .conftest import Run, eval_log, files, gzip_bomb, refused, run_limited

ZEROS = b"\0" * (16 << 20)


def test_a_csv_gz_bomb_stops_at_the_decompression_limit(tmp_path: Path) -> None:
    bomb = gzip_bomb(tmp_path / "bomb.csv.gz")  # 384 MiB of rows from a small file
    assert bomb.stat().st_size < 4 << 20
    before = files(tmp_path)
    done = run_limited("decide", bomb, "-t", "A", "-b", "B", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert "bomb.csv.gz (decompressed): exceeds the limit of 268,435,456 bytes" in done.stderr
    assert "STOPWISE_MAX_DECOMPRESSED_BYTES" in done.stderr
    assert files(tmp_path) == before


def test_the_decompression_limit_is_overridable(tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    small = tmp_path / "o.csv.gz"
    small.write_bytes(gzip.compress(b"system,task,outcome\n" + b"A,t,1\nB,t,0\n" * 100))
    monkeypatch.setenv("STOPWISE_MAX_DECOMPRESSED_BYTES", "1000")
    refused(run("decide", small, "-t", "A", "-b", "B"), "exceeds the limit of 1,000 bytes")
    monkeypatch.setenv("STOPWISE_MAX_DECOMPRESSED_BYTES", "2000")
    assert run("decide", small, "-t", "A", "-b", "B").code in (0, 1, 2, 3)
    monkeypatch.setenv("STOPWISE_MAX_DECOMPRESSED_BYTES", "lots")
    refused(run("decide", small, "-t", "A", "-b", "B"), "STOPWISE_MAX_DECOMPRESSED_BYTES must be a positive integer")


def test_a_zstd_eval_bomb_stops_at_the_member_limit(tmp_path: Path) -> None:
    log = eval_log(tmp_path / "bomb.eval", {f"samples/{i}_epoch_1.json": (ZEROS, 20) for i in range(4)}, zstd=True)
    assert log.stat().st_size < 1 << 20  # four 320 MiB members in a small archive
    before = files(tmp_path)
    done = run_limited("ingest", log, "-f", "inspect", "-o", tmp_path / "out.csv", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    # each member declares its compressed size (a few KiB) and is refused one byte past it, far below the limit
    assert "member samples/0_epoch_1.json: decompresses past its declared size" in done.stderr
    assert files(tmp_path) == before


def test_a_deflate_eval_bomb_stops_at_the_member_limit(tmp_path: Path) -> None:
    log = eval_log(tmp_path / "bomb.eval", {"samples/1_epoch_1.json": (ZEROS, 20)})
    before = files(tmp_path)
    done = run_limited("ingest", log, "-f", "inspect", "-o", tmp_path / "out.csv", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert "declares 335,544,320 bytes, past the limit of 268,435,456" in done.stderr
    assert files(tmp_path) == before


def test_a_50_mb_jsonl_line_stops_at_the_line_limit(tmp_path: Path) -> None:
    rows = tmp_path / "o.jsonl"
    rows.write_bytes(b'{"system": "A", "task": "t", "outcome": 1, "source": "' + b"x" * (50 << 20) + b'"}\n')
    done = run_limited("decide", rows, "-t", "A", "-b", "B", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert "o.jsonl, line 1: longer than the limit of 16,777,216 bytes (STOPWISE_MAX_LINE_BYTES" in done.stderr


def test_a_50_mb_trajectory_line_stops_at_the_line_limit(tmp_path: Path) -> None:
    traj = tmp_path / "t.jsonl"
    traj.write_bytes(b'{"run": "r", "steps": [{"text": "' + b"y" * (50 << 20) + b'"}]}\n')
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from stopwise.errors import LimitError\n"
        "from stopwise.records import read_trajectories\n"
        "try:\n    read_trajectories(sys.argv[1])\nexcept LimitError as exc:\n    print(exc); sys.exit(4)\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code, str(traj)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 4, done.stderr
    assert "t.jsonl, line 1: longer than the limit of 16,777,216 bytes" in done.stdout


def test_billion_laughs_yaml_stops_at_the_value_limit(tmp_path: Path) -> None:
    text = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 12):
        text += f"l{i}: &l{i} [" + ", ".join([f"*{'a' if i == 1 else f'l{i - 1}'}"] * 9) + "]\n"
    path = tmp_path / "laughs.yaml"
    path.write_text(text)
    assert path.stat().st_size < 2000
    done = run_limited("finality", "check", path, cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert "holds more than 1,000,000 values, counting every use of a shared (aliased) value" in done.stderr
    assert len(done.stderr) < 1000
