"""Node times of one strategy on one world (Numba): max-plus propagation, crews by ready time.

Pairs: numpy/schedule.py (the reference's sweeps) and kernels/schedule.cuh. The kernels time
the blocks of the compiled crew schedule (mcrisk/compile.py) instead of sweeping.
"""
from __future__ import annotations

import math

from ...definitions import NODE_CREW
from .jit import jit, jit_inline



@jit
def _node_start(node_base_q, node_base_const, dep_ptr, dep_idx, s, v, world, node_time):
    start = node_base_const[s, v]
    if node_base_q[v] >= 0:
        start = max(start, world[node_base_q[v]])
    for j in range(dep_ptr[s, v], dep_ptr[s, v + 1]):
        start = max(start, node_time[dep_idx[s, j]])
    return start


@jit
def _node_time(node_add_q, node_add_const, s, v, world, start):
    t = start + node_add_const[s, v]
    for j in range(2):
        q = node_add_q[s, v, j]
        if q >= 0:
            t += world[q]
    return t


@jit_inline
def _time_block(node_base_q, node_kind, node_base_const, node_add_q, node_add_const, dep_ptr,
                dep_idx, block_ptr, block_node, s, b, world, node_time, crew_ready_at):
    """Block b's deps are all timed: a crew row gets its ready time (fixed from now on) to
    compete for a crew; other nodes get their times, in order. Returns how many it timed."""
    first = block_ptr[s, b]
    v = block_node[s, first]
    if node_kind[s, v] == NODE_CREW:
        crew_ready_at[v] = _node_start(node_base_q, node_base_const, dep_ptr, dep_idx, s, v,
                                       world, node_time)
        return 0
    for j in range(first, block_ptr[s, b + 1]):
        v = block_node[s, j]
        start = _node_start(node_base_q, node_base_const, dep_ptr, dep_idx, s, v, world,
                            node_time)
        node_time[v] = _node_time(node_add_q, node_add_const, s, v, world, start)
    return block_ptr[s, b + 1] - first


@jit_inline
def schedule_nodes(node_base_q, node_kind, node_base_const, node_add_q, node_add_const,
                   dep_ptr, dep_idx, n_crews, block_ptr, block_node, block_wait,
                   n_ready_blocks, crew_node, n_crew_rows, unlock_ptr, unlock_block, s, world,
                   node_time, waiting, crew_ready_at, crew_free):
    """node_time[v] of strategy s; returns False on a deadlock (ruled out by validation).

    Same result as the NumPy reference's sweeps: nodes without a crew are timed as soon as
    their deps are, and only when none is left does the earliest-ready row get a crew.
    Performance shortcut: the blocks of the compiled crew schedule instead of sweeps. For
    s > 0, node_time must hold strategy s - 1's times on the same world: the nodes it shares
    with s are in no block.
    """
    n_rows = n_crew_rows[s]
    for r in range(n_rows):
        crew_ready_at[crew_node[s, r]] = math.inf
    for b in range(block_wait.shape[1]):
        waiting[b] = block_wait[s, b]
    n_done = 0
    for b in range(n_ready_blocks[s]):
        n_done += _time_block(node_base_q, node_kind, node_base_const, node_add_q,
                              node_add_const, dep_ptr, dep_idx, block_ptr, block_node, s, b,
                              world, node_time, crew_ready_at)
    for c in range(n_crews):
        crew_free[c] = 0.0
    while True:
        # The next row for a crew: the earliest-ready among rows whose deps are all timed.
        pick = -1
        picked_ready = math.inf
        for r in range(n_rows):
            ready = crew_ready_at[crew_node[s, r]]
            if ready < picked_ready:
                pick, picked_ready = r, ready
        if pick < 0:
            break
        v = crew_node[s, pick]
        crew_ready_at[v] = math.inf
        crew = 0
        for c in range(1, n_crews):
            if crew_free[c] < crew_free[crew]:
                crew = c
        begin = max(picked_ready, crew_free[crew])
        node_time[v] = _node_time(node_add_q, node_add_const, s, v, world, begin)
        crew_free[crew] = node_time[v]
        n_done += 1
        for j in range(unlock_ptr[s, pick], unlock_ptr[s, pick + 1]):
            b = unlock_block[s, j]
            waiting[b] -= 1
            if waiting[b] == 0:
                n_done += _time_block(node_base_q, node_kind, node_base_const, node_add_q,
                                      node_add_const, dep_ptr, dep_idx, block_ptr, block_node,
                                      s, b, world, node_time, crew_ready_at)
    return n_done == block_ptr[s, block_ptr.shape[1] - 1]   # every node in a block
