"""Backend parity on correlated quantities (issue 28, 3b): scenarios/correlated.toml (the
vendor slip rank-correlated with hall B's `chance` energization slip) and
tests/data/copula-group.toml (a group of four kinds with rows of up to four weights, and a
risk leading its own group) give the same world, node times and metrics on every backend to
tests/parity.py's table, the host build of the CUDA sources bit for bit with Numba; every
draw stays at its address (two chunks give what one gives); and the reference, which
correlates nothing, has no copula row at all (it draws as before: tests/backends/
test_full_scenario.py holds its golden numbers)."""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.backends.numba.driver import simulate_chunk as numba_chunk
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import DATA, SCENARIOS
from ..parity import BIT_IDENTICAL_PLATFORM, assert_parity, tolerance

numpy_backend = select_backend("numpy")
FILES = {"correlated": SCENARIOS / "correlated.toml", "group": DATA / "copula-group.toml"}


@cache
def plan_of(case: str):
    return compile_scenario(load_scenario(FILES[case]))


def test_the_plans_correlate_what_their_files_name():
    rows = {case: [n for q, n in enumerate(plan_of(case).quantity_names)
                   if plan_of(case).q_copula_ptr[q + 1] > plan_of(case).q_copula_ptr[q]]
            for case in FILES}
    assert rows == {"correlated": ["shared.vendor", "hall.B.energized.delay"],
                    "group": ["shared.a", "shared.b", "shared.c", "shared.d", "risk.cdu",
                              "row.R3.retrofit"]}
    assert tolerance(("numpy", "numba"), plan_of("group")).rtol > 0


def test_a_scenario_without_correlations_has_no_copula_row(reference_plan):
    assert not reference_plan.q_copula_ptr.any()


@pytest.mark.parametrize("case", sorted(FILES))
def test_correlated_plans_match_the_reference(backend, case):
    plan = plan_of(case)
    got = backend.simulate_chunk(plan, 13, 5000, 300, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, 13, 5000, 300, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)


@pytest.mark.skipif(not BIT_IDENTICAL_PLATFORM, reason="bit parity is measured on x86-64 glibc")
@pytest.mark.parametrize("case", sorted(FILES))
def test_host_build_is_bit_identical_to_numba_on_correlated_plans(host, case):
    plan = plan_of(case)
    got = host.simulate_chunk(plan, 21, 77, 600, keep_nodes=True)
    expected = numba_chunk(plan, 21, 77, 600, keep_nodes=True)
    for name, a, b in zip(("metrics", "world", "node times"), got, expected):
        np.testing.assert_array_equal(a, b, err_msg=f"{case}: {name}")


@pytest.mark.parametrize("run", [numba_chunk, numpy_backend.simulate_chunk],
                         ids=["numba", "numpy"])
def test_correlated_draws_do_not_depend_on_the_chunks(run):
    plan = plan_of("group")
    whole = run(plan, 5, 1000, 400)
    parts = [run(plan, 5, 1000, 137), run(plan, 5, 1137, 263)]
    for name, a, b, c in zip(("metrics", "world"), whole, *parts):
        np.testing.assert_array_equal(a, np.concatenate([b, c]), err_msg=name)
