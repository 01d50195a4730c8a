"""The metrics of one strategy on one world (Numba), from its node times.

Capacity (trough depth and days, shortfall, homeless days), the power check and the completion
day. Pairs: numpy/metrics.py (the reference) and kernels/metrics.cuh.
"""
from __future__ import annotations

import math

from ...definitions import REL_EPS
from .jit import jit_inline



@jit_inline
def _sort_events(times, order, n):
    """Sort the first n (time, event) pairs by time, ties by event index: the order a stable
    sort of the events by time gives. Insertion sort of a few dozen pairs (performance: they
    arrive in a likely time order, so it has little to move)."""
    for i in range(1, n):
        t = times[i]
        k = order[i]
        j = i
        while j > 0 and (times[j - 1] > t or (times[j - 1] == t and order[j - 1] > k)):
            times[j] = times[j - 1]
            order[j] = order[j - 1]
            j -= 1
        times[j] = t
        order[j] = k


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
def demand_on_segment(demand_day, demand_value, k, t):
    """D(t) for t in demand segment k: k = 0 before the first point, k = n after the last,
    else the line from point k - 1 to point k."""
    n = demand_day.shape[0]
    if k == 0:
        return demand_value[0]
    if k == n:
        return demand_value[n - 1]
    slope = (demand_value[k] - demand_value[k - 1]) / (demand_day[k] - demand_day[k - 1])
    return demand_value[k - 1] + (t - demand_day[k - 1]) * slope


@jit_inline
def shortfall_area(demand_day, demand_value, lo, hi, capacity, k):
    """Integral over [lo, hi] of max(0, D(t) - capacity), splitting at demand knots.

    k is the demand segment holding lo or before it; returns (area, segment holding hi).
    Performance shortcut: intervals arrive in time order, so the segment only moves forward.
    """
    n = demand_day.shape[0]
    while k < n and demand_day[k] <= lo:
        k += 1
    total = 0.0
    a = lo
    while True:
        b = hi if k == n else min(hi, demand_day[k])
        f_a = demand_on_segment(demand_day, demand_value, k, a) - capacity
        f_b = demand_on_segment(demand_day, demand_value, k, b) - capacity
        total += positive_area(a, b, f_a, f_b)
        if b >= hi:
            return total, k
        a = b
        k += 1


@jit_inline
def capacity_metrics(cap_event_node, cap_event_island, cap_event_delta, cap_event_scale_q,
                     cap_event_order, island_cap0, baseline, horizon, largest_job, demand_day,
                     demand_value, s, world, node_time, times, order, island_cap, out):
    """out[0:4] = trough_depth, trough_days, shortfall_gpu_days, homeless_days."""
    n_events = cap_event_node.shape[0]
    for j in range(n_events):
        order[j] = cap_event_order[s, j]
        times[j] = node_time[cap_event_node[order[j]]]
    _sort_events(times, order, n_events)
    n_islands = island_cap0.shape[0]
    capacity = 0.0
    for i in range(n_islands):
        island_cap[i] = island_cap0[i]
        capacity += island_cap0[i]
    depth = 0.0
    trough_days = 0.0
    shortfall = 0.0
    homeless_days = 0.0
    lo = 0.0
    segment = 0
    below_limit = baseline - REL_EPS * baseline
    job_limit = largest_job - REL_EPS * max(largest_job, 1.0)
    for j in range(n_events + 1):
        hi = horizon if j == n_events else min(max(times[j], 0.0), horizon)
        width = hi - lo
        if width > 0.0:
            depth = max(depth, baseline - capacity)
            if capacity < below_limit:
                trough_days += width
            area, segment = shortfall_area(demand_day, demand_value, lo, hi, capacity,
                                           segment)
            shortfall += area
            largest = -math.inf
            for i in range(n_islands):
                largest = max(largest, island_cap[i])
            if largest < job_limit:
                homeless_days += width
            lo = hi
        if j < n_events:
            k = order[j]
            delta = cap_event_delta[k]
            if cap_event_scale_q[k] >= 0:
                delta *= world[cap_event_scale_q[k]]
            island_cap[cap_event_island[k]] += delta
            capacity = 0.0
            for i in range(n_islands):
                capacity += island_cap[i]
    out[0] = depth if depth > REL_EPS * baseline else 0.0
    out[1] = trough_days
    out[2] = shortfall
    out[3] = homeless_days


@jit_inline
def power_violation(power_event_node, power_event_hall, power_event_delta,
                    power_event_order, n_power_checked, hall_draw0, hall_cap, s, node_time,
                    times, order, draw):
    n_events = n_power_checked[s]
    for j in range(n_events):
        order[j] = power_event_order[s, j]
        times[j] = node_time[power_event_node[order[j]]]
    _sort_events(times, order, n_events)
    for h in range(hall_cap.shape[0]):
        draw[h] = hall_draw0[h]
        if draw[h] > hall_cap[h] + REL_EPS * hall_cap[h]:
            return 1.0
    for j in range(n_events):
        k = order[j]
        draw[power_event_hall[s, k]] += power_event_delta[k]
        group_end = j == n_events - 1 or times[j + 1] != times[j]
        if group_end:
            for h in range(hall_cap.shape[0]):
                if draw[h] > hall_cap[h] + REL_EPS * hall_cap[h]:
                    return 1.0
    return 0.0


@jit_inline
def completion_day(completion_node, node_time):
    last = -math.inf
    for k in range(completion_node.shape[0]):
        last = max(last, node_time[completion_node[k]])
    return last
