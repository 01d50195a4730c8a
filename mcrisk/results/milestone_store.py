"""The milestones' store past their exact times (mcrisk.results.milestones): each milestone's
window of bins and its exact tails, and the budgets that bound it by the plan's size."""
from __future__ import annotations

import math

import numpy as np

from . import milestone_chunks

EXACT_BYTES = 256_000_000    # the exact times of every milestone of every strategy at most:
                             # a larger plan keeps fewer scenarios exactly (exact_up_to)
BINS_BYTES = 768_000_000     # the histograms of every milestone at most (24 bytes a bin)
MAX_BINS = 32_768            # bins per milestone at most (the reference: 476 milestones)
MIN_BINS = 256               # and at least, whatever the plan's size
KEEP_EXACT = 25_000          # scenarios whose times are kept exactly (at most)


def exact_scenarios(milestones: int) -> int:
    """The scenarios whose times are kept exactly, for a plan with `milestones` milestones in
    all its strategies: KEEP_EXACT, or fewer where they would take more than EXACT_BYTES
    (8 bytes a time), at least 1,000."""
    return int(min(KEEP_EXACT, max(1_000, EXACT_BYTES // (8 * max(milestones, 1)))))


def bins_per_milestone(milestones: int) -> int:
    """The bins of each milestone's histogram, for a plan with `milestones` milestones in
    all its strategies: as many as BINS_BYTES holds (24 bytes a bin), within MIN_BINS and
    MAX_BINS."""
    return int(min(MAX_BINS, max(MIN_BINS, BINS_BYTES // (24 * max(milestones, 1)))))


class MilestoneBins:
    """Each milestone's times past the exact ones: a window of at most `n_bins` bins that
    also keep their smallest and largest time, set from the first exact_up_to scenarios'
    times (milestone_chunks.set_windows: their central 99.8%, widened by a quarter of its
    range each side), and every finite time outside it kept exactly (the tails: about 0.2% of them). A
    bin is BIN_DAYS wide, or twice, four times ... as wide where the window needs it (the
    milestone's own bin width). Everything depends on the scenarios alone, never on the
    chunking. Memory: one [m, n_bins] table of counts, smallest and largest, and the tails."""

    def __init__(self, first: np.ndarray, bin_days: float, n_bins: int):
        """first[m, K]: the times of the first exact_up_to scenarios (by index)."""
        n_items = first.shape[0]
        self.bin_days = bin_days
        self.exponent = np.zeros(n_items, np.int64)
        self.origin = np.zeros(n_items, np.int64)
        milestone_chunks.set_windows(np.ascontiguousarray(first), bin_days, n_bins,
                                     self.exponent, self.origin)
        self.counts = np.zeros((n_items, n_bins), np.int64)
        self.low = np.full((n_items, n_bins), np.inf)     # empty: the first time is both
        self.high = np.full((n_items, n_bins), -np.inf)
        self.non_finite = np.zeros(n_items, np.int64)   # counted as +inf
        self.tails: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, rows: np.ndarray) -> None:
        """rows[m, c]: one chunk's times, a row per milestone."""
        tail = milestone_chunks.add_to_bins(np.ascontiguousarray(rows), self.bin_days,
                                            self.exponent, self.origin, self.counts,
                                            self.low, self.high, self.non_finite)
        if tail[0].size:
            self.tails.append(tail)

    def widths(self) -> np.ndarray:
        """float64[m]: each milestone's bin width in days (BIN_DAYS times a power of two)."""
        return self.bin_days * 2.0 ** self.exponent

    def order_statistics(self, ranks) -> np.ndarray:
        """[m, len(ranks)]: the time at each 0-based rank (ascending ranks) among each
        milestone's times: exact in the tails and where it is the first or last of its bin,
        else within half the milestone's bin; +inf past its finite times."""
        ranks = np.asarray(ranks, np.int64)
        m = self.counts.shape[0]
        items = np.concatenate([t[0] for t in self.tails]) if self.tails else np.empty(0, np.int64)
        times = np.concatenate([t[1] for t in self.tails]) if self.tails else np.empty(0)
        order = np.lexsort((times, items))
        items, times = items[order], times[order]
        bins = (np.floor(times / self.bin_days).astype(np.int64) >> self.exponent[items])
        below = bins < self.origin[items]
        n_below = np.bincount(items[below], minlength=m)
        n_above = np.bincount(items[~below], minlength=m)
        binned = self.counts.sum(axis=1)
        out = np.full((m, ranks.size), np.inf)
        milestone_chunks.bins_order_statistics(
            self.counts, self.low, self.high, self.exponent, self.origin, self.bin_days,
            ranks[None, :] - n_below[:, None], out)
        first = np.searchsorted(items, np.arange(m))          # each milestone's tail times
        for k in np.flatnonzero(n_below + n_above):
            tail = times[first[k]:first[k] + n_below[k] + n_above[k]]
            for r, rank in enumerate(ranks.tolist()):
                if rank < n_below[k]:
                    out[k, r] = tail[rank]
                elif n_below[k] + binned[k] <= rank < n_below[k] + binned[k] + n_above[k]:
                    out[k, r] = tail[rank - binned[k]]
        return out

    def quantiles(self, n: int, qs) -> np.ndarray:
        """[len(qs), m]: numpy.quantile's linear rule on the binned order statistics."""
        spots = []
        for q in qs:
            h = (n - 1) * q
            below = int(math.floor(h))
            spots.append((below, min(below + 1, n - 1), h - below))
        ranks = sorted({r for lo, hi, _ in spots for r in (lo, hi)})
        table = self.order_statistics(ranks)
        at = {r: i for i, r in enumerate(ranks)}
        out = []
        for lo, hi, t in spots:
            x, y = table[:, at[lo]], table[:, at[hi]]
            with np.errstate(invalid="ignore"):
                value = np.where(np.isfinite(y), x + t * (y - x), np.inf)
            out.append(np.where(t == 0, x, value))
        return np.array(out)
