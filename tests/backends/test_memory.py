"""mcrisk.backends.chunks's memory estimate against the arrays a run actually allocates: what it
keeps, the milestone store, a chunk's node times (the peak resident set it is meant to match
within a few percent is measured by benchmarks/memory.py, not here)."""
from __future__ import annotations

import numpy as np

from mcrisk.results import milestones
from mcrisk.backends import select_backend
from mcrisk.scenario import load_scenario
from mcrisk.backends import chunks
from mcrisk.backends.kept import IN_MEMORY_BYTES
from mcrisk.backends.chunks import (DEFAULT_KEEP_WORLD, MILESTONES_KEPT_EXACT, MILESTONES_PER_NODE,
                             RUNTIME_BYTES, chunk_output_bytes, default_chunk,
                             default_keep_world, memory_needed, milestone_store_bytes, simulate)

from ..helpers import REFERENCE


def test_what_a_run_keeps_is_counted_byte_for_byte(reference_plan):
    """Without outputs the estimate is the runtime, the kept metrics, costs and inputs, and the
    larger of a chunk in flight and the analysis (twice the kept inputs here)."""
    plan = reference_plan
    result = simulate(plan, 300, 1, select_backend("numba"), chunk_size=128)
    costs = result.costs if result.costs is not None else np.empty((300, 0))
    kept = result.metrics.nbytes + costs.nbytes + result.world.nbytes
    analysis = 2 * result.world.nbytes
    assert memory_needed(plan, 300, 128, keep_nodes=False) == RUNTIME_BYTES + kept + analysis
    big = 1_000_000                          # kept inputs capped at DEFAULT_KEEP_WORLD rows
    kept_big = (big * (result.metrics[0].nbytes + costs[0].nbytes)
                + DEFAULT_KEEP_WORLD * result.world[0].nbytes)
    assert memory_needed(plan, big, keep_nodes=False) == (
        RUNTIME_BYTES + kept_big + 2 * DEFAULT_KEEP_WORLD * result.world[0].nbytes)
    # past IN_MEMORY_BYTES (1 GB) the metrics and costs are in a file, not counted
    huge = 3_000_000
    assert huge * (result.metrics[0].nbytes + costs[0].nbytes) > IN_MEMORY_BYTES
    assert memory_needed(plan, huge, keep_nodes=False) == (
        RUNTIME_BYTES + DEFAULT_KEEP_WORLD * result.world[0].nbytes
        + 2 * DEFAULT_KEEP_WORLD * result.world[0].nbytes)


def test_the_milestone_store_is_counted(reference_plan):
    """The exact store is every milestone time of every scenario kept: the estimate (from
    MILESTONES_PER_NODE milestones per node and strategy) covers the collector's arrays and
    is within 10% of them on the reference; the constant is the collector's own."""
    assert MILESTONES_KEPT_EXACT == milestones.KEEP_EXACT
    assert (chunks.MILESTONE_EXACT_BYTES, chunks.MILESTONE_BINS_BYTES, chunks.MILESTONE_MAX_BINS,
            chunks.MILESTONE_MIN_BINS) == (milestones.EXACT_BYTES, milestones.BINS_BYTES,
                                           milestones.MAX_BINS, milestones.MIN_BINS)
    scenario = load_scenario(str(REFERENCE))
    plan = reference_plan
    collector = milestones.MilestoneCollector(plan, scenario)
    simulate(plan, 500, 2, select_backend("numba"), chunk_size=250, chunk_hooks=(collector,))
    held = sum(part.nbytes for times in collector.times for part in times.exact)
    estimate = milestone_store_bytes(plan, 500)
    assert held <= estimate <= 1.1 * held
    every = sum(len(items) for items in collector.items)
    assert every <= MILESTONES_PER_NODE * plan.n_nodes * plan.n_strategies


def test_a_chunk_with_outputs_counts_its_node_times_and_more(reference_plan):
    plan = reference_plan
    _, _, nodes = select_backend("numba").simulate_chunk(plan, 1, 0, 64, keep_nodes=True)
    assert chunk_output_bytes(plan, 64) > nodes.nbytes
    with_outputs = memory_needed(plan, 10_000, 4_096)
    without = memory_needed(plan, 10_000, 4_096, keep_nodes=False)
    assert with_outputs - without >= milestone_store_bytes(plan, 10_000)
    assert np.isclose(milestone_store_bytes(plan, 10_000),
                      10_000 * plan.n_strategies * MILESTONES_PER_NODE * plan.n_nodes * 8)


def test_the_binned_store_is_counted_and_bounded(reference_plan):
    """Past exact_up_to the store is each milestone's bins (24 bytes each), the same at 10^6
    and 10^8 scenarios; the estimate covers the collector's arrays within 10%."""
    scenario = load_scenario(str(REFERENCE))
    plan = reference_plan
    collector = milestones.MilestoneCollector(plan, scenario, keep_exact=100)
    simulate(plan, 300, 2, select_backend("numba"), chunk_size=150, chunk_hooks=(collector,))
    held = sum(t.hist.counts.nbytes + t.hist.low.nbytes + t.hist.high.nbytes
               for t in collector.times)
    estimate = milestone_store_bytes(plan, 10**6)
    assert held <= estimate <= 1.1 * held
    assert milestone_store_bytes(plan, 10**8) == estimate


class _Plan:
    """The sizes default_chunk and default_keep_world read, of a plan 64 times the
    reference (4,933 nodes, 5,190 drawn quantities)."""
    n_strategies, n_nodes, n_quantities, n_job_cols = 5, 4_933, 5_190, 0


def test_a_large_plan_gets_chunks_and_kept_inputs_within_their_budgets(reference_plan):
    """The reference keeps its defaults; a plan 64 times its size gets chunks whose node times
    fit NODE_TIMES_BYTES and kept inputs that fit KEPT_WORLD_BYTES."""
    assert default_chunk(reference_plan) == chunks.DEFAULT_CHUNK
    assert default_keep_world(reference_plan) == DEFAULT_KEEP_WORLD
    big = _Plan()
    chunk = default_chunk(big)
    assert chunk == 2_594 and chunk * 5 * 4_933 * 8 <= chunks.NODE_TIMES_BYTES
    assert default_chunk(big, 50_000) == 50_000              # asked for: as asked
    assert default_keep_world(big) == 12_331
    assert default_keep_world(big) * 5_190 * 8 <= chunks.KEPT_WORLD_BYTES
