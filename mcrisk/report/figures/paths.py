"""Whole scenarios as they happened: the capacity paths the fan charts draw over their bands.

A band's edges are per-day percentiles over scenarios: no scenario follows them, and the P50
line of a band is not the path of a typical scenario (for rolling-on-delivery its lowest point
is about 690 H100-eq, while the typical scenario's own lowest point is about 360). So the
charts also draw whole scenarios. For each strategy, the scenario at a quantile of a severity
metric is picked from the per-scenario metrics the kernel computed:

    nearest rank   the value numpy.quantile(method='inverted_cdf') gives at q (a value some
                   scenario had: the smallest v with count(values <= v) >= n * q)
    ties           the lowest scenario index among the scenarios with exactly that value

and replayed alone (every draw is addressed by scenario index, so simulating index i with
count 1 gives that scenario's node times) by the `replay` function the run hands over (the
run's own backend, seed and plan: this module never simulates), so that the path is the very
scenario whose metrics were counted (the replay's metrics are checked against them).
From its node times C(t) and the largest island's capacity are rebuilt exactly, as step
functions in continuous time (no day grid): every capacity event at its time, events at one
instant applied together, events at or before day 0 from day 0, with the scenario's drawn
per-GPU performance.

Scenario indices are the rows of result.metrics: a run simulates indices 0 .. samples - 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...plan.record import CompiledScenario
from ...core.definitions import METRICS, event_deltas
from ...results.bands import inverted_cdf_index
from ...results.quantiles import order_statistics

QUANTILES = (0.5, 0.9)
# Severity metric that picks the scenarios drawn on each chart (see docs/metrics.md):
# shortfall counts depth and duration together, against demand, and varies in every strategy
# of the reference, where trough depth is 0 or 2,048 in most scenarios of several strategies;
# the largest-island chart is about the largest job, so its scenarios are picked by
# homeless_days, the column the ranking shows for it.
SEVERITY = {"fan": "shortfall_gpu_days", "island": "homeless_days"}


def nearest_rank_scenario(values: np.ndarray, q: float) -> int:
    """Index of the scenario at the q-quantile of `values` (nearest rank, numpy's
    'inverted_cdf'); among scenarios with exactly that value, the lowest index."""
    values = np.asarray(values, dtype=np.float64)
    k = inverted_cdf_index(values.size, q)
    value = order_statistics(values, [k])[0]    # NaN sorts last, as in np.sort
    hits = np.flatnonzero(values == value) if value == value else np.flatnonzero(values != values)
    return int(hits[0])


@dataclass(frozen=True)
class StepPath:
    """A piecewise-constant function of time: value[j] on [start[j], start[j + 1]), the last
    piece up to `end`. start[0] = 0 and starts increase strictly, so every piece has positive
    length."""

    start: np.ndarray        # float64[m]
    value: np.ndarray        # float64[m]
    end: float

    @property
    def width(self) -> np.ndarray:
        return np.diff(np.append(self.start, self.end))

    def minimum(self) -> float:
        return float(self.value.min())

    def xy(self) -> tuple[np.ndarray, np.ndarray]:
        """Points for a step plot with where='post', running to `end`."""
        return np.append(self.start, self.end), np.append(self.value, self.value[-1])


def capacity_paths(plan: CompiledScenario, s: int, node_time: np.ndarray, world: np.ndarray,
                   end: float | None = None) -> tuple[StepPath, StepPath]:
    """(C(t), largest island's capacity) on [0, end) (default: the horizon) of one scenario
    and strategy s, from its node times (float64[v]) and drawn inputs (float64[q])."""
    end = plan.horizon if end is None else float(end)
    times = node_time[plan.cap_event_node]
    delta = event_deltas(plan, world[None, :])[0]
    cuts = np.unique(times[(times > 0) & (times < end)])     # sorted, distinct, inside (0, end)
    start = np.concatenate([[0.0], cuts])
    # the capacity on [start[j], ...) counts every event with time <= start[j] (ties together)
    applied = times[None, :] <= start[:, None]                # [m, k]
    islands = np.stack([plan.island_cap0[i] + (applied * np.where(plan.cap_event_island[s] == i,
                                                                  delta, 0.0)).sum(axis=1)
                        for i in range(plan.island_cap0.size)], axis=1)    # [m, islands]
    return (StepPath(start, islands.sum(axis=1), end),
            StepPath(start, islands.max(axis=1), end))


@dataclass(frozen=True)
class ScenarioPath:
    """One strategy in one replayed scenario, picked at `quantile` of `severity`."""

    strategy: str
    quantile: float
    severity: str                    # the metric that picked it (a name in METRICS)
    scenario: int                    # its index: row of result.metrics
    metrics: dict[str, float]        # its own six metrics, as the run computed them
    total: StepPath                  # C(t)
    largest: StepPath                # the largest island's capacity

    @property
    def label(self) -> str:
        return f"P{self.quantile * 100:g}"


class ReplayMismatch(RuntimeError):
    """A replayed scenario's metrics differ from the run's: the path would not be its path."""


def representative_paths(plan: CompiledScenario, replay, metrics: np.ndarray,
                         severity: str, quantiles: tuple[float, ...] = QUANTILES,
                         replayed: dict | None = None) -> dict[str, list[ScenarioPath]]:
    """{strategy: [ScenarioPath per quantile]} for the scenarios at `quantiles` of `severity`.

    replay(index) -> (metrics[1, s, 6], world[1, q], node_times[1, s, v]) simulates scenario
    `index` alone (RunResult.replay). metrics: float64[samples, strategies, 6], the run's
    (scenario i in row i). `replayed`, a
    cache {index: (metrics, world, node_times)} shared between calls, saves replaying a
    scenario twice.
    """
    replayed = {} if replayed is None else replayed
    k = METRICS.index(severity)
    out: dict[str, list[ScenarioPath]] = {}
    for s, name in enumerate(plan.strategy_names):
        paths = []
        for q in quantiles:
            index = nearest_rank_scenario(metrics[:, s, k], q)
            if index not in replayed:
                replayed[index] = _replay(replay, index, metrics[index])
            _, world, nodes = replayed[index]
            total, largest = capacity_paths(plan, s, nodes[0, s], world[0])
            paths.append(ScenarioPath(name, q, severity, index,
                                      dict(zip(METRICS, map(float, metrics[index, s]))),
                                      total, largest))
        out[name] = paths
    return out


def _replay(replay, index: int, expected: np.ndarray):
    """Simulate scenario `index` alone, with node times; its metrics must be the run's."""
    again, world, nodes = replay(index)
    same = np.isclose(again[0], expected, rtol=1e-12, atol=0.0) | (again[0] == expected)
    if not same.all():
        raise ReplayMismatch(f"replaying scenario {index} gave "
                             f"metrics {again[0].tolist()}, the run had {expected.tolist()}")
    return again, world, nodes
