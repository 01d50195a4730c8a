"""Stop on precision: sample in chunks until every reported P90 is known well enough.

The target is met when, for every strategy and continuous metric, the P90's 95% interval
half-width (the larger side) is at most `relative` x |P90| or at most `floor` (in the
metric's own unit), so that metrics near zero do not demand infinite samples. It is never met
without an interval: below 36 scenarios (aggregate.p90_ci_min_samples) none exists. Draws are
addressed by scenario index, so growing a run from n to 2n scenarios gives exactly the run
of 2n scenarios.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..aggregate import (CONTINUOUS_METRICS, finite_or_none, p90_ci_min_samples,
                         p90_ci_unavailable_reason, p90_confidence_interval)


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

    Returns {"met": bool, "strategy", "metric", "p90", "half_width", "allowed", "ratio"},
    plus "unavailable" (why) when that P90 has no interval yet: too few scenarios for one to
    exist. The target is never met without an interval (half_width None, ratio infinite).
    """
    worst = None
    for s, strategy in enumerate(strategy_names):
        for k, metric in enumerate(CONTINUOUS_METRICS):
            candidate = _shortfall(metrics[:, s, k], target)
            if worst is None or candidate["ratio"] > worst["ratio"]:
                worst = {"strategy": strategy, "metric": metric, **candidate}
    worst["met"] = worst["ratio"] <= 1.0
    return worst


def _shortfall(values: np.ndarray, target: PrecisionTarget) -> dict:
    """One P90 against the target: its interval's half-width (the larger side) over what the
    target allows; an interval that does not exist counts as infinitely wide."""
    p90 = finite_or_none(np.quantile(values, 0.9))
    ci = p90_confidence_interval(values)
    allowed = max(target.relative * abs(p90 or 0.0), target.floor)
    if ci is None or p90 is None:
        reason = (p90_ci_unavailable_reason(values.shape[0])
                  or "the P90 or its interval is not a finite number")
        return {"p90": p90, "half_width": None, "allowed": allowed, "ratio": math.inf,
                "unavailable": reason}
    half = finite_or_none(max(p90 - ci[0], ci[1] - p90))
    ratio = math.inf if half is None else half / allowed
    return {"p90": p90, "half_width": half, "allowed": allowed, "ratio": ratio}


def next_sample_count(current: int, worst: dict, target: PrecisionTarget) -> int:
    """CI half-widths shrink like 1/sqrt(n): aim a little past the estimate, at least
    +50%, at most x4, never past the cap; at least the fewest scenarios for which the
    intervals exist."""
    grow = min(4.0, max(1.5, 1.2 * worst["ratio"] ** 2))
    wanted = max(int(np.ceil(current * grow)), p90_ci_min_samples())
    return min(target.max_samples, wanted)


def simulate_to_precision(plan, seed: int, backend, target: PrecisionTarget,
                          chunk_size: int, progress=None, chunk_hooks=()):
    """Simulate scenarios 0 .. n - 1, growing n until `target` is met or max_samples is hit.

    Returns (SimulationResult of all n scenarios, the last `worst_shortfall` report). The
    metrics grow in place (one buffer, resized; see _grow), so near the cap the run holds
    about one copy of the kept metrics, not the parts plus their concatenation.
    """
    from ..definitions import N_METRICS
    from ..simulate import DEFAULT_KEEP_WORLD, SimulationResult, simulate_into

    n = min(target.start, target.max_samples)
    metrics = _Rows((n, plan.n_strategies, N_METRICS))
    world = _Rows((min(n, DEFAULT_KEEP_WORLD), plan.n_quantities))
    wall = simulate_into(plan, seed, backend, 0, metrics.array, world.array, chunk_size,
                         progress, chunk_hooks)
    while True:
        worst = worst_shortfall(metrics.array, plan.strategy_names, target)
        if worst["met"] or n >= target.max_samples:
            break
        grown = next_sample_count(n, worst, target)
        metrics.grow(grown)
        world.grow(min(grown, DEFAULT_KEEP_WORLD))
        wall += simulate_into(plan, seed, backend, n, metrics.array[n:], world.array[n:],
                              chunk_size, progress, chunk_hooks)
        n = grown
    return (SimulationResult(plan, seed, n, backend.name, metrics.array, world.array, wall),
            worst)


class _Rows:
    """A float64 array that grows along its first axis, the existing rows kept.

    grow() resizes in place (ndarray.resize reallocates, and glibc moves a large block's
    pages with mremap instead of copying them), so growing never holds two copies. Where
    something else still refers to the array, numpy refuses that (it would leave the other
    reference dangling) and grow() copies into a new array instead: correct, just 2x memory.
    """

    def __init__(self, shape: tuple[int, ...]):
        self.array = np.empty(shape)

    def grow(self, rows: int) -> None:
        shape = (rows, *self.array.shape[1:])
        if rows == self.array.shape[0]:
            return
        try:
            self.array.resize(shape, refcheck=True)
        except ValueError:
            grown = np.empty(shape)
            grown[:self.array.shape[0]] = self.array
            self.array = grown
