"""The demand curve as the kernels take it: its points' days, values, growth quantities and
medians (a fixed curve, or a forecast grown by the scenario's drawn growth)."""
from __future__ import annotations

import math

import numpy as np

from ..core.distributions import encode, median, ppf
from ..core.model import Distribution, Scenario


def demand_points(scenario: Scenario, growth_q: int) -> tuple[np.ndarray, ...]:
    """The demand points' days, values, growth quantities (-1: the value is fixed) and
    medians (the report's demand line).

    A fixed curve is its points. A forecast is taken at day 0, every points_every_days and
    the horizon: with an uncertain growth each value is the base workload_at_day0 / per_h100
    and the kernels multiply it by (1 + g)^(day / 365) for the scenario's draw g (quantity
    growth_q); with a certain growth the value is that product, computed here with the same
    formula (so a forecast without uncertainty is exactly the fixed curve of its values).
    D(day) grows with g, so its median is the curve at the median growth."""
    forecast = scenario.demand.forecast
    if forecast is None:
        points = np.array(scenario.demand.points, dtype=np.float64).reshape(-1, 2)
        values = np.ascontiguousarray(points[:, 1])
        return (np.ascontiguousarray(points[:, 0]), values,
                np.full(len(points), -1, dtype=np.int32), values.copy())
    horizon = float(scenario.horizon_days)
    days = list(np.arange(0.0, horizon, forecast.points_every_days)) + [horizon]
    base = forecast.workload_at_day0 / forecast.per_h100

    def curve(g: float) -> np.ndarray:
        return np.array([base * math.pow(1.0 + g, day / 365.0) for day in days])

    growth = forecast.growth_per_year
    p50 = curve(_median(growth))
    values = np.full(len(days), base) if growth_q >= 0 else curve(growth.params[0])
    return (np.array(days, dtype=np.float64), values,
            np.full(len(days), growth_q, dtype=np.int32), p50)


def _median(dist: Distribution) -> float:
    """The median of a distribution: a `chance` with probability p of drawing its inner
    distribution is 0 when p <= 1/2, else the inner's quantile at 1 - 1 / (2 p)."""
    if dist.kind != "chance":
        return median(dist)
    p = dist.params[0]
    if p <= 0.5:
        return 0.0
    kind, params, _ = encode(dist.inner, tables := [])
    table = np.concatenate(tables) if tables else np.zeros(1)
    return float(ppf(kind, np.array(params), table, np.array(1.0 - 0.5 / p)))
