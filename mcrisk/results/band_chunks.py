"""One chunk of capacity bands and hall power in compiled loops (Numba), for results.bands.

results.bands defines the bands (capacity as pieces over days, exact counts per value) and
the hall peak draw; its NumPy functions (capacity_pieces, ExactHistogram.add_pieces,
hall_peak_draw) stay the specification, and the tests hold these loops to them. Here a
scenario at a time, straight from the kernel's node_times[c, s, v]:

* _capacity_pieces sorts the scenario's capacity events by day (as numpy's stable argsort;
  up to INSERTION_UP_TO events by rank, _rank_days) and runs the total and every island's
  capacity through them in integer micro-units;
  capacity_blocks adds each piece of days it yields to the histogram blocks in difference form (+1 on its first
  day, -1 after its last): what ExactHistogram.add_pieces' bincounts compute, without the
  [c, events + 1] arrays of starts, ends and values.
* peak_draws sorts the scenario's power events by time (stable, NaN last; many by bucket,
  _bucket_times), adds each hall's changes in the same order (the same floats as numpy's
  cumsum) and keeps the highest draw read after the last event of an instant.

Fixed performance only (every capacity an integer number of micro-units on the plan's
grids); a plan with drawn performance goes through results.bands' NumPy path.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..core.jit import entry, jit, jit_inline

compiled = entry([Path(__file__)])      # cached under this file's digest (mcrisk.core.jit)


@jit
def _before(keys, a, b) -> bool:
    """Whether entry a comes before entry b in numpy.argsort(keys, kind='stable'): by key,
    NaN last, ties by index (a strict total order)."""
    x, y = keys[a], keys[b]
    if x != x:
        return y != y and a < b
    return y != y or x < y or (x == y and a < b)


INSERTION_UP_TO = 64            # events sorted by insertion from the last order, else merged


@jit
def _sort(keys, order, buffer) -> None:
    """Sort the permutation `order` in place into numpy.argsort(keys, kind='stable').

    Performance: up to INSERTION_UP_TO events, an insertion sort that starts from the
    previous scenario's order, which the next scenario's events mostly keep, so it costs
    about one comparison an event (from the identity it cost two thirds of the chunk); more
    events (a plan of thousands of units, whose orders differ by scenario) take a bottom-up
    merge sort through `buffer` (as long as order): the insertion sort's k^2 / 4 comparisons
    cost 1.5 s a strategy for 1,297 scenarios of 1,536 events. The order is a strict total
    order (_before), so the result depends neither on the method nor on where it starts."""
    k = order.size
    if k <= INSERTION_UP_TO:
        for j in range(1, k):
            current = order[j]
            p = j - 1
            while p >= 0 and _before(keys, current, order[p]):
                order[p + 1] = order[p]
                p -= 1
            order[p + 1] = current
        return
    width = 1
    source, target = order, buffer
    in_buffer = False
    while width < k:
        for left in range(0, k, 2 * width):
            middle, right = min(left + width, k), min(left + 2 * width, k)
            a, b, out = left, middle, left
            while a < middle and b < right:
                if _before(keys, source[b], source[a]):
                    target[out] = source[b]
                    b += 1
                else:
                    target[out] = source[a]
                    a += 1
                out += 1
            while a < middle:
                target[out] = source[a]
                a += 1
                out += 1
            while b < right:
                target[out] = source[b]
                b += 1
                out += 1
        source, target = target, source
        in_buffer = not in_buffer
        width *= 2
    if in_buffer:
        for j in range(k):
            order[j] = buffer[j]


PIECE_START, PIECE_END, PIECE_TOTAL, PIECE_LARGEST = range(4)     # rows of the pieces
EVENT_BITS = 6                  # _rank_days: an event's number in a key's low bits
assert INSERTION_UP_TO <= 1 << EVENT_BITS


@jit_inline
def _rank_days(days, keys, order) -> None:
    """order: numpy.argsort(days, kind='stable') of at most INSERTION_UP_TO whole days
    (0 .. n_days), each event placed at its rank: the number of events before it by (day,
    event number), one key day << EVENT_BITS | e each, so all keys differ.

    Performance: every comparison made, none branched on: the reference's 24 events sort
    in less than half the time of _sort's insertion from the last order, whose branches the
    scenarios' differing orders mispredict (one chunk, 5 strategies: 0.151 s thread time
    for the days and _sort, 0.090 s by rank; Numba 0.68)."""
    k = days.size
    for e in range(k):
        keys[e] = (np.int64(days[e]) << EVENT_BITS) | e
    for e in range(k):
        key = keys[e]
        rank = 0
        for f in range(k):
            rank += keys[f] < key
        order[rank] = e


DAYS_PER_EVENT = 16             # _count_days where the days are at most this many per event


@jit_inline
def _count_days(days, counts, order) -> None:
    """order: numpy.argsort(days, kind='stable') of whole days 0 .. counts.size - 1, by
    counting (counts: scratch, int64[n_days + 1]): each day's events in their order.

    Performance: linear in events and days, where _sort merges (k log k comparisons, each
    branch a coin flip): the 64x plan's 1,536 capacity events a scenario."""
    counts[:] = 0
    for e in range(days.size):
        counts[np.int64(days[e])] += 1
    before = 0
    for d in range(counts.size):
        held = counts[d]
        counts[d] = before
        before += held
    for e in range(days.size):
        d = np.int64(days[e])
        order[counts[d]] = e
        counts[d] += 1


@jit_inline
def _capacity_pieces(node_times, i, s, event_node, delta, event_island, cap0, n_days, days,
                     order, buffer, keys, counts, capacity, pieces) -> int:
    """Scenario i's capacity pieces under strategy s, as results.bands.capacity_pieces
    makes them: its capacity events sorted by day (ceil of the time, clamped to 0 .. n_days:
    later than the last day, inf and NaN count from n_days; numpy's stable argsort), the total
    and every island's capacity run through them in integer micro-units. Piece q holds the
    total pieces[PIECE_TOTAL, q] and the largest island's pieces[PIECE_LARGEST, q] over days
    pieces[PIECE_START, q] .. pieces[PIECE_END, q] - 1; empty pieces are left out. Returns
    how many. Scratch (_scratch): days, order (a permutation of the k events), buffer (k),
    keys (int64[k]), counts (int64[n_days + 1]), capacity (an entry per island), pieces
    (int64[4, k + 1])."""
    k = event_node.size
    islands = cap0.size
    for e in range(k):
        day = np.ceil(node_times[i, s, event_node[e]])
        if not day < n_days:                            # later than the last day, inf, NaN
            day = n_days
        days[e] = max(day, 0.0)
    if k <= INSERTION_UP_TO:
        _rank_days(days, keys, order)
    elif n_days <= DAYS_PER_EVENT * k:
        _count_days(days, counts, order)
    else:
        _sort(days, order, buffer)
    total = 0
    for isl in range(islands):
        capacity[isl] = cap0[isl]
        total += cap0[isl]
    start = 0
    n = 0
    for j in range(k + 1):
        end = n_days if j == k else np.int64(days[order[j]])
        if end > start:                                 # an empty piece holds no day
            largest = capacity[0]
            for isl in range(1, islands):
                largest = max(largest, capacity[isl])
            pieces[PIECE_START, n] = start
            pieces[PIECE_END, n] = end
            pieces[PIECE_TOTAL, n] = total
            pieces[PIECE_LARGEST, n] = largest
            n += 1
        if j < k:
            e = order[j]
            total += delta[e]
            capacity[event_island[e]] += delta[e]
            start = end
    return n


@jit_inline
def _on_grid(values, lo, step) -> bool:
    """Whether every value lies on lo + m * step (m a whole number)."""
    for v in values:
        if (v - lo) % step != 0:
            return False
    return True


@compiled
def capacity_blocks(node_times, s, event_node, delta, event_island, cap0, n_days,
                    total_lo, total_step, total_block, largest_lo, largest_step,
                    largest_block):
    """Add strategy s's capacity pieces of every scenario of the chunk to total_block and
    largest_block ([n_days + 1, bins] int64, difference form over days; bin of value v:
    (v - lo) // step). delta and cap0 in integer micro-units (results.bands.to_units).

    Performance: where every change and day-0 capacity is a whole number of steps (always,
    on results.bands.capacity_grids' grids), the running capacities are counted in steps
    from the grid's lo, so a piece's bin is its value, not a division (the same bins:
    (v - lo) // step of a multiple of step); a block given in column order (a transposed
    C array, as results.bands passes it) keeps one value's days together, which the
    pieces' scattered updates reach in cache (one reference chunk, 5 strategies: 0.247 s
    thread time before, 0.150 s with these and _rank_days; benchmarks/bench_band_hook.py)."""
    k = event_node.size
    days, order, buffer = np.empty(k), np.arange(k), np.empty(k, np.int64)
    keys, counts = np.empty(k, np.int64), np.empty(n_days + 1, np.int64)
    capacity, pieces = np.empty(cap0.size, np.int64), np.empty((4, k + 1), np.int64)
    starts, ends = pieces[PIECE_START], pieces[PIECE_END]
    totals, largests = pieces[PIECE_TOTAL], pieces[PIECE_LARGEST]
    zero = np.zeros(1, np.int64)
    if (total_step == largest_step and _on_grid(delta, 0, total_step)
            and _on_grid(cap0, 0, total_step) and _on_grid(zero, total_lo, total_step)
            and _on_grid(zero, largest_lo, largest_step)):
        step = total_step
        delta_steps = delta // step
        total0 = (cap0.sum() - total_lo) // step        # a sum of multiples of step
        cap0_steps = (cap0 - largest_lo) // step        # each island from largest_lo
        # the pieces' totals count every island from largest_lo: shifted to total_lo
        shift = total0 - cap0_steps.sum()
        for i in range(node_times.shape[0]):
            n = _capacity_pieces(node_times, i, s, event_node, delta_steps, event_island,
                                 cap0_steps, n_days, days, order, buffer, keys, counts,
                                 capacity, pieces)
            for q in range(n):
                column = totals[q] + shift
                total_block[starts[q], column] += 1
                total_block[ends[q], column] -= 1
                largest_block[starts[q], largests[q]] += 1
                largest_block[ends[q], largests[q]] -= 1
        return
    for i in range(node_times.shape[0]):
        n = _capacity_pieces(node_times, i, s, event_node, delta, event_island, cap0, n_days,
                             days, order, buffer, keys, counts, capacity, pieces)
        for q in range(n):
            column = (totals[q] - total_lo) // total_step
            total_block[starts[q], column] += 1
            total_block[ends[q], column] -= 1
            column = (largests[q] - largest_lo) // largest_step
            largest_block[starts[q], column] += 1
            largest_block[ends[q], column] -= 1


@jit_inline
def _bucket_times(times, counts, bucket, order, buffer) -> None:
    """order: numpy.argsort(times, kind='stable') (NaN last) of k times, as _sort gives it:
    counted into k + 3 buckets that keep the times' order (-inf; k of equal width between
    the least and the greatest finite time; inf; NaN), each bucket's events then sorted
    among themselves by _sort (counts: int64[k + 3], bucket: int64[k], scratch).

    Performance: for the many events of a large plan, a few comparisons an event where
    _sort merges (k log k, each branch a coin flip): the 64x plan's 1,536 power events a
    scenario."""
    k = times.size
    lo, hi = math.inf, -math.inf
    for e in range(k):
        t = times[e]
        if abs(t) < math.inf:
            lo = min(lo, t)
            hi = max(hi, t)
    span = hi - lo
    scale = k / span if 0.0 < span < math.inf else 0.0
    if not scale < math.inf:                    # a span too small to divide by
        scale = 0.0
    counts[:] = 0
    for e in range(k):
        t = times[e]
        if math.isnan(t):
            b = k + 2
        elif t == -math.inf:
            b = 0
        elif t == math.inf:
            b = k + 1
        elif scale == 0.0:                      # one finite time, or a span beyond float64
            b = 1
        else:                                   # monotone in t: rounding keeps the order
            b = 1 + min(np.int64((t - lo) * scale), k - 1)
        bucket[e] = b
        counts[b] += 1
    before = 0
    for b in range(k + 3):
        held = counts[b]
        counts[b] = before
        before += held
    for e in range(k):
        order[counts[bucket[e]]] = e
        counts[bucket[e]] += 1
    start = 0                                   # counts[b]: one past bucket b's last
    for b in range(k + 3):
        end = counts[b]
        if end - start > INSERTION_UP_TO:
            _sort(times, order[start:end], buffer[start:end])
        else:                                   # in place: no views for a bucket of few
            for j in range(start + 1, end):
                current = order[j]
                q = j - 1
                while q >= start and _before(times, current, order[q]):
                    order[q + 1] = order[q]
                    q -= 1
                order[q + 1] = current
        start = end


@compiled
def peak_draws(node_times, s, event_node, event_hall, event_delta, draw0, peak):
    """peak[i, h]: hall h's highest draw in kW at any time in scenario i under strategy s
    (results.bands.hall_peak_draw: events at one instant apply together, so the draw is read
    after the last event of each instant; never below the draw at day 0)."""
    c = node_times.shape[0]
    p = event_node.size
    times = np.empty(p)
    order = np.arange(p)
    buffer = np.empty(p, np.int64)
    counts, bucket = np.empty(p + 3, np.int64), np.empty(p, np.int64)
    for i in range(c):
        for e in range(p):
            times[e] = node_times[i, s, event_node[e]]
        if p <= INSERTION_UP_TO:
            _sort(times, order, buffer)
        else:
            _bucket_times(times, counts, bucket, order, buffer)
        for h in range(draw0.size):
            running = 0.0                               # numpy: cumsum, then draw0 added
            latest = -math.inf
            for j in range(p):
                e = order[j]
                running += event_delta[e] if event_hall[e] == h else 0.0
                draw = draw0[h] + running
                last_of_instant = j == p - 1 or times[order[j + 1]] != times[e]
                if last_of_instant and draw > latest:
                    latest = draw
            peak[i, h] = max(draw0[h], latest)


@compiled
def capacity_day_keys(node_times, s, event_node, delta, event_island, cap0, n_days,
                      total_lo, total_step, total_bins, largest_lo, largest_step,
                      largest_bins, total_keys, largest_keys):
    """Strategy s's total and largest-island capacity on every day of every scenario of the
    chunk, as keys day * bins + (value - lo) // step: total_keys[i * n_days + d] and
    largest_keys[...] (int64[c * n_days]). The pieces are capacity_blocks' (_capacity_pieces);
    each piece writes its value on each day it holds, where capacity_blocks adds it to a dense
    block (which a grid of many values cannot afford)."""
    k = event_node.size
    days, order, buffer = np.empty(k), np.arange(k), np.empty(k, np.int64)
    keys, counts = np.empty(k, np.int64), np.empty(n_days + 1, np.int64)
    capacity, pieces = np.empty(cap0.size, np.int64), np.empty((4, k + 1), np.int64)
    starts, ends = pieces[PIECE_START], pieces[PIECE_END]
    totals, largests = pieces[PIECE_TOTAL], pieces[PIECE_LARGEST]
    for i in range(node_times.shape[0]):
        n = _capacity_pieces(node_times, i, s, event_node, delta, event_island, cap0, n_days,
                             days, order, buffer, keys, counts, capacity, pieces)
        for q in range(n):
            total_column = (totals[q] - total_lo) // total_step
            largest_column = (largests[q] - largest_lo) // largest_step
            for d in range(starts[q], ends[q]):
                total_keys[i * n_days + d] = d * total_bins + total_column
                largest_keys[i * n_days + d] = d * largest_bins + largest_column


@compiled
def count_runs(keys):
    """(distinct keys, their counts) of ascending `keys`."""
    size = 0
    for j in range(keys.size):
        if j == 0 or keys[j] != keys[j - 1]:
            size += 1
    distinct = np.empty(size, np.int64)
    counts = np.zeros(size, np.int64)
    at = -1
    for j in range(keys.size):
        if j == 0 or keys[j] != keys[j - 1]:
            at += 1
            distinct[at] = keys[j]
        counts[at] += 1
    return distinct, counts


@compiled
def merge_counts(a_keys, a_counts, b_keys, b_counts):
    """Two (ascending distinct keys, counts) tables as one, counts added where a key is in
    both."""
    na, nb_ = a_keys.size, b_keys.size
    i = j = size = 0
    while i < na or j < nb_:                            # pass 1: how many distinct keys
        if j == nb_ or (i < na and a_keys[i] < b_keys[j]):
            i += 1
        elif i == na or b_keys[j] < a_keys[i]:
            j += 1
        else:
            i += 1
            j += 1
        size += 1
    keys = np.empty(size, np.int64)
    counts = np.empty(size, np.int64)
    i = j = 0
    for out in range(size):                             # pass 2: merge
        if j == nb_ or (i < na and a_keys[i] < b_keys[j]):
            keys[out], counts[out] = a_keys[i], a_counts[i]
            i += 1
        elif i == na or b_keys[j] < a_keys[i]:
            keys[out], counts[out] = b_keys[j], b_counts[j]
            j += 1
        else:
            keys[out], counts[out] = a_keys[i], a_counts[i] + b_counts[j]
            i += 1
            j += 1
    return keys, counts
