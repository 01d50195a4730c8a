"""Runs that grow until a precision target is met: the loop that calls simulate.

The statistics (when a P90 is known well enough, how many scenarios to try next) are
mcrisk.results.precision; this module only drives the simulation with them. Draws are
addressed by scenario index, so growing a run from n to m scenarios simulates scenarios
n .. m - 1 only, and the result is exactly the run of m scenarios.
"""
from __future__ import annotations

import numpy as np

from ..results.precision import PrecisionTarget, next_sample_count, worst_shortfall
from ..core.definitions import N_METRICS
from ..core.progress import SUMMARIZE, as_progress
from ..backends.chunks import SimulationResult, default_keep_world, simulate_into


def simulate_to_precision(plan, seed: int, backend, target: PrecisionTarget,
                          chunk_size: int, progress=None, chunk_hooks=()):
    """Simulate scenarios 0 .. n - 1, growing n until `target` is met or max_samples is hit.

    Returns (SimulationResult of all n scenarios, the last `worst_shortfall` report). The
    metrics grow in place (one buffer, resized; see _Rows), so near the cap the run holds
    about one copy of the kept metrics, not the parts plus their concatenation.
    `progress` (mcrisk.core.progress) sees one `simulate` phase for each step of growth.
    """
    n = min(target.start, target.max_samples)
    metrics = _Rows((n, plan.n_strategies, N_METRICS))
    keep_world = default_keep_world(plan)
    world = _Rows((min(n, keep_world), plan.n_quantities))
    costs = _Rows((n, plan.n_strategies, plan.n_costs)) if plan.n_costs else None
    jobs = _Rows((n, plan.n_strategies, plan.n_job_cols)) if plan.n_job_cols else None
    branches = _Rows((n, len(plan.contingencies)), bool) if plan.contingencies else None
    wall = simulate_into(plan, seed, backend, 0, metrics.array, world.array, chunk_size,
                         progress, chunk_hooks, costs=_array(costs), jobs=_array(jobs),
                         branches=_array(branches))
    while True:
        with as_progress(progress).phase(SUMMARIZE, note=f"--precision: {n:,} enough?"):
            worst = worst_shortfall(metrics.array, plan.strategy_names, target)
        if worst["met"] or n >= target.max_samples:
            break
        grown = next_sample_count(n, worst, target)
        metrics.grow(grown)
        world.grow(min(grown, keep_world))
        if costs is not None:
            costs.grow(grown)
        if jobs is not None:
            jobs.grow(grown)
        if branches is not None:
            branches.grow(grown)
        wall += simulate_into(plan, seed, backend, n, metrics.array[n:], world.array[n:],
                              chunk_size, progress, chunk_hooks,
                              note=f"--precision: {n:,} to {grown:,}",
                              costs=None if costs is None else costs.array[n:],
                              jobs=None if jobs is None else jobs.array[n:],
                              branches=None if branches is None else branches.array[n:])
        n = grown
    return (SimulationResult(plan, seed, n, backend.name, metrics.array, world.array, wall,
                             _array(costs), _array(jobs), _array(branches)), worst)


def _array(rows: "_Rows | None"):
    """The array of `rows`, or None (a plan without costs, or without a job mix, keeps
    none)."""
    return None if rows is None else rows.array


class _Rows:
    """An array (float64 unless told) that grows along its first axis, the existing rows
    kept.

    grow() resizes in place (ndarray.resize reallocates, and glibc moves a large block's
    pages with mremap instead of copying them), so growing never holds two copies. Where
    something else still refers to the array, numpy refuses that (it would leave the other
    reference dangling) and grow() copies into a new array instead: correct, just 2x memory.
    """

    def __init__(self, shape: tuple[int, ...], dtype=np.float64):
        self.array = np.empty(shape, dtype)

    def grow(self, rows: int) -> None:
        shape = (rows, *self.array.shape[1:])
        if rows == self.array.shape[0]:
            return
        try:
            self.array.resize(shape, refcheck=True)
        except ValueError:
            grown = np.empty(shape, self.array.dtype)
            grown[:self.array.shape[0]] = self.array
            self.array = grown
