"""The costs of one strategy from its node times (NumPy reference).

The cost columns (definitions.COSTS) over the window [window_start, horizon] (window_start
is 0 without a status: docs/metrics.md, Windows), from the plan's `costs`
group (mcrisk/plan/costs.py): spans, reserved power and power over the reservation per hall,
shortfall, crews and one-offs, then the total. Vectorized over scenarios and sequential over spans, halls and
one-offs in the order of the design contract (docs/costs.md), with every product evaluated
as written, so that the sums are the kernels' to the bit on plans without lognormal or PERT
draws. Pairs: numba/costs.py and kernels/costs.cuh.
"""
from __future__ import annotations

import numpy as np

from ...core.definitions import (COST_CREWS, COST_POWER_OVER, COST_POWER_RESERVED,
                                 COST_SHORTFALL, COST_TOTAL, N_COSTS)
from ...plan.record import CompiledScenario


def price(world: np.ndarray, q: int):
    """A price's factor: the world quantity q per scenario, or 1.0 when q < 0 (constant)."""
    return world[:, q] if q >= 0 else 1.0


def clip_to_window(t, start: float, horizon: float):
    """min(max(t, start), horizon): a time seen through the window [start, horizon]."""
    return np.minimum(np.maximum(t, start), horizon)


def _span_end(node: int, day: float, node_time: np.ndarray):
    """A span's start or end per scenario: its node's time, or its fixed day."""
    return node_time[:, node] if node >= 0 else day


def add_spans(plan: CompiledScenario, s: int, node_time: np.ndarray, world: np.ndarray,
              costs: np.ndarray) -> None:
    """Each span z of strategy s, in order: (rate x price) x days of the span in the window,
    into its cost column."""
    start, horizon = plan.window_start, plan.horizon
    for z in range(plan.span_cost.shape[0]):
        rate = plan.span_rate[s, z]
        if rate == 0.0:
            continue
        begin = _span_end(plan.span_start_node[z], plan.span_start_day[z], node_time)
        end = _span_end(plan.span_end_node[z], plan.span_end_day[z], node_time)
        width = np.maximum(0.0, clip_to_window(end, start, horizon)
                           - clip_to_window(begin, start, horizon))
        column = plan.span_cost[z]
        costs[:, column] += (rate * price(world, plan.span_price_q[s, z])) * width


def step_starts(plan: CompiledScenario, s: int, h: int, node_time: np.ndarray) -> np.ndarray:
    """starts[i, y]: the day strategy s's y-th reservation step of hall h starts in scenario
    i. A step starts on its day, or res_day days after its event (res_node); then no sooner
    than the step listed before it, and a step down no sooner than the hall's res_term after
    the latest step up before it (the first step starts a term): the contract's order and
    terms in each world (docs/costs.md, Reservations on an event). Nondecreasing along y."""
    j0, end = int(plan.res_ptr[s, h]), int(plan.res_ptr[s, h + 1])
    starts = np.empty((node_time.shape[0], end - j0))
    term_start = None
    for j in range(j0, end):
        v = plan.res_node[s, j]
        t = node_time[:, v] + plan.res_day[s, j] if v >= 0 \
            else np.full(node_time.shape[0], plan.res_day[s, j])
        if j > j0:
            t = np.maximum(t, starts[:, j - j0 - 1])
            if plan.res_kw[s, j] < plan.res_kw[s, j - 1]:
                t = np.maximum(t, term_start + plan.res_term[h])
        if j == j0 or plan.res_kw[s, j] > plan.res_kw[s, j - 1]:
            term_start = t
        starts[:, j - j0] = t
    return starts


def add_reserved(plan: CompiledScenario, s: int, node_time: np.ndarray, world: np.ndarray,
                 costs: np.ndarray) -> None:
    """Reserved power, hall by hall and step by step: (rate x price) x the days in the
    window from the step's start to the next step's (the last step's to the horizon)."""
    start, horizon = plan.window_start, plan.horizon
    for h in range(plan.res_price_q.shape[0]):
        j0, end = int(plan.res_ptr[s, h]), int(plan.res_ptr[s, h + 1])
        if j0 == end:
            continue
        starts = step_starts(plan, s, h, node_time)
        for j in range(j0, end):
            rate = plan.res_rate[s, j]
            if rate == 0.0:
                continue
            until = starts[:, j - j0 + 1] if j + 1 < end else np.inf
            width = np.maximum(0.0, clip_to_window(until, start, horizon)
                               - clip_to_window(starts[:, j - j0], start, horizon))
            costs[:, COST_POWER_RESERVED] += (rate * price(world, plan.res_price_q[h])) * width


def over_reservation_area(plan: CompiledScenario, s: int, h: int,
                          node_time: np.ndarray) -> np.ndarray:
    """Integral over [window_start, horizon] of max(0, draw - reserved) in hall h, kW x days.

    The contract's merge of the hall's power events (stably sorted by time) with the
    strategy's reservation steps (started as step_starts says), run for every scenario at
    once: each pass takes the next event or step of every scenario still inside the window
    (an event first on a tie); the steps up to the window's start and the events before it
    apply with no width.
    """
    start, horizon = plan.window_start, plan.horizon
    n = node_time.shape[0]
    events = np.flatnonzero(plan.power_event_hall[s] == h)
    times = node_time[:, plan.power_event_node[events]]
    order = np.argsort(times, axis=1, kind="stable")
    times = np.take_along_axis(times, order, axis=1)
    deltas = plan.power_event_delta[events][order]
    n_events = events.shape[0]
    step_kw = plan.res_kw[s]
    j0, end = int(plan.res_ptr[s, h]), int(plan.res_ptr[s, h + 1])
    starts = step_starts(plan, s, h, node_time)
    j = j0 + np.sum(starts <= start, axis=1)       # the steps up to the window's start
    res = np.where(j > j0, step_kw[np.maximum(j - 1, 0)], 0.0)
    t = np.full(n, start)
    draw = np.full(n, plan.hall_draw0[h])
    area = np.zeros(n)
    i = np.zeros(n, dtype=np.int64)
    active = np.ones(n, dtype=bool)
    rows = np.arange(n)
    last_event, last_step = max(n_events - 1, 0), max(end - 1, j0)
    # every pass takes an event or a step, or ends at the horizon: at most this many
    for _ in range(n_events + (end - j0) + 1):
        if not active.any():
            break
        event_i = np.minimum(i, last_event)
        te = np.full(n, horizon)
        if n_events:
            te = np.where(i < n_events, clip_to_window(times[rows, event_i], start, horizon),
                          horizon)
        step_j = np.minimum(j, last_step)
        tr = np.where(j < end, np.minimum(starts[rows, step_j - j0], horizon), horizon) \
            if end > j0 else np.full(n, horizon)
        nxt = np.minimum(te, tr)
        area = np.where(active, area + np.maximum(0.0, draw - res) * (nxt - t), area)
        t = np.where(active, nxt, t)
        active &= t < horizon
        take_event = active & (te <= tr)
        take_step = active & ~(te <= tr)
        if n_events:
            draw = np.where(take_event, draw + deltas[rows, event_i], draw)
        i += take_event
        res = np.where(take_step, step_kw[step_j], res)
        j += take_step
    return area


def add_power_over(plan: CompiledScenario, s: int, node_time: np.ndarray, world: np.ndarray,
                   costs: np.ndarray) -> None:
    """Power drawn above the reservation, hall by hall (halls without a price skipped)."""
    for h in range(plan.over_rate.shape[0]):
        rate = plan.over_rate[h]
        if rate == 0.0:
            continue
        area = over_reservation_area(plan, s, h, node_time)
        costs[:, COST_POWER_OVER] += (rate * price(world, plan.over_price_q[h])) * area


def crew_days(plan: CompiledScenario, s: int, node_time: np.ndarray,
              world: np.ndarray) -> np.ndarray:
    """Days in the window from the first row retrofit's start to the last one's finish (a row
    starts its duration, the additive terms of its node, before it finishes); the crew rows
    after the retrofits are install teams' and burn-in bays'."""
    start, horizon = plan.window_start, plan.horizon
    n = node_time.shape[0]
    first = np.full(n, np.inf)
    last = np.full(n, -np.inf)
    for r in range(plan.n_retrofit_rows[s]):
        v = plan.crew_node[s, r]
        finish = node_time[:, v]
        duration = np.zeros(n)
        for q in plan.node_add_q[s, v]:
            if q >= 0:
                duration = duration + world[:, q]
        duration = duration + plan.node_add_const[s, v]
        first = np.minimum(first, finish - duration)
        last = np.maximum(last, finish)
    return np.maximum(0.0, clip_to_window(last, start, horizon)
                      - clip_to_window(first, start, horizon))


def pool_days(plan: CompiledScenario, s: int, w: int, node_time: np.ndarray,
              world: np.ndarray) -> np.ndarray:
    """Days in the window from pool w's first start (a team or bay row's time) to its last
    end (that time plus the install's or burn-in's days the member stays busy)."""
    start, horizon = plan.window_start, plan.horizon
    n = node_time.shape[0]
    first = np.full(n, np.inf)
    last = np.full(n, -np.inf)
    for r in range(plan.n_retrofit_rows[s], plan.n_crew_rows[s]):
        v = plan.crew_node[s, r]
        if plan.crew_first[s, v] != plan.pool_first[s, w]:
            continue
        begin = node_time[:, v]
        end = begin
        if plan.crew_hold_q[s, v] >= 0:
            end = begin + world[:, plan.crew_hold_q[s, v]]
        first = np.minimum(first, begin)
        last = np.maximum(last, end)
    return np.maximum(0.0, clip_to_window(last, start, horizon)
                      - clip_to_window(first, start, horizon))


def strategy_costs(plan: CompiledScenario, s: int, node_time: np.ndarray, world: np.ndarray,
                   shortfall: np.ndarray) -> np.ndarray:
    """costs[i, c] of strategy s (c in definitions.COSTS order) from its node times, the world
    and its shortfall metric (H100-eq x days), in the kernels' order."""
    costs = np.zeros((node_time.shape[0], N_COSTS))
    add_spans(plan, s, node_time, world, costs)
    add_reserved(plan, s, node_time, world, costs)
    add_power_over(plan, s, node_time, world, costs)
    if plan.shortfall_rate != 0.0:
        costs[:, COST_SHORTFALL] = (
            (plan.shortfall_rate * price(world, plan.shortfall_price_q)) * shortfall)
    if plan.crew_rate[s] != 0.0 and plan.n_retrofit_rows[s] > 0:
        costs[:, COST_CREWS] = (
            (plan.crew_rate[s] * price(world, plan.crew_price_q)) * crew_days(plan, s, node_time,
                                                                           world))
    for w in range(plan.n_pools[s]):             # install teams and burn-in bays, as crews
        if plan.pool_rate[s, w] != 0.0:
            costs[:, COST_CREWS] += ((plan.pool_rate[s, w] * price(world, plan.pool_price_q[s, w]))
                                     * pool_days(plan, s, w, node_time, world))
    for u in range(plan.lump_amount.shape[0]):
        amount = plan.lump_amount[u]
        if amount != 0.0:
            costs[:, plan.lump_cost[u]] += amount * price(world, plan.lump_price_q[u])
    costs[:, COST_TOTAL] = costs[:, COST_TOTAL + 1]     # the total: the columns after it, in order
    for k in range(COST_TOTAL + 2, N_COSTS):
        costs[:, COST_TOTAL] += costs[:, k]
    return costs
