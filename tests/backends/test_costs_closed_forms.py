"""The NumPy reference's cost columns against closed forms and the slow implementation (issue 13).

The tiny migration of tests/conftest.py has fixed durations, so every node time and every cost
can be worked out by hand: the arithmetic is written out in each test (kW x days /
DAYS_PER_MONTH x price, ...). Its hall H draws 200 kW at day 0; a unit's removal frees its
100 kW and a new rack's install start draws 100 kW (the plan's power events). Plans get their
cost fields by hand (tests/slow_costs.with_costs), as mcrisk/plan/costs.py compiles them
from a [costs] section. Then the reference against tests/slow_costs.py on random scenarios.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import COST, COSTS, DAYS_PER_MONTH, HOURS_PER_DAY, METRICS, N_METRICS
from mcrisk.scenario import load_scenario

from ..conftest import TINY_DEFAULTS
from ..random_scenarios import random_scenario_text
from ..slow_costs import Span, random_costs, slow_costs, with_costs

numpy_backend = select_backend("numpy")
INF = math.inf
SHORTFALL = METRICS.index("shortfall_gpu_days")

# The example prices of docs/costs.md, as constants.
PER_KW_MONTH, OVER_PER_KW_MONTH = 150.0, 300.0
PER_KWH, PUE, LOAD = 0.08, 1.5, 0.8
RUNNING, WAITING = 1500.0, 3000.0            # per unit-day
PER_H100_EQ_HOUR, PER_CREW_DAY, MITIGATION = 2.35, 8000.0, 250_000.0
ENERGY_PER_KW_DAY = LOAD * PUE * HOURS_PER_DAY * PER_KWH
INTO_ROWS = """
[[strategies]]
name = "into-rows"
place = [{ units = "N1", row = "R1" }, { units = "N2", row = "R2" }]
drain = [{ units = "E1..E2", day = 10 }]
"""


def compiled(path):
    return compile_scenario(load_scenario(path))


def costs_of(plan, count: int = 3) -> np.ndarray:
    """costs[i, s, c] of the NumPy reference (fixed durations: every scenario alike)."""
    metrics = numpy_backend.simulate_chunk(plan, 1, 0, count)[0]
    assert metrics.shape == (count, plan.n_strategies, N_METRICS + len(COSTS))
    return metrics[:, :, N_METRICS:]


def every_cost(plan, reservations):
    """`plan` priced like a [costs] section with every component (constant prices): the
    reservation's steps, the energy spans (the hall's draw at day 0 and every power
    event, to the horizon), each old unit from day 0 to its removal, each new rack from the
    shipment's arrival to its acceptance, over the reservation, shortfall, one crew, a
    mitigation."""
    n_s = plan.n_strategies
    spans = [Span("cost_energy", 0.0, INF, (200.0 * ENERGY_PER_KW_DAY,) * n_s)]
    spans += [Span("cost_energy", node, INF, (kw * ENERGY_PER_KW_DAY,) * n_s)
              for node, kw in (("E1 removed", -100.0), ("E2 removed", -100.0),
                               ("N1 install starts", 100.0), ("N2 install starts", 100.0))]
    spans += [Span("cost_old_fleet", 0.0, f"{unit} removed", (RUNNING,) * n_s)
              for unit in ("E1", "E2")]
    spans += [Span("cost_new_waiting", "shipment S1 arrives", f"{unit} accepted", (WAITING,) * n_s)
              for unit in ("N1", "N2")]
    return with_costs(plan, spans, {(s, 0): reservations for s in range(n_s)},
                      over={0: (OVER_PER_KW_MONTH / DAYS_PER_MONTH, -1)},
                      shortfall=(HOURS_PER_DAY * PER_H100_EQ_HOUR, -1),
                      crews=(1 * PER_CREW_DAY, -1),
                      lumps=[("cost_mitigation", MITIGATION, -1)],
                      reserved={0: (PER_KW_MONTH / DAYS_PER_MONTH, -1, 0.0)})


def by_hand(mitigation: float = MITIGATION) -> dict:
    """Every cost of the tiny migration's two strategies, worked out by hand.

    swap-on-day: E1, E2 drain on day 10 and are removed on day 15 (2 + 3 days); N1, N2 arrive
    on day 20, install 20-22, burn in 22-27, accepted on day 27; the crew retrofits R3 from day
    0 to 10. swap-gated: the same racks, the drains wait for acceptance: 27, removed on day 32.
    Horizon 100 days. Reserved: 150 kW from day 0, 50 kW from day 12."""
    reserved = (150 * 12 + 50 * (100 - 12)) / DAYS_PER_MONTH * PER_KW_MONTH
    # draw, swap-on-day: 200 kW on [0, 15), 0 on [15, 20), 200 on [20, 100)
    #   over 150 then 50 reserved: 50 x 12 + 150 x 3 + 0 x 5 + 150 x 80
    # draw, swap-gated: 200 kW on [0, 20), 400 on [20, 32), 200 on [32, 100)
    #   over: 50 x 12 + 150 x 8 + 350 x 12 + 150 x 68
    costs = {
        "swap-on-day": dict(
            cost_power_reserved=reserved,
            cost_power_over=(50 * 12 + 150 * 3 + 0 * 5 + 150 * 80)
            / DAYS_PER_MONTH * OVER_PER_KW_MONTH,
            cost_energy=(200 * 15 + 0 * 5 + 200 * 80) * LOAD * PUE * 24 * PER_KWH,
            cost_old_fleet=2 * 15 * RUNNING,
            cost_new_waiting=2 * (27 - 20) * WAITING,
            # capacity 0 from the drains (day 10) to the acceptances (day 27), demand 256
            cost_shortfall=256 * (27 - 10) * 24 * PER_H100_EQ_HOUR,
            cost_crews=1 * PER_CREW_DAY * (10 - 0),
            cost_mitigation=mitigation),
        "swap-gated": dict(
            cost_power_reserved=reserved,
            cost_power_over=(50 * 12 + 150 * 8 + 350 * 12 + 150 * 68)
            / DAYS_PER_MONTH * OVER_PER_KW_MONTH,
            cost_energy=(200 * 20 + 400 * 12 + 200 * 68) * LOAD * PUE * 24 * PER_KWH,
            cost_old_fleet=2 * 32 * RUNNING,
            cost_new_waiting=2 * (27 - 20) * WAITING,
            cost_shortfall=0.0,
            cost_crews=1 * PER_CREW_DAY * (10 - 0),
            cost_mitigation=mitigation)}
    for want in costs.values():
        want["cost_total"] = math.fsum(want.values())
    return costs


def assert_by_hand(plan, costs, expected) -> None:
    for s, name in enumerate(plan.strategy_names):
        for column, value in expected[name].items():
            assert costs[:, s, COST[column]] == pytest.approx(value, rel=1e-12, abs=1e-9), \
                f"{name}: {column}"


def test_every_component_by_hand(tiny):
    plan = every_cost(compiled(tiny()), [(0.0, 150.0), (12.0, 50.0)])
    assert_by_hand(plan, costs_of(plan), by_hand())


# The same prices as a [costs] section (docs/costs.md), for the tiny migration's unit types.
COSTS_SECTION = f"""
[costs]
currency = "USD"

[[costs.power]]
hall = "H"
reservations = [{{ day = 0, kw = 150 }}, {{ day = 12, kw = 50 }}]
price_per_kw_month = {PER_KW_MONTH}
over_per_kw_month = {OVER_PER_KW_MONTH}
energy_per_kwh = {PER_KWH}
pue = {PUE}
load_factor = {LOAD}

[costs.running]
old = {RUNNING}

[costs.waiting]
new = {WAITING}

[costs.shortfall]
per_h100_eq_hour = {PER_H100_EQ_HOUR}

[costs.crews]
per_crew_day = {PER_CREW_DAY}
"""


def test_every_component_by_hand_from_a_costs_section(tiny):
    # the scenario's [costs] read and compiled (mcrisk/plan/costs.py), then the reference
    scenario = tiny(strategies=TINY_DEFAULTS["strategies"] + COSTS_SECTION)
    plan = compiled(scenario)
    assert plan.n_costs == len(COSTS)
    assert_by_hand(plan, costs_of(plan), by_hand(mitigation=0.0))


@pytest.mark.parametrize("reservations, area", [
    ([], 200 * 15 + 200 * 80),                          # nothing reserved: all the draw
    ([(0.0, 1000.0)], 0.0),                             # never above
    # from day -5 (in force at 0): 100 kW, 300 from day 50 (inside [20, 100)), 0 from day 150
    # (after the horizon: never in force): 100 x 15 + 0 x 5 + 100 x 30 + 0 x 50
    ([(-5.0, 100.0), (50.0, 300.0), (150.0, 0.0)], 100 * 15 + 100 * 30),
    # a step at the instant the draw falls (day 15): 250 then 120 kW: 0 + 80 x 80
    ([(0.0, 250.0), (15.0, 120.0)], 80 * 80),
])
def test_power_over_the_reservation(tiny, reservations, area):
    # swap-on-day draws 200 kW on [0, 15), 0 on [15, 20), 200 on [20, 100)
    plan = with_costs(compiled(tiny()), reservations={(0, 0): reservations},
                      over={0: (OVER_PER_KW_MONTH / DAYS_PER_MONTH, -1)})
    costs = costs_of(plan)[:, 0]
    assert costs[:, COST["cost_power_over"]] == pytest.approx(
        area / DAYS_PER_MONTH * OVER_PER_KW_MONTH, rel=1e-12, abs=1e-9)
    assert (costs[:, COST["cost_total"]] == costs[:, COST["cost_power_over"]]).all()


@pytest.mark.parametrize("crews, days", [
    # one crew: R1 and R2 free on day 15 (removals); R1 15-25, then R2 25-35
    (1, 35 - 15),
    # two crews: both rows 15-25
    (2, 25 - 15)])
def test_crews_spanning_two_rows(tiny, crews, days):
    plan = with_costs(compiled(tiny(strategies=INTO_ROWS, crews=crews)),
                      crews=(crews * PER_CREW_DAY, -1))
    costs = costs_of(plan)[:, 0]
    assert costs[:, COST["cost_crews"]] == pytest.approx(crews * PER_CREW_DAY * days, rel=1e-12)


@pytest.mark.parametrize("start, end, days", [
    ("E1 removed", "N1 accepted", 27 - 15),
    ("N1 accepted", "shipment S1 arrives", 0.0),      # its end precedes its start
    (-10.0, 5.0, 5.0),                                # starts before the window
    (95.0, INF, 100 - 95),                            # open: cut at the horizon
    (120.0, INF, 0.0),                                # after the window
    ("N1 accepted", 300.0, 100 - 27),                 # cut at the horizon
    (40.0, 40.0, 0.0)])
def test_span_in_the_window(tiny, start, end, days):
    # swap-on-day: E1 removed on day 15, N1 accepted on day 27, S1 arrives on day 20
    plan = with_costs(compiled(tiny()), [Span("cost_old_fleet", start, end, (RUNNING, 0.0))])
    costs = costs_of(plan)
    assert costs[:, 0, COST["cost_old_fleet"]] == pytest.approx(days * RUNNING, rel=1e-12)
    assert (costs[:, 1] == 0.0).all()                 # rate 0 in the other strategy


def test_a_strategy_that_completes_after_the_horizon_is_cut_there(tiny):
    # S1 arrives on day 90: N1, N2 accepted on day 97; swap-gated drains then and removes
    # E1, E2 on day 102, after the 100-day horizon: each old unit runs 100 days in the window
    plan = every_cost(compiled(tiny(arrival=90)), [(0.0, 0.0)])
    costs = costs_of(plan)
    gated = plan.strategy_names.index("swap-gated")
    assert costs[:, gated, COST["cost_old_fleet"]] == pytest.approx(2 * 100 * RUNNING, rel=1e-12)
    assert costs[:, gated, COST["cost_new_waiting"]] == pytest.approx(2 * 7 * WAITING, rel=1e-12)
    # draw: 200 kW on [0, 90), 400 on [90, 100); nothing reserved
    assert costs[:, gated, COST["cost_power_over"]] == pytest.approx(
        (200 * 90 + 400 * 10) / DAYS_PER_MONTH * OVER_PER_KW_MONTH, rel=1e-12)


def test_strategies_that_differ_only_by_a_reservation(tiny):
    # two copies of swap-gated; the second also reserves 300 kW more from day 40 (the draw,
    # at most 400 kW, stays under 500 kW from day 40, and above 200 before it, in both)
    twins = "\n".join(f"""
[[strategies]]
name = "{name}"
place = [{{ units = "N1..N2", row = "R3" }}]
drain = [{{ units = "E1", on_accepted = "N1" }}, {{ units = "E2", on_accepted = "N2" }}]
""" for name in ("base", "more-reserved"))
    plan = compiled(tiny(strategies=twins))
    base, more = [(0.0, 200.0)], [(0.0, 200.0), (40.0, 500.0)]
    rate = PER_KW_MONTH / DAYS_PER_MONTH
    spans = [Span("cost_power_reserved", 0.0, INF, (200 * rate, 200 * rate)),
             Span("cost_power_reserved", 40.0, INF, (0.0, 300 * rate))]
    plan = with_costs(plan, spans, {(0, 0): base, (1, 0): more},
                      over={0: (OVER_PER_KW_MONTH / DAYS_PER_MONTH, -1)})
    costs = costs_of(plan)
    difference = costs[:, 1] - costs[:, 0]
    assert difference[:, COST["cost_power_reserved"]] == pytest.approx(
        300 * (100 - 40) / DAYS_PER_MONTH * PER_KW_MONTH, rel=1e-12)
    others = [COST[c] for c in COSTS if c not in ("cost_total", "cost_power_reserved")]
    np.testing.assert_array_equal(costs[:, 1, others], costs[:, 0, others])
    # the draw is 400 kW on [20, 32) in both: 200 over 200 reserved before day 40
    assert costs[:, 0, COST["cost_power_over"]] == pytest.approx(
        200 * 12 / DAYS_PER_MONTH * OVER_PER_KW_MONTH, rel=1e-12)


def test_a_price_from_the_world(tiny):
    # the shortfall priced by a world quantity: unit.E1.removal, 3 days in every scenario
    plan = compiled(tiny())
    q = plan.quantity_names.index("unit.E1.removal")
    metrics = numpy_backend.simulate_chunk(with_costs(plan, shortfall=(24.0, q)), 1, 0, 2)[0]
    assert metrics[:, 0, N_METRICS + COST["cost_shortfall"]] == pytest.approx(
        24.0 * 3.0 * 256 * (27 - 10), rel=1e-12)


def doubled(plan, column: int):
    """`plan` with every constant price that feeds cost column `column` doubled."""
    feeds = plan.span_cost == column
    return dataclasses.replace(
        plan, span_rate=np.where(feeds[None, :], 2.0 * plan.span_rate, plan.span_rate),
        over_rate=2.0 * plan.over_rate if column == COST["cost_power_over"] else plan.over_rate,
        res_rate=2.0 * plan.res_rate if column == COST["cost_power_reserved"] else plan.res_rate,
        shortfall_rate=plan.shortfall_rate * (2.0 if column == COST["cost_shortfall"] else 1.0),
        crew_rate=plan.crew_rate * (2.0 if column == COST["cost_crews"] else 1.0),
        lump_amount=np.where(plan.lump_cost == column, 2.0 * plan.lump_amount,
                             plan.lump_amount))


@pytest.mark.parametrize("case", ["tiny", 1, 4])
def test_linear_in_each_price(tiny, tmp_path, case):
    # doubling a price is exact in binary floating point, so the column doubles to the bit
    if case == "tiny":
        plan = every_cost(compiled(tiny()), [(0.0, 150.0), (12.0, 50.0)])
    else:
        path = tmp_path / "random.toml"
        path.write_text(random_scenario_text(case))
        plan = random_costs(compiled(path), case)
    costs = numpy_backend.simulate_chunk(plan, 5, 0, 40)[0][:, :, N_METRICS:]
    if case == "tiny":       # every component costs something in swap-on-day
        assert (costs[:, 0] != 0.0).all()
    for column in range(1, len(COSTS)):
        again = numpy_backend.simulate_chunk(doubled(plan, column), 5, 0, 40)[0]
        again = again[:, :, N_METRICS:]
        np.testing.assert_array_equal(again[:, :, column], 2.0 * costs[:, :, column],
                                      err_msg=COSTS[column])
        others = [k for k in range(1, len(COSTS)) if k != column]
        np.testing.assert_array_equal(again[:, :, others], costs[:, :, others],
                                      err_msg=COSTS[column])


def test_total_is_the_sum_and_the_metrics_do_not_change(tiny):
    plan = compiled(tiny())
    without = numpy_backend.simulate_chunk(plan, 1, 0, 3)[0]
    assert without.shape == (3, 2, N_METRICS)                  # no [costs]: no cost columns
    priced = every_cost(plan, [(0.0, 150.0), (12.0, 50.0)])
    metrics = numpy_backend.simulate_chunk(priced, 1, 0, 3)[0]
    np.testing.assert_array_equal(metrics[:, :, :N_METRICS], without)
    costs = metrics[:, :, N_METRICS:]
    total = np.vectorize(lambda i, s: math.fsum(costs[i, s, 1:]))(*np.indices(costs.shape[:2]))
    np.testing.assert_allclose(costs[:, :, COST["cost_total"]], total, rtol=1e-15)


@pytest.mark.parametrize("case", range(8))
def test_reference_against_the_slow_implementation(tmp_path, case):
    path = tmp_path / "random.toml"
    path.write_text(random_scenario_text(case))
    plan = random_costs(compiled(path), case)
    metrics, world, nodes = numpy_backend.simulate_chunk(plan, case, 100, 30, keep_nodes=True)
    for i in range(metrics.shape[0]):
        for s in range(plan.n_strategies):
            expected, scale = slow_costs(plan, s, nodes[i, s], world[i], metrics[i, s, SHORTFALL])
            got = metrics[i, s, N_METRICS:]
            off = np.abs(got - expected) > 1e-12 * np.maximum(scale, np.abs(expected))
            assert not off.any(), (f"scenario {i}, strategy {s}: "
                                   f"{[COSTS[k] for k in np.flatnonzero(off)]}: got {got[off]}, "
                                   f"slow {np.asarray(expected)[off]}")
