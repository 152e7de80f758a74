"""Completed-record replay: task orders, the budget grid, metrics and minimum sufficient budgets."""

from stopwise.compare import (  # the task orders of the replay are the decision layer's
    cost_first_orders,
    coverage_aware_orders,
    coverage_deadlines,
    neyman_orders,
    task_order,
    uniform_orders,
)
from stopwise.replay._engine import (
    CASE_COLUMNS,
    DEFAULT_BUDGETS,
    REPLAY_EXACT_MAX_SUPPORT,
    PolicyReplay,
    pair_orders,
    replay_policy,
)
from stopwise.replay._live import LIVE_RULES, LiveReplay, live_looks, live_replay, replay_live
from stopwise.replay._metrics import SUMMARY_KEYS, sufficiency, summarize
from stopwise.replay._policies import STANDARD_POLICIES, comparison_policies
from stopwise.replay._report import markdown_report, markdown_table, plot_unresolved, table_two
from stopwise.replay._run import ReplayResult, replay, source_table
from stopwise.replay._settings import LiveReplaySettings, ReplaySettings
from stopwise.replay._source import ReplayPair, ReplaySource, prepare_source

__all__ = [
    "CASE_COLUMNS",
    "DEFAULT_BUDGETS",
    "LIVE_RULES",
    "REPLAY_EXACT_MAX_SUPPORT",
    "STANDARD_POLICIES",
    "SUMMARY_KEYS",
    "LiveReplay",
    "LiveReplaySettings",
    "PolicyReplay",
    "ReplayPair",
    "ReplayResult",
    "ReplaySettings",
    "ReplaySource",
    "comparison_policies",
    "cost_first_orders",
    "coverage_aware_orders",
    "coverage_deadlines",
    "live_looks",
    "live_replay",
    "markdown_report",
    "markdown_table",
    "neyman_orders",
    "pair_orders",
    "plot_unresolved",
    "prepare_source",
    "replay",
    "replay_live",
    "replay_policy",
    "source_table",
    "sufficiency",
    "summarize",
    "table_two",
    "task_order",
    "uniform_orders",
]
