"""The ledger of a paired Inspect comparison: a database URL opened here, or a :class:`~stopwise.ledger.Ledger`.

The managers read the pairing state from the ledger (the decision chain, which tasks have a final
outcome of a system) and tell each other's workers their state through it (``notify``/``notices``,
``progress``), so that a worker process per system on one ledger, or a retried run, sees one
comparison. A test that needs a ledger to decide on cue subclasses :class:`~stopwise.ledger.Ledger`.
"""

from __future__ import annotations

import os

from stopwise._redact import redact_url
from stopwise.errors import InputError
from stopwise.ledger import Ledger

__all__ = ["LedgerArgument", "open_ledger_argument", "redact_url"]

LedgerArgument = str | os.PathLike[str] | Ledger
"""What the managers take as ``ledger``: a database URL or path (opened in ``create`` mode), or an opened ledger."""


def open_ledger_argument(ledger: LedgerArgument) -> tuple[Ledger, str]:
    """(the ledger, its URL with any password hidden) from a URL, a path or an opened :class:`Ledger`.

    Examples
    --------
    >>> from stopwise.inspect._ledger import open_ledger_argument
    >>> opened, name = open_ledger_argument("sqlite:///:memory:")
    >>> type(opened).__name__, name
    ('Ledger', 'sqlite:///:memory:')
    >>> open_ledger_argument(object())
    Traceback (most recent call last):
    ...
    stopwise.errors.InputError: `ledger` must be a database URL such as 'sqlite:///ledger.db' or a stopwise.ledger.Ledger; got object
    """
    if isinstance(ledger, Ledger):
        return ledger, redact_url(ledger.url)
    if isinstance(ledger, str | os.PathLike) and os.fspath(ledger).strip():
        from stopwise.ledger import open_ledger

        # the manager registers the evaluation: it may create the ledger
        return open_ledger(ledger, mode="create"), redact_url(os.fspath(ledger))
    shown = repr(ledger) if isinstance(ledger, str) else type(ledger).__name__
    raise InputError(
        f"`ledger` must be a database URL such as 'sqlite:///ledger.db' or a stopwise.ledger.Ledger; got {shown}"
    )
