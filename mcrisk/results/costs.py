"""summary.json's costs (issue 13): per strategy, each cost column's mean, P50, P90, P99 and
P90 interval, and the top-level `costs` block that says what the columns are.

The statistics are the metrics' own (statistics.metric_summary: one sort per column, numpy's
percentiles to the bit, the distribution-free P90 interval), taken from the run's kept costs
[scenario, strategy, cost] (SimulationResult.costs; columns in definitions.COSTS order). A run
without a [costs] section has no costs and none of these keys.
"""
from __future__ import annotations

import numpy as np

from .statistics import summarize_columns
from ..core.definitions import COST_COMPONENTS, COSTS
from ..core.labels import label, meaning

DEFAULT_CURRENCY = "USD"

# One line per cost column: what it counts (core.labels' meaning; docs/costs.md defines each
# exactly), as summary.json's costs.columns lists them.
COST_MEANINGS = {c: meaning(c) for c in COSTS}
LARGEST = 3                 # components named beside a strategy's total


def summarize_costs(costs: np.ndarray, strategy_names: tuple[str, ...]) -> dict:
    """{strategy: {cost column: summary}} from costs[scenario, strategy, cost]: each summary
    is metric_summary's (mean, p50, p90, p99, p90_ci, with p90_ci_unavailable where there is
    no interval), one sort of one column's copy at a time."""
    return summarize_columns(costs, strategy_names, COSTS, "costs")


def costs_block(currency: str | None, horizon: float, start: float = 0.0) -> dict:
    """summary.json's top-level `costs`: the currency (a label), the window every cost counts
    ([start, horizon] days: start 0, or a status's as_of) and one line per column saying what
    it counts."""
    return {"currency": currency or DEFAULT_CURRENCY,
            "window_days": [float(start), float(horizon)],
            "columns": dict(COST_MEANINGS)}


def largest_components(per_cost: dict, top: int = LARGEST) -> list[tuple[str, float]]:
    """The `top` components of one strategy's `costs` (summary.json) with the largest mean,
    largest first, as (label, mean); components whose mean is 0 or not a number are left out,
    ties keep COSTS order."""
    means = [(label(c), per_cost[c]["mean"]) for c in COST_COMPONENTS
             if per_cost.get(c) and per_cost[c]["mean"] is not None and per_cost[c]["mean"] > 0]
    return sorted(means, key=lambda pair: -pair[1])[:top]
