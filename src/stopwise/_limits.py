"""Size limits on inputs, so that a small hostile file cannot exhaust memory or the stack.

Every limit has a default and an environment variable that overrides it (see docs/limits.md):

=====================================  ===========  =====================================================
environment variable                   default      bounds
=====================================  ===========  =====================================================
``STOPWISE_MAX_DECOMPRESSED_BYTES``    256 MiB      a decompressed stream (``.gz`` files) or zip member
``STOPWISE_MAX_LINE_BYTES``            16 MiB       one line of a JSONL file (a trajectory, a run)
``STOPWISE_MAX_DEPTH``                 64           nesting of a JSON, TOML or YAML document
``STOPWISE_MAX_NODES``                 1,000,000    values in one JSON/TOML/YAML document, counting every
                                                    use of a YAML alias (so "billion laughs" stops early)
=====================================  ===========  =====================================================

Exceeding one raises :class:`~stopwise.errors.LimitError` (exit code 4) naming the file, the limit,
the variable that raises it, and how far the input went.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from stopwise.errors import InputError, LimitError

__all__ = [
    "LIMIT_DEFAULTS",
    "bounded_read",
    "check_structure",
    "gunzip_bytes",
    "json_loads",
    "limit",
    "read_lines",
]

LIMIT_DEFAULTS: dict[str, int] = {
    "STOPWISE_MAX_DECOMPRESSED_BYTES": 256 * 2**20,
    "STOPWISE_MAX_LINE_BYTES": 16 * 2**20,
    "STOPWISE_MAX_DEPTH": 64,
    "STOPWISE_MAX_NODES": 1_000_000,
}
_CHUNK = 1 << 20


def limit(name: str) -> int:
    """The current value of limit ``name`` (its environment variable, else its default).

    Examples
    --------
    >>> limit("STOPWISE_MAX_DEPTH")
    64
    """
    default = LIMIT_DEFAULTS[name]
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise InputError(f"environment variable {name} must be a positive integer; got {text[:40]!r}") from None
    if value < 1:
        raise InputError(f"environment variable {name} must be a positive integer; got {value}")
    return value


def _too_big(what: str, name: str, cap: int) -> LimitError:
    return LimitError(f"{what}: exceeds the limit of {cap:,} bytes ({name}; raise it if the input is trusted)")


def bounded_read(read: Callable[[int], bytes], what: str, *, name: str = "STOPWISE_MAX_DECOMPRESSED_BYTES") -> bytes:
    """Read a stream to its end through ``read(n)``, refusing more than ``limit(name)`` bytes.

    Examples
    --------
    >>> import io
    >>> bounded_read(io.BytesIO(b"abc").read, "<bytes>")
    b'abc'
    """
    cap = limit(name)
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = read(min(_CHUNK, cap + 1 - total))
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > cap:
            raise _too_big(what, name, cap)
        parts.append(chunk)


def gunzip_bytes(path: Path) -> bytes:
    """The decompressed content of a gzip file, refused past ``STOPWISE_MAX_DECOMPRESSED_BYTES``.

    Examples
    --------
    >>> import gzip, pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.gz"
    >>> _ = p.write_bytes(gzip.compress(b"hello"))
    >>> gunzip_bytes(p)
    b'hello'
    """
    try:
        with gzip.open(path, "rb") as handle:
            return bounded_read(handle.read, f"{path} (decompressed)")
    except (OSError, EOFError, zlib.error) as exc:
        from stopwise.errors import FileFormatError

        raise FileFormatError(f"{path}: cannot be decompressed as gzip ({exc})") from exc


def read_lines(handle: IO[bytes], what: str) -> Iterator[tuple[int, bytes]]:
    r"""Yield ``(line_number, line)`` of a binary stream, refusing a line past ``STOPWISE_MAX_LINE_BYTES``.

    Examples
    --------
    >>> import io
    >>> list(read_lines(io.BytesIO(b"a\nbb\n"), "<lines>"))
    [(1, b'a\n'), (2, b'bb\n')]
    """
    cap = limit("STOPWISE_MAX_LINE_BYTES")
    number = 0
    while True:
        line = handle.readline(cap + 1)
        if not line:
            return
        number += 1
        if len(line) > cap and not (len(line) == cap + 1 and line.endswith(b"\n")):
            raise LimitError(
                f"{what}, line {number}: longer than the limit of {cap:,} bytes "
                "(STOPWISE_MAX_LINE_BYTES; raise it if the input is trusted)"
            )
        yield number, line


def check_structure(value: Any, what: str) -> Any:
    """Refuse a parsed document that is too deep or too large; return ``value``.

    Too deep: nested deeper than ``STOPWISE_MAX_DEPTH``; too large: more than ``STOPWISE_MAX_NODES``
    values (every use of a shared value counted).

    The walk is iterative and stops at the first limit, so it is cheap on any input.

    Examples
    --------
    >>> check_structure({"a": [1, 2, {"b": 3}]}, "<doc>")
    {'a': [1, 2, {'b': 3}]}
    """
    max_depth, max_nodes = limit("STOPWISE_MAX_DEPTH"), limit("STOPWISE_MAX_NODES")
    stack: list[tuple[Any, int]] = [(value, 1)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise LimitError(
                f"{what}: holds more than {max_nodes:,} values, counting every use of a shared (aliased) "
                "value (STOPWISE_MAX_NODES; raise it if the input is trusted)"
            )
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= max_depth and len(children):
            raise LimitError(
                f"{what}: nested deeper than {max_depth} levels (STOPWISE_MAX_DEPTH; raise it if the input is trusted)"
            )
        stack.extend((child, depth + 1) for child in children)
    return value


def json_loads(text: str | bytes, what: str) -> Any:
    """``json.loads`` with the nesting and size limits; a too-deep document is a :class:`LimitError`.

    Raises ``json.JSONDecodeError`` (a ``ValueError``) for invalid JSON, as ``json.loads`` does.

    Examples
    --------
    >>> json_loads('{"a": [1]}', "<doc>")
    {'a': [1]}
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise LimitError(
            f"{what}: nested too deeply to parse (STOPWISE_MAX_DEPTH is {limit('STOPWISE_MAX_DEPTH')})"
        ) from None
    return check_structure(value, what)
