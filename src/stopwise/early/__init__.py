# ruff: noqa: E402  (the [early] extra is checked before the imports that need it)
"""Early outcome prediction within a task (EarlyEval): may this run halt now, and with what outcome?

- :class:`PrefixFeaturizer` — behavioral, textual (TF-IDF + TruncatedSVD per block) and reference features
  of every prefix of a run, in batch or one step at a time (:class:`PrefixStream`);
- :class:`DualHeadClassifier` — success and failure heads (LightGBM by default), Platt-calibrated
  (:class:`PlattCalibrator`) on a task-partitioned validation split;
- :class:`EarlyOutcomeModel` — the two together with the dual-threshold halting rule, save / load; when
  cross-fitted for risk control it deploys the mean of its fold heads (:class:`FoldAverageClassifier`);
- :class:`OnlineMonitor` — ``observe(step)`` → :class:`Verdict` (continue, or halt with the predicted outcome,
  and why); :func:`monitor_run` replays a finished run to its outcome row (:class:`RunMonitoring`);
- :func:`learn_then_test` — risk-controlled thresholds (``EarlyOutcomeModel(max_halt_error=...)``,
  :class:`RiskControl`); :class:`FamiliarityGuard` — holds halts on runs unlike the validated ones;
- :func:`make_variant` — the evaluation variants (:data:`VARIANTS`) by name;
- :func:`leave_one_out` — the paper's leave-one-agent-out / leave-one-group-out protocol, with every
  metric of its §IV on :class:`EarlyEvaluation` (:class:`EarlyMetrics`, threshold sweeps);
- :class:`TfidfLogisticModel` — the TF-IDF logistic-regression baseline.
"""

from stopwise._extras import require_extra as _require_extra

_require_extra("early", "stopwise early")  # scikit-learn and LightGBM: else one line naming the extra

from stopwise.early._baselines import TfidfLogisticModel
from stopwise.early._calibration import PlattCalibrator
from stopwise.early._checks import read_runs
from stopwise.early._evaluate import EVALUATION_KIND, THRESHOLDS, EarlyEvaluation, leave_one_out
from stopwise.early._featurizer import PrefixFeaturizer, PrefixStream
from stopwise.early._fold_average import FoldAverageClassifier
from stopwise.early._guard import FamiliarityGuard
from stopwise.early._halting import Verdict, halt_decision
from stopwise.early._heads import DualHeadClassifier
from stopwise.early._metrics import EarlyMetrics, early_metrics
from stopwise.early._model import DEPLOYED_HEADS, EXCLUDABLE, EarlyOutcomeModel
from stopwise.early._monitor import OnlineMonitor, RunMonitoring, monitor_run
from stopwise.early._persist import FORMAT_VERSION, check_output_dir, load_model
from stopwise.early._reference import GoldSolution, read_gold
from stopwise.early._risk import RiskControl, learn_then_test
from stopwise.early._variants import VARIANTS, make_variant

__all__ = [
    "DEPLOYED_HEADS",
    "EVALUATION_KIND",
    "EXCLUDABLE",
    "FORMAT_VERSION",
    "THRESHOLDS",
    "VARIANTS",
    "DualHeadClassifier",
    "EarlyEvaluation",
    "EarlyMetrics",
    "EarlyOutcomeModel",
    "FamiliarityGuard",
    "FoldAverageClassifier",
    "GoldSolution",
    "OnlineMonitor",
    "PlattCalibrator",
    "PrefixFeaturizer",
    "PrefixStream",
    "RiskControl",
    "RunMonitoring",
    "TfidfLogisticModel",
    "Verdict",
    "check_output_dir",
    "early_metrics",
    "halt_decision",
    "learn_then_test",
    "leave_one_out",
    "load_model",
    "make_variant",
    "monitor_run",
    "read_gold",
    "read_runs",
]
