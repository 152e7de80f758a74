"""Zip members are read with a bound on their output for every compression method (stopwise/_logs/_zip.py)."""

from __future__ import annotations

import struct
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from stopwise._logs._zip import ZIP_METHODS, read_member
from stopwise.errors import FileFormatError, LimitError

DOC = b'{"x": [' + b"1, " * 20_000 + b'2], "name": "caf\xc3\xa9"}'
METHODS = [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


def _declare(path: Path, name: str, size: int) -> None:
    """Rewrite the uncompressed size member ``name`` declares, in its local and central headers."""
    data = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo(name)
    data[info.header_offset + 22 : info.header_offset + 26] = struct.pack("<I", size)
    central = data.find(b"PK\x01\x02")
    while central >= 0:
        (length,) = struct.unpack("<H", data[central + 28 : central + 30])
        if bytes(data[central + 46 : central + 46 + length]) == name.encode():
            data[central + 24 : central + 28] = struct.pack("<I", size)
        central = data.find(b"PK\x01\x02", central + 4)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("method", METHODS)
def test_every_method_reads_back_what_zipfile_wrote(tmp_path: Path, method: int) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        archive.writestr("doc.json", DOC)
        archive.writestr("empty.json", b"")
    with zipfile.ZipFile(path) as archive:
        assert read_member(path, archive.getinfo("doc.json")) == DOC == archive.read("doc.json")
        assert read_member(path, archive.getinfo("empty.json")) == b""


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_member_declaring_a_small_size_is_refused_one_byte_past_it(tmp_path: Path, method: int) -> None:
    """24 MiB of zeros declared as 100 bytes: Python's zipfile holds ~2x the whole expansion for bzip2
    and LZMA before it notices (measured: 148 and 157 MB traced for 64 MiB); the bounded reader's peak
    must stay under 16 MiB (LZMA's dictionary is cut to the bound; the rest is the compressed bytes)."""
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        archive.writestr("s.json", b"\0" * (24 << 20))
    _declare(path, "s.json", 100)
    info = zipfile.ZipFile(path).getinfo("s.json")
    assert info.file_size == 100
    tracemalloc.start()
    try:
        with pytest.raises(FileFormatError, match=r"s\.json: decompresses past its declared size of 100 bytes"):
            read_member(path, info)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak


def test_size_limit_crc_methods_and_encryption_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_BZIP2) as archive:
        archive.writestr("doc.json", DOC)
    info = zipfile.ZipFile(path).getinfo("doc.json")
    monkeypatch.setenv("STOPWISE_MAX_DECOMPRESSED_BYTES", "1000")
    with pytest.raises(LimitError, match=r"declares 60,027 bytes, past the limit of 1,000 \(STOPWISE_MAX_DECOMPRESSED_BYTES"):
        read_member(path, info)
    monkeypatch.delenv("STOPWISE_MAX_DECOMPRESSED_BYTES")
    info.CRC ^= 1
    with pytest.raises(FileFormatError, match="fails its CRC check"):
        read_member(path, info)
    info.CRC ^= 1
    info.compress_type = 99
    with pytest.raises(FileFormatError, match=r"method 99, which cannot be read \(readable: stored \(0\), deflate \(8\)"):
        read_member(path, info)
    info.compress_type, info.flag_bits = zipfile.ZIP_BZIP2, info.flag_bits | 0x1
    with pytest.raises(FileFormatError, match="is encrypted"):
        read_member(path, info)
    assert set(ZIP_METHODS) == {0, 8, 12, 14, 93}


def test_a_damaged_lzma_header_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_LZMA) as archive:
        archive.writestr("doc.json", DOC)
    info = zipfile.ZipFile(path).getinfo("doc.json")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len("doc.json")
    data[start + 4] = 250  # lc/lp/pb byte out of range
    path.write_bytes(bytes(data))
    with pytest.raises(FileFormatError, match="LZMA properties are not valid"):
        read_member(path, info)
