"""The named model variants of an evaluation (the paper's backbones), built in one place."""

from __future__ import annotations

from typing import Any

from stopwise.errors import InputError

__all__ = ["VARIANTS", "make_variant"]

VARIANTS: dict[str, str] = {
    "lightgbm": "LightGBM (the paper's backbone)",
    "dense-lr": "Linear (dense LR)",
    "tfidf-lr": "Linear (TF-IDF LR)",
}
"""Variant name → the label of the paper's Table VI."""


def make_variant(name: str, *, min_steps: int = 10, random_state: Any = 42, n_jobs: int | None = None, **params: Any) -> Any:
    """A fresh, unfitted model for a variant name; ``params`` go to the model (e.g. ``max_halt_error``).

    Examples
    --------
    >>> make_variant("dense-lr").backbone
    'logistic'
    >>> type(make_variant("tfidf-lr")).__name__
    'TfidfLogisticModel'
    """
    from stopwise.early._baselines import TfidfLogisticModel
    from stopwise.early._heads import DualHeadClassifier
    from stopwise.early._model import EarlyOutcomeModel

    if name == "tfidf-lr":
        return TfidfLogisticModel(min_steps=min_steps, random_state=random_state, **params)
    if name in ("lightgbm", "dense-lr"):
        backbone = "logistic" if name == "dense-lr" else "lightgbm"
        heads = DualHeadClassifier(backbone=backbone, n_jobs=n_jobs)
        return EarlyOutcomeModel(classifier=heads, min_steps=min_steps, random_state=random_state, **params)
    raise InputError(f"variant must be one of {', '.join(VARIANTS)}; got {name!r}")
