"""Backend parity on conditioned plans (issue 25): a status's posterior tables (KIND_TABLE),
truncated draws (Q_ABOVE, through the kernels' own CDFs), burn-in histories continued and
node pins and floors give the same world, node times and metrics on every backend, to
tests/parity.py's table (the NumPy reference against the kernels: NUMPY_MATH; the host build
of the CUDA sources bit for bit with Numba on x86-64 glibc), and the same numbers whatever
the chunk size.

The conditioned plans: the reference's story (tests/statuses.py) at days 110, 150 and 165 with
every strategy that accepts its facts (all five at day 110; at 150 and 165 the three that put
other racks in N01's and N02's row A1 are refused, tests/plan/test_refusals.py), the busy day
on reference-2048-full (seven strategies, costs, a job mix, early failures), and the three
example status files as loaded by load_status, with every risk on (--risks pre: hall B's
posterior is a `chance` table, the utility slip's impact a truncated draw).
"""
from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.backends.chunks import simulate
from mcrisk.backends.numba.driver import simulate_chunk as numba_chunk
from mcrisk.core.definitions import Q_ABOVE, Q_REST
from mcrisk.core.distributions import KIND_TABLE
from mcrisk.core.facts import with_facts
from mcrisk.core.risks import select_risks
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario, load_status

from ..helpers import REFERENCE, SCENARIOS
from ..parity import BIT_IDENTICAL_PLATFORM, assert_parity
from ..statuses import busy_day, story

numpy_backend = select_backend("numpy")
SERIES = SCENARIOS / "reference-2048-status"
STORY_STRATEGIES = ("big-bang", "rolling-on-delivery")
CASES = ("story-110", "story-150", "story-165", "busy-day", "day100", "day150", "day210")


@cache
def conditioned_plan(case: str):
    """The compiled plan of one case (module docstring)."""
    if case == "busy-day":
        return compile_scenario(with_facts(load_scenario(SCENARIOS / "reference-2048-full.toml"),
                                           busy_day()))
    reference = load_scenario(REFERENCE)
    if case.startswith("story-"):
        as_of = float(case.split("-")[1])
        if as_of > 110.0:
            reference = dataclasses.replace(reference, strategies=tuple(
                reference.strategy(name) for name in STORY_STRATEGIES))
        return compile_scenario(with_facts(reference, story(as_of)))
    scenario = select_risks(reference, "pre")
    return compile_scenario(with_facts(scenario, load_status(SERIES / f"{case}.toml", scenario)))


def test_the_cases_are_conditioned():
    # every case draws from a posterior table or a truncated prior, pins some quantity and
    # floors some node: a parity failure would be about the conditioning's code paths
    for case in CASES:
        plan = conditioned_plan(case)
        tables = np.isin(plan.dist_kind[plan.q_dist[plan.q_dist >= 0]], [KIND_TABLE])
        assert tables.any() or case == "day210", case        # day 210: every shared day known
        assert np.isin(plan.q_kind, [Q_ABOVE]).any() and np.isin(plan.q_kind, [Q_REST]).any() \
            or case.endswith("100"), case                    # day 100: nothing has happened
        assert (plan.node_floor > -np.inf).any(), case
    assert len(conditioned_plan("story-110").strategy_names) == 5
    assert len(conditioned_plan("busy-day").strategy_names) == 7


@pytest.mark.parametrize("case", CASES)
def test_conditioned_plans_match_the_reference(backend, case):
    # world, node times and every metric (costs and job columns included on the busy day)
    plan = conditioned_plan(case)
    count = 120 if case == "busy-day" else 200
    got = backend.simulate_chunk(plan, 13, 5000, count, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, 13, 5000, count, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)


@pytest.mark.skipif(not BIT_IDENTICAL_PLATFORM, reason="bit parity is measured on x86-64 glibc")
@pytest.mark.parametrize("case", CASES)
def test_host_build_is_bit_identical_to_numba_on_conditioned_plans(host, case):
    plan = conditioned_plan(case)
    got = host.simulate_chunk(plan, 21, 77, 400, keep_nodes=True)
    expected = numba_chunk(plan, 21, 77, 400, keep_nodes=True)
    for name, a, b in zip(("metrics", "world", "node times"), got, expected):
        np.testing.assert_array_equal(a, b, err_msg=f"{case}: {name}")


@pytest.mark.parametrize("backend_name, chunk_sizes", [("numba", (37, 1000)),
                                                       ("numpy", (97, 1000))])
def test_a_conditioned_run_is_the_same_for_every_chunk_size(backend_name, chunk_sizes):
    # day 210 with every risk on: burn-in histories, truncated draws and pins; a chance
    # posterior on day 150; each scenario's numbers are its own, whatever chunk holds it
    backend = select_backend(backend_name)
    for case in ("day150", "day210"):
        plan = conditioned_plan(case)
        runs = [simulate(plan, 700, 3, backend, chunk_size=size, keep_world=700)
                for size in chunk_sizes]
        for a in runs[1:]:
            for name in ("metrics", "world", "costs", "jobs"):
                x, y = getattr(runs[0], name), getattr(a, name)
                assert (x is None) == (y is None), name
                if x is not None:
                    np.testing.assert_array_equal(x, y, err_msg=f"{case}: {name}")
