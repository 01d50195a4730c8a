"""Node times of a lane group (Numba): max-plus propagation, crews by ready time.

node_time[v, l] of strategy s for the n scenarios of a lane group (driver.py), through the
blocks of the compiled crew schedule (mcrisk/plan/compile.py) instead of the reference's sweeps.
A block is timed node by node for every lane at once (the loops over lanes vectorize). While
one crew row at a time is ready for a crew, every lane gives it the same crew step; where the
lanes' crews could take rows in different orders, each lane gives its crews rows on its own,
timing only the blocks some crew row waits for, and the rest are timed for every lane at once
afterwards (block_feeds_crew). Pairs: numpy/schedule.py (the reference's sweeps) and
kernels/schedule.cuh.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.definitions import NODE_CREW
from ...core.jit import jit, jit_inline


@jit_inline
def _node_start(p, s, v, world, node_time, l):
    """The day node v can start in lane l: its base day, base quantity and deps' times."""
    start = p.node_base_const[s, v]
    if p.node_base_q[v] >= 0:
        start = max(start, world[p.node_base_q[v], l])
    for j in range(p.dep_ptr[s, v], p.dep_ptr[s, v + 1]):
        start = max(start, node_time[p.dep_idx[s, j], l])
    return start


@jit_inline
def _node_time(p, s, v, world, start, l):
    t = start + p.node_add_const[s, v]
    for j in range(2):
        q = p.node_add_q[s, v, j]
        if q >= 0:
            t += world[q, l]
    at_least = p.node_floor[s, v]
    return at_least if at_least > t else t


@jit_inline
def _start_lanes(p, s, v, world, node_time, n, out):
    """out[l] = _node_start(..., l) for l < n, in the same order of maxima."""
    start = p.node_base_const[s, v]
    for l in range(n):
        out[l] = start
    q = p.node_base_q[v]
    if q >= 0:
        for l in range(n):
            x = world[q, l]
            out[l] = x if x > out[l] else out[l]     # max(out[l], x), as Numba's builtin
    for j in range(p.dep_ptr[s, v], p.dep_ptr[s, v + 1]):
        d = p.dep_idx[s, j]
        for l in range(n):
            x = node_time[d, l]
            out[l] = x if x > out[l] else out[l]


@jit_inline
def _time_lanes(p, s, v, world, n, t):
    """t[l] = _node_time(..., t[l], l) for l < n: the starts in t become the times."""
    c = p.node_add_const[s, v]
    for l in range(n):
        t[l] = t[l] + c
    for j in range(2):
        q = p.node_add_q[s, v, j]
        if q >= 0:
            for l in range(n):
                t[l] += world[q, l]
    at_least = p.node_floor[s, v]
    if at_least > -math.inf:                    # a status's as_of: not yet recorded
        for l in range(n):
            t[l] = at_least if at_least > t[l] else t[l]


@jit_inline
def _time_block(p, s, b, world, node_time, n, crew_ready_at):
    """Block b's deps are all timed in every lane: a crew row gets its ready times (fixed from
    now on) to compete for a crew; other nodes get their times, in order. Returns how many
    nodes it timed. (Callers pass b as int64: one compiled signature. Inlined: called block
    by block, and a call would pass the record p by value: core/jit.py.)"""
    first = p.block_ptr[s, b]
    v = p.block_node[s, first]
    if p.node_kind[s, v] == NODE_CREW:
        _start_lanes(p, s, v, world, node_time, n, crew_ready_at[v])
        return 0
    for j in range(first, p.block_ptr[s, b + 1]):
        v = p.block_node[s, j]
        _start_lanes(p, s, v, world, node_time, n, node_time[v])
        _time_lanes(p, s, v, world, n, node_time[v])
    return p.block_ptr[s, b + 1] - first


@jit_inline
def _time_block_lane(p, s, b, world, node_time, crew_ready_at, l):
    """_time_block in lane l alone."""
    first = p.block_ptr[s, b]
    v = p.block_node[s, first]
    if p.node_kind[s, v] == NODE_CREW:
        crew_ready_at[v, l] = _node_start(p, s, v, world, node_time, l)
        return 0
    for j in range(first, p.block_ptr[s, b + 1]):
        v = p.block_node[s, j]
        start = _node_start(p, s, v, world, node_time, l)
        node_time[v, l] = _node_time(p, s, v, world, start, l)
    return p.block_ptr[s, b + 1] - first


@jit_inline
def _give_crew(p, s, v, world, node_time, ready, crew_free, l):
    """Crew row v, ready at `ready`, gets the slot of its pool (retrofit crews, a hall's or
    the site's install teams or burn-in bays) free first in lane l (the lowest-numbered of
    equals): node_time[v, l] and that slot's next free day (its time, plus the install's or
    burn-in's days for a team or a bay)."""
    first = p.crew_first[s, v]
    crew = first
    for c in range(first + 1, first + p.crew_count[s, v]):
        if crew_free[c, l] < crew_free[crew, l]:
            crew = c
    begin = max(ready, crew_free[crew, l])
    node_time[v, l] = _node_time(p, s, v, world, begin, l)
    free = node_time[v, l]
    if p.crew_hold_q[s, v] >= 0:
        free += world[p.crew_hold_q[s, v], l]
    crew_free[crew, l] = free


@jit_inline
def _crews_by_lane(p, s, world, node_time, waiting, crew_ready_at, crew_free, lane_waiting,
                   l, n_done):
    """The reference's crew loop in lane l, from where the lanes parted: the earliest-ready
    row whose deps are all timed gets a crew, and the blocks waiting for it are timed once
    freed, except those no crew row waits for (left to schedule_nodes). Returns n_done plus
    the nodes lane l timed or freed."""
    n_rows = p.n_crew_rows[s]
    for j in range(p.unlock_ptr[s, 0], p.unlock_ptr[s, n_rows]):
        lane_waiting[p.unlock_block[s, j]] = waiting[p.unlock_block[s, j]]
    while True:
        # The next row for a crew: the earliest-ready among rows whose deps are all timed.
        pick = -1
        picked_ready = math.inf
        for r in range(n_rows):
            ready = crew_ready_at[p.crew_node[s, r], l]
            if ready < picked_ready:
                pick, picked_ready = r, ready
        if pick < 0:
            return n_done
        v = p.crew_node[s, pick]
        crew_ready_at[v, l] = math.inf
        _give_crew(p, s, v, world, node_time, picked_ready, crew_free, l)
        n_done += 1
        for j in range(p.unlock_ptr[s, pick], p.unlock_ptr[s, pick + 1]):
            b = p.unlock_block[s, j]
            lane_waiting[b] -= 1
            if lane_waiting[b] == 0:
                if p.block_feeds_crew[s, b]:
                    n_done += _time_block_lane(p, s, b, world, node_time, crew_ready_at, l)
                else:
                    n_done += p.block_ptr[s, b + 1] - p.block_ptr[s, b]


@jit
def schedule_nodes(p, s, world, node_time, n, waiting, crew_ready_at, crew_free, row_ready,
                   lane_waiting, deadlock):
    """node_time[v, l] of strategy s for l < n; False on a deadlock in some lane (ruled out by
    validation).

    Same result in every lane as the reference's sweeps: nodes without a crew are timed as
    soon as their deps are, and only when none is left does the earliest-ready row get a
    crew. For s > 0, node_time must hold strategy s - 1's times on the same worlds: the nodes
    it shares with s are in no block. row_ready[v] (crew row v has its ready times and no
    crew yet) and waiting[b] are the same in every lane until the lanes part.
    """
    n_rows = p.n_crew_rows[s]
    for r in range(n_rows):
        row_ready[p.crew_node[s, r]] = 0
        for l in range(n):
            crew_ready_at[p.crew_node[s, r], l] = math.inf
    for j in range(p.unlock_ptr[s, 0], p.unlock_ptr[s, n_rows]):
        waiting[p.unlock_block[s, j]] = p.block_wait[s, p.unlock_block[s, j]]
    n_done = 0
    for b in range(p.n_ready_blocks[s]):
        n_done += _time_block(p, s, np.int64(b), world, node_time, n, crew_ready_at)
        v = p.block_node[s, p.block_ptr[s, b]]
        row_ready[v] = p.node_kind[s, v] == NODE_CREW
    for l in range(n):
        deadlock[l] = False
        for c in range(p.n_slots[s]):
            crew_free[c, l] = 0.0
    while True:
        # One row ready for a crew: every lane gives it the crew free first, all at once.
        n_open = 0
        pick = -1
        for r in range(n_rows):
            if row_ready[p.crew_node[s, r]]:
                n_open += 1
                pick = r
        if n_open != 1:
            break
        v = p.crew_node[s, pick]
        row_ready[v] = False
        for l in range(n):
            ready = crew_ready_at[v, l]
            crew_ready_at[v, l] = math.inf
            deadlock[l] |= not ready < math.inf     # the reference finds no row to pick
            _give_crew(p, s, v, world, node_time, ready, crew_free, l)
        n_done += 1
        for j in range(p.unlock_ptr[s, pick], p.unlock_ptr[s, pick + 1]):
            b = p.unlock_block[s, j]
            waiting[b] -= 1
            if waiting[b] == 0:
                n_done += _time_block(p, s, np.int64(b), world, node_time, n, crew_ready_at)
                w = p.block_node[s, p.block_ptr[s, b]]
                row_ready[w] = p.node_kind[s, w] == NODE_CREW
    total = p.block_ptr[s, p.block_ptr.shape[1] - 1]       # every node in a block
    ok = True
    for l in range(n):
        lane_done = n_done
        if n_open > 1:                                     # the lanes part
            lane_done = _crews_by_lane(p, s, world, node_time, waiting, crew_ready_at,
                                       crew_free, lane_waiting, l, n_done)
        ok &= lane_done == total and not deadlock[l]
    if n_open > 1:
        # The blocks no crew row waits for, freed in every lane by now, in dependency order.
        for b in range(p.n_ready_blocks[s], p.block_ptr.shape[1] - 1):
            if p.block_ptr[s, b] == p.block_ptr[s, b + 1]:
                break
            if waiting[b] > 0 and not p.block_feeds_crew[s, b]:
                _time_block(p, s, np.int64(b), world, node_time, n, crew_ready_at)
    return ok
