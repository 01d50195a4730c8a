"""One chunk of capacity bands and hall power in compiled loops (Numba), for results.bands.

results.bands defines the bands (capacity as pieces over days, exact counts per value) and
the hall peak draw; its NumPy functions (capacity_pieces, ExactHistogram.add_pieces,
hall_peak_draw) stay the specification, and the tests hold these loops to them. Here a
scenario at a time, straight from the kernel's node_times[c, s, v]:

* capacity_blocks sorts the scenario's capacity events by day (as numpy's stable argsort),
  runs the total and every island's capacity through them in integer micro-units, and adds
  each piece of days it holds to the histogram blocks in difference form (+1 on its first
  day, -1 after its last): what ExactHistogram.add_pieces' bincounts compute, without the
  [c, events + 1] arrays of starts, ends and values.
* peak_draws sorts the scenario's power events by time (stable, NaN last), adds each hall's
  changes in the same order (the same floats as numpy's cumsum) and keeps the highest draw
  read after the last event of an instant.

Fixed performance only (every capacity an integer number of micro-units on the plan's
grids); a plan with drawn performance goes through results.bands' NumPy path.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..core.jit import entry, jit

compiled = entry([Path(__file__)])      # cached under this file's digest (mcrisk.core.jit)


@jit
def _before(keys, a, b) -> bool:
    """Whether entry a comes before entry b in numpy.argsort(keys, kind='stable'): by key,
    NaN last, ties by index (a strict total order)."""
    x, y = keys[a], keys[b]
    if x != x:
        return y != y and a < b
    return y != y or x < y or (x == y and a < b)


@jit
def _sort(keys, order) -> None:
    """Sort the permutation `order` in place into numpy.argsort(keys, kind='stable').

    Performance: an insertion sort that starts from the previous scenario's order, which
    the next scenario's events mostly keep, so it costs about one comparison an event;
    from the identity it cost two thirds of the chunk. The order is a strict total order
    (_before), so the result does not depend on where it starts."""
    for j in range(1, order.size):
        current = order[j]
        p = j - 1
        while p >= 0 and _before(keys, current, order[p]):
            order[p + 1] = order[p]
            p -= 1
        order[p + 1] = current


@compiled
def capacity_blocks(node_times, s, event_node, delta, event_island, cap0, n_days,
                    total_lo, total_step, total_block, largest_lo, largest_step,
                    largest_block):
    """Add strategy s's capacity pieces of every scenario of the chunk to total_block and
    largest_block ([n_days + 1, bins] int64, difference form over days; bin of value v:
    (v - lo) // step). delta and cap0 in integer micro-units (results.bands.to_units)."""
    c = node_times.shape[0]
    k = event_node.size
    islands = cap0.size
    days = np.empty(k)
    order = np.arange(k)
    capacity = np.empty(islands, np.int64)
    base = 0
    for isl in range(islands):
        base += cap0[isl]
    for i in range(c):
        for e in range(k):
            day = np.ceil(node_times[i, s, event_node[e]])
            if not day < n_days:                        # later than the last day, inf, NaN
                day = n_days
            days[e] = max(day, 0.0)
        _sort(days, order)
        for isl in range(islands):
            capacity[isl] = cap0[isl]
        total = base
        start = 0
        for j in range(k + 1):
            end = n_days if j == k else np.int64(days[order[j]])
            if end > start:                             # an empty piece counts nowhere
                largest = capacity[0]
                for isl in range(1, islands):
                    largest = max(largest, capacity[isl])
                column = (total - total_lo) // total_step
                total_block[start, column] += 1
                total_block[end, column] -= 1
                column = (largest - largest_lo) // largest_step
                largest_block[start, column] += 1
                largest_block[end, column] -= 1
            if j < k:
                e = order[j]
                total += delta[e]
                capacity[event_island[e]] += delta[e]
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
    for i in range(c):
        for e in range(p):
            times[e] = node_times[i, s, event_node[e]]
        _sort(times, order)
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
