"""The cuda backend on a GPU: the CuPy kernel equals the Numba backend.

Tests marked `gpu` need CuPy and a CUDA device and skip cleanly without them
(`pytest -m gpu` runs only those; benchmarks/gpu_check.sh runs them on a lent GPU). The rest
runs everywhere: the quantile positions the summaries read, the backend's host side against
a stand-in for CuPy, importing without CuPy, and the error for `--backend cuda` (or its old
name `gpu`) on a machine without one.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from mcrisk.results import statistics
from mcrisk.results import quantiles
from mcrisk.backends import cuda, gpu_unavailable_reason, select_backend
from mcrisk.backends import numba as numba_backend
from mcrisk.backends.numba import distributions as numba_distributions
from mcrisk.core.errors import BackendUnavailable

from ..helpers import KAT_PHILOX4X32_10
from ..parity import NDTRI_RTOL, assert_parity
from ..random_scenarios import random_scenario_text

NO_GPU = gpu_unavailable_reason()


# ---- everywhere -----------------------------------------------------------------------------

def test_importing_mcrisk_never_imports_cupy():
    code = ("import sys, mcrisk, mcrisk.cli, mcrisk.backends.cuda, mcrisk.backends.cuda_host; "
            "assert 'cupy' not in sys.modules, 'cupy was imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", ["cuda", "gpu"])     # gpu: the old name, still accepted
def test_gpu_without_cupy_names_cause_and_fix(monkeypatch, name):
    monkeypatch.setitem(sys.modules, "cupy", None)        # import cupy -> ImportError
    with pytest.raises(BackendUnavailable) as caught:
        select_backend(name)
    message = str(caught.value)
    assert f"--backend {name} cannot run here" in message
    assert "CuPy is not installed" in message and "pip install" in message


def test_gpu_without_a_device_names_cause_and_fix():
    if NO_GPU is None:
        pytest.skip("a GPU is present here")
    with pytest.raises(BackendUnavailable, match="--backend gpu cannot run here") as caught:
        select_backend("gpu")
    assert NO_GPU in str(caught.value)
    assert any(fix in str(caught.value) for fix in ("pip install", "--backend numba", "driver"))


@pytest.mark.parametrize("n", [1, 2, 3, 9, 10, 11, 100, 101, 999, 1000, 1001, 65_537])
def test_quantile_positions_reproduce_numpy_quantile(n):
    gen = np.random.default_rng(n)
    values = np.sort(np.round(gen.lognormal(size=n), 1))   # ties included
    for _, q in statistics.PERCENTILES:
        prev, nxt, gamma = quantiles.quantile_position(n, q)
        assert quantiles.lerp(values[prev], values[nxt], gamma) == np.quantile(values, q)


class _HostArray(np.ndarray):
    """A NumPy array that answers .get() like a CuPy array."""

    def get(self):
        return np.asarray(self)


class HostStandInForCupy:
    """Just enough of CuPy for cuda.py, with simulate_chunk_kernel run by the host build: the
    backend's own plumbing (module cache, argument list and types, grid, status, outputs)
    runs on every CI, not only on a lent GPU."""

    def __init__(self, host):
        self.host = host
        self.compiled = []

    def __getattr__(self, name):                 # sort, mean, moveaxis, ...: NumPy's
        return getattr(np, name)

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype).view(_HostArray)

    def asarray(self, array):
        return np.asarray(array).view(_HostArray)

    def RawModule(self, code, options):
        self.compiled.append(options)
        assert code == cuda.kernel_source()
        return _HostModule(self.host)


class _HostModule:
    def __init__(self, host):
        self.host = host

    def compile(self):
        pass

    def get_function(self, name):
        assert name == cuda.KERNEL_NAME
        return self.launch

    def launch(self, grid, block, args):
        parameters = cuda.PLAN_PARAMETERS + cuda.CHUNK_PARAMETERS
        for (name, kind), value in zip(parameters, args, strict=True):
            if not kind.endswith("*"):               # CuPy passes a scalar by its NumPy type
                assert type(value) is np.dtype(kind).type, name
        count = int(args[len(cuda.PLAN_PARAMETERS) + 3])
        assert (grid[0] - 1) * block[0] < count <= grid[0] * block[0]
        arrays = [np.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        assert self.host.launch(cuda.typed_arguments(parameters, arrays)) == 0


def test_gpu_backend_plumbing_through_a_host_stand_in(monkeypatch, host, reference_plan):
    stand_in = HostStandInForCupy(host)
    monkeypatch.setattr(cuda, "_cupy", lambda: stand_in)
    monkeypatch.setattr(cuda, "_modules", {})
    monkeypatch.setattr(cuda, "_device_plan", {"plan": None, "args": None})
    before = cuda.launch_count
    for first, count in ((0, 1000), (2 ** 32 - 129, 129)):   # the first and last scenarios
        got = cuda.simulate_chunk(reference_plan, 4, first, count, keep_nodes=True)
        expected = numba_backend.simulate_chunk(reference_plan, 4, first, count, keep_nodes=True)
        for a, b in zip(got, expected):
            assert type(a) in (np.ndarray, cuda.HostCopy)
            np.testing.assert_array_equal(a, b)
        # the node times keep their chunk on the device, for the milestones
        assert isinstance(got[2].device_chunk, cuda.DeviceChunk)
        assert got[2].device_chunk.node_times.shape == got[2].shape
    assert cuda.simulate_chunk(reference_plan, 4, 0, 10)[2] is None
    assert cuda.launch_count == before + 3
    assert stand_in.compiled == [cuda.compile_options(reference_plan)]   # one module per shape
    metrics, _, _ = cuda.simulate_chunk_device(reference_plan, 4, 0, 500)
    np.testing.assert_array_equal(np.asarray(metrics),
                                  numba_backend.simulate_chunk(reference_plan, 4, 0, 500)[0])


@pytest.mark.parametrize("keep_nodes", [False, True])
def test_gpu_backend_with_zero_scenarios_launches_nothing(monkeypatch, host, minimal_plan,
                                                          keep_nodes):
    # Same behaviour as every other backend (tests/backends/test_backends.py, which runs the
    # GPU itself when there is one): arrays with no scenario.
    stand_in = HostStandInForCupy(host)
    monkeypatch.setattr(cuda, "_cupy", lambda: stand_in)
    monkeypatch.setattr(cuda, "_modules", {})
    before = cuda.launch_count
    metrics, world, nodes = cuda.simulate_chunk(minimal_plan, 1, 0, 0, keep_nodes=keep_nodes)
    assert metrics.shape == (0, minimal_plan.n_strategies, 6)
    assert world.shape == (0, minimal_plan.n_quantities)
    if keep_nodes:
        assert nodes.shape == (0, minimal_plan.n_strategies, minimal_plan.n_nodes)
    else:
        assert nodes is None
    assert cuda.launch_count == before and stand_in.compiled == []
    with pytest.raises(ValueError, match="below 2"):
        cuda.simulate_chunk(minimal_plan, 1, 2 ** 32 - 1, 2)


def test_compile_options_carry_the_plan_shape(reference_plan):
    options = cuda.compile_options(reference_plan)
    assert "--fmad=false" in options
    assert f"-DMAX_NODES={reference_plan.n_nodes}" in options
    assert f"-DMAX_QUANTITIES={reference_plan.n_quantities}" in options
    assert "-DMAX_EVENTS=24" in options and "-DMAX_CREWS=1" in options


# ---- on a GPU -------------------------------------------------------------------------------

@pytest.fixture
def cupy():
    if NO_GPU is not None:
        pytest.skip(f"no usable GPU: {NO_GPU}")
    import cupy
    return cupy


def probe(cupy, plan, name, args, n):
    kernel = cuda.module_for(plan).get_function(name)
    kernel(((n + 127) // 128,), (128,), (*args, np.int64(n)))
    cupy.cuda.Device().synchronize()


@pytest.mark.gpu
def test_gpu_philox_matches_random123_and_the_specification(cupy, minimal_plan):
    from mcrisk.core import rng
    gen = np.random.default_rng(3)
    counters = gen.integers(0, 2 ** 32, size=(10_000, 4), dtype=np.uint64)
    keys = gen.integers(0, 2 ** 32, size=(10_000, 2), dtype=np.uint64)
    counters[:3] = [c for c, _, _ in KAT_PHILOX4X32_10]
    keys[:3] = [k for _, k, _ in KAT_PHILOX4X32_10]
    words = cupy.zeros((10_000, 4), dtype=cupy.uint32)
    probe(cupy, minimal_plan, "philox_kernel",
          (cupy.asarray(counters.astype(np.uint32)), cupy.asarray(keys.astype(np.uint32)), words),
          10_000)
    words = words.get()
    assert [tuple(int(w) for w in row) for row in words[:3]] == [e for _, _, e in
                                                                 KAT_PHILOX4X32_10]
    np.testing.assert_array_equal(words, np.stack(rng.philox4x32_10(counters.T, keys.T), axis=1))


@pytest.mark.gpu
def test_gpu_uniforms_are_bit_identical(cupy, minimal_plan):
    from mcrisk.core import rng
    gen = np.random.default_rng(4)
    n = 10_000
    scenario = gen.integers(0, 2 ** 32, size=n, dtype=np.uint64)
    address = gen.integers(0, 2 ** 64, size=n, dtype=np.uint64)
    draw_index = gen.integers(0, 2 ** 32, size=n, dtype=np.uint64)
    seed = 0x0123_4567_89AB_CDEF
    out = cupy.zeros((n, 2), dtype=cupy.float64)
    lo, hi = seed & 0xFFFFFFFF, seed >> 32
    probe(cupy, minimal_plan, "uniforms_kernel",
          (np.uint32(lo), np.uint32(hi), cupy.asarray(scenario.astype(np.uint32)),
           cupy.asarray(address), cupy.asarray(draw_index.astype(np.uint32)), out), n)
    u1, u2 = rng.uniforms(seed, scenario, address, draw_index)
    np.testing.assert_array_equal(out.get(), np.stack([u1, u2], axis=1))


@pytest.mark.gpu
def test_gpu_ndtri_is_within_rounding_of_numba(cupy, minimal_plan):
    p = np.concatenate([np.random.default_rng(6).random(20_000), [1e-300, 1e-15, 0.5]])
    out = cupy.zeros_like(cupy.asarray(p))
    probe(cupy, minimal_plan, "ndtri_kernel", (cupy.asarray(p), out), p.size)
    np.testing.assert_allclose(out.get(), [numba_distributions.ndtri(x) for x in p],
                               rtol=NDTRI_RTOL, atol=1e-300)


def assert_gpu_parity(plan, seed, first, count):
    """The GPU against Numba on `count` scenarios, to tests/parity.py's table."""
    assert_parity(cuda.simulate_chunk(plan, seed, first, count, keep_nodes=True),
                  numba_backend.simulate_chunk(plan, seed, first, count, keep_nodes=True),
                  ("cuda", "numba"), plan)


@pytest.mark.gpu
@pytest.mark.parametrize("first", [0, 2 ** 32 - 20_000])   # the first and last scenarios
def test_gpu_matches_numba_on_the_reference(cupy, reference_plan, first):
    assert_gpu_parity(reference_plan, 1, first, 20_000)


@pytest.mark.gpu
def test_gpu_matches_numba_on_minimal(cupy, minimal_plan):
    assert_gpu_parity(minimal_plan, 123, 0, 20_000)


@pytest.mark.gpu
@pytest.mark.parametrize("case", range(0, 20, 4))
def test_gpu_matches_numba_on_random_scenarios(cupy, tmp_path, case):
    from mcrisk.plan.compile import compile_scenario
    from mcrisk.scenario import load_scenario
    path = tmp_path / f"random-{case}.toml"
    path.write_text(random_scenario_text(case))
    assert_gpu_parity(compile_scenario(load_scenario(path)), case, 0, 4000)


@pytest.mark.gpu
def test_the_gpu_path_really_ran(cupy, reference_plan):
    backend = select_backend("cuda")
    assert backend.name == "cuda" and backend.module is cuda
    assert select_backend("gpu").name == "cuda"                     # the old name
    before = cuda.launch_count
    metrics, world, nodes = backend.simulate_chunk(reference_plan, 1, 0, 1000)
    assert cuda.launch_count == before + 1
    assert cuda.compile_options(reference_plan) in cuda._modules     # compiled once, cached
    assert nodes is None and metrics.shape == (1000, reference_plan.n_strategies, 6)
    assert isinstance(metrics, np.ndarray) and isinstance(world, np.ndarray)
