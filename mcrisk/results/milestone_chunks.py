"""One chunk of milestone times reduced in compiled loops (Numba), for mcrisk.results.milestones.

mcrisk.results.milestones defines the milestones, the critical path and the binned histogram; its
NumPy functions (critical_nodes, milestone_times) stay the specification, and the tests hold
these loops to them. What is here is only how fast a chunk goes through them:

* chunk_milestones reads the kernel's node_times[c, s, v] a tile of scenarios at a time,
  transposed node-major (by_node[v, j], as _critical_by_node reads them), and writes every
  milestone's time for the tile (into a [milestone, scenario] array, the layout whose row
  sums the mean takes) lane by lane; then walks each scenario's critical path, counting the
  milestones on it. A node's driver is worked out for the whole tile (lane by lane, the
  vector units' way) the first time one of the tile's paths reaches it: a plan of a few
  dozen nodes gets most of its drivers once a tile, a plan of thousands only those near its
  tile's paths. The rules are applied lane by lane exactly as the scalar rules apply them
  (kernels/milestones.cuh keeps them one scenario a thread, function by function), so the
  numbers are the same bit for bit.
* set_windows, add_to_bins and bins_order_statistics are the binned store past the exact
  scenarios (mcrisk.results.milestone_store): each milestone's window of bins set once, a
  chunk counted into it in one walk (the times outside it returned, kept exactly), and the
  order statistics read off the bins.

Performance (reference, three chunks of 65,536 scenarios past the first 25,000 kept exactly,
every strategy; old and new collector on the same chunks in one process, this shared 2-core
machine): 36.3 s -> 8.5 s before the helpers ran as calls, ~1 s a chunk after. The bins
replaced the sort and the sparse tables' merges (benchmarks/RESULTS.md, issue 27). The tiles
(same chunk, one thread, every strategy, old and new loop in one process): reference
0.57 CPU-s -> 0.16-0.19 a chunk (the lanes without branches included); the 64x plan (2,594
scenarios a chunk) 0.65-0.78 -> 0.61-0.69. The whole hook (MilestoneCollector, the store
included, benchmarks/bench_milestone_chunk.py): reference 0.78 -> 0.31 CPU-s a chunk, the 64x
plan 1.25 -> 1.02.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..core.jit import entry, jit

# The entry points below, cached under this file's digest (mcrisk.core.jit). The helpers
# (`jit`) run as calls, once a tile or once a node and tile.
compiled = entry([Path(__file__)])

# Performance: a tile's node times (8 bytes each) at most TILE_BYTES, within TILE_MIN and
# TILE_MAX scenarios: the reference's 82 nodes take 256 scenarios; the 64x plan's 4,933
# take 8 (measured: 50 scenarios took its crews' rows 2x longer, every lane scanning 512
# crew rows for the few paths that reach them).
TILE_BYTES = 1 << 18
TILE_MIN, TILE_MAX = 8, 256


@jit
def _max_nan(a: float, b: float) -> float:
    """numpy.maximum: NaN when either is NaN."""
    return math.nan if (a != a) | (b != b) else (a if a >= b else b)


@jit
def _tile_drivers(by_node, world, start, n, v, dep_ptr, dep_idx, is_crew, crew_rows,
                  base_const, base_q, add_const, add_q, tolerance, out, begun, begin, gap,
                  chosen, best) -> None:
    """out[j] = the node that set node v's time in scenario start + j of the tile (-1: its own
    date), as milestones._critical_by_node decides it, for the tile's n scenarios at once
    (by_node[u, j]: node u's time in scenario start + j; the plan's arrays are strategy s's
    rows). Every rule is applied lane by lane as _critical_by_node applies it (ties, NaN,
    the crews' tolerance); begun, begin, gap, chosen and best are scratch lanes."""
    first, last = dep_ptr[v], dep_ptr[v + 1]
    for j in range(n):
        begun[j] = base_const[v]
    if base_q[v] >= 0:
        for j in range(n):
            begun[j] = _max_nan(begun[j], world[start + j, base_q[v]])
    if last > first:
        d = dep_idx[first]
        for j in range(n):
            begin[j] = by_node[d, j]                   # here: the latest dependency
            chosen[j] = d
        for p in range(first + 1, last):               # ties: the first listed
            d = dep_idx[p]
            for j in range(n):
                later = by_node[d, j] > begin[j]
                begin[j] = by_node[d, j] if later else begin[j]
                chosen[j] = d if later else chosen[j]
        for j in range(n):
            out[j] = chosen[j] if begin[j] >= begun[j] else -1     # ties: the dependency
            begun[j] = _max_nan(begun[j], begin[j])    # the day it could begin
    else:
        for j in range(n):
            out[j] = -1
    if not (is_crew[v] and crew_rows.size > 1):
        return
    waited = False
    for j in range(n):
        adds = add_const[v]
        for a in range(add_q.shape[1]):
            if add_q[v, a] >= 0:
                adds = adds + world[start + j, add_q[v, a]]
        begin[j] = by_node[v, j] - adds
        waited |= begin[j] > begun[j] + tolerance
    if not waited:                                     # none waited: nothing to look for
        return
    for j in range(n):
        best[j] = -1
        gap[j] = math.inf
    for other in crew_rows:                            # numpy.argmin: first least, NaN first
        if other == v:
            continue
        for j in range(n):
            distance = abs(by_node[other, j] - begin[j])
            take = (gap[j] == gap[j]) & ((distance != distance) | (best[j] < 0)
                                         | (distance < gap[j]))
            best[j] = other if take else best[j]
            gap[j] = distance if take else gap[j]
    for j in range(n):
        waited = begin[j] > begun[j] + tolerance
        out[j] = best[j] if waited & (gap[j] <= tolerance) else out[j]


@jit
def _tile_milestone_times(by_node, start, n, member_ptr, members, first, times_out,
                          row) -> None:
    """times_out[k, start + j] = milestone k's time in scenario start + j of the tile: the
    earliest member for a `first` rollup, else the latest; NaN when a member is NaN (numpy.min
    and numpy.max), member by member in order as a scalar fold. Performance: folded in `row`
    (scratch lanes) without branches, which the compiler turns into vector instructions
    (measured with the transposition, reference chunk, every strategy: 0.155 -> 0.103 CPU-s)."""
    for k in range(member_ptr.size - 1):
        a = members[member_ptr[k]]
        if member_ptr[k + 1] - member_ptr[k] == 1:     # one node: its times as they are
            for j in range(n):
                times_out[k, start + j] = by_node[a, j]
            continue
        for j in range(n):
            row[j] = by_node[a, j]
        for p in range(member_ptr[k] + 1, member_ptr[k + 1]):
            b = members[p]
            if first[k]:
                for j in range(n):
                    value, other = row[j], by_node[b, j]
                    earlier = (value == value) & ((other != other) | (other < value))
                    row[j] = other if earlier else value
            else:
                for j in range(n):
                    value, other = row[j], by_node[b, j]
                    later = (value == value) & ((other != other) | (other > value))
                    row[j] = other if later else value
        for j in range(n):
            times_out[k, start + j] = row[j]


@jit
def _walk_critical_paths(by_node, world, start, n, completion, is_ancestor, dep_ptr, dep_idx,
                         is_crew, crew_rows, base_const, base_q, add_const, add_q, tolerance,
                         drivers, ready, item_ptr, item_idx, seen, critical_out, end, scratch,
                         lanes) -> None:
    """For each scenario start + j of the tile: its critical path (the latest completion node,
    the first on ties as numpy.argmax, back along each node's driver; a node completion does
    not wait for ends it, as in milestones._critical_by_node), and critical_out[k] += 1 for
    each milestone k with a member on it (item_idx[item_ptr[v]:item_ptr[v + 1]]: the
    milestones node v belongs to; seen[k]: the last scenario counted). A node's drivers are
    worked out for the whole tile the first time a path of the tile reaches it
    (ready[v] == start: done; drivers[v, j])."""
    for j in range(n):
        end[j] = completion[0]
        scratch[0, j] = by_node[completion[0], j]
    for v in completion:
        for j in range(n):
            value = by_node[v, j]
            later = (scratch[0, j] == scratch[0, j]) & ((value != value) | (value > scratch[0, j]))
            end[j] = v if later else end[j]
            scratch[0, j] = value if later else scratch[0, j]
    for j in range(n):
        i = start + j
        current = end[j]
        for _ in range(by_node.shape[0] + 1):
            for p in range(item_ptr[current], item_ptr[current + 1]):
                k = item_idx[p]
                if seen[k] != i:
                    seen[k] = i
                    critical_out[k] += 1
            if not is_ancestor[current]:
                break
            if ready[current] != start:
                ready[current] = start
                _tile_drivers(by_node, world, start, n, current, dep_ptr, dep_idx, is_crew,
                              crew_rows, base_const, base_q, add_const, add_q, tolerance,
                              drivers[current], scratch[0], scratch[1], scratch[2], lanes[0],
                              lanes[1])
            current = drivers[current, j]
            if current < 0:
                break


@compiled
def chunk_milestones(node_times, world, s, member_ptr, members, first, is_ancestor, dep_ptr,
                     dep_idx, is_crew, crew_rows, base_const, base_q, add_const, add_q,
                     completion, tolerance, times_out, critical_out):
    """Strategy s of one chunk: times_out[k, i] = milestone k's time in scenario i (the
    earliest of its members for a `first` rollup, else the latest; NaN if a member is NaN,
    as numpy.min/max), and critical_out[k] += the scenarios in which some member of k lies
    on the critical path (milestones module docstring). A tile of scenarios at a time, its
    node times node-major (by_node[v, j], as _critical_by_node reads them)."""
    c, n_nodes = node_times.shape[0], node_times.shape[2]
    n_items = member_ptr.size - 1
    tile = max(TILE_MIN, min(TILE_MAX, TILE_BYTES // (8 * n_nodes)))
    by_node = np.empty((n_nodes, tile))
    drivers = np.empty((n_nodes, tile), np.int32)
    ready = np.full(n_nodes, -1, np.int64)
    end = np.empty(tile, np.int64)
    scratch = np.empty((3, tile))
    lanes = np.empty((2, tile), np.int32)
    item_ptr = np.zeros(n_nodes + 1, np.int64)         # the milestones of each node
    for p in range(members.size):
        item_ptr[members[p] + 1] += 1
    item_ptr = np.cumsum(item_ptr)
    item_idx = np.empty(members.size, np.int64)
    fill = item_ptr[:-1].copy()
    for k in range(n_items):
        for p in range(member_ptr[k], member_ptr[k + 1]):
            item_idx[fill[members[p]]] = k
            fill[members[p]] += 1
    seen = np.full(n_items, -1, np.int64)
    for start in range(0, c, tile):
        n = min(tile, c - start)
        whole = n - n % 8                              # transposed eight scenarios at a time
        for j0 in range(0, whole, 8):                  # (a fixed count: 0.055 -> 0.030 CPU-s
            for v in range(n_nodes):                   # a reference chunk)
                for j in range(8):
                    by_node[v, j0 + j] = node_times[start + j0 + j, s, v]
        for j in range(whole, n):
            for v in range(n_nodes):
                by_node[v, j] = node_times[start + j, s, v]
        _tile_milestone_times(by_node, start, n, member_ptr, members, first, times_out,
                              scratch[0])
        _walk_critical_paths(by_node, world, start, n, completion, is_ancestor, dep_ptr[s],
                             dep_idx[s], is_crew, crew_rows, base_const[s], base_q,
                             add_const[s], add_q[s], tolerance, drivers, ready, item_ptr,
                             item_idx, seen, critical_out, end, scratch, lanes)


TAIL_SHARE = 0.001            # the window holds the first scenarios' times from this quantile
MARGIN_SHARE = 0.25           # to 1 - it, widened by this share of that range each side (at
                              # least a day)
TAIL_ROOM = 1 / 128           # add_to_bins' room for the times outside, a share of the times


@compiled
def set_windows(first, base_days, n_bins, exponent, origin):
    """Each milestone's window of bins from its times in the first scenarios (first[m, K], the
    same K scenarios by index whatever the chunking): the finite times from the TAIL_SHARE
    quantile to the 1 - TAIL_SHARE one (order statistics at floor(TAIL_SHARE (F - 1)) and
    ceil((1 - TAIL_SHARE)(F - 1)) of the F finite ones), widened by MARGIN_SHARE of their
    range each side, at least a day; exponent[k]: the smallest e whose bins floor(t / base_days) >> e hold
    the window in n_bins; origin[k]: the window's first bin. No finite time: a window from
    day 0."""
    m = first.shape[0]
    for k in range(m):
        row = first[k][np.isfinite(first[k])]
        if row.size == 0:
            lo, hi = 0.0, 1.0
        else:
            row = np.sort(row)
            f = row.size - 1
            lo = row[int(math.floor(TAIL_SHARE * f))]
            hi = row[int(math.ceil((1.0 - TAIL_SHARE) * f))]
            margin = max(1.0, MARGIN_SHARE * (hi - lo))
            lo, hi = lo - margin, hi + margin
        start = np.int64(math.floor(lo / base_days))
        end = np.int64(math.floor(hi / base_days))
        e = 0
        while (end >> e) - (start >> e) + 1 > n_bins:
            e += 1
        exponent[k] = e
        origin[k] = start >> e


@compiled
def add_to_bins(rows, base_days, exponent, origin, counts, low, high, non_finite):
    """rows[m, c] (one chunk's times, a row per milestone) into each milestone's window of
    bins (set_windows): bin j of milestone k holds the times whose base bin
    floor(t / base_days), shifted right by exponent[k], is origin[k] + j (j < n_bins):
    counts[k, j] += them, low/high: their smallest and largest (an empty bin's low +inf and
    high -inf, as MilestoneBins sets them: its first time is both). Returns the finite times
    outside the windows, (milestone, time) in row order, kept exactly; non_finite[k] += the
    row's non-finite times (counted apart, as +inf).

    Performance: one walk of the rows, the times outside kept as they come in room for
    TAIL_ROOM of them (a second walk only past that: ~0.2% are outside); 0.16 -> 0.11 CPU-s
    a reference chunk (65,536 scenarios, every strategy, one thread)."""
    m, n = rows.shape
    n_bins = counts.shape[1]
    room = 64 + int(m * n * TAIL_ROOM)
    tail_items = np.empty(room, np.int64)
    tail_times = np.empty(room)
    outside = 0
    for k in range(m):
        for i in range(n):
            value = rows[k, i]
            if not math.isfinite(value):
                non_finite[k] += 1
                continue
            j = (np.int64(math.floor(value / base_days)) >> exponent[k]) - origin[k]
            if j < 0 or j >= n_bins:
                if outside < room:
                    tail_items[outside] = k
                    tail_times[outside] = value
                outside += 1
            else:
                if value < low[k, j]:
                    low[k, j] = value
                if value > high[k, j]:
                    high[k, j] = value
                counts[k, j] += 1
    if outside <= room:
        return tail_items[:outside].copy(), tail_times[:outside].copy()
    tail_items = np.empty(outside, np.int64)
    tail_times = np.empty(outside)
    at = 0
    for k in range(m):                                  # the times outside, in row order
        for i in range(n):
            value = rows[k, i]
            if math.isfinite(value):
                j = (np.int64(math.floor(value / base_days)) >> exponent[k]) - origin[k]
                if j < 0 or j >= n_bins:
                    tail_items[at] = k
                    tail_times[at] = value
                    at += 1
    return tail_items, tail_times


@compiled
def bins_order_statistics(counts, low, high, exponent, origin, base_days, ranks, out):
    """out[k, r] = the time at 0-based rank ranks[k, r] (ascending in r) among milestone k's
    binned times: a bin's smallest time when the rank is its first, its largest when the
    last, else the bin's middle held within those two; ranks outside 0 .. its binned times
    - 1 leave out[k, r] as it is (the tails' part)."""
    m, n_bins = counts.shape
    for k in range(m):
        width = base_days * (2.0 ** exponent[k])
        r = 0
        while r < ranks.shape[1] and ranks[k, r] < 0:
            r += 1
        before = 0
        for j in range(n_bins):
            c = counts[k, j]
            while r < ranks.shape[1] and ranks[k, r] < before + c:
                within = ranks[k, r] - before
                if within == 0:
                    out[k, r] = low[k, j]
                elif within == c - 1:
                    out[k, r] = high[k, j]
                else:
                    middle = (origin[k] + j + 0.5) * width
                    out[k, r] = min(max(middle, low[k, j]), high[k, j])
                r += 1
            before += c
            if r == ranks.shape[1]:
                break
