"""The policy document: defaults, the canonical hash and validation messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise import FileFormatError, Policy, PolicyError, load_policy
from stopwise.records import DEFAULT_POLICY_TOML, PAPER_POLICY_TOML, parse_policy


def test_new_policies_keep_their_level_and_the_paper_is_a_preset() -> None:
    """Issue 35: ``policy init`` writes the exact-wor one-look test on a uniform order, and ``Policy()`` is that policy;
    the paper's rule is a preset, in the library (``Policy.paper``) as on the command line (``--preset paper``)."""
    policy = parse_policy(DEFAULT_POLICY_TOML)
    assert policy == Policy() and (policy.tail_method, policy.order.kind) == ("exact-wor", "uniform")
    assert parse_policy(PAPER_POLICY_TOML) == Policy.paper() != Policy()
    assert Policy.paper() == Policy.model_validate({"tail_method": "exact", "order": {"kind": "coverage-aware"}})


def test_the_paper_preset_takes_fields_as_the_policy_does() -> None:
    """``Policy.paper(**fields)``: the fields override the paper's; an order without a kind keeps the paper's."""
    from stopwise.records import OrderPolicy

    assert Policy.paper(threshold=0.05, decision={"boundary": "betting-wor"}) == parse_policy(
        PAPER_POLICY_TOML.replace("threshold = 0.0\n", "threshold = 0.05\n").replace('boundary = "fixed-budget"', 'boundary = "betting-wor"')
    )
    assert Policy.paper(order=OrderPolicy(seed=3)).order == OrderPolicy(kind="coverage-aware", seed=3)
    assert Policy.paper(order={"kind": "uniform"}, tail_method="normal").order.kind == "uniform"
    assert Policy.paper(tail_method="normal").tail_method == "normal"
    with pytest.raises(ValueError, match="threshold"):
        Policy.paper(threshold=2.0)


def test_default_document_is_the_papers_primary_policy() -> None:
    policy = parse_policy(PAPER_POLICY_TOML)
    assert policy == Policy.paper()
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


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("seed = true", ["field 'seed'", "valid integer", "got True"]),
        ('tail_cutoff = "0.05"', ["field 'tail_cutoff'", "valid number", "got '0.05'"]),
        ("[budget]\nlimit = inf", ["field 'budget.limit'", "finite number"]),
        ("threshold = nan", ["field 'threshold'", "finite number"]),
        ('[budget]\nmeasure = "task_count"\nlimit = 0.5', ["field 'budget.limit'", "whole number of tasks >= 1", "got 0.5"]),
        ('[budget]\nmeasure = "task_count"\nlimit = 20.5', ["field 'budget.limit'", "whole number"]),
        ("bootstrap_resamples = 1000000000000", ["field 'bootstrap_resamples'", "less than or equal to 100000"]),
        ("bootstrap_resamples = 200.0", ["field 'bootstrap_resamples'", "valid integer"]),
        ("[order]\nseed = false", ["field 'order.seed'", "valid integer"]),
        ('[decision]\nboundary = "anytime"', ["field 'decision.boundary'", "'fixed-budget' or 'betting-wor'"]),
        ("[decision]\nstop = 1", ["field 'decision.stop'", "unknown setting"]),
    ],
)
def test_strict_policies_refuse_what_was_accepted_before(text: str, fragments: list[str]) -> None:
    with pytest.raises(PolicyError) as info:
        parse_policy(text, source="p.toml")
    for fragment in fragments:
        assert fragment in str(info.value)


def test_whole_numbers_and_integers_where_floats_are_asked_stay_valid() -> None:
    policy = parse_policy('threshold = 0\n[budget]\nmeasure = "task_count"\nlimit = 20\n')
    assert policy.threshold == 0.0 and policy.budget.limit == 20.0
    assert parse_policy("bootstrap_resamples = 100000").bootstrap_resamples == 100_000


def test_decision_boundary_section_and_old_policies() -> None:
    old = parse_policy("threshold = 0.05\n")  # a policy written before [decision] existed
    assert old.decision.boundary == "fixed-budget"
    betting = parse_policy('[decision]\nboundary = "betting-wor"\n')
    assert betting.decision.boundary == "betting-wor" and betting.sha256() != Policy().sha256()
    assert '"decision":{"boundary":"fixed-budget"}' in Policy().canonical_json()
    # the default's digest changed when [decision] was added; the paper's primary policy keeps that value (issue 35)
    assert Policy.paper().sha256() == "9e761cc143366db7961ed6c2852603b7dae5de58bcc530f2cf7a67d06df50115"
    # issue 35: the default is the exact-wor test on a uniform order with the tolerant coverage rule (docs/history.md, 0.2)
    assert Policy().sha256() == "e9e722c05b49ab954bd580a5aa4170657940feb327dc8e89b278fc461d183a04"


def test_the_coverage_rule_defaults_to_tolerant_with_the_betting_boundary() -> None:
    """Issue 33: an unnamed rule is tolerant under betting-wor, proportional (the paper's) under the fixed-budget rule;
    a named rule is kept; the slack enters the canonical JSON only under the tolerant rule (old digests unchanged)."""
    betting = parse_policy('[decision]\nboundary = "betting-wor"\n')
    assert betting.coverage.rule == "tolerant" and betting.coverage.slack == 2.0
    assert '"coverage":{"group_column":"group","rule":"tolerant","slack":2.0}' in betting.canonical_json()
    assert Policy(decision={"boundary": "betting-wor"}) == betting  # from Python as from TOML
    assert Policy.model_validate(betting.model_dump()) == betting  # the filled-in rule survives a round trip
    named = parse_policy('[coverage]\nrule = "proportional"\n[decision]\nboundary = "betting-wor"\n')
    assert named.coverage.rule == "proportional" and '"slack"' not in named.canonical_json()
    assert parse_policy('[coverage]\ngroup_column = "unit"\n[decision]\nboundary = "betting-wor"\n').coverage.rule == "tolerant"
    assert parse_policy('[coverage]\nslack = 1.5\n[decision]\nboundary = "betting-wor"\n').coverage.slack == 1.5
    # the fixed-budget rule on the paper's order keeps the paper's rule and every old digest (the slack is left out
    # where it plays no part); on a uniform order (the default since issue 35) an unnamed rule is tolerant
    assert Policy.paper().coverage.rule == "proportional" and '"slack"' not in Policy.paper().canonical_json()
    assert Policy().coverage.rule == "tolerant" and '"slack":2.0' in Policy().canonical_json()
    proportional = parse_policy('[coverage]\nrule = "proportional"\nslack = 3.0\n')
    assert proportional.sha256() == Policy(coverage={"rule": "proportional"}).sha256() and '"slack"' not in proportional.canonical_json()
    assert parse_policy('[order]\nkind = "neyman"\n').coverage.rule == "proportional"
    assert Policy.paper(coverage={"rule": "proportional", "slack": 3.0}).sha256() == Policy.paper().sha256()
    assert parse_policy('[coverage]\nrule = "every-group"\n').coverage.rule == "every-group"
    with pytest.raises(PolicyError, match=r"coverage\.slack"):
        parse_policy("[coverage]\nslack = -1\n")
    with pytest.raises(PolicyError, match=r"coverage\.rule"):
        parse_policy('[coverage]\nrule = "lenient"\n')


def test_policy_init_writes_the_rule_commented_so_the_boundary_chooses_it() -> None:
    assert '# rule = "tolerant"' in DEFAULT_POLICY_TOML and "\nrule =" not in DEFAULT_POLICY_TOML.split("[coverage]")[1].split("[")[0]
    edited = DEFAULT_POLICY_TOML.replace('boundary = "fixed-budget"', 'boundary = "betting-wor"')
    assert parse_policy(edited).coverage.rule == "tolerant"
    assert parse_policy(DEFAULT_POLICY_TOML.replace('# rule = "tolerant"', 'rule = "tolerant"')).coverage.rule == "tolerant"


def test_policy_init_writes_the_default_or_the_paper_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35: ``policy init`` writes the exact-wor policy; ``--preset paper`` the paper's; another name is refused (exit 4)."""
    from stopwise.cli.main import main

    assert main(["policy", "init", str(tmp_path / "new.toml")]) == 0
    assert main(["policy", "init", str(tmp_path / "paper.toml"), "--preset", "paper"]) == 0
    assert load_policy(tmp_path / "new.toml").tail_method == "exact-wor"
    assert load_policy(tmp_path / "paper.toml") == Policy.paper()
    assert load_policy(tmp_path / "new.toml") == Policy()
    assert main(["policy", "init", "--preset", "bootstrap"]) == 4
    assert "--preset must be one of default, paper; got 'bootstrap'" in capsys.readouterr().err
