"""Size limits on inputs, so that a small hostile file cannot exhaust memory or the stack.

Every limit has a default and an environment variable that overrides it (see docs/limits.md):

=====================================  ===========  =====================================================
environment variable                   default      bounds
=====================================  ===========  =====================================================
``STOPWISE_MAX_DECOMPRESSED_BYTES``    256 MiB      a decompressed stream (``.gz`` files) or zip member, and a
                                                    whole JSON document (checked before it is parsed)
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
    "check_file_size",
    "check_structure",
    "count_json_values",
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


def check_file_size(path: str | os.PathLike[str], what: str) -> None:
    """Refuse a file larger than ``STOPWISE_MAX_DECOMPRESSED_BYTES`` before it is read (a plain JSON document).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.json"
    >>> _ = p.write_text("{}")
    >>> check_file_size(p, str(p))
    """
    name = "STOPWISE_MAX_DECOMPRESSED_BYTES"
    cap = limit(name)
    try:
        size = os.stat(path).st_size
    except OSError:
        return  # the reader says what is wrong with the file
    if size > cap:
        raise LimitError(f"{what}: {size:,} bytes, past the limit of {cap:,} bytes for one document ({name}; raise it if the input is trusted)")


_SCAN_CHUNK = 1 << 21
_QUOTE, _BACKSLASH, _COMMA = ord('"'), ord("\\"), ord(",")
_OPEN_LIST, _CLOSE_LIST, _OPEN_OBJECT, _CLOSE_OBJECT = ord("["), ord("]"), ord("{"), ord("}")
_JSON_SPACE = (9, 10, 13, 32)


def count_json_values(text: str | bytes) -> int:
    r"""The values :func:`check_structure` would count in the JSON document ``text``, without parsing it.

    Every value is the root or a child of a non-empty container, and a container with k children holds
    k - 1 commas; so outside strings, the count is 1 + commas + containers - empty containers. The text
    is scanned in blocks of 2 MiB with NumPy (a quote after an odd run of backslashes is escaped; a mark
    is outside strings when an even number of quotes precede it), so the scan needs a few times the
    block, not a parse tree. Exact for valid JSON; for invalid JSON it is
    some number, and the parser then says what is wrong.

    Examples
    --------
    >>> count_json_values('{"a": [1, 2, {"b": "x,\\\\"}], "c": [], "d": "[,"}')
    8
    """
    import numpy as np  # here: the command line's start-up does not load NumPy

    space = np.zeros(256, dtype=bool)
    space[list(_JSON_SPACE)] = True
    structural = np.zeros(256, dtype=bool)
    structural[[_COMMA, _OPEN_LIST, _OPEN_OBJECT, _CLOSE_LIST, _CLOSE_OBJECT]] = True
    data = text.encode("utf-8") if isinstance(text, str) else text
    commas = opens = empties = 0
    inside = 0  # the previous block ended inside a string
    backslashes = 0  # backslashes ending the previous block
    before_block = -1  # the last non-space byte of the previous blocks
    for start in range(0, len(data), _SCAN_CHUNK):
        block = np.frombuffer(data, dtype=np.uint8, count=min(_SCAN_CHUNK, len(data) - start), offset=start)
        quotes = np.flatnonzero(block == _QUOTE)
        is_backslash = block == _BACKSLASH
        if backslashes or is_backslash.any():  # a quote after an odd run of backslashes is escaped
            last_plain = np.maximum.accumulate(np.where(is_backslash, -1, np.arange(len(block), dtype=np.int32)))
            before = np.maximum(quotes - 1, 0)
            run = np.where(quotes > 0, quotes - 1 - last_plain[before], 0)
            run += np.where((quotes == 0) | (last_plain[before] < 0), backslashes, 0)
            quotes = quotes[run % 2 == 0]
            end_plain = int(last_plain[-1])
            backslashes = len(block) - 1 - end_plain + (backslashes if end_plain < 0 else 0)
        marks = np.flatnonzero(structural[block])
        marks = marks[(np.searchsorted(quotes, marks, side="right") + inside) % 2 == 0]  # outside strings
        chars = block[marks]
        commas += int(np.count_nonzero(chars == _COMMA))
        opens += int(np.count_nonzero((chars == _OPEN_LIST) | (chars == _OPEN_OBJECT)))
        closers = marks[(chars == _CLOSE_LIST) | (chars == _CLOSE_OBJECT)]
        solid = np.flatnonzero(~space[block])
        if len(closers):  # an empty container: the byte before its closer (spaces aside) is its opener
            at = np.searchsorted(solid, closers) - 1
            previous = np.where(at >= 0, block[solid[np.maximum(at, 0)]], before_block)
            empties += int(np.count_nonzero(previous == np.where(block[closers] == _CLOSE_LIST, _OPEN_LIST, _OPEN_OBJECT)))
        inside = (inside + len(quotes)) % 2
        if len(solid):
            before_block = int(block[solid[-1]])
    return 1 + commas + opens - empties


def _unique_keys(what: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """An ``object_pairs_hook`` refusing a key repeated in one object (JSON readers would keep the last value)."""

    def pairs_to_dict(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            seen: set[str] = set()
            repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
            from stopwise.errors import FileFormatError, shown

            raise FileFormatError(
                f"{what}: key {shown(repeated)} appears more than once in one JSON object; a repeated key is ambiguous "
                "(readers keep one of the values), so the document is refused: keep one"
            )
        return result

    return pairs_to_dict


def json_loads(text: str | bytes, what: str) -> Any:
    """``json.loads`` with the size, nesting and value-count limits, refusing repeated keys.

    A document longer than ``STOPWISE_MAX_DECOMPRESSED_BYTES`` is refused before it is parsed, and so
    is one of more than ``STOPWISE_MAX_NODES`` values (:func:`count_json_values`, done only on
    documents long enough to hold that many); a too-deep document is a :class:`LimitError`; a key
    repeated in one object is a :class:`~stopwise.errors.FileFormatError` naming ``what`` and the key.
    Raises ``json.JSONDecodeError`` (a ``ValueError``) for invalid JSON, as ``json.loads`` does.

    Examples
    --------
    >>> json_loads('{"a": [1]}', "<doc>")
    {'a': [1]}
    >>> json_loads('{"a": 1, "a": 2}', "run.json")
    Traceback (most recent call last):
    ...
    stopwise.errors.FileFormatError: run.json: key 'a' appears more than once in one JSON object; ...
    """
    name = "STOPWISE_MAX_DECOMPRESSED_BYTES"
    cap = limit(name)
    if len(text) > cap:
        raise LimitError(f"{what}: {len(text):,} bytes, past the limit of {cap:,} bytes for one document ({name}; raise it if the input is trusted)")
    max_nodes = limit("STOPWISE_MAX_NODES")
    if len(text) >= 2 * max_nodes - 1 and count_json_values(text) > max_nodes:  # n values take at least 2n - 1 bytes
        raise LimitError(f"{what}: holds more than {max_nodes:,} values (STOPWISE_MAX_NODES; raise it if the input is trusted)")
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys(what))
    except RecursionError:
        raise LimitError(
            f"{what}: nested too deeply to parse (STOPWISE_MAX_DEPTH is {limit('STOPWISE_MAX_DEPTH')})"
        ) from None
    return check_structure(value, what)
