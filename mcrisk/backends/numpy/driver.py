"""The NumPy reference's driver: every strategy on the scenarios of a chunk, its metrics and,
when the scenario has [costs] (plan.n_costs > 0), its cost columns after them, and with a
job mix (plan.n_job_cols > 0) the job columns after those.

Pairs: numba/driver.py and kernels/simulate.cu.
"""
from __future__ import annotations

import numpy as np

from ...core import rng
from ...core.definitions import COMPLETION_DAY, N_METRICS, POWER_VIOLATION, SHORTFALL_GPU_DAYS
from ...plan.record import CompiledScenario
from .costs import strategy_costs
from .metrics import capacity_metrics, island_capacity, job_metrics, power_violation
from .schedule import schedule_nodes
from .world import sample_world


def simulate_chunk(plan: CompiledScenario, seed: int, first: int, count: int,
                   keep_nodes: bool = False):
    """metrics[i, s, m] (and world[i, q], and node_time[i, s, v] if keep_nodes) for scenarios
    first .. first + count - 1, all below 2**32 (count = 0: arrays with no scenario). The
    metrics axis holds N_METRICS metrics, then plan.n_costs cost columns (definitions.COSTS),
    then plan.n_job_cols job columns (definitions.job_columns)."""
    rng.check_scenarios(first, count)
    world = sample_world(plan, seed, first, count)
    metrics, nodes = simulate_worlds(plan, world, keep_nodes)
    return metrics, world, nodes


def simulate_worlds(plan: CompiledScenario, world: np.ndarray, keep_nodes: bool = False):
    """metrics[i, s, m] (and node_time[i, s, v] if keep_nodes, else None) of every strategy
    on the given worlds world[i, q] (sample_world's, or any the plan could have drawn)."""
    count = world.shape[0]
    metrics = np.zeros((count, plan.n_strategies,
                        N_METRICS + plan.n_costs + plan.n_job_cols))
    nodes = np.zeros((count, plan.n_strategies, plan.n_nodes)) if keep_nodes else None
    for s in range(plan.n_strategies):
        node_time = schedule_nodes(plan, s, world)
        islands = island_capacity(plan, s, node_time, world)   # read by both below
        for column, values in capacity_metrics(plan, islands, world).items():
            metrics[:, s, column] = values
        metrics[:, s, COMPLETION_DAY] = node_time[:, plan.completion_node].max(axis=1)
        metrics[:, s, POWER_VIOLATION] = power_violation(plan, s, node_time)
        if plan.n_costs:
            metrics[:, s, N_METRICS:N_METRICS + plan.n_costs] = strategy_costs(
                plan, s, node_time, world, metrics[:, s, SHORTFALL_GPU_DAYS])
        if plan.n_job_cols:
            metrics[:, s, N_METRICS + plan.n_costs:] = job_metrics(plan, islands, world)
        if keep_nodes:
            nodes[:, s] = node_time
    return metrics, nodes
