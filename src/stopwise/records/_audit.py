"""The pre-registered audit draw of live halting (issue 22): which runs are never halted.

A fraction rho of runs (policy ``[early] audit_fraction``) is drawn for audit: the monitor watches them
and records what it would have predicted, but they run to their end, so their true outcome is known.
The draw is a deterministic hash of the audit seed and the run's (system, task, attempt), so it is
fixed before the evaluation starts, reproducible by anyone holding the policy, and independent of every
outcome: each run is audited with probability rho whatever its trajectory, which is what makes the
prediction-powered correction of :mod:`stopwise.compare._predicted` unbiased.
"""

from __future__ import annotations

import hashlib
import math

from stopwise.errors import ArgumentError

__all__ = ["audit_draw", "is_audited"]


def audit_draw(
    seed: int, system: str, task: str, attempt: int, *, tested: str | None = None, coupling: str = "independent"
) -> float:
    """The run's uniform draw in [0, 1): the first 64 bits of sha256 of the seed and the run's key.

    The key is ``stopwise-audit``, the seed, the system, the task and the attempt (0-based), joined by
    U+001F. Different seeds give independent draws; a run keeps its draw however the evaluation is ordered.

    ``coupling = "antithetic"`` (``[early] audit_coupling``, issue 34) draws one uniform w per task and attempt (key
    ``stopwise-audit-pair``, the seed, the task and the attempt): the ``tested`` system's run gets w, every other
    system's 1 - w (in (0, 1]), so a task's two runs of a pair are audited together only when their audit
    probabilities sum above 1 (:class:`stopwise.compare._tuned.ActiveAudits`).

    Examples
    --------
    >>> from stopwise.records import audit_draw
    >>> round(audit_draw(0, "A", "t1", 0), 6) == round(audit_draw(0, "A", "t1", 0), 6)
    True
    >>> 0.0 <= audit_draw(7, "B", "t9", 2) < 1.0
    True
    >>> w = audit_draw(7, "A", "t9", 2, tested="A", coupling="antithetic")
    >>> audit_draw(7, "B", "t9", 2, tested="A", coupling="antithetic") == 1.0 - w
    True
    """
    if coupling == "independent":
        parts: tuple[str, ...] = ("stopwise-audit", str(int(seed)), str(system), str(task), str(int(attempt)))
    elif coupling == "antithetic" and isinstance(tested, str):
        parts = ("stopwise-audit-pair", str(int(seed)), str(task), str(int(attempt)))
    else:
        raise ArgumentError(
            f"audit_draw: `coupling` must be 'independent' or 'antithetic' (with `tested`); got {coupling!r}, {tested!r}"
        )
    key = "\x1f".join(parts)
    w = int.from_bytes(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:8], "big") / 2.0**64
    return w if coupling == "independent" or system == tested else 1.0 - w


def is_audited(fraction: float, seed: int, system: str, task: str, attempt: int) -> bool:
    """Whether the run is drawn for audit: ``audit_draw(seed, system, task, attempt) < fraction``.

    Examples
    --------
    >>> from stopwise.records import is_audited
    >>> is_audited(0.0, 0, "A", "t1", 0), is_audited(1.0, 0, "A", "t1", 0)
    (False, True)
    """
    if (
        isinstance(fraction, bool)
        or not isinstance(fraction, int | float)
        or not math.isfinite(fraction)
        or not 0.0 <= fraction <= 1.0
    ):
        raise ArgumentError(f"the audit fraction must be a number in [0, 1]; got {fraction!r}")
    return audit_draw(seed, system, task, attempt) < fraction
