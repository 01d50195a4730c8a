"""Stop on precision: sample in chunks until every reported P90 is known well enough.

The target is met when, for every strategy and continuous metric, the P90's 95% interval
half-width (the larger side) is at most `relative` x |P90| or at most `floor` (in the
metric's own unit), so that metrics near zero do not demand infinite samples. Draws are
addressed by scenario index, so growing a run from n to 2n scenarios gives exactly the run
of 2n scenarios.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..aggregate import CONTINUOUS_METRICS, p90_confidence_interval


@dataclass(frozen=True)
class PrecisionTarget:
    relative: float = 0.02
    floor: float = 0.5
    start: int = 10_000
    max_samples: int = 10_000_000


def parse_precision(text: str) -> float:
    """'2%' or '0.02' -> 0.02."""
    text = text.strip()
    value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    if not 0 < value < 1:
        raise ValueError(f"precision must be a fraction in (0, 1) or a percentage, got {text!r}")
    return value


def worst_shortfall(metrics: np.ndarray, strategy_names, target: PrecisionTarget) -> dict:
    """The P90 whose interval is widest against its allowance, and whether all meet it.

    Returns {"met": bool, "strategy", "metric", "p90", "half_width", "allowed"}.
    """
    worst = None
    for s, strategy in enumerate(strategy_names):
        for k, metric in enumerate(CONTINUOUS_METRICS):
            values = metrics[:, s, k]
            p90 = float(np.quantile(values, 0.9))
            low, high = p90_confidence_interval(values)
            half = max(p90 - low, high - p90)
            allowed = max(target.relative * abs(p90), target.floor)
            ratio = half / allowed
            if worst is None or ratio > worst["ratio"]:
                worst = {"strategy": strategy, "metric": metric, "p90": p90,
                         "half_width": half, "allowed": allowed, "ratio": ratio}
    worst["met"] = worst["ratio"] <= 1.0
    return worst


def next_sample_count(current: int, worst: dict, target: PrecisionTarget) -> int:
    """CI half-widths shrink like 1/sqrt(n): aim a little past the estimate, at least
    +50%, at most x4, never past the cap."""
    grow = min(4.0, max(1.5, 1.2 * worst["ratio"] ** 2))
    return min(target.max_samples, int(np.ceil(current * grow)))


def simulate_to_precision(plan, seed: int, backend, target: PrecisionTarget,
                          chunk_size: int, progress=None, chunk_hooks=()):
    """Simulate scenarios 0 .. n - 1, growing n until `target` is met or max_samples is hit.

    Returns (SimulationResult of all n scenarios, the last `worst_shortfall` report).
    """
    from ..simulate import DEFAULT_KEEP_WORLD, SimulationResult, simulate

    n = min(target.start, target.max_samples)
    result = simulate(plan, n, seed, backend, chunk_size=chunk_size, progress=progress,
                      chunk_hooks=chunk_hooks)
    parts_metrics, parts_world = [result.metrics], [result.world]
    wall = result.wall_seconds
    metrics = result.metrics
    while True:
        worst = worst_shortfall(metrics, plan.strategy_names, target)
        if worst["met"] or n >= target.max_samples:
            break
        grown = next_sample_count(n, worst, target)
        more = simulate(plan, grown - n, seed, backend, chunk_size=chunk_size, first=n,
                        progress=progress, keep_world=max(0, DEFAULT_KEEP_WORLD - n),
                        chunk_hooks=chunk_hooks)
        parts_metrics.append(more.metrics)
        parts_world.append(more.world)
        wall += more.wall_seconds
        metrics = np.concatenate(parts_metrics)
        n = grown
    world = np.concatenate(parts_world) if len(parts_world) > 1 else parts_world[0]
    return SimulationResult(plan, seed, n, result.backend, metrics, world, wall), worst
