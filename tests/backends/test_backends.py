"""Backends agree per scenario, and results depend only on (scenario, seed), not on how
the run was cut into chunks or which other strategies were simulated alongside.

The identities run on every backend (the `backend` fixture, tests/conftest.py: numpy, numba,
the host build of the CUDA sources, the GPU when present); NumPy against Numba is held to
tests/parity.py's table, as every pair of backends is.
"""
import dataclasses
import itertools
import json
import re

import numpy as np
import pytest

from mcrisk.backends import numba as numba_backend
from mcrisk.backends import numpy as numpy_backend
from mcrisk.backends import BACKENDS, select_backend
from mcrisk.backends.numba import driver as numba_driver
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.distributions import KIND_LOGNORMAL, KIND_PERT
from mcrisk.core.errors import BackendUnavailable
from mcrisk.scenario import load_scenario
from mcrisk.backends.chunks import simulate

from ..helpers import MINIMAL, REFERENCE, ROOT
from ..parity import EXACT, PARITY, assert_parity, tolerance
from ..random_scenarios import random_scenario_text

GOLDEN = ROOT / "tests" / "data" / "reference-seed1-first8.json"
NUMBA_AGAINST_NUMPY = ("numba", "numpy")


def without_exp_ndtri_or_pow(text: str) -> str:
    """A scenario file with every lognormal drawn as a uniform from its median to its P90, and
    every PERT as a triangular: no draw left whose inverse CDF calls exp, ndtri or pow."""
    text = re.sub(r'dist = "lognormal", median = ([\d.]+), p90 = ([\d.]+)',
                  r'dist = "uniform", min = \1, max = \2', text)
    pert = r'dist = "pert", (min = [\d.]+, mode = [\d.]+, max = [\d.]+)(, lambda = [\d.]+)?'
    return re.sub(pert, r'dist = "triangular", \1', text)


@pytest.mark.parametrize("plan_name", ["reference_plan", "minimal_plan"])
def test_numba_matches_numpy_per_scenario(request, plan_name):
    plan = request.getfixturevalue(plan_name)
    assert_parity(numba_backend.simulate_chunk(plan, 11, 1000, 1500, keep_nodes=True),
                  numpy_backend.simulate_chunk(plan, 11, 1000, 1500, keep_nodes=True),
                  NUMBA_AGAINST_NUMPY, plan)


@pytest.mark.parametrize("case", range(0, 20, 2))
def test_numba_matches_numpy_on_random_scenarios(tmp_path, case):
    # Crews chained through gated drains, several crews, ramps, risks: the kernels' compiled
    # crew schedule against the reference's plain sweeps (tests/random_scenarios.py).
    path = tmp_path / f"random-{case}.toml"
    path.write_text(random_scenario_text(case))
    plan = compile_scenario(load_scenario(path))
    assert_parity(numba_backend.simulate_chunk(plan, case, 500 * case, 400, True),
                  numpy_backend.simulate_chunk(plan, case, 500 * case, 400, True),
                  NUMBA_AGAINST_NUMPY, plan)


@pytest.mark.parametrize("case", ["reference", *(f"random-{c}" for c in range(0, 20, 2))])
def test_numba_equals_numpy_bit_for_bit_without_exp_ndtri_or_pow(tmp_path, case):
    # Issue 8: sums in the reference were pairwise (NumPy's sum) or in another association,
    # so up to half the metrics differed in the last digits even with identical draws.
    text = REFERENCE.read_text() if case == "reference" else \
        random_scenario_text(int(case.split("-")[1]))
    path = tmp_path / f"{case}.toml"
    path.write_text(without_exp_ndtri_or_pow(text))
    plan = compile_scenario(load_scenario(path))
    assert not np.isin(plan.dist_kind, (KIND_LOGNORMAL, KIND_PERT)).any()
    assert tolerance(NUMBA_AGAINST_NUMPY, plan) == EXACT     # the table's claim, checked here
    assert_parity(numba_backend.simulate_chunk(plan, 7, 300, 600, keep_nodes=True),
                  numpy_backend.simulate_chunk(plan, 7, 300, 600, keep_nodes=True),
                  NUMBA_AGAINST_NUMPY, plan)


@pytest.mark.parametrize("case", ["reference", "hall A capped at 2800 kW", "minimal"])
def test_event_orders_and_power_shortcut_change_nothing(tmp_path, backend, case):
    # The compiled event orders only speed up the kernels' stable sort, and skipping the power
    # events of halls that cannot pass their cap is exact: natural orders, every event.
    # With hall A at 2800 kW, swing-gated passes its cap and hall B is skipped in two plans.
    if backend.name == "numpy":
        pytest.skip("numpy: the reference sorts every event itself, no compiled order to use")
    path = MINIMAL if case == "minimal" else tmp_path / "case.toml"
    if case != "minimal":
        cap = "3000" if case == "reference" else "2800"
        path.write_text(REFERENCE.read_text().replace("power_cap_kw = 3000",
                                                      f"power_cap_kw = {cap}"))
    plan = compile_scenario(load_scenario(path))
    n_s, n_cap, n_power = (plan.n_strategies, plan.cap_event_node.shape[0],
                           plan.power_event_node.shape[0])
    natural = dataclasses.replace(
        plan, cap_event_order=np.tile(np.arange(n_cap, dtype=np.int32), (n_s, 1)),
        power_event_order=np.tile(np.arange(n_power, dtype=np.int32), (n_s, 1)),
        n_power_checked=np.full(n_s, n_power, dtype=np.int32))
    fast = backend.simulate_chunk(plan, 3, 0, 3000)[0]
    np.testing.assert_array_equal(backend.simulate_chunk(natural, 3, 0, 3000)[0], fast)
    if case == "hall A capped at 2800 kW":
        assert fast[:, :, 5].max() == 1.0 and (plan.n_power_checked < n_power).any()


def test_the_numba_path_really_ran(reference_plan):
    numba_backend.simulate_chunk(reference_plan, 1, 0, 10)
    assert numba_driver.simulate_chunk_kernel.signatures, "the Numba kernel was never compiled"


@pytest.mark.slow                  # chunks of one scenario: 4-5 s on Numba
@pytest.mark.parametrize("chunk_size", [1, 7, 1000, 4096])
def test_results_do_not_depend_on_chunk_size(reference_plan, backend, chunk_size):
    samples = 1500 if backend.compiled else 8        # numpy: chunks of 1 and 7 still cut it
    whole = simulate(reference_plan, samples, 5, backend, chunk_size=samples)
    cut = simulate(reference_plan, samples, 5, backend, chunk_size=chunk_size)
    np.testing.assert_array_equal(cut.metrics, whole.metrics)
    np.testing.assert_array_equal(cut.world, whole.world)


def test_any_scenario_can_be_replayed_alone(reference_plan, backend):
    batch, _, _ = backend.simulate_chunk(reference_plan, 5, 0, 300)
    alone, _, _ = backend.simulate_chunk(reference_plan, 5, 217, 1)
    np.testing.assert_array_equal(alone[0], batch[217])


def test_strategies_share_the_world_common_random_numbers(tmp_path, reference_plan, backend):
    # A file with only hybrid-gated gives hybrid-gated exactly the numbers it gets beside the
    # other four: every draw is addressed by name, not by position.
    text = REFERENCE.read_text()
    head, *blocks = re.split(r"(?m)^\[\[strategies\]\]\n", text)
    only = [b for b in blocks if b.startswith('name = "hybrid-gated"')]
    path = tmp_path / "only-hybrid-gated.toml"
    path.write_text(head + "[[strategies]]\n" + only[0])
    single = compile_scenario(load_scenario(path))
    samples = 2000 if backend.compiled else 200
    one, _, _ = backend.simulate_chunk(single, 9, 0, samples)
    full, _, _ = backend.simulate_chunk(reference_plan, 9, 0, samples)
    s = reference_plan.strategy_names.index("hybrid-gated")
    np.testing.assert_array_equal(one[:, 0], full[:, s])


def test_seeds_give_different_worlds(reference_plan, backend):
    _, a, _ = backend.simulate_chunk(reference_plan, 1, 0, 100)
    _, b, _ = backend.simulate_chunk(reference_plan, 2, 0, 100)
    assert not np.allclose(a, b)


def test_golden_numbers_are_stable_across_machines_and_versions(reference_plan):
    """Regression guard on the random stream's mapping: the first 8 scenarios of seed 1.

    Regenerate deliberately (a change of addressing or of a distribution) with
    `python -m tests.regen_golden`, and say so in the commit message.
    """
    golden = json.loads(GOLDEN.read_text())
    metrics, world, _ = numba_backend.simulate_chunk(reference_plan, 1, 0, 8)
    assert golden["strategies"] == list(reference_plan.strategy_names)
    np.testing.assert_allclose(metrics, np.array(golden["metrics"]), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(world, np.array(golden["world"]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("keep_nodes", [False, True])
def test_zero_scenarios_give_empty_results_on_every_backend(minimal_plan, backend, keep_nodes):
    # Issue 8: numpy and numba returned empty arrays, the CUDA code raised. Now all agree.
    plan = minimal_plan
    metrics, world, nodes = backend.simulate_chunk(plan, 1, 5, 0, keep_nodes)
    assert metrics.shape == (0, plan.n_strategies, 6) and world.shape == (0, plan.n_quantities)
    if keep_nodes:
        assert nodes.shape == (0, plan.n_strategies, plan.n_nodes)
    else:
        assert nodes is None


def test_scenario_indices_past_2_to_the_32_are_refused_not_wrapped(minimal_plan, backend):
    # The counter holds 32 bits of the scenario index: scenario 2**32 would replay scenario 0.
    last, _, _ = backend.simulate_chunk(minimal_plan, 1, 2 ** 32 - 1, 1)
    first, _, _ = backend.simulate_chunk(minimal_plan, 1, 0, 1)
    assert last.shape == first.shape
    for begin, count in ((2 ** 32 - 1, 2), (2 ** 32, 1), (-1, 1), (0, -1)):
        with pytest.raises(ValueError):
            backend.simulate_chunk(minimal_plan, 1, begin, count)


def test_backend_selection_never_falls_back_silently():
    assert select_backend("auto").name in ("numba", "cuda")
    assert select_backend("auto").reason.startswith("auto")
    assert select_backend("numpy").name == "numpy"
    with pytest.raises(BackendUnavailable, match="unknown backend"):
        select_backend("tpu")


def test_asking_for_the_gpu_without_one_names_cause_and_fix():
    from mcrisk.backends import gpu_unavailable_reason
    reason = gpu_unavailable_reason()
    if reason is None:
        pytest.skip("a GPU is present here")
    with pytest.raises(BackendUnavailable, match="--backend gpu cannot run here"):
        select_backend("gpu")


# ---- the tolerance table itself (tests/parity.py) --------------------------------------------

def test_the_table_covers_every_pair_of_backends():
    assert set(PARITY) == {frozenset(pair) for pair in itertools.combinations(BACKENDS, 2)}


def test_assert_parity_holds_each_pair_to_its_tolerance(reference_plan, minimal_plan):
    got = numba_backend.simulate_chunk(reference_plan, 2, 0, 50, keep_nodes=True)
    one_ulp = tuple(np.where(a == 0, a, np.nextafter(a, np.inf)) for a in got)   # zero stays
    assert_parity(got, got, ("numba", "numba"), reference_plan)
    with pytest.raises(AssertionError, match="bit for bit"):
        assert_parity(one_ulp, got, ("numba", "numba"), reference_plan)
    assert tolerance(NUMBA_AGAINST_NUMPY, minimal_plan) == EXACT      # no lognormal, no PERT
    rtol = tolerance(NUMBA_AGAINST_NUMPY, reference_plan).rtol
    assert rtol > 0
    assert_parity(one_ulp, got, NUMBA_AGAINST_NUMPY, reference_plan)
    metrics, world, nodes = (a.copy() for a in got)
    world[3, 1] *= 1 + 3 * rtol
    with pytest.raises(AssertionError, match="world"):
        assert_parity((metrics, world, nodes), got, NUMBA_AGAINST_NUMPY, reference_plan)
    # A metric is held to its scale: trough days to the horizon, not to themselves.
    metrics, world, nodes = (a.copy() for a in got)
    metrics[:, :, 1] += 0.5 * rtol * reference_plan.horizon
    assert_parity((metrics, world, nodes), got, NUMBA_AGAINST_NUMPY, reference_plan)
    metrics[:, :, 1] += 2 * rtol * reference_plan.horizon
    with pytest.raises(AssertionError, match="metrics beyond"):
        assert_parity((metrics, world, nodes), got, NUMBA_AGAINST_NUMPY, reference_plan)
    metrics, world, nodes = (a.copy() for a in got)
    metrics[0, 0, 5] = 1.0 - metrics[0, 0, 5]                          # power_violation flips
    with pytest.raises(AssertionError):
        assert_parity((metrics, world, nodes), got, NUMBA_AGAINST_NUMPY, reference_plan)
    with pytest.raises(AssertionError, match="node times kept by one only"):
        assert_parity((got[0], got[1], None), got, NUMBA_AGAINST_NUMPY, reference_plan)
