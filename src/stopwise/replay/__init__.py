"""Completed-record replay: the budget grid, live looks, metrics and minimum sufficient budgets.

* :func:`replay_grid` - completed records under named policies on the budget grid (``stopwise replay``)
* :func:`replay_looks` - completed records with a look after every task (``stopwise replay --looks``)
* :func:`replay_source_grid`, :func:`replay_source_looks` - the same for one prepared source and one policy
* :func:`replay_joint` - the whole-evaluation replay: within-task halting (:func:`joint_halts`, audits,
  :func:`joint_rows`) and the across-task betting boundary, alone and joined, on trajectories
  (:func:`synthetic_trajectories` for a seeded benchmark)
* :func:`replay_family` - a completed record replayed as one family of systems under each family control
  (realised FWER, FDR and power by budget; :func:`family_claim_runs` and :func:`family_error_rates` its kernel;
  :func:`simulate_family` on seeded families, :func:`family_populations`)

The task orders a replay draws are the decision layer's (:func:`stopwise.compare.uniform_orders`,
:func:`~stopwise.compare.coverage_aware_orders`, ...). :func:`summary_table` (the live-look summary in readable
units) is shared with the CLI and :mod:`stopwise.report`.
"""

from stopwise.replay._engine import DEFAULT_BUDGETS, PolicyReplay, pair_orders, replay_source_grid
from stopwise.replay._family import (
    FAMILY_REPLAY_CONTROLS,
    FamilyReplay,
    family_claim_runs,
    family_error_rates,
    replay_family,
)
from stopwise.replay._family_simulation import family_populations, simulate_family
from stopwise.replay._joint import JOINT_MODES, REPLAY_POLICY, JointReplay, joint_halts, joint_rows, replay_joint
from stopwise.replay._joint_synthetic import synthetic_trajectories
from stopwise.replay._live import LIVE_RULES, LiveReplay, live_looks, replay_looks, replay_source_looks, summary_table
from stopwise.replay._metrics import sufficiency, summarize
from stopwise.replay._policies import STANDARD_POLICIES, comparison_policies
from stopwise.replay._report import table_two
from stopwise.replay._run import ReplayResult, replay_grid, source_table
from stopwise.replay._settings import LiveReplaySettings, ReplaySettings
from stopwise.replay._source import ReplayPair, ReplaySource, prepare_source
from stopwise.replay._verdict import ExceedanceVerdict, exceedance_verdict

__all__ = [
    "DEFAULT_BUDGETS",
    "FAMILY_REPLAY_CONTROLS",
    "JOINT_MODES",
    "LIVE_RULES",
    "REPLAY_POLICY",
    "STANDARD_POLICIES",
    "ExceedanceVerdict",
    "FamilyReplay",
    "JointReplay",
    "LiveReplay",
    "LiveReplaySettings",
    "PolicyReplay",
    "ReplayPair",
    "ReplayResult",
    "ReplaySettings",
    "ReplaySource",
    "comparison_policies",
    "exceedance_verdict",
    "family_claim_runs",
    "family_error_rates",
    "family_populations",
    "joint_halts",
    "joint_rows",
    "live_looks",
    "pair_orders",
    "prepare_source",
    "replay_family",
    "replay_grid",
    "replay_joint",
    "replay_looks",
    "replay_source_grid",
    "replay_source_looks",
    "simulate_family",
    "source_table",
    "sufficiency",
    "summarize",
    "summary_table",
    "synthetic_trajectories",
    "table_two",
]
