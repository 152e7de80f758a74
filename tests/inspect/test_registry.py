"""``paired_manager``: the process's one comparison per (ledger, evaluation), for task files run by ``inspect eval``."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise import Policy
from stopwise.errors import InputError
from stopwise.inspect import paired_manager


def test_both_roles_share_one_comparison_per_ledger_and_evaluation(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    tested = paired_manager(url, "ev", "tested", tested="A", baseline="B")
    baseline = paired_manager(str(tmp_path / "l.db"), "ev", "baseline", tested="A", baseline="B")  # same file
    assert tested.comparison is baseline.comparison and (tested.system, baseline.system) == ("A", "B")
    other = paired_manager(url, "ev-2", "tested", tested="A", baseline="B")
    assert other.comparison is not tested.comparison


def test_other_arguments_for_one_comparison_are_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    paired_manager(url, "ev", "tested", tested="A", baseline="B")
    with pytest.raises(InputError, match=r"built with other arguments: baseline 'B' != 'C'"):
        paired_manager(url, "ev", "baseline", tested="A", baseline="C")
    with pytest.raises(InputError, match="policy"):
        paired_manager(url, "ev", "baseline", tested="A", baseline="B", policy=Policy(threshold=0.05))
    with pytest.raises(InputError, match="`role` must be 'tested' or 'baseline'"):
        paired_manager(url, "ev", "both", tested="A", baseline="B")  # type: ignore[arg-type]


def test_a_failed_comparison_is_replaced_by_a_new_one(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    first = paired_manager(url, "ev", "tested", tested="A", baseline="B")
    first.comparison.error = "ledger append failed: OSError"
    again = paired_manager(url, "ev", "tested", tested="A", baseline="B")
    assert again.comparison is not first.comparison and again.comparison.error is None
