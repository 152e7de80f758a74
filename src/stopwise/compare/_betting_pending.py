"""PRIVATE PLACEHOLDER, to be deleted when ``compare/_betting.py`` (the betting math) is merged.

It has the signature of the real :func:`betting_boundary` and never crosses (both p-values are 1),
so a ``betting-wor`` policy can only continue or abstain until the real boundary is in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class BettingBoundary:
    """The fields of the real result that decide reads."""

    p_promote: float
    p_reject: float
    n: int
    population_size: int
    method: str


def betting_boundary(
    differences: ArrayLike,
    threshold: float,
    *,
    population_size: int,
    alpha: float,
    groups: ArrayLike | None = None,
    group_sizes: Mapping[str, int] | None = None,
) -> BettingBoundary:
    """Placeholder: p-values of 1 (never crosses) until the real boundary is merged."""
    n = len(np.asarray(differences, dtype=float))
    return BettingBoundary(1.0, 1.0, n, int(population_size), "betting-wor (placeholder: boundary not merged)")
