"""The second round's hostile corpus (issue 25): each case is a small generated input.

Every case must end with exit code 4 and a message naming the field, leave every file as it was,
print no password, and (run all together in one subprocess) stay under 1 GB of peak memory.
The full-size zip bombs (1.25 GiB once decompressed, slow to build) run under ``-m slow``.
"""

from __future__ import annotations

import bz2
import json
import lzma
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import stopwise
from stopwise.cli.main import main

from .conftest import HEADER, Run, files, refused

SECRET = "S3cretPw"
FIXTURE = Path(__file__).parents[1] / "ingest" / "fixtures" / "inspect" / "gsm_small.json"
ZEROS = b"\0" * (1 << 20)
ONE_GB_KB = 1_000_000  # ru_maxrss is in KiB on Linux


# ---------------------------------------------------------------- building the inputs


def _raw_zip(path: Path, members: list[tuple[str, int, bytes, int, int]]) -> Path:
    """A zip archive written byte by byte: (name, method, compressed bytes, declared size, CRC-32) per member."""
    out, central = bytearray(), bytearray()
    for name, method, data, declared, crc in members:
        encoded, offset = name.encode(), len(out)
        fields = struct.pack("<HHHHHIII", 20, 0, method, 0, 0x21, crc, len(data), declared)
        out += b"PK\x03\x04" + fields + struct.pack("<HH", len(encoded), 0) + encoded + data
        central += b"PK\x01\x02" + struct.pack("<H", 20) + fields + struct.pack("<HHHHHII", len(encoded), 0, 0, 0, 0, 0, offset) + encoded
    end = struct.pack("<HHHHIIH", 0, 0, len(members), len(members), len(central), len(out), 0)
    path.write_bytes(bytes(out + central) + b"PK\x05\x06" + end)
    return path


def _bzip2(n_mib: int) -> bytes:
    packer = bz2.BZ2Compressor(9)
    return b"".join(packer.compress(ZEROS) for _ in range(n_mib)) + packer.flush()


def _lzma(n_mib: int) -> bytes:
    lc, lp, pb, dict_size = 3, 0, 2, 1 << 20
    filters = [{"id": lzma.FILTER_LZMA1, "preset": 1, "dict_size": dict_size, "lc": lc, "lp": lp, "pb": pb}]
    packer = lzma.LZMACompressor(lzma.FORMAT_RAW, filters=filters)
    body = b"".join(packer.compress(ZEROS) for _ in range(n_mib)) + packer.flush()
    props = bytes([(pb * 5 + lp) * 9 + lc]) + struct.pack("<I", dict_size)
    return struct.pack("<BBH", 9, 4, len(props)) + props + body


def bomb_eval(path: Path, method: int, n_mib: int) -> Path:
    """An Inspect ``.eval`` whose sample member declares 200 bytes and expands to ``n_mib`` MiB of zeros."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    header = deflate.compress(HEADER) + deflate.flush()
    sample = _bzip2(n_mib) if method == 12 else _lzma(n_mib)
    members = [("header.json", 8, header, len(HEADER), zlib.crc32(HEADER)), ("samples/1_epoch_1.json", method, sample, 200, 0)]
    return _raw_zip(path, members)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registered evaluation with 40 paired outcomes (copied by each case that damages it)."""
    folder = tmp_path_factory.mktemp("ledger")
    (folder / "order.csv").write_text("task\n" + "".join(f"t{i}\n" for i in range(40)))
    (folder / "rows.csv").write_text("system,task,outcome\n" + "".join(f"A,t{i},1\nB,t{i},{i % 2}\n" for i in range(40)))
    path = folder / "ledger.db"
    assert main(["ledger", "init", str(path), "ev", "--tasks", str(folder / "order.csv"), "--tested", "A", "--baseline", "B"]) == 0
    assert main(["ledger", "append", str(path), "ev", str(folder / "rows.csv")]) == 0
    return path


def _damaged(ledger: Path, folder: Path, column: str, value: str) -> Path:
    copy = folder / "ledger.db"
    shutil.copyfile(ledger, copy)
    with sqlite3.connect(copy) as conn:
        conn.execute(f"UPDATE stopwise_evaluations SET {column} = ?", (value,))
    conn.close()
    return copy


@dataclass(frozen=True)
class Case:
    """One hostile input: build(folder, ledger) -> the command's arguments; what the message must say."""

    name: str
    build: Callable[[Path, Path], list[str]]
    fragments: tuple[str, ...]


def _ingest_template(template: str) -> Callable[[Path, Path], list[str]]:
    def build(folder: Path, _ledger: Path) -> list[str]:
        log = shutil.copy(FIXTURE, folder / "log.json")
        return ["ingest", str(log), "-f", "inspect", "--system", template, "-o", str(folder / "out.csv")]

    return build


def _ingest_bomb(method: int, n_mib: int) -> Callable[[Path, Path], list[str]]:
    def build(folder: Path, _ledger: Path) -> list[str]:
        return ["ingest", str(bomb_eval(folder / "bomb.eval", method, n_mib)), "-f", "inspect", "-o", str(folder / "out.csv")]

    return build


def _on_damaged(column: str, value: str, *command: str) -> Callable[[Path, Path], list[str]]:
    def build(folder: Path, ledger: Path) -> list[str]:
        copy = _damaged(ledger, folder, column, value)
        args = [a.replace("LEDGER", str(copy)).replace("OUT", str(folder / "r.html")) for a in command]
        return args

    return build


def _deep_report(folder: Path, _ledger: Path) -> list[str]:
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    return ["report", str(folder / "deep.json"), "-o", str(folder / "r.html")]


def _pending_blank(folder: Path, _ledger: Path) -> list[str]:
    (folder / "policy.toml").write_text('statuses = ["pending"]\n')
    (folder / "rows.csv").write_text("system,task,outcome,status\nA,t1,,pending\nB,t1,,pending\nA,t2,1,final\nB,t2,0,final\n")
    return ["decide", str(folder / "rows.csv"), "-t", "A", "-b", "B", "--policy", str(folder / "policy.toml")]


def _bad_port(_folder: Path, _ledger: Path) -> list[str]:
    return ["ledger", "verify", f"postgresql://u:{SECRET}@h:notaport/db", "ev"]


CASES = [
    Case("bzip2-eval-bomb", _ingest_bomb(12, 8), ("member samples/1_epoch_1.json: decompresses past its declared size of 200 bytes",)),
    Case("lzma-eval-bomb", _ingest_bomb(14, 8), ("member samples/1_epoch_1.json: decompresses past its declared size of 200 bytes",)),
    Case("system-format-spec", _ingest_template("{model:>3000000000}"), ("field '{model:>3000000000}'", "format specs", "this format offers", "{model}")),
    Case("system-attribute", _ingest_template("{model.__class__.__mro__}"), ("field '{model.__class__.__mro__}'", "this format offers")),
    Case("system-conversion", _ingest_template("{model!r}"), ("field '{model!r}'", "conversions")),
    Case("damaged-universe-decide", _on_damaged("universe_json", "{not json", "ledger", "decide", "LEDGER", "ev"), ("the stored universe_json is damaged",)),
    Case("damaged-universe-report", _on_damaged("universe_json", "[]", "report", "LEDGER", "--evaluation", "ev", "-o", "OUT"), ("the stored universe_json is damaged",)),
    Case("damaged-policy-decide", _on_damaged("policy_json", "[1,", "ledger", "decide", "LEDGER", "ev"), ("the stored policy_json is damaged",)),
    Case("damaged-policy-report", _on_damaged("policy_json", '{"alpha": "x"}', "report", "LEDGER", "--evaluation", "ev", "-o", "OUT"), ("the stored policy_json is damaged",)),
    Case("ledger-url-port", _bad_port, ("the port in 'h:notaport' must be a number",)),
    Case("report-100000-deep", _deep_report, ("deep.json: nested too deeply to parse (STOPWISE_MAX_DEPTH",)),
    Case("pending-blank-outcome", _pending_blank, ("system 'A', task 't1': `outcome` is blank on a row whose status the policy uses",)),
]


# ---------------------------------------------------------------- each case in-process


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_case_is_a_clear_refusal(case: Case, tmp_path: Path, ledger: Path, run: Run) -> None:
    args = case.build(tmp_path, ledger)
    before = files(tmp_path)
    result = run(*args)
    refused(result, *case.fragments)
    assert SECRET not in result.out + result.err
    assert files(tmp_path) == before


def test_result_lines_print_names_escaped(tmp_path: Path, run: Run) -> None:
    hostile = "A\x1b[2J\x1b]0;pwned\x07X"
    rows = tmp_path / "rows.csv"
    rows.write_text("system,task,outcome\n" + "".join(f"{hostile},t{i},1\nB,t{i},0\n" for i in range(3)), encoding="utf-8")
    decided = run("decide", rows, "-t", hostile, "-b", "B", "--n-tasks", "3")
    assert decided.code in (0, 1, 2, 3), decided.err
    assert "\x1b" not in decided.out + decided.err and "\x07" not in decided.out
    assert "A\\x1b[2J\\x1b]0;pwned\\x07X vs B" in decided.out
    (tmp_path / "order.csv").write_text("task\nt0\nt1\nt2\n")
    registered = run("ledger", "init", tmp_path / "l.db", f"ev{hostile}", "--tasks", tmp_path / "order.csv", "--tested", hostile, "--baseline", "B")
    assert registered.code == 0, registered.err
    assert "\x1b" not in registered.out and "\x07" not in registered.out
    assert "registered evA\\x1b[2J\\x1b]0;pwned\\x07X: A\\x1b[2J" in registered.out
    appended = run("ledger", "append", tmp_path / "l.db", f"ev{hostile}", rows)
    looked = run("ledger", "decide", tmp_path / "l.db", f"ev{hostile}")
    assert appended.code == 0 and looked.code in (0, 1, 2, 3), appended.err + looked.err
    assert "\x1b" not in appended.out + looked.out + looked.err


# ---------------------------------------------------------------- the corpus under a memory ceiling

DRIVER = """
import asyncio, json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a regression fails fast instead of swapping
from stopwise.cli.main import main

codes = [main(args) for args in json.loads(open(sys.argv[1]).read())]

async def put_512_mb():
    import httpx
    from stopwise.finality import ServiceStore, create_service_app

    async def body():
        for _ in range(8192):
            yield b" " * 65536

    transport = httpx.ASGITransport(app=create_service_app(ServiceStore()))
    async with httpx.AsyncClient(transport=transport, base_url="http://replay") as client:
        answer = await client.put("/ns/n/items/k", content=body(), headers={"content-type": "application/json"})
    return answer.status_code

codes.append(asyncio.run(put_512_mb()))
print(json.dumps({"codes": codes, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def run_corpus(cases: list[Case], folder: Path, ledger: Path) -> tuple[list[int], int, str]:
    """Every case in one subprocess (stdout/stderr kept): exit codes, the 512 MB PUT's status, peak RSS in KiB."""
    commands = []
    for i, case in enumerate(cases):
        (folder / str(i)).mkdir()
        commands.append(case.build(folder / str(i), ledger))
    (folder / "commands.json").write_text(json.dumps(commands))
    inherited = os.environ.get("PYTHONPATH")
    source = str(Path(stopwise.__file__).parents[1])  # the stopwise these tests import, not an installed copy
    env = {**os.environ, "PYTHONPATH": source + (os.pathsep + inherited if inherited else "")}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(folder / "commands.json")],
        cwd=folder, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return summary["codes"], summary["maxrss_kb"], done.stdout + done.stderr


def test_the_whole_corpus_runs_under_1_gb(tmp_path: Path, ledger: Path) -> None:
    codes, maxrss_kb, printed = run_corpus(CASES, tmp_path, ledger)
    assert codes == [4] * len(CASES) + [413]
    assert maxrss_kb < ONE_GB_KB, maxrss_kb
    assert SECRET not in printed and "internal error" not in printed


def _parquet_bomb(folder: Path, _ledger: Path) -> list[str]:
    """10^8 rows in a file of about 1 MB (dictionary and run-length encoded); pq.read_table took 21 GB."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = pa.table({"system": ["A", "B"] * 500_000, "task": ["t"] * 1_000_000, "outcome": [1.0] * 1_000_000})
    with pq.ParquetWriter(folder / "rows.parquet", rows.schema, compression="zstd") as writer:
        for _ in range(100):
            writer.write_table(rows)
    return ["decide", str(folder / "rows.parquet"), "-t", "A", "-b", "B"]


@pytest.mark.slow
def test_full_size_bombs_run_under_1_gb(tmp_path: Path, ledger: Path) -> None:
    """1.25 GiB once decompressed (zipfile held 2.2 GB for the corpus' bzip2 member, 2.17 GB for LZMA),
    and a Parquet file of 10^8 rows."""
    cases = [
        Case("bzip2-eval-bomb-full", _ingest_bomb(12, 1280), ()),
        Case("lzma-eval-bomb-full", _ingest_bomb(14, 1280), ()),
        Case("parquet-rows-bomb", _parquet_bomb, ()),
    ]
    codes, maxrss_kb, printed = run_corpus(cases, tmp_path, ledger)
    assert codes == [4, 4, 4, 413]
    assert maxrss_kb < ONE_GB_KB, maxrss_kb
    assert printed.count("decompresses past its declared size of 200 bytes") == 2
    assert "rows.parquet (decoded): exceeds the limit of 268,435,456 bytes (100,000,000 rows declared" in printed


def test_written_file_names_print_escaped(tmp_path: Path, run: Run) -> None:
    name = "p\x1b[2J[bold]x.toml"
    written = run("policy", "init", tmp_path / name)
    assert written.code == 0, written.err
    assert "\x1b" not in written.out
    assert "p\\x1b[2J[bold]x.toml" in written.out  # markup printed as typed, ESC shown escaped
    assert (tmp_path / name).is_file()
