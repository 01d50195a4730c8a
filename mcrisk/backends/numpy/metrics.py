"""The metrics of one strategy from its node times (NumPy reference).

Capacity (trough depth and days, shortfall, homeless days), the job mix's columns
(unservable demand and homeless days per class, with [[demand.jobs]]) and the power check;
the completion day is a max in driver.py. Each counts what happens in its window,
[window_start, horizon) (power: from window_start on), window_start being 0 without a
status (docs/metrics.md, Windows). Pairs: numba/metrics.py and kernels/metrics.cuh.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.definitions import (HOMELESS_DAYS, JOB_HOMELESS_DAYS, REL_EPS, SHORTFALL_GPU_DAYS,
                                 TROUGH_DAYS, TROUGH_DEPTH, UNSERVABLE_GPU_DAYS, event_deltas)
from ...plan.record import CompiledScenario
from .sums import sum_in_order


def positive_area(lo, hi, f_lo, f_hi):
    """Integral of max(0, f) over [lo, hi] for f linear from f_lo to f_hi."""
    width = hi - lo
    both = (f_lo >= 0) & (f_hi >= 0)
    area = np.where(both, 0.5 * (f_lo + f_hi) * width, 0.0)
    up = (f_lo < 0) & (f_hi > 0)
    down = (f_lo > 0) & (f_hi < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        area = np.where(up, 0.5 * width * f_hi * f_hi / (f_hi - f_lo), area)
        area = np.where(down, 0.5 * width * f_lo * f_lo / (f_lo - f_hi), area)
    return area


def demand_values(plan: CompiledScenario, world: np.ndarray) -> np.ndarray:
    """[scenario, point]: each demand point's H100-eq, demand_value where its growth quantity
    is -1, else demand_value x (1 + g)^(day / 365) for the scenario's growth g (math.pow per
    element: libm's pow, as the kernels call it, so their floats)."""
    values = np.broadcast_to(plan.demand_value, (world.shape[0], len(plan.demand_value))).copy()
    for k, q in enumerate(plan.demand_growth_q):
        if q >= 0:
            exponent = plan.demand_day[k] / 365.0
            values[:, k] = [plan.demand_value[k] * math.pow(1.0 + g, exponent)
                            for g in world[:, q]]
    return values


def demand_on_segment(plan: CompiledScenario, value: np.ndarray, k: int, t):
    """D(t) for t in demand segment k: k = 0 before the first point, k = n after the last,
    else the line from point k - 1 to point k (the kernels' formula, so their floats);
    value: [scenario, point] (demand_values)."""
    day = plan.demand_day
    n = day.shape[0]
    if k == 0 or k == n:
        edge = value[:, 0] if k == 0 else value[:, n - 1]
        return np.broadcast_to(edge[:, None], np.shape(t))
    slope = (value[:, k] - value[:, k - 1]) / (day[k] - day[k - 1])
    return value[:, k - 1, None] + (t - day[k - 1]) * slope[:, None]


def shortfall_area(plan: CompiledScenario, value: np.ndarray, lo, hi, capacity):
    """Integral over [lo, hi] ([scenario, interval]) of max(0, D(t) - capacity), demand
    segment by segment."""
    cuts = [-np.inf] + list(plan.demand_day) + [np.inf]
    total = np.zeros(np.shape(lo))
    for k, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        seg_lo = np.maximum(lo, a)
        seg_hi = np.minimum(hi, b)
        ok = seg_hi > seg_lo
        seg_lo, seg_hi = np.where(ok, seg_lo, 0.0), np.where(ok, seg_hi, 0.0)
        f_lo = demand_on_segment(plan, value, k, seg_lo) - capacity
        f_hi = demand_on_segment(plan, value, k, seg_hi) - capacity
        total += np.where(ok, positive_area(seg_lo, seg_hi, f_lo, f_hi), 0.0)
    return total


def capacity_metrics(plan: CompiledScenario, islands: tuple, world: np.ndarray) -> dict:
    """{metric column: value per scenario} of trough_depth, trough_days, shortfall_gpu_days and
    homeless_days, from the islands' capacities over time (island_capacity's result).

    Capacity is piecewise constant between events; events at one instant apply together
    because the interval between them has zero length.
    """
    island_cap, bounds = islands
    lo, hi = bounds[:, :-1], bounds[:, 1:]
    width = hi - lo
    capacity = sum_in_order(island_cap)
    baseline = plan.baseline
    below = capacity < baseline - REL_EPS * baseline
    depth = np.where(width > 0, np.maximum(0.0, baseline - capacity), 0.0).max(axis=1)
    depth = np.where(depth > REL_EPS * baseline, depth, 0.0)
    trough_days = sum_in_order(np.where(below, width, 0.0))
    shortfall = sum_in_order(shortfall_area(plan, demand_values(plan, world), lo, hi,
                                            capacity))
    job = plan.largest_job
    homeless = island_cap.max(axis=2) < job - REL_EPS * max(job, 1.0)
    homeless_days = sum_in_order(np.where(homeless, width, 0.0))
    return {TROUGH_DEPTH: depth, TROUGH_DAYS: trough_days, SHORTFALL_GPU_DAYS: shortfall,
            HOMELESS_DAYS: homeless_days}


def island_capacity(plan: CompiledScenario, s: int, node_time: np.ndarray, world: np.ndarray):
    """(island_cap [n, k + 1, i], bounds [n, k + 2]) of strategy s (its placement decides a
    new unit's island): each island's capacity before the first event and after each event in
    time order, and the interval bounds window_start, the event times clipped to
    [window_start, horizon], horizon (interval j: [bounds[j], bounds[j + 1])): the metrics'
    window, so an interval before window_start has length 0 and its capacity counts towards
    no metric (docs/metrics.md, Windows)."""
    n = node_time.shape[0]
    horizon = plan.horizon
    times = node_time[:, plan.cap_event_node]
    order = np.argsort(times, axis=1, kind="stable")
    times = np.take_along_axis(times, order, axis=1)
    n_islands = plan.island_cap0.shape[0]
    # island capacity before and after each sorted event, added event by event: [n, k + 1, i]
    delta = np.zeros((n, times.shape[1], n_islands))
    island = plan.cap_event_island[s][order]
    event_delta = event_deltas(plan, world)
    np.put_along_axis(delta, island[:, :, None],
                      np.take_along_axis(event_delta, order, axis=1)[:, :, None], axis=2)
    island_cap = np.add.accumulate(
        np.concatenate([np.broadcast_to(plan.island_cap0, (n, 1, n_islands)), delta], axis=1),
        axis=1)
    start = plan.window_start
    bounds = np.concatenate([np.full((n, 1), start), np.clip(times, start, horizon),
                             np.full((n, 1), horizon)], axis=1)
    return island_cap, bounds


def job_metrics(plan: CompiledScenario, islands: tuple, world: np.ndarray):
    """[n, n_job_cols]: unservable_gpu_days, then homeless_days of each job class (file order;
    definitions.job_columns).

    Homeless days are exact over the capacity intervals, as homeless_days; unservable demand
    is the midpoint rule on cells of plan.job_step days (docs/metrics.md); `islands` is
    island_capacity's result."""
    island_cap, bounds = islands
    width = bounds[:, 1:] - bounds[:, :-1]
    largest = island_cap.max(axis=2)
    out = np.zeros((island_cap.shape[0], plan.n_job_cols))
    for j, size in enumerate(plan.job_size):
        homeless = largest < size - REL_EPS * max(size, 1.0)
        out[:, JOB_HOMELESS_DAYS + j] = sum_in_order(np.where(homeless, width, 0.0))
    out[:, UNSERVABLE_GPU_DAYS] = unservable_gpu_days(plan, island_cap, bounds[:, 1:-1], world)
    return out


def unservable_gpu_days(plan: CompiledScenario, island_cap: np.ndarray,
                        event_times: np.ndarray, world: np.ndarray) -> np.ndarray:
    """Sum over cells [w + c h, min(w + (c + 1) h, horizon)) of unservable(midpoint) x
    width, w the window's start, the capacities those in force at the midpoint (every event
    at or before it applied)."""
    n = island_cap.shape[0]
    rows = np.arange(n)
    value = demand_values(plan, world)
    step, horizon, start = plan.job_step, plan.horizon, plan.window_start
    total = np.zeros(n)
    cell = 0
    while start + cell * step < horizon:
        lo, hi = start + cell * step, min(start + (cell + 1) * step, horizon)
        mid = 0.5 * (lo + hi)
        caps = island_cap[rows, (event_times <= mid).sum(axis=1)]
        segment = int(np.searchsorted(plan.demand_day, mid, side="right"))
        demand = demand_on_segment(plan, value, segment, np.full((n, 1), mid))[:, 0]
        placed = pack_jobs(plan, caps, demand)
        unservable = np.maximum(0.0, np.minimum(demand, sum_in_order(caps)) - placed)
        total = total + unservable * (hi - lo)
        cell += 1
    return total


def pack_jobs(plan: CompiledScenario, caps: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """H100-eq of `demand` [n] the packing rule places into islands of capacities caps
    [n, i]: classes in plan.job_order, each a fluid share x demand of jobs of its size; the
    islands visited by descending free capacity (ties: island order), each taking whole-job
    slots (floor((free + REL_EPS x max(size, 1)) / size), at least 0) up to what is left."""
    free = caps.copy()
    rows = np.arange(caps.shape[0])
    placed = np.zeros(caps.shape[0])
    for j in plan.job_order:
        size = plan.job_size[j]
        slack = REL_EPS * max(size, 1.0)
        left = plan.job_share[j] * demand
        visit = np.argsort(-free, axis=1, kind="stable")
        for island in visit.T:
            room = free[rows, island]
            slots = np.maximum(0.0, np.floor((room + slack) / size))
            x = np.minimum(left, size * slots)
            left = left - x
            free[rows, island] = room - x
            placed = placed + x
    return placed


def power_violation(plan: CompiledScenario, s: int, node_time: np.ndarray) -> np.ndarray:
    """1.0 where some hall's draw exceeds its cap at any time from the window's start on
    (not only before the horizon): with window_start 0 every draw, day 0's included; with
    window_start w > 0 the draw in force at w (after every event at or before it) and every
    later one, a draw that ended by w being history (docs/metrics.md, Windows)."""
    n = node_time.shape[0]
    times = node_time[:, plan.power_event_node]
    order = np.argsort(times, axis=1, kind="stable")
    times = np.take_along_axis(times, order, axis=1)
    violated = np.zeros(n, dtype=bool)
    # a tie group's state is the one after its last event, in force until the next event
    group_end = np.concatenate([times[:, 1:] != times[:, :-1], np.ones((n, 1), bool)], axis=1)
    start = plan.window_start
    if start > 0.0:         # only the states still in force at the window's start or later
        ends = np.concatenate([times[:, 1:], np.full((n, 1), np.inf)], axis=1)
        group_end &= ends > start
        first = times[:, 0] > start if times.shape[1] else np.ones(n, bool)
    else:
        first = np.ones(n, bool)
    for h, cap in enumerate(plan.hall_cap):
        limit = cap + REL_EPS * cap
        delta = np.where(plan.power_event_hall[s] == h, plan.power_event_delta, 0.0)[order]
        begin = np.full((n, 1), plan.hall_draw0[h])
        draw = np.add.accumulate(np.concatenate([begin, delta], axis=1), axis=1)[:, 1:]
        violated |= (((plan.hall_draw0[h] > limit) & first)
                     | ((draw > limit) & group_end).any(axis=1))
    return violated.astype(np.float64)
