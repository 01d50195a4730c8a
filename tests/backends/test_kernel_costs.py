"""The kernels' costs (issue 13): the host build of the CUDA sources computes the Numba
kernel's cost columns bit for bit (x86-64 with glibc; tests/parity.py's table elsewhere),
lognormal and PERT prices included, and a plan's costs leave its metrics, world and node times
exactly as they are without costs; on the device, the costs cost the kernel no registers (where
nvcc is installed). What the costs are worth is tests/backends/test_costs_parity.py's (every backend
against the NumPy reference) and tests/backends/test_costs_closed_forms.py's.
"""
from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess

import numpy as np
import pytest

from mcrisk.backends import cuda
from mcrisk.backends import numba as numba_backend
from mcrisk.backends.numpy import driver as numpy_driver
from mcrisk.plan.compile import compile_scenario
from mcrisk.plan.costs import no_cost_arrays
from mcrisk.core.definitions import COST, N_COSTS, N_METRICS
from mcrisk.core.distributions import KIND_LOGNORMAL, KIND_PERT
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE
from ..parity import assert_parity
from ..random_scenarios import random_scenario_text
from ..slow_costs import random_costs

HOST_AGAINST_NUMBA = ("cuda-host", "numba")

# The reference priced after docs/costs.md's example, with uncertain prices of every kind (a
# PERT and a lognormal too: the draws whose maths differs between NumPy and the kernels), and
# reservations below what the halls draw at times, so that power over them costs something.
REFERENCE_COSTS = """
[costs]
[[costs.power]]
hall = "A"
reserved_kw = 1500
price_per_kw_month = { dist = "triangular", min = 140, mode = 150, max = 170 }
over_per_kw_month = { dist = "pert", min = 250, mode = 300, max = 400 }
energy_per_kwh = { dist = "lognormal", median = 0.08, p90 = 0.11 }
pue = 1.35
load_factor = 0.8

[[costs.power]]
hall = "B"
reservations = [{ day = 0, kw = 0 }, { day = 200, kw = 800 }]
price_per_kw_month = 190
over_per_kw_month = 300
energy_per_kwh = 0.08
pue = 1.2

[costs.running]
hgx-h100-su = { dist = "triangular", min = 1200, mode = 1500, max = 2000 }

[costs.waiting]
gb300-nvl72 = { dist = "triangular", min = 2000, mode = 3000, max = 4500 }

[costs.shortfall]
per_h100_eq_hour = { dist = "triangular", min = 2.0, mode = 2.35, max = 3.5 }

[costs.crews]
per_crew_day = 8000
"""


@pytest.fixture(scope="module")
def priced_reference(tmp_path_factory):
    # the reference's own [costs] (its section up to the next rule) replaced by this one,
    # which prices every column: the reference's reservations are never exceeded
    text = re.sub(r"^\[costs\]\n.*?(?=^# -{10})", "", REFERENCE.read_text(),
                  flags=re.S | re.M) + REFERENCE_COSTS
    path = tmp_path_factory.mktemp("priced") / "reference.toml"
    path.write_text(text)
    plan = compile_scenario(load_scenario(path))
    assert plan.n_costs == N_COSTS and (plan.over_rate != 0.0).all()
    assert np.isin(plan.dist_kind, (KIND_LOGNORMAL, KIND_PERT)).any()
    return plan


def without_costs(plan):
    return dataclasses.replace(plan, **no_cost_arrays(plan.n_strategies, len(plan.hall_names)))


def test_host_costs_are_numba_costs_on_the_priced_reference(host, priced_reference):
    got = host.simulate_chunk(priced_reference, 4, 2 ** 32 - 700, 700, keep_nodes=True)
    expected = numba_backend.simulate_chunk(priced_reference, 4, 2 ** 32 - 700, 700, True)
    assert expected[0].shape == (700, priced_reference.n_strategies, N_METRICS + N_COSTS)
    # every column the section prices is at work in some worlds
    priced = [N_METRICS + k for name, k in COST.items() if name != "cost_mitigation"]
    assert (expected[0][..., priced] > 0).any(axis=(0, 1)).all()
    assert_parity(got, expected, HOST_AGAINST_NUMBA, priced_reference)


@pytest.mark.parametrize("case", range(4))
def test_host_costs_are_numba_costs_on_random_cost_plans(host, tmp_path, case):
    path = tmp_path / f"random-{case}.toml"
    path.write_text(random_scenario_text(case))
    plan = random_costs(compile_scenario(load_scenario(path)), 50 + case)
    got = host.simulate_chunk(plan, case, 100 * case, 200, keep_nodes=True)
    expected = numba_backend.simulate_chunk(plan, case, 100 * case, 200, keep_nodes=True)
    assert_parity(got, expected, HOST_AGAINST_NUMBA, plan)


def test_costs_change_nothing_else(host, priced_reference):
    plain = without_costs(priced_reference)
    for simulate_chunk in (numba_backend.simulate_chunk, host.simulate_chunk):
        priced = simulate_chunk(priced_reference, 9, 50, 300, True)
        unpriced = simulate_chunk(plain, 9, 50, 300, True)
        assert unpriced[0].shape[-1] == N_METRICS          # no cost columns without costs
        np.testing.assert_array_equal(priced[0][..., :N_METRICS], unpriced[0])
        np.testing.assert_array_equal(priced[1], unpriced[1])
        np.testing.assert_array_equal(priced[2], unpriced[2])


def test_parity_holds_cost_columns_to_their_scale(priced_reference):
    # tests/parity.py checks a plan's cost columns too: NumPy against Numba within NUMPY_MATH
    # of each cost's scale, and a cost off by a millionth fails.
    numba = numba_backend.simulate_chunk(priced_reference, 2, 0, 200, True)
    reference = numpy_driver.simulate_chunk(priced_reference, 2, 0, 200, True)
    assert_parity(reference, numba, ("numpy", "numba"), priced_reference)
    metrics = numba[0].copy()
    metrics[7, 1, N_METRICS + COST["cost_energy"]] *= 1 + 1e-6
    with pytest.raises(AssertionError, match=r"costs beyond .* \[\[7, 1, 3\]\]"):
        assert_parity((metrics, numba[1], numba[2]), numba, ("numpy", "numba"),
                      priced_reference)


@pytest.mark.skipif(shutil.which("nvcc") is None,
                    reason="nvcc is not installed: the kernel's registers are not checked here")
@pytest.mark.nvcc
def test_the_device_kernel_keeps_its_registers_with_costs(tmp_path, priced_reference):
    # cuda.NVRTC_OPTIONS hold the kernel to at most 104 registers (ptxas allocates 108 unasked
    # since the bounded lognormals), without spilling: a feature that needs more shows here.
    source = tmp_path / "simulate.cu"
    source.write_text(cuda.kernel_source())
    done = subprocess.run(
        ["nvcc", "-cubin", "-arch=sm_90", "-Xptxas", "-v",
         *cuda.compile_options(priced_reference), "-x", "cu", str(source),
         "-o", str(tmp_path / "simulate.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    kernel = done.stderr.split(f"Compiling entry function '{cuda.KERNEL_NAME}'")[1]
    registers = int(re.search(r"Used (\d+) registers", kernel).group(1))
    assert registers <= 104
    assert "0 bytes spill stores, 0 bytes spill loads" in kernel.split("ptxas info    : Used")[0]
