"""The milestones' reductions in CUDA (kernels/milestones.cu, issue 27), proved on the host
build: from the node times of a Numba chunk, the host build's milestone times, critical-path
counts, bins (counts, smallest and largest, non-finite) and tails equal Numba's
(mcrisk.results.milestone_chunks) bit for bit, and the NumPy specification's (milestones.
milestone_times, critical_nodes) and a brute-force binning's. On the reference, the full
reference and the contingent scenario; with ties made on purpose (node times rounded to the
day) and with times that never come (NaN, +inf). The device itself runs the same text
(benchmarks/gpu_check.sh); here nvcc compiles it for sm_90, without spilling.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mcrisk.backends import (
    cuda,
    cuda_host,
    cuda_milestones,
    gpu_unavailable_reason,
    select_backend,
)
from mcrisk.backends.chunks import simulate
from mcrisk.core.definitions import NODE_CREW
from mcrisk.plan.compile import compile_scenario
from mcrisk.results import milestone_chunks
from mcrisk.results.milestone_store import MilestoneBins
from mcrisk.results.milestones import (
    CREW_TOLERANCE,
    MilestoneCollector,
    _PathArrays,
    _reduce,
    critical_nodes,
    definitions,
)
from mcrisk.scenario import load_scenario

from ..helpers import SCENARIOS

CHUNK = 300


@pytest.fixture(scope="module")
def milestone_host(tmp_path_factory) -> cuda_host.MilestoneHostLibrary:
    if cuda_host.host_compiler() is None:
        pytest.fail("no C++ compiler (g++ or $CXX): the CUDA reductions cannot be checked")
    build = cuda_host.build_host_library(tmp_path_factory.mktemp("cuda_milestones"),
                                         cuda_milestones.MILESTONE_SOURCE)
    return cuda_host.MilestoneHostLibrary(*build)


@pytest.fixture(scope="module", params=["reference-2048.toml", "reference-2048-full.toml",
                                        "contingent.toml"])
def case(request):
    """(plan, scenario, world, node_times) of a Numba chunk of CHUNK scenarios (the contingent
    strategies' branches taken, as a run takes them)."""
    scenario = load_scenario(SCENARIOS / request.param)
    plan = compile_scenario(scenario)
    _, world, node_times = select_backend("numba").simulate_chunk(plan, 7, 1000, CHUNK, True)
    return plan, scenario, world, node_times


def with_ties_and_gaps(node_times: np.ndarray) -> np.ndarray:
    """The chunk's node times rounded to the day (dependencies, completion nodes and crews'
    rows tie), and in some scenarios nodes that never come (NaN, +inf)."""
    out = np.round(node_times)
    gen = np.random.default_rng(3)
    rows = gen.choice(out.shape[0], size=out.shape[0] // 5, replace=False)
    for i in rows:
        nodes = gen.choice(out.shape[2], size=3, replace=False)
        out[i, :, nodes] = np.nan if i % 2 else np.inf
    return out


def near_the_tolerance(plan, node_times: np.ndarray) -> np.ndarray:
    """Every other crew row of each strategy later by 0.75 of the crews' tolerance (in even
    scenarios: still matched) or 1.25 of it (odd: no longer), so a crew row's match to the row
    before it falls either side of the rule's `<=`."""
    out = node_times.copy()
    for s in range(plan.n_strategies):
        rows = np.flatnonzero(plan.node_kind[s] == NODE_CREW)[::2]
        out[0::2, s, rows[:, None]] += 0.75 * CREW_TOLERANCE
        out[1::2, s, rows[:, None]] += 1.25 * CREW_TOLERANCE
    return out


def variant_of(plan, node_times: np.ndarray, variant: str) -> np.ndarray:
    if variant == "ties and gaps":
        return with_ties_and_gaps(node_times)
    if variant == "crews near the tolerance":
        return near_the_tolerance(plan, node_times)
    return node_times


VARIANTS = ["as simulated", "ties and gaps", "crews near the tolerance"]


def run(reduce, plan, scenario, world, node_times, s):
    """(times[m, c], critical[m]) of strategy s by `reduce` (chunk_milestones' signature)."""
    items = definitions(plan, scenario)[s]
    path = _PathArrays.of(plan, s, items)
    times = np.full((len(items), node_times.shape[0]), -1.0)
    critical = np.zeros(len(items), np.int64)
    reduce(node_times, world, s, path.member_ptr, path.members, path.first, path.is_ancestor,
           plan.dep_ptr, plan.dep_idx, path.is_crew, path.crew_rows, plan.node_base_const,
           plan.node_base_q, plan.node_add_const, plan.node_add_q,
           plan.completion_node.astype(np.int64), CREW_TOLERANCE, times, critical)
    return times, critical


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint64)


@pytest.mark.parametrize("variant", VARIANTS)
def test_milestone_times_and_critical_counts_are_numbas(milestone_host, case, variant):
    plan, scenario, world, node_times = case
    node_times = variant_of(plan, node_times, variant)
    waited = 0
    for s in range(plan.n_strategies):
        got = run(milestone_host.chunk_milestones, plan, scenario, world, node_times, s)
        expected = run(milestone_chunks.chunk_milestones, plan, scenario, world, node_times, s)
        np.testing.assert_array_equal(bits(got[0]), bits(expected[0]))
        np.testing.assert_array_equal(got[1], expected[1])
        # and the NumPy specification's, computed another way (node-major, vectorized)
        items = definitions(plan, scenario)[s]
        by_node = np.ascontiguousarray(node_times[:, s, :].T)
        with np.errstate(invalid="ignore"):
            spec = _reduce(items, by_node, np.min, np.max)
        np.testing.assert_array_equal(bits(got[0]), bits(spec))
        with np.errstate(invalid="ignore"):                # NaN and inf crews' rows
            on_path = critical_nodes(plan, s, node_times[:, s, :], world)
        np.testing.assert_array_equal(
            got[1], [on_path[:, list(item.members)].any(axis=1).sum() for item in items])
        waited += int(got[1].sum())
    assert waited > 0                                     # the paths were walked


def test_the_chunk_has_what_the_rules_are_about(case):
    # Ties between completion nodes and dependencies, crews' rows, times that never come.
    plan, _, _, node_times = case
    tied = with_ties_and_gaps(node_times)
    ends = tied[:, :, plan.completion_node]
    assert (ends == np.nanmax(np.where(np.isinf(ends), np.nan, ends), axis=2,
                              keepdims=True)).sum(axis=2).max() > 1
    assert np.isnan(tied).any() and np.isinf(tied).any()


def bins_of(first_rows: np.ndarray, n_bins: int) -> MilestoneBins:
    return MilestoneBins(first_rows, 0.01, n_bins)


def brute_force_bins(bins: MilestoneBins, rows: np.ndarray):
    """(counts, low, high, non_finite, tail_items, tail_times) of rows alone into fresh bins:
    the documented rule element by element."""
    m, n = rows.shape
    n_bins = bins.counts.shape[1]
    counts = np.zeros((m, n_bins), np.int64)
    low, high = np.full((m, n_bins), np.inf), np.full((m, n_bins), -np.inf)
    non_finite = np.zeros(m, np.int64)
    items, times = [], []
    for k in range(m):
        for i in range(n):
            t = float(rows[k, i])
            if not np.isfinite(t):
                non_finite[k] += 1
                continue
            j = (int(np.floor(t / bins.bin_days)) >> int(bins.exponent[k])) - int(bins.origin[k])
            if 0 <= j < n_bins:
                counts[k, j] += 1
                low[k, j], high[k, j] = min(low[k, j], t), max(high[k, j], t)
            else:
                items.append(k)
                times.append(t)
    return counts, low, high, non_finite, np.array(items, np.int64), np.array(times)


def add(add_to_bins, bins: MilestoneBins, rows: np.ndarray):
    return add_to_bins(np.ascontiguousarray(rows), bins.bin_days, bins.exponent, bins.origin,
                       bins.counts, bins.low, bins.high, bins.non_finite)


@pytest.mark.parametrize("variant", ["as simulated", "ties and gaps", "below zero"])
def test_bins_and_tails_are_numbas(milestone_host, case, variant):
    plan, scenario, world, node_times = case
    if variant == "ties and gaps":
        node_times = with_ties_and_gaps(node_times)
    times, _ = run(milestone_chunks.chunk_milestones, plan, scenario, world, node_times, 0)
    if variant == "below zero":           # bins of negative times: floor, not truncation
        times = times - np.median(times, axis=1, keepdims=True)
        assert (times < 0).any() and (times > 0).any()
    # narrow windows from the first 5 scenarios, 64 bins: many tails, bins shared
    host_bins, numba_bins = bins_of(times[:, :5], 64), bins_of(times[:, :5], 64)
    assert (host_bins.exponent > 0).any()
    half = times.shape[1] // 2
    for part in (times[:, :half], times[:, half:]):         # the second into filled bins
        got = add(milestone_host.add_to_bins, host_bins, part)
        expected = add(milestone_chunks.add_to_bins, numba_bins, part)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(bits(got[1]), bits(expected[1]))
        assert got[0].size > 0
    filled = numba_bins.counts > 0
    np.testing.assert_array_equal(host_bins.counts, numba_bins.counts)
    np.testing.assert_array_equal(host_bins.non_finite, numba_bins.non_finite)
    np.testing.assert_array_equal(bits(host_bins.low[filled]), bits(numba_bins.low[filled]))
    np.testing.assert_array_equal(bits(host_bins.high[filled]), bits(numba_bins.high[filled]))
    # bins left empty: +inf and -inf, so a later time is both bounds on the device too
    assert (host_bins.low[~filled] == np.inf).all() and (host_bins.high[~filled] == -np.inf).all()
    if variant == "ties and gaps":
        assert host_bins.non_finite.sum() > 0
    # and the rule itself, all the chunk at once
    slow = brute_force_bins(host_bins, times)
    whole = bins_of(times[:, :5], 64)
    tail = add(milestone_host.add_to_bins, whole, times)
    np.testing.assert_array_equal(whole.counts, slow[0])
    np.testing.assert_array_equal(whole.low[whole.counts > 0], slow[1][slow[0] > 0])
    np.testing.assert_array_equal(whole.high[whole.counts > 0], slow[2][slow[0] > 0])
    np.testing.assert_array_equal(whole.non_finite, slow[3])
    np.testing.assert_array_equal(tail[0], slow[4])
    np.testing.assert_array_equal(tail[1], slow[5])


def test_host_build_is_warning_free(milestone_host):
    assert milestone_host.build_log == "", milestone_host.build_log


def test_tails_are_put_back_in_row_order():
    # the device appends tail times in any order; sorted by k * n + i they are Numba's list
    n = 7
    at = np.array([15, 2, 9, 0, 20])
    times = np.array([1.5, 0.2, 0.9, 0.0, 2.0])
    items, ordered = cuda_milestones.tails_in_row_order(at, times, n)
    assert items.tolist() == [0, 0, 1, 2, 2] and ordered.tolist() == [0.0, 0.2, 0.9, 1.5, 2.0]


class CountedChunk(cuda_host.HostChunk):
    """The host build's chunk, counting its calls."""

    calls = 0

    def chunk_milestones(self, s, *arguments):
        self.calls += 1
        super().chunk_milestones(s, *arguments)


def test_the_collector_reduces_where_the_chunk_says(milestone_host, case):
    # A chunk whose node times carry a device chunk (cuda.simulate_chunk's) is reduced by it,
    # not by Numba, with the same summary.
    plan, scenario, world, node_times = case
    numba_way = MilestoneCollector(plan, scenario, keep_exact=100, n_bins=64)
    device_way = MilestoneCollector(plan, scenario, keep_exact=100, n_bins=64)
    for first in (0, 150):
        part, part_world = node_times[first:first + 150], world[first:first + 150]
        numba_way(first, None, part_world, part)
        carried = cuda.with_device_chunk(part.copy(), CountedChunk(part, part_world,
                                                                   milestone_host))
        device_way(first, None, part_world, carried)
        assert carried.device_chunk.calls == plan.n_strategies
    assert device_way.summary() == numba_way.summary()


def test_a_cuda_host_run_reduces_its_milestones_by_the_cuda_code(case, monkeypatch):
    # The cuda-host backend hands its node times over as the cuda backend does, so a run's
    # milestones go through kernels/milestones.cu (the host build): the same summary as Numba's.
    plan, scenario, _, _ = case
    calls = []
    original = cuda_host.MilestoneHostLibrary.chunk_milestones
    monkeypatch.setattr(cuda_host.MilestoneHostLibrary, "chunk_milestones",
                        lambda *a: calls.append(1) or original(*a))
    summaries = []
    for name in ("cuda-host", "numba"):
        collector = MilestoneCollector(plan, scenario, keep_exact=200, n_bins=64)
        simulate(plan, 400, 5, select_backend(name), chunk_size=200, chunk_hooks=(collector,))
        summaries.append(collector.summary())
    assert len(calls) == (0 if plan.contingencies else 2 * plan.n_strategies)
    assert summaries[0] == summaries[1]


def test_a_view_of_the_host_copy_carries_no_device_chunk(case):
    _, _, _, node_times = case
    carried = cuda.with_device_chunk(node_times.copy(), object())
    assert carried.device_chunk is not None
    assert getattr(carried[:10], "device_chunk", None) is None
    assert getattr(np.ascontiguousarray(carried), "device_chunk", None) is None


# ---- the device launchers, with the host build standing in for CuPy ------------------------

class _HostArray(np.ndarray):
    """A NumPy array that answers .get() like a CuPy array."""

    def get(self, out=None):
        if out is None:
            return np.asarray(self).copy()
        np.copyto(out, self)
        return out


class MilestoneStandInForCupy:
    """Just enough of CuPy for cuda.py's milestone launchers, each kernel run by its host
    entry (the same parameters): their plumbing (batches, marks, types, grids, the tails'
    two passes) runs here, not only on a lent GPU."""

    def __init__(self, library):
        self.library = library
        self.launches = []

    def __getattr__(self, name):                  # uint64, int64 ...: NumPy's
        return getattr(np, name)

    def _wrap(self, array):
        return np.asarray(array).view(_HostArray)

    def empty(self, shape, dtype=np.float64):
        return self._wrap(np.empty(shape, dtype))

    def zeros(self, shape, dtype=np.float64):
        return self._wrap(np.zeros(shape, dtype))

    def full(self, shape, value, dtype=np.float64):
        return self._wrap(np.full(shape, value, dtype))

    def asarray(self, array, dtype=None):
        return self._wrap(np.asarray(array, dtype))

    def ascontiguousarray(self, array, dtype=None):
        return self._wrap(np.ascontiguousarray(array, dtype))

    def RawModule(self, code, options):
        assert code == cuda.kernel_source(cuda_milestones.MILESTONE_SOURCE)
        assert options == cuda.MILESTONE_OPTIONS
        return _MilestoneModule(self)


class _MilestoneModule:
    def __init__(self, stand_in):
        self.stand_in = stand_in

    def compile(self):
        pass

    def get_function(self, name):
        def launch(grid, block, args):
            parameters = cuda_milestones.ENTRY_PARAMETERS[name]
            for (parameter, kind), value in zip(parameters, args, strict=True):
                expected = np.dtype(kind.rstrip("*"))
                assert (value.dtype if kind.endswith("*") else type(value)) in \
                    (expected, expected.type), parameter
            threads = dict(zip([p for p, _ in parameters], args))
            threads = int(threads.get("n", 0)) * int(threads.get("m", 1)) or \
                int(threads.get("size", 1))
            assert (grid[0] - 1) * block[0] < max(threads, 1) <= grid[0] * block[0]
            self.stand_in.launches.append(name)
            self.stand_in.library._call(name, [np.asarray(a) if isinstance(a, np.ndarray)
                                               else a for a in args])
        return launch


def by_device(chunk):
    """chunk.chunk_milestones with milestone_chunks.chunk_milestones' signature (the node
    times and world it is given are the chunk's own, on the device)."""
    return lambda _node_times, _world, s, *rest: chunk.chunk_milestones(s, *rest)


@pytest.fixture
def stand_in(monkeypatch, milestone_host):
    stand_in = MilestoneStandInForCupy(milestone_host)
    monkeypatch.setattr(cuda, "_cupy", lambda: stand_in)
    monkeypatch.setattr(cuda, "_modules", {})
    return stand_in


def test_the_device_launchers_give_numbas_numbers(stand_in, case, monkeypatch):
    plan, scenario, world, node_times = case
    node_times = with_ties_and_gaps(node_times)
    # marks for 128 scenarios a launch: the chunk in several batches
    monkeypatch.setattr(cuda_milestones, "MARK_BYTES", 8 * plan.n_nodes * 128)
    chunk = cuda.DeviceChunk(stand_in.asarray(node_times), stand_in.asarray(world))
    for s in range(plan.n_strategies):
        got = run(by_device(chunk), plan, scenario, world, node_times, s)
        expected = run(milestone_chunks.chunk_milestones, plan, scenario, world, node_times, s)
        np.testing.assert_array_equal(bits(got[0]), bits(expected[0]))
        np.testing.assert_array_equal(got[1], expected[1])
    assert stand_in.launches.count("chunk_milestones_kernel") == \
        plan.n_strategies * -(-CHUNK // 128)
    times = expected[0]
    bins = bins_of(times[:, :5], 64)
    device = {name: stand_in.asarray(getattr(bins, name))
              for name in ("counts", "low", "high", "non_finite")}
    got = cuda.add_to_bins_device(stand_in.asarray(times), bins.bin_days, bins.exponent,
                                  bins.origin, device["counts"], device["low"], device["high"],
                                  device["non_finite"])
    expected = add(milestone_chunks.add_to_bins, bins, times)
    assert got[0].size > 0
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(bits(got[1]), bits(expected[1]))
    filled = bins.counts > 0
    np.testing.assert_array_equal(device["counts"], bins.counts)
    np.testing.assert_array_equal(device["non_finite"], bins.non_finite)
    np.testing.assert_array_equal(bits(device["low"][filled]), bits(bins.low[filled]))
    np.testing.assert_array_equal(bits(device["high"][filled]), bits(bins.high[filled]))


# ---- the sources, read side by side ---------------------------------------------------------

def cuda_functions(text: str) -> list[str]:
    return re.findall(r'^(?:MCRISK_HD|extern "C"(?: __global__)?) [\w:&* ]+? (\w+)\(', text, re.MULTILINE)


# milestone_chunks' functions by the CUDA functions that do the same for one scenario (Numba's
# for a tile of scenarios at once); set_windows (once a run, from the first scenarios) and
# bins_order_statistics (once, for the summary) stay on the host.
CUDA_NAMES = {"_max_nan": "max_nan", "_tile_drivers": "driver",
              "_tile_milestone_times": "milestone_times",
              "_walk_critical_paths": "walk_critical_path",
              "chunk_milestones": "scenario_milestones", "add_to_bins": "add_to_bin"}
CUDA_ONLY = ("add_one", "take_slot", "lower_to", "raise_to", "window_bin", "clear_empty_bin",
             "add_to_tail")


def test_the_cuda_functions_are_numbas_in_order():
    numba = re.findall(r"^@(?:jit|compiled)\s*\ndef (\w+)\(",
                       Path(milestone_chunks.__file__).read_text(), re.MULTILINE)
    assert set(numba) - set(CUDA_NAMES) == {"set_windows", "bins_order_statistics"}
    in_cuda = cuda_functions(cuda.kernel_file("milestones.cuh"))
    assert [name for name in in_cuda if name not in CUDA_ONLY] == \
        [CUDA_NAMES[name] for name in numba if name in CUDA_NAMES]


def parameters_of(text: str, macro: str) -> list[str]:
    body = re.search(rf"#define {macro}\s*\\\n((?:.*\\\n)*.*)", text).group(1)
    return [re.split(r"[\s*]+", p.strip())[-1] for p in body.replace("\\", "").split(",")]


def test_the_parameter_tables_are_the_sources():
    header = cuda.kernel_file("milestones.cuh")
    assert parameters_of(header, "MCRISK_PATH_PARAMS") == \
        [name for name, _ in cuda_milestones.PATH_PARAMETERS]
    source = cuda.kernel_file("milestones.cu")
    for name, parameters in cuda_milestones.ENTRY_PARAMETERS.items():
        for entry in (name, cuda_milestones.HOST_NAMES[name]):
            found = re.search(rf"void {entry}\((.*?)\)", source, re.DOTALL).group(1)
            found = found.replace("MCRISK_PATH_PARAMS", ", ".join(
                name for name, _ in cuda_milestones.PATH_PARAMETERS))
            assert [re.split(r"[\s*]+", p.strip())[-1] for p in found.split(",")] == \
                [p for p, _ in parameters]


@pytest.mark.skipif(shutil.which("nvcc") is None,
                    reason="nvcc is not installed: the device compile of kernels/milestones.cu "
                           "is not checked here")
@pytest.mark.nvcc
def test_the_reductions_compile_for_the_device_without_spilling(tmp_path):
    source = tmp_path / "milestones.cu"
    source.write_text(cuda.kernel_source(cuda_milestones.MILESTONE_SOURCE))
    done = subprocess.run(
        ["nvcc", "-cubin", "-arch=sm_90", "-Werror", "all-warnings", "-Xptxas", "-v",
         *cuda.MILESTONE_OPTIONS, "-x", "cu", str(source),
         "-o", str(tmp_path / "milestones.cubin")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    for kernel in cuda_milestones.ENTRY_PARAMETERS:
        report = done.stderr.split(f"Compiling entry function '{kernel}'")[1]
        report = report.split("Compiling entry function")[0]
        assert "0 bytes spill stores, 0 bytes spill loads" in report, report


# ---- on a GPU (benchmarks/gpu_check.sh) -----------------------------------------------------

NO_GPU = gpu_unavailable_reason()


@pytest.fixture
def cupy():
    if NO_GPU is not None:
        pytest.skip(f"no usable GPU: {NO_GPU}")
    import cupy
    return cupy


@pytest.mark.gpu
def test_gpu_milestones_are_numbas_on_the_devices_node_times(cupy, case):
    # The device's node times (within 1e-13 of Numba's, tests/backends/test_cuda.py) reduced
    # on the device equal Numba's reductions of the same times copied to the host, bit for bit
    # (comparisons, sums and a division: no transcendental function).
    plan, scenario, _, _ = case
    _, world, node_times = cuda.simulate_chunk_device(plan, 11, 5000, 3000, keep_nodes=True)
    host_times, host_world = node_times.get(), world.get()
    for variant in ("as simulated", "ties and gaps"):
        if variant == "ties and gaps":
            host_times = with_ties_and_gaps(host_times)
            node_times = cupy.asarray(host_times)
        chunk = cuda.DeviceChunk(node_times, world)
        for s in range(plan.n_strategies):
            got = run(by_device(chunk), plan, scenario, host_world, host_times, s)
            expected = run(milestone_chunks.chunk_milestones, plan, scenario, host_world,
                           host_times, s)
            np.testing.assert_array_equal(bits(got[0]), bits(expected[0]))
            np.testing.assert_array_equal(got[1], expected[1])
        times = expected[0]
        bins = bins_of(times[:, :5], 64)
        device = {name: cupy.asarray(getattr(bins, name))
                  for name in ("counts", "low", "high", "non_finite")}
        got = cuda.add_to_bins_device(cupy.asarray(times), bins.bin_days, bins.exponent,
                                      bins.origin, device["counts"], device["low"],
                                      device["high"], device["non_finite"])
        expected = add(milestone_chunks.add_to_bins, bins, times)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(bits(got[1]), bits(expected[1]))
        filled = bins.counts > 0
        np.testing.assert_array_equal(device["counts"].get(), bins.counts)
        np.testing.assert_array_equal(device["non_finite"].get(), bins.non_finite)
        # bounds: equal as numbers (the device keeps either zero where -0.0 and 0.0 share a bin)
        np.testing.assert_array_equal(device["low"].get()[filled], bins.low[filled])
        np.testing.assert_array_equal(device["high"].get()[filled], bins.high[filled])


@pytest.mark.gpu
def test_gpu_run_reduces_its_milestones_on_the_device(cupy, case, monkeypatch):
    # A cuda chunk's node times reach the collector with their device chunk, which reduces
    # them: the summary equals the one from the same node times on the host (Numba).
    plan, scenario, _, _ = case
    calls = []
    original = cuda.chunk_milestones_device
    monkeypatch.setattr(cuda, "chunk_milestones_device",
                        lambda *a: calls.append(1) or original(*a))
    on_device = MilestoneCollector(plan, scenario, keep_exact=1000, n_bins=256)
    on_host = MilestoneCollector(plan, scenario, keep_exact=1000, n_bins=256)
    backend = select_backend("cuda")
    for first in (0, 2000):
        _, world, nodes = backend.simulate_chunk(plan, 3, first, 2000, keep_nodes=True)
        on_device(first, None, world, nodes)
        on_host(first, None, world, np.array(nodes))
    assert len(calls) == (0 if plan.contingencies else 2 * plan.n_strategies)
    assert on_device.summary() == on_host.summary()
