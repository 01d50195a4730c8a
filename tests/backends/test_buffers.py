"""The chunk loop's reused arrays (mcrisk.backends.buffers): zeros of the shape asked for
every time, whatever the last chunk left in them, and a Numba chunk written into them equal
to one in fresh arrays."""
from __future__ import annotations

import numpy as np

from mcrisk.backends import select_backend
from mcrisk.backends.buffers import ChunkBuffers
from mcrisk.backends.chunks import simulate
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE


def test_a_reused_array_is_zeros_of_the_shape_asked_for():
    buffers = ChunkBuffers()
    first = buffers.zeros("a", (4, 3, 2))
    first[...] = 7.0
    smaller = buffers.zeros("a", (3, 3, 2))
    assert smaller.shape == (3, 3, 2) and smaller.flags.c_contiguous
    assert np.shares_memory(first, smaller)           # the storage reused, not a new array
    assert not smaller.any()
    bigger = buffers.zeros("a", (5, 3, 2))
    assert bigger.shape == (5, 3, 2) and not bigger.any()
    assert not np.shares_memory(first, bigger)        # grown: a new array
    assert buffers.zeros("b", (2,), np.int8).dtype == np.int8
    assert buffers.zeros("b", (2,), np.float64).dtype == np.float64   # another type: anew


def test_numba_chunks_in_reused_arrays_equal_fresh_ones():
    """Two chunks through one ChunkBuffers (the second smaller, a view of the first's
    storage, after the first was scribbled over) give what fresh arrays give."""
    plan = compile_scenario(load_scenario(REFERENCE))
    backend = select_backend("numba")
    buffers = ChunkBuffers()
    for first, count in ((0, 96), (96, 40)):
        reused = backend.simulate_chunk(plan, 5, first, count, True, buffers=buffers)
        fresh = backend.simulate_chunk(plan, 5, first, count, True)
        for mine, theirs in zip(reused, fresh):
            assert mine.shape == theirs.shape
            np.testing.assert_array_equal(mine, theirs)
        for array in reused:
            array[...] = np.nan                       # what a careless hook might leave


def test_a_run_in_chunks_keeps_what_each_chunk_gave():
    """The kept metrics and inputs are copies: 3 chunks through reused arrays equal 1."""
    plan = compile_scenario(load_scenario(REFERENCE))
    backend = select_backend("numba")
    seen = []
    whole = simulate(plan, 250, 3, backend, chunk_size=250)
    parts = simulate(plan, 250, 3, backend, chunk_size=100,
                     chunk_hooks=(lambda first, m, w, n: seen.append((first, n.shape[0])),))
    assert seen == [(0, 100), (100, 100), (200, 50)]
    np.testing.assert_array_equal(whole.metrics, parts.metrics)
    np.testing.assert_array_equal(whole.world, parts.world)
    np.testing.assert_array_equal(whole.costs, parts.costs)
