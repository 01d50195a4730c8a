"""The cost columns the slow, obvious way, and plans with costs built by hand (issue 13).

`slow_costs` works out one scenario and strategy in plain Python, differently from the
backends: it cuts the window [window_start, horizon] at the sorted union of every breakpoint
(node times, span days, reservation steps' starts), asks at the middle of each piece which spans run, what each
hall draws and reserves (the step in force: the last one started) and whether the crews are
engaged, and adds rate x price x width with math.fsum. A reservation step's start is worked
out from the contract's words (docs/costs.md, Reservations on an event): its day, or its
event's node time + its days; not before any step listed before it; a step down not before
the minimum term after the latest step up before it. It reads the node times a backend kept (keep_nodes=True), as the metrics see them.

`with_costs` gives a compiled plan the cost fields of plan.record's `costs` group from
readable rows (a span's ends as node names or days, reservations per strategy and hall),
every field set by hand; `random_costs` draws such rows for the random scenarios of
tests/random_scenarios.py. So a test chooses every cost field itself, without a [costs]
section going through mcrisk/plan/costs.py.
"""
from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass

import numpy as np

from mcrisk.core.definitions import COST, COSTS, N_COSTS, Q_SAMPLE


@dataclass(frozen=True)
class Span:
    """A cost span: column `cost` gains rate[s] x price x days from `start` to `end` in the
    window; an end is a node's name (its time) or a day (math.inf: open)."""
    cost: str
    start: str | float
    end: str | float
    rate: tuple[float, ...]          # per strategy (0: not in that strategy)
    price_q: tuple[int, ...] = ()    # per strategy; () is -1 (a constant price) everywhere


def with_costs(plan, spans=(), reservations=None, over=None, shortfall=(0.0, -1),
               crews=(0.0, -1), lumps=(), reserved=None):
    """`plan` with n_costs = N_COSTS and its cost fields from these rows.

    reservations: {(strategy, hall): [(day, kw) or (days, kw, node name), ...]} (a step on a
    day, or `days` after a node's time); reserved: {hall: (price per kW-day, q, minimum term
    days)}, the price of the hall's steps (each step's res_rate is its kW x that price) and
    its term; over: {hall: (rate, q)}; shortfall and crews: (rate, q), the crews' rate for
    every strategy; lumps: [(cost column name, amount, q)]. Strategies and halls are
    indices, q a world quantity or -1."""
    n_s, n_h = plan.n_strategies, len(plan.hall_names)
    node = {name: v for v, name in enumerate(plan.node_names)}
    spans = list(spans) or [Span("cost_energy", 0.0, 0.0, (0.0,) * n_s)]

    def end(value):
        return (node[value], 0.0) if isinstance(value, str) else (-1, float(value))

    starts, ends = [end(z.start) for z in spans], [end(z.end) for z in spans]
    steps = {key: list(value) for key, value in (reservations or {}).items()}
    width = max([1] + [sum(len(steps.get((s, h), [])) for h in range(n_h)) for s in range(n_s)])
    res_ptr = np.zeros((n_s, n_h + 1), dtype=np.int32)
    res_day, res_kw = np.zeros((n_s, width)), np.zeros((n_s, width))
    res_node, res_rate = np.full((n_s, width), -1, dtype=np.int32), np.zeros((n_s, width))
    reserved = reserved or {}
    for s in range(n_s):
        for h in range(n_h):
            at = res_ptr[s, h]
            for k, (day, kw, *after) in enumerate(steps.get((s, h), [])):
                res_day[s, at + k], res_kw[s, at + k] = day, kw
                res_node[s, at + k] = node[after[0]] if after else -1
                res_rate[s, at + k] = kw * reserved.get(h, (0.0,))[0]
            res_ptr[s, h + 1] = at + len(steps.get((s, h), []))
    over = over or {}
    lumps = list(lumps) or [("cost_mitigation", 0.0, -1)]
    return dataclasses.replace(
        plan, n_costs=N_COSTS,
        span_start_node=np.array([v for v, _ in starts], dtype=np.int32),
        span_start_day=np.array([d for _, d in starts]),
        span_end_node=np.array([v for v, _ in ends], dtype=np.int32),
        span_end_day=np.array([d for _, d in ends]),
        span_rate=np.array([z.rate for z in spans], dtype=np.float64).T.copy(),
        span_price_q=np.array([z.price_q or (-1,) * n_s for z in spans], dtype=np.int32).T.copy(),
        span_cost=np.array([COST[z.cost] for z in spans], dtype=np.int32),
        res_ptr=res_ptr, res_day=res_day, res_kw=res_kw, res_node=res_node, res_rate=res_rate,
        res_price_q=np.array([reserved.get(h, (0.0, -1))[1] for h in range(n_h)],
                             dtype=np.int32),
        res_term=np.array([float(reserved.get(h, (0.0, -1, 0.0))[2]) for h in range(n_h)]),
        over_rate=np.array([float(over.get(h, (0.0, -1))[0]) for h in range(n_h)]),
        over_price_q=np.array([over.get(h, (0.0, -1))[1] for h in range(n_h)], dtype=np.int32),
        shortfall_rate=float(shortfall[0]), shortfall_price_q=int(shortfall[1]),
        crew_rate=np.full(n_s, float(crews[0])), crew_price_q=int(crews[1]),
        lump_amount=np.array([float(a) for _, a, _ in lumps]),
        lump_price_q=np.array([q for _, _, q in lumps], dtype=np.int32),
        lump_cost=np.array([COST[c] for c, _, _ in lumps], dtype=np.int32))


def random_costs(plan, seed: int):
    """`plan` with random cost rows: spans between random nodes and days (some open, some
    ending before they start, some outside the window), random reservations per strategy and
    hall, prices constant or a SAMPLE quantity of the world, some rates 0."""
    g = random.Random(seed)
    n_s, n_h, horizon = plan.n_strategies, len(plan.hall_names), plan.horizon
    samples = [q for q in range(plan.n_quantities) if plan.q_kind[q] == Q_SAMPLE]

    def q():
        return g.choice(samples) if samples and g.random() < 0.5 else -1

    def rate():
        return 0.0 if g.random() < 0.2 else round(g.uniform(0.01, 500.0), 3)

    def end(open_ok: bool):
        pick = g.random()
        if pick < 0.5:
            return g.choice(plan.node_names)
        if open_ok and pick < 0.7:
            return math.inf
        return round(g.uniform(-0.2, 1.2) * horizon, 2)

    spans = [Span(g.choice(["cost_power_reserved", "cost_energy", "cost_old_fleet",
                            "cost_new_waiting"]), end(False), end(True),
                  tuple(rate() for _ in range(n_s)), tuple(q() for _ in range(n_s)))
             for _ in range(g.randint(1, 6))]
    reservations = {}
    for s in range(n_s):
        for h in range(n_h):
            days = sorted(g.choice([0.0, round(g.uniform(-0.1, 1.1) * horizon, 2)])
                          for _ in range(g.randint(0, 3)))
            steps = [(d, round(g.uniform(0, 2000), 1)) for d in days]
            for _ in range(g.choice([0, 0, 1, 2, 3])):   # steps after events, anywhere
                steps.insert(g.randint(min(1, len(steps)), len(steps)),
                             (round(g.uniform(0, 0.5) * horizon, 2),
                              round(g.uniform(0, 2000), 1), g.choice(plan.node_names)))
            reservations[s, h] = steps
    reserved = {h: (rate() / 30.0, q(), g.choice([0.0, round(g.uniform(0, 0.6) * horizon, 1)]))
                for h in range(n_h)}
    over = {h: (rate(), q()) for h in range(n_h)}
    lumps = [(g.choice(COSTS[1:]), rate(), q()) for _ in range(g.randint(1, 2))]
    return with_costs(plan, spans, reservations, over, (rate(), q()), (rate(), q()), lumps,
                      reserved)


def _price(plan_q: int, world) -> float:
    return float(world[plan_q]) if plan_q >= 0 else 1.0


def slow_costs(plan, s: int, node_time, world, shortfall: float):
    """(costs, scales) of one scenario and strategy: the N_COSTS columns, and per column the
    size its rounding error is relative to (cost_scales)."""
    start, horizon = plan.window_start, plan.horizon
    t = [float(x) for x in node_time]

    def when(node: int, day: float) -> float:
        return t[node] if node >= 0 else float(day)

    spans = [(when(plan.span_start_node[z], plan.span_start_day[z]),
              when(plan.span_end_node[z], plan.span_end_day[z]), z)
             for z in range(plan.span_cost.shape[0])]
    halls = range(len(plan.hall_names))
    events = {h: [(t[plan.power_event_node[p]], float(plan.power_event_delta[p]))
                  for p in range(plan.power_event_node.shape[0])
                  if plan.power_event_hall[s, p] == h] for h in halls}
    steps = {h: _step_starts(plan, s, h, t) for h in halls}
    crew_rows = [plan.crew_node[s, r] for r in range(plan.n_retrofit_rows[s])]
    crew_start = min((t[v] - math.fsum([float(world[q]) for q in plan.node_add_q[s, v] if q >= 0]
                                       + [float(plan.node_add_const[s, v])])
                      for v in crew_rows), default=math.inf)
    crew_end = max((t[v] for v in crew_rows), default=-math.inf)
    cuts = {start, horizon}
    cuts.update(x for x in t + [a for a, _, _ in spans] + [b for _, b, _ in spans]
                + [d for h in halls for d, _, _ in steps[h]] if start < x < horizon)
    cuts = sorted(cuts)
    terms = [[] for _ in range(N_COSTS)]
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        mid, width = 0.5 * (lo + hi), hi - lo
        for a, b, z in spans:
            if a <= mid < b and plan.span_rate[s, z] != 0.0:
                terms[plan.span_cost[z]].append(
                    plan.span_rate[s, z] * _price(plan.span_price_q[s, z], world) * width)
        for h in halls:
            in_force = [y for y, (day, _, _) in enumerate(steps[h]) if day <= mid]
            if in_force:
                rate = steps[h][in_force[-1]][2]
                terms[COST["cost_power_reserved"]].append(
                    rate * _price(plan.res_price_q[h], world) * width)
            if plan.over_rate[h] == 0.0:
                continue
            draw = math.fsum([plan.hall_draw0[h]] + [d for at, d in events[h] if at <= mid])
            reserved = ([kw for day, kw, _ in steps[h] if day <= mid] or [0.0])[-1]
            terms[COST["cost_power_over"]].append(
                plan.over_rate[h] * _price(plan.over_price_q[h], world)
                * max(0.0, draw - reserved) * width)
        if plan.crew_rate[s] != 0.0 and crew_start <= mid < crew_end:
            terms[COST["cost_crews"]].append(
                plan.crew_rate[s] * _price(plan.crew_price_q, world) * width)
    if plan.shortfall_rate != 0.0:
        terms[COST["cost_shortfall"]].append(
            plan.shortfall_rate * _price(plan.shortfall_price_q, world) * shortfall)
    for u in range(plan.lump_amount.shape[0]):
        terms[plan.lump_cost[u]].append(plan.lump_amount[u] * _price(plan.lump_price_q[u], world))
    costs = [math.fsum(column) for column in terms]
    costs[COST["cost_total"]] = math.fsum(costs[1:])
    return costs, cost_scales(plan, s, world)


def _step_starts(plan, s: int, h: int, t: list[float]) -> list[tuple[float, float, float]]:
    """(start, kW, rate) of strategy s's reservation steps in hall h, in the order listed,
    in the world whose node times are t, as the contract reads: a step starts on its day or
    its days after its event, but never before a step listed before it, and a step down
    never sooner than the hall's minimum term after the latest step up before it (the first
    step starts a term)."""
    out = []
    term_from = None
    for y in range(plan.res_ptr[s, h], plan.res_ptr[s, h + 1]):
        v, day, kw = plan.res_node[s, y], float(plan.res_day[s, y]), float(plan.res_kw[s, y])
        own = t[v] + day if v >= 0 else day
        floor = [start for start, _, _ in out]               # every step listed before it
        if out and kw < out[-1][1]:
            floor.append(term_from + float(plan.res_term[h]))
        start = max([own] + floor)
        if not out or kw > out[-1][1]:
            term_from = start
        out.append((start, kw, float(plan.res_rate[s, y])))
    return out


def cost_scales(plan, s: int, world) -> list[float]:
    """Per column, the size of the numbers strategy s's cost is computed from in a scenario
    (its world): rate x price x horizon for every span and the crews (times are cut at the
    horizon and subtracted), as much again x every kW a hall's draw and reservation add up for
    power over the reservation (the draw less the reservation cancels), rate x price x the
    shortfall metric's scale, a one-off's own amount; the total their sum. Rounding errors
    and the tolerance between backends are relative to these."""
    scale = [0.0] * N_COSTS
    horizon = plan.horizon
    for z in range(plan.span_cost.shape[0]):
        scale[plan.span_cost[z]] += abs(plan.span_rate[s, z]
                                        * _price(plan.span_price_q[s, z], world)) * horizon
    for h in range(len(plan.hall_names)):
        kw = abs(plan.hall_draw0[h]) + math.fsum(
            abs(plan.power_event_delta[p]) for p in range(plan.power_event_node.shape[0])
            if plan.power_event_hall[s, p] == h) + max(
            [abs(plan.res_kw[s, y]) for y in range(plan.res_ptr[s, h], plan.res_ptr[s, h + 1])],
            default=0.0)
        scale[COST["cost_power_over"]] += abs(plan.over_rate[h] * _price(
            plan.over_price_q[h], world)) * kw * horizon
        scale[COST["cost_power_reserved"]] += math.fsum(
            abs(plan.res_rate[s, y] * _price(plan.res_price_q[h], world)) * horizon
            for y in range(plan.res_ptr[s, h], plan.res_ptr[s, h + 1]))
    peak = max(plan.baseline, float(np.max(plan.demand_value)))
    scale[COST["cost_shortfall"]] += abs(plan.shortfall_rate * _price(
        plan.shortfall_price_q, world)) * horizon * peak
    scale[COST["cost_crews"]] += abs(plan.crew_rate[s] * _price(plan.crew_price_q, world)) * horizon
    for u in range(plan.lump_amount.shape[0]):
        scale[plan.lump_cost[u]] += abs(plan.lump_amount[u] * _price(plan.lump_price_q[u], world))
    scale[COST["cost_total"]] = math.fsum(scale[1:])
    return scale
