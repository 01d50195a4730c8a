"""Power reservation steps on an event (issue 28 §4; docs/costs.md, Reservations on an event):
a step `after = "arrival:S1"` starts `notice_days` after that world's arrival, no sooner than
the step listed before it, and a step down no sooner than the hall's minimum term after the
step up before it.

Checked per world against closed forms that read the arrival from the node times the backend
kept (keep_nodes=True), against the slow obvious implementation (tests/slow_costs.py: the
window cut at every step's start, the step in force at each piece's middle), and across the
backends bit for bit (uniform delays: no lognormal or PERT draw).
"""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.core.definitions import COST, DAYS_PER_MONTH, METRICS, N_METRICS
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..conftest import TINY_DEFAULTS
from ..parity import assert_parity, tolerance
from ..slow_costs import slow_costs

numpy_backend = select_backend("numpy")
PRICE, OVER = 150.0, 300.0
HORIZON = 100.0
DELAY = '{ dist = "uniform", min = 0, max = 60 }'     # S1 arrives on day 20 + U(0, 60)
SHORTFALL = METRICS.index("shortfall_gpu_days")


def priced(hall_steps: str, own_steps: str = "", term: float = 0.0) -> str:
    """The tiny migration's strategies (the second with `own_steps` as its own reservations)
    and a [costs] section pricing hall H's reservation `hall_steps`."""
    strategies = TINY_DEFAULTS["strategies"]
    if own_steps:
        strategies = strategies.replace('name = "swap-gated"',
                                        f'name = "swap-gated"\nreservations = {own_steps}')
    return strategies + f"""
[costs]
[[costs.power]]
hall = "H"
reservations = {hall_steps}
price_per_kw_month = {PRICE}
over_per_kw_month = {OVER}
notice_days = 5
minimum_term_days = {term}
"""


def run(tiny, text: str, count: int = 200, seed: int = 3):
    plan = compile_scenario(load_scenario(tiny(strategies=text, delay=DELAY)))
    metrics, world, nodes = numpy_backend.simulate_chunk(plan, seed, 0, count, keep_nodes=True)
    arrival = nodes[:, 0, plan.node_names.index("shipment S1 arrives")]
    assert np.ptp(arrival) > 30.0                      # the event's time differs by world
    return plan, metrics, world, nodes, arrival


def reserved_by_hand(pieces) -> np.ndarray:
    """kW x days in [0, HORIZON] of (kW, start, end) pieces, x the price per kW-day."""
    days = sum(kw * (np.minimum(end, HORIZON) - np.minimum(start, HORIZON))
               for kw, start, end in pieces)
    return days / DAYS_PER_MONTH * PRICE


def test_a_step_after_the_arrival_starts_at_each_worlds_arrival(tiny):
    # swap-on-day: the hall's steps, 150 kW from 5 days after S1 arrives; swap-gated its own,
    # 150 kW from day 25 (S1's planned day + the notice)
    _, metrics, _, _, arrival = run(tiny, priced(
        '[{ day = 0, kw = 0 }, { after = "arrival:S1", notice_days = 5, kw = 150 }]',
        '[{ hall = "H", day = 0, kw = 0 }, { hall = "H", day = 25, kw = 150 }]'))
    reserved = metrics[:, :, N_METRICS + COST["cost_power_reserved"]]
    np.testing.assert_allclose(reserved[:, 0], reserved_by_hand([(150, arrival + 5, np.inf)]),
                               rtol=1e-13)
    np.testing.assert_allclose(reserved[:, 1], reserved_by_hand([(150, 25.0, np.inf)]),
                               rtol=1e-13)
    # a late arrival saves the event's strategy what the fixed day pays for nothing
    assert (reserved[:, 0] < reserved[:, 1]).all()


def test_a_step_after_the_event_starts_no_sooner_than_the_step_listed_before_it(tiny):
    # 100 kW from day 50, then 300 kW on S1's arrival: before day 50 in some worlds (the
    # arrival is U(20, 80)), where the 300 kW wait for day 50 and the 100 kW last no time
    _, metrics, _, _, arrival = run(tiny, priced(
        '[{ day = 0, kw = 0 }, { day = 50, kw = 100 }, '
        '{ after = "arrival:S1", notice_days = 5, kw = 300 }]'))
    up = np.maximum(arrival + 5, 50.0)
    assert (arrival + 5 < 50).any() and (arrival + 5 > 50).any()
    np.testing.assert_allclose(metrics[:, 0, N_METRICS + COST["cost_power_reserved"]],
                               reserved_by_hand([(100, 50.0, up), (300, up, np.inf)]),
                               rtol=1e-13)


def test_a_step_down_waits_out_the_term_of_a_step_up_on_an_event(tiny):
    # 200 kW from 5 days after S1 arrives (days 25-85), 50 from day 40: the step down waits
    # 30 days (the hall's term) after the step up in every world, a contract billing its term
    _, metrics, _, _, arrival = run(tiny, priced(
        '[{ day = 0, kw = 0 }, { after = "arrival:S1", notice_days = 5, kw = 200 }, '
        '{ day = 40, kw = 50 }]', term=30))
    up = arrival + 5
    down = np.maximum(40.0, up + 30)
    np.testing.assert_allclose(metrics[:, 0, N_METRICS + COST["cost_power_reserved"]],
                               reserved_by_hand([(200, up, down), (50, down, np.inf)]),
                               rtol=1e-13)


STEPS = [
    # the hall's: after the arrival, then down after the acceptance of N2
    ('[{ day = 0, kw = 120 }, { after = "arrival:S1", notice_days = 5, kw = 400 }, '
     '{ after = "accepted:N2", notice_days = 10, kw = 200 }]',
     '[{ hall = "H", day = 0, kw = 0 }, { hall = "H", day = 30, kw = 250 }, '
     '{ hall = "H", after = "removed:E2", notice_days = 5, kw = 100 }]', 20.0),
    ('[{ day = 0, kw = 200 }, { day = 45, kw = 350 }, '
     '{ after = "arrival:S1", notice_days = 5, kw = 150 }]',
     '[{ hall = "H", day = 0, kw = 300 }, '
     '{ hall = "H", after = "install:N1", notice_days = 0, kw = 50 }]', 60.0),
    # no term: a step down on day 50 after the arrival's step up, in worlds before it too
    ('[{ day = 0, kw = 0 }, { after = "arrival:S1", notice_days = 5, kw = 300 }, '
     '{ day = 50, kw = 100 }]',
     '[{ hall = "H", day = 0, kw = 50 }, { hall = "H", after = "burned_in:N2", kw = 350 }, '
     '{ hall = "H", after = "arrival:S1", notice_days = 40, kw = 0 }]', 0.0),
    # a step up after the arrival listed after a step up on day 50: it waits for day 50
    ('[{ day = 0, kw = 0 }, { day = 50, kw = 100 }, '
     '{ after = "arrival:S1", notice_days = 5, kw = 300 }]',
     '[{ hall = "H", day = 0, kw = 0 }, { hall = "H", after = "install:N2", kw = 100 }, '
     '{ hall = "H", day = 30, kw = 200 }]', 10.0),
]


@pytest.mark.parametrize("hall_steps, own_steps, term", STEPS)
def test_every_cost_against_the_slow_implementation(tiny, hall_steps, own_steps, term):
    plan, metrics, world, nodes, _ = run(tiny, priced(hall_steps, own_steps, term), count=60)
    for i in range(metrics.shape[0]):
        for s in range(plan.n_strategies):
            expected, scale = slow_costs(plan, s, nodes[i, s], world[i],
                                         metrics[i, s, SHORTFALL])
            got = metrics[i, s, N_METRICS:]
            np.testing.assert_allclose(got, expected, rtol=0,
                                       atol=1e-12 * max(max(scale), 1.0))
    assert (metrics[:, :, N_METRICS + COST["cost_power_over"]] > 0).any()


@pytest.mark.parametrize("hall_steps, own_steps, term", STEPS)
def test_every_backend_bit_for_bit(backend, tiny, hall_steps, own_steps, term):
    path = tiny(strategies=priced(hall_steps, own_steps, term), delay=DELAY)
    plan = compile_scenario(load_scenario(path))
    assert (plan.res_node >= 0).any()
    if backend.name in ("numba", "cuda-host"):
        assert tolerance((backend.name, "numpy"), plan).rtol == 0.0
    got = backend.simulate_chunk(plan, 11, 0, 128, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, 11, 0, 128, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)


def test_costs_do_not_depend_on_the_chunking(tiny):
    # a world's step starts are its own: the same costs in one chunk of 96 or in two
    path = tiny(strategies=priced(*STEPS[0][:2], STEPS[0][2]), delay=DELAY)
    plan = compile_scenario(load_scenario(path))
    whole = numpy_backend.simulate_chunk(plan, 5, 0, 96)[0]
    parts = [numpy_backend.simulate_chunk(plan, 5, first, 48)[0] for first in (0, 48)]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
