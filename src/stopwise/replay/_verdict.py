"""Whether a count of pairs above a + 2 SE is more than chance at that many pairs (issue 35).

A replay compares each pair's wrong-decision rate over K orders with a + 2 SE, SE = sqrt(a (1 - a) / K). A pair whose
true rate is exactly a lies above it with probability about 1 - Phi(2) = 2.3 %: among 1,722 pairs, about 39 by
chance alone. One exceedance is then no failure; a count far above its expectation is. :func:`exceedance_verdict`
compares the count with its expectation under "every pair at a" by the binomial upper tail (pairs that share tasks are
not independent, so the tail is an estimate, not a bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

__all__ = ["EXCEEDANCE_CHANCE", "ExceedanceVerdict", "exceedance_verdict"]

EXCEEDANCE_CHANCE = 1.0 - NormalDist().cdf(2.0)
"""Probability that a pair whose wrong-decision rate is exactly a lies above a + 2 SE (normal approximation)."""


@dataclass(frozen=True)
class ExceedanceVerdict:
    """The count of pairs above a + 2 SE against what chance gives at that many pairs."""

    over: int
    """Pairs above a + 2 SE."""
    pairs: int
    """Pairs compared."""
    expected: float
    """Pairs expected above it by chance if every pair's rate were exactly a."""
    p_value: float
    """Binomial upper tail P(X >= over), X ~ Bin(pairs, EXCEEDANCE_CHANCE): an estimate (pairs share tasks)."""
    within: bool
    """The count is consistent with chance (p_value > ``level``): no failure to report."""

    @property
    def text(self) -> str:
        """The verdict in words."""
        count = f"{self.over} of {self.pairs:,} pairs above a + 2 SE (about {self.expected:.1f} expected by chance at that many pairs"
        if self.within:
            return f"{count}; consistent with chance, p = {self.p_value:.2g})"
        return f"{count}; more than chance, p = {self.p_value:.2g})"


def _upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Bin(n, p), summed in log space (exact for the counts a replay has)."""
    if k <= 0:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q
        for i in range(k, n + 1)
    ]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def exceedance_verdict(over: int, pairs: int, *, level: float = 0.05) -> ExceedanceVerdict:
    """The multiplicity-aware verdict on ``over`` of ``pairs`` pairs above a + 2 SE.

    Examples
    --------
    >>> from stopwise.replay import exceedance_verdict
    >>> one, many = exceedance_verdict(1, 1722), exceedance_verdict(111, 1722)
    >>> one.within, round(one.expected, 1), many.within
    (True, 39.2, False)
    """
    if isinstance(over, bool) or not isinstance(over, int) or over < 0:
        raise ValueError(f"`over` must be a non-negative integer; got {over!r}")
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < over:
        raise ValueError(f"`pairs` must be an integer >= `over` ({over}); got {pairs!r}")
    p_value = _upper_tail(over, pairs, EXCEEDANCE_CHANCE)
    return ExceedanceVerdict(over, pairs, pairs * EXCEEDANCE_CHANCE, p_value, p_value > level)
