"""The hypotheses of a family and the evidence rows behind them (``stopwise.compare.family_hypotheses``)."""

from __future__ import annotations

import numpy as np
import pytest

from stopwise.compare import family_hypotheses
from stopwise.compare._family_hypotheses import AT_LEAST, AT_MOST, OUTSIDE
from stopwise.errors import ArgumentError


@pytest.mark.parametrize(
    ("k", "kind", "baseline", "threshold", "equivalence", "m", "rows"),
    [
        (36, "all-pairs", None, 0.0, 0.0, 1260, 630),  # at delta = 0 one row per unordered pair carries both directions
        (36, "all-pairs", None, 0.05, 0.0, 2520, 1260),
        (36, "best", None, 0.05, 0.0, 1260, 1260),
        (6, "baseline", 0, 0.0, 0.0, 10, 5),
        (6, "baseline", 2, 0.0, 0.02, 15, 15),
        (4, "all-pairs", None, 0.0, 0.1, 18, 18),
    ],
)
def test_family_sizes(k: int, kind: str, baseline: int | None, threshold: float, equivalence: float, m: int, rows: int) -> None:
    family = family_hypotheses(k, kind, baseline=baseline, threshold=threshold, equivalence=equivalence)
    assert family.n_hypotheses == m and len(family.rows) == rows
    assert len(family.pairs) == (k - 1 if kind == "baseline" else k * (k - 1))


def test_at_delta_zero_the_reject_claim_of_a_b_is_the_promote_claim_of_b_a() -> None:
    family = family_hypotheses(5)
    where = {tuple(p): i for i, p in enumerate(family.pairs.tolist())}
    for p, (a, b) in enumerate(family.pairs.tolist()):
        assert family.reject[p] == family.promote[where[(b, a)]]
        assert family.opposite[family.promote[p]] == family.reject[p]


def test_log_e_takes_each_side_and_the_smaller_of_an_equivalence_pair() -> None:
    family = family_hypotheses(3, equivalence=0.1)
    up = np.arange(len(family.rows), dtype=float)
    down = 100 - up
    values = family.log_e(up, down)
    for h, (row, side, row2, side2) in enumerate(family.evidence.tolist()):
        first = (up, down)[side][row]
        expected = first if row2 < 0 else min(first, (up, down)[side2][row2])
        assert values[h] == expected
    with_looks = family.log_e(np.stack([up, up + 1], axis=-1)[None], np.stack([down, down], axis=-1)[None])
    assert with_looks.shape == (1, family.n_hypotheses, 2) and np.array_equal(with_looks[0, :, 0], values)


def test_null_holds_reads_the_true_mean_differences() -> None:
    family = family_hypotheses(3, threshold=0.0, equivalence=0.05)
    means = np.array([0.5, 0.5, 0.2])
    holds = family.null_holds(means[:, None] - means[None, :])
    for h, (a, b, kind, value) in enumerate(family.nulls.tolist()):
        gap = means[int(a)] - means[int(b)]
        expected = {AT_MOST: gap <= value, AT_LEAST: gap >= value, OUTSIDE: abs(gap) >= value}[int(kind)]
        assert holds[h] == expected


@pytest.mark.parametrize(("args", "kwargs"), [((1,), {}), ((3, "pairs"), {}), ((3, "baseline"), {}), ((3,), {"baseline": 0})])
def test_bad_families_are_refused(args: tuple, kwargs: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(ArgumentError):
        family_hypotheses(*args, **kwargs)
