"""The cost arrays of the compiled plan (plan.record's `costs` group) from a scenario's [costs].

Every cost the kernels compute is one of these shapes, each a price times an amount over the
window [0, horizon] (clip(t) = min(max(t, 0), horizon)):

* a **span**: rate x price x max(0, clip(end) - clip(start)), where start and end are a node's
  time or a fixed day: metered energy (a hall's draw at day 0 to the horizon, and each power
  event's kW from its node to the horizon), the old fleet's running cost (day 0 to the
  unit's removal), new units waiting (the shipment's arrival to the unit's acceptance);
* **reserved power**: per hall, each of the strategy's reservation steps, rate x price x
  max(0, clip(its end) - clip(its start)), a step ending where the next one starts; a step
  starts on its day or (res_node >= 0) res_day days after its event's node, no sooner than
  the step listed before it, and a step down no sooner than res_term (the hall's
  minimum_term_days) after the latest step up before it: each world's own order and terms
  (docs/costs.md, Reservations on an event). A plan of steps on days only, which validation
  has put in order and within the terms, has its steps on their days;
* **power over the reservation**: per hall, the integral of max(0, draw(t) - reserved(t)),
  the draw from the power events and the reservation from the strategy's steps (started as
  for reserved power);
* **shortfall**: the shortfall metric (H100-eq x days) x its price;
* **crews**: the days from the first retrofit's start to the last one's end x the rate of
  all the strategy's crews together (its own crew count, so crew_rate is per strategy);
* **one-offs**: an amount x price (a mitigation in effect).

Spans are listed energy first (each hall's draw at day 0, then each power event), then the
old fleet (unit by unit) and new units waiting (unit by unit); a span no strategy pays for
is left out. A price given as a distribution is a world quantity (mcrisk/plan/world.py:
`cost.<subject>.<part>`) and the rate is the amount at a price of 1; a certain price is
multiplied into the rate. Every rate is computed as docs/costs.md writes it, left to right.

Without a [costs] section the plan says n_costs = 0 and every array is a placeholder the
kernels never read.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.definitions import COST, COST_MITIGATION, DAYS_PER_MONTH, HOURS_PER_DAY, N_COSTS
from ..core.model import Distribution, Scenario
from .world import mitigations_in_effect


def no_cost_arrays(n_strategies: int, n_halls: int) -> dict:
    """The plan's cost fields for a scenario without [costs]: n_costs 0 and placeholders."""
    return dict(
        n_costs=0,
        span_start_node=np.full(1, -1, dtype=np.int32),
        span_start_day=np.zeros(1),
        span_end_node=np.full(1, -1, dtype=np.int32),
        span_end_day=np.zeros(1),
        span_rate=np.zeros((n_strategies, 1)),
        span_price_q=np.full((n_strategies, 1), -1, dtype=np.int32),
        span_cost=np.zeros(1, dtype=np.int32),
        res_ptr=np.zeros((n_strategies, n_halls + 1), dtype=np.int32),
        res_day=np.zeros((n_strategies, 1)),
        res_kw=np.zeros((n_strategies, 1)),
        res_node=np.full((n_strategies, 1), -1, dtype=np.int32),
        res_rate=np.zeros((n_strategies, 1)),
        res_price_q=np.full(n_halls, -1, dtype=np.int32),
        res_term=np.zeros(n_halls),
        over_rate=np.zeros(n_halls),
        over_price_q=np.full(n_halls, -1, dtype=np.int32),
        shortfall_rate=0.0,
        shortfall_price_q=-1,
        crew_rate=np.zeros(n_strategies),
        crew_price_q=-1,
        lump_amount=np.zeros(1),
        lump_price_q=np.full(1, -1, dtype=np.int32),
        lump_cost=np.zeros(1, dtype=np.int32),
    )


class _Spans:
    """The cost spans of a plan: one per key, each with its rate and price per strategy."""

    def __init__(self, n_strategies: int):
        self.n_strategies = n_strategies
        self.index: dict[tuple, int] = {}
        self.ends: list[tuple[int, float, int, float]] = []   # start node, day, end node, day
        self.cost: list[int] = []
        self.rate: list[list[float]] = []
        self.price_q: list[list[int]] = []

    def add(self, key: tuple, start: tuple[int, float], end: tuple[int, float], cost: str,
            s: int, rate: float, q: int) -> None:
        """Strategy s pays `rate` (x world[q] if q >= 0) per day of the span `key`, from
        `start` to `end` (each (node, 0.0) or (-1, day)); a rate of 0 adds nothing."""
        if rate == 0.0:
            return
        if key not in self.index:
            self.index[key] = len(self.cost)
            self.ends.append((*start, *end))
            self.cost.append(COST[cost])
            self.rate.append([0.0] * self.n_strategies)
            self.price_q.append([-1] * self.n_strategies)
        z = self.index[key]
        self.rate[z][s] = rate
        self.price_q[z][s] = q

    def arrays(self) -> dict:
        if not self.cost:
            return {}
        start_node, start_day, end_node, end_day = zip(*self.ends)
        return dict(
            span_start_node=np.array(start_node, dtype=np.int32),
            span_start_day=np.array(start_day, dtype=np.float64),
            span_end_node=np.array(end_node, dtype=np.int32),
            span_end_day=np.array(end_day, dtype=np.float64),
            span_rate=np.ascontiguousarray(np.array(self.rate, dtype=np.float64).T),
            span_price_q=np.ascontiguousarray(np.array(self.price_q, dtype=np.int32).T),
            span_cost=np.array(self.cost, dtype=np.int32))


def _price(prices: dict[tuple[str, str], int], subject: str, part: str,
           dist: Distribution) -> tuple[float, int]:
    """(factor, q): a price given as a distribution is world[q] times 1.0; a certain one is
    its value with q = -1."""
    q = prices.get((subject, part), -1)
    return (1.0, q) if q >= 0 else (float(dist.params[0]), -1)


def cost_arrays(scenario: Scenario, node: dict, power_node: list[int],
                power_delta: list[float], power_hall: list[list[int]],
                hall_draw0: np.ndarray, prices: dict[tuple[str, str], int],
                n_crews: list[int]) -> dict:
    """The plan's cost fields for a scenario with [costs] (docs/costs.md, "Compile").

    `node`: compile's node ids by key; power events as compile lists them (the hall of each
    event per strategy); `prices`: the world quantity of each price given as a distribution,
    by (subject, part) (mcrisk/plan/world.py); `n_crews`: each strategy's retrofit crews."""
    costs = scenario.costs
    strategies = scenario.strategies
    halls = [hall.id for hall in scenario.halls]
    fields = no_cost_arrays(len(strategies), len(halls))
    fields["n_costs"] = N_COSTS
    spans = _Spans(len(strategies))
    steps = [[_steps_of(scenario, strategy, hall) for hall in halls] for strategy in strategies]
    _energy_spans(spans, scenario, power_node, power_delta, power_hall, hall_draw0, prices)
    _unit_spans(spans, scenario, node, prices)
    fields.update(spans.arrays())
    fields.update(_reservation_steps(steps, len(halls), node))
    for h, hall in enumerate(halls):
        contract = costs.power_of(hall)
        if contract is not None:
            factor, fields["res_price_q"][h] = _price(prices, hall, "price_per_kw_month",
                                                      contract.price_per_kw_month)
            fields["res_term"][h] = contract.minimum_term_days
            for s, ptr in enumerate(fields["res_ptr"]):
                for y in range(ptr[h], ptr[h + 1]):      # kW x price per kW-day, as written
                    fields["res_rate"][s, y] = fields["res_kw"][s, y] / DAYS_PER_MONTH * factor
            factor, q = _price(prices, hall, "over_per_kw_month", contract.over_per_kw_month)
            fields["over_rate"][h] = factor / DAYS_PER_MONTH
            fields["over_price_q"][h] = q
    factor, fields["shortfall_price_q"] = _price(prices, "shortfall", "per_h100_eq_hour",
                                                 costs.shortfall_per_h100_eq_hour)
    fields["shortfall_rate"] = HOURS_PER_DAY * factor
    factor, fields["crew_price_q"] = _price(prices, "crews", "per_crew_day", costs.crew_per_day)
    fields["crew_rate"] = np.array([float(crews) * factor for crews in n_crews])
    fields.update(_lumps(scenario, prices))
    return fields


def _steps_of(scenario: Scenario, strategy, hall: str) -> tuple:
    """A strategy's reservation steps in a hall: its own, else the hall's contract's; () for
    a hall without a contract."""
    contract = scenario.costs.power_of(hall)
    if contract is None:
        return ()
    return strategy.reservation_of(hall) or contract.reservations


def _energy_spans(spans: _Spans, scenario: Scenario, power_node: list[int],
                  power_delta: list[float], power_hall: list[list[int]],
                  hall_draw0: np.ndarray, prices: dict) -> None:
    """Metered energy: each hall's draw at day 0 to the horizon, then each power event's kW
    from its node on, at kW x load_factor x pue x HOURS_PER_DAY x the price per kWh of the
    hall the event is in for that strategy (0 where the hall has no energy price)."""
    per_kw = []                    # (kW-day factor without the kW, q) of each hall
    for hall in scenario.halls:
        contract = scenario.costs.power_of(hall.id)
        if contract is None:
            per_kw.append(None)
            continue
        factor, q = _price(prices, hall.id, "energy_per_kwh", contract.energy_per_kwh)
        per_kw.append((contract, factor, q))
    for h, priced in enumerate(per_kw):
        if priced is not None:
            contract, factor, q = priced
            for s in range(spans.n_strategies):
                spans.add(("energy at day 0", h), (-1, 0.0), (-1, math.inf), "cost_energy", s,
                          _energy_rate(hall_draw0[h], contract, factor), q)
    for p, (v, delta) in enumerate(zip(power_node, power_delta)):
        for s, hall_of_event in enumerate(power_hall):
            priced = per_kw[hall_of_event[p]]
            if priced is not None:
                contract, factor, q = priced
                spans.add(("energy", p), (v, 0.0), (-1, math.inf), "cost_energy", s,
                          _energy_rate(delta, contract, factor), q)


def _energy_rate(kw: float, contract, factor: float) -> float:
    """kW x load_factor x pue x HOURS_PER_DAY x price per kWh, left to right."""
    return float(kw) * contract.load_factor * contract.pue * HOURS_PER_DAY * factor


def _unit_spans(spans: _Spans, scenario: Scenario, node: dict, prices: dict) -> None:
    """The old fleet (day 0 to each existing unit's removal) and new units waiting (each
    incoming unit's shipment's arrival to its acceptance), at the price of its type."""
    running = dict(scenario.costs.running)
    waiting = dict(scenario.costs.waiting)
    shipment_of = {u: ship.id for ship in scenario.shipments for u in ship.units}
    for unit in scenario.existing:
        if unit.type in running:
            factor, q = _price(prices, unit.type, "running", running[unit.type])
            for s in range(spans.n_strategies):
                spans.add(("old fleet", unit.id), (-1, 0.0), (node[("removed", unit.id)], 0.0),
                          "cost_old_fleet", s, factor, q)
    for unit in scenario.incoming:
        if unit.type in waiting:
            factor, q = _price(prices, unit.type, "waiting", waiting[unit.type])
            arrival = node[("arrival", shipment_of[unit.id])]
            for s in range(spans.n_strategies):
                spans.add(("waiting", unit.id), (arrival, 0.0), (node[("accepted", unit.id)],
                                                                  0.0),
                          "cost_new_waiting", s, factor, q)


def _reservation_steps(steps: list[list[tuple]], n_halls: int, node: dict) -> dict:
    """res_ptr[s, h + 1], res_day[s, y], res_kw[s, y], res_node[s, y]: each strategy's steps
    hall by hall; a step after an event has its node and its notice_days as res_day."""
    width = max(1, max(sum(len(hall_steps) for hall_steps in by_hall) for by_hall in steps))
    ptr = np.zeros((len(steps), n_halls + 1), dtype=np.int32)
    day = np.zeros((len(steps), width))
    kw = np.zeros((len(steps), width))
    event = np.full((len(steps), width), -1, dtype=np.int32)
    for s, by_hall in enumerate(steps):
        flat = [step for hall_steps in by_hall for step in hall_steps]
        day[s, :len(flat)] = [step.day for step in flat]
        kw[s, :len(flat)] = [step.kw for step in flat]
        event[s, :len(flat)] = [-1 if step.after is None
                                else node[tuple(step.after.split(":", 1))] for step in flat]
        ptr[s, 1:] = np.cumsum([len(hall_steps) for hall_steps in by_hall])
    return dict(res_ptr=ptr, res_day=day, res_kw=kw, res_node=event, res_rate=np.zeros_like(kw))


def _lumps(scenario: Scenario, prices: dict) -> dict:
    """One-offs: the cost of each mitigation in effect (cost_mitigation)."""
    lumps = [_price(prices, risk.id, "mitigation", risk.mitigation_cost)
             for risk in mitigations_in_effect(scenario)]
    if not lumps:
        return {}
    return dict(lump_amount=np.array([amount for amount, _ in lumps], dtype=np.float64),
                lump_price_q=np.array([q for _, q in lumps], dtype=np.int32),
                lump_cost=np.full(len(lumps), COST_MITIGATION, dtype=np.int32))
