"""Completed-record replay: task orders, the budget grid, metrics and minimum sufficient budgets."""

from stopwise.replay._orders import (
    cost_first_orders,
    coverage_aware_orders,
    coverage_deadlines,
    neyman_orders,
    uniform_orders,
)

__all__ = [
    "cost_first_orders",
    "coverage_aware_orders",
    "coverage_deadlines",
    "neyman_orders",
    "uniform_orders",
]
