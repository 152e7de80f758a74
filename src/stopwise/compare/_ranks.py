"""Ranks, simultaneous rank intervals and tiers from a family's "A beats B" claims.

Mogstad, Romano, Shaikh & Wilhelm (2024, Rev. Econ. Stud. 91, "Inference for ranks with applications to mobility
across neighbourhoods and academic achievement across countries"): from simultaneous statements about every
pairwise difference, the rank of system i lies in ``[1 + #{j: j beats i}, k - #{j: i beats j}]`` for every i at
once, whenever every statement holds. With the claims of a family-wise controlled family (at delta = 0) the
intervals hold together with probability at least 1 - a. A logical consequence of true claims is true, so under
family-wise control the claims may first be closed transitively (A beats B and B beats C: A beats C), which
narrows the intervals without touching the guarantee; a false-discovery-rate family's consequences carry no such
guarantee and are not closed.

Tiers: the systems in decreasing observed mean, cut into consecutive groups; a new tier starts at the first
system that the claims separate (in either direction) from a member of the current tier, so no claim separates
two members of one tier.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["best_system", "observed_ranks", "rank_intervals", "tiers", "transitive_claims"]


def transitive_claims(beats: ArrayLike) -> np.ndarray:
    """The transitive closure of a (k, k) "row beats column" claim matrix (Warshall's algorithm, a loop over k).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._ranks import transitive_claims
    >>> transitive_claims(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], bool)).astype(int).tolist()
    [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    """
    closed = np.array(beats, dtype=bool)
    for middle in range(closed.shape[0]):
        closed |= closed[:, middle : middle + 1] & closed[middle : middle + 1, :]
    return closed


def observed_ranks(means: ArrayLike) -> np.ndarray:
    """1 + the number of systems with a strictly higher mean (ties share a rank; NaN ranks last)."""
    values = np.where(np.isnan(np.asarray(means, dtype=float)), -np.inf, np.asarray(means, dtype=float))
    return 1 + (values[None, :] > values[:, None]).sum(axis=1)


def rank_intervals(beats: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The rank interval ``[1 + #beaten-by, k - #beats]`` of every system (1 = best).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._ranks import rank_intervals
    >>> low, high = rank_intervals(np.array([[0, 1, 1], [0, 0, 0], [0, 0, 0]], bool))
    >>> low.tolist(), high.tolist()
    ([1, 2, 2], [1, 3, 3])
    """
    claims = np.asarray(beats, dtype=bool)
    k = claims.shape[0]
    return 1 + claims.sum(axis=0), k - claims.sum(axis=1)


def tiers(beats: ArrayLike, order: ArrayLike) -> list[list[int]]:
    """Consecutive groups of ``order`` (system indices, best observed mean first) that no claim separates.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._ranks import tiers
    >>> claims = np.zeros((4, 4), bool)
    >>> claims[0, 2] = claims[0, 3] = claims[1, 3] = True
    >>> tiers(claims, [0, 1, 2, 3])
    [[0, 1], [2, 3]]
    """
    claims = np.asarray(beats, dtype=bool)
    separated = claims | claims.T
    groups: list[list[int]] = []
    for system in np.asarray(order, dtype=np.int64).tolist():
        if groups and not separated[groups[-1], system].any():
            groups[-1].append(system)
        else:
            groups.append([system])
    return groups


def best_system(beats: ArrayLike) -> int | None:
    """The system claimed to beat every other, or None.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._ranks import best_system
    >>> best_system(np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], bool)), best_system(np.zeros((2, 2), bool))
    (0, None)
    """
    claims = np.asarray(beats, dtype=bool)
    k = claims.shape[0]
    winners = np.flatnonzero(claims.sum(axis=1) == k - 1)
    return int(winners[0]) if len(winners) == 1 else None
