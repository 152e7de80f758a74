"""The policy document: defaults, the canonical hash and validation messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise import DEFAULT_POLICY_TOML, FileFormatError, Policy, PolicyError, load_policy, parse_policy


def test_default_document_is_the_papers_primary_policy() -> None:
    policy = parse_policy(DEFAULT_POLICY_TOML)
    assert policy == Policy()
    assert (policy.threshold, policy.tail_cutoff) == (0.0, 0.05)
    assert (policy.targets.alpha, policy.targets.gamma, policy.targets.eta) == (0.05, 0.05, 0.25)
    assert policy.coverage.rule == "proportional" and policy.tail_method == "exact"


def test_hash_is_canonical() -> None:
    a = parse_policy("threshold = 0.05\n[targets]\neta = 0.25\n")
    b = parse_policy("# comment\nthreshold   = 0.050\n\n[targets]\neta = 0.250\n")
    assert a.sha256() == b.sha256()
    assert a.sha256() != Policy().sha256()
    assert a.canonical_json().startswith('{"bootstrap_resamples":200,"budget":{')


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("threshold = 2", ["field 'threshold'", "less than 1", "got 2"]),
        ("tail_cutoff = 0", ["field 'tail_cutoff'", "greater than 0"]),
        ("tail_method = 'magic'", ["field 'tail_method'", "'exact'", "got 'magic'"]),
        ("treshold = 0.1", ["field 'treshold'", "unknown setting"]),
        ("[budget]\nlimit = 1.5", ["field 'budget.limit'", "(0, 1]"]),
        ("statuses = ['done']", ["field 'statuses.0'", "got 'done'"]),
        ("threshold = ", ["not valid TOML"]),
    ],
)
def test_bad_policies(text: str, fragments: list[str]) -> None:
    with pytest.raises(PolicyError) as info:
        parse_policy(text, source="p.toml")
    for fragment in fragments:
        assert fragment in str(info.value)


def test_load_policy_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="stopwise policy init"):
        load_policy(tmp_path / "none.toml")
