"""The claims a family of systems may make, and the evidence rows (pair, threshold) whose tests carry them.

Every claim is a hypothesis rejected: "A beats B by more than delta" rejects ``H: mean(A - B) <= delta``, "A does
not beat B by more than delta" rejects ``H: mean(A - B) >= delta``, "A and B are within +/- delta_eq" rejects
``H: |mean(A - B)| >= delta_eq``. An *evidence row* is one sequence of paired differences ``D = Y_A - Y_B`` tested
at one threshold m0: its promote test's evidence is against ``mean <= m0`` and its reject test's against
``mean >= m0`` (:func:`stopwise.compare.betting_paths` computes both from one row). A hypothesis takes the
evidence of one side of one row, or for equivalence the smaller of two (the promote side at ``-delta_eq`` and the
reject side at ``+delta_eq``: two one-sided tests, an intersection-union test with no split of a).

The families (``[family] kind``):

* ``all-pairs`` -- every ordered pair's "beats" and "does not beat". At delta = 0 the reject side of (A, B) is the
  promote side of (B, A) (the same claim, "B beats A"), so one row per unordered pair carries both and the family
  has k (k - 1) hypotheses; at delta != 0 every ordered pair has its own row and the family 2 k (k - 1).
* ``best`` -- the "beats" claims of every ordered pair only (k (k - 1) hypotheses; "A is best" is the conjunction
  of A's).
* ``baseline`` -- each candidate's "beats the baseline" and "does not beat the baseline" (2 (k - 1)).

With ``equivalence > 0`` each unordered pair of the family adds its equivalence hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stopwise.errors import ArgumentError
from stopwise.records import FAMILY_KINDS

__all__ = ["AT_LEAST", "AT_MOST", "OUTSIDE", "FamilyHypotheses", "family_hypotheses"]

AT_MOST, AT_LEAST, OUTSIDE = 0, 1, 2
"""A hypothesis's null: ``mean(A - B) <= value``, ``>= value`` or ``|mean(A - B)| >= value`` (equivalence)."""
PROMOTE_SIDE, REJECT_SIDE = 0, 1
"""The side of an evidence row: its promote test (against ``mean <= m0``) or its reject test (``mean >= m0``)."""


@dataclass(frozen=True)
class FamilyHypotheses:
    """The hypotheses of a family, the evidence rows behind them and the map from ordered pairs to them.

    Attributes
    ----------
    n_systems : int
        k, systems indexed 0..k-1.
    pairs : numpy.ndarray of int, shape (P, 2)
        The family's ordered pairs (tested, baseline), in the record's order.
    rows : numpy.ndarray of int, shape (R, 2)
        (A, B) of each evidence row: its differences are ``Y_A - Y_B``.
    thresholds : numpy.ndarray of float, shape (R,)
        m0 of each evidence row.
    evidence : numpy.ndarray of int, shape (M, 4)
        (row, side, row, side) of each hypothesis: its evidence is the first; an equivalence hypothesis's is the
        smaller of the two (the second is (-1, -1) for a one-sided hypothesis).
    nulls : numpy.ndarray, shape (M, 4)
        (A, B, kind, value) of each hypothesis's null: kind :data:`AT_MOST`, :data:`AT_LEAST` or :data:`OUTSIDE`,
        about ``mean(Y_A - Y_B)``.
    promote, reject, equivalent : numpy.ndarray of int, shape (P,)
        The hypothesis each ordered pair's promote, reject and equivalence claims reject (-1: not in the family).
    opposite : numpy.ndarray of int, shape (M,)
        The hypothesis each one contradicts (an ordered pair's promote and reject claims; -1 for equivalence).
    """

    n_systems: int
    pairs: np.ndarray
    rows: np.ndarray
    thresholds: np.ndarray
    evidence: np.ndarray
    nulls: np.ndarray
    promote: np.ndarray
    reject: np.ndarray
    equivalent: np.ndarray
    opposite: np.ndarray

    @property
    def n_hypotheses(self) -> int:
        """M, the distinct claims the family may make."""
        return len(self.evidence)

    def log_e(self, log_promote: np.ndarray, log_reject: np.ndarray) -> np.ndarray:
        """Each hypothesis's log e-value from its rows' promote and reject evidence.

        ``log_promote`` and ``log_reject`` have shape (R,) (one look) or (..., R, T) (looks): the result has shape
        (M,) or (..., M, T).
        """
        promote, reject = np.asarray(log_promote, dtype=float), np.asarray(log_reject, dtype=float)
        axis = -1 if promote.ndim == 1 else -2

        def gather(row: np.ndarray, side: np.ndarray) -> np.ndarray:
            chosen = (side == REJECT_SIDE) if axis == -1 else (side == REJECT_SIDE)[:, None]
            return np.where(chosen, np.take(reject, row, axis=axis), np.take(promote, row, axis=axis))

        first = gather(self.evidence[:, 0], self.evidence[:, 1])
        if (self.evidence[:, 2] < 0).all():
            return first
        second = gather(np.maximum(self.evidence[:, 2], 0), self.evidence[:, 3])
        single = self.evidence[:, 2] < 0
        return np.where(single if axis == -1 else single[:, None], first, np.minimum(first, second))

    def null_holds(self, means: np.ndarray) -> np.ndarray:
        """Whether each hypothesis's null is true, given the (k, k) matrix of true mean differences ``mean(Y_A - Y_B)``."""
        a, b, kind, value = (self.nulls[:, c] for c in range(4))
        mean = means[a.astype(int), b.astype(int)]
        tol = 1e-12
        return np.where(kind == AT_MOST, mean <= value + tol, np.where(kind == AT_LEAST, mean >= value - tol, np.abs(mean) >= value - tol))


def _ordered_pairs(k: int, kind: str, baseline: int | None) -> np.ndarray:
    if kind == "baseline":
        assert baseline is not None
        return np.array([(c, baseline) for c in range(k) if c != baseline], dtype=np.int64).reshape(-1, 2)
    return np.array([(i, j) for i in range(k) for j in range(k) if i != j], dtype=np.int64).reshape(-1, 2)


class _Builder:
    """Collects evidence rows (deduplicated by (A, B, m0)) and hypotheses."""

    def __init__(self) -> None:
        self.rows: dict[tuple[int, int, float], int] = {}
        self.evidence: list[tuple[int, int, int, int]] = []
        self.nulls: list[tuple[float, float, float, float]] = []

    def row(self, a: int, b: int, m0: float) -> int:
        return self.rows.setdefault((a, b, float(m0)), len(self.rows))

    def add(self, evidence: tuple[int, int, int, int], null: tuple[float, float, float, float]) -> int:
        self.evidence.append(evidence)
        self.nulls.append(null)
        return len(self.evidence) - 1


def family_hypotheses(
    n_systems: int, kind: str = "all-pairs", *, baseline: int | None = None, threshold: float = 0.0, equivalence: float = 0.0
) -> FamilyHypotheses:
    """The hypotheses of a family of ``n_systems`` systems (see the module docstring).

    Parameters
    ----------
    n_systems : int
        k >= 2.
    kind : {"all-pairs", "baseline", "best"}
        The family's question.
    baseline : int, optional
        Index of the baseline system (``kind = "baseline"`` only).
    threshold : float
        delta.
    equivalence : float
        delta_eq > 0 adds each unordered pair's equivalence hypothesis.

    Examples
    --------
    >>> from stopwise.compare import family_hypotheses
    >>> [family_hypotheses(36, t).n_hypotheses for t in ("all-pairs", "best")], family_hypotheses(36, threshold=0.05).n_hypotheses
    ([1260, 1260], 2520)
    >>> h = family_hypotheses(4, "baseline", baseline=0, equivalence=0.02)
    >>> h.pairs.tolist(), h.n_hypotheses, len(h.rows)
    ([[1, 0], [2, 0], [3, 0]], 9, 9)
    """
    if kind not in FAMILY_KINDS:
        raise ArgumentError(f"`kind` must be one of {', '.join(FAMILY_KINDS)}; got {kind!r}")
    if int(n_systems) != n_systems or n_systems < 2:
        raise ArgumentError(f"a family needs at least 2 systems; got {n_systems!r}")
    if (kind == "baseline") != (baseline is not None) or (baseline is not None and not 0 <= baseline < n_systems):
        raise ArgumentError(f'`baseline` is the index of the baseline system, given with kind = "baseline" only; got {baseline!r}')
    k, delta = int(n_systems), float(threshold)
    pairs = _ordered_pairs(k, kind, baseline)
    build = _Builder()
    promote = np.full(len(pairs), -1, dtype=np.int64)
    reject = promote.copy()
    shared = delta == 0.0 and kind != "baseline"  # one row per unordered pair carries both directions
    done: dict[tuple[int, int], tuple[int, int]] = {}
    for p, (a, b) in enumerate(pairs.tolist()):
        if shared and (b, a) in done:
            up, down = done[(b, a)]
            promote[p], reject[p] = down, up
            continue
        r = build.row(a, b, delta)
        promote[p] = build.add((r, PROMOTE_SIDE, -1, -1), (a, b, AT_MOST, delta))
        if shared or kind != "best":
            reject[p] = build.add((r, REJECT_SIDE, -1, -1), (a, b, AT_LEAST, delta))
        done[(a, b)] = (int(promote[p]), int(reject[p]))
    equivalent = np.full(len(pairs), -1, dtype=np.int64)
    if equivalence > 0:
        seen: dict[tuple[int, int], int] = {}
        for p, (a, b) in enumerate(pairs.tolist()):
            key = (min(a, b), max(a, b))
            if key not in seen:
                low, high = build.row(key[0], key[1], -equivalence), build.row(key[0], key[1], equivalence)
                seen[key] = build.add((low, PROMOTE_SIDE, high, REJECT_SIDE), (key[0], key[1], OUTSIDE, equivalence))
            equivalent[p] = seen[key]
    opposite = np.full(len(build.evidence), -1, dtype=np.int64)
    both = (promote >= 0) & (reject >= 0)
    opposite[promote[both]] = reject[both]
    opposite[reject[both]] = promote[both]
    rows = sorted(build.rows.items(), key=lambda item: item[1])
    return FamilyHypotheses(
        n_systems=k,
        pairs=pairs,
        rows=np.array([(a, b) for (a, b, _), _ in rows], dtype=np.int64).reshape(-1, 2),
        thresholds=np.array([m0 for (_, _, m0), _ in rows], dtype=float),
        evidence=np.array(build.evidence, dtype=np.int64).reshape(-1, 4),
        nulls=np.array(build.nulls, dtype=float).reshape(-1, 4),
        promote=promote,
        reject=reject,
        equivalent=equivalent,
        opposite=opposite,
    )
