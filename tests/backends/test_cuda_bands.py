"""The capacity bands' and hall peaks' reductions in CUDA (kernels/bands.cuh, issue 27) give
band_chunks' numbers bit for bit, and the NumPy specification's (results.bands).

Without a GPU the CUDA text is proved through the host build (the session's `host` fixture,
cuda_bands.HostBands): on node times from a Numba chunk of the reference (24 capacity events:
the insertion sort), the full reference (56 events, a grid too large for dense blocks: the day
keys) and scenarios/positions.toml (160 events: the merge sort; three islands by position), as
simulated and with ties, infinities, NaN and negative times, for every strategy. DeviceBands'
own plumbing (module, argument list, grid, copies back, the device-side key counts) runs
against a stand-in for CuPy whose kernels are the host build's loops; on a GPU (`-m gpu`,
benchmarks/gpu_check.sh) the same parity runs on the device. nvcc compiles the kernels for
sm_90 without a spill.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from mcrisk.backends import cuda, cuda_bands, gpu_unavailable_reason
from mcrisk.backends import numba as numba_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.results import band_chunks, bands
from mcrisk.scenario import load_scenario

from ..helpers import SCENARIOS
from ..random_scenarios import random_scenario_text

SAMPLES = 300
# random_scenarios' cases of fixed performance (one or two halls and islands, 10 to 14 events)
RANDOM_CASES = (2, 3, 5)
PLANS = ("reference-2048", "reference-2048-full", "positions", "positions-first-100",
         *(f"random-{case}" for case in RANDOM_CASES))
# What the reductions and results.bands' functions read of a plan.
EVENT_FIELDS = ("cap_event_node", "cap_event_delta", "cap_event_scale_q", "cap_event_island",
                "power_event_node", "power_event_delta", "power_event_hall")
READ = EVENT_FIELDS + ("island_cap0", "hall_draw0", "hall_cap", "horizon", "n_strategies",
                       "n_nodes")


def first_events(plan, n: int) -> SimpleNamespace:
    """The plan as the reductions read it with only its first n capacity and power events:
    64 < n <= 128 makes the merge sort's passes odd in number, so its result is copied back
    from the buffer (160 events, an even number, leave it in place)."""
    fields = {name: getattr(plan, name) for name in READ}
    fields.update({name: fields[name][..., :n] for name in EVENT_FIELDS})
    return SimpleNamespace(**fields, simulated=plan)


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    found = {name: compile_scenario(load_scenario(SCENARIOS / f"{name}.toml"))
             for name in PLANS[:3]}
    for case in RANDOM_CASES:
        path = tmp_path_factory.mktemp("random") / f"random-{case}.toml"
        path.write_text(random_scenario_text(case))
        found[f"random-{case}"] = compile_scenario(load_scenario(path))
    return {**found, "positions-first-100": first_events(found["positions"], 100)}


def chunk_node_times(plan, perturb: bool) -> np.ndarray:
    """node_times[c, s, v] of a Numba chunk; perturbed: many events on one instant, and
    infinite, NaN and negative times (the sorts' ties and NaN rule, the clamps)."""
    simulated = getattr(plan, "simulated", plan)
    nodes = numba_backend.simulate_chunk(simulated, 3, 1000, SAMPLES, keep_nodes=True)[2]
    if perturb:
        rng = np.random.default_rng(11)
        nodes = np.round(nodes / 7) * 7
        nodes[:40, :, rng.integers(0, plan.n_nodes, 6)] = np.inf
        nodes[40:60, :, rng.integers(0, plan.n_nodes, 4)] = np.nan
        nodes[60:80, :, rng.integers(0, plan.n_nodes, 4)] = -3.5
    return np.ascontiguousarray(nodes)


def dense_grids(plan) -> bool:
    """Whether both grids' blocks are small enough to test capacity_blocks on (the reference,
    positions.toml; not the full reference, whose grids of 320 micro-units span 3e7 values)."""
    total, largest = bands.capacity_grids(plan)
    return max(total.n_bins, largest.n_bins) * (bands.n_band_days(plan) + 1) <= 8_000_000


def reduce_chunk(reductions, plan, nodes, s):
    """{output: array} of strategy s's three reductions by `reductions` (band_chunks, or an
    object with its signatures), on fresh outputs as the collector makes them."""
    c, n_days = nodes.shape[0], bands.n_band_days(plan)
    total, largest = bands.capacity_grids(plan)
    delta, cap0 = bands.to_units(plan.cap_event_delta), bands.to_units(plan.island_cap0)
    out = {"peak": np.empty((c, plan.hall_cap.size)),
           "total_keys": np.empty(c * n_days, np.int64),
           "largest_keys": np.empty(c * n_days, np.int64)}
    reductions.peak_draws(nodes, s, plan.power_event_node, plan.power_event_hall[s],
                          plan.power_event_delta, plan.hall_draw0, out["peak"])
    reductions.capacity_day_keys(nodes, s, plan.cap_event_node, delta, plan.cap_event_island[s],
                                 cap0, n_days, total.lo, total.step, total.n_bins, largest.lo,
                                 largest.step, largest.n_bins, out["total_keys"],
                                 out["largest_keys"])
    if dense_grids(plan):
        out["total_block"] = np.zeros((n_days + 1, total.n_bins), np.int32)
        out["largest_block"] = np.zeros((n_days + 1, largest.n_bins), np.int32)
        reductions.capacity_blocks(nodes, s, plan.cap_event_node, delta,
                                   plan.cap_event_island[s], cap0, n_days, total.lo, total.step,
                                   out["total_block"], largest.lo, largest.step,
                                   out["largest_block"])
    return out


def specification(plan, nodes, s):
    """The same outputs from results.bands' NumPy functions: capacity_pieces counted into
    blocks with np.add.at, written out day by day as keys, and hall_peak_draw."""
    n_days = bands.n_band_days(plan)
    start, end, total, largest = bands.capacity_pieces(plan, s, nodes[:, s, plan.cap_event_node],
                                                       n_days)
    out = {"peak": bands.hall_peak_draw(plan, s, nodes[:, s, :])}
    for name, values, grid in zip(("total", "largest"), (total, largest),
                                  bands.capacity_grids(plan)):
        column = (values - grid.lo) // grid.step
        by_day = np.repeat(column.ravel(), (end - start).ravel()).reshape(-1, n_days)
        out[f"{name}_keys"] = (np.arange(n_days) * grid.n_bins + by_day).ravel()
        if dense_grids(plan):
            block = np.zeros((n_days + 1, grid.n_bins), np.int64)
            np.add.at(block, (start, column), 1)
            np.add.at(block, (end, column), -1)
            out[f"{name}_block"] = block
    return out


@pytest.fixture
def host_bands(host):
    return cuda_bands.HostBands(host)


def test_the_plans_reach_both_sorts_and_both_histograms(plans):
    # what the parity below covers: the insertion sort and the merge sort, several islands,
    # dense blocks and day keys
    events = {name: plan.cap_event_node.size for name, plan in plans.items()}
    assert events["reference-2048"] <= cuda_bands_insertion_up_to() < events["positions"]
    assert 64 < events["positions-first-100"] <= 128
    assert plans["positions-first-100"].power_event_node.size == 100
    assert plans["positions"].island_cap0.size == 3
    assert dense_grids(plans["reference-2048"]) and dense_grids(plans["positions"])
    assert not dense_grids(plans["reference-2048-full"])
    assert not any(bands.has_drawn_performance(plan) for plan in plans.values())
    assert all(dense_grids(plans[f"random-{case}"]) for case in RANDOM_CASES)
    assert {plan.hall_cap.size for plan in plans.values()} == {1, 2}
    assert {plan.island_cap0.size for plan in plans.values()} == {1, 2, 3}


def cuda_bands_insertion_up_to() -> int:
    """INSERTION_UP_TO as kernels/bands.cuh declares it."""
    text = cuda.kernel_file("bands.cuh")
    return int(re.search(r"constexpr int INSERTION_UP_TO = (\d+);", text).group(1))


def test_the_kernels_sort_switch_is_band_chunks():
    assert cuda_bands_insertion_up_to() == band_chunks.INSERTION_UP_TO


@pytest.mark.parametrize("perturb", [False, True], ids=["as simulated", "ties inf nan"])
@pytest.mark.parametrize("name", PLANS)
def test_host_build_gives_numbas_and_the_specifications_numbers(plans, host_bands, name,
                                                                perturb):
    plan = plans[name]
    nodes = chunk_node_times(plan, perturb)
    for s in range(plan.n_strategies):
        got = reduce_chunk(host_bands, plan, nodes, s)
        by_numba = reduce_chunk(band_chunks, plan, nodes, s)
        expected = specification(plan, nodes, s)
        assert got.keys() == by_numba.keys() == expected.keys()
        for key in got:
            np.testing.assert_array_equal(got[key], by_numba[key], f"{name} s={s} {key}")
            np.testing.assert_array_equal(got[key], expected[key], f"{name} s={s} {key}")
        assert got["total_keys"].size and (got["peak"] > 0).any()


@pytest.mark.parametrize("name", PLANS)
def test_events_at_one_instant_apply_together(plans, host_bands, name):
    # Every node at t = 100.25: capacity is the day-0 capacity on days 0 .. 100 and the final
    # one from day 101 (ceil), whatever the events' order; each hall's peak is the larger of
    # its draw at day 0 and after every event, never a sum read halfway through the instant.
    plan = plans[name]
    nodes = np.full((4, plan.n_strategies, plan.n_nodes), 100.25)
    n_days = bands.n_band_days(plan)
    cap0, delta = bands.to_units(plan.island_cap0), bands.to_units(plan.cap_event_delta)
    total_grid, largest_grid = bands.capacity_grids(plan)
    for s in range(plan.n_strategies):
        got = reduce_chunk(host_bands, plan, nodes, s)
        final = [cap0[i] + delta[plan.cap_event_island[s] == i].sum() for i in range(cap0.size)]
        for key, grid, before, after in (
                ("total_keys", total_grid, cap0.sum(), cap0.sum() + delta.sum()),
                ("largest_keys", largest_grid, cap0.max(), max(final))):
            value = np.where(np.arange(n_days) <= 100, before, after)
            expected = np.arange(n_days) * grid.n_bins + (value - grid.lo) // grid.step
            np.testing.assert_array_equal(got[key], np.tile(expected, 4), key)
        for h in range(plan.hall_cap.size):
            mine = np.where(plan.power_event_hall[s] == h, plan.power_event_delta, 0.0)
            after = plan.hall_draw0[h] + np.cumsum(mine)[-1]
            np.testing.assert_array_equal(got["peak"][:, h], max(plan.hall_draw0[h], after))


@pytest.mark.parametrize("times, peak", [
    ((1.0, 1.0, 4.0), 10.0),           # +5 and -5 at one instant: never read between them
    ((1.0, 2.0, 4.0), 15.0),           # a day apart: 15 kW for a day
    ((2.0, 1.0, 4.0), 10.0),           # the removal first
    ((np.nan, np.nan, 4.0), 15.0),     # NaN last, each its own instant (NaN != NaN)
    ((np.inf, np.inf, 4.0), 10.0),     # infinity is an instant like any other
    ((-np.inf, 3.0, 3.0), 15.0),       # before day 0 too; +2 in hall 1 at 3 with the removal
])
def test_peak_draws_known_answers(host_bands, times, peak):
    # hall 0 draws 10 kW at day 0; event 0 adds 5, event 1 removes 5, event 2 adds 2 to hall 1
    # (3 kW at day 0): hall 1's peak is 5 whenever it happens
    nodes = np.array(times)[None, None, :]
    for reductions in (band_chunks, host_bands):
        out = np.empty((1, 2))
        reductions.peak_draws(nodes, 0, np.arange(3, dtype=np.int32),
                              np.array([0, 0, 1], np.int32), np.array([5.0, -5.0, 2.0]),
                              np.array([10.0, 3.0]), out)
        assert out.tolist() == [[peak, 5.0]]


def test_bins_below_a_grids_start_floor_as_numbas(plans, host_bands):
    # Python's floor division, where C truncates: a grid starting half a step past its middle
    # gives the values below it negative bins, rounded down as Numba rounds them
    plan = plans["positions"]
    nodes = chunk_node_times(plan, False)
    n_days = bands.n_band_days(plan)
    grids = bands.capacity_grids(plan)
    lo = [g.lo + (g.n_bins // 2) * g.step + g.step // 2 for g in grids]
    keys = {}
    for reductions in (band_chunks, host_bands):
        keys[reductions] = [np.empty(SAMPLES * n_days, np.int64) for _ in range(2)]
        reductions.capacity_day_keys(
            nodes, 1, plan.cap_event_node, bands.to_units(plan.cap_event_delta),
            plan.cap_event_island[1], bands.to_units(plan.island_cap0), n_days,
            lo[0], grids[0].step, grids[0].n_bins, lo[1], grids[1].step, grids[1].n_bins,
            *keys[reductions])
    for got, expected, grid in zip(keys[host_bands], keys[band_chunks], grids):
        np.testing.assert_array_equal(got, expected)
        bins = got - np.tile(np.arange(n_days) * grid.n_bins, SAMPLES)
        assert (bins < 0).any() and (bins >= 0).any()


def test_blocks_are_added_to_as_numba_adds(plans, host_bands):
    # capacity_blocks counts into the blocks it is given (a collector's chunk after chunk)
    plan = plans["reference-2048"]
    nodes = chunk_node_times(plan, False)
    once = reduce_chunk(host_bands, plan, nodes, 2)
    total, largest = bands.capacity_grids(plan)
    blocks = [once["total_block"].copy(), once["largest_block"].copy()]
    host_bands.capacity_blocks(nodes, 2, plan.cap_event_node, bands.to_units(plan.cap_event_delta),
                               plan.cap_event_island[2], bands.to_units(plan.island_cap0),
                               bands.n_band_days(plan), total.lo, total.step, blocks[0],
                               largest.lo, largest.step, blocks[1])
    np.testing.assert_array_equal(blocks[0], 2 * once["total_block"])
    np.testing.assert_array_equal(blocks[1], 2 * once["largest_block"])


def test_wrong_shapes_are_refused_before_the_c_loops_write(plans, host_bands):
    plan = plans["reference-2048"]
    nodes = chunk_node_times(plan, False)
    with pytest.raises(ValueError, match=r"peak has shape \(300, 1\), not \(300, 2\)"):
        host_bands.peak_draws(nodes, 0, plan.power_event_node, plan.power_event_hall[0],
                              plan.power_event_delta, plan.hall_draw0, np.empty((300, 1)))
    with pytest.raises(ValueError, match="strategy 5 is not one of the 5"):
        host_bands.peak_draws(nodes, 5, plan.power_event_node, plan.power_event_hall[0],
                              plan.power_event_delta, plan.hall_draw0, np.empty((300, 2)))
    with pytest.raises(TypeError, match="takes C-ordered int32"):
        n_days = bands.n_band_days(plan)
        host_bands.capacity_blocks(
            nodes, 0, plan.cap_event_node, bands.to_units(plan.cap_event_delta),
            plan.cap_event_island[0], bands.to_units(plan.island_cap0), n_days, 0, 4_000_000,
            np.zeros((n_days + 1, 1233), np.int64), 0, 4_000_000,
            np.zeros((n_days + 1, 721), np.int32))


# ---- the interface: one table, the C text held to it -----------------------------------------

C_KINDS = {"const double*": "float64*", "double*": "float64*", "const int*": "int32*",
           "int*": "int32*", "const long long*": "int64*", "long long*": "int64*",
           "long long": "int64", "int": "int32"}


def c_parameters(text: str, function: str) -> tuple:
    """(name, kind) of each parameter of extern "C" `function` in `text`."""
    match = re.search(rf'extern "C" (?:__global__ void|int) {function}\((.*?)\)\s*\{{', text,
                      re.DOTALL)
    assert match, function
    out = []
    for parameter in match.group(1).split(","):
        words = parameter.replace("__restrict__", "").replace("*", "* ").split()
        out.append((words[-1], C_KINDS[" ".join(words[:-1]).replace(" *", "*")]))
    return tuple(out)


@pytest.mark.parametrize("reduction", sorted(cuda_bands.BAND_PARAMETERS))
def test_kernels_and_host_entry_points_take_the_tables_parameters(reduction):
    text = cuda.kernel_file("bands.cuh")
    expected = cuda_bands.BAND_PARAMETERS[reduction]
    assert c_parameters(text, f"{reduction}_kernel") == expected
    assert c_parameters(text, f"host_{reduction}") == expected
    assert f"{reduction}_kernel" in cuda.kernel_source()          # in the module's text


def test_the_per_scenario_functions_have_band_chunks_names():
    # read side by side: band_chunks' compiled functions, bands.cuh's per-scenario ones, in order
    numba_names = re.findall(r"^@(?:jit|jit_inline|compiled)\ndef (\w+)\(",
                             Path(band_chunks.__file__).read_text(), re.MULTILINE)
    cuda_names = re.findall(r"^MCRISK_HD [\w:&*]+ (\w+)\(", cuda.kernel_file("bands.cuh"),
                            re.MULTILINE)
    cuda_only = {"floor_divide", "count_into"}
    host_side = {"count_runs", "merge_counts"}        # DayHistogram's merges, not per scenario
    # Numba's faster ways to the same results (a sort by rank, capacities counted in grid
    # steps), held to the sort and divisions bands.cuh mirrors by tests/results/test_band_ranks.py
    numba_only = {"_rank_days", "_count_days", "_on_grid", "_bucket_times"}
    assert [n.lstrip("_") for n in numba_names if n not in host_side | numba_only] == \
        [n for n in cuda_names if n not in cuda_only]


# ---- DeviceBands' plumbing, its kernels run by the host build ---------------------------------

class _HostArray(np.ndarray):
    """A NumPy array that answers .get() like a CuPy array."""

    def get(self):
        return np.asarray(self)


class HostStandInForCupy:
    """Just enough of CuPy for DeviceBands, with the band kernels run by the host build's
    loops: launches are recorded with their grid."""

    def __init__(self, host):
        self.host_bands = cuda_bands.HostBands(host)
        self.launches = []

    def __getattr__(self, name):                 # sort, concatenate, flatnonzero, ...: NumPy's
        return getattr(np, name)

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype).view(_HostArray)

    def asarray(self, array, dtype=None):
        return np.asarray(array, dtype).view(_HostArray)

    def ascontiguousarray(self, array):
        return np.ascontiguousarray(array).view(_HostArray)

    def asnumpy(self, array):
        return np.array(array)

    def RawModule(self, code, options):
        assert code == cuda.kernel_source()
        return _HostModule(self)


class _HostModule:
    def __init__(self, stand_in):
        self.stand_in = stand_in

    def compile(self):
        pass

    def get_function(self, name):
        reduction = name.removesuffix("_kernel")
        parameters = cuda_bands.BAND_PARAMETERS[reduction]
        host = self.stand_in.host_bands

        def launch(grid, block, args):
            for (key, kind), value in zip(parameters, args, strict=True):
                if kind.endswith("*"):
                    assert isinstance(value, _HostArray), key        # on the "device"
                else:
                    assert type(value) is np.dtype(kind).type, key
            count = int(args[1])
            assert (grid[0] - 1) * block[0] < count <= grid[0] * block[0]
            self.stand_in.launches.append(reduction)
            arrays = [np.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
            assert host.library.call(host.functions[reduction], arrays) == 0
        return launch


@pytest.fixture
def stand_in(monkeypatch, host):
    stand_in = HostStandInForCupy(host)
    monkeypatch.setattr(cuda, "_cupy", lambda: stand_in)
    monkeypatch.setattr(cuda, "_modules", {})
    return stand_in


@pytest.mark.parametrize("name", ["reference-2048", "positions"])
def test_device_bands_plumbing_through_a_host_stand_in(plans, stand_in, name):
    plan = plans[name]
    nodes = chunk_node_times(plan, True)
    device = cuda_bands.DeviceBands(plan)
    for s in range(plan.n_strategies):
        got = reduce_chunk(device, plan, stand_in.asarray(nodes), s)   # NumPy outputs back
        expected = reduce_chunk(band_chunks, plan, nodes, s)
        for key in expected:
            assert type(got[key]) is np.ndarray
            np.testing.assert_array_equal(got[key], expected[key], f"s={s} {key}")
    assert stand_in.launches == ["peak_draws", "capacity_day_keys", "capacity_blocks"] * \
        plan.n_strategies
    assert reduce_chunk(device, plan, nodes[:0], 0)["peak"].shape == (0, 2)   # no launch
    assert len(stand_in.launches) == 3 * plan.n_strategies
    # NumPy blocks are added to, as Numba adds (a collector's chunk after chunk)
    once = reduce_chunk(band_chunks, plan, nodes, 1)
    total, largest = bands.capacity_grids(plan)
    blocks = [once["total_block"].copy(), once["largest_block"].copy()]
    device.capacity_blocks(stand_in.asarray(nodes), 1, plan.cap_event_node,
                           bands.to_units(plan.cap_event_delta), plan.cap_event_island[1],
                           bands.to_units(plan.island_cap0), bands.n_band_days(plan), total.lo,
                           total.step, blocks[0], largest.lo, largest.step, blocks[1])
    np.testing.assert_array_equal(blocks[0], 2 * once["total_block"])
    np.testing.assert_array_equal(blocks[1], 2 * once["largest_block"])


def test_device_outputs_stay_on_the_device(plans, stand_in):
    plan = plans["reference-2048"]
    nodes = chunk_node_times(plan, False)
    peak = stand_in.zeros((SAMPLES, 2), np.float64)
    cuda_bands.DeviceBands(plan).peak_draws(stand_in.asarray(nodes), 1, plan.power_event_node,
                                            plan.power_event_hall[1], plan.power_event_delta,
                                            plan.hall_draw0, peak)
    np.testing.assert_array_equal(peak, bands.hall_peak_draw(plan, 1, nodes[:, 1, :]))


def test_device_key_counts_are_count_runs_of_the_sorted_keys(plans, stand_in):
    plan = plans["reference-2048"]
    keys = reduce_chunk(band_chunks, plan, chunk_node_times(plan, True), 3)["total_keys"]
    got = cuda_bands.DeviceBands(plan).sorted_counts(stand_in.asarray(keys))
    expected = band_chunks.count_runs(np.sort(keys))
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
    distinct, counts = got                       # and by their definition
    assert counts.sum() == keys.size and (np.diff(distinct) > 0).all()
    np.testing.assert_array_equal(counts, [(keys == k).sum() for k in distinct])
    assert [a.size for a in cuda_bands.DeviceBands(plan).sorted_counts(keys[:0])] == [0, 0]


def test_a_plan_larger_than_the_module_is_refused(plans, stand_in):
    small, large = plans["reference-2048"], plans["positions"]
    nodes = chunk_node_times(large, False)
    with pytest.raises(ValueError, match="larger than the plan's module: n_events 160 > "
                                         "MAX_EVENTS 24"):
        reduce_chunk(cuda_bands.DeviceBands(small), large, stand_in.asarray(nodes), 0)
    assert stand_in.launches == []


# ---- on a GPU ---------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("name", PLANS)
def test_device_bands_give_numbas_numbers_on_the_gpu(plans, name):
    reason = gpu_unavailable_reason()
    if reason is not None:
        pytest.skip(f"no usable GPU: {reason}")
    plan = plans[name]
    simulated = getattr(plan, "simulated", plan)
    _, _, device_nodes = cuda.simulate_chunk_device(simulated, 3, 1000, 2000, keep_nodes=True)
    nodes = device_nodes.get()
    reductions = cuda_bands.DeviceBands(simulated)
    for s in range(plan.n_strategies):
        got = reduce_chunk(reductions, plan, device_nodes, s)
        expected = reduce_chunk(band_chunks, plan, nodes, s)
        for key in expected:
            np.testing.assert_array_equal(got[key], expected[key], f"s={s} {key}")
        counted = reductions.sorted_counts(got["total_keys"])
        for a, b in zip(counted, band_chunks.count_runs(np.sort(expected["total_keys"]))):
            np.testing.assert_array_equal(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["reference-2048", "positions"])
def test_a_cuda_run_reduces_its_bands_on_the_gpu(name, monkeypatch):
    # A --backend cuda run: the Backend attaches DeviceBands to each chunk's device_chunk and
    # the band collector reduces there; the same bands and hall power as Numba's.
    reason = gpu_unavailable_reason()
    if reason is not None:
        pytest.skip(f"no usable GPU: {reason}")
    from mcrisk.backends import select_backend
    from mcrisk.backends.chunks import simulate

    plan = compile_scenario(load_scenario(SCENARIOS / f"{name}.toml"))
    monkeypatch.setattr(bands, "COMPILED_FROM_NODE_TIMES", 0)
    results = []
    for backend in ("cuda", "numba"):
        collector = bands.BandCollector(plan)
        simulate(plan, 3000, 7, select_backend(backend), chunk_size=1500,
                 chunk_hooks=(collector,))
        results.append((collector.bands(), collector.hall_power()))
    (device_bands, device_power), (numba_bands, numba_power) = results
    for field in ("total", "largest", "p_below_baseline"):
        assert np.array_equal(getattr(device_bands, field), getattr(numba_bands, field)), field
    assert device_power == numba_power


# ---- the device compile -----------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("nvcc") is None,
                    reason="nvcc is not installed: the band kernels' device compile is not "
                           "checked here")
@pytest.mark.nvcc
def test_band_kernels_compile_for_the_device_without_spilling(tmp_path, plans):
    # bands.cuh alone, with the options cuda.py hands NVRTC for the plan of the most events
    # (seconds; tests/backends/test_cuda_host.py compiles the whole module, these kernels in it,
    # with warnings as errors: alone, compat.cuh's LANES would warn as unread)
    source = tmp_path / "bands.cu"
    source.write_text(cuda.kernel_source("bands.cuh"))
    done = subprocess.run(
        ["nvcc", "-cubin", "-arch=sm_90", "-Xptxas", "-v",
         *cuda.compile_options(plans["positions"]), "-x", "cu", str(source),
         "-o", str(tmp_path / "bands.cubin")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    for reduction in cuda_bands.BAND_PARAMETERS:
        report = done.stderr.split(f"Compiling entry function '{reduction}_kernel'")[1]
        report = report.split("Compiling entry function")[0]
        assert "0 bytes spill stores, 0 bytes spill loads" in report, report
        assert int(re.search(r"Used (\d+) registers", report).group(1)) <= 104


@pytest.mark.parametrize("name", ["reference-2048", "positions"])
def test_a_cuda_host_run_reduces_its_bands_by_the_cuda_code(name, monkeypatch):
    # The cuda-host backend hands its node times over as the cuda backend does
    # (cuda_host.HostChunk, the device_chunk of cuda.HostCopy), so a run's capacity blocks and
    # hall peaks go through kernels/bands.cuh (the host build): the same bands and hall power
    # as Numba's reductions of the same chunks. Small chunks take the compiled path here
    # (COMPILED_FROM_NODE_TIMES 0), as a full-size chunk does.
    from mcrisk.backends import cuda_host, select_backend
    from mcrisk.backends.chunks import simulate

    plan = compile_scenario(load_scenario(SCENARIOS / f"{name}.toml"))
    monkeypatch.setattr(bands, "COMPILED_FROM_NODE_TIMES", 0)
    calls = {"capacity_blocks": 0, "capacity_day_keys": 0, "peak_draws": 0}
    for method in calls:
        original = getattr(cuda_host.HostChunk, method)

        def counted(self, *arguments, _original=original, _method=method):
            calls[_method] += 1
            return _original(self, *arguments)

        monkeypatch.setattr(cuda_host.HostChunk, method, counted)
    results = []
    for backend in ("cuda-host", "numba"):
        collector = bands.BandCollector(plan)
        simulate(plan, 300, 7, select_backend(backend), chunk_size=150, chunk_hooks=(collector,))
        results.append((collector.bands(), collector.hall_power()))
    # the reference's grids are dense (blocks); positions' total needs day keys (its largest
    # island's grid is dense: ExactHistogram.add_keys)
    capacity = "capacity_day_keys" if name == "positions" else "capacity_blocks"
    assert calls == {**{key: 0 for key in calls}, capacity: 2 * plan.n_strategies,
                     "peak_draws": 2 * plan.n_strategies}
    (device_bands, device_power), (numba_bands, numba_power) = results
    for field in ("total", "largest", "p_below_baseline"):
        assert np.array_equal(getattr(device_bands, field), getattr(numba_bands, field)), field
    assert device_power == numba_power
