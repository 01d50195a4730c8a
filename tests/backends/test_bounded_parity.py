"""Backend parity on bounded distributions (issue 28, 3a): scenarios/bounded.toml (lognormals
capped with `max`, floored with `min`, one inside a `chance`), as planned and conditioned on
a status at day 40 (nothing has arrived: the capped arrival slip and the island's capped
`chance` delay are drawn above their bounds, Q_ABOVE), gives the same world, node times and
metrics on every backend to tests/parity.py's table, the host build of the CUDA sources bit
for bit with Numba; and every draw stays within its bounds."""
from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.backends.numba.driver import simulate_chunk as numba_chunk
from mcrisk.core.definitions import Q_ABOVE
from mcrisk.core.facts import with_facts
from mcrisk.core.status import Status
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import SCENARIOS
from ..parity import BIT_IDENTICAL_PLATFORM, assert_parity

numpy_backend = select_backend("numpy")
CASES = ("planned", "day40")


@cache
def bounded_plan(case: str):
    scenario = load_scenario(SCENARIOS / "bounded.toml")
    if case == "planned":
        return compile_scenario(scenario)
    scenario = dataclasses.replace(scenario, strategies=(scenario.strategy("swap-gated"),))
    return compile_scenario(with_facts(scenario, Status("status.toml", "0" * 64, 40.0)))


def test_the_conditioned_case_draws_bounded_lognormals_above_a_bound():
    plan = bounded_plan("day40")
    above = {n for n, k in zip(plan.quantity_names, plan.q_kind) if k == Q_ABOVE}
    assert above == {"shipment.S1.arrival.delay", "island.ib-new.ready.delay"}


@pytest.mark.parametrize("case", CASES)
def test_bounded_plans_match_the_reference(backend, case):
    plan = bounded_plan(case)
    got = backend.simulate_chunk(plan, 13, 5000, 400, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, 13, 5000, 400, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)


@pytest.mark.skipif(not BIT_IDENTICAL_PLATFORM, reason="bit parity is measured on x86-64 glibc")
@pytest.mark.parametrize("case", CASES)
def test_host_build_is_bit_identical_to_numba_on_bounded_plans(host, case):
    plan = bounded_plan(case)
    got = host.simulate_chunk(plan, 21, 77, 800, keep_nodes=True)
    expected = numba_chunk(plan, 21, 77, 800, keep_nodes=True)
    for name, a, b in zip(("metrics", "world", "node times"), got, expected):
        np.testing.assert_array_equal(a, b, err_msg=f"{case}: {name}")


@pytest.mark.parametrize("case", CASES)
def test_every_draw_stays_within_its_bounds(case):
    plan = bounded_plan(case)
    _, world, _ = numba_chunk(plan, 5, 0, 4000, keep_nodes=True)
    delay = world[:, plan.quantity_names.index("shipment.S1.arrival.delay")]
    island = world[:, plan.quantity_names.index("island.ib-new.ready.delay")]
    floor = 10.0 if case == "day40" else 1.0          # day 40: S1 (day 30) not yet arrived
    assert delay.min() >= floor and delay.max() <= 60.0
    assert island.max() <= 45.0 and (island == 0.0).any() == (case == "planned")
