"""Harness logs read directly, below the packages that read them: shared by ingest, live and inspect.

A private package on its own floor (``docs/architecture.md``), just above :mod:`stopwise.records` (whose
``Step`` it builds): what the Inspect-log reader of :mod:`stopwise.ingest`, the log-directory
watcher of :mod:`stopwise.live` and the live managers of :mod:`stopwise.inspect` all need of a log, exported here
so that none of them imports another's private modules.

* chat transcripts to steps (:func:`steps_from_messages`, :func:`text_of`, :func:`render_call`), for every
  adapter that keeps the messages;
* a harness's JSON file read with the limits (:func:`load_json`);
* Inspect AI's log format: the documents (:func:`is_json_log`, :func:`load_eval`, :func:`member_json` with a bound
  on every zip member, :func:`early_stopping_of`), eval-set folders (:func:`select_eval_set_logs`), score values
  (:func:`score_outcome`, :func:`score_predicted`, :func:`score_audit_flags`) and messages (:func:`message_steps`).

Rows, options, system names and the collector stay :mod:`stopwise.ingest`'s.
"""

from stopwise._logs._inspect import (
    early_stopping_of,
    is_json_log,
    load_eval,
    member_json,
    message_steps,
    score_audit_flags,
    score_outcome,
    score_predicted,
    score_probability_flags,
    select_eval_set_logs,
)
from stopwise._logs._json import load_json
from stopwise._logs._transcript import render_call, steps_from_messages, text_of

__all__ = [
    "early_stopping_of",
    "is_json_log",
    "load_eval",
    "load_json",
    "member_json",
    "message_steps",
    "render_call",
    "score_audit_flags",
    "score_outcome",
    "score_predicted",
    "score_probability_flags",
    "select_eval_set_logs",
    "steps_from_messages",
    "text_of",
]
