"""Zip members read with a hard bound on what they decompress to, whatever their compression method.

``zipfile`` asks the bzip2 and LZMA decompressors for *all* the output of each compressed chunk it
reads, so a member of a few hundred bytes that declares a small size can still expand to gigabytes
before ``zipfile`` stops at the declared size. Here every method is decompressed by this module
with an output bound (``max_length``): at most ``min(declared size, STOPWISE_MAX_DECOMPRESSED_BYTES)``
plus one byte is ever produced, and a member that decompresses past its declared size is refused.

===========  ======  ====================================================================
method       number  read with
===========  ======  ====================================================================
stored       0       the bytes themselves
deflate      8       :class:`zlib.decompressobj` (raw deflate) with ``max_length``
bzip2        12      :class:`bz2.BZ2Decompressor` with ``max_length``
LZMA         14      :class:`lzma.LZMADecompressor` (raw LZMA1, properties from the member's
                     own header) with ``max_length``
Zstandard    93      ``zstandard``'s stream reader, read in bounded chunks
===========  ======  ====================================================================

Any other method, and encrypted members, are refused with a :class:`~stopwise.errors.FileFormatError`.
Every member's CRC-32 is checked.
"""

from __future__ import annotations

import bz2
import lzma
import struct
import zipfile
import zlib
from pathlib import Path

from stopwise._limits import limit
from stopwise.errors import FileFormatError, LimitError

__all__ = ["ZIP_METHODS", "ZIP_ZSTANDARD", "read_member", "zip_member", "zstd_member"]

ZIP_ZSTANDARD = 93
"""Zip compression method number of Zstandard (what recent Inspect ``.eval`` logs use)."""

ZIP_METHODS: dict[int, str] = {0: "stored", 8: "deflate", 12: "bzip2", 14: "LZMA", ZIP_ZSTANDARD: "Zstandard"}
"""The zip compression methods stopwise reads (number: name); each is decompressed with a bound."""

_NAME = "STOPWISE_MAX_DECOMPRESSED_BYTES"
_CHUNK = 1 << 20


def _raw(path: Path, info: zipfile.ZipInfo, budget: int) -> bytes:
    """The member's compressed bytes, located through its local header; at most ``budget`` bytes."""
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        local = handle.read(30)
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            raise FileFormatError(f"{path}: member {info.filename} has no valid local header")
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        handle.seek(info.header_offset + 30 + name_length + extra_length)
        return handle.read(min(info.compress_size, budget))


def _lzma(data: bytes, bound: int, what: str) -> tuple[lzma.LZMADecompressor, bytes]:
    """A raw LZMA1 decompressor set from the zip LZMA header (version, properties size, properties).

    The declared dictionary is cut to the output bound (no match reaches further back than the
    output produced), so a hostile header cannot make the decoder allocate gigabytes.
    """
    if len(data) < 9:
        raise FileFormatError(f"{what} is damaged (its LZMA header is truncated)")
    (size,) = struct.unpack("<H", data[2:4])
    props = data[4 : 4 + size]
    if size != 5 or len(props) != 5 or props[0] >= 9 * 5 * 5:
        raise FileFormatError(f"{what} is damaged (its LZMA properties are not valid)")
    lc, rest = props[0] % 9, props[0] // 9
    lp, pb = rest % 5, rest // 5
    (dict_size,) = struct.unpack("<I", props[1:5])
    dict_size = max(min(dict_size, bound), 4096)  # liblzma's smallest dictionary is 4 KiB
    filters = [{"id": lzma.FILTER_LZMA1, "dict_size": dict_size, "lc": lc, "lp": lp, "pb": pb}]
    return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters), data[4 + size :]


def _zstd(data: bytes, bound: int, what: str) -> bytes:
    try:
        import zstandard
    except ImportError:  # pragma: no cover - depends on the environment
        raise FileFormatError(
            f"{what}: compressed with Zstandard, which needs Python 3.14+ or the `zstandard` package (pip install zstandard)"
        ) from None
    import io

    parts: list[bytes] = []
    total = 0
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
        while total < bound and (chunk := reader.read(min(_CHUNK, bound - total))):
            parts.append(chunk)
            total += len(chunk)
    except zstandard.ZstdError as exc:
        raise FileFormatError(f"{what} is damaged ({exc})") from exc
    return b"".join(parts)


def _decompress(method: int, data: bytes, bound: int, what: str) -> bytes:
    """At most ``bound`` bytes of the member's content (``data``: its compressed bytes)."""
    try:
        if method == 0:
            return data[:bound]
        if method == 8:
            return zlib.decompressobj(-15).decompress(data, bound)
        if method == 12:
            return bz2.BZ2Decompressor().decompress(data, max_length=bound)
        if method == 14:
            decompressor, body = _lzma(data, bound, what)
            return decompressor.decompress(body, max_length=bound)
    except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        raise FileFormatError(f"{what} is damaged ({exc})") from exc
    return _zstd(data, bound, what)


def read_member(path: Path, info: zipfile.ZipInfo) -> bytes:
    """The content of one zip member, decompressed with a hard bound on its size.

    At most ``min(declared size, STOPWISE_MAX_DECOMPRESSED_BYTES) + 1`` bytes are ever produced,
    for every method; then the size and the CRC-32 must match what the archive declares.

    Raises
    ------
    LimitError
        The member declares, or decompresses to, more than ``STOPWISE_MAX_DECOMPRESSED_BYTES``.
    FileFormatError
        The member is encrypted, uses another compression method, is damaged, or decompresses
        to a size or CRC other than the archive declares.

    Examples
    --------
    >>> import bz2, pathlib, tempfile, zipfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.zip"
    >>> with zipfile.ZipFile(p, "w", compression=zipfile.ZIP_BZIP2) as z:
    ...     z.writestr("a.json", b'{"a": 1}')
    >>> read_member(p, zipfile.ZipFile(p).getinfo("a.json"))
    b'{"a": 1}'
    """
    what = f"{path}: member {info.filename}"
    if info.flag_bits & 0x1:
        raise FileFormatError(f"{what} is encrypted; stopwise reads only unencrypted logs")
    if info.compress_type not in ZIP_METHODS:
        known = ", ".join(f"{name} ({number})" for number, name in ZIP_METHODS.items())
        raise FileFormatError(f"{what} uses zip compression method {info.compress_type}, which cannot be read (readable: {known})")
    cap = limit(_NAME)
    if info.file_size > cap:
        raise LimitError(f"{what}: declares {info.file_size:,} bytes, past the limit of {cap:,} ({_NAME}; raise it if the input is trusted)")
    bound = info.file_size + 1
    data = _raw(path, info, budget=cap + (cap >> 4) + (1 << 16))  # incompressible data grows a little when compressed
    out = _decompress(info.compress_type, data, bound, what)
    if len(out) > info.file_size:
        raise FileFormatError(
            f"{what}: decompresses past its declared size of {info.file_size:,} bytes (a damaged or hostile archive); "
            f"refused before reading further"
        )
    if len(out) < info.file_size:
        raise FileFormatError(f"{what} is damaged (it decompresses to {len(out):,} of its declared {info.file_size:,} bytes)")
    if zlib.crc32(out) != info.CRC:
        raise FileFormatError(f"{what} fails its CRC check (a damaged or truncated log)")
    return out


def zip_member(archive: zipfile.ZipFile, path: Path, name: str) -> bytes:
    """Member ``name`` of the open ``archive`` at ``path``, read with :func:`read_member`."""
    return read_member(path, archive.getinfo(name))


def zstd_member(path: Path, info: zipfile.ZipInfo) -> bytes:
    """A Zstandard member (zip method 93), read with :func:`read_member`."""
    return read_member(path, info)

