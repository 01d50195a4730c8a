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
        dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist, q_address, q_const,
        q_terms_ptr, q_terms, q_burnin, burnin_dist, burnin_fail, burnin_rma_after,
        node_base_q, node_kind, node_base_const, node_add_q, node_add_const, dep_ptr,
        dep_idx, n_crews, block_ptr, block_node, block_wait, n_ready_blocks, block_feeds_crew,
        crew_node, n_crew_rows, unlock_ptr, unlock_block, cap_event_node, cap_event_island,
        cap_event_delta, cap_event_scale_q, island_cap0, power_event_node, power_event_hall,
        power_event_delta, cap_event_order, power_event_order, n_power_checked, hall_draw0,
        hall_cap, completion_node, baseline, horizon, largest_job, demand_day, demand_value,
        demand_growth_q, n_costs, span_start_node, span_start_day, span_end_node, span_end_day,
        span_rate, span_price_q, span_cost, res_ptr, res_day, res_kw, over_rate, over_price_q,
        shortfall_rate, shortfall_price_q, crew_rate, crew_price_q, lump_amount, lump_price_q,
        lump_cost, n_job_cols, job_size, job_share, job_order, job_step, seed_lo, seed_hi,
        first, begin, end, metrics, world, node_times, keep_nodes, status, world_lanes,
        node_time, waiting, crew_ready_at, crew_free, times, order, island_cap, draw_kw,
        lane_scratch, row_ready, lane_waiting, deadlock, free_cap, visited):
    """Scenarios begin .. end - 1 of the chunk, every strategy, with the given scratch: lane
    groups of up to LANES scenarios, each stage run for a whole group at once
    (world_lanes[q, l], node_time[v, l], ... hold scenario first + begin + l of a group)."""
    n_strategies = node_kind.shape[0]
    u1, u2, lane_out = lane_scratch[0], lane_scratch[1], lane_scratch[2]
    for group in range(begin, end, LANES):
        n = min(LANES, end - group)
        scenario0 = first + np.uint64(group)
        sample_world(dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist,
                     q_address, q_const, q_terms_ptr, q_terms, q_burnin, burnin_dist,
                     burnin_fail, burnin_rma_after, seed_lo, seed_hi, scenario0, n,
                     world_lanes, u1, u2)
        for l in range(n):
            for q in range(q_kind.shape[0]):
                world[group + l, q] = world_lanes[q, l]
        for s in range(n_strategies):
            ok = schedule_nodes(node_base_q, node_kind, node_base_const, node_add_q,
                                node_add_const, dep_ptr, dep_idx, n_crews, block_ptr,
                                block_node, block_wait, n_ready_blocks, block_feeds_crew,
                                crew_node, n_crew_rows, unlock_ptr, unlock_block, s,
                                world_lanes, node_time, n, waiting, crew_ready_at, crew_free,
                                row_ready, lane_waiting, deadlock)
            if not ok:
                for l in range(n):
                    status[group + l] = 1
            sorted_events(cap_event_node, cap_event_order, s, cap_event_node.shape[0],
                          node_time, n, times, order)
            for l in range(n):
                capacity_metrics(cap_event_node, cap_event_island, cap_event_delta,
                                 cap_event_scale_q, island_cap0, baseline, horizon,
                                 largest_job, demand_day, demand_value, demand_growth_q,
                                 world_lanes, l, times,
                                 order, island_cap, metrics[group + l, s])
            if n_job_cols > 0:
                first_job = metrics.shape[2] - n_job_cols
                for l in range(n):
                    job_metrics(cap_event_node, cap_event_island, cap_event_delta,
                                cap_event_scale_q, island_cap0, horizon, demand_day,
                                demand_value, demand_growth_q, job_size, job_share, job_order,
                                job_step, world_lanes, l, times, order, island_cap, free_cap,
                                visited, metrics[group + l, s, first_job:])
            completion_day(completion_node, node_time, n, lane_out)
            for l in range(n):
                metrics[group + l, s, COMPLETION_DAY] = lane_out[l]
            sorted_events(power_event_node, power_event_order, s, n_power_checked[s],
                          node_time, n, times, order)
            for l in range(n):
                metrics[group + l, s, POWER_VIOLATION] = power_violation(
                    power_event_hall, power_event_delta, n_power_checked, hall_draw0, hall_cap,
                    s, l, times, order, draw_kw)
            if n_costs > 0:
                strategy_costs(span_start_node, span_start_day, span_end_node, span_end_day,
                               span_rate, span_price_q, span_cost, res_ptr, res_day, res_kw,
                               over_rate, over_price_q, shortfall_rate, shortfall_price_q,
                               crew_rate, crew_price_q, lump_amount, lump_price_q, lump_cost,
                               node_add_q, node_add_const, crew_node, n_crew_rows,
                               power_event_node, power_event_hall, power_event_delta,
                               hall_draw0, horizon, s, world_lanes, node_time, n, times,
                               order, metrics[group:group + n, s])
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
            dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist, q_address, q_const,
            q_terms_ptr, q_terms, q_burnin, burnin_dist, burnin_fail, burnin_rma_after,
            node_base_q, node_kind, node_base_const, node_add_q, node_add_const, dep_ptr,
            dep_idx, n_crews, block_ptr, block_node, block_wait, n_ready_blocks,
            block_feeds_crew, crew_node, n_crew_rows, unlock_ptr, unlock_block, cap_event_node,
            cap_event_island, cap_event_delta, cap_event_scale_q, island_cap0, power_event_node,
            power_event_hall, power_event_delta, cap_event_order, power_event_order,
            n_power_checked, hall_draw0, hall_cap, completion_node, baseline, horizon,
            largest_job, demand_day, demand_value, demand_growth_q, n_costs, span_start_node,
            span_start_day, span_end_node, span_end_day, span_rate, span_price_q, span_cost,
            res_ptr, res_day, res_kw, over_rate, over_price_q, shortfall_rate, shortfall_price_q,
            crew_rate, crew_price_q, lump_amount, lump_price_q, lump_cost, n_job_cols, job_size,
            job_share, job_order, job_step, seed_lo, seed_hi, first, n_blocks, metrics, world,
            node_times, keep_nodes, status):
        """Fill metrics[i, s, m] (the metrics, n_costs cost columns, n_job_cols job columns)
        and world[i, q] (node_times[i, s, v] if keep_nodes).

        Each block allocates its scratch once and hands it to simulate_block, which runs
        without reference counting (performance: see `jit`).
        """
        sources  # noqa: B018 -- a closure cell, so part of Numba's cache key (_kernel)
        count = metrics.shape[0]
        n_nodes = node_base_q.shape[0]
        n_events = max(cap_event_node.shape[0], power_event_node.shape[0])
        # Blocks of whole lane groups, so that a group is cut only at the chunk's end.
        block = ((count + n_blocks - 1) // n_blocks + LANES - 1) // LANES * LANES
        for b in nb.prange(n_blocks):
            simulate_block(
                dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist, q_address,
                q_const, q_terms_ptr, q_terms, q_burnin, burnin_dist, burnin_fail,
                burnin_rma_after, node_base_q, node_kind, node_base_const, node_add_q,
                node_add_const, dep_ptr, dep_idx, n_crews, block_ptr, block_node, block_wait,
                n_ready_blocks, block_feeds_crew, crew_node, n_crew_rows, unlock_ptr,
                unlock_block, cap_event_node, cap_event_island, cap_event_delta,
                cap_event_scale_q, island_cap0, power_event_node, power_event_hall,
                power_event_delta, cap_event_order, power_event_order, n_power_checked,
                hall_draw0, hall_cap, completion_node, baseline, horizon, largest_job,
                demand_day, demand_value, demand_growth_q, n_costs, span_start_node,
                span_start_day, span_end_node, span_end_day, span_rate, span_price_q,
                span_cost, res_ptr, res_day, res_kw, over_rate, over_price_q, shortfall_rate,
                shortfall_price_q, crew_rate, crew_price_q, lump_amount, lump_price_q, lump_cost,
                n_job_cols, job_size, job_share, job_order, job_step,
                seed_lo, seed_hi, first, min(count, b * block),
                min(count, (b + 1) * block), metrics, world, node_times, keep_nodes, status,
                np.empty((q_kind.shape[0], LANES)), np.empty((n_nodes, LANES)),
                np.empty(n_nodes, dtype=np.int32), np.empty((n_nodes, LANES)),
                np.empty((max(n_crews.max(), 1), LANES)), np.empty((n_events, LANES)),
                np.empty((n_events, LANES), dtype=np.int64), np.empty(island_cap0.shape[0]),
                np.empty(hall_cap.shape[0]), np.empty((3, LANES)),
                np.empty(n_nodes, dtype=np.bool_), np.empty(n_nodes, dtype=np.int32),
                np.empty(LANES, dtype=np.bool_), np.empty(island_cap0.shape[0]),
                np.empty(island_cap0.shape[0], dtype=np.bool_))
    return simulate_chunk_kernel


SOURCES = entry_digest(SOURCE_FILES)
simulate_chunk_kernel = _kernel(SOURCES)


def prepare(plan: CompiledScenario) -> None:
    """The kernel ready for `plan`'s argument types before a run starts: a first call on one
    scenario, which compiles the kernel or loads it from the cache (jit_events tells which)."""
    simulate_chunk(plan, 0, 0, 1)


def simulate_chunk(plan: CompiledScenario, seed: int, first: int, count: int,
                   keep_nodes: bool = False):
    """Same contract as the NumPy backend's simulate_chunk (mcrisk/backends/numpy/driver.py)."""
    check_scenarios(first, count)
    seed_lo, seed_hi = split_seed(seed)
    metrics = np.zeros((count, plan.n_strategies,
                        N_METRICS + plan.n_costs + plan.n_job_cols))
    world = np.zeros((count, plan.n_quantities))
    node_times = np.zeros((count if keep_nodes else 1, plan.n_strategies, plan.n_nodes))
    status = np.zeros(count, dtype=np.int8)
    n_blocks = max(1, min(count, nb.get_num_threads() * 8))
    simulate_chunk_kernel(*plan.kernel_args(), np.uint64(seed_lo), np.uint64(seed_hi),
                          np.uint64(first), n_blocks, metrics, world, node_times,
                          keep_nodes, status)
    if status.any():
        raise RuntimeError("schedule_nodes left nodes unscheduled: a deadlock past validation")
    return metrics, world, (node_times if keep_nodes else None)
