"""Order statistics of many scenarios without sorting them, and the other passes over every
scenario that the statistics make, in compiled loops (Numba).

The NumPy functions they stand for stay the specification, and the tests hold these loops to
them: select_ranks (quantiles.order_statistics), stable_argsort and average_ranks
(drivers.stable_order and drivers.average_ranks), crossings (paired.crossings). Each is
used from core.tasks.COMPILED_FROM scenarios on.

quantiles.order_statistics is the specification: numpy.sort(values)[ranks] (NaN last). What
is here is only how fast a summary, a curve or a paired test reads a few ranks out of a
column of 10^6 scenarios: a sort of the whole column (~60 ms at 10^6, and the report, the
summaries and the tests took dozens) is not needed to read a few dozen ranks of it.

select_ranks takes two passes over the values (a pair of arrays read as one, so that a
pooled quantile needs no concatenated copy):

1. the finite values' smallest and largest, then a count per bucket: -inf, the smallest
   value itself, BUCKETS linear buckets between, the largest value itself, +inf, NaN. The
   bucket of a value never decreases as the value grows ((x - lo) * scale, floored, is
   monotone in IEEE arithmetic), so bucket by bucket the counts are the sorted order's.
   The smallest and the largest value have buckets of their own: they are the usual atoms
   (a trough depth of exactly 0, or the whole baseline), which would otherwise share a
   bucket with its neighbours and need sorting.
2. the values of the buckets that hold a wanted rank, gathered and sorted (numpy.sort's
   order), each rank read off its bucket; a bucket whose values are all equal (an atom,
   the infinities, NaN) is read without sorting. Each wanted bucket is sorted, or found all
   equal, once however many ranks fall in it (Performance: a curve's 401 ranks of a trough
   depth column, 10^6 values, most at a few atoms, measured 84 ms when every rank rescanned
   its atom, 9 ms scanned once). Worst case, most values in one bucket
   with several distinct values: that bucket is sorted, about what numpy.sort costs.

Ties of -0.0 and 0.0 (equal as numbers) may come out with either sign, as in numpy.sort.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.jit import entry, jit

compiled = entry([Path(__file__)])      # cached under this file's digest (mcrisk.core.jit)

BUCKETS = 1 << 16               # linear buckets between the smallest and the largest value


@jit
def _at(a, b, i):
    """Value i of a and b read as one array."""
    return a[i] if i < a.size else b[i - a.size]


@jit
def _bucket(x, lo, hi, scale, buckets) -> int:
    """0: -inf; 1: lo; 2 .. buckets + 1: (lo, hi) linearly; buckets + 2: hi; then +inf, NaN."""
    if np.isnan(x):
        return buckets + 4
    if x == np.inf:
        return buckets + 3
    if x == -np.inf:
        return 0
    if x <= lo:
        return 1
    if x >= hi:
        return buckets + 2
    k = int((x - lo) * scale)
    return 2 + min(max(k, 0), buckets - 1)


@jit
def _all_equal(segment) -> bool:
    """Whether every value of a (NaN-free) segment is the first one: an atom, read unsorted."""
    for x in segment:
        if x != segment[0]:
            return False
    return True


@compiled
def select_ranks(a, b, ranks, out):
    """out[j] = numpy.sort(concatenate([a, b]))[ranks[j]] (ranks ascending, in range)."""
    n = a.size + b.size
    lo, hi = np.inf, -np.inf
    for i in range(n):
        x = _at(a, b, i)
        if x > -np.inf and x < np.inf:
            lo = min(lo, x)
            hi = max(hi, x)
    buckets = BUCKETS
    scale = buckets / (hi - lo) if hi > lo else 0.0
    if not scale < np.inf:                          # hi - lo overflowed or underflowed
        scale = 0.0
    counts = np.zeros(buckets + 6, np.int64)
    for i in range(n):
        counts[_bucket(_at(a, b, i), lo, hi, scale, buckets) + 1] += 1
    for k in range(1, counts.size):                 # counts[k]: values in buckets before k
        counts[k] += counts[k - 1]
    wanted = np.zeros(buckets + 5, np.bool_)
    k = 0
    for j in range(ranks.size):
        while counts[k + 1] <= ranks[j]:
            k += 1
        wanted[k] = True
    offset = np.zeros(buckets + 6, np.int64)        # where each wanted bucket's values go
    for k in range(buckets + 5):
        offset[k + 1] = offset[k] + (counts[k + 1] - counts[k] if wanted[k] else 0)
    gathered = np.empty(offset[-1])
    filled = offset[:-1].copy()
    for i in range(n):
        x = _at(a, b, i)
        k = _bucket(x, lo, hi, scale, buckets)
        if wanted[k]:
            gathered[filled[k]] = x
            filled[k] += 1
    k = 0
    ready = -1                      # the wanted bucket last sorted, or found all equal
    for j in range(ranks.size):
        while counts[k + 1] <= ranks[j]:
            k += 1
        segment = gathered[offset[k]:offset[k + 1]]
        if k != ready:              # once per bucket, however many ranks it holds
            if 1 < k < buckets + 2 and not _all_equal(segment):
                segment.sort()                      # NaN never here: it has its own bucket
            ready = k
        out[j] = segment[ranks[j] - counts[k]]


RADIX_BITS = 11                 # stable_argsort: a digit's bits (2,048 counters a pass)


@jit
def sort_key(x) -> np.uint64:
    """An unsigned key whose order is numpy.sort's order of floats: -0.0 as 0.0 (they are
    equal, so ties), every NaN last and equal to every other NaN."""
    if np.isnan(x):
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    if x == 0.0:
        x = 0.0
    bits = np.float64(x).view(np.uint64)
    if bits >> np.uint64(63):
        return ~bits                                # negative: larger magnitude first
    return bits | np.uint64(0x8000000000000000)


@compiled
def stable_argsort(values, order):
    """order = numpy.argsort(values, kind='stable'): ties (-0.0 with 0.0, NaN with NaN) in
    index order, NaN last. An LSD radix sort of sort_key, RADIX_BITS a pass (stable, so the
    indices of ties stay in order); a pass whose digit every key shares is skipped (a
    narrow range, small integers)."""
    n = values.size
    passes = (64 + RADIX_BITS - 1) // RADIX_BITS
    size = 1 << RADIX_BITS
    mask = np.uint64(size - 1)
    keys = np.empty(n, np.uint64)
    counts = np.zeros((passes, size), np.int64)
    for i in range(n):
        key = sort_key(values[i])
        keys[i] = key
        for p in range(passes):
            counts[p, (key >> np.uint64(p * RADIX_BITS)) & mask] += 1
    for i in range(n):
        order[i] = i
    other_keys = np.empty(n, np.uint64)
    other_order = np.empty(n, np.int64)
    for p in range(passes):
        shift = np.uint64(p * RADIX_BITS)
        if counts[p, (keys[0] >> shift) & mask] == n:  # every key has this digit
            continue
        start = 0
        for d in range(size):                       # counts -> where each digit's run starts
            c = counts[p, d]
            counts[p, d] = start
            start += c
        for i in range(n):
            d = (keys[i] >> shift) & mask
            j = counts[p, d]
            counts[p, d] = j + 1
            other_keys[j] = keys[i]
            other_order[j] = order[i]
        keys, other_keys = other_keys, keys
        order[:] = other_order


@compiled
def average_ranks(values, order, ranks):
    """ranks = drivers.average_ranks(values, order) (scipy.stats.rankdata's 'average': ties
    share the mean of their 1-based ranks; all NaN when a value is NaN), from `order`, any
    argsort of values, in one walk over it."""
    n = values.size
    if n and np.isnan(values[order[n - 1]]):        # NaN sorts last
        ranks[:] = np.nan
        return
    start = 0
    while start < n:
        end = start + 1
        while end < n and values[order[end]] == values[order[start]]:
            end += 1
        shared = 0.5 * (start + end + 1)
        for j in range(start, end):
            ranks[order[j]] = shared
        start = end


@compiled
def crossings(x, y, q, counts):
    """counts = [#(x <= q < y), #(y <= q < x), #(x < q <= y), #(y < q <= x)]: the pairs that
    cross q upwards and downwards, with "above" as > q and as >= q (paired.crossings, the
    counts of paired.paired_quantile_test), in one pass over the pairs; a NaN is never
    above (nor at) q."""
    up_gt, down_gt, up_ge, down_ge = 0, 0, 0, 0
    for i in range(x.size):
        a, b = x[i], y[i]
        a_gt, b_gt = a > q, b > q
        a_ge, b_ge = a >= q, b >= q
        up_gt += 1 if b_gt and not a_gt else 0
        down_gt += 1 if a_gt and not b_gt else 0
        up_ge += 1 if b_ge and not a_ge else 0
        down_ge += 1 if a_ge and not b_ge else 0
    counts[0], counts[1], counts[2], counts[3] = up_gt, down_gt, up_ge, down_ge
