"""One chunk of milestone times reduced in compiled loops (Numba), for mcrisk.results.milestones.

mcrisk.results.milestones defines the milestones, the critical path and the binned histogram; its
NumPy functions (critical_nodes, milestone_times) stay the specification, and the tests hold
these loops to them. What is here is only how fast a chunk goes through them:

* chunk_milestones reads the kernel's node_times[c, s, v] as it is (scenario-major: one
  scenario's nodes contiguous) and, per scenario, writes every milestone's time (into a
  [milestone, scenario] array, the layout whose row sums the mean takes) and walks the
  critical path once, counting the milestones on it. No transposed copy of node_times, no
  [node, scenario] arrays of drivers and flags.
* set_windows, add_to_bins and bins_order_statistics are the binned store past the exact
  scenarios (mcrisk.results.milestone_store): each milestone's window of bins set once, a
  chunk counted into it in one walk (the times outside it returned, kept exactly), and the
  order statistics read off the bins.

Performance (reference, three chunks of 65,536 scenarios past the first 25,000 kept exactly,
every strategy; old and new collector on the same chunks in one process, this shared 2-core
machine): 36.3 s -> 8.5 s before the helpers ran as calls, ~1 s a chunk after. The bins
replaced the sort and the sparse tables' merges (benchmarks/RESULTS.md, issue 27): what is
left is the critical path walk.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..core.jit import entry, jit

# The entry points below, cached under this file's digest (mcrisk.core.jit). Performance: the
# per-scenario helpers (`jit`) run as calls: inlined into chunk_milestones (jit_inline) the
# whole took 1.7x longer (reference, 65,536 scenarios, the strategy with the longest critical
# paths).
compiled = entry([Path(__file__)])

TILE = 256                     # scenarios whose milestone times are written out together


@jit
def _max_nan(a: float, b: float) -> float:
    """numpy.maximum: NaN when either is NaN."""
    if a != a or b != b:
        return math.nan
    return a if a >= b else b


@jit
def _driver(node_times, world, i, s, v, dep_ptr, dep_idx, is_crew, crew_rows, base_const,
            base_q, add_const, add_q, tolerance) -> int:
    """The node that set node v's time in one scenario (-1: its own date), as
    milestones._critical_by_node decides it."""
    first, last = dep_ptr[s, v], dep_ptr[s, v + 1]
    crew = is_crew[v] and crew_rows.size > 1
    driver = -1
    base = base_const[s, v]
    if base_q[v] >= 0:
        base = _max_nan(base, world[i, base_q[v]])
    start = base
    if last > first:
        latest = node_times[i, s, dep_idx[s, first]]
        chosen = dep_idx[s, first]
        for p in range(first + 1, last):               # ties: the first listed
            d = dep_idx[s, p]
            if node_times[i, s, d] > latest:
                latest = node_times[i, s, d]
                chosen = d
        if latest >= base:                             # ties: the dependency
            driver = chosen
        start = _max_nan(base, latest)
    if crew:
        adds = add_const[s, v]
        for j in range(add_q.shape[2]):
            if add_q[s, v, j] >= 0:
                adds = adds + world[i, add_q[s, v, j]]
        begin = node_times[i, s, v] - adds
        if not begin > start + tolerance:              # it did not wait: nothing to look for
            return driver
        best, gap = -1, math.inf
        for other in crew_rows:                        # numpy.argmin: first least, NaN first
            if other == v:
                continue
            distance = abs(node_times[i, s, other] - begin)
            if distance != distance:
                best, gap = other, distance
                break
            if best < 0 or distance < gap:
                best, gap = other, distance
        if gap <= tolerance:
            driver = best
    return driver


@jit
def _milestone_times(node_times, i, s, member_ptr, members, first, tile, row):
    """out[k] = milestone k's time given its nodes' times: the earliest member for a `first`
    rollup, else the latest; NaN when a member is NaN (numpy.min and numpy.max)."""
    for k in range(member_ptr.size - 1):
        value = node_times[i, s, members[member_ptr[k]]]
        for p in range(member_ptr[k] + 1, member_ptr[k + 1]):
            other = node_times[i, s, members[p]]
            if value != value:
                break
            if other != other or (other < value if first[k] else other > value):
                value = other
        tile[row, k] = value


@jit
def _walk_critical_path(node_times, world, i, s, completion, is_ancestor, dep_ptr, dep_idx,
                        is_crew, crew_rows, base_const, base_q, add_const, add_q, tolerance,
                        on_path, path) -> int:
    """Mark on_path[v] for the nodes on scenario i's critical path (the latest completion
    node, the first on ties as numpy.argmax, back along each node's driver), list them in
    path; returns how many. Only the nodes on the path have their driver worked out (a
    node's driver depends on its own dependencies alone); a node completion does not wait
    for ends the path, as in milestones._critical_by_node."""
    end = completion[0]
    for v in completion:
        if node_times[i, s, v] != node_times[i, s, v]:
            end = v
            break
        if node_times[i, s, v] > node_times[i, s, end]:
            end = v
    current = end
    length = 0
    for _ in range(node_times.shape[2] + 1):
        on_path[current] = True
        path[length] = current
        length += 1
        if not is_ancestor[current]:
            break
        current = _driver(node_times, world, i, s, current, dep_ptr, dep_idx, is_crew,
                          crew_rows, base_const, base_q, add_const, add_q, tolerance)
        if current < 0:
            break
    return length


@compiled
def chunk_milestones(node_times, world, s, member_ptr, members, first, is_ancestor, dep_ptr,
                     dep_idx, is_crew, crew_rows, base_const, base_q, add_const, add_q,
                     completion, tolerance, times_out, critical_out):
    """Strategy s of one chunk: times_out[k, i] = milestone k's time in scenario i (the
    earliest of its members for a `first` rollup, else the latest; NaN if a member is NaN,
    as numpy.min/max), and critical_out[k] += the scenarios in which some member of k lies
    on the critical path (milestones module docstring)."""
    c = node_times.shape[0]
    n_nodes = node_times.shape[2]
    n_items = member_ptr.size - 1
    on_path = np.zeros(n_nodes, np.bool_)
    path = np.empty(n_nodes + 1, np.int64)
    tile = np.empty((TILE, n_items))
    for tile_start in range(0, c, TILE):
        tile_end = min(tile_start + TILE, c)
        for i in range(tile_start, tile_end):
            _milestone_times(node_times, i, s, member_ptr, members, first, tile, i - tile_start)
            length = _walk_critical_path(node_times, world, i, s, completion, is_ancestor,
                                         dep_ptr, dep_idx, is_crew, crew_rows, base_const,
                                         base_q, add_const, add_q, tolerance, on_path, path)
            for k in range(n_items):
                for p in range(member_ptr[k], member_ptr[k + 1]):
                    if on_path[members[p]]:
                        critical_out[k] += 1
                        break
            for j in range(length):
                on_path[path[j]] = False
        # Performance: a tile of scenarios goes out milestone by milestone, in runs along
        # times_out's rows; a scenario at a time wrote each milestone on its own page of
        # memory.
        for k in range(n_items):
            for i in range(tile_start, tile_end):
                times_out[k, i] = tile[i - tile_start, k]


TAIL_SHARE = 0.001            # the window holds the first scenarios' times from this quantile
MARGIN_SHARE = 0.25           # to 1 - it, widened by this share of that range each side (at
                              # least a day)


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
    counts[k, j] += them, low/high: their smallest and largest. Returns the finite times
    outside the windows, (milestone, time) in row order, kept exactly; non_finite[k] += the
    row's non-finite times (counted apart, as +inf)."""
    m, n = rows.shape
    n_bins = counts.shape[1]
    outside = 0
    for k in range(m):                                  # the bins, and how many are outside
        for i in range(n):
            value = rows[k, i]
            if not math.isfinite(value):
                non_finite[k] += 1
                continue
            j = (np.int64(math.floor(value / base_days)) >> exponent[k]) - origin[k]
            if j < 0 or j >= n_bins:
                outside += 1
            elif counts[k, j] == 0:
                low[k, j] = value
                high[k, j] = value
                counts[k, j] = 1
            else:
                if value < low[k, j]:
                    low[k, j] = value
                if value > high[k, j]:
                    high[k, j] = value
                counts[k, j] += 1
    tail_items = np.empty(outside, np.int64)
    tail_times = np.empty(outside)
    if outside == 0:
        return tail_items, tail_times
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
