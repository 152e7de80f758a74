"""A harness's JSON file, parsed with stopwise's limits: the one reader of whole JSON logs and result files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stopwise._limits import check_file_size, json_loads
from stopwise.errors import FileFormatError

__all__ = ["load_json"]


def load_json(path: Path) -> Any:
    """Parse a JSON file or raise :class:`FileFormatError` naming the file and the place."""
    if not path.exists():
        raise FileFormatError(f"{path}: no such file")
    if path.stat().st_size == 0:
        raise FileFormatError(f"{path}: the file is empty")
    check_file_size(path, str(path))  # STOPWISE_MAX_DECOMPRESSED_BYTES, before a byte is read
    try:
        with open(path, "rb") as handle:
            return json_loads(handle.read(), str(path))
    except json.JSONDecodeError as exc:
        raise FileFormatError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"{path}: cannot be read as UTF-8 JSON: {exc}") from exc
