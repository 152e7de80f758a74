"""Outcome finality and cross-unit separation: is a scored outcome final, and are runs separate trials?

Implements Casheekar, "When Is an Agent Evaluation Over? Outcome Finality and Cross-Unit
Separation": the open-effects record (what may outlive a run's endpoint, with the system's
evidence), the completion argument and its checker (per run: final / unresolved / bounded label,
separate / grouped unit), the link to outcome rows, and the controlled replay against a real local
HTTP service that reproduces the paper's counts.
"""

import typing as _typing

from stopwise._lazy import lazy_exports as _lazy_exports
from stopwise.finality._argument import (
    CompletionArgument,
    OutcomeSpec,
    ProtocolSpec,
    RouteSpec,
    ScoringSpec,
    load_argument,
    parse_argument,
)
from stopwise.finality._check import ArgumentCheck, RunCheck, ScoredRun, check_argument, check_runs
from stopwise.finality._effects import (
    EffectEntry,
    EffectRoute,
    OpenEffectsRecord,
    Probe,
    Sweep,
    load_effects_record,
    parse_effects_record,
)
from stopwise.finality._examples import EXAMPLE_ARGUMENTS, example_argument, example_text
from stopwise.finality._replay import arun_controlled_replay, run_controlled_replay
from stopwise.finality._replay_record import (
    REPLAY_CONDITIONS,
    ConditionResult,
    ConditionSummary,
    DelayedWriteReplay,
    ReplayCount,
    ReplaySchedule,
    TrialObservation,
)
from stopwise.finality._replay_runner import ToolCall
from stopwise.finality._rows import finality_rows
from stopwise.finality._runs import read_scored_runs
from stopwise.finality._schema import SCHEMA_NAMES, finality_schema

if _typing.TYPE_CHECKING:  # the lazy exports (stopwise._lazy): their module imports FastAPI and uvicorn
    from stopwise.finality._service import LocalService, ServiceStore, create_service_app

__getattr__, __dir__ = _lazy_exports(__name__, __file__)


__all__ = [
    "EXAMPLE_ARGUMENTS",
    "REPLAY_CONDITIONS",
    "SCHEMA_NAMES",
    "ArgumentCheck",
    "CompletionArgument",
    "ConditionResult",
    "ConditionSummary",
    "DelayedWriteReplay",
    "EffectEntry",
    "EffectRoute",
    "LocalService",
    "OpenEffectsRecord",
    "OutcomeSpec",
    "Probe",
    "ProtocolSpec",
    "ReplayCount",
    "ReplaySchedule",
    "RouteSpec",
    "RunCheck",
    "ScoredRun",
    "ScoringSpec",
    "ServiceStore",
    "Sweep",
    "ToolCall",
    "TrialObservation",
    "arun_controlled_replay",
    "check_argument",
    "check_runs",
    "create_service_app",
    "example_argument",
    "example_text",
    "finality_rows",
    "finality_schema",
    "load_argument",
    "load_effects_record",
    "parse_argument",
    "parse_effects_record",
    "read_scored_runs",
    "run_controlled_replay",
]
