"""Adapters from harness logs to outcome rows and trajectories.

Read the files evaluation harnesses already write -- SWE-bench reports, Inspect AI logs,
tau2-bench results, Harbor / Terminal-Bench trial and job results, HAL uploads -- into the
outcome-row contract (and, where a log holds the messages, trajectories), so that decisions,
replays and early prediction work on a team's existing runs.

Runs whose outcome is unknown (a harness error, an unscored sample) or special (an empty
patch, a limit hit) stay distinguishable: their ``flags`` column names why (a policy's
``[flags]`` section excludes or counts them), and unknown outcomes become ``pending`` rows by
default, which a decision leaves out and counts. Runs that do not become rows are listed in
:attr:`IngestResult.skipped`. The rows are :attr:`IngestResult.columns` (validated
:class:`~stopwise.records.OutcomeColumns`), and :attr:`IngestResult.rows` the same rows as a frame.

:data:`SYSTEM_SOURCES` lists what :func:`system_template` (``--system-from``) may name a system by.
:func:`options_iv` validates the readers' options the way each reader does first; :mod:`stopwise.live` calls it
to refuse a bad option before it watches a log directory. What Inspect AI's log format itself is (documents,
``.eval`` archives, eval sets, score values) is read in :mod:`stopwise._logs`, which live and inspect share.
"""

from stopwise.ingest._api import (
    detect_format,
    ingest,
    read_hal,
    read_harbor,
    read_inspect,
    read_swebench,
    read_tau2,
)
from stopwise.ingest._common import INGEST_FORMATS, IngestResult, SkippedRecord, options_iv
from stopwise.ingest._inspect import SYSTEM_SOURCES, system_template

__all__ = [
    "INGEST_FORMATS",
    "SYSTEM_SOURCES",
    "IngestResult",
    "SkippedRecord",
    "detect_format",
    "ingest",
    "options_iv",
    "read_hal",
    "read_harbor",
    "read_inspect",
    "read_swebench",
    "read_tau2",
    "system_template",
]
