"""The costs of one strategy on the worlds of a lane group (Numba), from their node times.

The cost columns (definitions.COSTS) after the metrics, exactly in the order of the design
(docs/costs.md; the bit-parity contract): the spans, reserved power and power over the
reservation hall by hall,
the shortfall, the crews, the one-offs, then the total. Every cost counts what happens in
[window_start, horizon] (window_start 0 without a status; docs/metrics.md, Windows). The
spans, shortfall and one-offs loop over the lanes of the group (they vectorize); power over
the reservation, reserved power and the crews go lane by lane. The driver calls
strategy_costs only when the plan has costs (plan.n_costs > 0), so a scenario without
[costs] does no cost work. Pairs: numpy/costs.py (the reference) and kernels/costs.cuh.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.definitions import (COST_CREWS, COST_POWER_OVER, COST_POWER_RESERVED,
                                 COST_SHORTFALL, COST_TOTAL, N_COSTS, N_METRICS,
                                 SHORTFALL_GPU_DAYS)
from ...core.jit import jit, jit_inline
from .metrics import sort_events


@jit_inline
def price(q, world, l):
    """The price factor of lane l: world[q, l] for a drawn price (q >= 0), else 1.0."""
    return world[q, l] if q >= 0 else 1.0


@jit_inline
def clip(t, start, horizon):
    """t held to the cost window [start, horizon]."""
    return min(max(t, start), horizon)


@jit_inline
def hall_power_events(p, s, h, node_time, n, times, order):
    """times[j, l], order[j, l]: the power events of hall h in strategy s in lane l < n,
    sorted by (time, event); returns how many (power_event_order lists only the checked
    events: metrics.sorted_events)."""
    count = 0
    for e in range(p.power_event_node.shape[0]):
        if p.power_event_hall[s, e] == h:
            v = p.power_event_node[e]
            for l in range(n):
                order[count, l] = e
                times[count, l] = node_time[v, l]
            count += 1
    sort_events(times, order, np.int64(count), n)     # one compiled signature
    return count


@jit_inline
def step_start(p, s, h, j, prev, term_start, node_time, l):
    """The day reservation step j (of hall h, strategy s) starts in lane l: its day, or
    res_day days after its event; no sooner than `prev` (the step before it) and, a step
    down, than the hall's res_term after `term_start` (the latest step up's start). The
    first step of a hall (j == res_ptr[s, h]) only the first. numpy/costs.step_starts."""
    v = p.res_node[s, j]
    t = node_time[v, l] + p.res_day[s, j] if v >= 0 else p.res_day[s, j]
    if j > p.res_ptr[s, h]:
        t = max(t, prev)
        if p.res_kw[s, j] < p.res_kw[s, j - 1]:
            t = max(t, term_start + p.res_term[h])
    return t


@jit_inline
def starts_term(p, s, h, j):
    """Whether step j starts a minimum term: the hall's first step, or a step up."""
    return j == p.res_ptr[s, h] or p.res_kw[s, j] > p.res_kw[s, j - 1]


@jit_inline
def over_area(p, s, h, l, times, order, count, node_time):
    """The integral over [window_start, horizon] of max(0, draw - reserved) in hall h, lane l
    (kW-days): the hall's power events (sorted, hall_power_events) merged with its
    reservation steps (started as step_start says); those before the window apply with no
    width."""
    end = p.res_ptr[s, h + 1]
    t = p.window_start
    draw = p.hall_draw0[h]
    res = 0.0
    area = 0.0
    j = p.res_ptr[s, h]
    ts = 0.0
    term_start = 0.0
    if j < end:
        ts = step_start(p, s, h, j, ts, term_start, node_time, l)
        term_start = ts
    while j < end and ts <= p.window_start:
        res = p.res_kw[s, j]
        j += 1
        if j < end:
            ts = step_start(p, s, h, j, ts, term_start, node_time, l)
            if starts_term(p, s, h, j):
                term_start = ts
    i = 0
    while True:
        te = min(max(times[i, l], p.window_start), p.horizon) if i < count else p.horizon
        tr = min(ts, p.horizon) if j < end else p.horizon
        nxt = min(te, tr)
        area += max(0.0, draw - res) * (nxt - t)
        t = nxt
        if t >= p.horizon:
            break
        if te <= tr:
            draw += p.power_event_delta[order[i, l]]
            i += 1
        else:
            res = p.res_kw[s, j]
            j += 1
            if j < end:
                ts = step_start(p, s, h, j, ts, term_start, node_time, l)
                if starts_term(p, s, h, j):
                    term_start = ts
    return area


@jit_inline
def add_reserved(p, s, h, l, node_time, world, rows):
    """Reserved power of hall h in lane l, step by step into rows[l]: (rate x price) x the
    days in the window from the step's start to the next step's (the last's to the
    horizon)."""
    end = p.res_ptr[s, h + 1]
    j = p.res_ptr[s, h]
    ts = step_start(p, s, h, j, 0.0, 0.0, node_time, l)
    term_start = ts
    while j < end:
        until = math.inf
        if j + 1 < end:
            until = step_start(p, s, h, j + 1, ts, term_start, node_time, l)
            if starts_term(p, s, h, j + 1):
                term_start = until
        rate = p.res_rate[s, j]
        if rate != 0.0:
            width = max(0.0, clip(until, p.window_start, p.horizon)
                        - clip(ts, p.window_start, p.horizon))
            rows[l, N_METRICS + COST_POWER_RESERVED] += \
                (rate * price(p.res_price_q[h], world, l)) * width
        ts = until
        j += 1


@jit
def strategy_costs(p, s, world, node_time, n, times, order, rows):
    """rows[l, N_METRICS + k] = the costs of strategy s in lane l < n (k: definitions.COST_*),
    from its node times, its world and its shortfall metric (in rows[l]); times and order are
    scratch."""
    for l in range(n):
        for k in range(N_COSTS):
            rows[l, N_METRICS + k] = 0.0
    # 1. Spans: rate x price x the days of [start, end] inside the window.
    for z in range(p.span_cost.shape[0]):
        rate = p.span_rate[s, z]
        if rate == 0.0:
            continue
        column = N_METRICS + p.span_cost[z]
        q = p.span_price_q[s, z]
        start_node, end_node = p.span_start_node[z], p.span_end_node[z]
        for l in range(n):
            a = node_time[start_node, l] if start_node >= 0 else p.span_start_day[z]
            b = node_time[end_node, l] if end_node >= 0 else p.span_end_day[z]
            width = max(0.0, clip(b, p.window_start, p.horizon)
                        - clip(a, p.window_start, p.horizon))
            rows[l, column] += (rate * price(q, world, l)) * width
    # 2. Reserved power, hall by hall, step by step.
    for h in range(p.res_price_q.shape[0]):
        if p.res_ptr[s, h] == p.res_ptr[s, h + 1]:
            continue
        for l in range(n):
            add_reserved(p, s, h, l, node_time, world, rows)
    # 3. Power over the reservation, hall by hall: the hall's power events sorted by (time,
    # event), merged with its reservation steps.
    for h in range(p.over_rate.shape[0]):
        if p.over_rate[h] == 0.0:
            continue
        count = hall_power_events(p, s, h, node_time, n, times, order)
        for l in range(n):
            area = over_area(p, s, h, l, times, order, count, node_time)
            rows[l, N_METRICS + COST_POWER_OVER] += \
                (p.over_rate[h] * price(p.over_price_q[h], world, l)) * area
    # 4. Shortfall: the shortfall metric (H100-eq x days) priced.
    if p.shortfall_rate != 0.0:
        for l in range(n):
            rows[l, N_METRICS + COST_SHORTFALL] = \
                (p.shortfall_rate * price(p.shortfall_price_q, world, l)) \
                * rows[l, SHORTFALL_GPU_DAYS]
    # 5. Crews: engaged from the first row retrofit's start to the last one's finish.
    rows_of_s = p.n_retrofit_rows[s]
    if p.crew_rate[s] != 0.0 and rows_of_s > 0:
        for l in range(n):
            first = math.inf
            last = -math.inf
            for r in range(rows_of_s):
                v = p.crew_node[s, r]
                finish = node_time[v, l]
                d = 0.0
                if p.node_add_q[s, v, 0] >= 0:
                    d += world[p.node_add_q[s, v, 0], l]
                if p.node_add_q[s, v, 1] >= 0:
                    d += world[p.node_add_q[s, v, 1], l]
                d += p.node_add_const[s, v]
                start = finish - d
                first = min(first, start)
                last = max(last, finish)
            rows[l, N_METRICS + COST_CREWS] = \
                (p.crew_rate[s] * price(p.crew_price_q, world, l)) \
                * max(0.0, clip(last, p.window_start, p.horizon)
                      - clip(first, p.window_start, p.horizon))
    # 5b. Install teams and burn-in bays: each pool, as the crews, from its first start to its
    # last end (a member is busy for the install's or burn-in's days past its row's time).
    for w in range(p.n_pools[s]):
        if p.pool_rate[s, w] == 0.0:
            continue
        for l in range(n):
            first = math.inf
            last = -math.inf
            for r in range(p.n_retrofit_rows[s], p.n_crew_rows[s]):
                v = p.crew_node[s, r]
                if p.crew_first[s, v] != p.pool_first[s, w]:
                    continue
                begin = node_time[v, l]
                end = begin
                if p.crew_hold_q[s, v] >= 0:
                    end = begin + world[p.crew_hold_q[s, v], l]
                first = min(first, begin)
                last = max(last, end)
            rows[l, N_METRICS + COST_CREWS] += \
                (p.pool_rate[s, w] * price(p.pool_price_q[s, w], world, l)) \
                * max(0.0, clip(last, p.window_start, p.horizon)
                      - clip(first, p.window_start, p.horizon))
    # 6. One-offs.
    for u in range(p.lump_amount.shape[0]):
        amount = p.lump_amount[u]
        if amount == 0.0:
            continue
        column = N_METRICS + p.lump_cost[u]
        q = p.lump_price_q[u]
        for l in range(n):
            rows[l, column] += amount * price(q, world, l)
    # 7. The total: the columns after it, added in order.
    for l in range(n):
        total = rows[l, N_METRICS + COST_TOTAL + 1]
        for k in range(N_METRICS + COST_TOTAL + 2, N_METRICS + N_COSTS):
            total += rows[l, k]
        rows[l, N_METRICS + COST_TOTAL] = total
