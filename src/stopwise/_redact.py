"""Database URLs with their passwords hidden: the one helper for every URL a message, a line or a report shows.

A ledger URL (``postgresql+psycopg://user:password@host/db``, ``mysql://…``, ``sqlite://…``) may carry
a password. Anything stopwise prints, raises or writes shows it through :func:`redact_url`, which
replaces the password of every ``scheme://user:password@`` it finds in a text (and the value of a
``password=`` query parameter) with ``***``, as SQLAlchemy's ``render_as_string(hide_password=True)``
does. A text without one passes unchanged, so a plain path may go through it too.
"""

from __future__ import annotations

import os
import re

__all__ = ["HIDDEN", "redact_url"]

HIDDEN = "***"
"""What a hidden password reads as."""

# scheme (with an optional driver: postgresql+psycopg) :// user : password @ ; the password runs to the last "@"
# before white space (a password holding an unencoded "@" is hidden whole; at worst the host is hidden too).
_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@?#]*:)\S*@")
_QUERY = re.compile(r"([?&](?:password|passwd|pwd)=)[^&#\s'\"]*", re.IGNORECASE)


def redact_url(text: str | os.PathLike[str]) -> str:
    """``text`` with the password of every URL in it hidden.

    Examples
    --------
    >>> redact_url("postgresql+psycopg://eval:s3cret@db:5432/ledger")
    'postgresql+psycopg://eval:***@db:5432/ledger'
    >>> redact_url("ledger mysql://root:p@ss/w@localhost/db: database error")
    'ledger mysql://root:***@localhost/db: database error'
    >>> redact_url("postgresql://db/ledger?user=eval&password=s3cret")
    'postgresql://db/ledger?user=eval&password=***'
    >>> redact_url("sqlite:///runs/ledger.db")
    'sqlite:///runs/ledger.db'
    """
    shown = os.fspath(text)
    if "://" not in shown:
        return shown
    return _QUERY.sub(rf"\g<1>{HIDDEN}", _USERINFO.sub(rf"\g<1>{HIDDEN}@", shown))
