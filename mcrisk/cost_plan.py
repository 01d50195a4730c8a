"""The cost arrays of the compiled plan (plan.py's `costs` group) from a scenario's [costs].

Every cost the kernels compute is one of four shapes, each a price times an amount over the
window [0, horizon] (clip(t) = min(max(t, 0), horizon)):

* a **span**: rate x price x max(0, clip(end) - clip(start)), where start and end are a node's
  time or a fixed day: reserved power (a reservation step's kW from its day to the next
  step's), metered energy (a hall's draw at day 0 to the horizon, and each power event's kW
  from its node to the horizon), the old fleet's running cost (day 0 to the unit's removal),
  new units waiting (the shipment's arrival to the unit's acceptance);
* **power over the reservation**: per hall, the integral of max(0, draw(t) - reserved(t)),
  the draw from the power events and the reservation from the strategy's steps;
* **shortfall**: the shortfall metric (H100-eq x days) x its price;
* **crews**: the days from the first retrofit's start to the last one's end x the rate of
  all crews together;
* **one-offs**: an amount x price (a mitigation in effect).

Without a [costs] section the plan says n_costs = 0 and every array is a placeholder the
kernels never read.
"""
from __future__ import annotations

import numpy as np


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
        over_rate=np.zeros(n_halls),
        over_price_q=np.full(n_halls, -1, dtype=np.int32),
        shortfall_rate=0.0,
        shortfall_price_q=-1,
        crew_rate=0.0,
        crew_price_q=-1,
        lump_amount=np.zeros(1),
        lump_price_q=np.full(1, -1, dtype=np.int32),
        lump_cost=np.zeros(1, dtype=np.int32),
    )
