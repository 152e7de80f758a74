"""Every exception stopwise raises on purpose.

The class tree::

    StopwiseError                 base of everything below; the CLI turns it into exit code 4
    ├── InputError                bad input that the user can fix (a file, a document, an argument)
    │   ├── FileFormatError       a file that cannot be read at all (missing, unreadable, empty, unknown format)
    │   ├── ValidationError       a file that was read but breaks the contract; lists each problem
    │   │   │                     with file, row, field, rule and value
    │   │   ├── CompletionArgumentError   a completion argument document (stopwise.finality)
    │   │   └── EffectsRecordError        an open-effects record (stopwise.finality)
    │   ├── PolicyError           a policy document that breaks the policy schema
    │   ├── ArgumentError         an argument of a function out of its range (also a ValueError)
    │   ├── LimitError            an input past a documented size limit (docs/limits.md)
    │   ├── OutputExistsError     an output that exists and may not be replaced (use --force)
    │   └── ComparisonError       a comparison that cannot be formed (system absent, no shared tasks)
    ├── ServiceError              the local replay service failed to start or stop
    ├── MissingExtraError         an optional capability whose extra is not installed (also an ImportError);
    │                             the message is the install hint: pip install 'stopwise[early]'
    └── LedgerError               a ledger cannot be opened, or refuses an operation (a changed policy,
                                  an unknown evaluation, an unreadable schema version)

Messages say what was wrong, where, and the likely fix. Nothing is written when one is raised.
A value quoted in a message goes through :func:`shown` (shortened, control characters escaped), and
the command line escapes the whole message once more (:func:`terminal_text`: control characters escaped,
database passwords hidden) before printing it. Both helpers live in :mod:`stopwise._text`.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass

from stopwise._text import MAX_LINE_CHARS as MAX_LINE_CHARS  # re-exported: the limit of terminal_text
from stopwise._text import escape_text, terminal_text

__all__ = [
    "ArgumentError",
    "ComparisonError",
    "CompletionArgumentError",
    "EffectsRecordError",
    "FileFormatError",
    "InputError",
    "LedgerError",
    "LimitError",
    "MissingExtraError",
    "OutputExistsError",
    "PolicyError",
    "Problem",
    "ServiceError",
    "StopwiseError",
    "TaskUniverseError",
    "ValidationError",
    "escape_text",
    "shown",
    "terminal_text",
]

MAX_SHOWN_CHARS = 200
"""How many characters of an offending value a message quotes (the rest is summarised)."""

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple, _REPR.maxset = 3, 6, 6, 6, 6
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = MAX_SHOWN_CHARS
_REPR.maxfrozenset = _REPR.maxdeque = _REPR.maxarray = 6


class Shown(str):
    """Text already in the form :func:`shown` gives (a message quotes it as is)."""


def shown(value: object, limit: int = MAX_SHOWN_CHARS) -> str:
    r"""The value as a message quotes it: a bounded ``repr``, shortened and with control characters escaped.

    Text longer than ``limit`` characters keeps its start and says how long it was; containers are
    summarised (a few items, a few levels), so that quoting a huge or deeply nested value costs
    little.

    Examples
    --------
    >>> shown("A" * 1000)[-30:]
    "AAAAAAAA'... (1000 characters)"
    >>> shown("evil\x1b[2J")
    "'evil\\x1b[2J'"
    """
    if isinstance(value, Shown):
        return escape_text(str(value), keep_newlines=False)
    if isinstance(value, str | bytes):
        head = value[:limit]
        text = repr(head)
        if len(value) > limit:
            text += f"... ({len(value)} {'characters' if isinstance(value, str) else 'bytes'})"
    else:
        text = _REPR.repr(value)
        if len(text) > limit:
            text = text[:limit] + "..."
    return escape_text(text, keep_newlines=False)


class StopwiseError(Exception):
    """Base class of every error stopwise raises on purpose."""


class InputError(StopwiseError):
    """Input the user can fix: a file, a document or an argument breaks a rule."""


class FileFormatError(InputError):
    """A file cannot be read at all: missing, unreadable, empty or of an unknown format."""


class PolicyError(InputError):
    """A policy document breaks the policy schema."""


class ComparisonError(InputError):
    """A comparison cannot be formed from the data (a system is absent, no tasks are shared)."""


class ArgumentError(InputError, ValueError):
    """An argument of a library function is out of its range (a count, a fraction, a name).

    Also a :class:`ValueError`, so code written against plain ``ValueError`` keeps working.
    """


class LimitError(InputError):
    """An input goes past a size limit (decompressed bytes, line length, nesting depth, values).

    Every limit is documented in docs/limits.md and overridable by an environment variable.
    """


class OutputExistsError(InputError):
    """An output path exists and may not be replaced (pass ``--force``), or is not stopwise's to replace."""


class ServiceError(StopwiseError):
    """The local replay service failed to start, answer or stop."""


class MissingExtraError(StopwiseError, ImportError):
    """An optional capability is used whose extra is not installed; the message is the one-line install hint.

    Also an :class:`ImportError` (``name`` is the missing module), so code that guards an import with
    ``except ImportError`` keeps working. The command line prints the message and exits with code 4.

    Parameters
    ----------
    extra : str
        The extra that provides the capability (``early``, ``service``, ``inspect``, ``postgres``).
    feature : str
        What needs it, as the user named it (``stopwise early``, ``a PostgreSQL ledger``).
    module : str, optional
        The module that could not be imported.

    Examples
    --------
    >>> str(MissingExtraError("early", "stopwise early", "lightgbm"))
    "stopwise early needs the [early] extra: pip install 'stopwise[early]'"
    """

    def __init__(self, extra: str, feature: str, module: str | None = None) -> None:
        super().__init__(f"{feature} needs the [{extra}] extra: pip install 'stopwise[{extra}]'")
        self.extra = extra
        """The extra to install."""
        self.feature = feature
        """What needs it."""
        self.name = module


class LedgerError(StopwiseError):
    """A ledger cannot be opened or refuses an operation (stopwise.ledger).

    Raised for an unreachable or unreadable database, an evaluation registered again with a different
    policy, task universe or systems, an unknown evaluation, or outcome rows that do not belong to
    the evaluation. Nothing of the refused operation is stored.
    """


@dataclass(frozen=True)
class Problem:
    """One broken rule at one place of an input file.

    Attributes
    ----------
    file : str
        The file (or ``"<DataFrame>"``) the value came from.
    row : int | None
        1-based data row (the header is not counted); ``None`` for a file-level problem.
    field : str | None
        The column or field name; ``None`` for a whole-row problem.
    rule : str
        The rule that the value breaks, phrased as "must ...".
    value : object
        The offending value as read.
    line : int | None
        The 1-based line in a text file, when it differs from the row.
    """

    file: str
    row: int | None
    field: str | None
    rule: str
    value: object = None
    line: int | None = None

    def __str__(self) -> str:
        """The problem as one line: ``file, row R (line L), field 'F': rule; got value``, with the parts that are known."""
        where = [self.file]
        if self.row is not None:
            where.append(f"row {self.row}" + (f" (line {self.line})" if self.line is not None else ""))
        if self.field is not None:
            where.append(f"field '{self.field}'")
        text = ", ".join(where) + f": {self.rule}"
        if self.value is not None:
            text += f"; got {shown(self.value)}"
        return escape_text(text)


class ValidationError(InputError):
    """A file (or document, or record) was read but breaks its contract.

    Parameters
    ----------
    problems : list of Problem
        Every problem found; the message lists the first ``shown`` of them.
    shown : int, optional
        How many problems the message spells out.
    """

    subject = "input"
    """What the message calls the thing that was read."""

    def __init__(self, problems: list[Problem], shown: int = 20) -> None:
        if not problems:
            raise ValueError(f"{type(self).__name__} needs at least one problem")
        self.problems = list(problems)
        lines = [str(p) for p in self.problems[:shown]]
        more = len(self.problems) - shown
        if more > 0:
            lines.append(f"... and {more} more problem{'s' if more != 1 else ''}")
        header = f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''} in the {self.subject}:"
        super().__init__(header + "\n  " + "\n  ".join(lines))


class CompletionArgumentError(ValidationError):
    """A completion-argument document breaks its schema or one of its consistency rules.

    Every problem names the file, the field (``routes[1].handling``), the rule and the value.
    """

    subject = "completion argument"


class EffectsRecordError(ValidationError):
    """An open-effects record breaks its rules (read from a file or updated in memory).

    Every problem names the file (``<record>`` in memory), the field, the rule and the value.
    """

    subject = "open-effects record"


class TaskUniverseError(ValidationError):
    """A task universe (tasks file, ``stopwise order`` output or counts) breaks its rules.

    Every problem names the file (``<counts>`` or ``<tasks>`` in memory), row, field, rule and value.
    """

    subject = "task universe"
