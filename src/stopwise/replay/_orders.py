"""Task orders of the replay: drawn by the decision layer's functions (:mod:`stopwise.compare._orders`)."""

from stopwise.compare._orders import (
    cost_first_orders,
    coverage_aware_orders,
    coverage_deadlines,
    neyman_from_draws,
    neyman_orders,
    stratified_draws,
    uniform_orders,
)

__all__ = [
    "cost_first_orders",
    "coverage_aware_orders",
    "coverage_deadlines",
    "neyman_from_draws",
    "neyman_orders",
    "stratified_draws",
    "uniform_orders",
]
