"""Following an evaluation while it runs: decide again whenever new outcomes arrive, until decided.

The library of ``stopwise watch``. It sits above :mod:`stopwise.ledger` (storage) and
:mod:`stopwise.ingest` (harness logs), below :mod:`stopwise.inspect`, :mod:`stopwise.report` and the CLI.

* :func:`follow` takes a look at a ledger whenever new events arrive (``stopwise watch LEDGER EVAL``);
  each look is a :class:`Look`.
* :func:`follow_inspect_logs` does the same for an Inspect log directory as its logs finish
  (``stopwise watch LOGDIR --tested A --baseline B``), without a ledger; each look is a
  :class:`LogLook`, and :class:`InspectLogDir` polls the directory for the rows of its finished logs.
  When the logs carry the paired Inspect managers' live decision, the look reports it as a
  :class:`LiveDecision` (the evaluation's decision), beside the decision taken again on the rows.
* :func:`follow_run_folder` does the same for a Harbor job folder or a SWE-bench run tree as its trials /
  instances finish (:class:`RunFolder`; :func:`run_folder_kind` tells the two apart).
"""

from stopwise.live._carried import LiveDecision
from stopwise.live._follow import FollowLook, Look, follow
from stopwise.live._logs import InspectLogDir, LogLook, follow_inspect_logs
from stopwise.live._runs import RunFolder, follow_run_folder, run_folder_kind

__all__ = [
    "FollowLook",
    "InspectLogDir",
    "LiveDecision",
    "LogLook",
    "Look",
    "RunFolder",
    "follow",
    "follow_inspect_logs",
    "follow_run_folder",
    "run_folder_kind",
]
