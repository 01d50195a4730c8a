"""The chunked driver: runs a backend over scenario indices in fixed-size chunks.

Every draw is addressed by its scenario index, so the result is the same for any chunk size.
Memory per chunk is bounded; what is kept is the per-scenario metrics (samples x strategies x
6 float64: 240 bytes a scenario for 5 strategies, 2.4 GB at 10^7) and the drawn inputs of the
first `keep_world` scenarios only (drivers analysis needs no more; hooks see every chunk's).
A run that could not keep that in this machine's memory is refused before it starts
(`check_memory`), and no run takes more than MAX_SAMPLES scenarios.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .backends import Backend
from .compile import CompiledScenario
from .definitions import N_METRICS
from .errors import McriskError
from .progress import SCENARIOS, SIMULATE, Progress, as_progress

DEFAULT_CHUNK = 65_536
DEFAULT_KEEP_WORLD = 250_000     # drawn inputs kept for drivers analysis
MAX_SAMPLES = 100_000_000        # hard cap: 24 GB of kept metrics for 5 strategies
MEMORY_SHARE = 0.9               # refuse a run whose estimate exceeds this share of the RAM
WORKING_FACTOR = 4               # per-chunk temporaries, as multiples of one chunk's results


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
             progress: Progress | Callable[[int, int], None] | None = None,
             chunk_hooks: tuple[ChunkHook, ...] = (),
             keep_world: int = DEFAULT_KEEP_WORLD, note: str = "") -> SimulationResult:
    """Simulate scenarios first .. first + samples - 1 of `plan` for every strategy.

    Each hook is called once per chunk, in scenario order, as
    hook(first_scenario, metrics[c, s, m], world[c, q], node_times[c, s, v]) so that
    per-scenario detail (capacity over time, say) can be reduced by streaming without
    keeping it for all scenarios. Node times are only computed when a hook is given.
    `progress` sees a `simulate` phase counted in scenarios (mcrisk.progress), with `note`.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    metrics = np.empty((samples, plan.n_strategies, N_METRICS))
    world = np.empty((min(samples, keep_world), plan.n_quantities))
    wall = simulate_into(plan, seed, backend, first, metrics, world, chunk_size, progress,
                         chunk_hooks, note)
    return SimulationResult(plan, seed, samples, backend.name, metrics, world, wall)


def simulate_into(plan: CompiledScenario, seed: int, backend: Backend, first: int,
                  metrics: np.ndarray, world: np.ndarray, chunk_size: int = DEFAULT_CHUNK,
                  progress: Progress | Callable[[int, int], None] | None = None,
                  chunk_hooks: tuple[ChunkHook, ...] = (), note: str = "") -> float:
    """Simulate scenarios first .. first + len(metrics) - 1 into the given arrays (the first
    len(world) of them into world); returns the seconds it took.

    Writing into the caller's arrays lets a growing run (--precision) keep one buffer instead
    of parts that it would have to concatenate.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    samples = metrics.shape[0]
    started = time.perf_counter()
    with as_progress(progress).phase(SIMULATE, samples, SCENARIOS, note) as phase:
        for offset in range(0, samples, chunk_size):
            count = min(chunk_size, samples - offset)
            chunk_metrics, chunk_world, node_times = backend.simulate_chunk(
                plan, seed, first + offset, count, keep_nodes=bool(chunk_hooks))
            for hook in chunk_hooks:
                hook(first + offset, chunk_metrics, chunk_world, node_times)
            metrics[offset:offset + count] = chunk_metrics
            kept = max(0, min(count, world.shape[0] - offset))
            world[offset:offset + kept] = chunk_world[:kept]
            phase.advance(count)
    return time.perf_counter() - started


def memory_needed(plan: CompiledScenario, samples: int, chunk_size: int = DEFAULT_CHUNK,
                  keep_nodes: bool = True, keep_world: int = DEFAULT_KEEP_WORLD) -> int:
    """Bytes a run of `samples` scenarios needs, about: what it keeps (metrics of every
    scenario and strategy, the drawn inputs of the first keep_world scenarios) plus the
    working memory of one chunk (its metrics, inputs and node times, several times over for
    the backend's and the Parquet writer's temporaries)."""
    kept = samples * plan.n_strategies * N_METRICS * 8
    kept += min(samples, keep_world) * plan.n_quantities * 8
    per_scenario = plan.n_strategies * N_METRICS + plan.n_quantities
    if keep_nodes:
        per_scenario += plan.n_strategies * plan.n_nodes
    return kept + WORKING_FACTOR * min(samples, chunk_size) * per_scenario * 8


def physical_memory() -> int | None:
    """This machine's RAM in bytes, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(plan: CompiledScenario, samples: int, chunk_size: int = DEFAULT_CHUNK,
                 option: str = "--samples", available: int | None = None) -> None:
    """Refuse, before anything runs, a sample count above MAX_SAMPLES or one whose results
    would not fit in this machine's memory (McriskError naming the option and what fits)."""
    if samples > MAX_SAMPLES:
        raise McriskError(f"{option} = {samples:,}: more than mcrisk's cap of "
                          f"{MAX_SAMPLES:,} scenarios (use at most {MAX_SAMPLES:,})")
    available = physical_memory() if available is None else available
    if available is None:
        return
    needed = memory_needed(plan, samples, chunk_size)
    allowed = MEMORY_SHARE * available
    if needed <= allowed:
        return
    fits = _largest_that_fits(plan, chunk_size, allowed)
    raise McriskError(
        f"{option} = {samples:,}: this run would need about {needed / 1e9:,.1f} GB of memory "
        f"({samples:,} scenarios x {plan.n_strategies} strategies x {N_METRICS} metrics x "
        f"8 bytes, plus drawn inputs and working memory) and this machine has "
        f"{available / 1e9:,.1f} GB, of which a run may use {MEMORY_SHARE:.0%} (use at most "
        f"about {fits:,} scenarios here, or a machine with more memory)")


def _largest_that_fits(plan: CompiledScenario, chunk_size: int, allowed: float) -> int:
    """The largest sample count whose memory_needed is within `allowed` (bisection)."""
    low, high = 0, MAX_SAMPLES
    while low < high:
        mid = (low + high + 1) // 2
        if memory_needed(plan, mid, chunk_size) <= allowed:
            low = mid
        else:
            high = mid - 1
    return low
