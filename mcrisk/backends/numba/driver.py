"""The Numba backend's driver: every strategy on every scenario of a chunk, in parallel.

Parallel over blocks of scenarios (`prange`), each block with its own scratch arrays so the
hot loop never allocates. A block runs its scenarios in lane groups of up to LANES: every
stage takes a whole group at once (arrays [quantity or node, lane]), so the plan's control
flow is decided once per group and the loops over lanes vectorize. Pairs: numpy/driver.py
and kernels/simulate.cu (simulate_scenario is the body of simulate_block's loop over lane
groups; a CUDA thread runs a group of one scenario).
"""
from __future__ import annotations

from pathlib import Path

import numba as nb
import numpy as np

from ...core import definitions, distributions, rng
from ...core.definitions import COMPLETION_DAY, N_METRICS, POWER_VIOLATION
from ...plan.record import CompiledScenario
from ...core.rng import check_scenarios, split_seed
from ...core.jit import entry, entry_digest
from ...core.jit import jit
from ..buffers import ChunkBuffers
from .costs import strategy_costs
from .metrics import (capacity_metrics, completion_day, job_metrics, power_violation,
                      sorted_events)
from .schedule import schedule_nodes
from .world import sample_world


# Scenarios simulated side by side in one lane group: every stage's loops over lanes are the
# ones the compiler vectorizes, and the plan's control flow (which node, which quantity, which
# event next) is decided once for all of them. 64 amortizes that best on x86-64 with AVX2
# (measured: 16 and 32 lanes ran 10-30% slower); the scratch of a group is ~140 KiB.
LANES = 64


@jit
def simulate_block(
        p, seed_lo, seed_hi, first, begin, end, metrics, world, node_times, keep_nodes, status,
        world_lanes, node_time, waiting, crew_ready_at, crew_free, times, order, island_cap,
        draw_kw, lane_scratch, row_ready, lane_waiting, deadlock, free_cap, visited):
    """Scenarios begin .. end - 1 of the chunk, every strategy, with the given scratch: lane
    groups of up to LANES scenarios, each stage run for a whole group at once
    (world_lanes[q, l], node_time[v, l], ... hold scenario first + begin + l of a group)."""
    n_strategies = p.node_kind.shape[0]
    u1, u2, lane_out = lane_scratch[0], lane_scratch[1], lane_scratch[2]
    for group in range(begin, end, LANES):
        n = min(LANES, end - group)
        scenario0 = first + np.uint64(group)
        sample_world(p, seed_lo, seed_hi, scenario0, n, world_lanes, u1, u2)
        for l in range(n):
            for q in range(p.q_kind.shape[0]):
                world[group + l, q] = world_lanes[q, l]
        for s in range(n_strategies):
            ok = schedule_nodes(p, s, world_lanes, node_time, n, waiting, crew_ready_at, crew_free,
                                row_ready, lane_waiting, deadlock)
            if not ok:
                for l in range(n):
                    status[group + l] = 1
            sorted_events(p.cap_event_node, p.cap_event_order, s, p.cap_event_node.shape[0],
                          node_time, n, times, order)
            for l in range(n):
                capacity_metrics(p, s, world_lanes, l, times, order, island_cap,
                                 metrics[group + l, s])
            if p.n_job_cols > 0:
                first_job = metrics.shape[2] - p.n_job_cols
                for l in range(n):
                    job_metrics(p, s, world_lanes, l, times, order, island_cap, free_cap, visited,
                                metrics[group + l, s, first_job:])
            completion_day(p, node_time, n, lane_out)
            for l in range(n):
                metrics[group + l, s, COMPLETION_DAY] = lane_out[l]
            sorted_events(p.power_event_node, p.power_event_order, s, p.n_power_checked[s],
                          node_time, n, times, order)
            for l in range(n):
                metrics[group + l, s, POWER_VIOLATION] = power_violation(p, s, l, times, order,
                                                                         draw_kw)
            if p.n_costs > 0:
                strategy_costs(p, s, world_lanes, node_time, n, times, order,
                               metrics[group:group + n, s])
            if keep_nodes:
                for l in range(n):
                    for v in range(node_time.shape[0]):
                        node_times[group + l, s, v] = node_time[v, l]


# Every source file compiled into the kernel: this package and the mcrisk modules whose
# constants it freezes (rng, distributions, definitions).
SOURCE_FILES = sorted(Path(__file__).parent.glob("*.py")) + [
    Path(module.__file__) for module in (rng, distributions, definitions)]


def _kernel(sources: str):
    """simulate_chunk_kernel, an entry point (mcrisk.core.jit) over SOURCE_FILES.

    It also closes over `sources` (their digest), and Numba keys a closure's cache entry on
    its cells: so the key covers every source even where NUMBA_CACHE_DIR, which reads only
    the defining file's stamp, takes the cache.
    """
    @entry(SOURCE_FILES, parallel=True)
    def simulate_chunk_kernel(
            p, seed_lo, seed_hi, first, n_blocks, metrics, world, node_times, keep_nodes, status):
        """Fill metrics[i, s, m] (the metrics, n_costs cost columns, n_job_cols job columns)
        and world[i, q] (node_times[i, s, v] if keep_nodes).

        Each block allocates its scratch once and hands it to simulate_block, which runs
        without reference counting (performance: see `jit`).
        """
        sources  # noqa: B018 -- a closure cell, so part of Numba's cache key (_kernel)
        count = metrics.shape[0]
        n_nodes = p.node_base_q.shape[0]
        n_events = max(p.cap_event_node.shape[0], p.power_event_node.shape[0])
        # Blocks of whole lane groups, so that a group is cut only at the chunk's end.
        block = ((count + n_blocks - 1) // n_blocks + LANES - 1) // LANES * LANES
        for b in nb.prange(n_blocks):
            simulate_block(
                p, seed_lo, seed_hi, first, min(count, b * block),
                min(count, (b + 1) * block), metrics, world, node_times, keep_nodes, status,
                np.empty((p.q_kind.shape[0], LANES)), np.empty((n_nodes, LANES)),
                np.empty(n_nodes, dtype=np.int32), np.empty((n_nodes, LANES)),
                np.empty((max(p.n_slots.max(), 1), LANES)), np.empty((n_events, LANES)),
                np.empty((n_events, LANES), dtype=np.int64), np.empty(p.island_cap0.shape[0]),
                np.empty(p.hall_cap.shape[0]), np.empty((3, LANES)),
                np.empty(n_nodes, dtype=np.bool_), np.empty(n_nodes, dtype=np.int32),
                np.empty(LANES, dtype=np.bool_), np.empty(p.island_cap0.shape[0]),
                np.empty(p.island_cap0.shape[0], dtype=np.bool_))
    return simulate_chunk_kernel


SOURCES = entry_digest(SOURCE_FILES)
simulate_chunk_kernel = _kernel(SOURCES)


def prepare(plan: CompiledScenario) -> None:
    """The kernel ready for `plan`'s argument types before a run starts: a first call on one
    scenario, which compiles the kernel or loads it from the cache (jit_events tells which)."""
    simulate_chunk(plan, 0, 0, 1)


def simulate_chunk(plan: CompiledScenario, seed: int, first: int, count: int,
                   keep_nodes: bool = False, buffers: ChunkBuffers | None = None):
    """Same contract as the NumPy backend's simulate_chunk (mcrisk/backends/numpy/driver.py).
    With `buffers` (a chunk loop's), the arrays returned are its, valid until its next call
    (performance: mcrisk.backends.buffers)."""
    check_scenarios(first, count)
    seed_lo, seed_hi = split_seed(seed)
    zeros = (buffers or ChunkBuffers()).zeros
    metrics = zeros("metrics", (count, plan.n_strategies,
                                N_METRICS + plan.n_costs + plan.n_job_cols))
    world = zeros("world", (count, plan.n_quantities))
    node_times = zeros("node_times", (count if keep_nodes else 1, plan.n_strategies,
                                      plan.n_nodes))
    status = zeros("status", (count,), np.int8)
    n_blocks = max(1, min(count, nb.get_num_threads() * 8))
    simulate_chunk_kernel(plan.kernel_record(), np.uint64(seed_lo), np.uint64(seed_hi),
                          np.uint64(first), n_blocks, metrics, world, node_times,
                          keep_nodes, status)
    if status.any():
        raise RuntimeError("schedule_nodes left nodes unscheduled: a deadlock past validation")
    return metrics, world, (node_times if keep_nodes else None)
