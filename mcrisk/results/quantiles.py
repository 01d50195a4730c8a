"""numpy.quantile's default method, one value at a time: where the quantile falls among the
sorted values and how it interpolates, the same operations in the same order, so that a
percentile read off a few order statistics equals numpy.quantile's to the bit.

At the bottom of results: the summaries (statistics) and the paired tests (paired) both
take their quantiles from here.
"""
from __future__ import annotations

import numpy as np


def quantile_position(n: int, q: float) -> tuple[int, int, float]:
    """(previous, next, gamma) of numpy.quantile's default 'linear' method for n values."""
    virtual = (n - 1) * q                       # numpy: (n - 1) * quantiles
    if virtual >= n - 1:                        # numpy: both neighbours are index -1, the
        return n - 1, n - 1, virtual - (-1)     # last value, and gamma is taken from -1
    previous = int(np.floor(virtual))
    return previous, previous + 1, virtual - previous


def lerp(a: float, b: float, t: float) -> float:
    """numpy's _lerp, the same operations in the same order (so the same float)."""
    a, b = np.float64(a), np.float64(b)
    diff_b_a = b - a
    if t >= 0.5:
        return float(b - diff_b_a * (1 - t))
    return float(a + diff_b_a * t)
