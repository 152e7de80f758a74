# ruff: noqa: E402  (the [inspect] extra is checked before the imports that need it)
"""Inspect AI integration: stop a live paired evaluation once the comparison is decided.

``stopwise.inspect`` needs ``inspect_ai`` (``pip install 'stopwise[inspect]'``); ``import stopwise``
does not import it. See ``docs/inspect.md`` for a complete example.

* :func:`paired_early_stopping` - two ``EarlyStopping`` managers (tested, baseline) sharing a ledger
* :func:`paired_manager` - one system's manager from the process's comparison for (ledger, evaluation):
  a one-line ``early_stopping=`` for task files run with ``inspect eval ... -T ledger=... -T evaluation=...``
* :func:`paired_model_early_stopping` - one manager for ``eval(task, model=[tested, baseline])``
* :class:`SystemEarlyStopping` - the manager of one system
* :class:`PairedComparison` - their shared state (ledger, planned universe, latest decision)
* :class:`PairedSpec` - what is compared (evaluation, systems, policy, universe, ...), given once to any of the above
* :func:`family_early_stopping` - one manager per system of a family race (k systems, the policy's ``[family]``):
  each system stops once its comparisons are decided
* :func:`family_model_early_stopping` - one manager for ``eval(task, model=[A, B, C, ...])`` racing a family
* :class:`FamilyRace`, :class:`FamilySpec` - a race's shared state, and what is raced
* :func:`planned_order` - the dataset in the policy's pre-registered order, and its universe
* :class:`LiveHalting` - halt running samples once an early-outcome model predicts their outcome
* :func:`steps_from_inspect` - trajectory steps of Inspect messages (as ``stopwise ingest`` reads a log)
"""

from stopwise._extras import require_extra as _require_extra

_require_extra("inspect", "stopwise.inspect")  # Inspect AI: else one line naming the extra

from stopwise.inspect._family import FamilyRace, SystemRaceStopping, family_early_stopping
from stopwise.inspect._family_models import ModelFamilyStopping, family_model_early_stopping
from stopwise.inspect._family_spec import FamilySpec
from stopwise.inspect._halting import LiveHalting, steps_from_inspect
from stopwise.inspect._manager import PairedComparison, SystemEarlyStopping, paired_early_stopping
from stopwise.inspect._models import ModelPairEarlyStopping, paired_model_early_stopping
from stopwise.inspect._order import planned_order
from stopwise.inspect._registry import paired_manager
from stopwise.inspect._spec import PairedSpec

__all__ = [
    "FamilyRace",
    "FamilySpec",
    "LiveHalting",
    "ModelFamilyStopping",
    "ModelPairEarlyStopping",
    "PairedComparison",
    "PairedSpec",
    "SystemEarlyStopping",
    "SystemRaceStopping",
    "family_early_stopping",
    "family_model_early_stopping",
    "paired_early_stopping",
    "paired_manager",
    "paired_model_early_stopping",
    "planned_order",
    "steps_from_inspect",
]
