"""`mcrisk optimize` finds a known optimum, and finds it the same way every time (issue 14).

The known optimum: tests/data/optimize-known.toml searched by tests/data/optimize-known-search.toml.
Two old units (8 H100-eq each, drain 1 day, removal 2 days) stand in row A1; two new units
(8 H100-eq each) arrive on day 20 and are accepted when installed, 4 to 6 days after their
install starts (uniform, drawn per unit). The baseline B is 16 H100-eq. Each old unit costs
r per day until its removal ends (r uniform 90..110, one draw per scenario, the same for
every plan); a retrofit costs its 5 days x 1 crew x 1,000 = 5,000.

The knobs: the old units drain at T + lag, T one of the shipment's arrival (day 20) or day 0,
lag one of 0, 7, 14, 21, 28; the new units go to row B1 (liquid, ready at day 0), A2 (air,
retrofitted days 0-5) or A1 (the old units' row: free only after they are removed, then
retrofitted). 2 x 5 x 3 = 30 combinations, plus the template late-drain (day 40, B1).

Trough (constraint: P90 trough depth <= 0): the racks are accepted in [24, 26] in B1 and A2,
so a drain that starts before day 24 drops all 16 H100-eq until they are, in every
scenario, and one after day 26 never does. Arrival + 0 (day 20) and day 0 + 0..21 have a
trough of 16; arrival + 7, 14, 21, 28 (days 27..48) and day 0 + 28 have none. Row A1 always
has one: its racks wait for the drain, so the drain comes first.

Cost (objective: mean total cost) of the plans without a trough: the two old units run until
drain + 3, so the cost is 2 r (drain + 3), plus 5,000 in row A2:
    arrival + 7, B1:  2 r x 30 = 60 r      <- the optimum
    day 0 + 28, B1:   2 r x 31 = 62 r
    arrival + 14, B1: 74 r;  late-drain (day 40): 86 r;  + 21: 88 r;  + 28: 102 r
    every one of them in A2: the same + 5,000
The runner-up costs 2 r >= 180 more in every scenario, so no sample can swap them. The
smaller lag (arrival + 0) and every earlier day are cheaper, but each has the trough.
"""
from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.compile import compile_scenario
from mcrisk.definitions import COST, METRICS
from mcrisk.model import Strategy, Trigger
from mcrisk.scenario import load_scenario
from mcrisk.simulate import simulate

DATA = Path(__file__).parent / "data"
KNOWN = DATA / "optimize-known.toml"
KNOWN_SEARCH = DATA / "optimize-known-search.toml"

TRIGGERS = {"on_arrival:S1": Trigger(on_arrival=("S1",)), "day:0": Trigger(day=0.0)}
LAGS = (0.0, 7.0, 14.0, 21.0, 28.0)
ROWS = ("B1", "A2", "A1")
OPTIMUM = ("on_arrival:S1", 7.0, "B1")
TROUGH = METRICS.index("trough_depth")


def known_plan(trigger: str, lag: float, row: str) -> Strategy:
    """The candidate of the known space with these knob values, built by hand."""
    drain = dataclasses.replace(TRIGGERS[trigger], lag_days=lag)
    return Strategy(f"{trigger}+{lag:g}-{row}", (("N1", row), ("N2", row)),
                    (("E1", drain), ("E2", drain)))


def drain_day(trigger: str, lag: float) -> float:
    return (20.0 if trigger == "on_arrival:S1" else 0.0) + lag


def test_brute_force_over_the_known_space_agrees_with_the_docstring():
    """Every one of the 30 combinations simulated directly (no mcrisk.optimize): the troughs
    and costs are the docstring's, and the cheapest plan without a trough is OPTIMUM."""
    scenario = load_scenario(KNOWN)
    combos = list(itertools.product(TRIGGERS, LAGS, ROWS))
    strategies = tuple(known_plan(*combo) for combo in combos)
    plan = compile_scenario(dataclasses.replace(scenario, strategies=strategies))
    result = simulate(plan, 200, 5, select_backend("numpy"))
    running = result.costs[:, :, COST["cost_old_fleet"]]
    r = running[:, 0] / (2 * (drain_day(*combos[0][:2]) + 3))    # the scenario's daily price
    assert np.all((r >= 90) & (r <= 110)) and np.ptp(r) > 0
    feasible = {}
    for i, (trigger, lag, row) in enumerate(combos):
        trough = result.metrics[:, i, TROUGH]
        day = drain_day(trigger, lag)
        expected_trough = 16.0 if (row == "A1" or day < 24) else 0.0
        np.testing.assert_array_equal(trough, expected_trough, err_msg=str(combos[i]))
        np.testing.assert_allclose(running[:, i], 2 * r * (day + 3), rtol=1e-12)
        crews = result.costs[:, i, COST["cost_crews"]]
        np.testing.assert_array_equal(crews, 0.0 if row == "B1" else 5000.0)
        if expected_trough == 0.0:
            feasible[combos[i]] = result.costs[:, i, COST["cost_total"]].mean()
    assert len(feasible) == 10
    best, runner_up = sorted(feasible, key=feasible.get)[:2]
    assert best == OPTIMUM and runner_up == ("day:0", 28.0, "B1")
