"""The Pareto frontier of strategies on risk against cost, never drawn on Monte Carlo noise.

Four frontiers, one per pair of a risk axis and a cost axis (lower is better on each):

    risk: the P90 of trough_depth, or of shortfall_gpu_days   (RISK_AXES)
    cost: the mean of cost_total, or its P90                  (COST_AXES)

Strategy A dominates strategy B on a frontier when A's estimate is no worse than B's on both
axes (equal or lower) and A is better on at least one of them beyond Monte Carlo noise, by a
paired test on the same sampled worlds:

- a mean: the paired difference A - B has an interval (mcrisk.results.compare.mean_ci, the
  interval paired_difference reports, at the level below) that lies wholly below 0;
- a P90: the ranking's test (mcrisk.results.ranking): McNemar at the pooled P90
  (paired_quantile_test) finds B's P90 above A's, and where the pooled P90 is an atom (a value
  several worlds share, such as a trough depth of 0) atom_check agrees.

A difference within noise therefore never makes a strategy dominated: the frontier is every
strategy no other dominates, a superset of the frontier the estimates alone would draw. An axis
whose estimate is not a finite number compares with nothing (no dominance either way).

Error rate: every test runs at ranking.per_test_alpha over the four axes and every pair of
strategies (Bonferroni), so the chance that the four frontiers together call any strategy
dominated on a difference that is not there is at most FAMILY_ALPHA (5%), to the accuracy of
the tests (the mean's interval is a normal approximation, good for the thousands of scenarios
a run has).

Input: the per-scenario arrays of a run, metrics[n, s, N_METRICS] (mcrisk.core.definitions.METRICS)
and costs[n, s, N_COSTS] (mcrisk.core.definitions.COSTS); scenario i is the same world for every
strategy. Pure statistics: nothing here reads a file or formats a number.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .statistics import finite_mean
from ..core.definitions import COST_TOTAL, METRICS
from .compare import mean_ci
from .paired import paired_quantile_test, pooled_quantile
from .quantiles import linear_quantile
from .ranking import FAMILY_ALPHA, RANK_QUANTILE, atom_check, per_test_alpha

RISK_AXES = ("trough_depth", "shortfall_gpu_days")      # the P90 of each, from metrics
COST_AXES = ("mean", "p90")                              # of cost_total, from costs
COST_COLUMN = COST_TOTAL


@dataclass(frozen=True)
class Frontier:
    """One frontier: `risk` (a metric, at its P90) against `cost` ("mean" or "p90" of
    cost_total). risk_values / cost_values: each strategy's estimate (None where not finite).
    frontier: the strategies no other dominates, cheapest first (then lower risk, then the
    scenario file's order). dominated_by: every strategy to the ones that dominate it, in the
    file's order (empty for those on the frontier)."""
    risk: str
    cost: str
    risk_values: dict[str, float | None]
    cost_values: dict[str, float | None]
    frontier: tuple[str, ...]
    dominated_by: dict[str, tuple[str, ...]]

    @property
    def dominated(self) -> tuple[str, ...]:
        """The strategies some other dominates, in the scenario file's order."""
        return tuple(name for name, by in self.dominated_by.items() if by)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def p90_estimate(values: np.ndarray) -> float | None:
    """numpy.quantile's P90 (the summary's and the ranking's), None when it is not finite."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _finite(linear_quantile(values, RANK_QUANTILE))     # numpy.quantile's


def mean_lower(a: np.ndarray, b: np.ndarray, level: float) -> bool:
    """Whether the mean of a is below that of b beyond noise: the paired difference a - b has
    a two-sided interval at confidence 1 - level that lies wholly below 0."""
    ci = mean_ci(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64),
                 confidence=1.0 - level)
    return ci is not None and ci[1] < 0.0


def p90_lower(a: np.ndarray, b: np.ndarray, p90_a: float | None, p90_b: float | None,
              level: float) -> bool:
    """Whether the P90 of a (p90_a) is below that of b (p90_b) beyond noise, as the ranking
    decides it (quantile_lower at RANK_QUANTILE). Equal or missing P90s are never told
    apart."""
    if p90_a is None or p90_b is None:
        return False
    return quantile_lower(a, b, RANK_QUANTILE, p90_a, p90_b, level)


def quantile_lower(a: np.ndarray, b: np.ndarray, q: float, qa: float, qb: float,
                   level: float) -> bool:
    """Whether the q-quantile of a (estimate qa) is below that of b (qb) beyond noise: the
    estimates differ, the paired McNemar test at the pooled quantile says so at `level`, and
    at an atom (several worlds at the pooled value) atom_check agrees. Estimates that are not
    finite, or not in that order, are never told apart."""
    if not (math.isfinite(qa) and math.isfinite(qb)) or not qa < qb:
        return False
    pooled = pooled_quantile(a, b, q)
    p_value, direction = paired_quantile_test(a, b, q, pooled)
    if direction != 1 or not p_value < level:
        return False
    if np.count_nonzero(a == pooled) + np.count_nonzero(b == pooled) > 1:      # an atom
        return atom_check(a, b, (qa + qb) / 2, level, q)
    return True


class _Axes:
    """Each strategy's column, estimate and pairwise 'lower beyond noise' on every axis,
    each test made once however many frontiers ask for it."""

    def __init__(self, metrics: np.ndarray, costs: np.ndarray, level: float):
        self.level = level
        self.tested: dict[tuple[str, int, int], bool] = {}
        self.columns = {risk: metrics[:, :, METRICS.index(risk)] for risk in RISK_AXES}
        total = costs[:, :, COST_COLUMN]
        self.columns["mean"] = self.columns["p90"] = total
        count = metrics.shape[1]
        self.values = {axis: [p90_estimate(column[:, s]) for s in range(count)]
                       for axis, column in self.columns.items() if axis != "mean"}
        self.values["mean"] = [_finite(finite_mean(total[:, s])) for s in range(count)]

    def lower(self, axis: str, a: int, b: int) -> bool:
        """Whether strategy a is lower (better) than b on `axis` beyond noise."""
        key = (axis, a, b)
        if key not in self.tested:
            self.tested[key] = self._lower(axis, a, b)
        return self.tested[key]

    def _lower(self, axis: str, a: int, b: int) -> bool:
        x, y = self.columns[axis][:, a], self.columns[axis][:, b]
        if axis == "mean":
            va, vb = self.values["mean"][a], self.values["mean"][b]
            return va is not None and vb is not None and va < vb and mean_lower(x, y, self.level)
        return p90_lower(x, y, self.values[axis][a], self.values[axis][b], self.level)

    def dominates(self, risk: str, cost: str, a: int, b: int) -> bool:
        """Whether a is no worse than b on both estimates and better beyond noise on one."""
        for axis in (risk, cost):
            va, vb = self.values[axis][a], self.values[axis][b]
            if va is None or vb is None or va > vb:
                return False
        return self.lower(risk, a, b) or self.lower(cost, a, b)


def pair_test_level(strategies: int, family_alpha: float = FAMILY_ALPHA) -> float:
    """The level of each paired test: family_alpha over the four axes and every pair of
    `strategies` (ranking.per_test_alpha, Bonferroni)."""
    return per_test_alpha(strategies, len(RISK_AXES) + len(COST_AXES), family_alpha)


def _check_shapes(metrics: np.ndarray, costs: np.ndarray, names: Sequence[str]) -> None:
    count = len(names)
    if metrics.ndim != 3 or metrics.shape[1] != count or metrics.shape[2] < len(METRICS):
        raise ValueError(f"metrics must be [scenario, {count} strategies, {len(METRICS)} "
                         f"metrics], got shape {metrics.shape}")
    if costs.ndim != 3 or costs.shape[:2] != metrics.shape[:2] or costs.shape[2] <= COST_COLUMN:
        raise ValueError(f"costs must be [{metrics.shape[0]} scenarios, {count} strategies, "
                         f"cost columns], got shape {costs.shape}")
    if metrics.shape[0] < 1:
        raise ValueError("no scenarios to draw a frontier from")


def pareto_frontiers(metrics: np.ndarray, costs: np.ndarray, names: Sequence[str],
                     family_alpha: float = FAMILY_ALPHA) -> list[Frontier]:
    """The four frontiers (RISK_AXES x COST_AXES, in that order) of strategies `names` from
    a run's per-scenario metrics[n, s, 6] and costs[n, s, 9] (see the module docstring)."""
    metrics, costs = np.asarray(metrics), np.asarray(costs)
    _check_shapes(metrics, costs, names)
    count = len(names)
    axes = _Axes(metrics, costs, pair_test_level(count, family_alpha))
    out = []
    for risk in RISK_AXES:
        for cost in COST_AXES:
            by = {names[b]: tuple(names[a] for a in range(count)
                                  if a != b and axes.dominates(risk, cost, a, b))
                  for b in range(count)}
            risk_of = dict(zip(names, axes.values[risk]))
            cost_of = dict(zip(names, axes.values[cost]))

            def order(s: int) -> tuple:
                missing = cost_of[names[s]] is None or risk_of[names[s]] is None
                return (missing, cost_of[names[s]] or 0.0, risk_of[names[s]] or 0.0, s)

            front = tuple(names[s] for s in sorted(range(count), key=order) if not by[names[s]])
            out.append(Frontier(risk, cost, risk_of, cost_of, front, by))
    return out


def frontier_of(frontiers: Sequence[Frontier], risk: str, cost: str) -> Frontier:
    """The frontier of `risk` against `cost` among `frontiers`."""
    return next(f for f in frontiers if f.risk == risk and f.cost == cost)
