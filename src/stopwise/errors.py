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
    │   └── ComparisonError       a comparison that cannot be formed (system absent, no shared tasks)
    ├── ServiceError              the local replay service failed to start or stop
    └── LedgerError               a ledger cannot be opened, or refuses an operation (a changed policy,
                                  an unknown evaluation, an unreadable schema version)

Messages say what was wrong, where, and the likely fix. Nothing is written when one is raised.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ComparisonError",
    "CompletionArgumentError",
    "EffectsRecordError",
    "FileFormatError",
    "InputError",
    "LedgerError",
    "PolicyError",
    "Problem",
    "ServiceError",
    "StopwiseError",
    "TaskUniverseError",
    "ValidationError",
]


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


class ServiceError(StopwiseError):
    """The local replay service failed to start, answer or stop."""


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
        where = [self.file]
        if self.row is not None:
            where.append(f"row {self.row}" + (f" (line {self.line})" if self.line is not None else ""))
        if self.field is not None:
            where.append(f"field '{self.field}'")
        text = ", ".join(where) + f": {self.rule}"
        if self.value is not None:
            text += f"; got {self.value!r}"
        return text


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
