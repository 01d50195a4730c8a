"""The milestones' binned store (results.milestone_store.MilestoneBins, compiled in results.milestone_chunks)
against a slow obvious implementation of the documented rule: the window from the first
scenarios' times, every time inside it in its bin, every one outside it kept exactly, then each
order statistic read off the sorted times."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mcrisk.results.milestones import BIN_DAYS
from mcrisk.results.milestone_store import MilestoneBins, bins_per_milestone, exact_scenarios

SHARE = 0.001


def _window(first: np.ndarray, n_bins: int) -> tuple[int, int]:
    """(exponent, origin) of one milestone by the rule in docs/metrics.md."""
    finite = np.sort(first[np.isfinite(first)])
    if finite.size == 0:
        lo, hi = 0.0, 1.0
    else:
        f = finite.size - 1
        lo, hi = finite[math.floor(SHARE * f)], finite[math.ceil((1 - SHARE) * f)]
        margin = max(1.0, 0.25 * (hi - lo))
        lo, hi = lo - margin, hi + margin
    start, end = math.floor(lo / BIN_DAYS), math.floor(hi / BIN_DAYS)
    e = 0
    while (end >> e) - (start >> e) + 1 > n_bins:
        e += 1
    return e, start >> e


def _slow(column: np.ndarray, keep: int, n_bins: int, ranks) -> tuple[int, list[float]]:
    """(exponent, the times at `ranks`) of one milestone, all at once."""
    e, origin = _window(column[:keep], n_bins)
    finite = np.sort(column[np.isfinite(column)])
    bin_of = [(math.floor(t / BIN_DAYS) >> e) for t in finite]
    inside = [0 <= b - origin < n_bins for b in bin_of]
    out = []
    for rank in ranks:
        if rank >= finite.size:
            out.append(math.inf)
            continue
        if not inside[rank]:                                    # a tail: exact
            out.append(float(finite[rank]))
            continue
        members = [r for r in range(finite.size) if inside[r] and bin_of[r] == bin_of[rank]]
        if rank in (members[0], members[-1]):
            out.append(float(finite[rank]))
        else:
            middle = (bin_of[rank] + 0.5) * (BIN_DAYS * 2.0 ** e)
            out.append(min(max(middle, float(finite[members[0]])),
                           float(finite[members[-1]])))
    return e, out


def _columns(rng: np.random.Generator, n: int) -> np.ndarray:
    """[n, 5] times of five shapes: a lognormal with a far tail (outliers past the window),
    integers (atoms at bin edges), a point mass, times before day 0, and one with
    non-finite times."""
    out = np.c_[np.exp(rng.normal(5.0, 0.8, n)), np.round(rng.uniform(0, 60, n)),
                np.full(n, 42.0), rng.normal(-3.0, 2.0, n), rng.gamma(3.0, 20.0, n)]
    out[rng.integers(0, n, max(1, n // 50)), 4] = np.inf
    out[rng.integers(0, n, 2), 4] = np.nan
    out[rng.integers(n // 2, n, 3), 0] = [9_000.0, 25_000.0, -400.0]    # far outliers
    return out


def _fill(values: np.ndarray, keep: int, n_bins: int, chunks) -> MilestoneBins:
    bins = MilestoneBins(values[:keep].T.copy(), BIN_DAYS, n_bins)
    start = 0
    for size in chunks:
        bins.add(values[start:start + size].T.copy())
        start += size
    assert start == values.shape[0]
    return bins


@pytest.mark.parametrize("n_bins", [64, 1_024, 32_768])
def test_order_statistics_equal_the_slow_rule(n_bins):
    rng = np.random.default_rng(n_bins)
    values = _columns(rng, 3_000)
    ranks = [0, 1, 2, 299, 1_500, 2_700, 2_931, 2_997, 2_998, 2_999]
    bins = _fill(values, 1_000, n_bins, [1_000, 7, 993, 1_000])
    got = bins.order_statistics(ranks)
    for k in range(values.shape[1]):
        e, expected = _slow(values[:, k], 1_000, n_bins, ranks)
        assert bins.exponent[k] == e, k
        assert got[k].tolist() == expected, k
    assert got[2].tolist() == [42.0] * len(ranks)             # a point mass stays exact
    assert got[0, -1] == 25_000.0 and got[0, 0] == -400.0     # the far tails, exact
    assert bins.non_finite[4] == np.count_nonzero(~np.isfinite(values[:, 4]))


def test_the_store_is_the_same_for_any_chunking():
    values = _columns(np.random.default_rng(3), 5_000)
    one = _fill(values, 1_500, 128, [5_000])
    for chunks in ([1] * 20 + [4_980], [2_500, 2_500], [17] * 294 + [2]):
        other = _fill(values, 1_500, 128, chunks)
        for name in ("exponent", "origin", "counts", "non_finite"):
            np.testing.assert_array_equal(getattr(other, name), getattr(one, name), name)
        occupied = one.counts > 0
        np.testing.assert_array_equal(other.low[occupied], one.low[occupied])
        np.testing.assert_array_equal(other.high[occupied], one.high[occupied])
        ranks = list(range(0, 5_000, 37))
        np.testing.assert_array_equal(other.order_statistics(ranks), one.order_statistics(ranks))


def test_quantiles_follow_numpys_linear_rule_within_half_a_bin():
    values = _columns(np.random.default_rng(9), 2_001)[:, :4]
    bins = _fill(values, 700, 512, [700, 700, 601])
    table = bins.quantiles(2_001, [0.1, 0.5, 0.9, 0.37])
    for k in range(4):
        for j, q in enumerate([0.1, 0.5, 0.9, 0.37]):
            assert abs(table[j, k] - np.quantile(values[:, k], q)) <= bins.widths()[k] / 2 + 1e-9


def test_the_window_sits_where_the_first_scenarios_are():
    """64 bins at 0.01 day hold 0.64 day: a milestone always on day 10 gets the window
    [9, 11] (a day each side) in 2.56 days of bins 0.04 wide, and a time on day 30 later is a
    tail, kept exactly."""
    first = np.full((1, 100), 10.0)
    bins = MilestoneBins(first, BIN_DAYS, 64)
    assert bins.exponent[0] == 2 and bins.origin[0] == 900 >> 2    # floor(9 / 0.01) >> 2
    bins.add(np.array([[10.0, 10.02, 30.0, 10.0]]))
    assert bins.counts.sum() == 3 and [t[1].tolist() for t in bins.tails] == [[30.0]]
    # 10.0, 10.0 and 10.02 share a bin [10.0, 10.04): its ends exact, the one between them the
    # bin's middle (10.02) held within them, half a bin (0.02) from the exact 10.0
    assert bins.order_statistics([0, 1, 2, 3, 4]).tolist() == [[10.0, 10.02, 10.02, 30.0,
                                                                math.inf]]


def test_budgets_bound_the_store_by_the_plans_size():
    assert exact_scenarios(476) == 25_000 and bins_per_milestone(476) == 32_768
    assert exact_scenarios(30_830) == 1_037 and bins_per_milestone(30_830) == 1_037
    assert exact_scenarios(10**9) == 1_000 and bins_per_milestone(10**9) == 256


@pytest.mark.parametrize("shift", [0.0, 900.0])
def test_times_that_leave_the_window_are_kept_whatever_their_number(shift):
    """add_to_bins keeps the times outside the windows as they come, in room for a share of
    them, and walks the rows again only past that: later scenarios moved `shift` days past the
    window (900: most of them, far more than that room) still give the slow rule's order
    statistics, and the store is the same in one chunk or in many."""
    rng = np.random.default_rng(11)
    values = _columns(rng, 3_000)
    values[1_500:] += shift
    ranks = [0, 1, 750, 1_499, 1_500, 2_250, 2_931, 2_997, 2_999]
    one = _fill(values, 1_000, 1_024, [3_000])
    many = _fill(values, 1_000, 1_024, [1_000, 1, 499, 1_500])
    outside = sum(tail[0].size for tail in one.tails)
    assert (outside > 64 + values.size / 128) == (shift > 0)       # past the room, or not
    for bins in (one, many):
        got = bins.order_statistics(ranks)
        for k in range(values.shape[1]):
            e, expected = _slow(values[:, k], 1_000, 1_024, ranks)
            assert bins.exponent[k] == e, k
            assert got[k].tolist() == expected, (shift, k)
