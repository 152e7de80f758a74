"""Signals read from what the environment answered: tool errors, error types and test results.

The rules are plain substring and number patterns on the lowercased observation, chosen to work across
harnesses: Python tracebacks, MCP ``[isError]`` flags, HTTP status objects, SQL ``Error:`` lines,
pytest / unittest / jest summaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ERROR_KINDS", "FeedbackSignals", "read_feedback"]

ERROR_KINDS: tuple[str, ...] = (
    "traceback",
    "assertion",
    "type",
    "value",
    "syntax",
    "import",
    "not_found",
    "timeout",
    "permission",
)
"""The error types recognised in observations, in feature order."""

_MARKERS: dict[str, tuple[str, ...]] = {
    "traceback": ("traceback (most recent call last)",),
    "assertion": ("assertionerror", "assertion failed", "assert failed"),
    "type": ("typeerror",),
    "value": ("valueerror",),
    "syntax": ("syntaxerror", "syntax error"),
    "import": ("importerror", "modulenotfounderror", "no module named"),
    "not_found": ("filenotfounderror", "no such file or directory", "enoent", "does not exist", "not found"),
    "timeout": ("timed out", "timeouterror", "timeout expired", "deadline exceeded"),
    "permission": ("permission denied", "permissionerror", "forbidden", "not authorized", "unauthorized", "access denied"),
}
_ERROR_PREFIXES = ("[iserror]", "[error]", "error", "failed", "failure", "exception", "fatal")
_ERROR_HEAD = re.compile(
    r'"(?:iserror|is_error)"\s*:\s*true|"success"\s*:\s*false|"status(?:_code)?"\s*:\s*"?[45]\d\d\b|"error"\s*:\s*[{"]'
)
_COUNTS = re.compile(r"(\d+)\s+(passed|failed|errors?)\b")
_UNITTEST = re.compile(r"failed \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?")
_RAN = re.compile(r"\bran (\d+) tests?\b")


@dataclass(frozen=True)
class FeedbackSignals:
    """What one observation says.

    Attributes
    ----------
    has_output : bool
        The observation is not blank.
    tool_error : bool
        The tool call failed (error flag, error prefix, HTTP 4xx/5xx status, or a traceback).
    errors : frozenset of str
        The :data:`ERROR_KINDS` seen in the observation.
    tests_passed : int or None
        Passed-test count of a test summary, when one is present.
    tests_failed : int or None
        Failed (plus erroring) test count of a test summary, when one is present.
    """

    has_output: bool
    tool_error: bool
    errors: frozenset[str]
    tests_passed: int | None
    tests_failed: int | None

    @property
    def test_summary(self) -> bool:
        """Whether a test summary with counts was found."""
        return self.tests_passed is not None or self.tests_failed is not None


def read_feedback(observation: str, lowered: str | None = None) -> FeedbackSignals:
    """Read error and test signals from one observation.

    Parameters
    ----------
    observation : str
        What the environment returned.
    lowered : str, optional
        ``observation.lower()``, when the caller already has it.

    Examples
    --------
    >>> s = read_feedback("===== 3 passed, 1 failed in 0.2s =====")
    >>> (s.tests_passed, s.tests_failed, s.tool_error)
    (3, 1, False)
    >>> sorted(read_feedback("[isError] ModuleNotFoundError: No module named 'x'").errors)
    ['import']
    """
    low = observation.lower() if lowered is None else lowered
    head = low[:400].lstrip()
    errors = frozenset(kind for kind, markers in _MARKERS.items() if any(m in low for m in markers))
    tool_error = head.startswith(_ERROR_PREFIXES) or bool(_ERROR_HEAD.search(head)) or "traceback" in errors
    passed: int | None = None
    failed: int | None = None
    if "passed" in low or "failed" in low or " error" in low:
        counts = _COUNTS.findall(low[-3000:])
        if counts:
            passed = sum(int(n) for n, word in counts if word == "passed")
            failed = sum(int(n) for n, word in counts if word != "passed")
    if passed is None and "ran " in low:
        ran = _RAN.search(low)
        if ran:
            total = int(ran.group(1))
            bad = _UNITTEST.search(low)
            failed = (int(bad.group(1) or 0) + int(bad.group(2) or 0)) if bad else 0
            passed = max(total - failed, 0)
    return FeedbackSignals(bool(observation.strip()), tool_error, errors, passed, failed)
