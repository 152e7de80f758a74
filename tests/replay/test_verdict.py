"""Issue 35: pairs above a + 2 SE are judged against their chance expectation, not as failures one by one."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import binom, norm

from stopwise.replay import exceedance_verdict
from stopwise.report._replay import _live_answer


@pytest.mark.parametrize(("over", "pairs"), [(0, 10), (1, 1722), (39, 1722), (60, 1722), (111, 1722), (3, 40)])
def test_the_verdict_is_the_binomial_upper_tail_at_the_chance_rate(over: int, pairs: int) -> None:
    verdict = exceedance_verdict(over, pairs)
    chance = float(norm.sf(2.0))
    assert verdict.expected == pytest.approx(pairs * chance, rel=1e-12)
    assert verdict.p_value == pytest.approx(float(binom.sf(over - 1, pairs, chance)), rel=1e-9, abs=1e-300)
    assert verdict.within == (verdict.p_value > 0.05)


def test_the_issue_counts_one_within_and_111_over() -> None:
    """1 of 1,722 betting-wor pairs above a + 2 SE is chance (about 39 expected); 111 of 1,722 (fixed-budget) is not."""
    summary = pd.DataFrame(
        [
            {
                "rule": r,
                "threshold": 0.0,
                "source": "s",
                "policy": "p",
                "mean_wrong_rate": 0.01,
                "pairs_over_bound": over,
                "pairs": 1722,
                "stop_q50": 0.2,
            }
            for r, over in (("betting-wor", 1), ("fixed-budget", 111))
        ]
    )
    blocks = _live_answer(summary, 0.05)
    labels = [getattr(b, "label", None) for b in blocks[:2]]
    assert labels == ["within a", "over a"]
    assert "1 of 1,722 pairs above a + 2 SE (about 39.2 expected by chance" in blocks[0].text


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="`pairs` must be an integer >= `over`"):
        exceedance_verdict(5, 3)
