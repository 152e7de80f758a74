"""Completed-record replay: task orders, the budget grid, metrics and minimum sufficient budgets."""

from stopwise.replay._engine import CASE_COLUMNS, DEFAULT_BUDGETS, REPLAY_EXACT_MAX_SUPPORT, PolicyReplay, replay_policy
from stopwise.replay._orders import (
    cost_first_orders,
    coverage_aware_orders,
    coverage_deadlines,
    neyman_orders,
    uniform_orders,
)
from stopwise.replay._policies import STANDARD_POLICIES, comparison_policies
from stopwise.replay._source import ReplayPair, ReplaySource, prepare_source

__all__ = [
    "CASE_COLUMNS",
    "DEFAULT_BUDGETS",
    "REPLAY_EXACT_MAX_SUPPORT",
    "STANDARD_POLICIES",
    "PolicyReplay",
    "ReplayPair",
    "ReplaySource",
    "comparison_policies",
    "cost_first_orders",
    "coverage_aware_orders",
    "coverage_deadlines",
    "neyman_orders",
    "prepare_source",
    "replay_policy",
    "uniform_orders",
]
