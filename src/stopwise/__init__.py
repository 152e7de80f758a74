"""stopwise: when may an LLM-agent evaluation stop, and what may it claim?

The headline verbs and types; everything else lives in its subpackage:

* records  - outcome rows, trajectories, the comparison policy, the task universe and the decision record
* compare  - pairing, the coverage rule, tail probabilities and :func:`decide`
* replay   - completed-record replay: the budget grid (:func:`replay_grid`) and live looks (:func:`replay_looks`)
* early    - early outcome prediction within a task (loaded on first use: it imports LightGBM)
* finality - completion arguments, open-effects records and the controlled delayed-write replay
* ingest   - SWE-bench, Inspect AI, tau2-bench, Harbor / Terminal-Bench and HAL logs to outcome rows
  (``stopwise.ingest.ingest``)
* ledger   - the durable decision ledger: outcome events and a hash-chained decision history in
  SQLite or PostgreSQL (:func:`open_ledger`)
* live     - following an evaluation while it runs: a ledger's new events or an Inspect log directory's
  finished logs, deciding again at each look (``stopwise watch``)
* inspect  - Inspect AI early-stopping managers that decide over a ledger
* report   - self-contained HTML pages of decision records, replays, early-outcome and finality results
* cli      - the ``stopwise`` command (``stopwise.cli.main``)

Every name but the errors is loaded on first use (PEP 562 module ``__getattr__``), so that
``import stopwise`` and the ``stopwise`` command start without pandas, scikit-learn, LightGBM or
matplotlib (:func:`stopwise._lazy.lazy_exports`). **To export a name, add its import inside the
``if TYPE_CHECKING:`` block below** (and to ``__all__``): that block is the one list of lazy exports.
``tests/test_exports.py`` pins the set; keep it to the headline names (at most 40).

The subpackages keep their own names: ``stopwise.replay`` and ``stopwise.ingest`` are modules, not
functions.
"""

import typing as _typing

from stopwise._lazy import lazy_exports as _lazy_exports
from stopwise._version import __version__
from stopwise.errors import (
    ComparisonError,
    FileFormatError,
    InputError,
    LedgerError,
    OutputExistsError,
    PolicyError,
    StopwiseError,
    TaskUniverseError,
    ValidationError,
)

if _typing.TYPE_CHECKING:  # the lazy exports (stopwise._lazy): read at run time, imported on first use
    from stopwise.compare import decide, pair_outcomes, tail_probabilities
    from stopwise.early import EarlyOutcomeModel
    from stopwise.early import load_model as load_early_model
    from stopwise.finality import check_argument, check_runs, load_argument
    from stopwise.ledger import open_ledger
    from stopwise.records import (
        ACTIONS,
        OUTCOME_COLUMNS,
        DecisionRecord,
        OutcomeColumns,
        Policy,
        TaskUniverse,
        Trajectory,
        load_policy,
        outcome_columns,
        read_outcomes,
        read_task_universe,
        read_trajectories,
        write_outcomes,
    )
    from stopwise.replay import replay_grid, replay_looks


__getattr__, __dir__ = _lazy_exports(__name__, __file__, subpackages=True)


__all__ = [
    "ACTIONS",
    "OUTCOME_COLUMNS",
    "ComparisonError",
    "DecisionRecord",
    "EarlyOutcomeModel",
    "FileFormatError",
    "InputError",
    "LedgerError",
    "OutcomeColumns",
    "OutputExistsError",
    "Policy",
    "PolicyError",
    "StopwiseError",
    "TaskUniverse",
    "TaskUniverseError",
    "Trajectory",
    "ValidationError",
    "__version__",
    "check_argument",
    "check_runs",
    "decide",
    "load_argument",
    "load_early_model",
    "load_policy",
    "open_ledger",
    "outcome_columns",
    "pair_outcomes",
    "read_outcomes",
    "read_task_universe",
    "read_trajectories",
    "replay_grid",
    "replay_looks",
    "tail_probabilities",
    "write_outcomes",
]
