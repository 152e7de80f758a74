r"""Canonical JSON: the one text form every digest of stopwise is taken over.

Sorted keys, no whitespace, ASCII only (other characters as ``\u`` escapes), floats as Python's
shortest ``repr`` and no NaN or infinity (they are not JSON). The policy digest, the task universe and
planned-order digests, the ledger's event, registration and chain digests all hash these bytes; a
change here changes every stored digest (``tests/test_golden_records.py`` and ``ledger verify`` of
existing ledgers would fail).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["canonical_json"]


def canonical_json(value: Any, *, allow_nan: bool = False) -> str:
    r"""``value`` as canonical JSON: sorted keys, no whitespace, ASCII only, no NaN.

    Parameters
    ----------
    value : object
        Plain JSON values (dicts with string keys, lists, strings, numbers, booleans, None).
    allow_nan : bool, optional
        Write a non-finite float as ``NaN`` / ``Infinity`` (JavaScript, not JSON) instead of raising.
        Only for text that names something and is never hashed (``stopwise ingest``'s ``{kwargs.NAME}``
        of a harness whose settings hold a NaN); a digest never takes it.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        A non-finite float, unless ``allow_nan``.

    Examples
    --------
    >>> canonical_json({"b": 1.0, "a": [None, "é"]})
    '{"a":[null,"\\u00e9"],"b":1.0}'
    >>> canonical_json({"x": float("nan")}, allow_nan=True)
    '{"x":NaN}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=allow_nan)
