"""Capacity bands by streaming (mcrisk.results.bands) against brute force and hand calculations.

The brute force rebuilds C(d) for every scenario and day straight from the definition
(capacity at day d = day-0 capacity + every event with time <= d) and takes
numpy.quantile(method='inverted_cdf') over all scenarios at once.
"""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.results import band_chunks, band_histograms, bands as bands_module
from mcrisk.results.bands import (MAX_BINS, BandCollector, BinnedHistogram, ExactHistogram, Grid,
                                 hall_peak_draw, inverted_cdf_index, merged_quantiles)
from mcrisk.scenario import load_scenario
from mcrisk.backends.chunks import simulate

from ..conftest import MINIMAL

QS = (0.1, 0.5, 0.9)


def run_with_nodes(plan, samples, chunk_size, seed=5):
    """(BandCollector fed chunk by chunk, node_times[n, s, v] kept whole for the brute force)."""
    collector = BandCollector(plan)
    kept = []
    simulate(plan, samples, seed, select_backend("cpu"), chunk_size=chunk_size,
             chunk_hooks=(collector, lambda first, m, w, nodes: kept.append(nodes.copy())))
    return collector, np.concatenate(kept)


def brute_force_capacity(plan, node_times, s):
    """(total[n, d], largest_island[n, d]) at days 0 .. floor(H), by the definition."""
    days = np.arange(int(np.floor(plan.horizon)) + 1)
    applied = node_times[:, s, plan.cap_event_node][:, :, None] <= days[None, None, :]
    islands = np.stack([
        plan.island_cap0[i] + np.einsum("nkd,k->nd", applied.astype(float),
                                        np.where(plan.cap_event_island[s] == i,
                                                 plan.cap_event_delta, 0.0))
        for i in range(plan.island_cap0.size)])
    return islands.sum(axis=0), islands.max(axis=0)


def test_reference_bands_equal_numpy_inverted_cdf_on_the_full_matrix(reference_plan):
    plan = reference_plan
    collector, nodes = run_with_nodes(plan, samples=600, chunk_size=97)   # 7 uneven chunks
    bands = collector.bands()
    assert bands.samples == 600
    assert bands.days.tolist() == list(range(541))
    for s in range(plan.n_strategies):
        total, largest = brute_force_capacity(plan, nodes, s)
        np.testing.assert_allclose(bands.total[s],
                                   np.quantile(total, QS, axis=0, method="inverted_cdf").T,
                                   rtol=0, atol=1e-6)
        np.testing.assert_allclose(bands.largest[s],
                                   np.quantile(largest, QS, axis=0, method="inverted_cdf").T,
                                   rtol=0, atol=1e-6)
        np.testing.assert_allclose(bands.p_below_baseline[s],
                                   (total < plan.baseline - 1e-6).mean(axis=0))


def test_bands_of_fixed_durations_match_a_hand_calculation(tiny):
    # swap-on-day: E1, E2 (128 each) drain at day 10. R3 is empty at day 0, retrofitted in
    # 10 days; racks arrive at 20, install 2 days, one 5-day burn-in: accepted at day 27
    # (fabric ready at 15 + 3 = 18). swap-gated: each E drains when its rack is accepted.
    plan = compile_scenario(load_scenario(tiny()))
    collector, _ = run_with_nodes(plan, samples=50, chunk_size=16)
    bands = collector.bands()
    days = bands.days
    on_day = np.where(days < 10, 256.0, np.where(days < 27, 0.0, 360.0))
    gated = np.where(days < 27, 256.0, 360.0)          # drain and acceptance apply together
    for q in range(3):
        np.testing.assert_array_equal(bands.total[0, :, q], on_day)
        np.testing.assert_array_equal(bands.total[1, :, q], gated)
        np.testing.assert_array_equal(bands.largest[0, :, q],
                                      np.where(days < 10, 256.0, np.where(days < 27, 0.0, 360.0)))
        np.testing.assert_array_equal(bands.largest[1, :, q], np.where(days < 27, 256.0, 360.0))


def test_capacities_off_any_coarse_grid_use_the_exact_fallback(tiny):
    path = tiny(delay='{ dist = "uniform", min = 0, max = 20 }',
                attempt='{ dist = "triangular", min = 3, mode = 5, max = 9 }', fail_first=0.3)
    path.write_text(path.read_text().replace("h100_eq_per_gpu = 2.5", "h100_eq_per_gpu = 2.3456789"))
    plan = compile_scenario(load_scenario(path))
    collector, nodes = run_with_nodes(plan, samples=400, chunk_size=64)
    # a micro-unit grid: far too many values for dense blocks, counted in the sparse table
    assert isinstance(collector.total[0], bands_module.DayHistogram)
    bands = collector.bands()
    for s in range(plan.n_strategies):
        total, largest = brute_force_capacity(plan, nodes, s)
        np.testing.assert_allclose(bands.total[s],
                                   np.quantile(total, QS, axis=0, method="inverted_cdf").T,
                                   rtol=0, atol=1e-6)
        np.testing.assert_allclose(bands.largest[s],
                                   np.quantile(largest, QS, axis=0, method="inverted_cdf").T,
                                   rtol=0, atol=1e-6)


def test_memory_holds_one_count_per_day_and_distinct_value(reference_plan):
    small, _ = run_with_nodes(reference_plan, samples=200, chunk_size=200)
    large, _ = run_with_nodes(reference_plan, samples=2000, chunk_size=500)
    for s in range(reference_plan.n_strategies):
        for histogram in (small.total[s], large.total[s]):
            assert all(c.shape == (542,) for c in histogram.diff.values())
        # distinct capacities are sums of unit capacities: at most 9 x 17 of them
        assert len(large.total[s].diff) <= 9 * 17


def test_peak_draw_per_hall_matches_the_definition(reference_plan):
    plan = reference_plan
    collector, nodes = run_with_nodes(plan, samples=300, chunk_size=128)
    power = collector.hall_power()
    for s, name in enumerate(plan.strategy_names):
        times = nodes[:, s, plan.power_event_node]
        for h, row in enumerate(power[name]):
            # draw just after each event instant: every event with time <= that instant
            mine = np.where(plan.power_event_hall[s] == h, plan.power_event_delta, 0.0)
            after = plan.hall_draw0[h] + ((times[:, None, :] <= times[:, :, None]) * mine).sum(axis=2)
            peak = np.maximum(plan.hall_draw0[h], after.max(axis=1))
            for got, q in ((row.peak_p50_kw, 0.5), (row.peak_p90_kw, 0.9)):
                assert got == pytest.approx(np.quantile(peak, q, method="inverted_cdf"), abs=1e-6)
            assert row.peak_max_kw == pytest.approx(peak.max(), abs=1e-6)
            assert row.peak_min_kw == pytest.approx(peak.min(), abs=1e-6)
            assert row.headroom_kw == pytest.approx(row.cap_kw - peak.max(), abs=1e-6)
            assert row.headroom_share == pytest.approx((row.cap_kw - peak.max()) / row.cap_kw)
            assert row.probability_over == pytest.approx(np.mean(peak > row.cap_kw * (1 + 1e-9)))
        np.testing.assert_allclose(hall_peak_draw(plan, s, nodes[:, s]).max(axis=1).shape, (300,))


@pytest.mark.parametrize("grid", [None, Grid(lo=-6, step=3, n_bins=20)])
def test_exact_histogram_quantiles_equal_numpy(grid):
    rng = np.random.default_rng(0)
    histogram = ExactHistogram(n_rows=4, grid=grid)
    values = []
    for size in (1, 9, 30, 60):        # sample counts where n * q is and is not whole
        chunk = 3 * rng.integers(-2, 17, size=(size, 4)).astype(np.int64)
        starts = np.zeros((size, 1), np.int64)
        histogram.add_pieces(starts, np.full((size, 1), 4, np.int64), chunk[:, :1])
        values.append(np.repeat(chunk[:, :1], 4, axis=1))
        everything = np.concatenate(values)
        expected = np.quantile(everything, [0.1, 0.5, 0.9, 1.0], axis=0, method="inverted_cdf").T
        np.testing.assert_array_equal(histogram.quantiles((0.1, 0.5, 0.9, 1.0)), expected)


def test_inverted_cdf_index_is_numpys():
    for n in range(1, 60):
        ranks = np.arange(n)
        for q in (0.0, 0.1, 0.25, 0.5, 0.9, 0.99, 1.0):
            assert inverted_cdf_index(n, q) == int(np.quantile(ranks, q, method="inverted_cdf"))


def test_peak_statistics_of_a_peak_that_varies_match_a_hand_calculation(tiny):
    # swap-on-day: E1, E2 (100 kW each) drain at day 10 and draw until their removal ends at
    # 15; both racks (100 kW each) draw from install start = max(arrival, R3 ready at 10),
    # arrival = 5 + Uniform(0, 20). Peak: 400 kW if the racks arrive before day 15, else 200.
    plan = compile_scenario(load_scenario(tiny(arrival=5,
                                               delay='{ dist = "uniform", min = 0, max = 20 }')))
    collector = BandCollector(plan)
    result = simulate(plan, 300, 1, select_backend("cpu"), chunk_hooks=(collector,),
                      keep_world=300)
    arrival = result.world[:, plan.quantity_names.index("shipment.S1.arrival")]
    peak = np.where(arrival < 15, 400.0, 200.0)
    assert 0 < (arrival < 15).mean() < 1
    row = collector.hall_power()["swap-on-day"][0]
    assert (row.peak_min_kw, row.peak_max_kw) == (200.0, 400.0)
    assert row.peak_p50_kw == np.quantile(peak, 0.5, method="inverted_cdf")
    assert row.peak_p90_kw == np.quantile(peak, 0.9, method="inverted_cdf") == 400.0
    assert row.headroom_kw == 10_000 - 400 and row.headroom_share == pytest.approx(0.96)


# --- drawn per-GPU performance (h100_eq_per_gpu a distribution) and the ramp ----------------

PERF = 'h100_eq_per_gpu = { dist = "uniform", min = 1, max = 3 }'
RAMP = "[unit_types.ramp]\nstart_fraction = 0.5\ndays = 20\nsteps = 4\n\n[[islands]]"


def drawn_tiny(tiny, ramp=False, **overrides):
    """TINY with the new racks' h100_eq_per_gpu ~ Uniform(1, 3) (and a 4-step ramp)."""
    path = tiny(**overrides)
    text = path.read_text().replace("h100_eq_per_gpu = 2.5", PERF)
    path.write_text(text.replace("[[islands]]", RAMP, 1) if ramp else text)
    return path


def run_keeping_worlds(plan, samples, chunk_size, seed=5):
    """(BandCollector fed chunk by chunk, node_times[n, s, v], world[n, q] kept whole)."""
    collector = BandCollector(plan)
    nodes, worlds = [], []

    def keep(first, metrics, world, node_times):
        nodes.append(node_times.copy())
        worlds.append(world.copy())

    simulate(plan, samples, seed, select_backend("cpu"), chunk_size=chunk_size,
             chunk_hooks=(collector, keep))
    return collector, np.concatenate(nodes), np.concatenate(worlds)


def slow_capacity(plan, node_times, world, s):
    """(total[n, d], largest[n, d]) by the definition, one scenario and event at a time: an
    event at time t adds its delta (x the scenario's drawn H100-eq per GPU when scaled) from
    every day d >= t on."""
    days = np.arange(int(np.floor(plan.horizon)) + 1)
    n = node_times.shape[0]
    total = np.zeros((n, days.size))
    largest = np.zeros((n, days.size))
    for i in range(n):
        islands = np.repeat(plan.island_cap0[:, None], days.size, axis=1)
        for e in range(plan.cap_event_node.size):
            t = node_times[i, s, plan.cap_event_node[e]]
            q = plan.cap_event_scale_q[e]
            delta = plan.cap_event_delta[e] * (world[i, q] if q >= 0 else 1.0)
            islands[plan.cap_event_island[s, e], days >= t] += delta
        total[i] = islands.sum(axis=0)
        largest[i] = islands.max(axis=0)
    return total, largest


def test_drawn_performance_counts_h100_eq_not_gpus(tiny):
    # swap-gated: both old units (256) drain as both racks are accepted at day 27, so C(d) =
    # 144 GPUs x perf from day 27 on, perf ~ Uniform(1, 3): P10/P50/P90 near 173/288/403.
    # The bands once counted 144 GPUs x the nominal 1 here, at every percentile.
    plan = compile_scenario(load_scenario(drawn_tiny(tiny)))
    collector, _, world = run_keeping_worlds(plan, samples=1000, chunk_size=300)
    bands = collector.bands()
    assert bands.resolution == pytest.approx(0.256)          # 1e-3 x B = 256 H100-eq
    perf = world[:, plan.quantity_names.index("unit_type.new.h100_eq_per_gpu")]
    after = np.quantile(144 * perf, QS, method="inverted_cdf")
    gated = plan.strategy_names.index("swap-gated")
    for d in range(101):
        if d < 27:
            np.testing.assert_array_equal(bands.total[gated, d], [256.0] * 3)   # exact part
            assert bands.p_below_baseline[gated, d] == 0.0
        else:
            np.testing.assert_allclose(bands.total[gated, d], after,
                                       rtol=0, atol=bands.resolution / 2 + 1e-9)
            assert bands.p_below_baseline[gated, d] == np.mean(144 * perf < 256 * (1 - 1e-9))
    np.testing.assert_allclose(bands.total[gated, 27], [172.8, 288, 403.2], atol=15)
    np.testing.assert_allclose(bands.largest[gated, 27:], bands.total[gated, 27:])


@pytest.mark.parametrize("ramp", [False, True])
def test_drawn_performance_bands_match_a_slow_brute_force(tiny, ramp):
    path = drawn_tiny(tiny, ramp=ramp, delay='{ dist = "uniform", min = 0, max = 20 }',
                      attempt='{ dist = "triangular", min = 3, mode = 5, max = 9 }',
                      fail_first=0.3)
    plan = compile_scenario(load_scenario(path))
    collector, nodes, world = run_keeping_worlds(plan, samples=500, chunk_size=77)
    bands = collector.bands()
    assert bands.samples == 500 and bands.resolution == pytest.approx(0.256)
    tolerance = bands.resolution / 2 + 1e-9
    for s in range(plan.n_strategies):
        total, largest = slow_capacity(plan, nodes, world, s)
        exact_total = np.quantile(total, QS, axis=0, method="inverted_cdf").T
        exact_largest = np.quantile(largest, QS, axis=0, method="inverted_cdf").T
        np.testing.assert_allclose(bands.total[s], exact_total, rtol=0, atol=tolerance)
        np.testing.assert_allclose(bands.largest[s], exact_largest, rtol=0, atol=tolerance)
        np.testing.assert_array_equal(bands.p_below_baseline[s],
                                      (total < 256 * (1 - 1e-9)).mean(axis=0))
        assert not np.allclose(bands.total[s, -1], 144.0)  # not GPUs x the nominal 1


def test_drawn_performance_in_the_minimal_scenario_counts_h100_eq(tmp_path):
    # minimal.toml with its two 72-GPU racks at Uniform(2, 3) H100-eq per GPU: 360 at the
    # median once both are in, not 144
    path = tmp_path / "minimal.toml"
    path.write_text(MINIMAL.read_text().replace(
        "h100_eq_per_gpu = 2.5", 'h100_eq_per_gpu = { dist = "uniform", min = 2, max = 3 }'))
    plan = compile_scenario(load_scenario(path))
    collector, nodes, world = run_keeping_worlds(plan, samples=300, chunk_size=128)
    bands = collector.bands()
    # the first width, 1e-3 x B = 0.128, doubled once: values with a drawn part span about
    # 144 .. 560 H100-eq, over MAX_BINS = 2,048 bins of 0.128
    assert bands.resolution == pytest.approx(0.256)
    for s in range(plan.n_strategies):
        total, largest = slow_capacity(plan, nodes, world, s)
        np.testing.assert_allclose(bands.total[s],
                                   np.quantile(total, QS, axis=0, method="inverted_cdf").T,
                                   rtol=0, atol=bands.resolution / 2 + 1e-9)
        np.testing.assert_allclose(bands.largest[s],
                                   np.quantile(largest, QS, axis=0, method="inverted_cdf").T,
                                   rtol=0, atol=bands.resolution / 2 + 1e-9)
        assert bands.total[s, -1, 1] == pytest.approx(360, abs=10)


def test_fixed_performance_bands_of_a_ramp_match_a_hand_calculation(tiny):
    # racks accepted at 27 deliver 50% (180), then +12.5% (45) at 32, 37, 42, 47
    path = tiny()
    path.write_text(path.read_text().replace("[[islands]]", RAMP, 1))
    plan = compile_scenario(load_scenario(path))
    collector, _ = run_with_nodes(plan, samples=20, chunk_size=8)
    bands = collector.bands()
    assert bands.resolution == 0.0
    days = bands.days
    ramp = np.select([days < 27, days < 32, days < 37, days < 42, days < 47],
                     [0.0, 180.0, 225.0, 270.0, 315.0], 360.0)
    on_day = np.where(days < 10, 256.0, ramp)
    gated = np.where(days < 27, 256.0, ramp)
    for q in range(3):
        np.testing.assert_array_equal(bands.total[0, :, q], on_day)
        np.testing.assert_array_equal(bands.total[1, :, q], gated)
        np.testing.assert_array_equal(bands.largest[0, :, q], on_day)
        np.testing.assert_array_equal(bands.largest[1, :, q], gated)
    np.testing.assert_array_equal(bands.p_below_baseline[0], (on_day < 256).astype(float))
    np.testing.assert_array_equal(bands.p_below_baseline[1], (gated < 256).astype(float))


def test_drawn_performance_memory_is_bounded_by_bins_not_scenarios(tiny):
    plan = compile_scenario(load_scenario(drawn_tiny(tiny, delay='{ dist = "uniform", '
                                                               'min = 0, max = 20 }')))
    small, _, _ = run_keeping_worlds(plan, samples=200, chunk_size=200)
    large, _, _ = run_keeping_worlds(plan, samples=3000, chunk_size=1000)
    for collector in (small, large):
        for s in range(plan.n_strategies):
            binned = collector.total_binned[s]
            # values 144 x perf in [144, 432): at most 288 / 0.256 + 1 bins, however many
            # scenarios, each with one count per day (+ 1)
            assert binned.diff.shape[0] <= 1126 and binned.diff.shape[1] == 102
            assert binned.hi - binned.lo + 1 <= MAX_BINS
            assert binned.lo >= np.floor(144e6 / binned.width)


def test_binned_histogram_widens_exactly_and_keeps_its_guarantee():
    rng = np.random.default_rng(3)
    histogram = BinnedHistogram(n_rows=3, width=10, max_bins=16)
    seen = []
    for size, spread in ((50, 100.0), (70, 400.0), (30, 2500.0)):   # the range grows
        values = rng.uniform(-spread, spread, size=(size, 1)) * 1.0
        histogram.add_pieces(np.zeros((size, 1), np.int64), np.full((size, 1), 3, np.int64),
                             values)
        seen.append(values[:, 0])
        everything = np.concatenate(seen)
        width = histogram.width
        assert width % 10 == 0 and (width // 10) & (width // 10 - 1) == 0   # 10 x 2^k
        assert histogram.hi - histogram.lo + 1 <= 16 and histogram.diff.shape == (
            histogram.hi - histogram.lo + 1, 4)
        # merged counts = the counts of binning every value at the final width directly
        midpoints, counts = histogram.table()
        direct = np.floor(everything / width)
        np.testing.assert_array_equal(midpoints, (np.arange(direct.min(), direct.max() + 1)
                                                  + 0.5) * width)
        expected = np.bincount((direct - direct.min()).astype(int))
        np.testing.assert_array_equal(counts, np.repeat(expected[None, :], 3, axis=0))
        got = merged_quantiles([histogram.table()], everything.size, (0.1, 0.5, 0.9, 1.0))
        exact = np.quantile(everything, [0.1, 0.5, 0.9, 1.0], method="inverted_cdf")
        assert (np.abs(got - exact[None, :]) <= width / 2 + 1e-9).all()
    assert histogram.width > 10                                          # it did widen


def test_capacity_bands_parquet_records_the_resolution(tiny):
    from mcrisk.report.tables import bands_table
    fixed, _ = run_with_nodes(compile_scenario(load_scenario(tiny())), samples=10, chunk_size=10)
    drawn, _, _ = run_keeping_worlds(compile_scenario(load_scenario(drawn_tiny(tiny))),
                                     samples=10, chunk_size=10)
    assert bands_table(fixed.bands()).schema.metadata[b"resolution_h100_eq"] == b"0.0"
    assert float(bands_table(drawn.bands()).schema.metadata[b"resolution_h100_eq"]) == 0.256


@pytest.mark.parametrize("perturb", ["as simulated", "ties, infinities and NaN"])
def test_compiled_chunks_give_the_numpy_specifications_numbers(reference_plan, monkeypatch,
                                                              perturb):
    """Large chunks go through compiled loops (results.band_chunks); on the same node times
    they give exactly what capacity_pieces, add_pieces and hall_peak_draw give."""
    plan = reference_plan
    _, nodes = run_with_nodes(plan, samples=500, chunk_size=500)
    if perturb != "as simulated":
        rng = np.random.default_rng(2)
        nodes = np.round(nodes / 7) * 7                        # many events on one instant
        nodes[:40, :, rng.integers(0, plan.n_nodes, 6)] = np.inf
        nodes[40:60, :, rng.integers(0, plan.n_nodes, 4)] = np.nan
        nodes[60:80, :, rng.integers(0, plan.n_nodes, 4)] = -3.5
    world = np.zeros((nodes.shape[0], plan.n_quantities))
    by_numpy = BandCollector(plan)
    by_numpy(0, None, world, nodes)
    monkeypatch.setattr(bands_module, "COMPILED_FROM_NODE_TIMES", 1)
    compiled = BandCollector(plan)
    assert compiled.compiled
    compiled(0, None, world, nodes)
    expected, got = by_numpy.bands(), compiled.bands()
    for field in ("total", "largest", "p_below_baseline"):
        np.testing.assert_array_equal(getattr(got, field), getattr(expected, field))
    assert compiled.hall_power() == by_numpy.hall_power()
    np.testing.assert_array_equal(compiled.over, by_numpy.over)


@pytest.mark.parametrize("perturb", ["as simulated", "ties, infinities and NaN"])
@pytest.mark.parametrize("path", ["numpy", "compiled"])
def test_a_grid_too_large_for_dense_blocks_gives_the_dense_counts(reference_plan, monkeypatch,
                                                                  perturb, path):
    """A plan whose capacities take too many values for dense blocks (here the reference with
    the dense limit lowered; a plan of thousands of units in real use) counts them in
    DayHistogram's sparse table, by NumPy (add_pieces) or compiled (capacity_day_keys): the
    bands and the share below the baseline equal ExactHistogram's dense counts, the
    specification, on the same node times."""
    plan = reference_plan
    _, nodes = run_with_nodes(plan, samples=400, chunk_size=400)
    if perturb != "as simulated":
        rng = np.random.default_rng(4)
        nodes = np.round(nodes / 5) * 5
        nodes[:30, :, rng.integers(0, plan.n_nodes, 6)] = np.inf
        nodes[30:50, :, rng.integers(0, plan.n_nodes, 4)] = np.nan
        nodes[50:70, :, rng.integers(0, plan.n_nodes, 4)] = -2.0
    world = np.zeros((nodes.shape[0], plan.n_quantities))
    dense = BandCollector(plan)
    for start, end in ((0, 250), (250, 400)):    # two chunks, merged
        dense(start, None, world[start:end], nodes[start:end])
    monkeypatch.setattr(band_histograms, "_MAX_DENSE_CELLS", 1_000)
    if path == "compiled":
        monkeypatch.setattr(bands_module, "COMPILED_FROM_NODE_TIMES", 1)
    sparse = BandCollector(plan)
    assert all(isinstance(h, bands_module.DayHistogram) for h in (*sparse.total, *sparse.largest))
    for start, end in ((0, 250), (250, 400)):
        sparse(start, None, world[start:end], nodes[start:end])
    expected, got = dense.bands(), sparse.bands()
    for field in ("total", "largest", "p_below_baseline"):
        np.testing.assert_array_equal(getattr(got, field), getattr(expected, field), field)


def test_the_sparse_table_reads_shares_below_and_quantiles_off_its_rows():
    """DayHistogram on a small grid (lo 10, step 5) against numpy: the share below a threshold
    on a grid value and between two, and 'inverted_cdf' quantiles, row by row; its keys
    would pass int64 on a grid of 2^62 cells, which falls back to ExactHistogram."""
    grid = bands_module.Grid(lo=10, step=5, n_bins=9)
    rng = np.random.default_rng(6)
    by_row = 10 + 5 * rng.integers(0, 9, size=(300, 4))          # [samples, rows]
    histogram = bands_module.DayHistogram(4, grid)
    for part in (by_row[:120], by_row[120:]):
        keys = np.arange(4) * grid.n_bins + (part - grid.lo) // grid.step
        histogram.add_keys(keys.astype(np.int64), part.shape[0])
    for threshold in (10, 25, 27, 50, 60):
        np.testing.assert_array_equal(histogram.fraction_below(threshold),
                                      (by_row < threshold).mean(axis=0))
    np.testing.assert_array_equal(histogram.quantiles((0.1, 0.5, 0.9)),
                                  np.quantile(by_row, (0.1, 0.5, 0.9), axis=0,
                                              method="inverted_cdf").T)
    huge = bands_module.Grid(lo=0, step=1, n_bins=2 ** 62)
    assert type(bands_module._histogram(4, huge)) is bands_module.ExactHistogram


@pytest.mark.parametrize("k", [1, 5, 64, 65, 1_000, 1_537])
def test_event_sorts_follow_numpys_stable_argsort(k):
    """band_chunks._sort, by insertion from a previous order (few events) or by merging (many:
    a plan of thousands of units), gives numpy.argsort(kind='stable') with ties and NaN."""
    rng = np.random.default_rng(k)
    buffer = np.empty(k, np.int64)
    order = np.arange(k)
    for _ in range(3):
        keys = np.round(rng.uniform(0, 30, k))           # many ties
        keys[rng.integers(0, k, max(1, k // 10))] = np.nan
        band_chunks._sort(keys, order, buffer)           # from the previous keys' order
        np.testing.assert_array_equal(order, np.argsort(keys, kind="stable"))


def test_a_contingent_rows_largest_island_is_its_branchs_world_by_world():
    """A contingent row's capacity comes, world by world, from the branch its decision takes,
    with that branch's islands: here the unmet branch's capacity events are moved to the
    other island (as a placement in another hall would with islands by position), and the
    contingent row's largest-island band equals the brute force over each world's branch."""
    import dataclasses

    plan = compile_scenario(load_scenario("scenarios/contingent.toml"))
    c = plan.contingencies[0]
    islands = plan.cap_event_island.copy()
    islands[c.unmet_row] = (islands[c.unmet_row] + 1) % plan.island_cap0.size
    plan = dataclasses.replace(plan, cap_event_island=islands)
    collector, nodes = run_with_nodes(plan, samples=300, chunk_size=150)
    met = c.met(nodes)
    assert 0 < met.sum() < met.size                          # both branches taken
    _, largest_met = brute_force_capacity(plan, nodes, c.met_row)
    _, largest_unmet = brute_force_capacity(plan, nodes, c.unmet_row)
    largest = np.where(met[:, None], largest_met, largest_unmet)
    expected = np.quantile(largest, QS, axis=0, method="inverted_cdf").T
    np.testing.assert_allclose(collector.bands().largest[c.row], expected, rtol=0, atol=1e-6)


def test_a_dense_island_grid_beside_a_sparse_total_takes_the_day_keys(monkeypatch):
    # positions.toml's total capacity needs a DayHistogram, its largest island's grid is dense
    # (ExactHistogram): a chunk large enough for the compiled loops gives both as day keys
    # (band_chunks.capacity_day_keys), which the dense one counts (add_keys). It raised an
    # AttributeError from a chunk of 11,975 scenarios on (`--chunk-size 13000`); the bands
    # equal the NumPy specification's (capacity_pieces, add_pieces) on the same worlds.
    from mcrisk.backends import select_backend
    from mcrisk.backends.chunks import simulate
    from mcrisk.plan.compile import compile_scenario
    from mcrisk.results import bands as bands_module
    from mcrisk.results.band_histograms import DayHistogram, ExactHistogram
    from mcrisk.scenario import load_scenario

    from ..helpers import SCENARIOS

    plan = compile_scenario(load_scenario(SCENARIOS / "positions.toml"))
    results = []
    for threshold in (0, 10**18):                 # the compiled loops, the specification
        monkeypatch.setattr(bands_module, "COMPILED_FROM_NODE_TIMES", threshold)
        collector = bands_module.BandCollector(plan)
        assert isinstance(collector.total[0], DayHistogram)
        assert type(collector.largest[0]) is ExactHistogram and collector.largest[0].grid
        simulate(plan, 400, 3, select_backend("numba"), chunk_size=200, chunk_hooks=(collector,))
        results.append(collector.bands())
    compiled, specified = results
    for field in ("total", "largest", "p_below_baseline"):
        assert np.array_equal(getattr(compiled, field), getattr(specified, field)), field
