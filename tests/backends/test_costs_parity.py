"""Every backend's cost columns against the NumPy reference (issue 13), to tests/parity.py's
tolerance table: bit for bit where the table says so (no lognormal or PERT draw), else within
NUMPY_MATH of each cost's scale (tests/slow_costs.cost_scales), as the metrics.

Plans get random cost fields by hand (tests/slow_costs.random_costs) on the tiny migration,
the random scenarios and the reference, and from a [costs] section with uncertain prices and
a mitigation's cost (compiled by mcrisk/plan/costs.py).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.risks import with_mitigation
from mcrisk.core.definitions import N_COSTS, N_METRICS
from mcrisk.core.distributions import KIND_LOGNORMAL, KIND_PERT
from mcrisk.scenario import load_scenario

from ..conftest import TINY_DEFAULTS
from ..parity import assert_parity, tolerance
from ..random_scenarios import random_scenario_text
from ..slow_costs import random_costs

numpy_backend = select_backend("numpy")


def without_exp_ndtri_or_pow(text: str) -> str:
    """A scenario file with every lognormal drawn as a uniform from its median to its P90 and
    every PERT as a triangular (as tests/backends/test_backends.py does): the plan the table
    holds to bit parity."""
    text = re.sub(r'dist = "lognormal", median = ([\d.]+), p90 = ([\d.]+)',
                  r'dist = "uniform", min = \1, max = \2', text)
    pert = r'dist = "pert", (min = [\d.]+, mode = [\d.]+, max = [\d.]+)(, lambda = [\d.]+)?'
    return re.sub(pert, r'dist = "triangular", \1', text)


def assert_cost_parity(got: tuple, expected: tuple, pair: tuple[str, str], plan) -> None:
    """Two backends' (metrics with cost columns, world, node times): every cost column is
    there, and assert_parity holds metrics, world, node times and costs to the table."""
    width = N_METRICS + N_COSTS
    assert got[0].shape == expected[0].shape == (expected[1].shape[0], plan.n_strategies, width)
    assert_parity(got, expected, pair, plan)


def cost_plan(tmp_path, text: str, seed: int):
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    return random_costs(compile_scenario(load_scenario(path)), seed)


def check(backend, plan, seed: int, first: int, count: int) -> None:
    got = backend.simulate_chunk(plan, seed, first, count, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, seed, first, count, keep_nodes=True)
    assert_cost_parity(got, expected, (backend.name, "numpy"), plan)


@pytest.mark.parametrize("case", range(6))
def test_costs_match_the_reference_on_random_scenarios(backend, tmp_path, case):
    plan = cost_plan(tmp_path, random_scenario_text(case), case)
    check(backend, plan, case, 300 * case, 200)


@pytest.mark.parametrize("case", range(0, 12, 3))
def test_costs_bit_for_bit_without_exp_ndtri_or_pow(backend, tmp_path, case):
    plan = cost_plan(tmp_path, without_exp_ndtri_or_pow(random_scenario_text(case)), 10 + case)
    assert not np.isin(plan.dist_kind, (KIND_LOGNORMAL, KIND_PERT)).any()
    if backend.name in ("numba", "cuda-host"):
        assert tolerance((backend.name, "numpy"), plan).rtol == 0.0   # the table's claim
    check(backend, plan, 7, 0, 200)


@pytest.mark.parametrize("seed", [1, 2])
def test_costs_match_the_reference_on_the_tiny_migration(backend, tiny, seed):
    plan = random_costs(compile_scenario(load_scenario(tiny(delay=3.5, crews=2))), seed)
    check(backend, plan, seed, 0, 64)


def test_costs_match_the_reference_on_the_reference_scenario(backend, reference_plan):
    plan = random_costs(reference_plan, 2048)
    check(backend, plan, 3, 1000, 16 if not backend.compiled else 256)


# The tiny migration priced by a [costs] section with uncertain prices (world quantities of
# every kind the tolerance table distinguishes) and a risk whose mitigation costs something.
PRICED = """
[[risks]]
id = "late-racks"
probability = 0.5
impact = { dist = "uniform", min = 2, max = 40 }
applies_to = ["arrival"]
mitigated = { probability = 0.1, cost = { dist = "uniform", min = 1000, max = 5000 } }

[costs]
currency = "EUR"

[[costs.power]]
hall = "H"
reservations = [{ day = 0, kw = 150 }, { day = 12, kw = 50 }, { day = 30, kw = 300 }]
price_per_kw_month = { dist = "triangular", min = 140, mode = 150, max = 170 }
over_per_kw_month = { dist = "pert", min = 250, mode = 300, max = 400 }
energy_per_kwh = { dist = "lognormal", median = 0.08, p90 = 0.11 }
pue = 1.4
load_factor = 0.7

[costs.running]
old = { dist = "uniform", min = 1200, max = 2000 }

[costs.waiting]
new = 3000

[costs.shortfall]
per_h100_eq_hour = { dist = "triangular", min = 2.0, mode = 2.35, max = 3.5 }

[costs.crews]
per_crew_day = 8000
"""


@pytest.mark.parametrize("exact", [False, True])
def test_costs_match_the_reference_from_a_costs_section(backend, tiny, exact):
    path = tiny(strategies=TINY_DEFAULTS["strategies"] + PRICED, delay=3.5, crews=2)
    if exact:
        path.write_text(without_exp_ndtri_or_pow(path.read_text()))
    plan = compile_scenario(with_mitigation(load_scenario(path)))
    assert plan.n_costs == N_COSTS and (plan.lump_amount != 0.0).any()
    check(backend, plan, 5, 0, 128)
