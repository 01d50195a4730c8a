"""The chunked driver: runs a backend over scenario indices in fixed-size chunks.

Every draw is addressed by its scenario index, so the result is the same for any chunk size.
Memory per chunk is bounded; what is kept is the per-scenario metrics (samples x strategies x
6 float64: 240 bytes a scenario for 5 strategies, 2.4 GB at 10^7) and the drawn inputs of the
first `keep_world` scenarios only (drivers analysis needs no more; hooks see every chunk's).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .backends import Backend
from .compile import CompiledScenario

DEFAULT_CHUNK = 65_536
DEFAULT_KEEP_WORLD = 250_000     # drawn inputs kept for drivers analysis


@dataclass(frozen=True)
class SimulationResult:
    plan: CompiledScenario
    seed: int
    samples: int
    backend: str
    metrics: np.ndarray        # float64[samples, strategies, metrics]
    world: np.ndarray          # float64[min(samples, keep_world), quantities]
    wall_seconds: float


ChunkHook = Callable[[int, np.ndarray, np.ndarray, np.ndarray], None]


def simulate(plan: CompiledScenario, samples: int, seed: int, backend: Backend,
             chunk_size: int = DEFAULT_CHUNK, first: int = 0,
             progress: Callable[[int, int], None] | None = None,
             chunk_hooks: tuple[ChunkHook, ...] = (),
             keep_world: int = DEFAULT_KEEP_WORLD) -> SimulationResult:
    """Simulate scenarios first .. first + samples - 1 of `plan` for every strategy.

    Each hook is called once per chunk, in scenario order, as
    hook(first_scenario, metrics[c, s, m], world[c, q], node_times[c, s, v]) so that
    per-scenario detail (capacity over time, say) can be reduced by streaming without
    keeping it for all scenarios. Node times are only computed when a hook is given.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    metrics = np.empty((samples, plan.n_strategies, 6))
    world = np.empty((min(samples, keep_world), plan.n_quantities))
    started = time.perf_counter()
    for offset in range(0, samples, chunk_size):
        count = min(chunk_size, samples - offset)
        chunk_metrics, chunk_world, node_times = backend.simulate_chunk(
            plan, seed, first + offset, count, keep_nodes=bool(chunk_hooks))
        for hook in chunk_hooks:
            hook(first + offset, chunk_metrics, chunk_world, node_times)
        metrics[offset:offset + count] = chunk_metrics
        kept = max(0, min(count, world.shape[0] - offset))
        world[offset:offset + kept] = chunk_world[:kept]
        if progress is not None:
            progress(offset + count, samples)
    return SimulationResult(plan, seed, samples, backend.name, metrics, world,
                            time.perf_counter() - started)
