"""The paper's primary policy and the comparison policies that each remove one safeguard."""

from __future__ import annotations

from stopwise.errors import ArgumentError
from stopwise.records import Policy

__all__ = ["STANDARD_POLICIES", "comparison_policies"]

STANDARD_POLICIES: dict[str, dict[str, object]] = {
    "primary": {"order": "coverage-aware", "coverage": "proportional", "tail_method": "exact"},
    "forced-uniform": {"order": "uniform", "coverage": "none", "tail_method": "none"},
    "forced-group-aware": {"order": "coverage-aware", "coverage": "none", "tail_method": "none"},
    "paired-normal": {"order": "coverage-aware", "coverage": "proportional", "tail_method": "normal"},
    "serfling": {"order": "coverage-aware", "coverage": "proportional", "tail_method": "serfling"},
    "neyman": {"order": "neyman", "coverage": "none", "tail_method": "exact"},
    "forced-cost-first": {"order": "cost-first", "coverage": "none", "tail_method": "none"},
    "bootstrap-mc": {"order": "coverage-aware", "coverage": "proportional", "tail_method": "bootstrap"},
    "betting": {"order": "coverage-aware", "coverage": "tolerant", "tail_method": "exact", "boundary": "betting-wor"},
    "betting-uniform": {"order": "uniform", "coverage": "none", "tail_method": "exact", "boundary": "betting-wor"},
}
"""Order, coverage rule and tail method of each named policy (ParEvalLayer section IV-B).

``primary``: coverage-aware order, coverage rule, exact bootstrap tails. ``forced-*``: decide by
the observed margin alone (uniform, coverage-aware or cheapest-first order). ``paired-normal`` and
``serfling`` replace the bootstrap tail rule. ``neyman`` orders by Neyman allocation (group shares
proportional to n_g sigma_g of the completed record, prior variance information) with the exact
bootstrap rule; its allocation departs from proportional coverage by design, so the coverage rule is
recorded (coverage failure) but not enforced. ``bootstrap-mc``: the paper's Monte-Carlo
bootstrap (B from the policy, 200 by default). ``betting`` and ``betting-uniform``: the anytime-valid
``betting-wor`` boundary (``[decision] boundary``) with the coverage rule of the default policy with
betting-wor, ``tolerant`` (issue 33; the top-up design: the pooled process on a seeded uniform order, coverage
topped up before the action; ``[betting] design = "stratified"``, retired from ``decide``, replays the
stratified process under the coverage-aware order instead) or without it under a uniform order (pooled
process); they are replayed with live looks
(``stopwise replay --looks``), not on the budget grid. Every other name sets the ``fixed-budget``
boundary."""


_NOT_BY_DEFAULT = ("forced-cost-first", "bootstrap-mc", "betting", "betting-uniform")


def comparison_policies(base: Policy, names: list[str] | None = None) -> dict[str, Policy]:
    """Derive named policies from a base policy by changing order, coverage rule and tail method.

    Everything else (threshold, cutoff a, budget measure, targets, seeds) comes from ``base``.

    Parameters
    ----------
    base : Policy
        The policy the variants start from.
    names : list of str, optional
        Which of :data:`STANDARD_POLICIES` (default: all but ``forced-cost-first``, ``bootstrap-mc`` and the
        betting policies).

    Examples
    --------
    >>> from stopwise import Policy
    >>> from stopwise.replay import comparison_policies
    >>> p = comparison_policies(Policy(tail_cutoff=0.1), ["primary", "forced-uniform"])
    >>> p["forced-uniform"].tail_method, p["forced-uniform"].order.kind, p["primary"].tail_cutoff
    ('none', 'uniform', 0.1)
    >>> comparison_policies(Policy(), ["betting"])["betting"].decision.boundary
    'betting-wor'
    """
    chosen = names if names is not None else [n for n in STANDARD_POLICIES if n not in _NOT_BY_DEFAULT]
    unknown = [n for n in chosen if n not in STANDARD_POLICIES]
    if unknown:
        raise ArgumentError(f"unknown policy name(s) {unknown}; choose from {', '.join(STANDARD_POLICIES)}")
    result = {}
    for name in chosen:
        spec = STANDARD_POLICIES[name]
        data = base.model_dump()
        data["order"] = {**data["order"], "kind": spec["order"]}
        data["coverage"] = {**data["coverage"], "rule": spec["coverage"]}
        data["tail_method"] = spec["tail_method"]
        data["decision"] = {**data["decision"], "boundary": spec.get("boundary", "fixed-budget")}
        result[name] = Policy.model_validate(data)
    return result
