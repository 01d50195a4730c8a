"""Paired tests on common random numbers: scenario i is the same world for both samples.

Used where two sets of per-scenario values are paired scenario by scenario: two strategies of
one run (the ranking, mcrisk.results.ranking) and one strategy on two nights with the same
seed and sample count (the nightly comparison, mcrisk.report.nightly.significance).

A quantile test that uses the pairing: McNemar's exact test at the pooled quantile. With
x and y the paired values and q the p-quantile of x and y pooled, b = #(x at or below q, y above
q) and c = #(x above q, y at or below q). When x and y are exchangeable (no difference)
b ~ Binomial(b + c, 1/2) given b + c. Metrics with atoms (a trough depth of exactly 0 or of
the whole baseline) make ties at q matter, so "above" is tested both as > q and as >= q, and
the smaller p-value is Bonferroni-corrected for the two forms.
"""
from __future__ import annotations

import numpy as np

from . import binomial
from .quantiles import compiled_from, linear_quantile


def mcnemar(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value of b pairs moving one way against c the other."""
    return 1.0 if b + c == 0 else binomial.test_two_sided_half(b, b + c)


def pooled_quantile(x: np.ndarray, y: np.ndarray, p: float) -> float:
    """The p-quantile of x and y pooled, as numpy.quantile's default method gives it (NaN
    when a value is NaN), from the order statistics of the two read as one
    (quantiles.linear_quantile: no pooled copy, no sort of a large column)."""
    return linear_quantile(x, p, other=y)


def crossings(x: np.ndarray, y: np.ndarray, q: float) -> tuple[tuple[int, int], ...]:
    """((up, down) with "above" as > q, then as >= q): the pairs with x at or below q and y
    above it (up), and the reverse (down). Performance: from core.tasks.COMPILED_FROM pairs
    on, one compiled pass (results.selection.crossings) for what takes NumPy eight."""
    if x.size < compiled_from():
        return tuple((int(np.sum(~above_x & above_y)), int(np.sum(above_x & ~above_y)))
                     for above_x, above_y in ((x > q, y > q), (x >= q, y >= q)))
    from .selection import crossings as compiled_crossings

    counts = np.zeros(4, np.int64)
    compiled_crossings(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64),
                       float(q), counts)
    return (int(counts[0]), int(counts[1])), (int(counts[2]), int(counts[3]))


def paired_quantile_test(x: np.ndarray, y: np.ndarray, p: float,
                         pooled: float | None = None) -> tuple[float, int]:
    """(p-value, direction) that the p-quantile differs from x to y (paired): see module doc.

    direction is +1 when more pairs cross the pooled quantile upwards (x to y) than
    downwards, -1 for the reverse, 0 when as many do; the p-value is that of the form (> q or
    >= q) whose direction agrees with the larger imbalance, Bonferroni-corrected for the two
    forms. `pooled`: pooled_quantile(x, y, p), when the caller has it already.
    """
    q = pooled_quantile(x, y, p) if pooled is None else pooled
    best = (1.0, 0)
    for up, down in crossings(x, y, q):
        if up != down:
            p_value = min(1.0, 2.0 * mcnemar(up, down))
            best = min(best, (p_value, 1 if up > down else -1))
    return best
