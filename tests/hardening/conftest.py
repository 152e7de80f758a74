"""Helpers of the hostile-input corpus: run a command in-process or in a memory-limited subprocess,
and check that nothing was written."""

from __future__ import annotations

import gzip
import os
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from stopwise.cli.main import main


@dataclass
class Outcome:
    code: int
    out: str
    err: str


Run = Callable[..., Outcome]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """Run ``stopwise ARGS`` in-process; the exit code and what it printed."""

    def call(*args: object) -> Outcome:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return call


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones included) with its content.

    A read-only open of a stopwise ledger (WAL journal) lets SQLite add its shared-memory index ``-shm`` and an
    empty ``-wal`` beside the database: SQLite's reader protocol, not a change to the database. Those two
    sidecars are left out when the ``-wal`` is empty (a non-empty one would hold written pages and counts).
    """
    found = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    for name in [n for n in found if n.endswith("-wal") and found[n] == b""]:
        found.pop(name)
        found.pop(name[: -len("-wal")] + "-shm", None)
    return found


def refused(result: Outcome, *fragments: str) -> str:
    """Assert exit 4 (a user error, never 5 or a signal) and every fragment in the one-line-per-problem message."""
    message = " ".join(result.err.split())
    assert result.code == 4, result.err
    assert "internal error" not in message
    for fragment in fragments:
        assert " ".join(fragment.split()) in message, message
    return message


LIMITED = (
    "import resource, sys\n"
    "cap = int(float(sys.argv.pop(1)) * 2**30)\n"
    "resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
    "from stopwise.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def run_limited(*args: object, cwd: Path, env: dict[str, str] | None = None, cap_gib: float = 2) -> subprocess.CompletedProcess[str]:
    """``stopwise ARGS`` in a subprocess limited to ``cap_gib`` GiB of address space (RLIMIT_AS).

    The subprocess imports the same stopwise as the tests (a relative ``PYTHONPATH=src`` would not
    reach it from ``cwd``, and an installed copy would be tested instead).
    """
    import stopwise

    source = str(Path(stopwise.__file__).parents[1])
    inherited = os.environ.get("PYTHONPATH")
    environ = {**os.environ, "PYTHONPATH": source + (os.pathsep + inherited if inherited else ""), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", LIMITED, str(cap_gib), *map(str, args)],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def gzip_bomb(path: Path, line: bytes = b"A,t,1\n", megabytes: int = 64, copies: int = 6) -> Path:
    """A gzip file of ``copies`` identical members, each ``megabytes`` MiB of ``line`` once decompressed."""
    body = line * ((megabytes << 20) // len(line))
    member = gzip.compress(body, compresslevel=9)
    with open(path, "wb") as handle:
        handle.write(gzip.compress(b"system,task,outcome\n"))
        for _ in range(copies):
            handle.write(member)
    return path


def _patch_zip(path: Path, name: str, *, method: int | None = None, flags: int = 0) -> None:
    """Rewrite the compression method and set flag bits of member ``name`` in both of its zip headers."""
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    for signature, method_at, name_at in ((b"PK\x03\x04", 8, 30), (b"PK\x01\x02", 10, 46)):
        start = 0
        while (at := data.find(signature, start)) >= 0:
            start = at + 4
            length = struct.unpack("<H", data[at + name_at - 4 : at + name_at - 2])[0] if signature == b"PK\x03\x04" else struct.unpack("<H", data[at + 28 : at + 30])[0]
            if bytes(data[at + name_at : at + name_at + length]) != encoded:
                continue
            if method is not None:
                data[at + method_at : at + method_at + 2] = struct.pack("<H", method)
            old = struct.unpack("<H", data[at + method_at - 2 : at + method_at])[0]
            data[at + method_at - 2 : at + method_at] = struct.pack("<H", old | flags)
    path.write_bytes(bytes(data))


HEADER = b'{"version": 2, "status": "success", "eval": {"task": "t", "model": "m", "task_id": "x", "run_id": "r", "created": "2025-01-01T00:00:00+00:00"}}'


def eval_log(
    path: Path, samples: dict[str, tuple[bytes, int]], *, zstd: bool = False, encrypted: str | None = None
) -> Path:
    """A minimal Inspect ``.eval`` archive; member ``name`` holds ``chunk * count`` (streamed, so a
    bomb costs no memory to build), compressed with Zstandard (zip method 93) when ``zstd``."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", HEADER, compress_type=zipfile.ZIP_DEFLATED)
        for name, (chunk, count) in samples.items():
            if zstd:
                import zstandard

                packer = zstandard.ZstdCompressor(level=3).compressobj()
                body = b"".join(packer.compress(chunk) for _ in range(count)) + packer.flush()
                archive.writestr(name, body, compress_type=zipfile.ZIP_STORED)
            else:
                info = zipfile.ZipInfo(name)
                info.compress_type = zipfile.ZIP_DEFLATED
                with archive.open(info, "w", force_zip64=True) as member:
                    for _ in range(count):
                        member.write(chunk)
    if zstd:
        for name in samples:
            _patch_zip(path, name, method=93)
    if encrypted is not None:
        _patch_zip(path, encrypted, flags=0x1)
    return path
