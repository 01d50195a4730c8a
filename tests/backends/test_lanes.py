"""The compiled kernels simulate scenarios in lane groups (issue 12): what that relies on.

Numba runs up to driver.LANES scenarios side by side (the host build of the CUDA sources 8, a
GPU thread 1). Each stage takes a whole group: the crews of every lane take the same step while
only one crew row is ready for a crew, and where the lanes part, the blocks no crew row waits
for (the plan's block_feeds_crew) are timed for the group afterwards. Events are sorted by a
sorting network. None of this may change a number: the flag is checked against the network
independently, and deferring, cutting groups and sorting are checked against the plain ways.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mcrisk.backends.numba import driver as numba_driver
from mcrisk.backends.numba.metrics import sort_events
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import NODE_CREW
from mcrisk.scenario import load_scenario

from ..helpers import MINIMAL, REFERENCE
from ..random_scenarios import random_scenario_text

RANDOM_CASES = range(20)
# Random scenarios whose crew rows wait for blocks that crews free (tests/random_scenarios.py).
FEEDING_CASES = (4, 6, 8, 9, 12, 16)


def plan_of(tmp_path, case):
    if case in ("reference", "minimal"):
        return compile_scenario(load_scenario(REFERENCE if case == "reference" else MINIMAL))
    path = tmp_path / f"random-{case}.toml"
    path.write_text(random_scenario_text(case))
    return compile_scenario(load_scenario(path))


def blocks_of(plan, s):
    ptr = plan.block_ptr[s]
    return [plan.block_node[s, ptr[b]:ptr[b + 1]] for b in range(plan.n_nodes)
            if ptr[b] < ptr[b + 1]]


def upstream_of_crew_rows(plan, s) -> set[int]:
    """Every node some crew row of strategy s waits for, by a search back along the deps."""
    deps = [plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]] for v in range(plan.n_nodes)]
    seen: set[int] = set()
    stack = [int(v) for v in plan.crew_node[s, :plan.n_crew_rows[s]]]
    while stack:
        for d in deps[stack.pop()]:
            if int(d) not in seen:
                seen.add(int(d))
                stack.append(int(d))
    return seen


@pytest.mark.parametrize("case", ["reference", "minimal", *RANDOM_CASES])
def test_block_feeds_crew_marks_crew_rows_and_what_they_wait_for(tmp_path, case):
    plan = plan_of(tmp_path, case)
    for s in range(plan.n_strategies):
        upstream = upstream_of_crew_rows(plan, s)
        blocks = blocks_of(plan, s)
        expected = [int(plan.node_kind[s, b[0]] == NODE_CREW or bool(upstream & set(b.tolist())))
                    for b in blocks]
        assert plan.block_feeds_crew[s, :len(blocks)].tolist() == expected
        assert not plan.block_feeds_crew[s, len(blocks):].any()


@pytest.mark.parametrize("case", ["reference", *FEEDING_CASES])
def test_timing_blocks_later_changes_nothing(tmp_path, backend, case):
    # Every block timed as soon as it is freed, lane by lane (the flag set everywhere), against
    # the compiled flag, which leaves the blocks no crew row waits for to the end.
    if not backend.compiled:
        pytest.skip("numpy: the reference sweeps the network, it has no blocks")
    plan = plan_of(tmp_path, case)
    eager = dataclasses.replace(plan, block_feeds_crew=np.ones_like(plan.block_feeds_crew))
    got = backend.simulate_chunk(plan, 4, 100, 300, True)
    expected = backend.simulate_chunk(eager, 4, 100, 300, True)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_a_block_a_crew_row_waits_for_cannot_wait(tmp_path):
    # The flag matters: cleared on the blocks (not crew rows) that crew rows wait for, the rows
    # take their ready times from nodes not timed yet, and the node times change.
    plan = plan_of(tmp_path, 16)
    flags = plan.block_feeds_crew.copy()
    for s in range(plan.n_strategies):
        for b, nodes in enumerate(blocks_of(plan, s)):
            if plan.node_kind[s, nodes[0]] != NODE_CREW:
                flags[s, b] = 0
    assert (flags != plan.block_feeds_crew).any()
    wrong = dataclasses.replace(plan, block_feeds_crew=flags)
    right = numba_driver.simulate_chunk(plan, 4, 100, 300, True)[2]
    assert not np.array_equal(numba_driver.simulate_chunk(wrong, 4, 100, 300, True)[2], right)


@pytest.mark.parametrize("count", [0, 1, 2, 3, 5, 8, 23, 24, 40])
def test_sort_events_is_a_stable_sort_by_time(count):
    # Ties in time keep the events' order, as the reference's stable sort (kind="stable") does,
    # in every lane; lanes beyond n are left alone.
    gen = np.random.default_rng(count)
    lanes, n = 7, 5
    times = gen.integers(0, 6, size=(max(count, 1), lanes)).astype(np.float64)
    times[gen.random(times.shape) < 0.1] = np.inf
    events = gen.permutation(count) if count else np.zeros(1, dtype=np.int64)
    order = np.repeat(events[:, None], lanes, axis=1).astype(np.int64)
    before_t, before_o = times.copy(), order.copy()
    sort_events(times, order, count, n)
    for l in range(lanes):
        if l >= n:
            np.testing.assert_array_equal(times[:, l], before_t[:, l])
            np.testing.assert_array_equal(order[:, l], before_o[:, l])
            continue
        by_event = np.argsort(events[:count], kind="stable")      # ties: lower event first
        rank = by_event[np.argsort(before_t[by_event, l], kind="stable")]
        np.testing.assert_array_equal(order[:count, l], events[rank])
        np.testing.assert_array_equal(times[:count, l], before_t[rank, l])


@pytest.mark.parametrize("cuts", [(63, 1, 64, 72), (1, 129, 70), (64, 64, 72)])
def test_lane_groups_cut_anywhere(reference_plan, backend, cuts):
    # A chunk is cut into lane groups from its first scenario; results may not depend on where.
    if not backend.compiled:
        pytest.skip("numpy: no lane groups")
    whole = backend.simulate_chunk(reference_plan, 6, 5, sum(cuts), True)
    starts = np.cumsum((0,) + cuts[:-1])
    parts = [backend.simulate_chunk(reference_plan, 6, 5 + int(a), c, True)
             for a, c in zip(starts, cuts)]
    for k in range(3):
        np.testing.assert_array_equal(np.concatenate([p[k] for p in parts]), whole[k])


@pytest.mark.parametrize("strategy", ["big-bang", "swing-gated"])
def test_a_crew_row_that_is_never_ready_is_a_deadlock(reference_plan, backend, strategy):
    # Past validation only: a crew row whose ready time is infinite never gets a crew. In
    # big-bang every row is ready at once (the lanes part); swing-gated frees its rows one at a
    # time (every lane takes the same step). Either way the kernels report the deadlock.
    if not backend.compiled:
        pytest.skip("numpy: the reference's sweeps have no crew loop to stall")
    s = reference_plan.strategy_names.index(strategy)
    row = reference_plan.crew_node[s, 0]
    base = reference_plan.node_base_const.copy()
    base[s, row] = np.inf
    stuck = dataclasses.replace(reference_plan, node_base_const=base)
    with pytest.raises(RuntimeError, match="deadlock"):
        backend.simulate_chunk(stuck, 1, 0, 70)
