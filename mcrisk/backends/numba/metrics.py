"""The metrics of one strategy on the worlds of a lane group (Numba), from their node times.

Capacity (trough depth and days, shortfall, homeless days), the job mix's columns (with
[[demand.jobs]]), the power check and the completion day, each over its window
[window_start, horizon) (power: from window_start on; docs/metrics.md, Windows). The events
are gathered and sorted for every lane at once (a sorting network: the same comparisons in
every lane, so the loops over lanes vectorize); each lane then sweeps its own events in time
order. Pairs:
numpy/metrics.py (the reference) and kernels/metrics.cuh.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.definitions import (HOMELESS_DAYS, JOB_HOMELESS_DAYS, REL_EPS, SHORTFALL_GPU_DAYS,
                                 TROUGH_DAYS, TROUGH_DEPTH, UNSERVABLE_GPU_DAYS)
from ...core.jit import jit, jit_inline


@jit
def sort_events(times, order, count, n):
    """Sort times[0:count, l] with order[0:count, l] by (time, event) in every lane l < n:
    the order a stable sort of the events by time gives, since order starts as the same
    events in every lane. Batcher's odd-even merge sort, its comparators enumerated for any
    count (those past the end dropped); performance: no lane branches."""
    p = 1
    while p < count:
        k = p
        while k >= 1:
            j = k % p
            while j < count - k:
                top = count - j - k
                for i in range(k if k < top else top):
                    if ((i + j) ^ (i + j + k)) < 2 * p:        # in the same 2p-block
                        a = i + j
                        b = a + k
                        for l in range(n):
                            ta, tb, ka, kb = times[a, l], times[b, l], order[a, l], order[b, l]
                            swap = (tb < ta) | ((tb == ta) & (kb < ka))
                            times[a, l] = tb if swap else ta
                            times[b, l] = ta if swap else tb
                            order[a, l] = kb if swap else ka
                            order[b, l] = ka if swap else kb
                j += 2 * k
            k //= 2
        p *= 2


@jit_inline
def positive_area(lo, hi, f_lo, f_hi):
    width = hi - lo
    if f_lo >= 0.0 and f_hi >= 0.0:
        return 0.5 * (f_lo + f_hi) * width
    if f_lo < 0.0 and f_hi > 0.0:
        return 0.5 * width * f_hi * f_hi / (f_hi - f_lo)
    if f_lo > 0.0 and f_hi < 0.0:
        return 0.5 * width * f_lo * f_lo / (f_lo - f_hi)
    return 0.0


@jit_inline
def demand_point(p, world, l, k):
    """Demand point k's H100-eq in lane l: demand_value[k] where its growth quantity is -1,
    else demand_value[k] x (1 + g)^(day / 365) for the lane's growth g (libm's pow)."""
    q = p.demand_growth_q[k]
    if q < 0:
        return p.demand_value[k]
    return p.demand_value[k] * math.pow(1.0 + world[q, l], p.demand_day[k] / 365.0)


@jit_inline
def demand_on_segment(p, world, l, k, t):
    """D(t) in lane l for t in demand segment k: k = 0 before the first point, k = n after
    the last, else the line from point k - 1 to point k."""
    n = p.demand_day.shape[0]
    if k == 0:
        return demand_point(p, world, l, 0)
    if k == n:
        return demand_point(p, world, l, n - 1)
    left = demand_point(p, world, l, k - 1)
    right = demand_point(p, world, l, k)
    slope = (right - left) / (p.demand_day[k] - p.demand_day[k - 1])
    return left + (t - p.demand_day[k - 1]) * slope


@jit_inline
def shortfall_area(p, world, l, lo, hi, capacity, k):
    """Integral over [lo, hi] of max(0, D(t) - capacity) in lane l, splitting at demand knots.

    k is the demand segment holding lo or before it; returns (area, segment holding hi).
    Performance shortcut: intervals arrive in time order, so the segment only moves forward.
    """
    n = p.demand_day.shape[0]
    while k < n and p.demand_day[k] <= lo:
        k += 1
    total = 0.0
    a = lo
    while True:
        b = hi if k == n else min(hi, p.demand_day[k])
        f_a = demand_on_segment(p, world, l, k, a) - capacity
        f_b = demand_on_segment(p, world, l, k, b) - capacity
        total += positive_area(a, b, f_a, f_b)
        if b >= hi:
            return total, k
        a = b
        k += 1


@jit_inline
def sorted_events(event_node, event_order, s, count, node_time, n, times, order):
    """times[j, l], order[j, l]: strategy s's first `count` events (in event_order) in lane
    l, sorted by (time, event)."""
    for j in range(count):
        k = event_order[s, j]
        v = event_node[k]
        for l in range(n):
            order[j, l] = k
            times[j, l] = node_time[v, l]
    sort_events(times, order, np.int64(count), n)     # one compiled signature


@jit_inline
def capacity_metrics(p, s, world, l, times, order, island_cap, out):
    """The capacity metrics of lane l into its row of metrics, out[TROUGH_DEPTH],
    out[TROUGH_DAYS], out[SHORTFALL_GPU_DAYS] and out[HOMELESS_DAYS], from its sorted capacity
    events (sorted_events)."""
    n_events = p.cap_event_node.shape[0]
    n_islands = p.island_cap0.shape[0]
    capacity = 0.0
    for i in range(n_islands):
        island_cap[i] = p.island_cap0[i]
        capacity += p.island_cap0[i]
    depth = 0.0
    trough_days = 0.0
    shortfall = 0.0
    homeless_days = 0.0
    lo = p.window_start
    segment = 0
    below_limit = p.baseline - REL_EPS * p.baseline
    job_limit = p.largest_job - REL_EPS * max(p.largest_job, 1.0)
    for j in range(n_events + 1):
        hi = p.horizon if j == n_events else min(max(times[j, l], p.window_start), p.horizon)
        width = hi - lo
        if width > 0.0:
            depth = max(depth, p.baseline - capacity)
            if capacity < below_limit:
                trough_days += width
            area, segment = shortfall_area(p, world, l, lo, hi, capacity, segment)
            shortfall += area
            largest = -math.inf
            for i in range(n_islands):
                largest = max(largest, island_cap[i])
            if largest < job_limit:
                homeless_days += width
            lo = hi
        if hi >= p.horizon:
            break       # performance: what later events change, no metric reads
        k = order[j, l]
        delta = p.cap_event_delta[k]
        if p.cap_event_scale_q[k] >= 0:
            delta *= world[p.cap_event_scale_q[k], l]
        island_cap[p.cap_event_island[s, k]] += delta
        capacity = 0.0
        for i in range(n_islands):
            capacity += island_cap[i]
    out[TROUGH_DEPTH] = depth if depth > REL_EPS * p.baseline else 0.0
    out[TROUGH_DAYS] = trough_days
    out[SHORTFALL_GPU_DAYS] = shortfall
    out[HOMELESS_DAYS] = homeless_days


@jit_inline
def pack_jobs(p, demand, island_cap, free_cap, visited):
    """H100-eq of `demand` the packing rule places into islands of capacities island_cap:
    classes in job_order, each a fluid share x demand of jobs of its size; the islands
    visited by descending free capacity (ties: island order), each taking whole-job slots
    (floor((free + REL_EPS x max(size, 1)) / size), at least 0) up to what is left."""
    n_islands = island_cap.shape[0]
    for i in range(n_islands):
        free_cap[i] = island_cap[i]
    placed = 0.0
    for o in range(p.job_order.shape[0]):
        j = p.job_order[o]
        size = p.job_size[j]
        slack = REL_EPS * max(size, 1.0)
        left = p.job_share[j] * demand
        for i in range(n_islands):
            visited[i] = False
        for _ in range(n_islands):
            best = -1
            for i in range(n_islands):
                if not visited[i] and (best < 0 or free_cap[i] > free_cap[best]):
                    best = i
            visited[best] = True
            slots = max(0.0, math.floor((free_cap[best] + slack) / size))
            x = min(left, size * slots)
            left -= x
            free_cap[best] -= x
            placed += x
    return placed


@jit_inline
def job_metrics(p, s, world, l, times, order, island_cap, free_cap, visited, out):
    """out[UNSERVABLE_GPU_DAYS] = unservable_gpu_days, out[JOB_HOMELESS_DAYS + j] =
    homeless_days of job class j (out: the job columns of lane l's row), from its sorted
    capacity events (sorted_events): homeless days exact over the capacity intervals,
    unservable demand the midpoint rule on cells of job_step days from window_start, each
    cell's midpoint taken in the interval that holds it."""
    n_events = p.cap_event_node.shape[0]
    n_islands = p.island_cap0.shape[0]
    n_jobs = p.job_size.shape[0]
    n_demand = p.demand_day.shape[0]
    for i in range(n_islands):
        island_cap[i] = p.island_cap0[i]
    for c in range(JOB_HOMELESS_DAYS + n_jobs):
        out[c] = 0.0
    lo = p.window_start
    cell = 0
    segment = 0
    for j in range(n_events + 1):
        hi = p.horizon if j == n_events else min(max(times[j, l], p.window_start), p.horizon)
        width = hi - lo
        if width > 0.0:
            largest = -math.inf
            capacity = 0.0
            for i in range(n_islands):
                largest = max(largest, island_cap[i])
                capacity += island_cap[i]
            for k in range(n_jobs):
                if largest < p.job_size[k] - REL_EPS * max(p.job_size[k], 1.0):
                    out[JOB_HOMELESS_DAYS + k] += width
            packed = -1.0       # performance: the demand last packed on these capacities
            placed = 0.0
            while p.window_start + cell * p.job_step < p.horizon:
                cell_lo = p.window_start + cell * p.job_step
                cell_hi = min(p.window_start + (cell + 1) * p.job_step, p.horizon)
                mid = 0.5 * (cell_lo + cell_hi)
                if not mid < hi:
                    break
                while segment < n_demand and p.demand_day[segment] <= mid:
                    segment += 1
                demand = demand_on_segment(p, world, l, segment, mid)
                if demand != packed:        # else the same packing as the cell before
                    placed = pack_jobs(p, demand, island_cap, free_cap, visited)
                    packed = demand
                out[UNSERVABLE_GPU_DAYS] += \
                    max(0.0, min(demand, capacity) - placed) * (cell_hi - cell_lo)
                cell += 1
            lo = hi
        if hi >= p.horizon:
            break       # every cell's midpoint is below the horizon
        k = order[j, l]
        delta = p.cap_event_delta[k]
        if p.cap_event_scale_q[k] >= 0:
            delta *= world[p.cap_event_scale_q[k], l]
        island_cap[p.cap_event_island[s, k]] += delta


@jit_inline
def power_violation(p, s, l, times, order, draw):
    """1.0 if a hall's draw exceeds its cap at any time from window_start on in lane l (its
    sorted power events, sorted_events; not only before the horizon), else 0.0: with
    window_start 0 every draw, with w > 0 the draws still in force at w or later."""
    n_events = p.n_power_checked[s]
    start = p.window_start
    # the draw before the first event counts unless an event at or before w replaced it
    counted = start <= 0.0 or n_events == 0 or times[0, l] > start
    for h in range(p.hall_cap.shape[0]):
        draw[h] = p.hall_draw0[h]
        if counted and draw[h] > p.hall_cap[h] + REL_EPS * p.hall_cap[h]:
            return 1.0
    for j in range(n_events):
        k = order[j, l]
        draw[p.power_event_hall[s, k]] += p.power_event_delta[k]
        group_end = j == n_events - 1 or times[j + 1, l] != times[j, l]
        # a tie group's draw holds until the next event: counted if that is after w
        if group_end and (start <= 0.0 or j == n_events - 1 or times[j + 1, l] > start):
            for h in range(p.hall_cap.shape[0]):
                if draw[h] > p.hall_cap[h] + REL_EPS * p.hall_cap[h]:
                    return 1.0
    return 0.0


@jit_inline
def completion_day(p, node_time, n, out):
    """out[l] = the latest time of the completion nodes in lane l, l < n."""
    for l in range(n):
        out[l] = -math.inf
    for k in range(p.completion_node.shape[0]):
        v = p.completion_node[k]
        for l in range(n):
            x = node_time[v, l]
            out[l] = x if x > out[l] else out[l]    # max(out[l], x), as Numba's builtin
