"""Errors of the finality level (defined with every other error in :mod:`stopwise.errors`).

Both are :class:`stopwise.errors.ValidationError` subclasses, so the CLI turns them into exit
code 4 and callers that catch ``InputError`` or ``ValidationError`` catch them too.
"""

from stopwise.errors import CompletionArgumentError, EffectsRecordError

__all__ = ["CompletionArgumentError", "EffectsRecordError"]
