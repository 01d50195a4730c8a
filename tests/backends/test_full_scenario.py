"""scenarios/reference-2048-full.toml: the reference with every behaviour of issue 15 switched
on (forecast demand, a job mix, attrition, failures after acceptance, a soak policy, a kept
inference pool). It must keep using all of them, agree across backends (the GPU's case runs
with pytest -m gpu), and its baseline must be the closed form of the attrition it declares.
"""
from __future__ import annotations

import pytest

from mcrisk.backends import numba as numba_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import SCENARIOS
from ..parity import assert_parity

FULL = SCENARIOS / "reference-2048-full.toml"


@pytest.fixture(scope="module")
def full():
    scenario = load_scenario(FULL)
    return scenario, compile_scenario(scenario)


def test_it_uses_every_behaviour_of_issue_15(full):
    scenario, plan = full
    assert scenario.demand.forecast is not None
    assert (plan.demand_growth_q >= 0).any()                       # an uncertain growth
    assert plan.n_job_cols == 1 + len(scenario.demand.jobs) == 4
    kinds = {kind.id: kind for kind in scenario.unit_types}
    assert all(kind.attrition is not None for kind in kinds.values())
    assert kinds["gb300-nvl72"].early_failures is not None
    assert [s.name for s in scenario.strategies if s.acceptance] == ["hybrid-gated-soak"]
    assert [s.name for s in scenario.strategies if s.keep] == ["hybrid-gated-keep"]
    # the reference's five strategies are all there, as written in the reference
    reference = load_scenario(SCENARIOS / "reference-2048.toml")
    for strategy in reference.strategies:
        assert scenario.strategy(strategy.name) == strategy


def test_the_baseline_is_todays_fleet_at_its_usable_share(full):
    # 8 SUs of 256 H100 at 1 - 4.7e-4 x 8 GPUs x 3 days = 0.98872 usable
    _, plan = full
    assert plan.baseline == pytest.approx(2048 * (1 - 4.7e-4 * 8 * 3), rel=1e-12)


def test_every_backend_agrees_with_numba(full, backend):
    # NumPy within the parity table, the host build of the CUDA sources bit for bit, and on
    # a GPU (pytest -m gpu; benchmarks/gpu_check.sh) CuPy within the device's tolerance
    if backend.name == "numba":
        pytest.skip("numba is what the others are compared with")
    _, plan = full
    count = 400 if backend.compiled else 60
    assert_parity(backend.simulate_chunk(plan, 7, 5000, count, keep_nodes=True),
                  numba_backend.simulate_chunk(plan, 7, 5000, count, keep_nodes=True),
                  (backend.name, "numba"), plan)
