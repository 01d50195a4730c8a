"""node_time[scenario, node] of one strategy (NumPy reference): max-plus sweeps, crews (and
install teams, burn-in bays) by ready time.

Pairs: numba/schedule.py and kernels/schedule.cuh (which time the compiled crew schedule's
blocks instead of sweeping, with the same result).
"""
from __future__ import annotations

import numpy as np

from ...core.definitions import NODE_CREW
from ...plan.record import CompiledScenario


def _node_time(plan: CompiledScenario, s: int, v: int, world: np.ndarray,
               start: np.ndarray) -> np.ndarray:
    """t[v] given the max of its base and deps (`start`), plus its additive terms, and at
    least its floor (a status's as_of for an event not yet recorded; -inf: none)."""
    t = start + plan.node_add_const[s, v]
    for q in plan.node_add_q[s, v]:
        if q >= 0:
            t = t + world[:, q]
    floor = plan.node_floor[s, v]
    if floor > -np.inf:
        t = np.where(floor > t, floor, t)
    return t


def _node_start(plan: CompiledScenario, s: int, v: int, world: np.ndarray,
                node_time: np.ndarray) -> np.ndarray:
    start = np.full(world.shape[0], plan.node_base_const[s, v])
    if plan.node_base_q[v] >= 0:
        start = np.maximum(start, world[:, plan.node_base_q[v]])
    for d in plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]]:
        start = np.maximum(start, node_time[:, d])
    return start


def schedule_nodes(plan: CompiledScenario, s: int, world: np.ndarray) -> np.ndarray:
    """node_time[i, v] of strategy s: max-plus propagation, crews taking rows by ready time."""
    n, n_nodes = world.shape[0], plan.n_nodes
    node_time = np.full((n, n_nodes), np.nan)
    computed = np.zeros((n, n_nodes), dtype=bool)
    crew_free = np.zeros((n, plan.n_slots[s]))       # retrofit crews, then teams and bays
    crew_nodes = [v for v in range(n_nodes) if plan.node_kind[s, v] == NODE_CREW]
    rows = np.arange(n)
    for _ in range(len(crew_nodes) + 1):
        for v in plan.topo[s]:
            if plan.node_kind[s, v] == NODE_CREW:
                continue
            deps = plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]]
            can = ~computed[:, v] & computed[:, deps].all(axis=1)
            if can.any():
                start = _node_start(plan, s, v, world[can], node_time[can])
                node_time[can, v] = _node_time(plan, s, v, world[can], start)
                computed[can, v] = True
        if not crew_nodes:
            break
        # The next row for a crew: the earliest-ready among rows whose deps are all known.
        ready = np.full((n, len(crew_nodes)), np.inf)
        for j, v in enumerate(crew_nodes):
            deps = plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]]
            can = ~computed[:, v] & computed[:, deps].all(axis=1)
            ready[can, j] = _node_start(plan, s, v, world[can], node_time[can])
        pick = np.argmin(ready, axis=1)          # ties: the lower node id
        picked_ready = ready[rows, pick]
        go = np.isfinite(picked_ready)
        for j, v in enumerate(crew_nodes):
            sel = go & (pick == j)
            if sel.any():
                # the slot of its pool free first (ties: the lower slot)
                first = plan.crew_first[s, v]
                crew = first + np.argmin(crew_free[sel, first:first + plan.crew_count[s, v]],
                                         axis=1)
                begin = np.maximum(picked_ready[sel], crew_free[rows[sel], crew])
                node_time[sel, v] = _node_time(plan, s, v, world[sel], begin)
                computed[sel, v] = True
                free = node_time[sel, v]
                if plan.crew_hold_q[s, v] >= 0:  # a team or bay: busy for the install/burn-in
                    free = free + world[sel, plan.crew_hold_q[s, v]]
                crew_free[rows[sel], crew] = free
    if not computed.all():
        raise RuntimeError("schedule_nodes left nodes unscheduled: a deadlock past validation")
    return node_time
