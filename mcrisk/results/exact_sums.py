"""Sums over scenarios that do not depend on how the scenarios were chunked.

A streamed sum `total += chunk.sum()` adds floats in an order set by the chunk boundaries, so
its last bits change with the chunk size; the project promises the same numbers for every
chunk size. BlockSums sums fixed blocks of absolute scenario indices and adds the block sums
exactly, so no chunking can change a bit, at the cost of one copy of each value into a
buffer and a few Python additions per block and row.
"""
from __future__ import annotations

import math

import numpy as np

BLOCK = 2048            # scenarios (by absolute index) summed together


def _add_exactly(partials: list[float], x: float) -> None:
    """Add x to the exact sum held as non-overlapping partials (Shewchuk's algorithm, the one
    math.fsum uses): math.fsum(partials) is then the correctly rounded sum of all x added."""
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        high = x + y
        low = y - (high - x)
        if low:
            partials[i] = low
            i += 1
        x = high
    partials[i:] = [x]


class BlockSums:
    """Per row (a milestone, a metric ...), the sum of its values over scenarios, the same to
    the bit however the scenarios were chunked (the project's standard: same numbers for
    every chunk size).

    Values are summed in fixed blocks of BLOCK scenarios by absolute scenario index (a
    block that a chunk leaves unfinished waits in a buffer for the next chunk), each complete
    block by one numpy sum over the same C-contiguous [m, BLOCK] buffer, and the block
    sums are added exactly (_add_exactly), so neither the chunk boundaries nor the order of
    additions reaches a bit. A non-finite block sum (a milestone never reached: +inf; a NaN) is kept
    apart; the sum is then not a number anyway. Memory: BLOCK x m floats."""

    def __init__(self, n_items: int, block: int = BLOCK):
        self.buffer = np.empty((n_items, block))
        self.fill = 0
        self.partials: list[list[float]] = [[] for _ in range(n_items)]
        self.special = np.zeros(n_items)          # the non-finite block sums, added

    def add(self, values: np.ndarray) -> None:
        """values[m, c]: the next c scenarios' values (in scenario order)."""
        block, done = self.buffer.shape[1], 0
        while done < values.shape[1]:
            take = min(block - self.fill, values.shape[1] - done)
            self.buffer[:, self.fill:self.fill + take] = values[:, done:done + take]
            self.fill += take
            done += take
            if self.fill == block:
                self._close(self.partials, self.special)
                self.fill = 0

    def _close(self, partials: list[list[float]], special: np.ndarray) -> None:
        """Add the buffered block's sums (its first `fill` scenarios) into partials/special."""
        with np.errstate(invalid="ignore", over="ignore"):
            sums = self.buffer[:, :self.fill].sum(axis=1)
        for k, x in enumerate(sums.tolist()):
            if math.isfinite(x):
                _add_exactly(partials[k], x)
                if math.isfinite(partials[k][-1]):
                    continue
                x = partials[k][-1]         # the exact sum overflowed: kept as its infinity
                partials[k].clear()
            special[k] += x

    def sums(self) -> np.ndarray:
        """float64[m]: each row's sum over every scenario added (the last, unfinished
        block included; the accumulator itself is left as it is)."""
        partials = [list(p) for p in self.partials]
        special = self.special.copy()
        if self.fill:
            self._close(partials, special)
        with np.errstate(invalid="ignore"):
            return np.array([_rounded(p) for p in partials]) + special


def _rounded(partials: list[float]) -> float:
    """math.fsum of the partials; past the float range (a sum of times near 1e308), the
    overflowed float sum (an infinity), as a plain sum would give."""
    try:
        return math.fsum(partials)
    except (OverflowError, ValueError):
        with np.errstate(invalid="ignore", over="ignore"):
            return float(np.sum(partials))
