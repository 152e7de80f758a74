"""Errors of the finality level.

Both are :class:`stopwise.errors.ValidationError` subclasses, so the CLI turns them into exit
code 4 and callers that catch ``InputError`` or ``ValidationError`` catch them too::

    ValidationError
    ├── CompletionArgumentError   a completion-argument document breaks its schema or its rules
    └── EffectsRecordError        an open-effects record (file or lifecycle call) breaks its rules

Every problem names the file (or ``<record>`` for an in-memory record), the field, the rule
and the offending value.
"""

from __future__ import annotations

from stopwise.errors import Problem, ValidationError

__all__ = ["CompletionArgumentError", "EffectsRecordError"]


def _message(what: str, problems: list[Problem], shown: int) -> str:
    lines = [str(p) for p in problems[:shown]]
    more = len(problems) - shown
    if more > 0:
        lines.append(f"... and {more} more problem{'s' if more != 1 else ''}")
    header = f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in the {what}:"
    return header + "\n  " + "\n  ".join(lines)


class CompletionArgumentError(ValidationError):
    """A completion-argument document breaks its schema or one of its consistency rules.

    Parameters
    ----------
    problems : list of Problem
        Every problem found, each naming the file, the field (``routes[1].handling``), the
        rule and the value.
    shown : int, optional
        How many problems the message spells out.
    """

    def __init__(self, problems: list[Problem], shown: int = 20) -> None:
        super().__init__(problems, shown)
        self.args = (_message("completion argument", self.problems, shown),)


class EffectsRecordError(ValidationError):
    """An open-effects record breaks its rules (when read from a file or updated in memory).

    Parameters
    ----------
    problems : list of Problem
        Every problem found, each naming the file (``<record>`` in memory), the field, the rule
        and the value.
    shown : int, optional
        How many problems the message spells out.
    """

    def __init__(self, problems: list[Problem], shown: int = 20) -> None:
        super().__init__(problems, shown)
        self.args = (_message("open-effects record", self.problems, shown),)
