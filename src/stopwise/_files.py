"""Reading a whole text file with one clear error: the one helper for "read the file or raise"."""

from __future__ import annotations

import os
from pathlib import Path

from stopwise.errors import FileFormatError

__all__ = ["read_text"]


def read_text(path: str | os.PathLike[str], what: str, *, encoding: str = "utf-8") -> str:
    """The text of ``path``; a :class:`~stopwise.errors.FileFormatError` naming it otherwise.

    Parameters
    ----------
    path : path-like
        The file.
    what : str
        What the file should be, for messages (``"policy file"``, ``"completion argument"``).
    encoding : str, optional
        ``utf-8`` (default) or ``utf-8-sig`` to drop a byte-order mark.

    Examples
    --------
    >>> from stopwise._files import read_text
    >>> read_text("/nonexistent/p.toml", "policy file")
    Traceback (most recent call last):
    ...
    stopwise.errors.FileFormatError: /nonexistent/p.toml: no such policy file
    """
    file = Path(path)
    try:
        return file.read_text(encoding=encoding)
    except FileNotFoundError:
        raise FileFormatError(f"{file}: no such {what}") from None
    except IsADirectoryError:
        raise FileFormatError(f"{file}: is a directory, expected a {what}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"{file}: cannot be read: {exc}") from None
