"""``PairedSpec``: one validated description of a paired comparison, taken by the four Inspect constructors."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise import Policy, TaskUniverse
from stopwise.errors import InputError, PolicyError
from stopwise.inspect import (
    PairedComparison,
    PairedSpec,
    paired_early_stopping,
    paired_manager,
    paired_model_early_stopping,
)
from stopwise.ledger import open_ledger


def test_the_spec_holds_the_policy_and_universe_it_was_given_as_a_file_and_a_list(tmp_path: Path) -> None:
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text('threshold = 0.05\n[decision]\nboundary = "betting-wor"\n')
    spec = PairedSpec("ev", tested="A", baseline="B", policy=policy_file, universe=["q1", "q2"], scorer=" match:score ")  # type: ignore[arg-type]
    assert spec.policy == Policy.model_validate({"threshold": 0.05, "decision": {"boundary": "betting-wor"}})
    assert spec.universe == TaskUniverse(["q1", "q2"])
    assert (spec.scorer, spec.scorer_name, spec.scorer_key, spec.refresh, spec.pace) == ("match:score", "match", "score", 1.0, 2)
    assert PairedSpec.of("ev", tested="A", baseline="B", policy=None) == PairedSpec("ev", tested="A", baseline="B")
    with pytest.raises(Exception, match="cannot assign"):
        spec.tested = "C"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"tested": "A", "baseline": "A"}, InputError, "`tested` and `baseline` must differ; both are 'A'"),
        ({"tested": " ", "baseline": "B"}, InputError, "`tested` must be a non-empty system name; got ' '"),
        ({"tested": "A", "baseline": "B", "group": ""}, InputError, "`group` must name a sample metadata key"),
        ({"tested": "A", "baseline": "B", "scorer": " "}, InputError, "`scorer` must be NAME or NAME:KEY"),
        ({"tested": "A", "baseline": "B", "refresh": -1}, InputError, "`refresh` must be a number of seconds >= 0; got -1"),
        ({"tested": "A", "baseline": "B", "pace": 0}, InputError, "`pace` must be a number of samples >= 1 or None; got 0"),
        ({"tested": "A", "baseline": "B", "pace": True}, InputError, "`pace` must be a number of samples"),
        ({"tested": "A", "baseline": "B", "universe": "q1"}, InputError, "`universe` must be a TaskUniverse or a list"),
        ({"tested": "A", "baseline": "B", "universe": TaskUniverse.from_counts(3)}, InputError, "must list the planned tasks"),
        ({"tested": "A", "baseline": "B", "policy": 3}, PolicyError, "`policy` must be a Policy, a policy file or None; got int"),
        ({"tested": "A", "baseline": "B", "policy": Policy.model_validate({"budget": {"measure": "cost_usd", "limit": 5}})},
         PolicyError, "budget measure 'cost_usd' cannot be used live"),
        ({"tested": "A"}, InputError, "`baseline` is required"),
        ({"tested": "A", "baseline": "B", "budget": 3}, InputError, "unknown argument `budget`; a paired comparison takes tested"),
    ],
)
def test_each_field_is_checked_when_the_spec_is_built(fields: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        PairedSpec.of("ev", **fields)


def test_the_four_constructors_take_one_spec_or_the_keywords_that_build_it(tmp_path: Path) -> None:
    spec = PairedSpec("ev", tested="A", baseline="B", universe=["q1", "q2"], pace=None)
    url = f"sqlite:///{tmp_path / 'l.db'}"
    with open_ledger(url) as ledger:
        assert PairedComparison(ledger, spec).spec is spec
        assert PairedComparison(ledger, "ev", tested="A", baseline="B", universe=["q1", "q2"], pace=None).spec == spec
        tested, baseline = paired_early_stopping(ledger, spec)
        assert tested.comparison is baseline.comparison and tested.comparison.spec is spec
        assert tested.comparison.ledger is ledger and tested.comparison.ledger_name == url
        with pytest.raises(InputError, match="give a PairedSpec or the evaluation id with keywords, not both; got a PairedSpec and pace"):
            paired_early_stopping(ledger, spec, pace=2)
    first = paired_manager(url, spec, "tested")
    assert paired_manager(url, "ev", "baseline", tested="A", baseline="B", universe=["q1", "q2"]).comparison is first.comparison
    with pytest.raises(InputError, match="other arguments: universe"):
        paired_manager(url, "ev", "baseline", tested="A", baseline="B")
    model = paired_model_early_stopping(url, PairedSpec("ev-2", tested="v2", baseline="v1"), tested="mockllm/a", baseline="mockllm/b")
    assert (model.comparison.tested, model.comparison.baseline) == ("v2", "v1")
    with pytest.raises(InputError, match="a PairedSpec names them already"):
        paired_model_early_stopping(url, spec, tested="mockllm/a", baseline="mockllm/b", systems=("x", "y"))


def test_a_ledger_is_a_url_a_path_or_a_ledger(tmp_path: Path) -> None:
    spec = PairedSpec("ev", tested="A", baseline="B")
    comparison = PairedComparison(tmp_path / "l.db", spec)
    assert comparison.ledger.url == f"sqlite:///{tmp_path / 'l.db'}" and (tmp_path / "l.db").exists()
    for wrong, shown in ((object(), "object"), ("  ", "'  '"), (None, "NoneType")):
        with pytest.raises(InputError, match=f"`ledger` must be a database URL .* or a stopwise.ledger.Ledger; got {shown}"):
            PairedComparison(wrong, spec)  # type: ignore[arg-type]
