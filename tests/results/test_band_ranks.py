"""band_chunks' Numba-only fast paths against slow, obvious versions: the events sorted by rank
(_rank_days) and the capacity blocks counted in grid steps (capacity_blocks on a grid), which
kernels/bands.cuh does not mirror (it sorts by insertion and divides per piece; its host build
is held to band_chunks by tests/backends/test_cuda_bands.py)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from mcrisk.results import band_chunks
from mcrisk.results.bands import capacity_grids, hall_peak_draw, n_band_days, to_units


@pytest.mark.parametrize("k", [1, 2, 5, 24, 63, 64])
def test_events_ranked_by_day_follow_numpys_stable_argsort(k):
    """Whole days with many ties (and n_days itself, where late, inf and NaN events go):
    the order is numpy.argsort(kind='stable'), whatever order the previous scenario left."""
    rng = np.random.default_rng(k)
    keys, order = np.empty(k, np.int64), np.arange(k)
    for high in (1, 3, 40, 541):
        days = rng.integers(0, high + 1, k).astype(np.float64)
        band_chunks._rank_days(days, keys, order)
        np.testing.assert_array_equal(order, np.argsort(days, kind="stable"))


@pytest.mark.parametrize("k", [65, 160, 1_537])
def test_events_counted_by_day_follow_numpys_stable_argsort(k):
    """_count_days (more events than _rank_days takes, days at most DAYS_PER_EVENT per event):
    numpy.argsort(kind='stable') of whole days 0 .. n_days, ties in event order."""
    rng = np.random.default_rng(k)
    order = np.empty(k, np.int64)
    for n_days in (1, 40, 541):
        counts = np.empty(n_days + 1, np.int64)
        days = rng.integers(0, n_days + 1, k).astype(np.float64)
        band_chunks._count_days(days, counts, order)
        np.testing.assert_array_equal(order, np.argsort(days, kind="stable"))


def many_events_plan(k=200, strategies=2):
    """A plan-shaped record of k capacity events over three islands (a new unit's island by
    strategy), for capacity_blocks' counting sort: whole H100-eq on a 4 H100-eq grid."""
    rng = np.random.default_rng(k)
    return SimpleNamespace(
        n_strategies=strategies, n_nodes=k + 3, horizon=540.5,
        cap_event_node=rng.permutation(k + 3)[:k].astype(np.int32),
        cap_event_delta=4.0 * rng.integers(-3, 6, k),
        cap_event_island=rng.integers(0, 3, (strategies, k)).astype(np.int32),
        island_cap0=np.array([400.0, 200.0, 80.0]))


def slow_counts(plan, node_times, s, lo, step, largest_lo, largest_step):
    """(total, largest) counts [n_days, bins]: scenarios whose capacity on day d lies in bin
    (v - lo) // step, each capacity from the definition (an event counts from the first whole
    day d >= its time; NaN and times after the last day never), in micro-units."""
    n_days = n_band_days(plan)
    days = np.arange(n_days)
    times = node_times[:, s, plan.cap_event_node]
    applied = times[:, :, None] <= days[None, None, :]                      # NaN: never
    delta = to_units(plan.cap_event_delta)
    cap0 = to_units(plan.island_cap0)
    islands = np.stack([cap0[i] + np.einsum("nkd,k->nd", applied.astype(np.int64),
                                            np.where(plan.cap_event_island[s] == i, delta, 0))
                        for i in range(cap0.size)])
    out = []
    for values, low, width in ((islands.sum(axis=0), lo, step),
                               (islands.max(axis=0), largest_lo, largest_step)):
        bins = (values - low) // width
        counts = np.zeros((n_days, int(bins.max()) + 1), np.int64)
        np.add.at(counts, (np.broadcast_to(days, bins.shape), bins), 1)
        out.append(counts)
    return out


@pytest.mark.parametrize("events", ["reference", "many"])
@pytest.mark.parametrize("path", ["grid steps", "divisions"])
@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_capacity_blocks_count_the_definitions_capacities(reference_plan, events, path, layout):
    """capacity_blocks' blocks, summed over days, are the number of scenarios on each (day,
    bin), on the plan's grids (counted in steps) and on a largest-island grid of half the
    step (not the total's: each piece divided), into blocks in row or column order; with
    events on one day, after the last day, inf, NaN and before day 0; the reference's 24
    events a scenario (ranked) and 200 (counted by day)."""
    plan = reference_plan if events == "reference" else many_events_plan()
    rng = np.random.default_rng(9)
    n_days = n_band_days(plan)
    nodes = rng.uniform(-5, n_days + 30, size=(300, plan.n_strategies, plan.n_nodes))
    nodes[:100] = np.round(nodes[:100] / 9) * 9                       # many events on one day
    nodes[100:120, :, rng.integers(0, plan.n_nodes, 6)] = np.inf
    nodes[120:140, :, rng.integers(0, plan.n_nodes, 6)] = np.nan
    total_grid, island_grid = capacity_grids(plan)
    largest_step = island_grid.step // (2 if path == "divisions" else 1)
    largest_bins = (island_grid.n_bins - 1) * (island_grid.step // largest_step) + 1
    for s in range(plan.n_strategies):
        blocks = [np.zeros((n_days + 1, bins), np.int32)
                  for bins in (total_grid.n_bins, largest_bins)]
        if layout == "columns":
            blocks = [np.zeros(b.shape[::-1], np.int32).T for b in blocks]
        band_chunks.capacity_blocks(
            nodes, s, plan.cap_event_node, to_units(plan.cap_event_delta),
            plan.cap_event_island[s], to_units(plan.island_cap0), n_days, total_grid.lo,
            total_grid.step, blocks[0], island_grid.lo, largest_step, blocks[1])
        expected = slow_counts(plan, nodes, s, total_grid.lo, total_grid.step, island_grid.lo,
                               largest_step)
        for block, counts in zip(blocks, expected):
            assert not np.cumsum(block, axis=0)[n_days].any()         # every piece ends
            got = np.cumsum(block, axis=0)[:n_days]
            np.testing.assert_array_equal(got[:, :counts.shape[1]], counts)
            assert not got[:, counts.shape[1]:].any()


@pytest.mark.parametrize("k", [65, 300, 1_537])
def test_times_sorted_by_bucket_follow_numpys_stable_argsort(k):
    """_bucket_times (a large plan's power events): numpy.argsort(kind='stable') with ties,
    NaN, infinities, negative times, a cluster of more than INSERTION_UP_TO times in one
    bucket (merged there), every time equal, and times spanning more than float64 can."""
    rng = np.random.default_rng(k)
    order, buffer = np.empty(k, np.int64), np.empty(k, np.int64)
    counts, bucket = np.empty(k + 3, np.int64), np.empty(k, np.int64)
    cases = []
    times = np.round(rng.uniform(-20, 600, k), 1)                  # ties
    times[rng.integers(0, k, k // 8)] = np.nan
    times[rng.integers(0, k, k // 10)] = np.inf
    times[rng.integers(0, k, k // 10)] = -np.inf
    cases.append(times)
    clustered = rng.uniform(0, 500, k)
    clustered[:min(k, 70)] = 100 + rng.uniform(0, 1e-9, min(k, 70))  # one bucket, merged
    cases += [clustered, np.full(k, 7.5), np.where(np.arange(k) % 2, 1e308, -1e308),
              rng.uniform(0, 1e-300, k)]
    for times in cases:
        band_chunks._bucket_times(times, counts, bucket, order, buffer)
        np.testing.assert_array_equal(order, np.argsort(times, kind="stable"))


def test_peak_draws_of_many_events_are_the_definitions():
    """peak_draws with 400 power events a scenario (sorted by bucket) gives hall_peak_draw's
    peaks, the NumPy specification, bit for bit: ties, NaN, infinities included."""
    rng = np.random.default_rng(3)
    k, halls = 400, 3
    plan = SimpleNamespace(power_event_node=rng.permutation(k + 5)[:k].astype(np.int32),
                           power_event_hall=rng.integers(0, halls, (1, k)).astype(np.int32),
                           power_event_delta=np.round(rng.uniform(-40, 60, k), 1),
                           hall_draw0=np.array([100.0, 0.0, 35.5]),
                           hall_cap=np.array([1e9, 1e9, 1e9]))
    nodes = np.round(rng.uniform(-5, 600, (200, 1, k + 5)), 0)
    nodes[:20, :, rng.integers(0, k + 5, 30)] = np.nan
    nodes[20:40, :, rng.integers(0, k + 5, 30)] = np.inf
    peak = np.empty((200, halls))
    band_chunks.peak_draws(nodes, 0, plan.power_event_node, plan.power_event_hall[0],
                           plan.power_event_delta, plan.hall_draw0, peak)
    np.testing.assert_array_equal(peak, hall_peak_draw(plan, 0, nodes[:, 0, :]))
