"""Completed-record replay: task orders, the budget grid, live looks, metrics and minimum sufficient budgets.

* :func:`replay_grid` - completed records under named policies on the budget grid (``stopwise replay``)
* :func:`replay_looks` - completed records with a look after every task (``stopwise replay --looks``)
* :func:`replay_source_grid`, :func:`replay_source_looks` - the same for one prepared source and one policy
* :func:`replay_joint` - the whole-evaluation replay: within-task halting (:func:`joint_halts`, audits,
  :func:`joint_rows`) and the across-task betting boundary, alone and joined, on trajectories
  (:func:`synthetic_trajectories` for a seeded benchmark)

``replay``, ``replay_policy``, ``live_replay`` and ``replay_live`` (before 0.1) are deprecated aliases of
these four, kept for one release.
"""

from stopwise._lazy import lazy_exports as _lazy_exports
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
    replay_source_grid,
)
from stopwise.replay._joint import JOINT_MODES, REPLAY_POLICY, JointReplay, joint_halts, joint_rows, replay_joint
from stopwise.replay._joint_synthetic import synthetic_trajectories
from stopwise.replay._live import LIVE_RULES, LiveReplay, live_looks, replay_looks, replay_source_looks
from stopwise.replay._metrics import SUMMARY_KEYS, sufficiency, summarize
from stopwise.replay._policies import STANDARD_POLICIES, comparison_policies
from stopwise.replay._report import markdown_report, markdown_table, table_two
from stopwise.replay._run import ReplayResult, replay_grid, source_table
from stopwise.replay._settings import LiveReplaySettings, ReplaySettings
from stopwise.replay._source import ReplayPair, ReplaySource, prepare_source

__getattr__, __dir__ = _lazy_exports(
    __name__,
    __file__,
    deprecated={  # the names before 0.1, kept for one release
        "replay": "stopwise.replay:replay_grid",
        "replay_policy": "stopwise.replay:replay_source_grid",
        "live_replay": "stopwise.replay:replay_looks",
        "replay_live": "stopwise.replay:replay_source_looks",
    },
)

__all__ = [
    "CASE_COLUMNS",
    "DEFAULT_BUDGETS",
    "JOINT_MODES",
    "LIVE_RULES",
    "REPLAY_EXACT_MAX_SUPPORT",
    "REPLAY_POLICY",
    "STANDARD_POLICIES",
    "SUMMARY_KEYS",
    "JointReplay",
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
    "joint_halts",
    "joint_rows",
    "live_looks",
    "markdown_report",
    "markdown_table",
    "neyman_orders",
    "pair_orders",
    "prepare_source",
    "replay_grid",
    "replay_joint",
    "replay_looks",
    "replay_source_grid",
    "replay_source_looks",
    "source_table",
    "sufficiency",
    "summarize",
    "synthetic_trajectories",
    "table_two",
    "task_order",
    "uniform_orders",
]
