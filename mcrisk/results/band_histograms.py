"""The exact and binned histograms the capacity bands count in (mcrisk.results.bands).

Values per row (a row is a day): ExactHistogram counts integer values on a grid in dense
blocks (or, without a grid, by np.unique); DayHistogram counts them in one sparse sorted
table where the grid has too many values for dense blocks (a plan of thousands of units);
BinnedHistogram counts continuous values (drawn performance) in bins that widen by powers of
two. Quantiles are numpy's 'inverted_cdf' (results.bands' docstring has the guarantees).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import band_chunks

BAND_QUANTILES = (0.10, 0.50, 0.90)
_MAX_DENSE_CELLS = 4_000_000      # transient bincount size per chunk; beyond it: sparse
MAX_BINS = 2_048                  # drawn performance: most bins one histogram spans

def inverted_cdf_index(n: int, q: float) -> int:
    """0-based rank that numpy.quantile(method='inverted_cdf') picks in a sorted sample of n."""
    return min(n - 1, max(0, int(math.ceil(n * q - 1))))


@dataclass(frozen=True)
class Grid:
    """Values lie on lo + k * step, k = 0 .. n_bins - 1 (integer micro-units)."""

    lo: int
    step: int
    n_bins: int


class ExactHistogram:
    """Exact counts of integer values per row (a row is a day), merged chunk by chunk.

    Values arrive as pieces: value v held by one sample over rows [start, end). Counts are
    kept in difference form (+1 at start, -1 at end) per distinct value, so a sample costs
    one entry per piece, not one per row. Memory: one int64 per (row, distinct value seen),
    independent of the number of samples. With a grid the per-chunk counting is a bincount
    (fast path); without one, np.unique.
    """

    def __init__(self, n_rows: int, grid: Grid | None = None):
        self.n_rows = n_rows
        cells = (n_rows + 1) * grid.n_bins if grid is not None else 0
        self.grid = grid if grid is not None and cells <= _MAX_DENSE_CELLS else None
        self.diff: dict[int, np.ndarray] = {}      # value -> int64[n_rows + 1]
        self.n = 0

    def add(self, values: np.ndarray) -> None:
        """values: int64[c, 1], one value per sample held over every row."""
        c = values.shape[0]
        self.add_pieces(np.zeros((c, 1), np.int64), np.full((c, 1), self.n_rows, np.int64),
                        values)

    def add_pieces(self, start: np.ndarray, end: np.ndarray, values: np.ndarray) -> None:
        """Pieces [c, p]: sample i held values[i, j] over rows start[i, j] .. end[i, j] - 1.

        A sample's pieces must tile rows 0 .. n_rows - 1 exactly once (empty pieces allowed).
        """
        c = values.shape[0]
        if c == 0:
            return
        size = self.n_rows + 1
        if self.grid is not None:
            g = self.grid
            keys_of = (values - g.lo) // g.step
            width = g.n_bins
        else:
            keys, keys_of = np.unique(values, return_inverse=True)
            keys_of = keys_of.reshape(values.shape)
            width = keys.size
        block = (np.bincount((start * width + keys_of).ravel(), minlength=size * width)
                 - np.bincount((end * width + keys_of).ravel(), minlength=size * width))
        self._add_block(block.reshape(size, width), keys if self.grid is None else None, c)

    def add_keys(self, keys: np.ndarray, samples: int) -> None:
        """As DayHistogram.add_keys, on a grid: keys (int64) row * grid.n_bins + bin of each
        sample on each row, counted per row and put in difference form: the counts add_pieces
        makes of the same values (a plan whose total capacity needs a DayHistogram while its
        largest island's grid is dense gets both from band_chunks.capacity_day_keys)."""
        g = self.grid
        counts = np.bincount(keys.ravel(), minlength=self.n_rows * g.n_bins)
        block = np.diff(counts.reshape(self.n_rows, g.n_bins), axis=0, prepend=0, append=0)
        self._add_block(block, None, samples)

    def add_block(self, block: np.ndarray, samples: int) -> None:
        """Counts of `samples` samples already in difference form on the grid:
        block[row, bin] (int64[n_rows + 1, grid.n_bins]), as add_pieces would make them."""
        self._add_block(block, None, samples)

    def _add_block(self, block: np.ndarray, keys: np.ndarray | None, samples: int) -> None:
        """Merge block[row, j] into the counts: column j is the value keys[j], or with keys
        None the grid's j-th value."""
        present = np.flatnonzero(block.any(axis=0))
        if keys is None:
            keys = self.grid.lo + present * self.grid.step
        else:
            keys = keys[present]
        for key, column in zip(keys.tolist(), block[:, present].T):
            previous = self.diff.get(key)
            self.diff[key] = column.copy() if previous is None else previous + column
        self.n += samples

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """(values[k] ascending, counts[n_rows, k])."""
        keys = np.array(sorted(self.diff), dtype=np.int64)
        if keys.size == 0:
            return keys, np.zeros((self.n_rows, 0), dtype=np.int64)
        diff = np.stack([self.diff[k] for k in keys.tolist()], axis=1)
        return keys, np.cumsum(diff, axis=0)[:self.n_rows]

    def quantiles(self, qs=BAND_QUANTILES) -> np.ndarray:
        """int64[n_rows, len(qs)]: numpy 'inverted_cdf' quantiles of each row."""
        keys, counts = self.table()
        cumulative = np.cumsum(counts, axis=1)
        out = np.empty((self.n_rows, len(qs)), dtype=np.int64)
        for j, q in enumerate(qs):
            need = inverted_cdf_index(self.n, q) + 1
            out[:, j] = keys[np.argmax(cumulative >= need, axis=1)]
        return out

    def fraction_below(self, threshold: int) -> np.ndarray:
        """float64[n_rows]: share of values < threshold."""
        keys, counts = self.table()
        return counts[:, keys < threshold].sum(axis=1) / max(self.n, 1)


class DayHistogram:
    """Exact counts of integer values on a grid per row (a row is a day), for a grid too large
    for ExactHistogram's dense blocks ((rows + 1) x bins over _MAX_DENSE_CELLS: a plan of
    thousands of units, whose capacities can take tens of thousands of values): one sorted
    table of (row * grid.n_bins + bin, count) over the (row, value) pairs that occur, merged
    chunk by chunk. A chunk gives each sample's value on each row (band_chunks.
    capacity_day_keys, or add_pieces from pieces); memory is one entry per (row, value) seen,
    whatever the number of samples. Same counts, so the same quantiles, as ExactHistogram."""

    def __init__(self, n_rows: int, grid: Grid):
        self.n_rows, self.grid = n_rows, grid
        self.keys = np.empty(0, np.int64)
        self.counts = np.empty(0, np.int64)
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []
        self.n = 0

    def add_pieces(self, start: np.ndarray, end: np.ndarray, values: np.ndarray) -> None:
        """As ExactHistogram.add_pieces (a sample's pieces tile the rows in order)."""
        c = values.shape[0]
        if c == 0:
            return
        held = (end - start).ravel()
        by_row = np.repeat(values.ravel(), held).reshape(c, self.n_rows)
        rows = np.arange(self.n_rows, dtype=np.int64)
        self.add_keys(rows * self.grid.n_bins + (by_row - self.grid.lo) // self.grid.step, c)

    def add_keys(self, keys: np.ndarray, samples: int) -> None:
        """keys: int64, row * grid.n_bins + bin of each sample on each row (any order; this
        object may sort the array in place)."""
        keys = keys.ravel()
        # Performance: a sample's keys come in rising runs (band_chunks.capacity_day_keys
        # and add_pieces write them day by day), which the stable sort (a merging sort for
        # int64) merges: 4.4M keys of one chunk of the full reference took 0.156 s thread
        # time, against 0.285 s by the default quicksort (same keys: integers)
        keys.sort(kind="stable")
        self.pending.append(band_chunks.count_runs(keys))
        self.n += samples
        if sum(k.size for k, _ in self.pending) > max(self.keys.size, 1 << 20):
            self._flush()

    def _flush(self) -> None:
        parts = sorted([(self.keys, self.counts), *self.pending], key=lambda t: t[0].size)
        while len(parts) > 1:
            merged = band_chunks.merge_counts(*parts[0], *parts[1])
            parts = sorted([merged, *parts[2:]], key=lambda t: t[0].size)
        self.keys, self.counts = parts[0]
        self.pending = []

    def _rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(cumulative counts, first entry of each row and one past the last: int64[n_rows + 1])."""
        self._flush()
        bounds = np.searchsorted(self.keys,
                                 np.arange(self.n_rows + 1, dtype=np.int64) * self.grid.n_bins)
        return np.cumsum(self.counts), bounds

    def quantiles(self, qs=BAND_QUANTILES) -> np.ndarray:
        """int64[n_rows, len(qs)]: numpy 'inverted_cdf' quantiles of each row."""
        cumulative, bounds = self._rows()
        before = np.where(bounds[:-1] > 0, cumulative[np.maximum(bounds[:-1] - 1, 0)], 0)
        rows = np.arange(self.n_rows, dtype=np.int64)
        out = np.empty((self.n_rows, len(qs)), dtype=np.int64)
        for j, q in enumerate(qs):
            need = inverted_cdf_index(self.n, q) + 1
            at = np.searchsorted(cumulative, before + need, side="left")
            out[:, j] = self.grid.lo + (self.keys[at] - rows * self.grid.n_bins) * self.grid.step
        return out

    def fraction_below(self, threshold: int) -> np.ndarray:
        """float64[n_rows]: share of values < threshold."""
        cumulative, bounds = self._rows()
        column = -(-(threshold - self.grid.lo) // self.grid.step)     # values below: bins < it
        column = min(max(column, 0), self.grid.n_bins)
        rows = np.arange(self.n_rows, dtype=np.int64)
        ends = np.searchsorted(self.keys, rows * self.grid.n_bins + column)
        total = np.concatenate([[0], cumulative])
        return (total[ends] - total[bounds[:-1]]) / max(self.n, 1)


class BinnedHistogram:
    """Counts per row of continuous values in bins of `width` micro-units, merged chunk by chunk.

    Bin k holds [k * width, (k + 1) * width) and stands for its midpoint. Counts are dense over
    the bins lo .. hi seen so far, in difference form over rows like ExactHistogram's. When
    they would span more than `max_bins`, the width doubles (as often as needed) and bins
    merge pairwise, k -> k >> 1 (floor(x / 2w) = floor(floor(x / w) / 2), so the merged
    counts are the counts the wider bins would have had). Memory: at most max_bins x
    (n_rows + 1) int64, whatever the number of samples.
    """

    def __init__(self, n_rows: int, width: int, max_bins: int = MAX_BINS):
        self.n_rows = n_rows
        self.width = max(1, int(width))
        self.max_bins = max_bins
        self.lo = 0                                             # bin number of diff[0]
        self.diff = np.zeros((0, n_rows + 1), dtype=np.int64)   # [bins lo .. hi, rows + 1]

    @property
    def hi(self) -> int:
        return self.lo + self.diff.shape[0] - 1

    def add_pieces(self, start: np.ndarray, end: np.ndarray, values: np.ndarray) -> None:
        """As ExactHistogram.add_pieces, values float64 micro-units; pieces with start == end
        (empty) count nowhere, so a sample's pieces may go partly elsewhere."""
        held = end > start
        if not held.any():
            return
        bins = np.floor(values[held] / self.width).astype(np.int64)
        lo, hi = int(bins.min()), int(bins.max())
        if self.diff.shape[0]:
            lo, hi = min(lo, self.lo), max(hi, self.hi)
        shift = 0
        while (hi >> shift) - (lo >> shift) + 1 > self.max_bins:
            shift += 1
        if shift:
            self._widen(shift)
            bins >>= shift                          # floor(x / 2^s w), as widened
            lo, hi = lo >> shift, hi >> shift
        self._cover(lo, hi)
        size = self.n_rows + 1
        cells = self.diff.size
        index = (bins - self.lo) * size
        self.diff += (np.bincount(index + start[held], minlength=cells)
                      - np.bincount(index + end[held], minlength=cells)).reshape(self.diff.shape)

    def _widen(self, shift: int) -> None:
        new_lo = self.lo >> shift
        merged = np.zeros(((self.hi >> shift) - new_lo + 1, self.n_rows + 1), dtype=np.int64)
        np.add.at(merged, (self.lo + np.arange(self.diff.shape[0])) // (1 << shift) - new_lo,
                  self.diff)
        self.lo, self.diff = new_lo, merged
        self.width <<= shift

    def _cover(self, lo: int, hi: int) -> None:
        """Grow diff to bins lo .. hi (zeros)."""
        if not self.diff.shape[0]:
            self.lo, self.diff = lo, np.zeros((hi - lo + 1, self.n_rows + 1), dtype=np.int64)
        elif lo < self.lo or hi > self.hi:
            grown = np.zeros((hi - lo + 1, self.n_rows + 1), dtype=np.int64)
            grown[self.lo - lo:self.lo - lo + self.diff.shape[0]] = self.diff
            self.lo, self.diff = lo, grown

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """(midpoints[k] ascending, float64 micro-units; counts[n_rows, k]) over bins lo .. hi."""
        keys = self.lo + np.arange(self.diff.shape[0])
        return (keys + 0.5) * self.width, np.cumsum(self.diff, axis=1)[:, :self.n_rows].T


def _histogram(n_rows: int, grid: Grid) -> ExactHistogram | DayHistogram:
    """An exact histogram over `grid`: dense blocks (ExactHistogram) where the grid's
    (rows + 1) x bins fit _MAX_DENSE_CELLS, else the sparse DayHistogram, or where even its
    keys would pass int64, ExactHistogram's np.unique of the values."""
    cells = (n_rows + 1) * grid.n_bins
    if cells <= _MAX_DENSE_CELLS:
        return ExactHistogram(n_rows, grid)
    if cells < 2 ** 62:                   # its keys, row * bins + bin, fit int64
        return DayHistogram(n_rows, grid)
    return ExactHistogram(n_rows)         # values kept by np.unique, whatever their spread


def merged_quantiles(tables, n: int, qs=BAND_QUANTILES) -> np.ndarray:
    """float64[n_rows, len(qs)]: 'inverted_cdf' quantiles of n samples per row whose values are
    spread over several (values[k], counts[n_rows, k]) tables (values as float)."""
    values = np.concatenate([np.asarray(v, dtype=np.float64) for v, _ in tables])
    counts = np.concatenate([c for _, c in tables], axis=1)
    order = np.argsort(values, kind="stable")
    values = values[order]
    cumulative = np.cumsum(counts[:, order], axis=1)
    out = np.empty((counts.shape[0], len(qs)))
    for j, q in enumerate(qs):
        need = inverted_cdf_index(n, q) + 1
        out[:, j] = values[np.argmax(cumulative >= need, axis=1)]
    return out
